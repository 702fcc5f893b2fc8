"""What deciding an event costs from Python, side by side in one run with
the same hooks from Rust (`wasm-hooks bench`), amplifier-core's own
registry, `serve` over HTTP and the hook process.

    scripts/bench --python        # builds everything in the dist profile, then runs this

Run directly: `python host/python/bench/embedding.py --cli target/dist/wasm-hooks
--plugin target/plugins/wasm32-wasip2/release/deny_dangerous_commands.wasm`.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import pathlib
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from wasm_hooks import Engine
from wasm_hooks.amplifier import HookRegistry

EVENT = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls -la"},
         "session_id": "bench", "cwd": "/tmp"}
#: serve's token for the run (serve refuses a weak one).
TOKEN = os.urandom(16).hex()
HOOK_FILES = pathlib.Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "embedding"


def hook_file(folder: pathlib.Path, name: str, plugin: pathlib.Path) -> pathlib.Path:
    """A shared hook file of tests/fixtures/embedding, with the plugin's path."""
    path = folder / name
    path.write_text((HOOK_FILES / name).read_text().replace("{plugins}/deny_dangerous_commands.wasm", str(plugin)))
    return path


def summary(name: str, samples: list) -> dict:
    samples = sorted(samples)
    us = [s * 1e6 for s in samples]
    return {"name": name, "n": len(us), "p50_us": statistics.median(us),
            "p99_us": us[min(len(us) - 1, int(len(us) * 0.99))], "mean_us": statistics.fmean(us)}


def timed(name: str, n: int, call) -> dict:
    for _ in range(min(200, n)):
        call()
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return summary(name, samples)


def timed_async(name: str, n: int, call) -> dict:
    async def run():
        for _ in range(min(200, n)):
            await call()
        samples = []
        for _ in range(n):
            start = time.perf_counter()
            await call()
            samples.append(time.perf_counter() - start)
        return samples

    return summary(name, asyncio.run(run()))


def throughput(name: str, threads: int, n: int, call) -> dict:
    """Events per second with `threads` Python threads deciding at once."""
    def work():
        for _ in range(n):
            call()

    workers = [threading.Thread(target=work) for _ in range(threads)]
    start = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    elapsed = time.perf_counter() - start
    return {"name": name, "n": n * threads, "events_per_s": n * threads / elapsed}


def proceed(event):
    return None


def amplifier_proceed(event, data):
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_case(cli: str, hooks: pathlib.Path, folder: pathlib.Path, n: int) -> dict:
    port = free_port()
    env = {**os.environ, "WASM_HOOKS_TOKEN": TOKEN}
    served = subprocess.Popen([cli, "serve", "--listen", f"127.0.0.1:{port}", "--token-env", "WASM_HOOKS_TOKEN",
                               "-c", str(hooks), "--project-dir", str(folder)],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        connection = http.client.HTTPConnection("127.0.0.1", port)
        body = json.dumps({**EVENT, "cwd": str(folder)})
        headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}

        def post():
            connection.request("POST", "/v1/decide", body, headers)
            answer = json.loads(connection.getresponse().read())
            assert answer["decision"] == "proceed", answer

        return timed("Python → serve POST /v1/decide (keep-alive), wasm guard", n, post)
    finally:
        served.terminate()
        served.wait()


def process_case(cli: str, hooks: pathlib.Path, folder: pathlib.Path, n: int) -> dict:
    body = json.dumps({**EVENT, "cwd": str(folder)}).encode()

    def spawn():
        subprocess.run([cli, "hook", "--protocol", "canonical", "-c", str(hooks), "--project-dir", str(folder)],
                       input=body, capture_output=True, check=True)

    return timed("Python → `wasm-hooks hook` process per event, wasm guard", n, spawn)


def rust_cases(cli: str, plugin: pathlib.Path, events: int) -> list:
    ran = subprocess.run([cli, "bench", "--json", "--plugin", str(plugin), "--events", str(events),
                          "--processes", "50", "--compile-runs", "1"], capture_output=True, text=True, check=True)
    wanted = ("wasm hook, fresh instance", "inline rule hook", "Rust closure hook", "replay:")
    cases = json.loads(ran.stdout)
    rows = [{**case, "name": "Rust: " + case["name"]} for case in cases if case["name"].startswith(wanted)]
    # One engine shared by tasks on every core: what Python's threads share too.
    rows += [{"name": "Rust: " + case["name"].replace(" (wall / event)", ""), "n": case["n"],
              "events_per_s": 1e6 / case["p50_us"]}
             for case in cases if case["name"].startswith("throughput: wasm hook")]
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True, help="the wasm-hooks binary (same profile as the package)")
    parser.add_argument("--plugin", required=True, type=pathlib.Path, help="deny_dangerous_commands.wasm")
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--processes", type=int, default=200)
    parser.add_argument("--cache-dir", type=pathlib.Path, help="the compile cache, the plugin compiled ahead in it")
    parser.add_argument("--node-results", type=pathlib.Path, help="the Node cases' JSON, to print beside")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    folder = pathlib.Path(tempfile.mkdtemp(prefix="bench-embedding-"))
    cache = args.cache_dir or folder / "cache"
    hooks = hook_file(folder, "wasm-guard.yaml", args.plugin.resolve())
    hook_file(folder, "inline-no-sudo.yaml", args.plugin.resolve())
    (folder / "empty.yaml").write_text("hooks: {}\n")
    n = args.events

    def engine(name: str) -> Engine:
        return Engine([folder / name], project_dir=folder, cache_dir=cache, managed_dir=folder / "managed",
                      user_config_dir=folder / "user")

    wasm, inline, functions, both = engine("wasm-guard.yaml"), engine("inline-no-sudo.yaml"), engine("empty.yaml"), engine("wasm-guard.yaml")
    empty, inline_and_function = engine("empty.yaml"), engine("inline-no-sudo.yaml")
    functions.register("PreToolUse", proceed, name="proceed")
    both.register("PreToolUse", proceed, name="proceed")
    inline_and_function.register("PreToolUse", proceed, name="proceed")
    ours = HookRegistry(engine("empty.yaml"))
    ours.register("tool:pre", amplifier_proceed, name="proceed")
    import amplifier_core

    theirs = amplifier_core.HookRegistry()
    theirs.register("tool:pre", amplifier_proceed, name="proceed")
    data = {"tool_name": "bash", "tool_input": {"command": "ls -la"}}

    results = rust_cases(args.cli, args.plugin, n)
    results += [
        timed("Python: wasm guard (Engine.decide)", n, lambda: wasm.decide(EVENT)),
        timed_async("Python: wasm guard (await Engine.decide_async)", n, lambda: wasm.decide_async(EVENT)),
        timed("Python: no hook (Engine.decide, an empty engine)", n, lambda: empty.decide(EVENT)),
        timed("Python: inline rule (Engine.decide)", n, lambda: inline.decide(EVENT)),
        timed("Python: a registered Python function (Engine.decide)", n, lambda: functions.decide(EVENT)),
        timed("Python: inline rule + a registered function", n, lambda: inline_and_function.decide(EVENT)),
        timed("Python: wasm guard + a registered function", n, lambda: both.decide(EVENT)),
        timed_async("Amplifier API: wasm_hooks.amplifier.HookRegistry.emit, one function", n,
                    lambda: ours.emit("tool:pre", data)),
        timed_async("Amplifier API: amplifier_core RustHookRegistry.emit, the same function", n,
                    lambda: theirs.emit("tool:pre", data)),
        throughput("Python: wasm guard, 1 thread", 1, n, lambda: wasm.decide(EVENT)),
        throughput("Python: wasm guard, 2 threads", 2, n, lambda: wasm.decide(EVENT)),
        throughput("Python: wasm guard, 4 threads", 4, n // 2, lambda: wasm.decide(EVENT)),
        serve_case(args.cli, hooks, folder, n // 4),
        process_case(args.cli, hooks, folder, args.processes),
    ]
    if args.node_results:
        results += json.loads(args.node_results.read_text())
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    rust = next(r["p50_us"] for r in results if r["name"].startswith("Rust: wasm hook"))
    print(f"{'case':<72} {'p50 µs':>8} {'p99 µs':>8} {'× Rust wasm':>11} {'events/s':>10}")
    for r in results:
        if "events_per_s" in r:
            print(f"{r['name']:<72} {'':>8} {'':>8} {'':>11} {r['events_per_s']:>10.0f}")
        else:
            ratio = r["p50_us"] / rust
            print(f"{r['name']:<72} {r['p50_us']:>8.1f} {r['p99_us']:>8.1f} {ratio:>10.2f}×")
    return 0


if __name__ == "__main__":
    sys.exit(main())
