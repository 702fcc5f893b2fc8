"""Anthropic Messages API (Claude Code): POST /v1/messages[?beta=true]."""

from __future__ import annotations

import json

from .server import new_id, send_json, send_sse

PATHS = [r"/v1/messages/count_tokens$", r"/v1/messages$", r"/v1/models/",
         r"/api/oauth/", r"/api/claude_cli_feedback", r"/api/event_logging"]

MODEL = "claude-sonnet-4-5"


def count_tool_results(body: dict) -> int:
    n = 0
    for m in body.get("messages") or []:
        content = m.get("content")
        if m.get("role") == "user" and isinstance(content, list):
            n += sum(1 for b in content
                     if isinstance(b, dict) and b.get("type") == "tool_result")
    return n


def offers_tools(body: dict) -> bool:
    return bool(body.get("tools"))


def side(handler, method, path, body) -> bool:
    if path.endswith("/count_tokens"):
        send_json(handler, {"input_tokens": 12})
        return True
    if "/v1/models" in path:
        model = {"type": "model", "id": MODEL, "display_name": "Fake",
                 "created_at": "2025-01-01T00:00:00Z"}
        send_json(handler, model)
        return True
    if not path.endswith("/v1/messages"):
        send_json(handler, {})
        return True
    return False


def _blocks(step):
    if step.kind == "tool":
        return [{"type": "tool_use", "id": f"toolu_fake{step.index + 1:04d}",
                 "name": step.name, "input": step.input or {}}], "tool_use"
    return [{"type": "text", "text": step.text or ""}], "end_turn"


def reply(handler, body: dict, step) -> None:
    blocks, stop = _blocks(step)
    model = body.get("model") or MODEL
    usage = {"input_tokens": 10, "output_tokens": 5,
             "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    msg_id = new_id("msg")
    if not body.get("stream"):
        send_json(handler, {"id": msg_id, "type": "message", "role": "assistant",
                            "model": model, "content": blocks,
                            "stop_reason": stop, "stop_sequence": None,
                            "usage": usage})
        return
    ev = [("message_start", {"type": "message_start", "message": {
        "id": msg_id, "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {**usage, "output_tokens": 1}}})]
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            ev.append(("content_block_start", {"type": "content_block_start",
                       "index": i, "content_block": {"type": "text", "text": ""}}))
            ev.append(("content_block_delta", {"type": "content_block_delta",
                       "index": i, "delta": {"type": "text_delta", "text": b["text"]}}))
        else:
            ev.append(("content_block_start", {"type": "content_block_start",
                       "index": i, "content_block": {**b, "input": {}}}))
            ev.append(("content_block_delta", {"type": "content_block_delta",
                       "index": i, "delta": {"type": "input_json_delta",
                                             "partial_json": json.dumps(b["input"])}}))
        ev.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    ev.append(("message_delta", {"type": "message_delta",
               "delta": {"stop_reason": stop, "stop_sequence": None},
               "usage": {"output_tokens": 5}}))
    ev.append(("message_stop", {"type": "message_stop"}))
    send_sse(handler, ev, headers={"request-id": new_id("req")})
