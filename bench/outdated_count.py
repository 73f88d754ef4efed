#!/usr/bin/env python3
"""How long the outdated-session counts take on a large archive's `sessions` table.

The window counts the sessions an older Cairn read at every start (`app_info`), and `doctor`
counts them by agent. Since each agent has its own revision (`sources::unchanged_since`), the
test is a CASE over the agent's name instead of one comparison. This builds a synthetic table of
the columns those queries read (200k sessions, each with a source row) in memory and times the
queries as Cairn writes them, best of 7. Hand-run: `python3 bench/outdated_count.py`.
"""
import random
import sqlite3
import sys
import time

SESSIONS = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
AGENTS = ["claude", "codex", "copilot", "qwen", "droid", "kimi", "gemini", "cursor", "aider", "crush",
          "opencode", "cline", "roo", "kilo", "kiro", "pi", "openclaw", "grok", "hermes", "antigravity",
          "vibe", "iflow", "traex", "gptme", "posit", "qwenpaw", "vscopilot", "atif"]
# What one agent's change leaves: its sessions at revision 3 are outdated, the others current.
CHANGED = {"hermes": 4}

random.seed(1)
db = sqlite3.connect(":memory:")
db.execute("CREATE TABLE sessions (id INTEGER PRIMARY KEY, agent TEXT NOT NULL, read_by INTEGER NOT NULL)")
db.execute("CREATE TABLE sources (id INTEGER PRIMARY KEY, session_id INTEGER)")
mix = ["claude", "codex", "hermes", "gemini", "cursor", "zed"]
db.executemany("INSERT INTO sessions (agent, read_by) VALUES (?, ?)",
               [(random.choice(mix), random.choice([3, 3, 3, 4])) for _ in range(SESSIONS)])
db.executemany("INSERT INTO sources (session_id) VALUES (?)", [(i,) for i in range(1, SESSIONS + 1)])
db.execute("CREATE INDEX sources_session ON sources (session_id)")

outdated = "read_by < (CASE agent" + "".join(
    f" WHEN '{a}' THEN {CHANGED.get(a, 3)}" for a in AGENTS) + " ELSE 0 END)"
held = "EXISTS (SELECT 1 FROM sources WHERE sources.session_id = sessions.id)"
queries = {
    "before: one revision for every agent": f"SELECT COUNT(*) FILTER (WHERE read_by < 4), COUNT(*) FROM sessions WHERE {held}",
    "per agent, the window's count (outdated_count)": f"SELECT COUNT(*) FROM sessions WHERE {outdated} AND {held}",
    "per agent, doctor's grouped count (read_before)": f"SELECT agent, COUNT(*) FILTER (WHERE {outdated}), COUNT(*) FROM sessions WHERE {held} GROUP BY agent",
}
print(f"SQLite {sqlite3.sqlite_version}, {SESSIONS} sessions")
for name, sql in queries.items():
    best = float("inf")
    for _ in range(7):
        start = time.perf_counter()
        db.execute(sql).fetchall()
        best = min(best, time.perf_counter() - start)
    print(f"| {name} | {best * 1000:.1f} ms |")
