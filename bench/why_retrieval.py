#!/usr/bin/env python3
"""Commit subjects as queries, the sessions that made the commits as answers.

Syncs the transcripts under --claude and --codex into a fresh data dir with the given `cairn`
binary, finds every commit a session made (its `git commit` output, `[branch sha] subject`),
and asks, for each distinct subject:

  records   `cairn search <subject>` (records, every word must match), its sessions in order
  sessions  `cairn search --sessions <subject>` (the session-level ranking)
  why       `cairn why <subject>` (a description: the same ranking, as `why` answers it)

and the same with only the first half of the subject's words (a person remembers part of it).
Prints how often a right session is among the first five.

With `--mode hybrid` (or vector), the session vectors are built first (`cairn embeddings build
--store sessions`, timed) and the session-level search and `why` rank with them; `--data DIR`
reuses a synced data dir (and its vectors) instead of syncing a fresh one. Each `--sessions`
and `why` call is timed end to end (a process each, as a person runs it): p50/p95 are printed.
`--dump-cases FILE` writes the cases as JSON lines (query, half, answers) for
`turns-bench --cases` (the same questions in process) and asks nothing.
"""
import argparse
import json
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

COMMIT = re.compile(r"\[[^\]\s\\]+ [0-9a-f]{7,40}\] (.*?)(?:\\n|\")")


def session_id(path: Path, first_lines: list) -> str:
    for line in first_lines:
        try:
            v = json.loads(line)
        except ValueError:
            continue
        if isinstance(v, dict):
            if v.get("sessionId"):
                return v["sessionId"]
            p = v.get("payload")
            if isinstance(p, dict) and v.get("type") == "session_meta" and p.get("id"):
                return p["id"]
    return path.stem


def truth(dirs):
    by_subject = {}
    for d in dirs:
        for path in Path(d).rglob("*.jsonl"):
            if "subagents" in path.parts:
                continue
            lines = path.read_text(errors="replace").splitlines()
            sid = session_id(path, lines[:20])
            for line in lines:
                for m in COMMIT.finditer(line):
                    subject = m.group(1).strip()
                    if len(subject.split()) >= 2:
                        by_subject.setdefault(subject, set()).add(sid)
    return by_subject


def run(cairn, env, args):
    out = subprocess.run([cairn, "--json", *args], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cairn", required=True)
    ap.add_argument("--claude", required=True)
    ap.add_argument("--codex", required=True)
    ap.add_argument("--limit", type=int, default=0, help="at most this many subjects (0: all)")
    ap.add_argument("--mode", default="lexical", choices=["lexical", "vector", "hybrid"])
    ap.add_argument("--data", help="a data dir to reuse (synced, maybe with vectors)")
    ap.add_argument("--dump-cases", help="write the cases to this file (JSON lines) and stop")
    a = ap.parse_args()
    data = a.data or tempfile.mkdtemp(prefix="why-retrieval-")
    env = dict(os.environ, CAIRN_DATA_DIR=data, CLAUDE_PROJECTS_DIR=a.claude,
               CODEX_SESSIONS_DIR=a.codex, HOME=data)
    subprocess.run([a.cairn, "sync"], env=env, check=True, capture_output=True)
    if a.mode != "lexical" and not a.dump_cases:
        t0 = time.time()
        c0 = os.times()
        subprocess.run([a.cairn, "embeddings", "build", "--store", "sessions"], env=env, check=True,
                       capture_output=True)
        c1 = os.times()
        cpu = (c1.children_user - c0.children_user) + (c1.children_system - c0.children_system)
        print(f"embeddings build: {time.time() - t0:.1f} s wall, {cpu:.1f} s CPU")
    mode = ["--mode", a.mode]
    keys = {}
    for s in run(a.cairn, env, ["sessions", "--limit", "1000000"]):
        keys[s.get("session_id")] = s["session_key"]
    cases = [(subj, {keys[i] for i in ids if i in keys}) for subj, ids in sorted(truth([a.claude, a.codex]).items())]
    cases = [c for c in cases if c[1]]
    if a.limit:
        cases = cases[: a.limit]
    half_of = lambda s: " ".join(s.split()[: max(1, (len(s.split()) + 1) // 2)])
    if a.dump_cases:
        with open(a.dump_cases, "w") as f:
            for subject, answer in cases:
                f.write(json.dumps({"query": subject, "half": half_of(subject), "answers": sorted(answer)}) + "\n")
        print(f"{len(cases)} cases written to {a.dump_cases} (data dir {data})")
        return
    hits = {}
    times = {"sessions": [], "why": []}

    def timed(name, args):
        t = time.perf_counter()
        v = run(a.cairn, env, args)
        times[name].append(1000 * (time.perf_counter() - t))
        return v

    for subject, answer in cases:
        half = half_of(subject)
        for variant, q in (("full", subject), ("half", half)):
            rec = run(a.cairn, env, ["search", "--limit", "200", q]) or []
            order = []
            for h in rec:
                if h["session_key"] not in order:
                    order.append(h["session_key"])
            ses = [h["session_key"] for h in (timed("sessions", ["search", "--sessions", *mode, "--limit", "5", q]) or [])]
            why = [s["session_key"] for s in (timed("why", ["why", *mode, "--limit", "5", q]) or {}).get("sessions", [])]
            for name, ranked in (("records", order), ("sessions", ses), ("why", why)):
                k = (variant, name)
                hits.setdefault(k, 0)
                hits[k] += bool(answer & set(ranked[:5]))
    n = len(cases)
    print(f"{n} commit subjects, {len(keys)} sessions, mode {a.mode}")
    for variant in ("full", "half"):
        for name in ("records", "sessions", "why"):
            h = hits.get((variant, name), 0)
            print(f"{variant:5} {name:9} top-5: {h}/{n} ({100 * h / max(n, 1):.0f}%)")
    for name, xs in times.items():
        xs = sorted(xs)
        if xs:
            p = lambda q: xs[min(len(xs) - 1, int(len(xs) * q))]
            print(f"{name} through the CLI, {len(xs)} calls: p50 {p(0.5):.0f} ms, p95 {p(0.95):.0f} ms")


if __name__ == "__main__":
    main()
