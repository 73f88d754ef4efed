//! Reliability of the real binary: `cairn sync` and `cairn recall import` SIGKILLed at seeded
//! random points leave an archive that equals a clean run after a resync (import: all or
//! nothing); many concurrent `cairn hook` processes plus a `cairn sync` on the same growing
//! transcripts lose and duplicate nothing and never surface "database is locked"; a data dir
//! that runs out of room (a file-size limit, without root) stops `sync` and `hook` with an error
//! naming the data dir and the fix, loses nothing and leaves no half-written retained copy; and
//! human output carries no terminal control sequences from transcript text.
//! Set CAIRN_KILL_ROUNDS to try more kill points than the default.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::Env;

/// SplitMix64, so every kill point is reproducible from the seed printed on failure.
pub(crate) struct Rng(pub(crate) u64);
impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Kill delays are drawn from [0, window). The machine's load changes how long a run takes,
/// and a run resuming a half-done archive is shorter, so the window shrinks when a kill comes
/// after the process ended and grows back when one lands.
pub(crate) struct Window {
    micros: u64,
    max: u64,
}
impl Window {
    pub(crate) fn new(clean_run: Duration) -> Window {
        let max = clean_run.as_micros() as u64 + 1;
        Window { micros: max, max }
    }
    pub(crate) fn next(&self, rng: &mut Rng) -> Duration {
        Duration::from_micros(rng.below(self.micros))
    }
    pub(crate) fn landed(&mut self) {
        self.micros = (self.micros + self.micros / 4).min(self.max);
    }
    pub(crate) fn missed(&mut self) {
        self.micros = (self.micros / 2).max(1000);
    }
}

pub(crate) fn rounds(default: u64) -> u64 {
    std::env::var("CAIRN_KILL_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Everything a sync decides, with the environment's root path taken out: sessions, sources
/// (offsets, generations), records with their hashes and text, findings, warnings, and the
/// decompressed retained copies (their compressed length depends on how captures were batched).
fn dump(env: &Env) -> String {
    let conn = env.whole_db();
    let mut out = String::new();
    for sql in [
        "SELECT session_key, agent, session_id, relation, parent_key, title, cwd, git_branch, model,
                started_at, updated_at, record_count, turn_count, warning_count, secret_count
         FROM sessions ORDER BY session_key",
        "SELECT path, role, size, byte_offset, line_count, first_line_hash,
                last_line_start, last_line_hash, parser_state, generation
         FROM sources ORDER BY path",
        "SELECT s.session_key, src.path, r.line_no, r.block, r.record_hash, r.kind, r.role, r.text,
                r.tool_name, r.tool_input, t.turn_key
         FROM records r JOIN sessions s ON s.id = r.session_id JOIN sources src ON src.id = r.source_id
         LEFT JOIN turns t ON t.id = r.turn_id ORDER BY s.session_key, src.path, r.line_no, r.block",
        "SELECT src.path, f.line_no, f.field, f.rule, f.start_byte
         FROM secret_findings f JOIN sources src ON src.id = f.source_id ORDER BY 1, 2, 3, 5",
        "SELECT path, line, message FROM warnings ORDER BY 1, 2, 3",
        "SELECT count(*) FROM records_fts",
    ] {
        let mut stmt = conn.prepare(sql).unwrap();
        let n = stmt.column_count();
        let rows = stmt
            .query_map([], |r| {
                (0..n)
                    .map(|i| r.get::<_, rusqlite::types::Value>(i).map(|v| format!("{v:?}")))
                    .collect::<Result<Vec<_>, _>>()
            })
            .unwrap();
        for row in rows {
            out.push_str(&row.unwrap().join(" | "));
            out.push('\n');
        }
    }
    // Retained copies, named by their source path (the file name holds a path-derived key).
    let keys: std::collections::HashMap<String, String> = conn
        .prepare("SELECT source_key, path FROM sources")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let retained = cairn_core::archive::retain::Retained::new(&env.data());
    let mut copies: Vec<(String, String)> = walk(&env.data().join("retained"))
        .into_iter()
        .map(|path| {
            let file = path.file_name().unwrap().to_string_lossy().into_owned();
            let (key, generation) = file.split_once(".g").unwrap();
            let name = format!(
                "{} g{generation}",
                keys.get(key).map_or(key, String::as_str)
            );
            let mut text = String::new();
            for l in retained.read(&path, 0).unwrap() {
                text.push_str(&format!(
                    "{} {:?} {}\n",
                    l.line_no,
                    l.record_hash,
                    String::from_utf8_lossy(&l.text)
                ));
            }
            (name, text)
        })
        .collect();
    copies.sort();
    for (name, text) in copies {
        out.push_str(&format!("{name}:\n{text}"));
    }
    out.replace(&env.root.path().display().to_string(), "<root>")
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() {
                out.extend(walk(&e.path()));
            } else if kind.is_file() {
                out.push(e.path());
            }
        }
    }
    out
}

/// SIGKILL `child` after `delay`; true when it was still running (a real kill point).
pub(crate) fn kill_after(mut child: Child, delay: Duration) -> bool {
    std::thread::sleep(delay);
    let running = child.try_wait().unwrap().is_none();
    child.kill().unwrap();
    child.wait().unwrap();
    running
}

pub(crate) fn quiet(env: &Env, args: &[&str]) -> Child {
    env.command()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn sync_killed_at_random_points_resyncs_to_the_clean_archive() {
    let env = Env::new().with_fixtures();
    let started = Instant::now();
    env.ok(&["sync"]);
    let clean_run = started.elapsed();
    let expected = dump(&env);
    assert!(expected.contains("records"), "the fixtures synced nothing");

    let seed = 0x5EED_0001;
    let mut rng = Rng(seed);
    let mut window = Window::new(clean_run);
    let (mut tried, mut killed) = (0, 0);
    for round in 0..rounds(3) {
        std::fs::remove_dir_all(env.data()).unwrap();
        std::fs::create_dir_all(env.data()).unwrap();
        // Three kills in a row (later ones land on a half-done archive), then a full resync.
        for _ in 0..3 {
            tried += 1;
            if kill_after(quiet(&env, &["sync"]), window.next(&mut rng)) {
                killed += 1;
                window.landed();
            } else {
                window.missed();
            }
        }
        env.ok(&["sync"]);
        let got = dump(&env);
        assert!(
            got == expected,
            "round {round} (seed {seed:#x}): the archive after a killed sync and a resync differs from a clean run"
        );
        // A second resync finds nothing new.
        env.ok(&["sync"]);
        assert!(
            dump(&env) == expected,
            "round {round}: a further resync changed the archive"
        );
    }
    eprintln!(
        "sync kill points: {tried} tried, {killed} landed while running (clean run {clean_run:?})"
    );
    assert!(
        killed * 2 >= tried,
        "too few kills landed mid-run: {killed}/{tried}"
    );
}

const SMALL: &str = "55604662-cf2a-4331-851a-ec234028f8ca";

#[test]
fn recall_import_killed_at_random_points_is_all_or_nothing() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    // After its commit an import embeds the new entries with the local model, which takes most
    // of its time: kills timed over a whole run would nearly all land after the commit. An
    // endpoint embedder refreshes nothing on write (and is never asked here), so the run is the
    // import itself.
    std::fs::write(
        env.data().join("config.toml"),
        "[embeddings]\nprovider = \"endpoint\"\nendpoint = \"http://127.0.0.1:9/v1\"\nmodel = \"none\"\n",
    )
    .unwrap();
    let n = 400;
    let lines: Vec<String> = (0..n)
        .map(|i| {
            json!({"candidate_id": format!("c{i}"), "session_id": SMALL, "type": "fact", "scope": "project",
                   "title": format!("Fact number {i} about the build"),
                   "body": format!("The build step {i} needs the cache warmed before mix compile runs."),
                   "transferable": true, "provenance_ok": true, "label": "correct",
                   "evidence": {"ordinal_start": 0, "ordinal_end": 2, "snippets": ["mix compile"]}})
            .to_string()
        })
        .collect();
    let file = env.root.path().join("entries.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let file = file.to_string_lossy().into_owned();
    let db = env.data().join("cairn.db");
    let count = || -> i64 {
        rusqlite::Connection::open(&db)
            .unwrap()
            .query_row("SELECT count(*) FROM recall_entries", [], |r| r.get(0))
            .unwrap()
    };
    let backup = env.root.path().join("synced.db");
    let checkpoint = rusqlite::Connection::open(&db).unwrap();
    checkpoint
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    drop(checkpoint);
    std::fs::copy(&db, &backup).unwrap();

    let started = Instant::now();
    env.ok(&["recall", "import", &file, "--yes"]);
    let clean_run = started.elapsed();
    assert_eq!(count(), n);

    let mut rng = Rng(0x5EED_0002);
    let mut window = Window::new(clean_run);
    let (mut tried, mut killed, mut whole) = (0, 0, 0);
    for round in 0..rounds(6) {
        for ext in ["-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{ext}", db.display()));
        }
        std::fs::copy(&backup, &db).unwrap();
        tried += 1;
        if kill_after(
            quiet(&env, &["recall", "import", &file, "--yes"]),
            window.next(&mut rng),
        ) {
            killed += 1;
            window.landed();
        } else {
            window.missed();
        }
        let after_kill = count();
        assert!(
            after_kill == 0 || after_kill == n,
            "round {round}: a killed import left {after_kill} of {n} entries"
        );
        if after_kill == n {
            whole += 1;
        }
        let report = env.json(&["recall", "import", &file, "--yes"]);
        assert_eq!(count(), n, "round {round}: re-import did not complete");
        let imported = report["imported"].as_i64().unwrap();
        assert_eq!(imported, n - after_kill, "round {round}: {report}");
    }
    eprintln!(
        "import kill points: {tried} tried, {killed} landed while running, {whole} had already committed"
    );
    assert!(
        killed * 2 >= tried,
        "too few kills landed mid-run: {killed}/{tried}"
    );
    assert!(
        whole < tried,
        "every kill came after the import had committed: {whole}/{tried}"
    );
}

#[test]
fn concurrent_hook_processes_and_a_sync_lose_and_duplicate_nothing() {
    let read = |name: &str| {
        std::fs::read_to_string(crate::support::fixtures().join("claude").join(name)).unwrap()
    };
    // Two different sessions (each file its own session id).
    let contents = [read("tool_heavy.jsonl"), read("small.jsonl")];

    // The reference: the finished transcripts synced once.
    let reference = Env::new();
    let project = |env: &Env| env.claude().join("-home-USER-projects-p");
    std::fs::create_dir_all(project(&reference)).unwrap();
    for (name, content) in ["a.jsonl", "b.jsonl"].iter().zip(&contents) {
        std::fs::write(project(&reference).join(name), content).unwrap();
    }
    reference.ok(&["sync"]);
    let expected = strip_times(&dump(&reference));

    let env = Env::new();
    std::fs::create_dir_all(project(&env)).unwrap();
    let paths: Vec<_> = ["a.jsonl", "b.jsonl"]
        .iter()
        .map(|n| project(&env).join(n))
        .collect();
    for p in &paths {
        std::fs::write(p, "").unwrap();
    }
    let mut writers: Vec<_> = paths
        .iter()
        .map(|p| std::fs::OpenOptions::new().append(true).open(p).unwrap())
        .collect();
    let hook = |path: &Path| -> Child {
        let mut child = env
            .command()
            .args(["hook", "--agent", "claude"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let input = json!({"transcript_path": path, "cwd": env.root.path()}).to_string();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        child
    };
    let mut running: Vec<Child> = Vec::new();
    let mut finished = Vec::new();
    let mut sync = quiet(&env, &["sync"]);
    let mut syncs = 1;
    let mut hooks = 0;
    // Append in bursts; after every burst, a hook per transcript (as the agents fire them),
    // with up to 8 in flight, and a sync restarted whenever the last one ended.
    let lines: Vec<Vec<&str>> = contents.iter().map(|c| c.lines().collect()).collect();
    let bursts = lines.iter().map(|l| l.len().div_ceil(4)).max().unwrap();
    for i in 0..bursts {
        for (w, l) in writers.iter_mut().zip(&lines) {
            for line in l.iter().skip(i * 4).take(4) {
                writeln!(w, "{line}").unwrap();
            }
            w.flush().unwrap();
        }
        for p in &paths {
            running.push(hook(p));
            hooks += 1;
        }
        while running.len() > 8 {
            finished.push(running.remove(0).wait_with_output().unwrap());
        }
        if i % 3 == 0 && sync.try_wait().unwrap().is_some() {
            sync = quiet(&env, &["sync"]);
            syncs += 1;
        }
    }
    for c in running {
        finished.push(c.wait_with_output().unwrap());
    }
    assert!(sync.wait().unwrap().success(), "a sync failed");
    for out in &finished {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success()
                && !stderr.to_lowercase().contains("locked")
                && !stderr.contains("captured by the next"),
            "a hook failed or gave up: {stderr}"
        );
    }
    eprintln!("concurrency: {hooks} hook processes (up to 9 in flight) and {syncs} syncs");
    // The last hooks have run after the last append, so the archive is complete.
    let got = strip_times(&dump(&env));
    if let Some((g, e)) = got.lines().zip(expected.lines()).find(|(g, e)| g != e) {
        eprintln!("first difference:\n got: {g}\nwant: {e}");
    }
    assert!(
        got == expected,
        "{hooks} hooks and {syncs} syncs on growing transcripts differ from one sync of the finished files"
    );
}

/// Per-capture timestamps differ between the two environments; drop the `updated_at` column.
fn strip_times(dump: &str) -> String {
    dump.lines()
        .map(|l| {
            let mut cols: Vec<&str> = l.split(" | ").collect();
            if cols.len() == 15 {
                cols.remove(10);
            }
            cols.join(" | ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a hostile transcript's text holds: window titles, a screen clear, colours, 8-bit CSI,
/// a carriage return and backspace, a hyperlink.
const EVIL: &str = "fix \u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}[31mred\u{9b}31m\r\u{8}title\u{1b}]8;;https://evil.invalid\u{1b}\\link";

/// [`EVIL`] as a reader is handed it: the carriage return parts `red` from `title`.
const EVIL_CLEANED: &str = "fix red titlelink";

/// A Claude session `evil-1` whose prompt, reply (of two lines), tool call, folder and branch
/// hold [`EVIL`]'s sequences, and the fixtures' short session beside it.
fn plant_evil_session(env: &Env) {
    let dir = env.claude().join("-home-USER-projects-evil");
    std::fs::create_dir_all(&dir).unwrap();
    let evil = EVIL;
    let line = |i: u32, ty: &str, content: serde_json::Value| {
        json!({"type": ty, "uuid": format!("u{i}"), "parentUuid": null, "sessionId": "evil-1",
               "timestamp": format!("2026-01-01T00:00:0{i}Z"), "cwd": "/home/USER/projects/evil\u{1b}[1m",
               "gitBranch": "main\u{1b}[5m", "message": {"role": if ty == "user" { "user" } else { "assistant" }, "content": content}})
        .to_string()
    };
    let lines = [
        line(1, "user", json!(evil)),
        line(
            2,
            "assistant",
            json!([{"type": "text", "text": format!("{evil}\nsecond line")}]),
        ),
        line(
            3,
            "assistant",
            json!([{"type": "tool_use", "id": "t1", "name": "Bash\u{1b}[8m", "input": {"command": evil}}]),
        ),
    ];
    std::fs::write(dir.join("evil-1.jsonl"), lines.join("\n") + "\n").unwrap();
    std::fs::copy(
        crate::support::fixtures().join("claude/short.jsonl"),
        dir.join("short.jsonl"),
    )
    .unwrap();
}

#[test]
fn human_output_carries_no_terminal_control_sequences() {
    let env = Env::new();
    plant_evil_session(&env);
    let evil = EVIL;
    let mut outputs = vec![env.ok(&["sync"])];
    // Recall entries come from imported JSONL: their text is hostile too.
    let entry = json!({"candidate_id": "evil", "session_id": SMALL, "type": "warning", "scope": "project",
        "title": format!("title {evil}"), "body": format!("body {evil}"), "trigger": format!("when {evil}"),
        "transferable": true, "provenance_ok": true, "label": "correct",
        "evidence": {"ordinal_start": 0, "ordinal_end": 1, "snippets": [evil]}});
    let file = env.root.path().join("evil.jsonl");
    std::fs::write(&file, format!("{entry}\n")).unwrap();
    outputs.push(env.ok(&["recall", "import", file.to_str().unwrap(), "--yes"]));
    for args in [
        vec!["sessions"],
        vec!["search", "title"],
        vec!["show", "evil-1"],
        vec!["show", "evil-1", "--turn", "0"],
        vec!["doctor"],
        vec!["recall", "query", "title"],
        vec!["recall", "list"],
        vec!["recall", "get", "evil"],
        vec!["recall", "review"],
    ] {
        let out = env.run(&args);
        outputs.push(String::from_utf8_lossy(&out.stdout).into_owned());
        outputs.push(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let all = outputs.concat();
    assert!(
        all.contains("title"),
        "the planted session is not shown: {all}"
    );
    for (i, c) in all.char_indices() {
        assert!(
            !c.is_control() || c == '\n' || c == '\t',
            "control character {c:?} at {i} in human output: {:?}",
            &all[i.saturating_sub(40)..(i + 40).min(all.len())]
        );
    }
}

/// `--json` carries a teammate's or a transcript's text cleaned as the human output does, so
/// `jq -r` prints no escape sequence: every string of `sessions`, `show` (a session, a turn, a
/// link's records) and `search` is free of control characters but newlines and tabs, the
/// planted prompt reads as a person reads it, and a reply's second line is kept.
#[test]
fn json_output_carries_no_terminal_control_sequences() {
    let env = Env::new();
    plant_evil_session(&env);
    env.ok(&["sync"]);
    fn strings<'a>(v: &'a serde_json::Value, out: &mut Vec<&'a str>) {
        match v {
            serde_json::Value::String(s) => out.push(s),
            serde_json::Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
            serde_json::Value::Object(m) => m.iter().for_each(|(k, v)| {
                out.push(k);
                strings(v, out);
            }),
            _ => {}
        }
    }
    let key = env.json(&["show", "evil-1"])["session_key"]
        .as_str()
        .unwrap()
        .to_owned();
    let link = format!("cairn://session/{key}?record=1");
    let documents = [
        vec!["sessions"],
        vec!["show", "evil-1"],
        vec!["show", "evil-1", "--turn", "0"],
        vec!["show", link.as_str()],
        vec!["search", "title"],
    ];
    for args in &documents {
        let doc = env.json(args);
        let mut all = Vec::new();
        strings(&doc, &mut all);
        for s in all {
            assert!(
                !s.chars().any(|c| c.is_control() && c != '\n' && c != '\t'),
                "{args:?}: {s:?}"
            );
        }
    }
    let turn = env.json(&["show", "evil-1", "--turn", "0"]);
    let texts: Vec<&str> = turn["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["text"].as_str())
        .collect();
    assert!(texts.contains(&EVIL_CLEANED), "{texts:?}");
    assert!(
        texts.contains(&format!("{EVIL_CLEANED}\nsecond line").as_str()),
        "{texts:?}"
    );
    let sessions = env.json(&["sessions"]);
    let planted = sessions
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["session_key"] == key.as_str())
        .unwrap();
    assert_eq!(planted["git_branch"], "main", "{planted}");
}

#[cfg(unix)]
#[test]
fn hostile_source_dirs_and_a_read_only_data_dir_are_warnings_not_failures() {
    let env = Env::new();
    let project = env.claude().join("-home-USER-projects-p");
    std::fs::create_dir_all(&project).unwrap();
    // Symlink loops: a dir pointing at its parent, two links pointing at each other.
    std::os::unix::fs::symlink(&project, project.join("loop")).unwrap();
    std::os::unix::fs::symlink(project.join("b.jsonl"), project.join("a.jsonl")).unwrap();
    std::os::unix::fs::symlink(project.join("a.jsonl"), project.join("b.jsonl")).unwrap();
    // A transcript whose name holds a newline and an escape.
    let odd = project.join("new\nline\u{1b}[2J.jsonl");
    let line = json!({"type": "user", "uuid": "u1", "sessionId": "odd-name", "timestamp": "2026-01-01T00:00:00Z",
                      "message": {"role": "user", "content": "hello from an odd path"}});
    std::fs::write(&odd, format!("{line}\n")).unwrap();
    let report = env.json(&["sync"]);
    assert_eq!(report["records_added"], 1, "{report}");
    let sessions = env.json(&["sessions"]);
    assert_eq!(sessions.as_array().unwrap().len(), 1, "{sessions}");
    let human = env.ok(&["sync"]);
    assert!(!human.contains('\u{1b}'), "{human:?}");

    // A read-only data dir: reads still work, a write fails with a message naming the fix,
    // and nothing stored is lost. Root ignores permission bits, so as root the two commands run
    // as `nobody` (via setpriv), for whom the root-owned data dir is read-only.
    let db = env.data().join("cairn.db");
    env.ok(&["sync"]);
    let before = env.json(&["sessions"]);
    let as_root = std::fs::metadata(env.root.path())
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
        .unwrap_or(false);
    let run = |args: &[&str]| -> std::process::Output {
        let plain = env.command();
        if !as_root {
            return env.command().args(args).output().unwrap();
        }
        let mut cmd = std::process::Command::new("setpriv");
        cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(plain.get_program())
            .args(args)
            .env_clear()
            .stdin(Stdio::null());
        for (k, v) in plain.get_envs() {
            if let Some(v) = v {
                cmd.env(k, v);
            }
        }
        cmd.output().unwrap()
    };
    let set_mode = |dir_mode: u32, file_mode: u32| {
        use std::os::unix::fs::PermissionsExt;
        for p in walk(env.root.path()) {
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(file_mode)).unwrap();
        }
        for d in [
            env.root.path().to_owned(),
            env.data(),
            env.home(),
            env.claude(),
            env.codex(),
            project.clone(),
        ] {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(dir_mode)).unwrap();
        }
    };
    set_mode(0o555, 0o444);
    let listed = run(&["--json", "sessions"]);
    let sync = run(&["sync"]);
    set_mode(0o755, 0o644);
    if as_root && sync.status.code().is_none() {
        eprintln!("setpriv unavailable: read-only check skipped");
        return;
    }
    assert!(
        listed.status.success(),
        "a read from a read-only data dir failed: {}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed, before);
    let stderr = String::from_utf8_lossy(&sync.stderr);
    assert!(
        !sync.status.success(),
        "a sync into a read-only dir succeeded"
    );
    assert!(
        stderr.contains("read-only") && stderr.contains("CAIRN_DATA_DIR"),
        "{stderr}"
    );
    assert!(db.exists());
    assert_eq!(env.json(&["sessions"]), before, "stored sessions changed");
}

// ---- a full disk ---------------------------------------------------------------------------------

/// Run `cairn args` (with `stdin`) where no file can grow past `limit` bytes: RLIMIT_FSIZE set by
/// util-linux's `prlimit`, with SIGXFSZ ignored (inherited through exec) so that a write past the
/// limit fails with EFBIG, as on a full disk, instead of killing the process. Needs no root.
fn run_limited(env: &Env, limit: u64, args: &[&str], stdin: &str) -> std::process::Output {
    let plain = env.command();
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c")
        .arg(r#"trap '' XFSZ; exec prlimit --fsize="$0" -- "$@""#)
        .arg(limit.to_string())
        .arg(plain.get_program())
        .args(args)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in plain.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn copy_all(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_all(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// The stored records (session, line, block, hash, text): what a failed write must never lose.
fn stored_records(env: &Env) -> std::collections::BTreeSet<String> {
    let conn = env.whole_db();
    let mut stmt = conn
        .prepare(
            "SELECT s.session_key, r.line_no, r.block, r.record_hash, r.text, r.tool_input
             FROM records r JOIN sessions s ON s.id = r.session_id",
        )
        .unwrap();
    stmt.query_map([], |r| {
        Ok(format!(
            "{} {} {} {} {:?} {:?}",
            r.get::<_, String>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, i64>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, Option<String>>(4)?,
            r.get::<_, Option<String>>(5)?
        ))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// Every retained copy is exactly as long as the store records (nothing half-written left behind,
/// no copy the store does not know) and decodes whole. Returns how many copies there are.
fn assert_retained_match_the_store(env: &Env, what: &str) -> usize {
    let conn = rusqlite::Connection::open(env.data().join("cairn.db")).unwrap();
    let sources: std::collections::HashMap<String, (u32, u64)> = conn
        .prepare("SELECT source_key, generation, retained_len FROM sources")
        .unwrap()
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                (r.get::<_, u32>(1)?, r.get::<_, i64>(2)? as u64),
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let retained = cairn_core::archive::retain::Retained::new(&env.data());
    let files = walk(&env.data().join("retained"));
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let (key, rest) = name.split_once(".g").unwrap();
        let generation: u32 = rest.split('.').next().unwrap().parse().unwrap();
        let len = std::fs::metadata(path).unwrap().len();
        let Some(&(stored_generation, stored_len)) = sources.get(key) else {
            panic!("{what}: retained copy {name} ({len} bytes) belongs to no stored source");
        };
        assert!(
            generation <= stored_generation,
            "{what}: retained copy {name} is of a generation the store never committed"
        );
        if generation == stored_generation {
            assert_eq!(
                len, stored_len,
                "{what}: retained copy {name} is not the length the store records"
            );
        }
        retained
            .read(path, 0)
            .unwrap_or_else(|e| panic!("{what}: retained copy {name} does not decode: {e}"));
    }
    files.len()
}

/// A data dir whose files cannot grow (RLIMIT_FSIZE, the unprivileged stand-in for a full disk):
/// `cairn sync` and `cairn hook` stop with an error naming the data dir and the fix, lose nothing
/// stored, leave no half-written retained copy, keep reads working, and once the limit is lifted a
/// sync ends with exactly the archive of a run that never hit the limit.
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_stops_sync_and_hook_cleanly_and_loses_nothing() {
    let prlimit = std::process::Command::new("prlimit")
        .arg("--version")
        .output();
    assert!(
        prlimit.is_ok_and(|o| o.status.success()),
        "this test needs `prlimit` (util-linux, part of every Debian install)"
    );
    let env = Env::new();
    let fixtures = crate::support::fixtures();
    let project = env.claude().join("-home-USER-projects-spotter");
    let codex = env.codex().join("2026/08/03");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&codex).unwrap();
    for name in [
        "short.jsonl",
        "small.jsonl",
        "tool_heavy.jsonl",
        "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
    ] {
        std::fs::copy(fixtures.join("claude").join(name), project.join(name)).unwrap();
    }
    std::fs::copy(
        fixtures.join("codex/small.jsonl"),
        codex.join("small.jsonl"),
    )
    .unwrap();
    // A transcript that grows between the syncs: its retained copy gets appended to.
    let growing = std::fs::read_to_string(fixtures.join("claude/subagent.jsonl")).unwrap();
    let (head, tail) = growing.split_at(growing.match_indices('\n').nth(47).unwrap().0 + 1);
    std::fs::write(project.join("subagent.jsonl"), head).unwrap();

    env.ok(&["sync"]);
    let stored = stored_records(&env);
    let snapshot = env.root.path().join("snapshot");
    copy_all(&env.data(), &snapshot);
    let db_size = std::fs::metadata(env.data().join("cairn.db"))
        .unwrap()
        .len();

    // More transcripts arrive: one grows, a big one (2.7 MB) and its sub-agents appear, a third.
    let mut grow = std::fs::OpenOptions::new()
        .append(true)
        .open(project.join("subagent.jsonl"))
        .unwrap();
    grow.write_all(tail.as_bytes()).unwrap();
    drop(grow);
    let big = "ae4a77f8-aedd-4bc1-888f-c94edc91af04";
    std::fs::copy(
        fixtures.join(format!("claude/{big}.jsonl")),
        project.join(format!("{big}.jsonl")),
    )
    .unwrap();
    crate::support::copy_tree(&fixtures.join("claude").join(big), &project.join(big));
    std::fs::copy(
        fixtures.join("codex/codex_053_rate_limit.jsonl"),
        codex.join("codex_053_rate_limit.jsonl"),
    )
    .unwrap();

    // The reference: the same second sync with room to spare.
    env.ok(&["sync"]);
    let expected = dump(&env);
    let full_size = std::fs::metadata(env.data().join("cairn.db"))
        .unwrap()
        .len();
    let hook_input =
        json!({"transcript_path": project.join(format!("{big}.jsonl")), "cwd": env.root.path()})
            .to_string();

    // Limits from below the 32 KiB `-shm` index (the open itself fails) up past the final
    // database size, spaced geometrically: each lands the first failed write elsewhere (the
    // shared-memory index, a retained copy's frame, the WAL, the checkpoint at close).
    let mut limits = vec![16 << 10];
    let (low, high) = (48u64 << 10, full_size * 2);
    let steps = 7;
    for i in 0..steps {
        let f = (high as f64 / low as f64).powf(i as f64 / (steps - 1) as f64);
        limits.push((low as f64 * f) as u64);
    }
    let data_dir = env.data().display().to_string();
    let (mut failed, mut succeeded) = (0, 0);
    let mut named = std::collections::BTreeMap::<&str, u32>::new();
    let cases: Vec<(&str, u64)> = limits
        .iter()
        .map(|&l| ("sync", l))
        .chain(limits.iter().take(4).map(|&l| ("hook", l)))
        .collect();
    for &(command, limit) in &cases {
        let what = format!("{command} limited to {limit} bytes");
        std::fs::remove_dir_all(env.data()).unwrap();
        copy_all(&snapshot, &env.data());
        let out = match command {
            "sync" => run_limited(&env, limit, &["sync"], ""),
            _ => run_limited(&env, limit, &["hook", "--agent", "claude"], &hook_input),
        };
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code().is_some(),
            "{what}: killed by a signal ({:?}): {stderr}",
            out.status
        );
        assert!(!stderr.contains("panicked"), "{what}: {stderr}");
        if out.status.success() {
            succeeded += 1;
        } else {
            failed += 1;
            assert_eq!(out.status.code(), Some(1), "{what}: {stderr}");
            let lower = stderr.to_lowercase();
            assert!(
                stderr.contains(&format!("data dir {data_dir}"))
                    && lower.contains("free space")
                    && lower.contains("nothing stored before this was lost"),
                "{what}: the error does not name the data dir and the fix: {stderr}"
            );
            let site = if stderr.contains("/retained/") {
                "retained copy"
            } else if stderr.contains("cairn.db") {
                "database"
            } else {
                "other"
            };
            *named.entry(site).or_default() += 1;
            eprintln!("{what}: {site}");
        }
        // Nothing stored before is lost (a failed sync may have committed whole batches
        // before the failing one), and no retained copy holds bytes the store does not know.
        let now = stored_records(&env);
        assert!(
            stored.is_subset(&now),
            "{what}: {} stored records are gone",
            stored.difference(&now).count()
        );
        assert_retained_match_the_store(&env, &what);
        // Reads keep working under the limit.
        let listed = run_limited(&env, limit, &["--json", "sessions"], "");
        assert!(
            listed.status.success(),
            "{what}: listing sessions failed: {}",
            String::from_utf8_lossy(&listed.stderr)
        );
        // With room again, the next sync completes the archive exactly.
        env.ok(&["sync"]);
        let got = dump(&env);
        if let Some((g, e)) = got.lines().zip(expected.lines()).find(|(g, e)| g != e) {
            eprintln!("{what}: first difference:\n got: {g}\nwant: {e}");
        }
        assert!(
            got == expected,
            "{what}: the archive after the limit was lifted differs from a run with room"
        );
        assert_retained_match_the_store(&env, &what);
    }
    eprintln!(
        "full disk: {} limit points ({} sync, {} hook; {} to {} bytes; database {db_size} then {full_size} bytes): \
         {failed} failed cleanly, {succeeded} had room; failed writes named {named:?}",
        cases.len(),
        limits.len(),
        cases.len() - limits.len(),
        limits[0],
        limits[limits.len() - 1],
    );
    assert!(
        named.contains_key("retained copy") && named.contains_key("database"),
        "the limits never made both a retained copy and the database fail: {named:?}"
    );
    assert!(
        failed >= cases.len() / 2,
        "too few limits hit: {failed}/{}",
        cases.len()
    );
}

/// A source dir that is a link leading to no folder (a link to itself) is said as such by
/// doctor, not taken for an agent never used or a path mistyped.
#[cfg(unix)]
#[test]
fn doctor_names_a_source_dir_that_is_a_link_to_nowhere() {
    let env = Env::new();
    std::fs::remove_dir(env.codex()).unwrap();
    std::os::unix::fs::symlink(env.codex(), env.codex()).unwrap();
    let doctor = env.json(&["doctor"]);
    let codex = crate::support::check(&doctor, "codex source dir");
    assert_eq!(codex["status"], "warn", "{codex}");
    assert!(
        codex["detail"]
            .as_str()
            .unwrap()
            .contains("a link that leads to no folder"),
        "{codex}"
    );
}
