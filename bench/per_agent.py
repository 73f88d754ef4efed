#!/usr/bin/env python3
"""Cold ingest per agent: a corpus of each agent's real fixtures (tests/fixtures, see each
SOURCES.md) copied under distinct session ids to about --mb MB, laid out as the agent lays it out,
synced by `cairn sync` with only that agent's folder set (its override variable). Reports wall and
CPU time, MB and records per CPU-second, median of --runs, as a Markdown table.

Line files and documents are copied with their session id replaced; Crush's database is copied
whole (SQLite's backup) with every session and message id suffixed; OpenCode's storage tree is
copied with its session and message ids renamed, and OpenCode's database (no real one exists, see
its SOURCES.md) is built with OpenCode's schema from the same storage fixtures' messages and parts.
Aider's history is one file per project, copied as it is. Cursor's IDE store and kiro-cli's
database have no real sample either (schema sample and AgentsView's payloads, see their SOURCES.md):
one database each holding the fixture's chats or conversations once per copy, ids suffixed. Cline,
Roo Code and Kilo Code task folders (schema samples) are copied under new task ids.

    python3 bench/per_agent.py --cairn target/debug/cairn --mb 8 --runs 3 [--only crush,claude]

With --agentsview BINARY (AgentsView's Go binary, see bench/sync-vs-agentsview.sh), each corpus is
also synced cold by `agentsview sync` (AGENTSVIEW_NO_DAEMON=1, a fresh HOME holding its data dir),
its folder given through AgentsView's own override variable (AV_ENV), alternating with Cairn; it
adds AgentsView's sessions and messages (its `Database:` line), MB per CPU-second and peak RSS.
"""
import argparse
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "tests" / "fixtures"


def copies(specs):
    """A builder from [(fixture, id in it, path template)]: `{i}` in a template is the copy's
    number; the id is replaced by one unique per copy."""
    def build(dest: Path, i: int) -> int:
        total = 0
        for f, ident, tpl in specs:
            text = (FIX / f).read_text()
            body = text.replace(ident, f"{ident[:4]}{i:012d}") if ident else text
            p = dest / tpl.format(i=i)
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(body)
            total += len(body.encode())
        return total
    return build


def tree_copy(fixture: str, at: str, ids):
    """A builder copying the folder `fixture` to `at/{i}`-less layout, every regex in `ids`
    (over file contents and relative paths) given the copy's number as a prefix."""
    def rename(s: str, i: int) -> str:
        for pattern in ids:
            s = re.sub(pattern, lambda m: f"c{i:06d}{m.group(0)}", s)
        return s

    def build(dest: Path, i: int) -> int:
        total = 0
        src = FIX / fixture
        for p in sorted(src.rglob("*")):
            if not p.is_file() or p.name == "SOURCES.md":
                continue
            rel = rename(str(p.relative_to(src)), i)
            out = dest / at.format(i=i) / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            body = rename(p.read_text(), i)
            out.write_text(body)
            total += len(body.encode())
        return total
    return build


def crush(dest: Path, i: int) -> int:
    src = FIX / "crush/Starmel-OpenSuperWhisper/.crush/crush.db"
    out = dest / f"p{i:05d}/.crush/crush.db"
    out.parent.mkdir(parents=True, exist_ok=True)
    # immutable: the committed fixture is never written, and no -wal/-shm is left beside it.
    s = sqlite3.connect(f"file:{src}?immutable=1", uri=True)
    t = sqlite3.connect(out)
    s.backup(t)
    s.close()
    sfx = f"-{i:06d}"
    t.execute("UPDATE sessions SET id = id || ?1, parent_session_id = parent_session_id || ?1", (sfx,))
    t.execute("UPDATE messages SET id = id || ?1, session_id = session_id || ?1", (sfx,))
    t.commit()
    size = t.execute("SELECT sum(length(CAST(parts AS BLOB))) FROM messages").fetchone()[0]
    t.execute("PRAGMA journal_mode = DELETE")
    t.close()
    return size


OPENCODE_SCHEMA = """
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT NOT NULL,
  directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL, time_created INTEGER NOT NULL,
  time_updated INTEGER NOT NULL);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
  time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE INDEX part_message_id_id_idx ON part (message_id, id);
CREATE INDEX part_session_idx ON part (session_id);
CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT NOT NULL, vcs TEXT, name TEXT,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
"""


def opencode_db(dest: Path, i: int) -> int:
    """Every session of the storage fixtures, copy `i`, as rows of one shared `opencode.db`."""
    db = dest / "opencode.db"
    new = not db.exists()
    conn = sqlite3.connect(db)
    if new:
        conn.executescript(OPENCODE_SCHEMA)
    storage = FIX / "opencode/v2/storage"
    total = 0
    for sfile in sorted((storage / "session").rglob("*.json")):
        s = json.loads(sfile.read_text())
        sid = f"ses_{i:06d}_{s['id']}"
        t = s.get("time", {})
        conn.execute("INSERT INTO session VALUES (?,?,?,?,?,?,?,?,?)",
                     (sid, s.get("projectID", "p"), None, "slug", s.get("directory", "/tmp"), s.get("title", ""),
                      s.get("version", ""), t.get("created", 0), t.get("updated", 0)))
        for mfile in sorted((storage / "message" / s["id"]).glob("*.json")):
            m = json.loads(mfile.read_text())
            mid = f"msg_{i:06d}_{m['id']}"
            created = m.get("time", {}).get("created", 0)
            data = json.dumps(m)
            conn.execute("INSERT INTO message VALUES (?,?,?,?,?)", (mid, sid, created, created, data))
            total += len(data)
            for pfile in sorted((storage / "part" / m["id"]).glob("*.json")):
                p = json.loads(pfile.read_text())
                data = json.dumps(p)
                conn.execute("INSERT INTO part VALUES (?,?,?,?,?,?)",
                             (f"prt_{i:06d}_{pfile.parent.name}_{pfile.stem}", mid, sid, created, created, data))
                total += len(data)
    conn.commit()
    conn.close()
    return total


def cursor_ide(dest: Path, i: int) -> int:
    """The fixture store's chats, copy `i`, as rows of one shared `globalStorage/state.vscdb`."""
    db = dest / "globalStorage/state.vscdb"
    db.parent.mkdir(parents=True, exist_ok=True)
    sql = (FIX / "cursor/vscdb/state.sql").read_text()
    sql = sql.replace("CREATE TABLE ", "CREATE TABLE IF NOT EXISTS ")
    sql = re.sub(r"\bc-(agent|legacy|empty)\b", lambda m: f"c{i:06d}-{m.group(1)}", sql)
    conn = sqlite3.connect(db)
    conn.executescript(sql)
    size = conn.execute("SELECT sum(length(value)) FROM cursorDiskKV WHERE key LIKE ?",
                        (f"%c{i:06d}-%",)).fetchone()[0]
    conn.close()
    return size


def kiro(dest: Path, i: int) -> int:
    """The fixture's three conversations, copy `i`, as rows of one shared `data.sqlite3`."""
    db = dest / "data.sqlite3"
    new = not db.exists()
    conn = sqlite3.connect(db)
    if new:
        conn.execute("CREATE TABLE conversations_v2 (key TEXT NOT NULL, conversation_id TEXT NOT NULL, "
                     "value TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, "
                     "PRIMARY KEY (key, conversation_id))")
    total = 0
    for cwd, ident, name, at in [("/home/user/code/kiro-app", "sqlite-session", "standard_payload.json", 1779012000000),
                                 ("/home/user/code/current-kiro", "overlap-session", "overlap_payload.json", 1779015600000),
                                 ("/home/dev/api", "cairn-kiro-tools", "tools_payload.json", 1779094800000)]:
        value = (FIX / "kiro" / name).read_text().replace(ident, f"{ident}-{i:06d}")
        conn.execute("INSERT INTO conversations_v2 VALUES (?,?,?,?,?)",
                     (cwd, f"{ident}-{i:06d}", value, at, at + 60_000))
        total += len(value.encode())
    conn.commit()
    conn.close()
    return total


def tasks(extension: str):
    """A builder copying the extension's task folders under new task ids (`<id><i>`), the ids in
    the tasks' JSON strings (a Roo sub-task's parent) renamed alike."""
    def build(dest: Path, i: int) -> int:
        total = 0
        src = FIX / "cline" / extension / "tasks"
        ids = [d.name for d in src.iterdir() if d.is_dir()]
        for task in ids:
            for p in sorted((src / task).iterdir()):
                body = p.read_text()
                for ident in ids:
                    body = body.replace(f'"{ident}"', f'"{ident}{i:06d}"')
                out = dest / "tasks" / f"{task}{i:06d}" / p.name
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(body)
                total += len(body.encode())
        return total
    return build


def vs_traces(requests: int = 200, per_conversation: int = 20):
    """A builder of Visual Studio trace files, one a run of the IDE as it writes them: the four
    real samples' lines over and over (`requests` of them), every span id made unique and a new
    conversation every `per_conversation` requests (the samples are one file a request)."""
    samples = sorted((FIX / "vscopilot").glob("*_VSGitHubCopilot_traces.jsonl"))
    lines = [line for p in samples for line in p.read_text().splitlines() if line.strip()]
    conversations = sorted(set(re.findall(r'"stringValue":"([0-9a-f]{8}-[0-9a-f-]{27})"', "\n".join(lines))))

    def build(dest: Path, i: int) -> int:
        out = dest / f"20261201T{i:06d}_{i:04x}_VSGitHubCopilot_traces.jsonl"
        body = []
        for rep in range(requests // len(samples)):
            for line in lines:
                line = re.sub(r'"([0-9a-f]{16})"', lambda m: f'"{i:06x}{rep:04x}{m.group(1)[10:]}"', line)
                for c in conversations:
                    line = line.replace(c, f"{c[:9]}{i:04x}-{rep // per_conversation:04x}{c[18:]}")
                body.append(line)
        text = "\n".join(body) + "\n"
        out.write_text(text)
        return len(text.encode())
    return build


# agent: (override variable, sub-folder the variable's dir needs, builder)
AGENTS = {
    "claude": ("CLAUDE_PROJECTS_DIR", "", copies([
        ("claude/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl", "ae4a77f8-aedd-4bc1-888f-c94edc91af04",
         "-p/ae4a77f8-aedd-4bc1-888f-{i:012d}.jsonl"),
    ])),
    "codex": ("CODEX_SESSIONS_DIR", "", copies([
        ("codex/small.jsonl", "019fc8be-3658-7ca3-9e29-000000000000", "2026/08/03/rollout-{i}-a.jsonl"),
        ("codex/codex_053_rate_limit.jsonl", "test-ratelimit-session", "2026/08/03/rollout-{i}-b.jsonl"),
    ])),
    "copilot": ("COPILOT_DIR", "session-state", copies([
        ("copilot/small.jsonl", "copilot_stage0_small", "s-{i}.jsonl"),
    ])),
    "qwen": ("QWEN_PROJECTS_DIR", "", copies([
        ("qwen/019f0000-0000-7000-8000-000000000001.jsonl", "019f0000-0000-7000-8000-000000000001",
         "p/chats/{i}.jsonl"),
    ])),
    "droid": ("FACTORY_SESSIONS_DIR", "", copies([
        ("droid/session_store_large.jsonl", "droid_large", "p/{i}-a.jsonl"),
        ("droid/stream_json_large.jsonl", None, "p/{i}-b.jsonl"),
    ])),
    "kimi": ("KIMI_DIR", "sessions", tree_copy("kimi/sessions", ".", [r"session_[0-9a-f-]+"])),
    "pi": ("PI_CODING_AGENT_DIR", "sessions", copies([
        ("pi/session.jsonl", "pi-test-session-uuid", "--p--/{i}-a.jsonl"),
        ("pi/small.jsonl", "019e19b4-eb48-746a-aa6b-8dfcfa37954b", "--p--/{i}-b.jsonl"),
    ])),
    "grok": ("GROK_HOME", "sessions", copies([
        ("grok/%2Ftmp%2Fas-agent-lab%2Fgrok%2Fproject/019f6851-7ec4-7ef0-97d3-03f3eee38755/chat_history.jsonl",
         None, "%2Fp/g-{i}-a/chat_history.jsonl"),
        ("grok/%2Fworkspace%2Fgrok-worktrees%2Fparser-audit/019f6000-0000-7000-8000-000000000001/chat_history.jsonl",
         None, "%2Fp/g-{i}-b/chat_history.jsonl"),
    ])),
    "antigravity": ("ANTIGRAVITY_CLI_DIR", "brain", copies([
        ("antigravity/cli-small/.system_generated/logs/transcript.jsonl", None,
         "c-{i}/.system_generated/logs/transcript.jsonl"),
    ])),
    "qwenpaw": ("QWENPAW_DIR", "", copies([
        ("qwenpaw/default/sessions/main_main.json", None, "a{i}/sessions/main_main.json"),
        ("qwenpaw/default/sessions/default_1700000000000.json", None, "a{i}/sessions/default.json"),
    ])),
    "posit": ("POSIT_ASSISTANT_DIR", "", copies([
        ("posit/a1b2c3d4/11111111/lm-messages.jsonl", None, "w/c{i}/lm-messages.jsonl"),
        ("posit/a1b2c3d4/11111111/conversation.json", None, "w/c{i}/conversation.json"),
        ("posit/a1b2c3d4/workspace.json", None, "w/workspace.json"),
    ])),
    "gptme": ("GPTME_DIR", "", copies([
        ("gptme/2026-06-13-write-hello-world/conversation.jsonl", None, "c-{i}/conversation.jsonl"),
    ])),
    "traex": ("TRAEX_SESSIONS_DIR", "", copies([
        ("traex/sessions/2026/08/01/rollout-2026-08-01T18-07-03-019fbcca-9fd4-7d20-83dc-0762b2f839b3.jsonl",
         "019fbcca-9fd4-7d20-83dc-0762b2f839b3", "2026/08/01/rollout-{i}.jsonl"),
    ])),
    "iflow": ("IFLOW_DIR", "", copies([
        ("iflow/C--exp-docker-image-retagger/session-5de701fc-7454-4858-a249-95cac4fd3b51.jsonl",
         "5de701fc-7454-4858-a249-95cac4fd3b51", "-p/session-{i}.jsonl"),
    ])),
    "vibe": ("VIBE_HOME", "logs/session", copies([
        ("vibe/session_with_tools/messages.jsonl", None, "session_{i}_a/messages.jsonl"),
        ("vibe/session_with_tools/meta.json", "def456ghi-0000-0000-0000-000000000000", "session_{i}_a/meta.json"),
    ])),
    "hermes": ("HERMES_HOME", "sessions", copies([
        ("hermes/session_20260429_hermes_large.json", "20260429_hermes_large", "session_{i}.json"),
    ])),
    "openclaw": ("OPENCLAW_STATE_DIR", "agents", copies([
        ("openclaw/large.jsonl", "openclaw-stage0-large", "main/sessions/{i}-a.jsonl"),
        ("openclaw/small.jsonl", "openclaw-stage0-small", "main/sessions/{i}-b.jsonl"),
    ])),
    "gemini (legacy .json documents)": ("GEMINI_DIR", "tmp", copies([
        ("gemini/m-gemini/chats/session-2025-12-24T06-40-c330aea9.json", "c330aea9-39d8-4bf1-ac29-5fdb4baaad16",
         "p/chats/session-2025-12-24T06-40-{i:08d}.json"),
        ("gemini/m-gemini/chats/session-2026-01-10T01-55-ac6d3016.json", "ac6d3016-4a15-45b4-b48b-3a714b1ffa43",
         "q/chats/session-2026-01-10T01-55-{i:08d}.json"),
    ])),
    "gemini (.jsonl)": ("GEMINI_DIR", "tmp", copies([
        ("gemini/stage0/chats/session-2026-04-29T21-39-gemini_s.jsonl", "gemini_stage0_jsonl",
         "p/chats/session-2026-04-29T21-39-{i:08d}.jsonl"),
    ])),
    "cursor": ("CURSOR_PROJECTS_DIR", "", copies([
        ("cursor/-tmp-repo/agent-transcripts/large.jsonl", None, "-p/agent-transcripts/large-{i}.jsonl"),
        ("cursor/-tmp-repo/agent-transcripts/test-session.jsonl", None, "-p/agent-transcripts/test-{i}.jsonl"),
    ])),
    "cline (task folders)": ("CLINE_DIR", "", tasks("saoudrizwan.claude-dev")),
    "roo (task folders)": ("ROOCODE_DIR", "", tasks("rooveterinaryinc.roo-cline")),
    "kilo (task folders)": ("KILO_LEGACY_DIR", "", tasks("kilocode.kilo-code")),
    "aider": ("AIDER_HISTORY_DIRS", "", copies([
        ("aider/Aquaticat-Monochromatic/.aider.chat.history.md", None, "p{i}/.aider.chat.history.md"),
    ])),
    "crush (database)": ("CRUSH_PROJECT_DIRS", "", crush),
    "opencode (database)": ("OPENCODE_DATA_DIR", "", opencode_db),
    "cursor ide (database)": ("CURSOR_USER_DIR", "", cursor_ide),
    "kiro (database)": ("KIRO_CLI_DIR", "", kiro),
    "vscopilot (trace files)": ("VISUALSTUDIO_COPILOT_DIR", "", vs_traces()),
    "opencode (storage tree)": ("OPENCODE_DATA_DIR", "", tree_copy(
        "opencode/v2/storage", "storage", [r"s_stage0_\w+", r"\bm_(user|assistant)_\w+"])),
}


def crush_projects(root: Path, out: Path) -> Path:
    """AgentsView finds Crush's databases through Crush's `projects.json` (its global data dir)."""
    dirs = sorted(root.glob("p*/.crush"))
    (out / "projects.json").write_text(json.dumps({"projects": [
        {"path": str(d.parent), "data_dir": str(d), "last_accessed": "2026-01-01T00:00:00Z"} for d in dirs]}))
    return out


# agent: AgentsView 0.46.1's override variable and the folder it names (relative to the corpus root,
# or a function of it), None where it reads none of the corpus (checked by syncing: 0 sessions):
# Droid (no Factory source in 0.46.1), Cline's extension task folders (its Cline reader finds none).
AV_ENV = {
    "claude": ("CLAUDE_PROJECTS_DIR", ""),
    "codex": ("CODEX_SESSIONS_DIR", ""),
    "copilot": ("COPILOT_DIR", ""),
    "qwen": ("QWEN_PROJECTS_DIR", ""),
    "droid": None,
    "kimi": ("KIMI_DIR", "sessions"),
    "gemini (legacy .json documents)": ("GEMINI_DIR", ""),
    "gemini (.jsonl)": ("GEMINI_DIR", ""),
    "cursor": ("CURSOR_PROJECTS_DIR", ""),
    "cline (task folders)": None,
    "roo (task folders)": ("ROOCODE_DIR", ""),
    "kilo (task folders)": ("KILO_LEGACY_DIR", ""),
    "aider": ("AIDER_DIR", ""),
    "crush (database)": ("CRUSH_DIR", crush_projects),
    "opencode (database)": ("OPENCODE_DIR", ""),
    "cursor ide (database)": ("CURSOR_IDE_DIR", "globalStorage"),
    "kiro (database)": ("KIRO_SESSIONS_DIR", ""),
    "opencode (storage tree)": ("OPENCODE_DIR", ""),
}


def build(dest: Path, builder, mb: float) -> int:
    total, i = 0, 0
    while total < mb * 1e6:
        total += builder(dest, i)
        i += 1
    return total


def sync(cairn: str, var: str, src: Path) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory() as data:
        env = {"PATH": os.environ.get("PATH", ""), "HOME": data, "CAIRN_DATA_DIR": data, var: str(src)}
        start = time.perf_counter()
        proc = subprocess.Popen([cairn, "sync"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(proc.stderr.read().decode(errors="replace"))
        conn = sqlite3.connect(Path(data) / "cairn.db")
        records = conn.execute("SELECT count(*) FROM records").fetchone()[0]
        conn.close()
        return wall, usage.ru_utime + usage.ru_stime, records


def av_sync(av: str, var: str, src: Path) -> tuple[float, float, float, int, int]:
    """One cold `agentsview sync`: wall, CPU (user + system), peak RSS in MB, sessions, messages."""
    with tempfile.TemporaryDirectory() as home:
        env = {"PATH": os.environ.get("PATH", ""), "HOME": home, "LANG": "C.UTF-8", "NO_COLOR": "1",
               "AGENTSVIEW_NO_DAEMON": "1", var: str(src)}
        with open(Path(home) / "out", "w+b") as out, open(Path(home) / "err", "w+b") as err:
            start = time.perf_counter()
            proc = subprocess.Popen([av, "sync"], env=env, stdout=out, stderr=err)
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - start
            out.seek(0)
            err.seek(0)
            text, errs = out.read().decode(errors="replace"), err.read().decode(errors="replace")
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(errs[-2000:])
        m = re.search(r"Database: (\d+) sessions, (\d+) messages", text)
        sessions, messages = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
        return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, sessions, messages


def is_database(agent: str) -> bool:
    """Whether the agent's corpus is a database the agent owns (issue 16's 2× per record bound)."""
    return agent.endswith("(database)")


def measure(cairn: str, mb: float, runs: int, only=(), agentsview: str | None = None):
    """Each agent's figures, one dict an agent as it is measured: the corpus (bytes, files),
    Cairn's cold sync (median wall and CPU of `runs`, records) and, with `agentsview` where it reads
    that agent, AgentsView's (alternating with Cairn; `None` where it reads none of the corpus)."""
    for agent, (var, sub, builder) in AGENTS.items():
        if only and not any(agent.startswith(o) for o in only):
            continue
        with tempfile.TemporaryDirectory() as root, tempfile.TemporaryDirectory() as side:
            home = Path(root)
            src = home / sub if sub else home
            src.mkdir(parents=True, exist_ok=True)
            size = build(src, builder, mb)
            files = sum(1 for p in src.rglob("*") if p.is_file())
            av = AV_ENV.get(agent) if agentsview else None
            if av:
                av_var, where = av
                av_dir = where(home, Path(side)) if callable(where) else (home / where if where else home)
            cairn_runs, av_runs, loads = [], [], []
            for i in range(runs):
                loads.append(os.getloadavg()[0])
                # alternate which tool reads first (page cache, machine load)
                if av and i % 2 == 1:
                    av_runs.append(av_sync(agentsview, av_var, av_dir))
                cairn_runs.append(sync(cairn, var, home))
                if av and i % 2 == 0:
                    av_runs.append(av_sync(agentsview, av_var, av_dir))
            yield {
                "agent": agent,
                "database": is_database(agent),
                "bytes": size,
                "files": files,
                "records": cairn_runs[0][2],
                "wall": statistics.median(r[0] for r in cairn_runs),
                "cpu": statistics.median(r[1] for r in cairn_runs),
                "runs": runs,
                "load": statistics.median(loads),
                "agentsview": {
                    "sessions": av_runs[0][3],
                    "messages": av_runs[0][4],
                    "wall": statistics.median(r[0] for r in av_runs),
                    "cpu": statistics.median(r[1] for r in av_runs),
                    "rss_mb": max(r[2] for r in av_runs),
                } if av_runs else None,
            }


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cairn", required=True)
    ap.add_argument("--agentsview", help="AgentsView's Go binary: also time its cold sync of each corpus")
    ap.add_argument("--mb", type=float, default=8)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated prefixes of the agents to run")
    args = ap.parse_args()
    only = [o.strip() for o in args.only.split(",") if o.strip()]
    if args.agentsview:
        print("| agent | MB | files | Cairn records | Cairn CPU (s) | Cairn MB per CPU-s | Cairn records per CPU-s "
              "| AgentsView sessions | AgentsView messages | AgentsView wall (s) | AgentsView CPU (s) "
              "| AgentsView MB per CPU-s | AgentsView peak RSS (MB) | load |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    else:
        print("| agent | MB | files | records | wall (s) | CPU (s) | MB per CPU-s | records per CPU-s | load |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for m in measure(args.cairn, args.mb, args.runs, only, args.agentsview):
        mb, cpu = m["bytes"] / 1e6, m["cpu"]
        if not args.agentsview:
            print(f"| {m['agent']} | {mb:.1f} | {m['files']} | {m['records']} | {m['wall']:.2f} | {cpu:.2f} | "
                  f"{mb / cpu:.2f} | {m['records'] / cpu:.0f} | {m['load']:.1f} |", flush=True)
            continue
        row = f"| {m['agent']} | {mb:.1f} | {m['files']} | {m['records']} | {cpu:.2f} | {mb / cpu:.2f} | {m['records'] / cpu:.0f} | "
        a = m["agentsview"]
        if a:
            row += (f"{a['sessions']} | {a['messages']} | {a['wall']:.2f} | {a['cpu']:.2f} | {mb / a['cpu']:.2f} | "
                    f"{a['rss_mb']:.0f} | ")
        else:
            row += "not read | | | | | | "
        print(row + f"{m['load']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
