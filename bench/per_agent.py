#!/usr/bin/env python3
"""Cold ingest per agent: a corpus of each agent's fixtures copied under distinct session ids
(about --mb MB each), synced by `cairn sync` with only that agent's folder set; wall, CPU and
MB per CPU-second, median of --runs. Prints a Markdown table.

    python3 bench/per_agent.py --cairn target/debug/cairn --mb 8 --runs 3
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "tests" / "fixtures"

# agent: (override variable, sub-folder the variable's dir needs, [(fixture, id in it, path template)])
# `{i}` in a template is the copy's number; the id is replaced by one unique per copy.
AGENTS = {
    "claude": ("CLAUDE_PROJECTS_DIR", "", [
        ("claude/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl", "ae4a77f8-aedd-4bc1-888f-c94edc91af04",
         "-p/ae4a77f8-aedd-4bc1-888f-{i:012d}.jsonl"),
    ]),
    "gemini (legacy .json documents)": ("GEMINI_DIR", "tmp", [
        ("gemini/m-gemini/chats/session-2025-12-24T06-40-c330aea9.json", "c330aea9-39d8-4bf1-ac29-5fdb4baaad16",
         "p/chats/session-2025-12-24T06-40-{i:08d}.json"),
        ("gemini/m-gemini/chats/session-2026-01-10T01-55-ac6d3016.json", "ac6d3016-4a15-45b4-b48b-3a714b1ffa43",
         "q/chats/session-2026-01-10T01-55-{i:08d}.json"),
    ]),
    "gemini (.jsonl)": ("GEMINI_DIR", "tmp", [
        ("gemini/stage0/chats/session-2026-04-29T21-39-gemini_s.jsonl", "gemini_stage0_jsonl",
         "p/chats/session-2026-04-29T21-39-{i:08d}.jsonl"),
    ]),
    "cursor": ("CURSOR_PROJECTS_DIR", "", [
        ("cursor/-tmp-repo/agent-transcripts/large.jsonl", None, "-p/agent-transcripts/large-{i}.jsonl"),
        ("cursor/-tmp-repo/agent-transcripts/test-session.jsonl", None, "-p/agent-transcripts/test-{i}.jsonl"),
    ]),
    "copilot": ("COPILOT_DIR", "session-state", [
        ("copilot/small.jsonl", "copilot_stage0_small", "s-{i}.jsonl"),
    ]),
}


def build(dest: Path, specs, mb: float) -> int:
    total, i = 0, 0
    sources = [((FIX / f).read_text(), ident, tpl) for f, ident, tpl in specs]
    while total < mb * 1e6:
        for text, ident, tpl in sources:
            body = text.replace(ident, f"{ident[:4]}{i:012d}") if ident else text
            p = dest / tpl.format(i=i)
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(body)
            total += len(body.encode())
        i += 1
    return total


def sync(cairn: str, var: str, src: Path) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as data:
        env = {"PATH": os.environ.get("PATH", ""), "HOME": data, "CAIRN_DATA_DIR": data, var: str(src)}
        start = time.perf_counter()
        proc = subprocess.Popen([cairn, "sync"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(proc.stderr.read().decode(errors="replace"))
        return wall, usage.ru_utime + usage.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cairn", required=True)
    ap.add_argument("--mb", type=float, default=8)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    print("| agent | MB | files | wall (s) | CPU (s) | MB per CPU-second | load |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for agent, (var, sub, specs) in AGENTS.items():
        with tempfile.TemporaryDirectory() as root:
            home = Path(root)
            src = home / sub if sub else home
            size = build(src, specs, args.mb)
            files = sum(1 for p in src.rglob("*") if p.is_file())
            runs = [sync(args.cairn, var, home) for _ in range(args.runs)]
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            load = os.getloadavg()[0]
            print(f"| {agent} | {size / 1e6:.1f} | {files} | {wall:.2f} | {cpu:.2f} | {size / 1e6 / cpu:.1f} | {load:.1f} |")


if __name__ == "__main__":
    main()
