#!/usr/bin/env python3
"""Plant a secret in the retained copies of a synced data dir, as a build whose redaction
rules missed it would have written them, to time a reindex that writes the copies again.

Every `--every`-th line of every copy that is a JSON object gets a field holding an AWS
access key id raw; the copy is written again, in zstd frames of about 4 MiB as capture writes
its batches, and the store's recorded length follows. The copies' key frames are dropped, so
lines capture had redacted read as changed too: the figure is an upper bound on the rewrite's
cost, not a record count to compare.
Needs the `zstd` command. Only for bench data dirs: it edits the archive in place.
"""
import argparse
import json
import sqlite3
import subprocess
from pathlib import Path

KEY = "AKIAZ7QW3RT5YU8IOP2L"
FRAME_BYTES = 4 * 1024 * 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("data", type=Path, help="the data dir (holds cairn.db and retained/)")
    ap.add_argument("--every", type=int, default=50)
    args = ap.parse_args()
    db = sqlite3.connect(args.data / "cairn.db")
    rows = db.execute("SELECT id, agent, source_key, generation FROM sources").fetchall()
    planted = 0
    for source, agent, key, generation in rows:
        copy = args.data / "retained" / agent / f"{key}.g{generation}.jsonl.zst"
        text = subprocess.run(["zstd", "-dcq", str(copy)], check=True, capture_output=True).stdout
        lines = text.split(b"\n")
        for n, line in enumerate(lines):
            if n % args.every != args.every // 7 or not line.startswith(b"{"):
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            obj["deployKey"] = KEY
            lines[n] = json.dumps(obj, separators=(",", ":")).encode()
            planted += 1
        # In frames of about a capture batch's size, as capture and a reindex write them.
        packed, frame, size = b"", [], 0
        for n, line in enumerate(lines):
            frame.append(line)
            size += len(line) + 1
            if size >= FRAME_BYTES or n == len(lines) - 1:
                text = b"\n".join(frame) + (b"\n" if n < len(lines) - 1 else b"")
                packed += subprocess.run(
                    ["zstd", "-1", "-cq"], input=text, check=True, capture_output=True
                ).stdout
                frame, size = [], 0
        copy.write_bytes(packed)
        db.execute("UPDATE sources SET retained_len = ? WHERE id = ?", (len(packed), source))
    db.commit()
    print(f"{planted} lines in {len(rows)} copies hold {KEY}")


if __name__ == "__main__":
    main()
