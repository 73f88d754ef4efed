#!/usr/bin/env python3
"""Build a corpus of real transcripts for the sync benchmark.

Copies the real Claude Code and Codex fixtures in tests/fixtures/ over and over, each copy
with fresh, deterministic session ids (so every copy is a distinct session), laid out the way
the agents lay them out on disk, until the corpus reaches --size megabytes. Same arguments,
same bytes: the benchmark is reproducible.
"""
import argparse
import os
import re
import shutil
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"


def session_uuid(seed: int, n: int) -> str:
    return str(uuid.UUID(int=(seed << 64) | n, version=4))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--size", type=int, default=100, help="megabytes (10^6 bytes) to write")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()

    out: Path = args.out
    if out.exists():
        shutil.rmtree(out)
    claude_root = out / "claude"
    codex_root = out / "codex"
    claude = sorted(p for p in (FIXTURES / "claude").glob("*.jsonl"))
    subagents = {p.stem: sorted((FIXTURES / "claude" / p.stem / "subagents").glob("*.jsonl")) for p in claude}
    codex = sorted((FIXTURES / "codex").glob("*.jsonl"))
    target = args.size * 1_000_000
    written = 0
    n = 0
    while written < target:
        for src in claude:
            text = src.read_text()
            ids = sorted(set(re.findall(r'"sessionId":"([^"]+)"', text)))
            new_ids = {old: session_uuid(args.seed, n * 16 + i) for i, old in enumerate(ids)}
            for old, new in new_ids.items():
                text = text.replace(old, new)
            main_id = new_ids.get(src.stem, session_uuid(args.seed, n * 16 + 15))
            project = claude_root / f"-home-dev-projects-repo{n % 41}"
            project.mkdir(parents=True, exist_ok=True)
            (project / f"{main_id}.jsonl").write_text(text)
            written += len(text)
            for sub in subagents.get(src.stem, []):
                sub_text = sub.read_text()
                for old, new in new_ids.items():
                    sub_text = sub_text.replace(old, new)
                sub_dir = project / main_id / "subagents"
                sub_dir.mkdir(parents=True, exist_ok=True)
                (sub_dir / sub.name).write_text(sub_text)
                written += len(sub_text)
            n += 1
        for src in codex:
            text = src.read_text()
            ids = sorted(set(re.findall(r'"(?:id|session_id)":"([0-9a-f-]{36}|test-[a-z-]+)"', text)))
            new_id = session_uuid(args.seed, n * 16)
            for old in ids:
                text = text.replace(old, new_id)
            day = codex_root / "2026" / "08" / f"{n % 28 + 1:02d}"
            day.mkdir(parents=True, exist_ok=True)
            (day / f"rollout-2026-08-{n % 28 + 1:02d}T10-00-00-{new_id}.jsonl").write_text(text)
            written += len(text)
            n += 1
    files = sum(1 for _ in out.rglob("*.jsonl"))
    print(f"{out}: {written / 1e6:.1f} MB in {files} files")


if __name__ == "__main__":
    main()
