"""OpenAI Chat Completions for the fake model (Python 3.11 stdlib only).

Speaks `POST /v1/chat/completions`, streamed (server-sent events, when the
request has `"stream": true`) or as one JSON body, and `GET /v1/models`.
Used by GitHub Copilot CLI (`COPILOT_PROVIDER_TYPE=openai`, the default
"completions" wire API) and OpenCode (`@ai-sdk/openai-compatible`).

The contract with `server.py`: `PATHS`, `count_tool_results(body)` and
`reply(handler, body, step)`, where `step` has `kind` ("tool" or "text"),
`name`, `input`, `text` and `index`.
"""

import json
import re
import time

PATHS = [r"/chat/completions$", r"/models$"]

MODEL_FALLBACK = "fake-model"


def count_tool_results(body: dict) -> int:
    """Tool results already in the conversation: messages of role `tool`."""
    messages = body.get("messages") or []
    return sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "tool")


def _tool_names(body: dict) -> list:
    names = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            fn = tool.get("function") or {}
            if isinstance(fn, dict) and fn.get("name"):
                names.append(fn["name"])
    return names


def _resolve_name(body: dict, name: str) -> str:
    """The tool's name as the request spells it (exact, else ignoring case)."""
    names = _tool_names(body)
    if name in names:
        return name
    for candidate in names:
        if candidate.lower() == name.lower():
            return candidate
    return name


def _send_json(handler, status: int, payload: dict) -> None:
    data = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)
    handler.wfile.flush()


def _models(handler, body: dict) -> None:
    model = (body or {}).get("model") or MODEL_FALLBACK
    _send_json(
        handler,
        200,
        {
            "object": "list",
            "data": [{"id": model, "object": "model", "created": 0, "owned_by": "fake"}],
        },
    )


USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def reply(handler, body: dict, step) -> None:
    """Answer one request with `step`: a tool call or the final text."""
    path = getattr(handler, "path", "") or ""
    if re.search(r"/models/?(\?.*)?$", path) or getattr(handler, "command", "POST") == "GET":
        _models(handler, body)
        return

    body = body or {}
    model = body.get("model") or MODEL_FALLBACK
    index = getattr(step, "index", 0) or 0
    kind = getattr(step, "kind", "text")
    # A request without tools (a title or summary request) cannot take a
    # tool call: it gets text.
    if kind == "tool" and not body.get("tools"):
        kind = "text"
        text = "Fake title"
    else:
        text = getattr(step, "text", None) or ""

    call = None
    if kind == "tool":
        call = {
            "id": f"call_{index:03d}",
            "type": "function",
            "function": {
                "name": _resolve_name(body, getattr(step, "name", "") or ""),
                "arguments": json.dumps(getattr(step, "input", None) or {}),
            },
        }
    created = int(time.time())
    completion_id = f"chatcmpl-fake-{index:03d}"
    finish = "tool_calls" if call else "stop"

    if not body.get("stream"):
        message = {"role": "assistant", "content": None if call else text}
        if call:
            message["tool_calls"] = [call]
        _send_json(
            handler,
            200,
            {
                "id": completion_id,
                "object": "chat.completion",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": USAGE,
            },
        )
        return

    def chunk(delta: dict, finish_reason=None, usage=None) -> bytes:
        payload = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }
        if usage is not None:
            payload["usage"] = usage
        return b"data: " + json.dumps(payload).encode() + b"\n\n"

    events = [chunk({"role": "assistant", "content": ""})]
    if call:
        events.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": call["function"]["name"], "arguments": ""},
                        }
                    ]
                }
            )
        )
        events.append(
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": call["function"]["arguments"]}}]})
        )
    else:
        events.append(chunk({"content": text}))
    events.append(chunk({}, finish))
    # The usage chunk (as OpenAI sends it with stream_options.include_usage).
    usage_chunk = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [],
        "usage": USAGE,
    }
    events.append(b"data: " + json.dumps(usage_chunk).encode() + b"\n\n")
    events.append(b"data: [DONE]\n\n")

    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Connection", "close")
    handler.end_headers()
    handler.close_connection = True
    for event in events:
        handler.wfile.write(event)
        handler.wfile.flush()
