#!/usr/bin/env python3
"""Association cost over a generated repository with a year and more of history.

Writes a git repository (via `git fast-import`) with --commits commits spread evenly over
--days days, each adding one distinctive line to one of --files files, and --sessions Claude
Code transcripts spread over the same days, each editing --edits files with the very lines
some commit within the hour after it added (so each session has commits carrying its work),
its cwd the repository. Then runs `cairn sync` (capture and association of every session) with
the given binary into a fresh data dir and prints the wall time, the links and how many
sessions got an `edit_committed` link naming a commit that carries their lines. Same
arguments, same bytes.

    python3 bench/assoc_history.py --cairn target/debug/cairn --out /tmp/assoc
"""
import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cairn", required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--commits", type=int, default=3000)
    ap.add_argument("--files", type=int, default=300)
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--edits", type=int, default=3)
    ap.add_argument("--days", type=int, default=400)
    ap.add_argument("--keep-repo", action="store_true", help="reuse --out/repo and transcripts")
    args = ap.parse_args()
    out: Path = args.out
    repo = out / "repo"
    claude = out / "claude"
    now = int(time.time())
    start = now - args.days * 86400
    step = args.days * 86400 // args.commits
    if not args.keep_repo or not repo.exists():
        if out.exists():
            shutil.rmtree(out)
        repo.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
        stream = []
        contents = {}
        for i in range(args.commits):
            f = f"src/file{i % args.files}.txt"
            contents.setdefault(f, [])
            contents[f].append(f"line {i} written for feature number {i * 7919 % 100003}")
            data = ("\n".join(contents[f]) + "\n").encode()
            t = start + i * step
            msg = f"commit {i}\n".encode()
            stream.append(b"commit refs/heads/main\n")
            stream.append(f"committer Bench <bench@example.invalid> {t} +0000\n".encode())
            stream.append(b"data %d\n%s" % (len(msg), msg))
            stream.append(f"M 100644 inline {f}\n".encode())
            stream.append(b"data %d\n%s\n" % (len(data), data))
        subprocess.run(["git", "-C", str(repo), "fast-import", "--quiet"], input=b"".join(stream), check=True)
        subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-f", "main"], check=True)
        proj = claude / "-bench-repo"
        proj.mkdir(parents=True)
        for s in range(args.sessions):
            # The session runs just before commit c and writes the lines commits c.. add.
            c = (s * 7 + 3) * args.commits // (args.sessions * 7 + 5)
            t0 = start + c * step - 600
            sid = f"00000000-0000-4000-8000-{s:012d}"
            lines = []
            def rec(kind, msg, t, n):
                ts = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(t))
                lines.append(json.dumps({"type": kind, "message": msg, "sessionId": sid, "cwd": str(repo),
                                         "gitBranch": "main", "uuid": f"{sid}-{n}", "timestamp": ts,
                                         "version": "2.1.39"}))
            rec("user", {"role": "user", "content": "bench work"}, t0, 0)
            for e in range(args.edits):
                i = c + e
                f = repo / f"src/file{i % args.files}.txt"
                new = f"line {i} written for feature number {i * 7919 % 100003}"
                cid = f"toolu_{s}_{e}"
                rec("assistant", {"id": f"m{s}{e}", "role": "assistant", "content": [
                    {"type": "tool_use", "id": cid, "name": "Edit",
                     "input": {"file_path": str(f), "old_string": "", "new_string": new}}]}, t0 + 10 * e, 2 * e + 1)
                rec("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": cid,
                                                          "content": "ok"}]}, t0 + 10 * e + 1, 2 * e + 2)
            (proj / f"{sid}.jsonl").write_text("\n".join(lines) + "\n")
    data = out / "data"
    if data.exists():
        shutil.rmtree(data)
    env = dict(os.environ, CAIRN_DATA_DIR=str(data), CLAUDE_PROJECTS_DIR=str(claude),
               HOME=str(out), CODEX_SESSIONS_DIR=str(out / "none"))
    t = time.monotonic()
    subprocess.run([args.cairn, "sync"], env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - t
    db = sqlite3.connect(data / "cairn.db")
    links = db.execute("SELECT count(*) FROM links").fetchone()[0]
    edit = db.execute("SELECT count(DISTINCT session_id) FROM links WHERE evidence = 'edit_committed'").fetchone()[0]
    named = db.execute("SELECT count(*) FROM links WHERE evidence = 'edit_committed'").fetchone()[0]
    sessions = db.execute("SELECT count(*) FROM sessions").fetchone()[0]
    print(json.dumps({"sync_s": round(wall, 2), "sessions": sessions, "links": links,
                      "sessions_with_edit_committed": edit, "edit_committed_links": named}))


if __name__ == "__main__":
    main()
