"""Gemini API (Gemini CLI): POST /v1beta/models/M:generateContent,
:streamGenerateContent?alt=sse, :countTokens, :embedContent."""

from __future__ import annotations

import json

from .server import send_json, send_sse

PATHS = [r"/models/[^/]+:(stream)?[gG]enerateContent$", r"/models/[^/]+:countTokens$",
         r"/models/[^/]+:(batchE|e)mbedContents?$"]


def count_tool_results(body: dict) -> int:
    n = 0
    for c in body.get("contents") or []:
        for p in (c.get("parts") or []) if isinstance(c, dict) else []:
            if isinstance(p, dict) and "functionResponse" in p:
                n += 1
    return n


def offers_tools(body: dict) -> bool:
    for t in body.get("tools") or []:
        if isinstance(t, dict) and t.get("functionDeclarations"):
            return True
    return False


def side(handler, method, path, body) -> bool:
    if path.endswith(":countTokens"):
        send_json(handler, {"totalTokens": 12})
        return True
    if "mbedContent" in path:
        n = len((body or {}).get("requests") or [1]) if isinstance(body, dict) else 1
        emb = {"values": [0.0] * 8}
        send_json(handler, {"embeddings": [emb] * n, "embedding": emb})
        return True
    return False


def _json_answer(body: dict):
    """A side request that asks for JSON (next-speaker check, routing
    classifier, loop detection): answer a plausible object of its schema."""
    gc = body.get("generationConfig") or {}
    schema = gc.get("responseJsonSchema") or gc.get("responseSchema")
    if gc.get("responseMimeType") != "application/json" and not schema:
        return None
    props = (schema or {}).get("properties") or {}
    out = {}
    for k, v in props.items():
        t = str((v or {}).get("type", "string")).lower()
        enum = (v or {}).get("enum")
        if enum:
            out[k] = "user" if "user" in enum else enum[0]
        elif t == "boolean":
            out[k] = False
        elif t in ("number", "integer"):
            out[k] = (v or {}).get("minimum", 1)
        elif t == "array":
            out[k] = []
        elif t == "object":
            out[k] = {}
        else:
            out[k] = "fake"
    return json.dumps(out)


def reply(handler, body: dict, step) -> None:
    if step.kind == "tool":
        part = {"functionCall": {"name": step.name, "args": step.input or {}}}
    else:
        alt = _json_answer(body) if not offers_tools(body) else None
        part = {"text": alt if alt is not None else (step.text or "")}
    chunk = {"candidates": [{"content": {"role": "model", "parts": [part]},
                             "finishReason": "STOP", "index": 0}],
             "usageMetadata": {"promptTokenCount": 10,
                               "candidatesTokenCount": 5,
                               "totalTokenCount": 15},
             "modelVersion": "gemini-2.5-pro"}
    if "streamGenerateContent" in handler.path:
        send_sse(handler, [(None, chunk)])
    else:
        send_json(handler, chunk)
