#!/usr/bin/env python3
"""A scripted fake model for driving real coding agents offline.

    python3 scripts/agents/fake_model/server.py --port 0 --script FILE \
        --log FILE --port-file FILE

Listens on 127.0.0.1 only (ThreadingHTTPServer), prints the port it got on
stdout (one line, the bare number) and writes it to --port-file (written to
a temporary name and renamed, so a reader never sees half of it).

The script (JSON, re-read whenever the file changes, so one server can serve
several runs):

    {"tool_calls": [{"name": "<the agent's tool name>", "input": {...}}, ...],
     "final_text": "done"}

Replies are stateless. For each model request the API module counts the tool
results already in the request's conversation (n). If n < len(tool_calls)
the reply is tool call n, else a text reply with final_text. A request that
offers the model no tools (title generation, topic checks, quota probes...)
always gets the text reply, when the module can tell (see `offers_tools`).

Log (--log): one JSON object per line for every request, in arrival order:

    {"ts": <unix time>, "method": "POST", "path": "/v1/messages",
     "query": "beta=true", "api": "anthropic" | "responses" | "gemini" |
     "openai_chat" | null, "body": <the request body, parsed JSON or text>,
     "reply": {"kind": "tool"|"text"|"side", "name": ..., "index": ...}}

Contract for API modules (anthropic.py, responses.py, gemini.py,
openai_chat.py, all in this package; a module that does not exist yet is
skipped). Each module has:

    PATHS: list[str]
        regular expressions, matched with re.search against the request
        path (without the query string); the first module that matches
        gets the request. Modules are tried in the order of MODULES below.

    count_tool_results(body: dict) -> int
        how many tool results the conversation in the request already holds.

    reply(handler, body: dict, step: Step) -> None
        answer the request (stream SSE when the body asks for streaming).
        `step` is a Step: kind "tool" (name, input: the tool call to make,
        index: its position in tool_calls) or kind "text" (text: final_text,
        index: len(tool_calls)).

Optional:

    offers_tools(body: dict) -> bool
        False when the request offers no tools: the server then answers
        with the text step whatever n is.

    side(handler, method: str, path: str, body) -> bool
        answer a side endpoint (model listing, token counting...) and return
        True; return False to let the server treat the request as a model
        call (or answer it with the generic fallback).

Helpers modules should use to answer: send_json(handler, obj, status=200),
send_sse(handler, events) where events is a list of (event_name or None,
data: dict or str), new_id(prefix). Whole replies are buffered and sent with
Content-Length (HTTP/1.1, keep-alive), streamed ones as text/event-stream.

The server itself answers `GET .../models` (any prefix) before routing, with
one list that suits every client: {"object": "list", "data": [{"id":
"fake-model", "object": "model", "type": "model", ...}], "models": [],
"has_more": false} (OpenAI and Anthropic read `data`, Codex and Gemini
`models`). Requests no module claims get a generic answer: GET -> that
list, anything else -> {} (status 200), so an agent's side calls
(telemetry, feature flags, update checks pointed at loopback) do not fail.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import importlib
import json
import os
import re
import sys
import threading
import time
import uuid
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

MODULES = ["anthropic", "responses", "openai_chat", "gemini"]


MODEL_LIST = {
    "object": "list", "has_more": False, "models": [],
    "data": [{"id": "fake-model", "object": "model", "type": "model",
              "display_name": "Fake model", "created": 0,
              "created_at": "2025-01-01T00:00:00Z", "owned_by": "fake"}],
    "first_id": "fake-model", "last_id": "fake-model"}


@dataclasses.dataclass
class Step:
    kind: str  # "tool" | "text"
    name: str | None = None
    input: Any = None
    text: str | None = None
    index: int = 0


# ---------------------------------------------------------------- helpers


def new_id(prefix: str = "id") -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


def send_bytes(handler, data: bytes, content_type: str, status: int = 200,
               headers: dict | None = None) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(data)))
    for k, v in (headers or {}).items():
        handler.send_header(k, v)
    handler.end_headers()
    if handler.command != "HEAD":
        handler.wfile.write(data)
    handler.wfile.flush()


def send_json(handler, obj: Any, status: int = 200,
              headers: dict | None = None) -> None:
    send_bytes(handler, json.dumps(obj).encode(), "application/json", status,
               headers)


def send_sse(handler, events, headers: dict | None = None) -> None:
    out = []
    for name, data in events:
        if not isinstance(data, str):
            data = json.dumps(data)
        if name:
            out.append(f"event: {name}\n")
        out.append(f"data: {data}\n\n")
    send_bytes(handler, "".join(out).encode(), "text/event-stream",
               headers={"Cache-Control": "no-cache", **(headers or {})})


# ---------------------------------------------------------------- state


class Script:
    def __init__(self, path: str):
        self.path = path
        self.lock = threading.Lock()
        self.mtime = None
        self.data = {"tool_calls": [], "final_text": "done"}

    def get(self) -> dict:
        with self.lock:
            try:
                st = os.stat(self.path)
                key = (st.st_ino, st.st_mtime_ns, st.st_size)
                if key != self.mtime:
                    with open(self.path) as f:
                        self.data = json.load(f)
                    self.mtime = key
            except (OSError, ValueError) as e:
                print(f"fake_model: cannot read script {self.path}: {e}",
                      file=sys.stderr)
            return self.data


_modules: dict[str, Any] = {}
_modules_lock = threading.Lock()


def api_modules():
    with _modules_lock:
        for name in MODULES:
            if name in _modules and _modules[name] is not None:
                continue
            try:
                _modules[name] = importlib.import_module(
                    f"{__package__ or 'fake_model'}.{name}")
            except ModuleNotFoundError as e:
                if e.name and e.name.endswith(name):
                    _modules[name] = None  # not written yet: retry later
                else:
                    raise
        return [(n, _modules[n]) for n in MODULES if _modules.get(n)]


def route(path: str):
    for name, mod in api_modules():
        for rx in getattr(mod, "PATHS", []):
            if re.search(rx, path):
                return name, mod
    return None, None


def choose_step(script: dict, n: int, offers_tools: bool) -> Step:
    calls = script.get("tool_calls") or []
    text = script.get("final_text", "done")
    if offers_tools and n < len(calls):
        c = calls[n]
        return Step(kind="tool", name=c["name"], input=c.get("input", {}),
                    index=n)
    return Step(kind="text", text=text, index=len(calls))


# ---------------------------------------------------------------- server


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-model/1"

    def log_message(self, fmt, *args):  # quiet
        if self.server.verbose:
            sys.stderr.write("fake_model: " + (fmt % args) + "\n")

    def _body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        if not n and self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            raw = self._read_chunked()
        enc = (self.headers.get("Content-Encoding") or "").lower()
        try:
            if enc == "gzip":
                raw = gzip.decompress(raw)
            elif enc == "deflate":
                raw = zlib.decompress(raw)
        except Exception as e:  # keep the raw bytes
            print(f"fake_model: cannot decode {enc} body: {e}", file=sys.stderr)
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _read_chunked(self) -> bytes:
        out = b""
        while True:
            line = self.rfile.readline().strip()
            size = int(line.split(b";")[0] or b"0", 16)
            if size == 0:
                self.rfile.readline()
                return out
            out += self.rfile.read(size)
            self.rfile.readline()

    def _log(self, entry: dict):
        srv = self.server
        if not srv.log_path:
            return
        with srv.log_lock, open(srv.log_path, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def _handle(self):
        parts = urlsplit(self.path)
        path, query = parts.path, parts.query
        body = self._body() if self.command in ("POST", "PUT", "PATCH") else None
        entry = {"ts": time.time(), "method": self.command, "path": path,
                 "query": query, "api": None, "body": body, "reply": None}
        try:
            if self.command == "GET" and re.search(r"/models/?$", path):
                entry["reply"] = {"kind": "side"}
                send_json(self, MODEL_LIST)
                return
            name, mod = route(path)
            entry["api"] = name
            if mod is not None:
                side = getattr(mod, "side", None)
                if side and side(self, self.command, path, body):
                    entry["reply"] = {"kind": "side"}
                    return
                if isinstance(body, dict):
                    n = mod.count_tool_results(body)
                    offers = getattr(mod, "offers_tools", None)
                    step = choose_step(self.server.script.get(), n,
                                       offers(body) if offers else True)
                    entry["reply"] = {"kind": step.kind, "name": step.name,
                                      "index": step.index, "n": n}
                    mod.reply(self, body, step)
                    return
            entry["reply"] = {"kind": "side"}
            if self.command == "GET":
                send_json(self, MODEL_LIST)
            else:
                send_json(self, {})
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception as e:  # answer something rather than hang
            import traceback
            traceback.print_exc()
            entry["reply"] = {"kind": "error", "error": repr(e)}
            try:
                send_json(self, {"error": {"message": repr(e)}}, status=500)
            except Exception:
                pass
        finally:
            self._log(entry)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _handle


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1",
                    choices=["127.0.0.1", "localhost", "::1"])
    ap.add_argument("--script", required=True)
    ap.add_argument("--log")
    ap.add_argument("--port-file")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args(argv)

    srv = Server((a.host, a.port), Handler)
    srv.script = Script(a.script)
    srv.log_path = a.log
    srv.log_lock = threading.Lock()
    srv.verbose = a.verbose
    api_modules()  # import errors show up at start, not on the first call
    port = srv.server_address[1]
    print(port, flush=True)
    if a.port_file:
        tmp = f"{a.port_file}.tmp.{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(f"{port}\n")
        os.replace(tmp, a.port_file)
    try:
        srv.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    # Run as a file: load this package as `fake_model` so the API modules
    # and this module share one `server` (and one Step class).
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from fake_model import server as _server

    _server.main()
