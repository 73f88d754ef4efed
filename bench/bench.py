#!/usr/bin/env python3
"""`make bench`: Cairn side by side with AgentsView, and Cairn against the budgets of PRODUCT.md §6.

Run through scripts/bench.sh (it builds the release binaries first). Steps, in order:

  corpora      generate the seeded corpora once into the cache dir (bench/cache, git-ignored)
  agentsview   install agentsview from PyPI into a private virtualenv in the cache dir
  ingest       cold ingest, both tools, alternating runs: 100 MB, 25k sessions, 1 GB (peak RSS)
  incremental  re-sync after appending one turn to 1% of the files (100 MB corpus), both tools
  agents       cold ingest per agent (bench/per_agent.py): each agent's real fixtures copied to
               about --agents-mb MB in its own layout, both tools where AgentsView reads that agent;
               CPU a record and a byte against Claude's, and a database source's 2× bound (issue 16);
               about 35 min on 2 cores, most of it AgentsView's on folders of many small files
  search       full-text search p50/p95 over the same queries: Cairn in process and through its
               CLI, AgentsView through its running server (its search needs one)
  skim         skim of the branch 500 sessions of the 1 GB corpus committed on
  recall       Recall lexical query over 100k entries (recall-bench)
  embed        the built-in embedding model over 10k Recall entries, then hybrid / vector /
               lexical Recall queries over them, the query embedding uncached and cached
               (embed-bench; fetches the model with scripts/fetch-model.sh)
  hook         `cairn hook` after one appended turn, transcripts of 10 KB … 30 MB
  memory       `cairn hook` on a SessionStart payload (the brief of trusted Recall entries) over the
               kept ingest archive (1 GB when there) holding the recall step's 100k entries
  idle         idle CPU and RSS over 60 s of the watching processes: `agentsview serve` and, when
               a built cairn-desktop exists, the desktop app under Xvfb
  team         the team archive on a throwaway PostgreSQL (scripts/with-postgres.sh, started for
               the step): first push of the kept 1 GB archive (`--team-corpus` scales it), an
               incremental push of 1% new sessions, team search p50/p95, skim of a PR across 10
               simulated teammates, and the server's bytes per row and index sizes

Every figure is stored in bench/cache/results.json with the 1-minute load average at the time it
was taken; bench/RESULTS.md is written from that file after every step. `--only STEP[,STEP]`
runs some steps (the others keep their last figures). Reproducible: same seed (BENCH_SEED,
default 7), same fixtures, same corpora.
"""
import argparse
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("CAIRN_BENCH_CACHE", ROOT / "bench" / "cache"))
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
# BENCH_PROFILE=debug runs the debug binaries, for a quick look at a harness only: every figure
# it writes is marked as such, and none of them stands for Cairn's speed.
PROFILE = os.environ.get("BENCH_PROFILE", "release")
CAIRN = TARGET / PROFILE / "cairn"
GEN = TARGET / PROFILE / "cairn-bench"
RECALL = TARGET / PROFILE / "recall-bench"
EMBED = TARGET / PROFILE / "embed-bench"
AV_VERSION = os.environ.get("AGENTSVIEW_VERSION", "0.46.1")
SEED = int(os.environ.get("BENCH_SEED", "7"))
RESULTS_JSON = CACHE / "results.json"
RESULTS_MD = ROOT / "bench" / "RESULTS.md"
SKIM_BRANCH = "feature/skim-target"
# About one turn of the real sessions (their mean is ~190 KB, the median far less).
HOOK_TURN_BYTES = 100_000

# name: (megabytes, sessions, sessions committing on SKIM_BRANCH)
CORPORA = {
    "100mb": (100, 200, 0),
    "25k": (500, 25_000, 0),
    "1gb": (1000, 2_000, 500),
}
STEPS = ["corpora", "agentsview", "ingest", "incremental", "agents", "search", "skim", "recall", "embed", "hook", "memory", "idle",
         "team"]


def say(*args):
    print("bench:", *args, file=sys.stderr, flush=True)


def load():
    return round(os.getloadavg()[0], 2)


# ---- results ----------------------------------------------------------------------------------

def read_results():
    try:
        return json.loads(RESULTS_JSON.read_text())
    except (OSError, ValueError):
        return {}


def store(key, value):
    r = read_results()
    r[key] = value
    r["machine"] = machine()
    RESULTS_JSON.parent.mkdir(parents=True, exist_ok=True)
    RESULTS_JSON.write_text(json.dumps(r, indent=1))
    write_report(r)


def machine():
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = 0
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = int(line.split()[1]) // 1024
    except OSError:
        pass
    os_name = platform.system()
    try:
        for line in open("/etc/os-release"):
            if line.startswith("PRETTY_NAME="):
                os_name = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_mb": mem,
        "os": f"{os_name}, kernel {platform.release()}",
        "rustc": rustc,
        "agentsview": AV_VERSION,
        "seed": SEED,
    }


# ---- processes --------------------------------------------------------------------------------

def run_wait4(cmd, env, stdin=None, cwd=None, check=True):
    """Wall seconds, CPU seconds (user + system, from wait4's rusage of that child) and peak RSS in
    MB of one command, with its stdout and stderr."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out_f, tempfile.TemporaryFile() as err_f, tempfile.TemporaryFile() as in_f:
        if stdin is not None:
            in_f.write(stdin.encode())
            in_f.seek(0)
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=in_f if stdin is not None else subprocess.DEVNULL,
                                stdout=out_f, stderr=err_f)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        out_f.seek(0)
        err_f.seek(0)
        out = out_f.read().decode(errors="replace")
        err = err_f.read().decode(errors="replace")
    if check and proc.returncode != 0:
        raise SystemExit(f"{cmd[0]} {' '.join(cmd[1:3])} failed ({proc.returncode}): {err[-2000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024,
            "out": out, "err": err}


def base_env(home):
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "AGENTSVIEW_NO_DAEMON": "1",
        "NO_COLOR": "1",
    }


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def pct(xs, p):
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, round((len(s) - 1) * p))]


# ---- corpora and tools ------------------------------------------------------------------------

def corpus(name, spec=None):
    mb, sessions, related = spec or CORPORA[name]
    path = CACHE / f"corpus-{name}"
    spec = path / "corpus.json"
    if spec.exists():
        s = json.loads(spec.read_text())["spec"]
        if (s["seed"], s["sessions"], s["bytes"], s["related"]) == (SEED, sessions, mb * 1_000_000, related):
            return path
        say(f"{path} was built with another spec; building it again")
    shutil.rmtree(path, ignore_errors=True)
    tmp = CACHE / f"corpus-{name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    say(f"generating corpus {name}: {mb} MB, {sessions} sessions (seed {SEED})")
    r = run_wait4([str(GEN), "corpus", "--out", str(tmp), "--mb", str(mb), "--sessions", str(sessions),
                   "--related", str(related), "--seed", str(SEED)], dict(os.environ))
    tmp.rename(path)
    say(r["out"].strip())
    return path


def corpus_info(name):
    p = corpus(name) / "corpus.json"
    return json.loads(p.read_text())


def agentsview():
    venv = CACHE / "agentsview-venv"
    exe = venv / "bin" / "agentsview"
    marker = venv / f".installed-{AV_VERSION}"
    if not marker.exists():
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        # AGENTSVIEW_WHEEL: install from a downloaded wheel instead of PyPI (same version).
        source = os.environ.get("AGENTSVIEW_WHEEL") or f"agentsview=={AV_VERSION}"
        subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", source], check=True)
        marker.touch()
    # The PyPI package is a thin Python launcher that execs a bundled Go binary: time the binary.
    binary = next((venv / "lib").glob("python3*/site-packages/agentsview/bin/agentsview"), None)
    if binary is None:
        return exe
    binary.chmod(0o755)
    return binary


def sync_env(tool, corpus_dir, work):
    env = base_env(work / "home")
    (work / "home").mkdir(parents=True, exist_ok=True)
    env["CLAUDE_PROJECTS_DIR"] = str(corpus_dir / "claude")
    env["CODEX_SESSIONS_DIR"] = str(corpus_dir / "codex")
    env["CAIRN_DATA_DIR"] = str(work / "cairn")
    return env


def sync_cmd(tool, av):
    return [str(CAIRN), "--json", "sync"] if tool == "cairn" else [str(av), "sync"]


def sessions_seen(tool, out):
    """How many sessions the sync reported (to show both did the same work)."""
    try:
        if tool == "cairn":
            d = json.loads(out)
            return d.get("sessions_added", 0) + d.get("sessions_updated", 0)
        for line in out.splitlines():
            if line.startswith("Database:"):
                return int(line.split()[1])
    except (ValueError, IndexError):
        pass
    return None


# ---- steps ------------------------------------------------------------------------------------

def step_corpora(args):
    info = {}
    for name in CORPORA:
        d = corpus_info(name)
        info[name] = {"spec": d["spec"], "stats": d["stats"]}
    describe = run_wait4([str(GEN), "describe"], dict(os.environ))["out"]
    info["model"] = json.loads(describe)["model"]
    store("corpora", info)


def step_agentsview(args):
    av = agentsview()
    v = subprocess.run([str(av), "version"], capture_output=True, text=True, env=base_env(CACHE))
    store("agentsview", {"path": str(av), "version": (v.stdout or v.stderr).strip().splitlines()[:1]})


def ingest(name, runs, keep, tools=("cairn", "agentsview"), previous=None):
    av = agentsview()
    src = corpus(name)
    rows = {"cairn": [], "agentsview": []}
    # `--tools` reruns one tool (after a fix): the other keeps its last figures.
    for tool in rows:
        if tool not in tools and previous:
            rows[tool] = previous.get("runs", {}).get(tool, [])
    for i in range(runs):
        order = ["cairn", "agentsview"] if i % 2 == 0 else ["agentsview", "cairn"]
        for tool in [t for t in order if t in tools]:
            work = CACHE / "work" / f"ingest-{name}-{tool}"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            env = sync_env(tool, src, work)
            la = load()
            r = run_wait4(sync_cmd(tool, av), env)
            row = {"wall": r["wall"], "cpu": r["cpu"], "rss_mb": r["rss_mb"], "load": la,
                   "sessions": sessions_seen(tool, r["out"])}
            if len(tools) < 2:
                row["alone"] = True  # not alternated with the other tool: no ratio claim
            rows[tool].append(row)
            say(f"ingest {name} run {i + 1} {tool:<10} {r['wall']:7.2f} s wall {r['cpu']:7.2f} s CPU "
                f"{r['rss_mb']:6.0f} MB  load {la}  sessions {row['sessions']}")
            if keep and i == runs - 1:
                dest = CACHE / f"data-{name}-{tool}"
                shutil.rmtree(dest, ignore_errors=True)
                work.rename(dest)
            else:
                shutil.rmtree(work, ignore_errors=True)
    info = corpus_info(name)
    return {"corpus": name, "bytes": info["stats"]["bytes"], "files": info["stats"]["files"],
            "runs": rows}


def step_ingest(args):
    r = read_results().get("ingest", {})
    for name, runs, keep in [("100mb", args.runs, True), ("25k", args.runs_large, False),
                             ("1gb", args.runs_large, True)]:
        if args.corpus and name not in args.corpus.split(","):
            continue
        r[name] = ingest(name, runs, keep, args.tools.split(","), r.get(name))
        store("ingest", r)


def step_incremental(args):
    av = agentsview()
    src = corpus("100mb")
    rows = {"cairn": [], "agentsview": []}
    for i in range(args.runs):
        order = ["cairn", "agentsview"] if i % 2 == 0 else ["agentsview", "cairn"]
        for tool in order:
            work = CACHE / "work" / f"incremental-{tool}"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            copy = work / "corpus"
            shutil.copytree(src, copy)
            env = sync_env(tool, copy, work)
            run_wait4(sync_cmd(tool, av), env)
            la = load()
            nochange = run_wait4(sync_cmd(tool, av), env)
            appended = json.loads(run_wait4([str(GEN), "append", "--corpus", str(copy), "--fraction", "0.01",
                                             "--seed", str(SEED + i)], dict(os.environ))["out"])
            r = run_wait4(sync_cmd(tool, av), env)
            rows[tool].append({"wall": r["wall"], "cpu": r["cpu"], "rss_mb": r["rss_mb"], "load": la,
                               "files": appended["files"], "bytes": appended["bytes"],
                               "nochange_wall": nochange["wall"], "nochange_cpu": nochange["cpu"]})
            say(f"incremental run {i + 1} {tool:<10} {r['wall']:6.2f} s wall {r['cpu']:6.2f} s CPU "
                f"(no change: {nochange['wall']:.2f} s)  load {la}")
            shutil.rmtree(work, ignore_errors=True)
    store("incremental", {"corpus": "100mb", "runs": rows})


def step_agents(args):
    sys.path.insert(0, str(ROOT / "bench"))
    import per_agent
    av = str(agentsview())
    rows = []
    for m in per_agent.measure(str(CAIRN), args.agents_mb, args.agents_runs, agentsview=av):
        a = m["agentsview"]
        say(f"{m['agent']}: {m['records']} records, {m['bytes'] / 1e6:.1f} MB in {m['cpu']:.2f} s CPU"
            + (f"; agentsview {a['cpu']:.2f} s CPU" if a else "; agentsview does not read it"))
        rows.append(m)
    store("agents", {"profile": PROFILE, "mb": args.agents_mb, "runs": args.agents_runs, "rows": rows})


def queries(n):
    out = run_wait4([str(GEN), "queries", "--n", str(n), "--seed", str(SEED)], dict(os.environ))["out"]
    return [q for q in out.splitlines() if q.strip()]


class Server:
    """`agentsview serve` on a data dir, stopped on exit."""

    def __init__(self, av, home, corpus_dir, sync, port):
        self.port = port
        env = base_env(home)
        env.pop("AGENTSVIEW_NO_DAEMON")
        env["CLAUDE_PROJECTS_DIR"] = str(corpus_dir / "claude")
        env["CODEX_SESSIONS_DIR"] = str(corpus_dir / "codex")
        cmd = [str(av), "serve", "--no-browser", "--no-update-check", "--port", str(port)]
        if not sync:
            cmd.append("--no-sync")
        self.log = open(home / "serve.log", "w")
        self.proc = subprocess.Popen(cmd, env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.time() + 180
        while time.time() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/search?q=x&limit=1", timeout=5).read()
                return
            except OSError:
                if self.proc.poll() is not None:
                    raise SystemExit(f"agentsview serve exited: see {home / 'serve.log'}")
                time.sleep(0.5)
        raise SystemExit("agentsview serve did not answer within 180 s")

    def get(self, path):
        return urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=60).read()

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()


def kept(tool, name=None):
    """The archive the last ingest run of `name` left (default: the 1 GB one, else the 100 MB one)."""
    for n in ([name] if name else ["1gb", "100mb"]):
        d = CACHE / f"data-{n}-{tool}"
        if d.exists():
            return d
    raise SystemExit(f"no kept {tool} archive: run the ingest step first (bench.py --only ingest)")


def kept_corpus():
    """The corpus the search step runs over: the one both tools' kept archives come from."""
    for n in ("1gb", "100mb"):
        if (CACHE / f"data-{n}-cairn").exists() and (CACHE / f"data-{n}-agentsview").exists():
            return n
    raise SystemExit("no kept archives: run the ingest step first (bench.py --only ingest)")


def step_search(args):
    av = agentsview()
    qs = queries(args.queries)
    name = kept_corpus()
    cairn_data = kept("cairn", name) / "cairn"
    av_home = kept("agentsview", name) / "home"
    # Cairn in process (what the desktop's search command runs).
    inproc = json.loads(run_wait4([str(GEN), "fts", "--data", str(cairn_data), "--queries", str(len(qs)),
                                   "--seed", str(SEED)], dict(os.environ))["out"])
    inproc["load"] = load()
    # AgentsView through its server (its search needs one), Cairn through its CLI, alternating.
    server = Server(av, av_home, corpus(name), sync=False, port=args.port)
    rows = {"cairn_cli": [], "agentsview_http": []}
    hits = {"cairn_cli": 0, "agentsview_http": 0}
    la = load()
    try:
        for q in qs[:20]:  # warm both
            server.get("/api/v1/search?" + urllib.parse.urlencode({"q": q, "limit": 20}))
        env = base_env(CACHE)
        for i, q in enumerate(qs):
            for tool in (["cairn_cli", "agentsview_http"] if i % 2 == 0 else ["agentsview_http", "cairn_cli"]):
                t = time.perf_counter()
                if tool == "cairn_cli":
                    out = run_wait4([str(CAIRN), "--data-dir", str(cairn_data), "--json", "search", q,
                                     "--limit", "20"], env)["out"]
                    n = len(json.loads(out))
                else:
                    body = server.get("/api/v1/search?" + urllib.parse.urlencode({"q": q, "limit": 20}))
                    n = len(json.loads(body).get("results") or [])
                rows[tool].append((time.perf_counter() - t) * 1000)
                hits[tool] += int(n > 0)
    finally:
        server.stop()
    store("search", {
        "corpus": name,
        "queries": len(qs),
        "cairn_inprocess": inproc,
        "load": la,
        "cairn_cli": {"p50_ms": pct(rows["cairn_cli"], .5), "p95_ms": pct(rows["cairn_cli"], .95),
                      "with_hits": hits["cairn_cli"]},
        "agentsview_http": {"p50_ms": pct(rows["agentsview_http"], .5),
                            "p95_ms": pct(rows["agentsview_http"], .95),
                            "with_hits": hits["agentsview_http"]},
    })


def step_skim(args):
    r = json.loads(run_wait4([str(GEN), "skim", "--data", str(kept("cairn") / "cairn"), "--branch", SKIM_BRANCH,
                              "--runs", "30"], dict(os.environ))["out"])
    r["load"] = load()
    store("skim", r)


def step_recall(args):
    out = run_wait4([str(RECALL), "--entries", "100000", "--queries", "300", "--cache", str(CACHE)],
                    dict(os.environ), cwd=ROOT)["out"]
    doc = json.loads(out.strip().splitlines()[-1])
    doc["load"] = load()
    store("recall", doc)


def step_memory(args):
    """The SessionStart hook as an agent runs it: a fresh `cairn hook` process per session start,
    the payload on stdin, in a repository whose project holds ~1 200 trusted entries of the 100k."""
    import sqlite3
    recall_db = CACHE / "recall-100000.db"
    if not recall_db.exists():
        step_recall(args)
    work = CACHE / "work" / "memory"
    shutil.rmtree(work, ignore_errors=True)
    (work / "data").mkdir(parents=True)
    try:
        source = kept("cairn")
        shutil.copy2(source / "cairn" / "cairn.db", work / "data" / "cairn.db")
        archive = source.name
    except SystemExit:
        archive = "empty archive"
    env = base_env(work)
    env["CAIRN_DATA_DIR"] = str(work / "data")
    run_wait4([str(CAIRN), "sessions", "--limit", "1"], env)  # creates or migrates the archive
    db = sqlite3.connect(work / "data" / "cairn.db")
    db.execute("ATTACH ? AS r", (str(recall_db),))
    db.execute("INSERT OR IGNORE INTO recall_entries SELECT * FROM r.recall_entries")
    db.commit()
    trusted = db.execute("SELECT COUNT(*) FROM recall_entries WHERE project = 'project3' AND "
                         "review_state = 'human_reviewed' AND status = 'accepted'").fetchone()[0]
    db.close()
    repo = work / "project3"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    payload = json.dumps({"session_id": "bench", "transcript_path": None, "cwd": str(repo),
                          "hook_event_name": "SessionStart", "source": "startup"})
    walls, cpus, out = [], [], ""
    for i in range(args.hook_iters * 3 + 2):
        r = run_wait4([str(CAIRN), "hook", "--agent", "claude"], env, stdin=payload, cwd=str(repo))
        out = out or r["out"]
        if i >= 2:
            walls.append(r["wall"] * 1000)
            cpus.append(r["cpu"] * 1000)
    if "additionalContext" not in out:
        raise SystemExit(f"the SessionStart hook printed no brief: {out[:500]}")
    doc = {"archive": archive, "entries": 100_000, "trusted_in_project": trusted,
           "brief_bytes": len(json.loads(out)["hookSpecificOutput"]["additionalContext"]),
           "runs": len(walls), "p50_ms": pct(walls, .5), "p95_ms": pct(walls, .95),
           "cpu_p50_ms": pct(cpus, .5), "cpu_p95_ms": pct(cpus, .95), "load": load()}
    say(f"session start brief: p50 {doc['p50_ms']:.1f} ms, p95 {doc['p95_ms']:.1f} ms ({archive})")
    store("memory", doc)


def step_embed(args):
    subprocess.run(["bash", str(ROOT / "scripts" / "fetch-model.sh")], check=True, cwd=ROOT)
    out = run_wait4([str(EMBED), "--entries", "10000", "--queries", "200", "--cache", str(CACHE), "--reembed"],
                    dict(os.environ), cwd=ROOT)["out"]
    doc = {"load": load()}
    for line in out.splitlines():
        if line.startswith("{"):
            j = json.loads(line)
            doc[j.pop("bench")] = j
    store("embed", doc)


def git(repo, *a, env=None):
    subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True, env=env)


def hook_repo():
    """A repository of 10,000 files and 50 branches, with a few dirty files (built once)."""
    repo = CACHE / "hook-repo"
    if (repo / ".done").exists():
        return repo
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir(parents=True)
    env = dict(os.environ, GIT_AUTHOR_NAME="Bench", GIT_AUTHOR_EMAIL="bench@cairn.invalid",
               GIT_COMMITTER_NAME="Bench", GIT_COMMITTER_EMAIL="bench@cairn.invalid")
    git(repo, "init", "-q", "-b", "main", env=env)
    for i in range(10_000):
        d = repo / "src" / f"m{i // 100:03d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i:05d}.rs").write_text(f"// file {i}\npub fn f{i}() -> u32 {{ {i} }}\n")
    git(repo, "add", "-A", env=env)
    git(repo, "commit", "-q", "-m", "ten thousand files", env=env)
    for b in range(50):
        git(repo, "checkout", "-q", "-b", f"feature/b{b:02d}", "main", env=env)
        (repo / "src" / "m000" / f"f{b:05d}.rs").write_text(f"// changed on branch {b}\n")
        git(repo, "commit", "-q", "-am", f"branch {b}", env=env)
    git(repo, "checkout", "-q", "main", env=env)
    for i in range(5):
        (repo / "src" / "m001" / f"f{100 + i:05d}.rs").write_text("// dirty\n")
    for i in range(3):
        (repo / f"untracked{i}.txt").write_text("new\n")
    (repo / ".done").touch()
    return repo


def step_hook(args):
    repo = hook_repo()
    # A cwd outside every repository (the cache dir may sit inside the Cairn checkout).
    plain = Path(tempfile.mkdtemp(prefix="cairn-bench-norepo-"))
    sizes = [10_000, 100_000, 1_000_000, 3_000_000, 10_000_000, 30_000_000]
    cases = [(s, repo, "git repo, 10k files, 50 branches") for s in sizes] + [(3_000_000, plain, "no repository")]
    rows = []
    for size, cwd, where in cases:
        work = CACHE / "work" / "hook"
        shutil.rmtree(work, ignore_errors=True)
        projects = work / "projects"
        projects.mkdir(parents=True)
        made = json.loads(run_wait4([str(GEN), "session", "--projects", str(projects), "--bytes", str(size),
                                     "--cwd", str(cwd), "--seed", str(SEED + size)], dict(os.environ))["out"])
        path = made["path"]
        env = base_env(work / "home")
        (work / "home").mkdir()
        env["CLAUDE_PROJECTS_DIR"] = str(projects)
        env["CAIRN_DATA_DIR"] = str(work / "data")
        payload = json.dumps({"session_id": Path(path).stem, "transcript_path": path, "cwd": str(cwd),
                              "hook_event_name": "Stop"})
        # The history is captured the way a live session's is: a hook after every turn (the
        # transcript is fed back in pieces of about one real turn), so the archive holds as many
        # captures and git snapshots as it would.
        data = Path(path).read_bytes()
        Path(path).write_bytes(b"")
        pos, captures = 0, 0
        while pos < len(data):
            end = data.find(b"\n", pos + HOOK_TURN_BYTES)
            end = len(data) if end < 0 else end + 1
            with open(path, "ab") as f:
                f.write(data[pos:end])
            run_wait4([str(CAIRN), "hook", "--agent", "claude"], env, stdin=payload, cwd=str(cwd))
            pos, captures = end, captures + 1
        walls, cpus = [], []
        la = load()
        for i in range(args.hook_iters + 2):
            run_wait4([str(GEN), "append-file", "--file", path, "--seed", str(SEED * 1000 + i)], dict(os.environ))
            r = run_wait4([str(CAIRN), "hook", "--agent", "claude"], env, stdin=payload, cwd=str(cwd))
            if i >= 2:  # the first two warm the page cache
                walls.append(r["wall"] * 1000)
                cpus.append(r["cpu"] * 1000)
        size_now = os.path.getsize(path)
        rows.append({"bytes": made["bytes"], "final_bytes": size_now, "where": where, "load": la,
                     "prior_captures": captures,
                     "p50_ms": pct(walls, .5), "p95_ms": pct(walls, .95),
                     "cpu_p50_ms": pct(cpus, .5), "cpu_p95_ms": pct(cpus, .95), "iters": len(walls)})
        say(f"hook {made['bytes'] / 1e6:7.2f} MB ({where}): p50 {pct(walls, .5):6.1f} ms, "
            f"p95 {pct(walls, .95):6.1f} ms wall; CPU p50 {pct(cpus, .5):6.1f} ms  load {la}")
        shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(plain, ignore_errors=True)
    store("hook", rows)


def tree_pids(pid):
    pids, i = [pid], 0
    while i < len(pids):
        try:
            out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pids[i])], capture_output=True, text=True).stdout
            pids += [int(p) for p in out.split()]
        except (OSError, ValueError):
            pass
        i += 1
    return pids


def cpu_ticks(pid):
    try:
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return int(f[11]) + int(f[12])
    except (OSError, IndexError, ValueError):
        return 0


def status_kb(pid, key):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def measure_idle(pid, seconds):
    hz = os.sysconf("SC_CLK_TCK")
    pids = tree_pids(pid)
    before = sum(cpu_ticks(p) for p in pids)
    la = load()
    time.sleep(seconds)
    pids = tree_pids(pid)
    after = sum(cpu_ticks(p) for p in pids)
    return {"cpu_pct": 100 * (after - before) / hz / seconds, "seconds": seconds, "load": la,
            "rss_mb": sum(status_kb(p, "VmRSS") for p in pids) / 1024,
            "main_rss_mb": status_kb(pid, "VmRSS") / 1024, "main_hwm_mb": status_kb(pid, "VmHWM") / 1024,
            "processes": len(pids)}


def settle(pid, quiet_pct=5.0, window=5, limit=300):
    """Wait until the process tree uses less than quiet_pct of a core over `window` seconds."""
    hz = os.sysconf("SC_CLK_TCK")
    start = time.time()
    while time.time() - start < limit:
        pids = tree_pids(pid)
        before = sum(cpu_ticks(p) for p in pids)
        time.sleep(window)
        after = sum(cpu_ticks(p) for p in tree_pids(pid))
        if 100 * (after - before) / hz / window < quiet_pct:
            break
    return time.time() - start


def desktop_binary():
    explicit = os.environ.get("CAIRN_DESKTOP")
    if explicit:
        return Path(explicit) if Path(explicit).exists() else None
    p = TARGET / "release" / "cairn-desktop"
    return p if p.exists() else None


def step_idle(args):
    av = agentsview()
    out = {}
    name = kept_corpus()
    server = Server(av, kept("agentsview", name) / "home", corpus(name), sync=True, port=args.port)
    try:
        settled = settle(server.proc.pid)
        out["agentsview"] = measure_idle(server.proc.pid, args.idle_seconds)
        out["agentsview"]["settle_s"] = settled
    finally:
        server.stop()
    say(f"idle agentsview serve: {out['agentsview']['cpu_pct']:.2f}% CPU, {out['agentsview']['rss_mb']:.0f} MB")
    app = desktop_binary()
    if app is None:
        out["cairn_desktop"] = {"not_measured": "no built cairn-desktop (target/release/cairn-desktop or $CAIRN_DESKTOP)"}
    elif shutil.which("xvfb-run") is None and not os.environ.get("DISPLAY"):
        out["cairn_desktop"] = {"not_measured": "no display and no xvfb-run"}
    else:
        home = CACHE / "work" / "desktop-home"
        home.mkdir(parents=True, exist_ok=True)
        env = base_env(home)
        src = corpus(name)
        # A fresh data dir the app fills by its own initial sync (a desktop built elsewhere, e.g.
        # CAIRN_DESKTOP from another checkout, may write another schema version than this tree).
        fresh = home / "data"
        shutil.rmtree(fresh, ignore_errors=True)
        env.update({"CAIRN_DATA_DIR": str(fresh), "CLAUDE_PROJECTS_DIR": str(src / "claude"),
                    "CODEX_SESSIONS_DIR": str(src / "codex"), "XDG_CACHE_HOME": str(home / ".cache")})
        if os.environ.get("DISPLAY"):
            env["DISPLAY"] = os.environ["DISPLAY"]
            cmd = [str(app)]
        else:
            cmd = ["xvfb-run", "-a", "-s", "-screen 0 1280x800x24", str(app)]
        log = open(home / "desktop.log", "w")
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            time.sleep(5)
            # The app itself (under xvfb-run's shell): the descendant named cairn-desktop.
            pids = tree_pids(proc.pid)
            app_pid = next((p for p in pids if "cairn-desktop" in (open(f"/proc/{p}/comm").read()
                                                                   if os.path.exists(f"/proc/{p}/comm") else "")),
                           proc.pid)
            settled = settle(app_pid)
            out["cairn_desktop"] = measure_idle(app_pid, args.idle_seconds)
            out["cairn_desktop"]["settle_s"] = settled
            out["cairn_desktop"]["binary"] = str(app)
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
            log.close()
    out["corpus"] = name
    store("idle", out)


# ---- report -----------------------------------------------------------------------------------

# ---- the team archive (PostgreSQL) ---------------------------------------------------------------

TEAM_PR = 4242
TEAM_MATES = 10


def psql(url, sql, password=None):
    env = dict(os.environ)
    if password:
        env["PGPASSWORD"] = password
    r = subprocess.run(["psql", url, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"psql failed: {r.stderr.strip()[:2000]}\n{sql[:500]}")
    return r.stdout.strip()


def team_archive(name):
    """A Cairn archive of corpus `name` synced by Cairn alone (the kept ingest one when there)."""
    mb, sessions, related = CORPORA[name]
    if related:
        kept_dir = CACHE / f"data-{name}-cairn"
        if kept_dir.exists():
            return kept_dir / "cairn"
        src = corpus(name)
    else:
        # A corpus without sessions on SKIM_BRANCH has no PR to skim: the same size with a quarter
        # of its sessions committing there, as the 1 GB corpus has.
        src = corpus(f"{name}-related", (mb, sessions, sessions // 4))
    work = CACHE / f"team-data-{name}"
    if not (work / "cairn" / "cairn.db").exists():
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        say(f"team: syncing corpus {src.name} with cairn")
        run_wait4([str(CAIRN), "--json", "sync"], sync_env("cairn", src, work))
    return work / "cairn"


def step_team(args):
    admin = os.environ.get("CAIRN_TEST_PG_ADMIN_URL")
    if not admin:
        # Run this step again beside a throwaway cluster (started and removed by the script).
        cmd = ["bash", str(ROOT / "scripts" / "with-postgres.sh"), sys.executable, str(Path(__file__).resolve()),
               "--only", "team", "--team-corpus", args.team_corpus, "--queries", str(args.queries)]
        subprocess.run(cmd, check=True)
        return
    name = args.team_corpus
    source = team_archive(name)
    base, _ = admin.rsplit("/", 1)
    at = base.rsplit("@", 1)[1]
    db = "cairn_bench"
    psql(admin, f"DROP DATABASE IF EXISTS {db}")
    owner_pw = f"pw-bench-owner-{os.getpid()}"
    psql(admin, "DROP ROLE IF EXISTS team_owner")
    psql(admin, f"CREATE ROLE team_owner LOGIN PASSWORD '{owner_pw}'")
    psql(admin, f"CREATE DATABASE {db} OWNER team_owner")
    admin_db = f"{base}/{db}"
    mates = [(f"mate{i}", f"pw-bench-{i}-{os.getpid()}") for i in range(TEAM_MATES)]
    for role, pw in mates:
        psql(admin, f"DROP ROLE IF EXISTS {role}")
        psql(admin, f"CREATE ROLE {role} LOGIN PASSWORD '{pw}'; GRANT CONNECT ON DATABASE {db} TO {role}")
    me, my_pw = mates[0]
    url = f"postgres://{me}@{at}/{db}"
    work = CACHE / "work" / "team"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    # The database's owner sets the team archive up, as the docs say; teammates only connect.
    (work / "owner").mkdir()
    owner_env = base_env(work / "owner")
    owner_env["PGPASSWORD"] = owner_pw
    owner_env["CAIRN_DATA_DIR"] = str(work / "owner" / "data")
    run_wait4([str(CAIRN), "--json", "team", "init", "--to", f"postgres://team_owner@{at}/{db}"], owner_env)
    # The push writes its cursor into the archive: push from a copy, the kept archive stays as it was.
    data = work / "cairn"
    shutil.copytree(source, data)
    env = base_env(work / "home")
    (work / "home").mkdir()
    env["CAIRN_DATA_DIR"] = str(data)
    env["PGPASSWORD"] = my_pw
    archive_mb = sum(f.stat().st_size for f in data.rglob("*") if f.is_file()) / 1e6

    def push(label):
        la = load()
        r = run_wait4([str(CAIRN), "--json", "team", "push", "--to", url], env)
        rep = json.loads(r["out"])
        rows = rep["sessions_pushed"] + rep["turns_pushed"] + rep["records_pushed"] + rep["links_pushed"]
        say(f"team {label}: {r['wall']:.1f} s wall {r['cpu']:.1f} s CPU {r['rss_mb']:.0f} MB, {rows} rows "
            f"({rows / r['wall']:.0f} rows/s), load {la}")
        return {"wall": r["wall"], "cpu": r["cpu"], "rss_mb": r["rss_mb"], "load": la, "rows": rows,
                "rows_per_s": rows / r["wall"] if r["wall"] else None,
                **{k: rep[k] for k in ("sessions_pushed", "turns_pushed", "records_pushed", "links_pushed",
                                       "sessions_unchanged")}}

    first = push("first push")
    nothing = push("push with nothing changed")
    # 1% new: a small corpus of its own seed (1% of the sessions and bytes), synced into the archive.
    mb, sessions, _ = CORPORA[name]
    extra = CACHE / f"team-extra-{name}"
    if not (extra / "corpus.json").exists():
        shutil.rmtree(extra, ignore_errors=True)
        run_wait4([str(GEN), "corpus", "--out", str(extra), "--mb", str(max(1, mb // 100)), "--sessions",
                   str(max(1, sessions // 100)), "--related", "0", "--seed", str(SEED + 1000)], dict(os.environ))
    sync_env_extra = dict(env)
    sync_env_extra["CLAUDE_PROJECTS_DIR"] = str(extra / "claude")
    sync_env_extra["CODEX_SESSIONS_DIR"] = str(extra / "codex")
    run_wait4([str(CAIRN), "--json", "sync"], sync_env_extra)
    incremental = push("incremental push (1% new)")

    # Sizes on the server, per table and for the records' full-text index.
    def size(sql):
        return int(psql(admin_db, sql) or 0)
    sizes = {}
    for t in ("sessions", "turns", "records", "links"):
        sizes[t] = {"rows": size(f"SELECT count(*) FROM cairn.{t}"),
                    "table_bytes": size(f"SELECT pg_table_size('cairn.{t}')"),
                    "index_bytes": size(f"SELECT pg_indexes_size('cairn.{t}')")}
    sizes["records"]["gin_bytes"] = size("SELECT pg_relation_size('cairn.records_search')")
    sizes["database_bytes"] = size(f"SELECT pg_database_size('{db}')")

    # Team search through the CLI (process start included), the same queries as local search.
    qs = queries(args.queries)
    times, with_hits = [], 0
    la = load()
    for q in qs:
        t = time.perf_counter()
        out = run_wait4([str(CAIRN), "--json", "team", "search", q, "--from", url, "--limit", "20"], env)["out"]
        times.append((time.perf_counter() - t) * 1000)
        with_hits += int(len(json.loads(out)) > 0)
    search = {"queries": len(qs), "p50_ms": pct(times, .5), "p95_ms": pct(times, .95), "with_hits": with_hits,
              "load": la}
    say(f"team search: p50 {search['p50_ms']:.0f} ms p95 {search['p95_ms']:.0f} ms over {len(qs)} queries")

    # 10 teammates: the other nine's copies of the PR's sessions (those linked to SKIM_BRANCH), made
    # on the server as each would push them (same rows, their publisher), and one review link that
    # names the PR and its head branch.
    branch_key = f"ref:refs/heads/{SKIM_BRANCH}"
    keys_sql = (f"SELECT session_key FROM cairn.links WHERE publisher = '{me}' AND target_key = '{branch_key}'")
    pr_sessions = size(f"SELECT count(DISTINCT session_key) FROM ({keys_sql}) k")
    for role, _ in mates[1:]:
        for t in ("sessions", "turns", "records", "links"):
            cols = psql(admin_db, "SELECT string_agg(quote_ident(column_name), ',' ORDER BY ordinal_position) "
                                  "FROM information_schema.columns WHERE table_schema = 'cairn' AND "
                                  f"table_name = '{t}' AND is_generated = 'NEVER' AND column_name <> 'publisher'")
            psql(admin_db, f"INSERT INTO cairn.{t} (publisher, {cols}) SELECT '{role}', {cols} FROM cairn.{t} "
                           f"WHERE publisher = '{me}' AND session_key IN ({keys_sql})")
    first_key = psql(admin_db, f"{keys_sql} ORDER BY session_key LIMIT 1")
    psql(admin_db, "INSERT INTO cairn.links (publisher, session_key, target_kind, target_key, pr_number, evidence, "
                   f"strong, confidence) VALUES ('{me}', '{first_key}', 'review', "
                   f"'pull-request:{branch_key}#{TEAM_PR}', {TEAM_PR}, 'commit_in_pr', true, 1.0)")
    skim_times, seen = [], None
    la = load()
    for _ in range(args.team_skim_runs):
        r = run_wait4([str(CAIRN), "--json", "team", "skim", f"#{TEAM_PR}", "--from", url], env)
        skim_times.append(r["wall"] * 1000)
        doc = json.loads(r["out"])
        seen = {"sessions": len(doc["sessions"]), "publishers": len(doc["publishers"]),
                "publishers_shown": len({s["session"]["publisher"] for s in doc["sessions"]}),
                "matched": doc.get("matched"), "left_out": doc.get("left_out"), "rss_mb": r["rss_mb"]}
    skim = {"runs": len(skim_times), "p50_ms": pct(skim_times, .5), "p95_ms": pct(skim_times, .95),
            "pr_sessions_per_mate": pr_sessions, "load": la, **(seen or {})}
    say(f"team skim of #{TEAM_PR}: {skim.get('sessions')} of {skim.get('matched')} sessions shown, from "
        f"{skim.get('publishers_shown')} of {skim.get('publishers')} teammates, "
        f"p50 {skim['p50_ms']:.0f} ms p95 {skim['p95_ms']:.0f} ms")
    shutil.rmtree(work, ignore_errors=True)
    store("team", {"corpus": name, "profile": PROFILE, "archive_mb": archive_mb, "first": first, "nothing": nothing,
                   "incremental": incremental, "sizes": sizes, "search": search, "skim": skim})


def fmt(x, nd=1):
    if x is None or (isinstance(x, float) and x != x):
        return "–"
    return f"{x:.{nd}f}"


def last_report():
    """What the last RESULTS.md said: its generated sections by name (the lines between their
    markers) and its budget rows by budget. A section or budget whose figures results.json does not
    hold (a step never run here, a cache lost with a machine) keeps what it said, rather than
    vanishing from the report."""
    try:
        text = RESULTS_MD.read_text()
    except OSError:
        return {}, {}
    sections = {m.group(1): m.group(2).split("\n")
                for m in re.finditer(r"<!-- bench:([\w-]+) -->\n(.*?)\n<!-- /bench:\1 -->", text, re.S)}
    budgets = {}
    for line in sections.get("budgets", []):
        if line.startswith("| ") and not line.startswith("| budget |") and not line.startswith("| ---"):
            budgets[line[2:].split(" | ", 1)[0]] = line
    return sections, budgets


def write_report(r):
    m = r.get("machine", {})
    old, old_budgets = last_report()
    kept = []

    def section(name, lines):
        if not lines and name in old:
            kept.append(name)
            lines = old[name]
        while lines and lines[-1] == "":
            lines = lines[:-1]
        return [f"<!-- bench:{name} -->", *lines, f"<!-- /bench:{name} -->", ""] if lines else []

    body = section("budgets", budget_table(r, old_budgets))
    body += section("ingest", ingest_tables(r))
    body += section("incremental", incremental_table(r))
    body += section("search", search_table(r))
    body += section("hook", hook_table(r))
    body += section("idle", idle_table(r))
    body += section("agents", agents_table(r))
    body += section("team", team_table(r))
    body += section("corpora", corpora_section(r))
    about = section("about", [
        "Written by `make bench` (`scripts/bench.sh` → `bench/bench.py`); every figure can be reproduced",
        f"from the seed ({m.get('seed')}) and the fixtures. Raw figures: `bench/cache/results.json`.", "",
        f"Machine: {m.get('cpu')}, {m.get('cores')} cores, {m.get('memory_mb')} MB RAM; {m.get('os')}; "
        f"{m.get('rustc')}; agentsview {m.get('agentsview')} (PyPI wheel, its Go binary timed directly).",
        "The machine is shared: the 1-minute load average when each figure was taken is given next to it",
        "(2 cores: a load above 2 means the tools got only part of a core each). Both tools run on the same",
        "files, one after the other, alternating which goes first; medians are reported."] if m else [])
    kept = [k for k in kept if k != "about"]
    L = ["# Benchmarks: Cairn and AgentsView", ""] + about
    if kept:
        L += textwrap.wrap(
            f"Kept from the last report: the section{'s' if len(kept) > 1 else ''} {', '.join(kept)} and the "
            "budget rows they measure. This machine's `bench/cache/results.json` holds none of their figures: "
            "they come from an earlier run (possibly on another machine) and are replaced when their step runs "
            "again.", 100) + [""]
    L += body
    extra = ROOT / "bench" / "NOTES.md"
    if extra.exists():
        L += ["", extra.read_text().strip(), ""]
    RESULTS_MD.write_text("\n".join(L) + "\n")


def check_notes():
    """RESULTS.md is rewritten as the generated tables followed by NOTES.md: a hand-run section
    written into RESULTS.md alone would be lost at the next `make bench`. None when they agree,
    else what to do."""
    notes = (ROOT / "bench" / "NOTES.md").read_text().strip()
    results = RESULTS_MD.read_text().rstrip()
    if results.endswith(notes):
        return None
    # Name the first heading of RESULTS.md's tail that NOTES.md does not hold.
    headings = [l for l in results.splitlines() if l.startswith("#") and l not in notes.splitlines()]
    start = notes.splitlines()[0] if notes else ""
    after = results.split(start, 1)[-1] if start and start in results else ""
    missing = next((h for h in headings if h in after), None)
    where = f" (first: {missing!r})" if missing else ""
    return (f"bench/RESULTS.md does not end with bench/NOTES.md{where}: `make bench` rewrites RESULTS.md "
            "from its tables and NOTES.md, so a hand-run section must be written in NOTES.md too")


def agent_ratios(rows):
    """Each agent's CPU a record and a byte as multiples of Claude's in the same run."""
    claude = next((x for x in rows if x["agent"] == "claude"), None)
    out = {}
    for x in rows:
        if claude and x["records"] and x["bytes"] and claude["records"] and claude["bytes"]:
            out[x["agent"]] = ((x["cpu"] / x["records"]) / (claude["cpu"] / claude["records"]),
                               (x["cpu"] / x["bytes"]) / (claude["cpu"] / claude["bytes"]))
    return out


def agents_table(r):
    a = r.get("agents")
    if not a:
        return []
    ratios = agent_ratios(a["rows"])
    L = [f"## Cold ingest per agent (about {a['mb']:g} MB of each agent's real fixtures)", ""]
    L += textwrap.wrap(
        f"`bench/per_agent.py` (the `agents` step, {a.get('profile', 'release')} build): each agent's fixtures "
        "copied under new ids, in the agent's own layout, to about the size above; one cold `cairn sync` with "
        f"only that agent's folder set, median of {a['runs']} runs; AgentsView's cold `agentsview sync` of the "
        "same files where it reads that agent, alternating with Cairn. MB counts the corpus's bytes (Crush: its "
        "`parts` column). \"vs Claude\": the agent's CPU a record (a byte) as a multiple of Claude's in this "
        "run; a database source may cost at most 2× a record (issue 16).", 100)
    L += ["", "| agent | MB | files | records | Cairn CPU (s) | MB per CPU-s | records per CPU-s | a record vs Claude "
          "| a byte vs Claude | AgentsView MB per CPU-s | AgentsView CPU ÷ Cairn's | load |",
          "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for x in a["rows"]:
        mb = x["bytes"] / 1e6
        per_record, per_byte = ratios.get(x["agent"], (None, None))
        av = x.get("agentsview")
        L.append(f"| {x['agent']} | {fmt(mb)} | {x['files']} | {x['records']:,} | {fmt(x['cpu'], 2)} | "
                 f"{fmt(mb / x['cpu'], 2)} | {x['records'] / x['cpu']:,.0f} | {fmt(per_record, 2)}× | "
                 f"{fmt(per_byte, 2)}× | " + (f"{fmt(mb / av['cpu'], 2)} | {fmt(av['cpu'] / x['cpu'], 1)}× | "
                                              if av else "does not read it | | ") + f"{fmt(x['load'])} |")
    return L + [""]


def team_table(r):
    t = r.get("team")
    if not t:
        return []
    f, inc, no, sz, se, sk = t["first"], t["incremental"], t["nothing"], t["sizes"], t["search"], t["skim"]
    rec = sz["records"]
    per_row = (rec["table_bytes"]) / rec["rows"] if rec["rows"] else None
    # bytes a record = MB per million records
    idx_per_m = rec["index_bytes"] / rec["rows"] if rec["rows"] else None
    gin_per_m = rec["gin_bytes"] / rec["rows"] if rec["rows"] else None
    L = [f"## The team archive: push, search and skim on a throwaway PostgreSQL ({t['corpus']} corpus, "
         f"{fmt(t['archive_mb'], 0)} MB archive)", "",
         f"`cairn team push` / `team search` / `team skim` ({t.get('profile', 'release')} build) against the cluster of",
         "`scripts/with-postgres.sh` (PostgreSQL on loopback, `fsync=off`: a server's disk would add its own",
         "cost). Rows = sessions + turns + records + links sent.", "",
         "| figure | value | load |", "| --- | --- | --- |",
         f"| first push | {fmt(f['wall'])} s wall, {fmt(f['cpu'])} s CPU, {f['rows']:,} rows "
         f"({fmt(f['rows_per_s'], 0)} rows/s; {f['records_pushed']:,} records, {f['sessions_pushed']:,} sessions), "
         f"peak RSS {fmt(f['rss_mb'], 0)} MB | {f['load']} |",
         f"| push with nothing changed | {fmt(no['wall'], 2)} s ({no['sessions_unchanged']:,} sessions unchanged) | {no['load']} |",
         f"| incremental push, 1% new sessions | {fmt(inc['wall'], 2)} s, {inc['rows']:,} rows "
         f"({inc['sessions_pushed']} sessions), peak RSS {fmt(inc['rss_mb'], 0)} MB | {inc['load']} |",
         f"| team search, {se['queries']} queries (CLI, process start included) | p50 {fmt(se['p50_ms'], 0)} ms, "
         f"p95 {fmt(se['p95_ms'], 0)} ms ({se['with_hits']} with hits) | {se['load']} |",
         f"| skim of PR #{TEAM_PR} across {sk.get('publishers')} teammates ({sk.get('sessions')} sessions; "
         f"{sk['pr_sessions_per_mate']} a teammate) | p50 {fmt(sk['p50_ms'], 0)} ms, p95 {fmt(sk['p95_ms'], 0)} ms "
         f"over {sk['runs']} runs | {sk['load']} |",
         f"| server size | database {fmt(sz['database_bytes'] / 1e6, 0)} MB; records {rec['rows']:,} rows, "
         f"{fmt(per_row, 0)} bytes a row (table with TOAST), indexes {fmt(idx_per_m, 0)} MB "
         f"per million records (of which the full-text GIN {fmt(gin_per_m, 0)} MB) | |",
         ""]
    for name in ("sessions", "turns", "links"):
        x = sz[name]
        L.insert(-1, f"| `{name}` | {x['rows']:,} rows, table {fmt(x['table_bytes'] / 1e6, 1)} MB, indexes "
                     f"{fmt(x['index_bytes'] / 1e6, 1)} MB | |")
    return L


def ingest_medians(r, name):
    runs = r.get("ingest", {}).get(name, {}).get("runs")
    if not runs:
        return None
    out = {}
    for tool in ("cairn", "agentsview"):
        rows = runs.get(tool) or []
        out[tool] = {k: med([x[k] for x in rows]) for k in ("wall", "cpu", "rss_mb", "load")} if rows else None
        if rows:
            out[tool]["n"] = len(rows)
            out[tool]["sessions"] = rows[-1].get("sessions")
            out[tool]["rss_max"] = max(x["rss_mb"] for x in rows)
            out[tool]["alone"] = any(x.get("alone") for x in rows)
    return out


def budget_key(what):
    """A budget row's name with its figures left out, so a row measured over another corpus size
    is still the same budget."""
    return re.sub(r"[0-9][0-9.,]*", "#", what)


def budget_table(r, old=None):
    """The budget rows measured here; a budget not measured here keeps the last report's row
    (`old`: rows by their budget), in the last report's order."""
    old = {budget_key(k): line for k, line in (old or {}).items()}
    new = {}

    def row(what, measured, la, ok):
        key = budget_key(what)
        if ok is None and key in old:
            return
        new[key] = (f"| {what} | {measured} | {fmt(la)} | "
                    f"{'yes' if ok else ('**no**' if ok is not None else '–')} |")

    g = ingest_medians(r, "1gb")
    s = ingest_medians(r, "100mb")
    for name, m in (("100 MB", s), ("1 GB", g)):
        if m and m["cairn"] and m["agentsview"]:
            c, a = m["cairn"], m["agentsview"]
            ratio = a["wall"] / c["wall"]
            alone = c["alone"] or a["alone"]
            row(f"cold ingest {name}: ≥ 5× faster than `agentsview sync` (wall, same machine, same run)",
                f"{ratio:.1f}× wall ({fmt(c['wall'], 2)} s vs {fmt(a['wall'], 2)} s); {a['cpu'] / c['cpu']:.1f}× CPU "
                f"({fmt(c['cpu'], 2)} s vs {fmt(a['cpu'], 2)} s)"
                + (" — not one alternating run (one tool rerun alone after a fix, at another load): "
                   "no verdict" if alone else ""), c["load"], None if alone else ratio >= 5)
    for name, m in (("100 MB", s), ("1 GB", g)):
        if m and m["cairn"]:
            mb = r["ingest"][("100mb" if name == "100 MB" else "1gb")]["bytes"] / 1e6
            per_core = mb / m["cairn"]["cpu"]
            row(f"cold ingest {name}: ≥ 100 MB/s per core", f"{per_core:.0f} MB per CPU-second "
                f"({mb:.0f} MB in {fmt(m['cairn']['cpu'], 2)} s CPU)", m["cairn"]["load"], per_core >= 100)
    h = r.get("hook")
    if h:
        three = next((x for x in h if x["where"].startswith("git") and 2.5e6 < x["bytes"] < 3.5e6), None)
        if three:
            row("hook capture, one appended turn to a 3 MB transcript: p95 ≤ 30 ms",
                f"p95 {fmt(three['p95_ms'])} ms wall (p50 {fmt(three['p50_ms'])}; CPU p95 {fmt(three['cpu_p95_ms'])} ms)",
                three["load"], three["p95_ms"] <= 30)
        g_rows = [x for x in h if x["where"].startswith("git")]
        if len(g_rows) >= 2:
            lo, hi = g_rows[0], g_rows[-1]
            flat = hi["cpu_p50_ms"] <= 1.5 * lo["cpu_p50_ms"] + 5
            row("hook capture independent of transcript length",
                f"CPU p50 {fmt(lo['cpu_p50_ms'])} ms at {lo['bytes'] / 1e3:.0f} KB, {fmt(hi['cpu_p50_ms'])} ms at "
                f"{hi['bytes'] / 1e6:.0f} MB (table below)", hi["load"], flat)
    mem = r.get("memory")
    if mem:
        row("session-start brief (hook): p95 ≤ 30 ms",
            f"p95 {fmt(mem['p95_ms'])} ms wall (p50 {fmt(mem['p50_ms'])}; CPU p95 {fmt(mem['cpu_p95_ms'])} ms; "
            f"{mem['trusted_in_project']} trusted entries in the project, {mem['entries']} in all; {mem['archive']})",
            mem["load"], mem["p95_ms"] <= 30)
    sk = r.get("skim")
    if sk:
        row(f"skim of a branch with {sk.get('sessions')} related sessions: ≤ 50 ms",
            f"p95 {fmt(sk['p95_ms'])} ms (p50 {fmt(sk['p50_ms'])}; {sk.get('turns')} turns)", sk.get("load"),
            sk["p95_ms"] <= 50 and sk.get("sessions", 0) >= 500)
    se = r.get("search")
    if se:
        ip = se["cairn_inprocess"]
        row(f"archive full-text search over {ip['records'] / 1e6:.2f}M records: p95 ≤ 50 ms",
            f"p95 {fmt(ip['p95_ms'])} ms (p50 {fmt(ip['p50_ms'])}), {se['queries']} queries", ip.get("load"),
            ip["p95_ms"] <= 50)
    rc = r.get("recall")
    if rc:
        row(f"Recall lexical query over {rc['entries'] // 1000}k entries: p95 ≤ 10 ms",
            f"p95 {fmt(rc['p95_ms'], 2)} ms (p50 {fmt(rc['p50_ms'], 2)})", rc.get("load"), rc["p95_ms"] <= 10)
    em = r.get("embed")
    if em and "recall_hybrid" in em:
        hy, hc, ee = em["recall_hybrid"], em.get("recall_hybrid_cached", {}), em.get("embed_entries", {})
        text = (f"p95 {fmt(hy['p95_ms'], 1)} ms (p50 {fmt(hy['p50_ms'], 1)}; CPU {fmt(hy.get('cpu_ms_per_query'), 1)} ms "
                f"a query) over {hy['entries']:,} entries, {hy['queries']} queries, each query embedded afresh; "
                f"repeated query (embedding cached): p95 {fmt(hc.get('p95_ms'), 1)} ms. Embedding the "
                f"{ee.get('entries', 0):,} entries: {fmt(ee.get('seconds'), 0)} s wall, "
                f"{fmt(ee.get('cpu_seconds'), 0)} s CPU ({fmt(ee.get('entries_per_s'), 0)} entries/s), `embed-bench`")
        row("Recall hybrid query: ≤ 30 ms", text, em.get("load"), hy["p95_ms"] <= 30)
    else:
        row("Recall hybrid query: ≤ 30 ms", "not measured: run `bench.py --only embed`", None, None)
    ag = r.get("agents")
    worst = None
    if ag:
        ratios = agent_ratios(ag["rows"])
        dbs = sorted((ratios[x["agent"]][0], x["agent"], x["load"]) for x in ag["rows"]
                     if x["database"] and x["agent"] in ratios)
        worst = dbs[-1] if dbs else None
    if worst:
        others = ", ".join(f"{name} {fmt(x, 2)}×" for x, name, _ in reversed(dbs[:-1]))
        row("a database source: at most 2× Claude's CPU a record (issue 16)",
            f"{worst[1]} {fmt(worst[0], 2)}× (the slowest{'; then ' + others if others else ''}; "
            "\"Cold ingest per agent\" below)", worst[2], worst[0] <= 2)
    else:
        row("a database source: at most 2× Claude's CPU a record (issue 16)",
            "not measured: run `bench.py --only agents`", None, None)
    if g and g["cairn"]:
        row("peak RSS during cold ingest (1 GB): ≤ 300 MB", f"{fmt(g['cairn']['rss_max'], 0)} MB (max of "
            f"{g['cairn']['n']} runs; agentsview {fmt(g['agentsview']['rss_max'], 0) if g['agentsview'] else '–'} MB)",
            g["cairn"]["load"], g["cairn"]["rss_max"] <= 300)
    idle = r.get("idle", {})
    d = idle.get("cairn_desktop")
    if d and "cpu_pct" in d:
        row("desktop idle: RSS ≤ 150 MB, CPU ≈ 0", f"{fmt(d['main_rss_mb'], 0)} MB app "
            f"({fmt(d['rss_mb'], 0)} MB with WebKit processes), {fmt(d['cpu_pct'], 2)}% of a core over "
            f"{d['seconds']} s", d["load"], d["main_rss_mb"] <= 150 and d["cpu_pct"] < 1)
    elif d:
        row("desktop idle: RSS ≤ 150 MB, CPU ≈ 0", f"not measured: {d['not_measured']}", None, None)
    row("desktop cold start to an interactive window: ≤ 1 s", "measured by `scripts/measure-startup.sh` "
        "(`make measure-startup`), not here: see \"Desktop start-up\" below", None, None)
    order = list(old) + [k for k in new if k not in old]
    return (["## Budgets (PRODUCT.md §6)", "", "| budget | measured | load | met |", "| --- | --- | ---: | --- |"]
            + [new.get(k) or old[k] for k in order] + [""])


def ingest_tables(r):
    L = []
    for name, title in (("100mb", "100 MB"), ("25k", "25,000 sessions"), ("1gb", "1 GB")):
        m = ingest_medians(r, name)
        if not m:
            continue
        info = r["ingest"][name]
        L += [f"## Cold ingest: {title} ({info['bytes'] / 1e6:.0f} MB in {info['files']} files)", "",
              "| tool | runs | wall (s) | CPU (s) | MB per CPU-second | peak RSS (MB) | sessions | load |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for tool in ("cairn", "agentsview"):
            t = m[tool]
            if t:
                L.append(f"| {tool} | {t['n']} | {fmt(t['wall'], 2)} | {fmt(t['cpu'], 2)} | "
                         f"{info['bytes'] / 1e6 / t['cpu']:.0f} | {fmt(t['rss_max'], 0)} | {t['sessions']} | "
                         f"{fmt(t['load'])} |")
        if m["cairn"] and m["agentsview"]:
            L += ["", f"Ratio (agentsview / cairn): **{m['agentsview']['wall'] / m['cairn']['wall']:.1f}×** wall, "
                      f"**{m['agentsview']['cpu'] / m['cairn']['cpu']:.1f}×** CPU."]
        L.append("")
    return L


def incremental_table(r):
    inc = r.get("incremental")
    if not inc:
        return []
    L = ["## Incremental re-sync (100 MB corpus, one turn appended to 1% of the transcripts)", "",
         "| tool | runs | wall (s) | CPU (s) | peak RSS (MB) | re-sync with nothing new: wall (s) | load |",
         "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    meds = {}
    for tool in ("cairn", "agentsview"):
        rows = inc["runs"].get(tool) or []
        if not rows:
            continue
        meds[tool] = {k: med([x[k] for x in rows]) for k in ("wall", "cpu", "rss_mb", "nochange_wall", "load")}
        t = meds[tool]
        L.append(f"| {tool} | {len(rows)} | {fmt(t['wall'], 2)} | {fmt(t['cpu'], 2)} | {fmt(t['rss_mb'], 0)} | "
                 f"{fmt(t['nochange_wall'], 2)} | {fmt(t['load'])} |")
    if len(meds) == 2:
        L += ["", f"Ratio: **{meds['agentsview']['wall'] / meds['cairn']['wall']:.1f}×** wall, "
                  f"**{meds['agentsview']['cpu'] / meds['cairn']['cpu']:.1f}×** CPU "
                  f"(files appended to: {inc['runs']['cairn'][0]['files']})."]
    return L + [""]


def search_table(r):
    se = r.get("search")
    if not se:
        return []
    ip = se["cairn_inprocess"]
    title = {"1gb": "1 GB", "100mb": "100 MB"}.get(se.get("corpus", "1gb"), se.get("corpus"))
    return [f"## Full-text search ({title} corpus, the same queries)", "",
            f"{se['queries']} queries of one to three words (`cairn-bench queries`), limit 20, ranked by BM25.",
            "", "| how | p50 (ms) | p95 (ms) | queries with hits | load |", "| --- | ---: | ---: | ---: | ---: |",
            f"| cairn, in process (`Cairn::search`, what the desktop runs) over {ip['records']:,} records | "
            f"{fmt(ip['p50_ms'], 2)} | {fmt(ip['p95_ms'], 2)} | {ip['with_hits']} | {fmt(ip.get('load'))} |",
            f"| cairn, one `cairn search --json` process per query | {fmt(se['cairn_cli']['p50_ms'])} | "
            f"{fmt(se['cairn_cli']['p95_ms'])} | {se['cairn_cli']['with_hits']} | {fmt(se['load'])} |",
            f"| agentsview, HTTP `GET /api/v1/search` to a warm `agentsview serve` | "
            f"{fmt(se['agentsview_http']['p50_ms'])} | {fmt(se['agentsview_http']['p95_ms'])} | "
            f"{se['agentsview_http']['with_hits']} | {fmt(se['load'])} |", "",
            "AgentsView's CLI search (`agentsview session search`) needs its daemon, so its server is timed;",
            "its FTS index covers messages, Cairn's covers record text and tool input.", ""]


def hook_table(r):
    h = r.get("hook")
    if not h:
        return []
    L = ["## Hook capture: `cairn hook` after one appended turn", "",
         "One turn (prompt, a tool call, the reply) is appended, then `cairn hook --agent claude` runs as",
         "the agent runs it (hook JSON on stdin, a fresh process). Wall time includes process start,",
         "capture, the git snapshot and relinking; CPU is user + system time of the process and the git",
         "processes it runs (wait4's rusage). `captures before`: hooks that built the session's history.", "",
         "| transcript | cwd | captures before | iterations | wall p50 (ms) | wall p95 (ms) | CPU p50 (ms) | CPU p95 (ms) | load |",
         "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for x in h:
        size = x["bytes"]
        label = f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{size / 1e3:.0f} KB"
        L.append(f"| {label} | {x['where']} | {x.get('prior_captures', '–')} | {x['iters']} | {fmt(x['p50_ms'])} | "
                 f"{fmt(x['p95_ms'])} | "
                 f"{fmt(x['cpu_p50_ms'])} | {fmt(x['cpu_p95_ms'])} | {fmt(x['load'])} |")
    return L + [""]


def idle_table(r):
    idle = r.get("idle")
    if not idle:
        return []
    L = [f"## Idle: the watching process over 60 s, after the initial sync settled ({idle.get('corpus', '1gb')} archive)", "",
         "| process | CPU (% of a core) | RSS (MB) | RSS incl. child processes (MB) | settle (s) | load |",
         "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for name, label in (("cairn_desktop", "cairn-desktop (under Xvfb)"), ("agentsview", "agentsview serve")):
        d = idle.get(name)
        if not d:
            continue
        if "cpu_pct" not in d:
            L.append(f"| {label} | not measured: {d.get('not_measured')} | | | | |")
            continue
        L.append(f"| {label} | {fmt(d['cpu_pct'], 2)} | {fmt(d['main_rss_mb'], 0)} | {fmt(d['rss_mb'], 0)} | "
                 f"{fmt(d.get('settle_s'), 0)} | {fmt(d['load'])} |")
    return L + [""]


def corpora_section(r):
    c = r.get("corpora")
    if not c:
        return []
    L = ["## Corpora", "", "Generated by `cairn-bench corpus` (crates/cairn-bench) from the real fixtures in",
         "`tests/fixtures/`: record types, field sets, sizes, tool outputs, calls per turn, sub-agent files and",
         "compactions follow the real sessions; the text is new. Model: " + c.get("model", "") + ".", "",
         "| corpus | MB | files | Claude sessions | Codex sessions | sub-agent/compaction files | lines |",
         "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name in CORPORA:
        if name in c:
            s = c[name]["stats"]
            L.append(f"| {name} | {s['bytes'] / 1e6:.0f} | {s['files']} | {s['claude_sessions']} | "
                     f"{s['codex_sessions']} | {s['side_files']} | {s['lines']} |")
    return L + [""]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="comma-separated steps: " + ",".join(STEPS))
    ap.add_argument("--corpus", help="ingest only these corpora (100mb,25k,1gb)")
    ap.add_argument("--tools", default="cairn,agentsview",
                    help="ingest: run only these tools; the others keep their last figures")
    ap.add_argument("--runs", type=int, default=int(os.environ.get("BENCH_RUNS", "5")),
                    help="runs per tool for the 100 MB ingest and the incremental re-sync")
    ap.add_argument("--runs-large", type=int, default=int(os.environ.get("BENCH_RUNS_LARGE", "3")),
                    help="runs per tool for the 1 GB and 25k-session ingests")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--agents-mb", type=float, default=20,
                    help="agents: about this many MB of each agent's fixtures (default 20)")
    ap.add_argument("--agents-runs", type=int, default=3, help="agents: runs a tool and agent (default 3)")
    ap.add_argument("--hook-iters", type=int, default=20)
    ap.add_argument("--idle-seconds", type=int, default=60)
    ap.add_argument("--port", type=int, default=18089)
    ap.add_argument("--team-corpus", default="1gb", choices=sorted(CORPORA),
                    help="team: the corpus whose archive is pushed (default 1gb)")
    ap.add_argument("--team-skim-runs", type=int, default=20)
    ap.add_argument("--report", action="store_true", help="only rewrite bench/RESULTS.md")
    ap.add_argument("--check-notes", action="store_true",
                    help="only check that bench/RESULTS.md ends with bench/NOTES.md (make test runs it)")
    args = ap.parse_args()
    if args.check_notes:
        raise SystemExit(check_notes())
    if args.report:
        write_report(read_results())
        return
    steps = args.only.split(",") if args.only else STEPS
    for s in steps:
        if s not in STEPS:
            raise SystemExit(f"unknown step {s}; steps: {', '.join(STEPS)}")
    for b in (CAIRN, GEN) + ((RECALL,) if steps != ["team"] else ()):
        if not b.exists():
            raise SystemExit(f"{b} is missing: run scripts/bench.sh (it builds the release binaries)")
    CACHE.mkdir(parents=True, exist_ok=True)
    for s in STEPS:
        if s in steps:
            say(f"== {s} (load {load()})")
            globals()[f"step_{s}"](args)
    say(f"wrote {RESULTS_MD}")


if __name__ == "__main__":
    main()
