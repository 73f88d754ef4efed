#!/usr/bin/env python3
"""Run cold syncs of cairn and agentsview on one corpus, alternating, and report medians."""
import argparse
import os
import platform
import statistics
import subprocess
import tempfile
import time
from pathlib import Path


def run(cmd, env):
    """Wall seconds and peak RSS (MB) of one command, from wait4's rusage of that child."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{cmd[0]} failed: {err}")
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def machine():
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{platform.system()} {platform.release()}, {os.cpu_count()} cores ({cpu})"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cairn", required=True)
    ap.add_argument("--agentsview", required=True)
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()

    size_mb = sum(p.stat().st_size for p in args.corpus.rglob("*.jsonl")) / 1e6
    files = sum(1 for _ in args.corpus.rglob("*.jsonl"))
    results = {"cairn": [], "agentsview": []}
    for i in range(args.runs):
        order = ["cairn", "agentsview"] if i % 2 == 0 else ["agentsview", "cairn"]
        for tool in order:
            with tempfile.TemporaryDirectory() as tmp:
                home = Path(tmp) / "home"
                home.mkdir()
                env = {
                    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                    "HOME": str(home),
                    "CLAUDE_PROJECTS_DIR": str(args.corpus / "claude"),
                    "CODEX_SESSIONS_DIR": str(args.corpus / "codex"),
                    "AGENTSVIEW_NO_DAEMON": "1",
                    "CAIRN_DATA_DIR": str(Path(tmp) / "cairn"),
                }
                cmd = [args.cairn, "sync"] if tool == "cairn" else [args.agentsview, "sync"]
                wall, rss, cpu = run(cmd, env)
                results[tool].append((wall, rss, cpu))
                print(f"run {i + 1} {tool:<10} {wall:7.2f} s  {rss:7.1f} MB peak RSS  {cpu:6.2f} s CPU", flush=True)

    def med(tool, k):
        return statistics.median(r[k] for r in results[tool])

    cw, aw = med("cairn", 0), med("agentsview", 0)
    lines = [
        "# Sync benchmark: cairn vs agentsview",
        "",
        f"Machine: {machine()}.",
        f"Corpus: {size_mb:.1f} MB in {files} transcript files built by `bench/make_corpus.py` from the real",
        "fixtures in `tests/fixtures/` (fixed seed). Cold runs (empty data dir each time), alternating,",
        f"{args.runs} runs each; medians. Produced by `bench/sync-vs-agentsview.sh`.",
        "",
        "| tool | wall (s) | CPU (s) | peak RSS (MB) | MB/s |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for tool in ("cairn", "agentsview"):
        w, c, r = med(tool, 0), med(tool, 2), med(tool, 1)
        lines.append(f"| {tool} | {w:.2f} | {c:.2f} | {r:.0f} | {size_mb / w:.0f} |")
    lines += ["", f"cairn is **{aw / cw:.1f}×** faster (wall, median)."]
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
