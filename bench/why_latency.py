#!/usr/bin/env python3
"""`cairn why` latency from a commit and from a line, through the CLI, on a real repository.

Builds the world `crates/cairn-core/tests/why.rs` replays, outside the test: the real spotter
session (tests/fixtures/claude/ae4a77f8-….jsonl: 67 edits, 6 writes, six commits on
`spotter-4te`) moved into a fresh repository (its working directory becomes the repository, its
day becomes yesterday), its successful edits replayed in order and committed where the session
committed, with its subjects and times, on a base commit holding what its edits replaced. The
moved transcript is synced by `cairn sync` into a fresh data dir (CLAUDE_PROJECTS_DIR, a fresh
HOME), then each of these runs as a process of its own (`cairn -C REPO --json why …`), --runs
times, and p50/p95 wall are printed:

  commit   each of the six commits by its id
  line     a line of each file the session wrote or edited that is still in HEAD (the middle line
           of each file), `<path>:<line>`
  text     each commit subject as a description (lexical)

A sanity line says whether every commit's first session is the replayed one (as the test asserts).

With --data DIR --cases FILE (a synced data dir, and the questions `bench/why_retrieval.py
--dump-cases` writes), no repository is built: each question, full and half, is asked once as
`cairn --json why --mode M --limit 5 "<text>"` (run in DIR, outside any repository) and once as `cairn --json search --sessions --mode M
--limit 5 "<text>"` over DIR, a process each, and p50/p95 wall are printed (latency only: the
answers are not scored, so the questions may come from another corpus than DIR's).

    python3 bench/why_latency.py --cairn target/release/cairn [--runs 10] [--keep DIR]
    python3 bench/why_latency.py --cairn target/release/cairn --data DIR --cases FILE [--mode hybrid]
"""
import argparse
import datetime
import json
import os
import resource
import re
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "claude" / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
ORIGINAL_CWD = "/home/USER/projects/spotter-worktrees/spotter-4te"
ORIGINAL_DAY = "2026-02-12T"
COMMIT_LINE = re.compile(r"^\[spotter-4te [0-9a-f]{7}\] (.+)$")


def git(repo, *args, when=None):
    env = dict(os.environ, GIT_AUTHOR_NAME="T", GIT_AUTHOR_EMAIL="t@example.invalid",
               GIT_COMMITTER_NAME="T", GIT_COMMITTER_EMAIL="t@example.invalid")
    if when:
        env["GIT_AUTHOR_DATE"] = when
        env["GIT_COMMITTER_DATE"] = when
    r = subprocess.run(["git", "-C", str(repo), *args], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"git {args}: {r.stderr}")
    return r.stdout.strip()


def steps(transcript):
    """The session's successful Writes and Edits and its commits, in order (as why.rs reads them)."""
    lines = []
    for l in transcript.splitlines():
        try:
            lines.append(json.loads(l))
        except ValueError:
            pass
    content = lambda v: (v.get("message") or {}).get("content") if isinstance(v.get("message"), dict) else None
    failed = set()
    for v in lines:
        for c in content(v) or []:
            if isinstance(c, dict) and c.get("type") == "tool_result" and c.get("is_error") is True:
                failed.add(c.get("tool_use_id", ""))
    out = []
    for v in lines:
        for c in content(v) or []:
            if not isinstance(c, dict):
                continue
            inp = c.get("input") or {}
            if c.get("type") == "tool_use" and c.get("name") == "Write" and c.get("id") not in failed:
                out.append(("write", inp.get("file_path", ""), inp.get("content", "")))
            elif c.get("type") == "tool_use" and c.get("name") == "Edit" and c.get("id") not in failed:
                out.append(("edit", inp.get("file_path", ""), inp.get("old_string", ""), inp.get("new_string", ""),
                            inp.get("replace_all") is True))
            elif c.get("type") == "tool_result":
                t = c.get("content")
                text = t if isinstance(t, str) else json.dumps(t)
                first = text.split("\n", 1)[0] if text else ""
                m = COMMIT_LINE.match(first)
                if m:
                    out.append(("commit", m.group(1), v["timestamp"]))
    return out


def apply_edit(text, old, new, all_):
    if old not in text:
        text += old + "\n"
    return text.replace(old, new) if all_ else text.replace(old, new, 1)


def build_world(top: Path):
    repo = (top / "spotter-4te")
    repo.mkdir(parents=True)
    repo = repo.resolve()
    day = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=24)).strftime("%Y-%m-%dT")
    moved = FIXTURE.read_text().replace(ORIGINAL_CWD, str(repo)).replace(ORIGINAL_DAY, day)
    st = steps(moved)
    for s in st:
        if s[0] in ("write", "edit") and not s[1].startswith(str(repo) + "/"):
            raise SystemExit(f"an edit outside the repository: {s[1]}")
    now, base = {}, {}
    for s in st:
        if s[0] == "write":
            now[s[1]] = s[2]
        elif s[0] == "edit":
            _, path, old, new, all_ = s
            text = now.get(path, "")
            if old not in text:
                base[path] = base.get(path, "") + old + "\n"
            now[path] = apply_edit(text, old, new, all_)
    git(repo, "init", "-q", "-b", "spotter-4te")
    (repo / "README.md").write_text("spotter\n")
    for path, text in base.items():
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base", when=f"{day}10:00:00Z")
    commits = {}
    touched = []
    for s in st:
        if s[0] == "write":
            Path(s[1]).parent.mkdir(parents=True, exist_ok=True)
            Path(s[1]).write_text(s[2])
        elif s[0] == "edit":
            p = Path(s[1])
            p.write_text(apply_edit(p.read_text() if p.exists() else "", s[2], s[3], s[4]))
        else:
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "--allow-empty", "-m", s[1], when=s[2])
            commits[s[1]] = git(repo, "rev-parse", "HEAD")
        if s[0] in ("write", "edit") and s[1] not in touched:
            touched.append(s[1])
    if len(commits) != 6:
        raise SystemExit(f"expected the session's six commits, replayed {len(commits)}")
    transcripts = top / "claude" / "-spotter"
    transcripts.mkdir(parents=True)
    (transcripts / FIXTURE.name).write_text(moved)
    tracked = set(git(repo, "ls-files").splitlines())
    lines = []
    for path in touched:
        rel = os.path.relpath(path, repo)
        if rel not in tracked:
            continue
        n = len(Path(path).read_text().splitlines())
        if n:
            lines.append(f"{rel}:{(n + 1) // 2}")
    return repo, commits, lines


def pct(xs, p):
    s = sorted(xs)
    return s[min(len(s) - 1, round((len(s) - 1) * p))] if s else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cairn", required=True)
    ap.add_argument("--runs", type=int, default=10, help="rounds over every target")
    ap.add_argument("--keep", help="build the world in this (new) dir and keep it")
    ap.add_argument("--data", help="time descriptions over this synced data dir instead")
    ap.add_argument("--cases", help="with --data: the questions (JSON lines: query, half)")
    ap.add_argument("--mode", default="lexical", choices=["lexical", "vector", "hybrid"])
    a = ap.parse_args()
    if a.data:
        return over_archive(a)
    top = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="why-latency-"))
    repo, commits, lines = build_world(top)
    env = dict(PATH=os.environ.get("PATH", "/usr/bin:/bin"), HOME=str(top / "home"), LANG="C.UTF-8",
               CAIRN_DATA_DIR=str(top / "data"), CLAUDE_PROJECTS_DIR=str(top / "claude"))
    (top / "home").mkdir()
    subprocess.run([a.cairn, "--json", "sync"], env=env, check=True, capture_output=True)
    key = json.loads(subprocess.run([a.cairn, "--json", "sessions"], env=env, check=True, capture_output=True,
                                    text=True).stdout)[0]["session_key"]

    cpu = {"commit": [], "line": [], "text": []}

    def why(target, kind=None):
        t = time.perf_counter()
        c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        r = subprocess.run([a.cairn, "-C", str(repo), "--json", "why", target], env=env, capture_output=True,
                           text=True)
        ms = 1000 * (time.perf_counter() - t)
        c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if kind:
            cpu[kind].append(1000 * (c1.ru_utime - c0.ru_utime + c1.ru_stime - c0.ru_stime))
        if r.returncode != 0:
            raise SystemExit(f"why {target}: {r.stderr.strip()}")
        return ms, json.loads(r.stdout)

    right = sum(1 for sha in commits.values()
                if (lambda d: d["sessions"] and d["sessions"][0]["session_key"] == key
                    and d["sessions"][0]["confidence"] >= 0.9)(why(sha)[1]))
    line_right = sum(1 for t in lines if any(s["session_key"] == key for s in why(t)[1]["sessions"]))
    print(f"world: {top} ({len(commits)} commits, {len(lines)} lines); sanity: the session first (>= 0.9) "
          f"for {right}/{len(commits)} commits, named for {line_right}/{len(lines)} lines")
    times = {"commit": [], "line": [], "text": []}
    for _ in range(a.runs):
        for sha in commits.values():
            times["commit"].append(why(sha, "commit")[0])
        for t in lines:
            times["line"].append(why(t, "line")[0])
        for subject in commits:
            times["text"].append(why(subject, "text")[0])
    load = os.getloadavg()[0]
    for name, xs in times.items():
        print(f"why {name:6}: {len(xs)} calls, p50 {pct(xs, .5):.1f} ms, p95 {pct(xs, .95):.1f} ms, "
              f"max {max(xs):.1f} ms; CPU (with git) p50 {pct(cpu[name], .5):.1f} ms, p95 {pct(cpu[name], .95):.1f} ms; "
              f"load {load:.2f}")


def over_archive(a):
    env = dict(PATH=os.environ.get("PATH", "/usr/bin:/bin"), HOME=tempfile.mkdtemp(prefix="why-latency-home-"),
               LANG="C.UTF-8", CAIRN_DATA_DIR=a.data)
    if os.environ.get("CAIRN_MODEL_DIR"):
        env["CAIRN_MODEL_DIR"] = os.environ["CAIRN_MODEL_DIR"]
    qs = []
    for line in open(a.cases):
        if line.strip():
            c = json.loads(line)
            qs += [c["query"], c["half"]]
    times = {"why": [], "search --sessions": []}
    la = os.getloadavg()[0]
    for q in qs:
        for name, args in (("why", ["why", "--mode", a.mode, "--limit", "5", q]),
                           ("search --sessions", ["search", "--sessions", "--mode", a.mode, "--limit", "5", q])):
            t = time.perf_counter()
            r = subprocess.run([a.cairn, "--json", *args], env=env, capture_output=True, text=True, cwd=a.data)
            times[name].append(1000 * (time.perf_counter() - t))
            if r.returncode != 0:
                raise SystemExit(f"{name} {q!r}: {r.stderr.strip()}")
    for name, xs in times.items():
        print(f"{name} --mode {a.mode} over {a.data}: {len(xs)} calls, p50 {pct(xs, .5):.1f} ms, "
              f"p95 {pct(xs, .95):.1f} ms, max {max(xs):.1f} ms; load {la:.2f} -> {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
