"""Bench (not a test): `cairn mcp` start to `initialize` answered, and p50/p95 per tool, over raw
JSON-RPC on pipes (no client library in the timings).
    python3 bench/mcp_latency.py <cairn binary> <data dir> <repo dir> [runs] [skim target] [query] [recall query]
On the bench archive: target `feature/skim-target` (500 related sessions), a query from
`cairn-bench queries`. A tool that answers with an error (hybrid search without embeddings built)
is reported with its message instead of figures. Each tool also gets the server's CPU a call (from
/proc), steadier than wall time on a loaded machine, after one warm-up call of its own.
"""
import json, os, subprocess, sys, time

binary, data, repo = sys.argv[1:4]
runs = int(sys.argv[4]) if len(sys.argv) > 4 else 50
target = sys.argv[5] if len(sys.argv) > 5 else "master"
query = sys.argv[6] if len(sys.argv) > 6 else "phoenix server"
recall_query = sys.argv[7] if len(sys.argv) > 7 else query


def start():
    t0 = time.perf_counter()
    p = subprocess.Popen([binary, "--data-dir", data, "-C", repo, "mcp"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}) + "\n")
    p.stdin.flush()
    p.stdout.readline()
    ready = time.perf_counter() - t0
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    return p, ready


def cpu_ms(pid):
    """The server's user + system CPU so far (Linux), so a loaded machine's wall times can be
    read against what a call itself cost."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")
    except OSError:
        return float("nan")


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] * 1000


starts = []
for _ in range(10):
    p, ready = start()
    starts.append(ready)
    p.stdin.close(); p.wait()
print(f"initialize answered: p50 {pct(starts, .5):.1f} ms, p95 {pct(starts, .95):.1f} ms (10 starts)")

p, _ = start()
calls = {
    "skim": {"target": target, "include_weak": True},
    "skim_strong": {"target": target},
    "show": None,
    "search": {"query": query},
    "search_hybrid": {"query": query, "mode": "hybrid"},
    "recall_query": {"query": recall_query},
    "recall_brief": {"query": recall_query, "max_tokens": 400},
}
n = 1
def call(name, args):
    global n
    n += 1
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": name, "arguments": args}}) + "\n")
    p.stdin.flush()
    return json.loads(p.stdout.readline())

first = json.loads(call("skim", calls["skim"])["result"]["content"][0]["text"])
calls["show"] = {"address": first["sessions"][0]["address"]}
for label, args in calls.items():
    name = label.removesuffix("_hybrid").removesuffix("_strong")
    times, failed = [], None
    # One warm-up call each (hybrid's first loads the model and the vectors): reported apart.
    t0 = time.perf_counter()
    call(name, args)
    first_ms = (time.perf_counter() - t0) * 1000
    cpu0 = cpu_ms(p.pid)
    for _ in range(runs):
        t0 = time.perf_counter()
        r = call(name, args)
        times.append(time.perf_counter() - t0)
        result = r.get("result") or {}
        if "error" in r or result.get("isError"):
            failed = r.get("error") or result.get("content")
            break
    if failed:
        print(f"{label}: error: {json.dumps(failed)[:300]}")
    else:
        cpu = (cpu_ms(p.pid) - cpu0) / runs
        print(f"{label}: p50 {pct(times, .5):.1f} ms, p95 {pct(times, .95):.1f} ms, "
              f"server CPU {cpu:.1f} ms a call ({runs} calls; the warm-up call {first_ms:.0f} ms)")
p.stdin.close(); p.wait()
