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
"""
import argparse
import re
import uuid
from pathlib import Path

FIXTURE = Path(__file__).resolve().parent.parent / "tests/fixtures/claude/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
SESSION = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
LINE_IDS = re.compile(r'"(uuid|parentUuid)":"([0-9a-f-]{36})"')


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=100, help="the session's size in megabytes")
    ap.add_argument("--home", type=Path, required=True, help="the HOME to write ~/.claude/projects/p/ under")
    args = ap.parse_args()
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
