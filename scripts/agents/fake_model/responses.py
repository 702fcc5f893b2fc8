"""OpenAI Responses API (Codex): POST .../responses."""

from __future__ import annotations

import json

from .server import new_id, send_json, send_sse

PATHS = [r"/responses(/compact)?$"]

MODEL = "gpt-5-codex"
OUTPUT_TYPES = {"function_call_output", "custom_tool_call_output",
                "local_shell_call_output", "mcp_tool_call_output",
                "tool_search_output"}


def count_tool_results(body: dict) -> int:
    items = body.get("input")
    if not isinstance(items, list):
        return 0
    return sum(1 for it in items
               if isinstance(it, dict) and it.get("type") in OUTPUT_TYPES)


def offers_tools(body: dict) -> bool:
    return bool(body.get("tools"))


def _tool_type(body: dict, name: str) -> str:
    for t in body.get("tools") or []:
        if not isinstance(t, dict):
            continue
        tname = t.get("name") or (t.get("function") or {}).get("name")
        if tname == name or (t.get("type") == "local_shell" and name == "local_shell"):
            return t.get("type", "function")
    return "function"


def _item(body: dict, step) -> dict:
    if step.kind == "text":
        return {"type": "message", "id": new_id("msg"), "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": step.text or "",
                             "annotations": []}]}
    call_id = f"call_fake{step.index + 1:04d}"
    kind = _tool_type(body, step.name)
    if kind == "custom":
        inp = step.input if isinstance(step.input, str) else \
            (step.input or {}).get("input", json.dumps(step.input))
        return {"type": "custom_tool_call", "id": new_id("ctc"),
                "status": "completed", "call_id": call_id, "name": step.name,
                "input": inp}
    if kind == "local_shell":
        return {"type": "local_shell_call", "id": new_id("lsh"),
                "call_id": call_id, "status": "completed",
                "action": {"type": "exec", **(step.input or {})}}
    return {"type": "function_call", "id": new_id("fc"), "status": "completed",
            "call_id": call_id, "name": step.name,
            "arguments": step.input if isinstance(step.input, str)
            else json.dumps(step.input or {})}


def reply(handler, body: dict, step) -> None:
    item = _item(body, step)
    rid = new_id("resp")
    model = body.get("model") or MODEL
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": 15}
    resp = {"id": rid, "object": "response", "created_at": 0,
            "status": "completed", "model": model, "output": [item],
            "usage": usage}
    if not body.get("stream"):
        send_json(handler, resp)
        return
    base = {**resp, "status": "in_progress", "output": []}
    ev = [("response.created", {"type": "response.created", "response": base}),
          ("response.in_progress", {"type": "response.in_progress", "response": base}),
          ("response.output_item.added", {"type": "response.output_item.added",
           "output_index": 0, "item": item})]
    if item["type"] == "message":
        text = item["content"][0]["text"]
        ev.append(("response.content_part.added", {
            "type": "response.content_part.added", "item_id": item["id"],
            "output_index": 0, "content_index": 0,
            "part": {"type": "output_text", "text": "", "annotations": []}}))
        ev.append(("response.output_text.delta", {
            "type": "response.output_text.delta", "item_id": item["id"],
            "output_index": 0, "content_index": 0, "delta": text}))
        ev.append(("response.output_text.done", {
            "type": "response.output_text.done", "item_id": item["id"],
            "output_index": 0, "content_index": 0, "text": text}))
        ev.append(("response.content_part.done", {
            "type": "response.content_part.done", "item_id": item["id"],
            "output_index": 0, "content_index": 0, "part": item["content"][0]}))
    elif item["type"] == "function_call":
        ev.append(("response.function_call_arguments.delta", {
            "type": "response.function_call_arguments.delta",
            "item_id": item["id"], "output_index": 0, "delta": item["arguments"]}))
        ev.append(("response.function_call_arguments.done", {
            "type": "response.function_call_arguments.done",
            "item_id": item["id"], "output_index": 0,
            "arguments": item["arguments"]}))
    ev.append(("response.output_item.done", {"type": "response.output_item.done",
               "output_index": 0, "item": item}))
    ev.append(("response.completed", {"type": "response.completed",
               "response": resp}))
    send_sse(handler, ev)
