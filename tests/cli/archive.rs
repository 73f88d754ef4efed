//! Archive commands: sync, hook, hooks install, sessions, search, doctor.

use std::io::Write;
use std::process::Stdio;

use crate::support::{Env, copy_all, fixtures};

fn keys_of(v: &serde_json::Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    k.sort();
    k
}

#[test]
fn sync_reports_what_it_did_in_the_contract_fields() {
    let env = Env::new().with_fixtures();
    let report = env.json(&["sync"]);
    for field in [
        "files_scanned",
        "sessions_added",
        "sessions_updated",
        "records_added",
        "warnings",
    ] {
        assert!(report.get(field).is_some(), "missing {field} in {report}");
    }
    assert_eq!(report["files_scanned"], 10);
    // As `cairn sessions` lists them: the two sub-agents are counted apart, under their parent.
    assert_eq!(report["sessions_added"], 8);
    assert_eq!(report["subagents_added"], 2);
    assert_eq!(env.json(&["sessions"]).as_array().unwrap().len(), 8);
    let human = Env::new().with_fixtures().ok(&["sync"]);
    assert!(
        human.contains("Scanned 10 files: 8 new sessions (and 2 sub-agents), 0 updated"),
        "{human}"
    );
    // The only warnings: the schema fixtures' "[trimmed for fixture]" timestamps, unknown.
    let warnings = report["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 2, "{report}");
    assert!(
        warnings.iter().all(|w| w["message"]
            .as_str()
            .unwrap()
            .starts_with("timestamp \"[trimmed for fixture]\" is not RFC 3339")),
        "{report}"
    );
    let again = env.json(&["sync"]);
    assert_eq!(
        (
            again["records_added"].as_u64(),
            again["sessions_updated"].as_u64()
        ),
        (Some(0), Some(0))
    );
}

/// `--progress` on a stderr that is no terminal (a log): plain lines, no terminal codes; without
/// it, no progress at all there.
#[test]
fn sync_progress_asked_for_in_a_log_is_plain_lines() {
    let env = Env::new().with_fixtures();
    let out = env.run(&["sync", "--progress"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let first = err.lines().next().unwrap_or_default();
    assert!(first.starts_with("Syncing 10 files ["), "{err}");
    // Its last line is the state it ended in: everything read.
    let last = err
        .lines()
        .rfind(|l| l.starts_with("Syncing"))
        .unwrap_or_default();
    let counts = last
        .split("] ")
        .nth(1)
        .and_then(|c| c.split(" (").next())
        .unwrap_or_default();
    let (read, total) = counts.split_once('/').unwrap_or_default();
    assert!(!read.is_empty() && read == total, "{err}");
    assert!(
        !err.contains(['\u{1b}', '\r']),
        "terminal codes in a log: {err:?}"
    );
    let quiet = Env::new().with_fixtures().run(&["sync"]);
    assert!(!String::from_utf8_lossy(&quiet.stderr).contains("Syncing"));
}

#[test]
fn sessions_list_newest_first_with_the_contract_fields() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let list = env.json(&["sessions"]);
    let sessions = list.as_array().unwrap();
    assert_eq!(
        sessions.len(),
        8,
        "sub-agent sessions are not listed at the top level"
    );
    for field in [
        "session_key",
        "agent",
        "session_id",
        "project",
        "cwd",
        "git_branch",
        "started_at",
        "updated_at",
        "turn_count",
        "record_count",
        "warnings",
    ] {
        assert!(sessions[0].get(field).is_some(), "missing {field}");
    }
    let times: Vec<_> = sessions
        .iter()
        .map(|s| s["updated_at"].as_str().unwrap_or("").to_owned())
        .collect();
    let mut sorted = times.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(times, sorted);
    let codex = env.json(&["sessions", "--agent", "codex"]);
    assert!(
        codex
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["agent"] == "codex")
    );
    let limited = env.json(&["sessions", "--limit", "2"]);
    assert_eq!(limited.as_array().unwrap().len(), 2);
    let master = env.json(&["sessions", "--branch", "master"]);
    assert_eq!(master.as_array().unwrap().len(), 3);
}

#[test]
fn human_output_is_pinned_and_never_prints_keys() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let sessions = env.ok(&["sessions"]);
    assert!(!sessions.contains("sha256-"));
    insta::assert_snapshot!("sessions_human", sessions);
    let hits = env.ok(&["search", "phoenix server", "--limit", "3"]);
    assert!(!hits.contains("sha256"));
    insta::assert_snapshot!("search_human", hits);
    assert!(env.ok(&["sessions", "--keys"]).contains("sha256-"));
}

#[test]
fn search_json_has_the_contract_fields() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let hits = env.json(&["search", "credo dialyzer"]);
    let first = &hits.as_array().unwrap()[0];
    for field in [
        "session_key",
        "turn_key",
        "ordinal",
        "kind",
        "role",
        "snippet",
    ] {
        assert!(first.get(field).is_some(), "missing {field}: {first}");
    }
    // Matches are marked with private-use characters in JSON (brackets occur in real text).
    let snippet = first["snippet"].as_str().unwrap().to_lowercase();
    assert!(
        snippet.contains("\u{e000}credo\u{e001}") || snippet.contains("\u{e000}dialyzer\u{e001}"),
        "{snippet}"
    );
    // A person reading a terminal sees brackets.
    let human = env.ok(&["search", "credo dialyzer"]);
    assert!(
        human.contains("[credo]") || human.contains("[dialyzer]"),
        "{human}"
    );
    assert!(!human.contains('\u{e000}'));
}

#[test]
fn the_hook_captures_silently_from_agent_input() {
    let env = Env::new();
    let project = env.claude().join("-work-repo");
    std::fs::create_dir_all(&project).unwrap();
    let transcript = project.join("1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl");
    std::fs::copy(
        fixtures().join("claude/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"),
        &transcript,
    )
    .unwrap();
    // A relative transcript path resolves against the payload's cwd.
    let input = serde_json::json!({"session_id": "x", "transcript_path": "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl", "cwd": project, "hook_event_name": "Stop"});
    let out = env.run_with_stdin(&["hook", "--agent", "claude"], input.to_string().as_bytes());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout.is_empty() && out.stderr.is_empty(),
        "the hook must be silent"
    );
    let sessions = env.json(&["sessions"]);
    assert_eq!(
        sessions[0]["session_id"],
        "1af7fc5e-8455-4414-9ccd-011d40f70b2a"
    );

    // The agent is detected from the environment Claude Code sets.
    let mut child = env
        .command()
        .arg("hook")
        .env("CLAUDECODE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    assert!(child.wait_with_output().unwrap().status.success());

    // Nothing to capture is not an error.
    let mut child = env
        .command()
        .arg("hook")
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"{\"hook_event_name\":\"Stop\"}")
        .unwrap();
    assert!(child.wait().unwrap().success());
}

#[test]
fn errors_are_one_line_with_exit_code_1_and_usage_errors_exit_2() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let out = env.run_with_stdin(&["hook"], b"not json");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("failed to parse agent hook input"), "{err}");

    let out = env.run(&["hook"]);
    // No stdin (null) is empty input, which is not JSON.
    assert_eq!(out.status.code(), Some(1));
    // JSON of another shape is said too, not taken for a payload with nothing to capture.
    for (payload, says) in [
        ("[1]", "not a JSON object"),
        (
            "{\"transcript_path\": 5}",
            "`transcript_path` is not a string",
        ),
        ("{\"cwd\": []}", "`cwd` is not a string"),
    ] {
        let out = env.run_with_stdin(&["hook"], payload.as_bytes());
        assert_eq!(out.status.code(), Some(1), "{payload}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(says),
            "{payload}"
        );
    }

    let out = env.run(&["search", "\"unbalanced"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("drop the leading quote"));

    assert_eq!(
        env.run(&["sessions", "--limit", "many"]).status.code(),
        Some(2)
    );
    assert_eq!(env.run(&["no-such-command"]).status.code(), Some(2));
}

#[test]
fn hooks_install_is_idempotent_and_dry_run_writes_nothing() {
    let env = Env::new();
    let dry = env.json(&["hooks", "install", "--agent", "claude", "--dry-run"]);
    assert_eq!(dry["changed"], true);
    assert!(
        dry["path"]
            .as_str()
            .unwrap()
            .ends_with(".claude/settings.json")
    );
    assert!(!env.home().join(".claude/settings.json").exists());
    let first = env.json(&["hooks", "install", "--agent", "claude"]);
    assert_eq!(first["changed"], true);
    let settings = std::fs::read_to_string(env.home().join(".claude/settings.json")).unwrap();
    assert!(settings.contains("hook --agent claude"));
    let second = env.json(&["hooks", "install", "--agent", "claude"]);
    assert_eq!(second["changed"], false);
    let doctor = env.json(&["doctor"]);
    assert_eq!(
        crate::support::check(&doctor, "claude hook")["status"],
        "ok"
    );
}

#[test]
fn doctor_lists_checks_with_statuses() {
    let env = Env::new().with_fixtures();
    let doctor = env.json(&["doctor"]);
    let checks = doctor["checks"].as_array().unwrap();
    for c in checks {
        assert_eq!(keys_of(c), vec!["detail", "name", "status"]);
        assert!(["ok", "warn", "fail"].contains(&c["status"].as_str().unwrap()));
    }
    assert!(
        checks
            .iter()
            .any(|c| c["name"] == "claude retention" && c["status"] == "ok")
    );
    assert!(
        checks
            .iter()
            .any(|c| c["name"] == "claude source dir" && c["status"] == "ok")
    );
}

/// Doctor on a data dir with no archive (a fresh machine, a mistyped `--data-dir`) says so and
/// what makes one, runs every other check, and leaves nothing behind.
#[test]
fn doctor_creates_no_archive_where_there_is_none() {
    let env = Env::new().with_fixtures();
    let typo = env.root.path().join("dta");
    let out = env.run(&["--json", "--data-dir", typo.to_str().unwrap(), "doctor"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doctor: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let checks = doctor["checks"].as_array().unwrap();
    let archive = crate::support::check(&doctor, "archive");
    assert_eq!(archive["status"], "warn");
    let detail = archive["detail"].as_str().unwrap();
    assert!(detail.contains("holds no archive"), "{detail}");
    assert!(
        detail.contains("`cairn sync`, with the same --data-dir"),
        "{detail}"
    );
    assert!(
        checks
            .iter()
            .any(|c| c["name"] == "claude source dir" && c["status"] == "ok")
    );
    assert!(!typo.exists(), "doctor made {}", typo.display());
    // The data dir exists but holds no database: still nothing written.
    let empty = env.data();
    assert!(!empty.join("cairn.db").exists());
    env.json(&["doctor"]);
    assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 0);
    // An empty cairn.db (a copy that went no further) holds no archive either, and stays empty.
    std::fs::write(empty.join("cairn.db"), b"").unwrap();
    let doctor = env.json(&["doctor"]);
    let archive = crate::support::check(&doctor, "archive");
    assert_eq!(archive["status"], "warn", "{archive}");
    assert_eq!(std::fs::metadata(empty.join("cairn.db")).unwrap().len(), 0);
    assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 1);
}

/// Human output shows times on the person's clock (`$TZ`), as the desktop does; JSON keeps the
/// stored UTC time.
#[test]
fn times_are_printed_on_the_persons_clock() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let newest = &env.json(&["sessions", "--limit", "1"])[0];
    let utc = newest["updated_at"].as_str().unwrap();
    assert!(utc.ends_with('Z'), "{utc}");
    let (day, clock) = (&utc[..10], &utc[11..16]);
    let in_zone = |tz: &str| {
        let out = env
            .command()
            .env("TZ", tz)
            .args(["sessions", "--limit", "1"])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    assert!(in_zone("UTC").starts_with(&format!("{day} {clock}")));
    let hour: u32 = clock[..2].parse().unwrap();
    let east = in_zone("<+03>-3");
    let shown = format!("{:02}{}", (hour + 3) % 24, &clock[2..]);
    assert!(east[11..16] == shown, "{utc} in UTC+3: {east}");
}

/// A day given as `--until` counts whole: `--since D --until D` is that day; a `--since` after
/// the `--until` is refused rather than answered with nothing.
#[test]
fn search_until_a_day_includes_it_and_a_backwards_range_is_refused() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let hit = &env.json(&["search", "phoenix", "--limit", "1"])[0];
    let day = &hit["timestamp"].as_str().unwrap()[..10];
    let that_day = env.json(&["search", "phoenix", "--since", day, "--until", day]);
    let hits = that_day.as_array().unwrap();
    assert!(!hits.is_empty());
    assert!(
        hits.iter()
            .all(|h| h["timestamp"].as_str().unwrap().starts_with(day))
    );
    let out = env.run(&[
        "search",
        "phoenix",
        "--since",
        "2026-03-02",
        "--until",
        "2026-03-01",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("--since 2026-03-02 is not before --until 2026-03-01"),
        "{out:?}"
    );
    // A day is a day on the person's clock, the one hits are listed on: fourteen hours east,
    // the hit's day is the one its listed time says.
    let at: jiff::Timestamp = hit["timestamp"].as_str().unwrap().parse().unwrap();
    let east = jiff::tz::TimeZone::fixed(jiff::tz::offset(14));
    let local_day = east.to_datetime(at).date().to_string();
    let in_east = |args: &[&str]| {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let out = env.command().env("TZ", "<+14>-14").args(&all).output();
        let text = crate::support::succeeded(out.unwrap(), "cairn at UTC+14");
        serde_json::from_str::<serde_json::Value>(&text).unwrap()
    };
    let found = in_east(&[
        "search", "phoenix", "--since", &local_day, "--until", &local_day,
    ]);
    assert!(
        found
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["timestamp"] == hit["timestamp"]),
        "{local_day}: {found}"
    );
    // The fixture's hit is in the afternoon (UTC): its UTC day is another day there.
    assert_ne!(local_day, day);
    let other = in_east(&["search", "phoenix", "--since", day, "--until", day]);
    assert!(
        !other
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["timestamp"] == hit["timestamp"]),
        "{day}: {other}"
    );
}

#[test]
fn sync_shows_progress_when_asked() {
    let env = Env::new().with_fixtures();
    let out = env.run(&["sync", "--progress"]);
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Scanned 10 files"), "{stdout}");
}

/// A sync killed at any moment and run again ends exactly like a clean run.
#[test]
fn a_sync_killed_at_random_points_then_rerun_equals_a_clean_run() {
    let env = Env::new();
    let big = std::fs::read_to_string(
        fixtures().join("claude/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"),
    )
    .unwrap();
    for i in 0..6 {
        let dir = env.claude().join(format!("-p{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        let id = format!("ae4a77f8-aedd-4bc1-888f-{i:012}");
        std::fs::write(
            dir.join(format!("{id}.jsonl")),
            big.replace("ae4a77f8-aedd-4bc1-888f-c94edc91af04", &id),
        )
        .unwrap();
    }
    let clean = Env::new();
    crate::support::copy_tree(&env.claude(), &clean.claude());
    let started = std::time::Instant::now();
    clean.ok(&["sync"]);
    let full = started.elapsed();

    // Kill runs at deterministic pseudo-random points within the first third of a clean run's
    // duration; each run resumes where the killed one stopped, until one completes.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut kills = 0;
    for _ in 0..20 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let at = full.mul_f64((seed % 1000) as f64 / 3000.0);
        let mut child = env
            .command()
            .arg("sync")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(at);
        let finished = child.try_wait().unwrap().is_some();
        if !finished {
            child.kill().unwrap(); // SIGKILL
            kills += 1;
        }
        child.wait().unwrap();
        if finished {
            break;
        }
    }
    env.ok(&["sync"]);
    assert!(
        kills >= 2,
        "only {kills} runs were interrupted; the corpus is too small for this machine"
    );
    let norm = |e: &Env| {
        dump(&e.data()).replace(
            &std::fs::canonicalize(e.claude())
                .unwrap()
                .display()
                .to_string(),
            "<src>",
        )
    };
    assert_eq!(norm(&env), norm(&clean));
}

/// Sessions, records and turns in a comparable form (no timestamps of capture).
fn dump(data: &std::path::Path) -> String {
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let mut out = String::new();
    let mut stmt = conn
        .prepare(
            "SELECT s.session_key, src.path, r.line_no, r.block, r.ordinal, r.record_hash, r.kind, r.text, t.turn_key
             FROM records r JOIN sessions s ON s.id = r.session_id JOIN sources src ON src.id = r.source_id
             LEFT JOIN turns t ON t.id = r.turn_id ORDER BY 1, 2, 3, 4",
        )
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok(format!(
                "{} {} {} {} {} {} {} {:?} {:?}",
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, String>(5)?,
                r.get::<_, String>(6)?,
                r.get::<_, Option<String>>(7)?,
                r.get::<_, Option<String>>(8)?
            ))
        })
        .unwrap();
    for row in rows {
        out.push_str(&row.unwrap());
        out.push('\n');
    }
    let mut stmt = conn
        .prepare("SELECT session_key, record_count, turn_count, next_ordinal, title FROM sessions ORDER BY 1")
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok(format!(
                "{} {} {} {} {:?}",
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, Option<String>>(4)?
            ))
        })
        .unwrap();
    for row in rows {
        out.push_str(&row.unwrap());
        out.push('\n');
    }
    out
}

/// Each agent read after Claude and Codex is found through its override variable: `doctor`
/// names its folder as coming from the environment, `sync` reads its fixtures, and a second
/// sync reads nothing new.
#[test]
fn sync_and_doctor_find_every_agent_through_its_variable() {
    let env = Env::new();
    let root = env.root.path();
    let agents = [
        ("copilot", "COPILOT_DIR", "copilot-home", "session-state"),
        ("qwen", "QWEN_PROJECTS_DIR", "qwen-projects", ""),
        ("droid", "FACTORY_SESSIONS_DIR", "factory-sessions", ""),
        ("kimi", "KIMI_DIR", "kimi-home", ""),
        ("gemini", "GEMINI_DIR", "gemini-home", "tmp"),
        ("cursor", "CURSOR_PROJECTS_DIR", "cursor-projects", ""),
        ("pi", "PI_CODING_AGENT_DIR", "pi-agent", "sessions/--w--"),
        (
            "openclaw",
            "OPENCLAW_STATE_DIR",
            "openclaw-state",
            "agents/main/sessions",
        ),
        ("grok", "GROK_HOME", "grok-home", "sessions"),
        ("hermes", "HERMES_HOME", "hermes-home", "sessions"),
        ("antigravity", "ANTIGRAVITY_CLI_DIR", "agy-home", "brain"),
        ("vibe", "VIBE_HOME", "vibe-home", "logs/session"),
        ("iflow", "IFLOW_DIR", "iflow-projects", ""),
        ("traex", "TRAEX_SESSIONS_DIR", "traex-sessions", ""),
        ("gptme", "GPTME_LOGS_HOME", "gptme-logs", ""),
        ("posit", "POSIT_ASSISTANT_DIR", "posit-workspaces", ""),
        ("qwenpaw", "QWENPAW_DIR", "copaw-workspaces", ""),
    ];
    for (agent, _, dir, sub) in agents {
        // Kimi's fixtures already sit in its `sessions/` layout.
        copy_all(&fixtures().join(agent), &root.join(dir).join(sub));
    }
    let run = |args: &[&str]| {
        let mut cmd = env.command();
        for (_, var, dir, _) in agents {
            cmd.env(var, root.join(dir));
        }
        let out = cmd.arg("--json").args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let doctor = run(&["doctor"]);
    for (agent, _, dir, _) in agents {
        let name = format!("{agent} source dir");
        let check = doctor["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name.as_str())
            .unwrap_or_else(|| panic!("no {name}: {doctor}"));
        let detail = check["detail"].as_str().unwrap();
        assert!(
            detail.contains(dir) && detail.contains("(environment)"),
            "{detail}"
        );
        assert_eq!(check["status"], "ok", "{detail}");
    }
    let first = run(&["sync"]);
    assert!(first["records_added"].as_u64().unwrap() > 0, "{first}");
    let sessions = run(&["sessions", "--limit", "100"]);
    let mut seen: Vec<String> = sessions
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["agent"].as_str().unwrap().to_owned())
        .collect();
    seen.sort();
    seen.dedup();
    assert_eq!(
        seen,
        [
            "antigravity",
            "copilot",
            "cursor",
            "droid",
            "gemini",
            "gptme",
            "grok",
            "hermes",
            "iflow",
            "kimi",
            "openclaw",
            "pi",
            "posit",
            "qwen",
            "qwenpaw",
            "traex",
            "vibe"
        ]
    );
    let again = run(&["sync"]);
    assert_eq!(again["records_added"], 0, "{again}");
}

/// Claude Code set (by the fixture settings file) to keep transcripts 10 days: a transcript
/// last written 8 days ago goes within the week, so doctor and a sync that left it alone warn
/// with the command that captures it; once that command ran, nothing is at risk.
#[test]
fn retention_warns_of_uncaptured_transcripts_that_expire_within_a_week() {
    let env = Env::new().with_fixtures();
    std::fs::create_dir_all(env.home().join(".claude")).unwrap();
    std::fs::copy(
        fixtures().join("retention/claude-settings.json"),
        env.home().join(".claude/settings.json"),
    )
    .unwrap();
    let old = env.claude().join("-home-USER-projects-spotter/short.jsonl");
    std::fs::File::options()
        .write(true)
        .open(&old)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(8 * 86_400))
        .unwrap();
    let retention = |doctor: &serde_json::Value| {
        doctor["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "claude retention")
            .unwrap()
            .clone()
    };
    let check = retention(&env.json(&["doctor"]));
    assert_eq!(check["status"], "warn", "{check}");
    let detail = check["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("Claude Code: transcripts deleted 10 days after their last write"),
        "{detail}"
    );
    assert!(detail.contains("1 file Cairn has not captured"), "{detail}");
    assert!(detail.ends_with("`cairn sync --agent claude`"), "{detail}");

    // A sync of another agent leaves it at risk and says so on its last line.
    let out = env.ok(&["sync", "--agent", "codex"]);
    let last = out.lines().last().unwrap();
    assert!(
        last.starts_with(
            "Warning: 1 transcript file Cairn has not captured will be deleted by Claude Code within 7 days"
        ) && last.ends_with("capture them now: cairn sync --agent claude"),
        "{out}"
    );
    let report = env.json(&["sync", "--agent", "codex"]);
    assert_eq!(report["retention"][0]["agent"], "claude");
    assert_eq!(report["retention"][0]["expiring"], 1, "{report}");

    // The command it names captures it.
    let out = env.ok(&["sync", "--agent", "claude"]);
    assert!(!out.contains("will be deleted"), "{out}");
    assert_eq!(retention(&env.json(&["doctor"]))["status"], "ok");
    // A transcript that grew since is at risk again.
    let mut f = std::fs::File::options().append(true).open(&old).unwrap();
    f.write_all(b"{\"type\":\"summary\",\"summary\":\"more\"}\n")
        .unwrap();
    f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(8 * 86_400))
        .unwrap();
    assert_eq!(retention(&env.json(&["doctor"]))["status"], "warn");
    // Forgotten, it is no transcript of Cairn's to capture: the sync the warning names passes
    // it over, so a warning for it would never go away.
    env.ok(&["forget", "--project", "spotter", "--yes"]);
    let out = env.ok(&["sync", "--agent", "claude"]);
    assert!(out.contains("forgotten file"), "{out}");
    assert!(!out.contains("will be deleted"), "{out}");
    assert_eq!(retention(&env.json(&["doctor"]))["status"], "ok");
}

/// Filters that match nothing say so, not that the archive is empty.
#[test]
fn sessions_filtered_to_nothing_say_the_filters_match_nothing() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let said = env.ok(&["sessions", "--branch", "refs/heads/no-such-branch"]);
    assert!(
        said.starts_with("No session matches these filters"),
        "{said}"
    );
    // A limit of 0 would show nothing and say nothing matched: a usage error, wherever a
    // list shows what it finds.
    for args in [
        &["sessions", "--limit", "0"][..],
        &["search", "phoenix", "--limit", "0"],
        &["skim", "--limit", "0"],
        &[
            "show",
            "55604662-cf2a-4331-851a-ec234028f8ca",
            "--limit",
            "0",
        ],
    ] {
        let out = env.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("0 is not in 1.."),
            "{args:?}"
        );
    }
    // A branch written as `link --to` takes it finds what its name finds, here and in search.
    let named = env.json(&["sessions", "--branch", "spotter-4te"]);
    assert!(!named.as_array().unwrap().is_empty());
    for written in [
        "refs/heads/spotter-4te",
        "ref:refs/heads/spotter-4te",
        "branch:spotter-4te",
    ] {
        assert_eq!(
            env.json(&["sessions", "--branch", written]),
            named,
            "{written}"
        );
    }
    let hits = |branch: &str| {
        env.json(&["search", "spotter", "--branch", branch, "--limit", "5"])
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(hits("refs/heads/spotter-4te"), hits("spotter-4te"));
    assert!(hits("spotter-4te") > 0);
    // A fresh machine: the default data dir, nothing in it yet.
    let empty = Env::new();
    let fresh = |args: &[&str]| {
        let out = empty
            .command()
            .env_remove("CAIRN_DATA_DIR")
            .args(args)
            .output();
        crate::support::succeeded(out.unwrap(), "cairn without $CAIRN_DATA_DIR")
    };
    assert!(fresh(&["sessions", "--agent", "codex"]).starts_with("No session matches"));
    assert!(fresh(&["sessions"]).starts_with("No sessions yet"));
}

/// A transcript that opens with the assistant speaking: its words are never shown as the
/// person's prompt.
#[test]
fn an_assistant_speaking_first_is_not_shown_as_the_prompt() {
    let env = Env::new();
    let dir = env.claude().join("-tmp-first");
    std::fs::create_dir_all(&dir).unwrap();
    let line = |uuid: &str, role: &str, content: serde_json::Value| {
        serde_json::json!({"type": role, "uuid": uuid, "sessionId": "assistant-first",
            "timestamp": "2026-03-01T10:00:00Z", "cwd": "/tmp/first",
            "message": {"role": role, "content": content}})
        .to_string()
    };
    let lines = [
        line(
            "a0",
            "assistant",
            serde_json::json!([{"type": "text", "text": "I am the assistant speaking first"}]),
        ),
        line("u1", "user", serde_json::json!("please tidy the parser")),
        line(
            "a1",
            "assistant",
            serde_json::json!([{"type": "text", "text": "Tidied."}]),
        ),
    ];
    std::fs::write(dir.join("assistant-first.jsonl"), lines.join("\n") + "\n").unwrap();
    env.ok(&["sync"]);
    let shown = env.ok(&["show", "assistant-first"]);
    assert!(!shown.contains("user: I am the assistant"), "{shown}");
    let turns = env.json(&["show", "assistant-first"]);
    for t in turns["turns"].as_array().unwrap() {
        assert_ne!(
            t["user_preview"], "I am the assistant speaking first",
            "{t}"
        );
    }
}

/// Codex compresses a rollout idle for a week to `rollout-….jsonl.zst` and deletes the plain
/// file. Such a file is found and read whole: a session first met compressed is captured as the
/// plain file would be; one captured before it was compressed gains nothing twice; an unchanged
/// one is not read again; a damaged one is a warning, not a crash.
#[test]
fn a_compressed_codex_rollout_is_read_like_the_plain_one() {
    let name = "rollout-2026-08-03T10-48-56-019fc8be-3658-7ca3-9e29-000000000000.jsonl";
    let plain = std::fs::read(fixtures().join("codex/small.jsonl")).unwrap();
    let compress = |dir: &std::path::Path| {
        std::fs::create_dir_all(dir).unwrap();
        let zst = dir.join(format!("{name}.zst"));
        std::fs::write(&zst, zstd::encode_all(&plain[..], 3).unwrap()).unwrap();
        zst
    };
    let sessions = |env: &Env| -> Vec<(String, u64)> {
        env.json(&["sessions", "--agent", "codex"])
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["session_key"].as_str().unwrap().to_owned(),
                    s["record_count"].as_u64().unwrap(),
                )
            })
            .collect()
    };

    // The plain file, as a reference.
    let reference = Env::new();
    let day = reference.codex().join("2026/08/03");
    std::fs::create_dir_all(&day).unwrap();
    std::fs::write(day.join(name), &plain).unwrap();
    let plain_sync = reference.json(&["sync", "--agent", "codex"]);
    let want = sessions(&reference);
    assert_eq!(want.len(), 1);
    assert!(want[0].1 > 0);

    // First met compressed: the same session, the same records.
    let env = Env::new();
    compress(&env.codex().join("2026/08/03"));
    let first = env.json(&["sync", "--agent", "codex"]);
    let messages = |r: &serde_json::Value| -> Vec<String> {
        r["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| format!("{} {}", w["line"], w["message"]))
            .collect()
    };
    assert_eq!(messages(&first), messages(&plain_sync), "{first}");
    assert_eq!(sessions(&env), want);
    let again = env.json(&["sync", "--agent", "codex"]);
    assert_eq!(
        (&again["files_scanned"], &again["records_added"]),
        (&1.into(), &0.into()),
        "{again}"
    );

    // Captured plain, then compressed by Codex (the plain file deleted): nothing twice.
    std::fs::remove_file(day.join(name)).unwrap();
    compress(&day);
    let after = reference.json(&["sync", "--agent", "codex"]);
    assert_eq!(after["records_added"], 0, "{after}");
    assert_eq!(sessions(&reference), want);

    // Damaged: cut in the middle of its frame.
    let broken = Env::new();
    let zst = compress(&broken.codex().join("2026/08/03"));
    let bytes = std::fs::read(&zst).unwrap();
    std::fs::write(&zst, &bytes[..bytes.len() / 2]).unwrap();
    let report = broken.json(&["sync", "--agent", "codex"]);
    let warnings = report["warnings"].to_string();
    assert!(warnings.contains("read stopped"), "{report}");
}

/// A sub-agent written as `agent-<id>.jsonl` beside the session files (some 2.0-era Claude Code
/// builds) is the same sub-agent session as one under `<session>/subagents/`: it was read as
/// a main file whose lines name the parent's id, so its records and its turn were folded into
/// the parent and no sub-agent session existed.
#[test]
fn a_claude_sub_agent_beside_the_session_files_is_a_sub_agent() {
    let parent = "ae4a77f8-aedd-4bc1-888f-c94edc91af04";
    /// Each session: key, relation, agent id, records, turns.
    type Row = (String, Option<String>, Option<String>, i64, i64);
    let layout = |nested: bool| -> Vec<Row> {
        let env = Env::new();
        let dir = env.claude().join("-home-USER-projects-spotter");
        std::fs::create_dir_all(&dir).unwrap();
        let fixtures = fixtures().join("claude");
        std::fs::copy(
            fixtures.join(format!("{parent}.jsonl")),
            dir.join(format!("{parent}.jsonl")),
        )
        .unwrap();
        let sub = fixtures.join(format!("{parent}/subagents/agent-aac57f5.jsonl"));
        let place = if nested {
            dir.join(format!("{parent}/subagents"))
        } else {
            dir.clone()
        };
        std::fs::create_dir_all(&place).unwrap();
        std::fs::copy(sub, place.join("agent-aac57f5.jsonl")).unwrap();
        env.ok(&["sync", "--agent", "claude"]);
        let conn = rusqlite::Connection::open(env.data().join("cairn.db")).unwrap();
        conn.prepare(
            "SELECT session_key, relation, agent_id, record_count, turn_count FROM sessions ORDER BY session_key",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
    };
    let beside = layout(false);
    assert_eq!(beside, layout(true));
    assert_eq!(beside.len(), 2, "{beside:?}");
    assert!(
        beside
            .iter()
            .any(|s| s.1.as_deref() == Some("subagent") && s.2.as_deref() == Some("aac57f5")),
        "{beside:?}"
    );
}

/// `doctor` is what a person runs when something is wrong, so a `config.toml` that does not
/// load does not stop it (every other command refuses, naming the file): its first check fails
/// with the file, the line and what is wrong there, the others still run, and it exits 1.
#[test]
fn doctor_runs_with_a_broken_config_and_names_it_first() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    // A config that loads is the first check too, and says which file (or the defaults).
    let config_checks = || -> Vec<serde_json::Value> {
        let out = env.run(&["--json", "doctor"]);
        let doctor: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        doctor["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["name"] == "config")
            .cloned()
            .collect()
    };
    let first = env.json(&["doctor"])["checks"][0].clone();
    assert_eq!(
        (&first["name"], &first["status"]),
        (&serde_json::json!("config"), &serde_json::json!("ok")),
        "{first}"
    );
    std::fs::write(
        env.data().join("config.toml"),
        "# mine\n[sources.claude]\ndirs = \"/x\"\n",
    )
    .unwrap();
    let out = env.run(&["sessions"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("config.toml"));

    let out = env.run(&["--json", "doctor"]);
    assert_eq!(out.status.code(), Some(1));
    let doctor: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let checks = doctor["checks"].as_array().unwrap();
    assert_eq!(checks[0]["name"], "config");
    assert_eq!(checks[0]["status"], "fail");
    let detail = checks[0]["detail"].as_str().unwrap();
    assert!(
        detail.contains("config.toml") && detail.contains("line 3") && !detail.contains('\n'),
        "{detail}"
    );
    assert!(
        checks
            .iter()
            .any(|c| c["name"] == "archive" && c["status"] == "ok"),
        "{doctor}"
    );
    let human = String::from_utf8(env.run(&["doctor"]).stdout).unwrap();
    assert!(
        human.lines().next().unwrap_or_default().starts_with("FAIL"),
        "{human}"
    );
    // One config check, failed or not.
    assert_eq!(config_checks().len(), 1);
    std::fs::write(env.data().join("config.toml"), "# mine\n").unwrap();
    let fixed = config_checks();
    assert_eq!(fixed.len(), 1, "{fixed:?}");
    assert_eq!(fixed[0]["status"], "ok");
    assert!(
        fixed[0]["detail"]
            .as_str()
            .unwrap()
            .ends_with("config.toml"),
        "{fixed:?}"
    );
}

/// A session's parse warnings stay readable after the sync that printed them: `show` lists
/// them after the turns, and a session without any says nothing of warnings.
#[test]
fn show_lists_what_the_parsers_could_not_read() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let list = env.json(&["sessions"]);
    let sessions = list.as_array().unwrap();
    let key_where = |warned: bool| {
        sessions
            .iter()
            .find(|s| (s["warnings"].as_u64().unwrap() > 0) == warned)
            .map(|s| s["session_key"].as_str().unwrap().to_owned())
            .unwrap()
    };
    let warned = env.ok(&["show", &key_where(true)]);
    assert!(warned.contains("parse warning"), "{warned}");
    assert!(
        warned.contains("timestamp \"[trimmed for fixture]\" is not RFC 3339"),
        "{warned}"
    );
    let clean = env.ok(&["show", &key_where(false)]);
    assert!(!clean.contains("parse warning"), "{clean}");
}

/// Records of a kind this build does not read are not dropped in silence: `show` counts them
/// by kind with the parse warnings, and says what reads them.
#[test]
fn show_counts_the_records_this_build_does_not_read() {
    let env = Env::new();
    let dir = env.codex().join("2026/08/03");
    std::fs::create_dir_all(&dir).unwrap();
    let lines = [
        r#"{"timestamp":"2026-08-03T10:00:00Z","type":"session_meta","payload":{"id":"unread-1","cwd":"/w"}}"#,
        r#"{"timestamp":"2026-08-03T10:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Add rate limiting"}]}}"#,
        r#"{"timestamp":"2026-08-03T10:00:02Z","type":"response_item","payload":{"type":"hologram","text":"from a newer Codex"}}"#,
        r#"{"timestamp":"2026-08-03T10:00:03Z","type":"response_item","payload":{"type":"hologram","text":"again"}}"#,
    ];
    std::fs::write(
        dir.join("rollout-2026-08-03T10-00-00-unread-1.jsonl"),
        lines.join("\n") + "\n",
    )
    .unwrap();
    env.ok(&["sync"]);
    let shown = env.ok(&["show", "unread-1"]);
    assert!(shown.contains("Add rate limiting"), "{shown}");
    assert!(
        shown.contains("not read, not shown: response_item:hologram ×2")
            && shown.contains("cairn reindex"),
        "{shown}"
    );
}

/// A source dir a person named that does not exist is said at every sync, not only by doctor:
/// a typo in config.toml otherwise reads as "nothing new".
#[test]
fn sync_names_a_configured_source_dir_that_does_not_exist() {
    let env = Env::new();
    let missing = env.root.path().join("typo").join("projects");
    std::fs::create_dir_all(env.data()).unwrap();
    std::fs::write(
        env.data().join("config.toml"),
        format!(
            "[sources.claude]\ndirs = [{:?}]\n",
            missing.to_str().unwrap()
        ),
    )
    .unwrap();
    let report = env.json(&["sync", "--agent", "claude"]);
    let warnings = report["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w["path"] == missing.to_str().unwrap()
                && w["message"]
                    .as_str()
                    .unwrap()
                    .contains("named in config.toml's [sources.claude] dirs, does not exist")),
        "{report}"
    );
    std::fs::create_dir_all(&missing).unwrap();
    let report = env.json(&["sync", "--agent", "claude"]);
    assert_eq!(report["warnings"], serde_json::json!([]), "{report}");

    // A folder under an agent's home variable the agent has not made yet
    // (`$CODEX_HOME/archived_sessions`) is no mistake of the person's.
    let codex_home = env.root.path().join("codex-profile");
    std::fs::create_dir_all(codex_home.join("sessions")).unwrap();
    let out = env
        .command()
        .env_remove("CODEX_SESSIONS_DIR")
        .env("CODEX_HOME", &codex_home)
        .args(["--json", "sync", "--agent", "codex"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["warnings"], serde_json::json!([]), "{report}");
}

/// A session key shortened to a few hex digits (as `recall extract` lists them) names the one
/// session it starts; too short, or starting two, it names none.
#[test]
fn a_shortened_session_key_names_the_one_session_it_starts() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let list = env.json(&["sessions"]);
    let keys: Vec<String> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session_key"].as_str().unwrap().to_owned())
        .collect();
    let key = &keys[0];
    let short = &key[..7 + 8];
    let shown = env.json(&["show", short]);
    assert_eq!(shown["session_key"], key.as_str());
    let too_short = env.run(&["show", &key[..7 + 4]]);
    assert_eq!(too_short.status.code(), Some(1));

    // Two keys starting alike: the prefix is ambiguous.
    let db = env.whole_db();
    // Alike in 6 digits, apart from the 7th on.
    let fill = if key.as_bytes()[7 + 6] == b'f' {
        "0"
    } else {
        "f"
    };
    let twin = format!("{}{}", &key[..7 + 6], fill.repeat(key.len() - 7 - 6));
    assert_ne!(&twin, key);
    db.execute(
        "UPDATE sessions SET session_key = ?1 WHERE session_key = ?2",
        [&twin, &keys[1]],
    )
    .unwrap();
    drop(db);
    assert_eq!(env.run(&["show", &key[..7 + 6]]).status.code(), Some(1));
    assert_eq!(
        env.json(&["show", &key[..7 + 7]])["session_key"],
        key.as_str()
    );
}

/// A team archive set up in config.toml and never pushed to: doctor names it as every team
/// message does, asks for no password, and warns about a `[team]` that cannot name a server.
#[test]
fn doctor_names_the_team_archive_set_up_and_warns_about_a_broken_one() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let config = env.data().join("config.toml");
    std::fs::write(
        &config,
        "[team]\nhost = \"127.0.0.1\"\ndatabase = \"team\"\nuser = \"ann\"\n",
    )
    .unwrap();
    let doctor = env.json(&["doctor"]);
    let team = crate::support::check(&doctor, "team archive");
    assert_eq!(team["status"], "ok", "{team}");
    assert_eq!(
        team["detail"],
        "postgres://ann@127.0.0.1/team (config.toml); never pushed to: `cairn team push` sends this archive"
    );
    std::fs::write(
        &config,
        "[team]\nhost = \"127.0.0.1\"\ndatabase = \"team\"\n",
    )
    .unwrap();
    let doctor = env.json(&["doctor"]);
    let team = crate::support::check(&doctor, "team archive");
    assert_eq!(team["status"], "warn", "{team}");
    assert!(
        team["detail"]
            .as_str()
            .unwrap()
            .starts_with("[team] in config.toml: "),
        "{team}"
    );
}

/// CLI.md: doctor checks endpoints. From config.toml only (it contacts no server): where each
/// one is, whether it is this machine, and whether its key variable is set here.
#[test]
fn doctor_names_each_configured_endpoint_without_contacting_it() {
    let env = Env::new();
    std::fs::create_dir_all(env.data()).unwrap();
    std::fs::write(
        env.data().join("config.toml"),
        "[insights]\nendpoint = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n\
         [recall.extract]\nmodel = \"x\"\n[recall.extract.servers.far]\n\
         endpoint = \"https://models.example.invalid/v1\"\napi_key_env = \"CAIRN_TEST_UNSET_KEY_VAR\"\n",
    )
    .unwrap();
    let doctor = env.json(&["doctor"]);
    let check = |name: &str| crate::support::check(&doctor, name);
    let local = check("endpoint insights");
    assert_eq!(local["status"], "ok");
    assert!(
        local["detail"]
            .as_str()
            .unwrap()
            .contains("on this machine")
    );
    let far = check("endpoint recall.extract.servers.far");
    assert_eq!(far["status"], "warn");
    let detail = far["detail"].as_str().unwrap();
    assert!(
        detail.contains("another machine") && detail.contains("$CAIRN_TEST_UNSET_KEY_VAR"),
        "{detail}"
    );

    // A key pasted where its variable's name goes fails the check, as extraction refuses it,
    // and is never repeated, in JSON or on the terminal.
    for key in [
        format!("ghp_{}", "Zq8xW3vN5bT1kL7mP0aS9dF2gH4jK6cV8eR1"),
        // An Azure key: 32 hex digits, a valid variable name by its characters.
        "3f9c0a7be15d4c2f8e6a9b0d1c2e3f4a".to_owned(),
    ] {
        std::fs::write(
        env.data().join("config.toml"),
        format!(
            "[insights]\nendpoint = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\napi_key_env = \"{key}\"\n"
        ),
    )
    .unwrap();
        // A failed check: doctor exits 1.
        let out = env.run(&["--json", "doctor"]);
        assert_eq!(out.status.code(), Some(1));
        let doctor: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let pasted = crate::support::check(&doctor, "endpoint insights");
        assert_eq!(pasted["status"], "fail", "{pasted}");
        let detail = pasted["detail"].as_str().unwrap();
        assert!(
            detail
                .contains("api_key_env looks like a key, not the name of an environment variable"),
            "{detail}"
        );
        assert!(!doctor.to_string().contains(&key[4..20]), "{doctor}");
        let out = env.run(&["doctor"]);
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains(&key[4..20]),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

/// With no folder named for Aider, doctor says what a sync reads: the history in every
/// repository a captured session ran in, how many there are and how many hold one (it said
/// "none set" while a sync read them).
#[test]
fn doctor_says_aider_is_read_in_the_repositories_sessions_ran_in() {
    let env = Env::new();
    let repo = crate::branch::repo(env.root.path());
    let mut t = crate::branch::Transcript::new(&env, "s-aider-doctor", &repo, "main");
    t.user("tidy the readme");
    t.say("Done.");
    std::fs::write(
        repo.join(".aider.chat.history.md"),
        "\n# aider chat started at 2026-05-01 10:00:00\n\n#### tidy the readme\n\nDone.\n",
    )
    .unwrap();
    env.ok(&["sync"]);
    let doctor = env.json(&["doctor"]);
    let aider = crate::support::check(&doctor, "aider sources");
    let detail = aider["detail"].as_str().unwrap();
    assert!(
        detail.starts_with(
            "a sync reads the .aider.chat.history.md of the repository captured sessions ran in (it holds one)"
        ),
        "{detail}"
    );
    assert!(!detail.contains("none set"), "{detail}");
    // Crush is read the same way: the repository holds no Crush database.
    let crush = crate::support::check(&doctor, "crush sources");
    assert!(
        crush["detail"]
            .as_str()
            .unwrap()
            .contains("(it holds none)"),
        "{crush}"
    );
    // What doctor counts is what a sync read.
    let sessions = env.json(&["sessions", "--agent", "aider"]);
    assert_eq!(sessions.as_array().map(Vec::len), Some(1), "{sessions}");
}

/// A data dir with no room to write is a full disk, not a read-only archive: doctor fails the
/// data dir check with the free space, Cairn's own files and the fix, where it said "read-only"
/// (and a person chmodded). No room is made with a file-size limit (`ulimit -f`: EFBIG), the
/// one no-room errno a test can give a process; SIGXFSZ is ignored, as a write then fails
/// instead of killing it.
#[cfg(target_os = "linux")]
#[test]
fn doctor_tells_no_room_from_a_read_only_archive() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let base = env.command();
    let mut cmd = std::process::Command::new("sh");
    cmd.env_clear();
    for (key, value) in base.get_envs() {
        if let Some(value) = value {
            cmd.env(key, value);
        }
    }
    let out = cmd
        .current_dir(env.root.path())
        .args([
            "-c",
            "trap '' XFSZ; ulimit -f 1 && exec \"$0\" --json doctor",
            env!("CARGO_BIN_EXE_cairn"),
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let doctor: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let dir = crate::support::check(&doctor, "data dir");
    let detail = dir["detail"].as_str().unwrap();
    assert_eq!(dir["status"], "fail", "{detail}");
    for said in [
        "not a read-only archive",
        "no room to write",
        "file-size limit",
        "free on its file system",
        "cairn.db ",
        "cairn.db-wal ",
        "retained/ ",
    ] {
        assert!(detail.contains(said), "{said}: {detail}");
    }
    assert!(!detail.contains("chmod"), "{detail}");
    // Without the limit the same data dir is fine, and says how much room it has.
    let doctor = env.json(&["doctor"]);
    let dir = crate::support::check(&doctor, "data dir");
    assert_eq!(dir["status"], "ok", "{dir}");
    assert!(dir["detail"].as_str().unwrap().ends_with(" free)"), "{dir}");
}
