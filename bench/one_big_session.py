#!/usr/bin/env python3
"""Write one Claude Code session of about `--mb` megabytes, to see how a sync and a reindex
scale with the length of a single session rather than with the number of sessions.

The big real fixture (tests/fixtures/claude/ae4a77f8-….jsonl, 2.7 MB) is repeated under one
new session id; each repetition gets its own line ids (`uuid`, `parentUuid`), so every line is
a record of its own. Its tool-call ids are kept as they are, so each id recurs once per
repetition: the shape of an agent that numbers its calls per message or per run, which is
what a call's results are paired by (`archive::store::tool_results`).

    python3 bench/one_big_session.py --mb 300 --home /tmp/big300
    HOME=/tmp/big300 /usr/bin/time -v target/release/cairn --data-dir /tmp/big300/data sync

`--agent opencode` writes the session into an OpenCode database instead
(`~/.local/share/opencode/opencode.db`, `per_agent.py`'s schema, in WAL mode as OpenCode keeps
it; `--journal delete` for a rollback-journal file): the storage fixture's messages and their
parts inserted again and again under new ids, all in one session (or taking turns over
`--sessions N`), until their JSON reaches N MB.
`--agent opencode-tree` writes the same messages and parts as OpenCode's legacy storage tree
(`~/.local/share/opencode/storage/`: a session file, a file a message, a file a part), one
session, each message created a millisecond after the last.
`--agent gemini` writes one legacy Gemini CLI document (`~/.gemini/tmp/p/chats/session-….json`,
rewritten whole by the agent on every turn): the M-Gemini fixture's messages repeated under new
ids until the document reaches N MB.
"""
import argparse
import json
import re
import shutil
import sqlite3
import uuid
from pathlib import Path

from per_agent import FIX, OPENCODE_SCHEMA

FIXTURE = Path(__file__).resolve().parent.parent / "tests/fixtures/claude/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
SESSION = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
LINE_IDS = re.compile(r'"(uuid|parentUuid)":"([0-9a-f-]{36})"')


def opencode(mb: int, home: Path, journal: str, sessions: int = 1) -> None:
    db = home / ".local/share/opencode/opencode.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    db.unlink(missing_ok=True)
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA journal_mode = {journal}")
    conn.executescript(OPENCODE_SCHEMA)
    storage = FIX / "opencode/v2/storage"
    messages = []
    for mfile in sorted((storage / "message").rglob("*.json")):
        m = json.loads(mfile.read_text())
        parts = [json.loads(p.read_text()) for p in sorted((storage / "part" / m["id"]).glob("*.json"))]
        messages.append((m, parts))
    sids = [f"ses_big_{mb}" + (f"_{n}" if sessions > 1 else "") for n in range(sessions)]
    conn.execute("INSERT INTO project VALUES ('p', '/tmp/p', 'git', 'p', 0, 0)")
    for sid in sids:
        conn.execute("INSERT INTO session VALUES (?,?,?,?,?,?,?,?,?)",
                     (sid, "p", None, sid, "/tmp/p", f"a session of {mb // sessions} MB", "1", 1, 1))
    size, rep, rows, t = 0, 0, 0, 1_700_000_000_000
    while size < mb * 1024 * 1024:
        sid = sids[rep % sessions]
        for m, parts in messages:
            t += 1
            mid = f"msg_{rep:06d}_{m['id']}"
            data = json.dumps({**m, "id": mid, "sessionID": sid})
            conn.execute("INSERT INTO message VALUES (?,?,?,?,?)", (mid, sid, t, t, data))
            size += len(data)
            for i, p in enumerate(parts):
                data = json.dumps({**p, "messageID": mid, "sessionID": sid})
                conn.execute("INSERT INTO part VALUES (?,?,?,?,?,?)", (f"prt_{rep:06d}_{mid}_{i:03d}", mid, sid, t, t, data))
                size += len(data)
            rows += 1 + len(parts)
        rep += 1
    conn.execute("UPDATE session SET time_updated = ?1", (t,))
    conn.commit()
    conn.close()
    print(f"{db}: {size} bytes of JSON in {rows} rows, {rep} repetitions, {sessions} session(s), journal {journal}")


def opencode_tree(mb: int, home: Path) -> None:
    storage = FIX / "opencode/v2/storage"
    out = home / ".local/share/opencode/storage"
    shutil.rmtree(out, ignore_errors=True)
    session = json.loads(next((storage / "session").rglob("*.json")).read_text())
    sid = f"ses_big_{mb}"
    project = session["projectID"]
    (out / "session" / project).mkdir(parents=True)
    (out / "session" / project / f"{sid}.json").write_text(json.dumps({**session, "id": sid}))
    messages = []
    for mfile in sorted((storage / "message").rglob("*.json")):
        m = json.loads(mfile.read_text())
        parts = [json.loads(p.read_text()) for p in sorted((storage / "part" / m["id"]).glob("*.json"))]
        messages.append((m, parts))
    (out / "message" / sid).mkdir(parents=True)
    size, rep, files, t = 0, 0, 0, 1_700_000_000_000
    while size < mb * 1024 * 1024:
        for m, parts in messages:
            t += 1
            mid = f"msg_{rep:06d}_{m['id']}"
            data = json.dumps({**m, "id": mid, "sessionID": sid, "time": {**m.get("time", {}), "created": t}})
            (out / "message" / sid / f"{mid}.json").write_text(data)
            (out / "part" / mid).mkdir(parents=True)
            size += len(data)
            for i, p in enumerate(parts):
                data = json.dumps({**p, "id": f"prt_{i:03d}", "messageID": mid, "sessionID": sid})
                (out / "part" / mid / f"prt_{i:03d}.json").write_text(data)
                size += len(data)
            files += 1 + len(parts)
        rep += 1
    print(f"{out}: {size} bytes of JSON in {files} files, {rep} repetitions")


def gemini(mb: int, home: Path) -> None:
    src = FIX / "gemini/m-gemini/chats/session-2026-01-10T01-55-ac6d3016.json"
    doc = json.loads(src.read_text(encoding="utf-8"))
    messages = doc["messages"]
    out = home / ".gemini/tmp/p/chats" / f"session-2026-01-10T01-55-big{mb:05d}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    doc["sessionId"] = f"big-{mb}"
    doc["messages"] = []
    size, rep = 0, 0
    while size < mb * 1024 * 1024:
        for m in messages:
            copy = {**m, "id": f"{m['id']}-{rep}"}
            doc["messages"].append(copy)
            size += len(json.dumps(copy)) + 1
        rep += 1
    out.write_text(json.dumps(doc), encoding="utf-8")
    print(f"{out}: {out.stat().st_size} bytes, {len(doc['messages'])} messages, {rep} repetitions")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=100, help="the session's size in megabytes")
    ap.add_argument("--home", type=Path, required=True, help="the HOME to write the agent's folder under")
    ap.add_argument("--agent", choices=["claude", "opencode", "opencode-tree", "gemini"], default="claude")
    ap.add_argument("--journal", choices=["wal", "delete"], default="wal", help="OpenCode's journal mode")
    ap.add_argument("--sessions", type=int, default=1, help="OpenCode's database: spread the messages over N sessions")
    args = ap.parse_args()
    if args.agent == "opencode":
        opencode(args.mb, args.home, args.journal, max(1, args.sessions))
        return
    if args.agent == "opencode-tree":
        opencode_tree(args.mb, args.home)
        return
    if args.agent == "gemini":
        gemini(args.mb, args.home)
        return
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()
    session = str(uuid.UUID(int=args.mb))
    out = args.home / ".claude/projects/p" / f"{session}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    size, rep = 0, 0
    with out.open("w", encoding="utf-8") as f:
        while size < args.mb * 1024 * 1024:
            for line in lines:
                line = line.replace(SESSION, session)
                line = LINE_IDS.sub(lambda m: f'"{m.group(1)}":"{m.group(2)[:30]}-{rep}"', line)
                f.write(line + "\n")
                size += len(line.encode("utf-8")) + 1
            rep += 1
    print(f"{out}: {size} bytes, {rep} repetitions")


if __name__ == "__main__":
    main()
