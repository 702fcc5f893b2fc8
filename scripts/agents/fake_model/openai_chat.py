"""OpenAI Chat Completions for the fake model (Python 3.11 stdlib only).

Speaks `POST .../chat/completions`, streamed (server-sent events, when the
request has `"stream": true`, with the usage chunk OpenAI sends for
`stream_options.include_usage`) or as one JSON body. `GET .../models` is
answered by server.py itself. Used by GitHub Copilot CLI
(`COPILOT_PROVIDER_TYPE=openai`, its default "completions" wire API; the
OpenAI JS SDK, streaming) and OpenCode (`@ai-sdk/openai-compatible`,
streaming; its title request offers no tools).

The contract with server.py: `PATHS`, `count_tool_results(body)`,
`offers_tools(body)` and `reply(handler, body, step)`, where `step` has
`kind` ("tool" or "text"), `name`, `input`, `text` and `index`.
"""

import json
import time

from .server import new_id, send_json, send_sse

PATHS = [r"/chat/completions$"]

USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def count_tool_results(body: dict) -> int:
    """Tool results already in the conversation: messages of role `tool`."""
    messages = body.get("messages") or []
    return sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "tool")


def offers_tools(body: dict) -> bool:
    """False for a request without tools (a title or summary request)."""
    return bool(body.get("tools")) and body.get("tool_choice") != "none"


def _tool_names(body: dict) -> list:
    names = []
    for tool in body.get("tools") or []:
        fn = tool.get("function") if isinstance(tool, dict) else None
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


def reply(handler, body: dict, step) -> None:
    """Answer one request with `step`: a tool call or the final text."""
    model = body.get("model") or "fake-model"
    created = int(time.time())
    completion_id = new_id("chatcmpl")
    call = None
    if step.kind == "tool":
        call = {
            "id": f"call_{step.index:03d}_{new_id('x')[2:10]}",
            "type": "function",
            "function": {
                "name": _resolve_name(body, step.name or ""),
                "arguments": json.dumps(step.input if step.input is not None else {}),
            },
        }
    text = step.text or ""
    finish = "tool_calls" if call else "stop"

    if not body.get("stream"):
        message = {"role": "assistant", "content": None if call else text}
        if call:
            message["tool_calls"] = [call]
        send_json(
            handler,
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

    def chunk(delta: dict, finish_reason=None) -> dict:
        return {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }

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
    # The usage chunk, as OpenAI sends it with stream_options.include_usage.
    events.append(
        {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [],
            "usage": USAGE,
        }
    )
    send_sse(handler, [(None, e) for e in events] + [(None, "[DONE]")])
