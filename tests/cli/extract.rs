//! `cairn recall extract …` end to end against a loopback OpenAI-compatible server started by
//! the test, over the real fixture transcripts.

use std::process::Output;

use serde_json::Value;

use crate::fake_llm::{FakeLlm, Reply};
use crate::support::Env;

const KEY_VAR: &str = "CAIRN_TEST_LLM_KEY";
const KEY: &str = "test-key-3f9a1c";

fn config(env: &Env, body: &str) {
    std::fs::write(env.data().join("config.toml"), body).unwrap();
}

fn configured(fake: &FakeLlm, extra: &str) -> Env {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    configure(&env, fake, extra);
    env
}

fn configure(env: &Env, fake: &FakeLlm, extra: &str) {
    config(
        env,
        &format!(
            "[recall.extract]\nenabled = true\nmodel = \"test-model\"\n{extra}\n\
             [recall.extract.servers.local]\nendpoint = \"{}\"\napi_key_env = \"{KEY_VAR}\"\n",
            fake.url()
        ),
    );
}

fn cairn(env: &Env, args: &[&str]) -> Output {
    env.command().env(KEY_VAR, KEY).args(args).output().unwrap()
}

fn ok(env: &Env, args: &[&str]) -> String {
    let out = cairn(env, args);
    assert!(
        out.status.success(),
        "cairn {args:?} failed ({}): {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn json(env: &Env, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    serde_json::from_str(&ok(env, &all)).unwrap()
}

#[test]
fn preview_then_run_then_status() {
    let fake = FakeLlm::start(Some(KEY));
    let env = configured(&fake, "");
    let preview = json(&env, &["recall", "extract", "preview"]);
    let (sessions, units) = (
        preview["sessions"].as_u64().unwrap(),
        preview["units"].as_u64().unwrap(),
    );
    assert!(sessions >= 5 && units >= sessions, "{preview}");
    assert!(
        preview["estimated_input_tokens"].as_u64().unwrap()
            > preview["chars"].as_u64().unwrap() / 5
    );
    // --project and --since narrow the same list.
    let list = preview["sessions_list"].as_array().unwrap();
    let project = list[0]["project"].as_str().unwrap();
    let in_project = list.iter().filter(|s| s["project"] == project).count() as u64;
    assert!(in_project < sessions, "the fixtures span several projects");
    let narrowed = json(
        &env,
        &["recall", "extract", "preview", "--project", project],
    );
    assert_eq!(
        narrowed["sessions"].as_u64(),
        Some(in_project),
        "{narrowed}"
    );
    let future = json(
        &env,
        &["recall", "extract", "preview", "--since", "2099-01-01"],
    );
    assert_eq!(future["sessions"], 0, "{future}");
    assert!(fake.requests().is_empty(), "a preview sends nothing");
    let human = ok(&env, &["recall", "extract", "preview"]);
    assert!(
        human.contains(&format!("Would read: {sessions} sessions, {units} units")),
        "{human}"
    );

    let run = json(&env, &["recall", "extract", "run"]);
    assert_eq!(run["sessions"].as_u64(), Some(sessions), "{run}");
    // The pass's lock file is private like everything in the data dir.
    let lock = std::fs::metadata(env.data().join("extract.lock")).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&lock.permissions()) & 0o777,
        0o600
    );
    assert_eq!(run["units"].as_u64(), Some(units));
    assert_eq!(run["failed"], 0);
    assert_eq!(run["activated"], true);
    assert!(run["entries"].as_u64().unwrap() > 0);
    assert_eq!(fake.chats().len() as u64, units);
    assert_eq!(
        fake.violations(),
        Vec::<String>::new(),
        "shape and bearer key"
    );
    // The fixtures' absolute paths never leave: paths under a session's directory arrive
    // relative, any other absolute path is removed.
    for c in fake.requests() {
        assert!(!c.body.contains("/home/"), "an absolute path left");
    }

    let status = json(&env, &["recall", "extract", "status"]);
    assert_eq!(status["state"], "active");
    // Every eligible session is done: those the pass read, as it counts them (a session with
    // nothing to read is counted apart).
    let eligible: u64 = status["coverage"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["sessions"].as_u64().unwrap())
        .sum();
    assert_eq!(status["sessions_done"].as_u64(), Some(eligible));
    assert_eq!(eligible, sessions);
    assert_eq!(status["not_started"], 0);
    assert_eq!(status["units_done"], status["units_total"]);
    assert_eq!(status["generations"].as_array().unwrap().len(), 1);
    assert_eq!(status["endpoint"], fake.url());
    let human = ok(&env, &["recall", "extract", "status"]);
    assert!(human.contains("Extraction: enabled"), "{human}");
    assert!(
        human.contains("(active)") && human.contains("Units: ") && human.contains("(100%)"),
        "{human}"
    );

    // The entries wait in the review inbox, untrusted.
    let listed = json(
        &env,
        &[
            "recall",
            "list",
            "--review-state",
            "unreviewed_auto",
            "--limit",
            "500",
        ],
    );
    assert_eq!(
        listed.as_array().unwrap().len() as u64,
        run["entries"].as_u64().unwrap()
    );
    let brief = json(&env, &["recall", "brief", "dev server"]);
    assert!(
        brief["entry_ids"].as_array().unwrap().is_empty(),
        "briefs are trusted-only"
    );

    // A second run has nothing to do.
    let again = ok(&env, &["recall", "extract", "run"]);
    assert!(
        again.contains("Sessions: 0 done, 0 failed") && again.contains("Entries: 0 new"),
        "{again}"
    );
}

/// Status names its entries by where they stand, in the words `cairn recall` and `review` use:
/// entries extraction published wait unreviewed, none trusted until a person accepts one; a
/// rejected one is said so. Never "served" for what agents are not given.
#[test]
fn status_says_which_entries_are_trusted_unreviewed_or_rejected() {
    let fake = FakeLlm::start(Some(KEY));
    let env = configured(&fake, "");
    let run = json(&env, &["recall", "extract", "run"]);
    let n = run["entries"].as_u64().unwrap();
    assert!(n >= 3, "{run}");
    let status = json(&env, &["recall", "extract", "status"]);
    assert_eq!(
        (
            &status["entries"],
            &status["entries_published"],
            &status["entries_trusted"],
            &status["entries_unreviewed"],
            &status["entries_rejected"]
        ),
        (&n.into(), &n.into(), &0.into(), &n.into(), &0.into()),
        "{status}"
    );
    let human = ok(&env, &["recall", "extract", "status"]);
    assert!(
        human.contains(&format!(
            "Entries: {n}: 0 trusted (accepted by a person), {n} unreviewed (in the review inbox)\n"
        )),
        "{human}"
    );
    assert!(!human.contains("served"), "{human}");
    let overview = json(&env, &["recall"]);
    assert_eq!(overview["trusted"], status["entries_trusted"]);
    assert_eq!(overview["to_review"], status["entries_unreviewed"]);

    // A person accepts one and rejects another.
    let queue = json(&env, &["recall", "review", "--limit", "2"]);
    let id = |i: usize| {
        queue["queue"][i]["entry"]["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    ok(&env, &["recall", "review", "--accept", &id(0)]);
    ok(&env, &["recall", "review", "--reject", &id(1)]);
    let status = json(&env, &["recall", "extract", "status"]);
    assert_eq!(
        (
            &status["entries_trusted"],
            &status["entries_unreviewed"],
            &status["entries_rejected"]
        ),
        (&1.into(), &(n - 2).into(), &1.into()),
        "{status}"
    );
    let human = ok(&env, &["recall", "extract", "status"]);
    assert!(
        human.contains(&format!(
            "Entries: {n}: 1 trusted (accepted by a person), {} unreviewed (in the review inbox), 1 rejected\n",
            n - 2
        )),
        "{human}"
    );
    let overview = json(&env, &["recall"]);
    assert_eq!(overview["trusted"], 1);
    assert_eq!(overview["to_review"], n - 2);
}

#[test]
fn run_scoped_to_a_session_with_human_output() {
    let fake = FakeLlm::start(Some(KEY));
    let env = configured(&fake, "concurrency = 1");
    let out = ok(
        &env,
        &[
            "recall",
            "extract",
            "run",
            "--session",
            "55604662-cf2a-4331-851a-ec234028f8ca",
            "--progress",
        ],
    );
    assert!(out.starts_with("Sessions: 1 done, 0 failed\n"), "{out}");
    // The first generation is served from its first pass: the entries reach the inbox.
    assert!(
        out.contains("Entries: ")
            && out.contains("Generation activated")
            && out.contains("Review the new entries with `cairn recall review`."),
        "{out}"
    );
    let chats = fake.chats();
    assert!(!chats.is_empty());
    let again = cairn(&env, &["recall", "extract", "activate"]);
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("is already active"));
    // --limit: the most recent other session only.
    fake.clear();
    let r = json(&env, &["recall", "extract", "run", "--limit", "1"]);
    assert_eq!(r["sessions"], 1);
    let bad = cairn(&env, &["recall", "extract", "run", "--since", "someday"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("YYYY-MM-DD"));
}

#[test]
fn a_failing_server_stops_the_run_with_exit_1() {
    let fake = FakeLlm::start(Some(KEY));
    let env = configured(&fake, "");
    fake.fail_after(
        0,
        Some(Reply::json(
            404,
            serde_json::json!({"error": {"message": "model not found"}}),
        )),
    );
    let out = cairn(&env, &["recall", "extract", "run"]);
    assert_eq!(out.status.code(), Some(1));
    // The report on stdout, the reason on stderr as every error is.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("Sessions: 0 done"), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("cairn: extraction stopped early:")
            && stderr.contains("HTTP 404")
            && stderr.contains("model not found"),
        "{stderr}"
    );
    assert!(!stdout.contains("HTTP 404"), "{stdout}");
    let status = json(&env, &["recall", "extract", "status"]);
    assert_eq!(status["state"], "building");
    assert!(
        status["last_run"]["aborted"]
            .as_str()
            .unwrap()
            .contains("404")
    );
}

/// A pass that failed a session (here: the model answered its first unit with prose) says so
/// on stderr and exits 1, after its report; the other sessions were read.
#[test]
fn a_failed_session_fails_the_run_with_exit_1_and_names_it() {
    let fake = FakeLlm::start(Some(KEY));
    let env = configured(&fake, "concurrency = 1");
    fake.push(Reply::chat("I cannot comply with that request.", "stop"));
    let out = cairn(&env, &["recall", "extract", "run"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(" done, 1 failed\n"), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("cairn: 1 session failed, the first ")
            && stderr.contains(" session of 20")
            && stderr.contains("not JSON")
            && stderr.contains("--session"),
        "{stderr}"
    );
    // With --json: the report on stdout, the error as a document on stderr; nothing is left,
    // so the next run succeeds (the failed session waits out its back-off).
    let fake = FakeLlm::start(Some(KEY));
    let env = configured(&fake, "concurrency = 1");
    fake.push(Reply::chat("I cannot comply with that request.", "stop"));
    let out = cairn(&env, &["--json", "recall", "extract", "run"]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["failed"], 1, "{report}");
    assert!(report["sessions"].as_u64().unwrap() >= 1, "{report}");
    let err: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["kind"], "external", "{err}");
    let again = json(&env, &["recall", "extract", "run"]);
    assert_eq!(again["failed"], 0, "{again}");
}

/// A server whose probe answer the schema refuses: the doctor says FAIL and exits 1, in either
/// form.
#[test]
fn a_failing_doctor_check_exits_1() {
    let fake = FakeLlm::start(Some(KEY));
    let env = Env::new();
    configure(&env, &fake, "");
    // `/models` first, then the probe.
    fake.push(Reply::json(200, serde_json::json!({"data": []})));
    fake.push(Reply::chat("I cannot comply with that request.", "stop"));
    let out = cairn(&env, &["recall", "extract", "doctor"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("FAIL probe"));
    // `/models` first, then the probe.
    fake.push(Reply::json(200, serde_json::json!({"data": []})));
    fake.push(Reply::chat("I cannot comply with that request.", "stop"));
    let out = cairn(&env, &["--json", "recall", "extract", "doctor"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["ok"] == false),
        "{v}"
    );
}

#[test]
fn config_errors_name_the_file_and_the_key() {
    let env = Env::new();
    let path = env.data().join("config.toml");
    for (body, key) in [
        (
            "[recall.extract]\nenabled = true\nmodel = \"m\"\n[recall.extract.servers.x]\nendpoint = \"http://llm.example.com/v1\"\n",
            "recall.extract.servers.x.endpoint",
        ),
        ("[recall.extract]\nenabled = true\n", "recall.extract.model"),
        (
            "[recall.extract]\nmodel = \"m\"\nquiet_period = \"half an hour\"\n",
            "recall.extract.quiet_period",
        ),
        (
            "[recall.extract]\nmodel = \"m\"\nconcurency = 2\n",
            "concurency",
        ),
    ] {
        config(&env, body);
        let out = cairn(&env, &["recall", "extract", "run"]);
        assert_eq!(out.status.code(), Some(1), "{body}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&path.display().to_string()) && err.contains(key),
            "{body}: {err}"
        );
    }
    // Disabled extraction refuses to send, and says how to opt in: through setup.
    config(
        &env,
        "[recall.extract]\nmodel = \"m\"\n[recall.extract.servers.x]\nendpoint = \"http://127.0.0.1:9/v1\"\n",
    );
    let out = cairn(&env, &["recall", "extract", "run"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is off") && err.contains("`cairn recall extract setup`"),
        "{err}"
    );
    // …but preview and status work without it.
    assert!(
        cairn(&env, &["recall", "extract", "preview"])
            .status
            .success()
    );
    assert!(
        cairn(&env, &["recall", "extract", "status"])
            .status
            .success()
    );
}

#[test]
fn doctor_probes_the_server() {
    let fake = FakeLlm::start(Some(KEY));
    let env = Env::new();
    configure(&env, &fake, "");
    let out = ok(&env, &["recall", "extract", "doctor"]);
    assert!(out.contains("ok   models: test-model is served"), "{out}");
    assert!(
        out.contains("ok   probe: a strict-schema extraction worked: 1 entry"),
        "{out}"
    );
    assert!(
        out.contains(&format!("Server: local {}", fake.url())),
        "{out}"
    );
    assert_eq!(fake.chats().len(), 1);
    assert!(fake.chats()[0].user().contains("port 4173"));
    assert!(!out.contains("Extraction is off"), "{out}");
    // Working, but switched off: said here rather than when `run` refuses.
    let text = std::fs::read_to_string(env.data().join("config.toml")).unwrap();
    config(&env, &text.replace("enabled = true", "enabled = false"));
    let off = ok(&env, &["recall", "extract", "doctor"]);
    assert!(
        off.contains("Extraction is off") && off.contains("`cairn recall extract setup`"),
        "{off}"
    );
    config(&env, &text);
    fake.fail_after(
        0,
        Some(Reply::json(401, serde_json::json!({"error": "nope"}))),
    );
    let bad = cairn(&env, &["recall", "extract", "doctor"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stdout).contains("FAIL probe"));
}

/// One Claude Code record of a made-up session.
fn record(sid: &str, n: u32, body: Value) -> String {
    let mut v = serde_json::json!({"sessionId": sid, "cwd": "/work/planted", "gitBranch": "main",
        "timestamp": format!("2026-03-01T10:00:{n:02}.000Z"), "uuid": format!("{sid}-u{n}")});
    v.as_object_mut()
        .unwrap()
        .extend(body.as_object().unwrap().clone());
    v.to_string()
}

#[test]
fn planted_secrets_never_reach_the_server_and_entries_carry_evidence() {
    let fake = FakeLlm::start(Some(KEY));
    let env = Env::new();
    let sid = "0b7c5e1a-7d3e-4c1b-9a61-5f3f0c2d9e11";
    let (aws, pat) = (
        "AKIAIOSFODNN7EXAMPLE",
        "ghp_EXAMPLE00000000000000000000000000000",
    );
    let home = env.home().display().to_string();
    let lines = [
        record(
            sid,
            1,
            serde_json::json!({"type": "user", "message": {"role": "user",
                "content": format!("Deploy with key {aws} and token {pat}; notes in {home}/notes/deploy.md")}}),
        ),
        record(
            sid,
            2,
            serde_json::json!({"type": "assistant", "message": {"id": "msg_1", "role": "assistant", "model": "claude-x",
                "content": [{"type": "text", "text": format!("Exported AWS_ACCESS_KEY_ID={aws}; the deploy script now reads it from the environment.")}]}}),
        ),
        record(
            sid,
            3,
            serde_json::json!({"type": "user", "message": {"role": "user",
                "content": "Good. Always run the smoke test after a deploy."}}),
        ),
        record(
            sid,
            4,
            serde_json::json!({"type": "assistant", "message": {"id": "msg_2", "role": "assistant", "model": "claude-x",
                "content": [{"type": "text", "text": "Noted: smoke test after every deploy."}]}}),
        ),
    ];
    let dir = env.claude().join("-work-planted");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{sid}.jsonl")), lines.join("\n") + "\n").unwrap();
    env.ok(&["sync"]);
    configure(&env, &fake, "");

    let run = json(&env, &["recall", "extract", "run", "--session", sid]);
    assert_eq!(run["sessions"], 1, "{run}");
    assert_eq!(run["failed"], 0, "{run}");
    let n = run["entries"].as_u64().unwrap();
    assert!(n > 0, "{run}");
    let chats = fake.chats();
    assert!(!chats.is_empty());
    assert!(
        chats.iter().any(|c| c.body.contains("smoke test")),
        "the session's text was sent"
    );
    for c in fake.requests() {
        for s in [aws, pat, home.as_str()] {
            assert!(!c.body.contains(s), "{s} reached the server: {}", c.body);
        }
    }

    let listed = json(
        &env,
        &["recall", "list", "--review-state", "unreviewed_auto"],
    );
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len() as u64, n);
    for e in listed {
        assert_eq!(e["review_state"], "unreviewed_auto", "{e}");
        let id = e["id"].as_str().unwrap();
        let got = json(&env, &["recall", "get", id]);
        let ev = got["evidence"].as_array().unwrap();
        assert!(!ev.is_empty(), "{got}");
        for v in ev {
            let (a, b) = (
                v["ordinal_start"].as_u64().unwrap(),
                v["ordinal_end"].as_u64().unwrap(),
            );
            assert!(a <= b, "{v}");
            assert!(v["session_key"].as_str().is_some_and(|k| !k.is_empty()));
            assert!(!v["snippet"].to_string().contains(aws), "{v}");
        }
    }
}

/// `cairn recall extract run` started in the background, its output dropped (to be killed).
fn spawn_run(env: &Env) -> std::process::Child {
    env.command()
        .env(KEY_VAR, KEY)
        .args(["recall", "extract", "run"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// What a pass decided, independent of entry ids and clocks: generations, per-session
/// progress, and every entry it wrote with its unit, state and evidence.
fn extraction_dump(env: &Env) -> String {
    let conn = env.whole_db();
    let mut out = String::new();
    let mut rows = |sql: &str, n: usize| {
        let mut stmt = conn.prepare(sql).unwrap();
        let mut lines: Vec<String> = stmt
            .query_map([], |r| {
                (0..n)
                    .map(|i| {
                        r.get::<_, rusqlite::types::Value>(i)
                            .map(|v| format!("{v:?}"))
                    })
                    .collect::<rusqlite::Result<Vec<_>>>()
            })
            .unwrap()
            .map(|r| r.unwrap().join(" | "))
            .collect();
        lines.sort();
        for l in lines {
            out.push_str(&l);
            out.push('\n');
        }
        out.push_str("--\n");
    };
    rows(
        "SELECT fingerprint, state, model FROM recall_extract_generations",
        3,
    );
    rows(
        "SELECT s.session_key, p.state, p.unit_cursor, p.units_total, p.covered_ordinal
         FROM recall_extract_progress p JOIN sessions s ON s.id = p.session_id",
        5,
    );
    rows(
        "SELECT s.session_key, x.unit_index, x.state, e.type, e.status, e.review_state, e.title, e.body,
                (SELECT group_concat(v.ordinal_start || '-' || v.ordinal_end, ',') FROM recall_evidence v
                 WHERE v.entry_id = e.id)
         FROM recall_extract_entries x JOIN recall_entries e ON e.id = x.entry_id
         JOIN sessions s ON s.id = x.session_id",
        9,
    );
    out
}

/// A pass SIGKILLed at several points and then run again ends exactly where one uninterrupted
/// pass ends: no unit extracted twice or skipped, no entry of a half-built generation left behind.
#[test]
fn a_killed_pass_resumes_to_the_result_of_a_clean_pass() {
    use std::time::{Duration, Instant};

    let fake = FakeLlm::start(Some(KEY));
    let clean = configured(&fake, "");
    let started = Instant::now();
    ok(&clean, &["recall", "extract", "run"]);
    let took = started.elapsed();
    let expected = extraction_dump(&clean);
    assert!(expected.matches("published").count() > 3, "{expected}");

    let env = configured(&fake, "");
    let (mut tried, mut landed) = (0, 0);
    for step in 1..=4u32 {
        let mut child = spawn_run(&env);
        // Points spread over the first pass; later passes resume, so they land earlier in theirs.
        std::thread::sleep(took.mul_f64(f64::from(step) / 8.0) + Duration::from_millis(30));
        tried += 1;
        if child.try_wait().unwrap().is_none() {
            landed += 1;
        }
        child.kill().unwrap();
        child.wait().unwrap();
        // Whatever a killed pass left is consistent: no entry past its session's cursor.
        let conn = rusqlite::Connection::open(env.data().join("cairn.db")).unwrap();
        let ahead: i64 = conn
            .query_row(
                "SELECT count(*) FROM recall_extract_entries x JOIN recall_extract_progress p
                 ON p.session_id = x.session_id AND p.fingerprint = x.fingerprint
                 WHERE x.unit_index >= p.unit_cursor",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(
            ahead, 0,
            "kill {step}: entries written for a unit the cursor never passed"
        );
    }
    ok(&env, &["recall", "extract", "run"]);
    let got = extraction_dump(&env);
    assert!(
        got == expected,
        "after killed passes and a resumed one:\n{got}\nexpected (one clean pass):\n{expected}"
    );
    eprintln!(
        "extraction kill points: {tried} tried, {landed} landed mid-pass (clean pass {took:?})"
    );
    assert!(landed >= 1, "no kill landed while a pass was running");
}

/// A pass killed half-way leaves what it wrote embedded: each unit's entries get their vectors as
/// the pass goes (the local model, on a thread of its own), not at its end, so hybrid scores them
/// at once with nothing pending; the next pass reads the rest and leaves the vectors complete.
#[test]
fn a_pass_killed_half_way_leaves_its_entries_embedded_and_hybrid_scores_them() {
    use std::time::{Duration, Instant};

    let fake = FakeLlm::start(Some(KEY));
    let env = configured(&fake, "concurrency = 1");
    // Three units answered, then the pass waits on the fourth: one worker, so three units'
    // entries are committed.
    fake.hold_after(3);
    let mut child = spawn_run(&env);
    let db = env.data().join("cairn.db");
    let count = |sql: &str| -> i64 {
        rusqlite::Connection::open(&db)
            .and_then(|c| c.query_row(sql, [], |r| r.get(0)))
            .unwrap_or(-1)
    };
    let entries = || count("SELECT count(*) FROM recall_entries");
    let vectors = || count("SELECT count(*) FROM recall_vectors");
    // The longest the test waits for the pass before calling it stuck (not a timing claim).
    let stuck = Instant::now() + Duration::from_secs(180);
    while !(fake.chats().len() > 3 && entries() > 0 && vectors() == entries()) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the pass ended before it was held"
        );
        assert!(
            Instant::now() < stuck,
            "{} entries written, {} with a vector: a pass's entries wait for its end",
            entries(),
            vectors()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let written = entries();
    assert_eq!(vectors(), written);

    let status = json(&env, &["embeddings", "status"]);
    assert_eq!(status["stores"][0]["pending"], 0, "{status}");
    assert_eq!(status["stores"][0]["vectors"], written, "{status}");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let (id, title): (String, String) = conn
        .query_row(
            "SELECT id, title FROM recall_entries ORDER BY rowid LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    // The generation is still being built, so its entries are archived until it is activated.
    let q = json(
        &env,
        &[
            "recall", "query", &title, "--mode", "hybrid", "--status", "archived", "--scores",
        ],
    );
    assert_eq!(q["vectors_pending"], 0, "{q}");
    let hit = q["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id.as_str())
        .unwrap_or_else(|| panic!("{q}"));
    assert!(
        hit["match_reasons"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("semantic")),
        "{q}"
    );

    fake.release();
    let run = json(&env, &["recall", "extract", "run"]);
    assert_eq!(run["failed"], 0, "{run}");
    let all = entries();
    assert!(all > written, "{run}");
    let status = json(&env, &["embeddings", "status"]);
    let recall = &status["stores"][0];
    assert_eq!(
        (&recall["fresh"], &recall["pending"], &recall["vectors"]),
        (&Value::Bool(true), &Value::from(0), &Value::from(all)),
        "{status}"
    );
}

/// A `claude` that answers `--version`, alone on a PATH for the doctor to find.
fn stand_in_claude(env: &Env) -> String {
    use std::os::unix::fs::PermissionsExt as _;
    let bin = env.home().join("agent-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let claude = bin.join("claude");
    std::fs::write(&claude, "#!/bin/sh\necho '2.1.3 (Claude Code)'\n").unwrap();
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("{}:/usr/bin:/bin", bin.display())
}

#[test]
fn doctor_lists_the_generators_at_hand_by_name_only() {
    let env = Env::new();
    let path = stand_in_claude(&env);
    let run = |args: &[&str]| {
        env.command()
            .env("PATH", &path)
            .env("OPENROUTER_API_KEY", "sk-or-secret-value-123")
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["recall", "extract", "doctor"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("agent  claude 2.1.3 (Claude Code)"), "{text}");
    assert!(
        text.contains("OpenRouter (key in OPENROUTER_API_KEY)"),
        "{text}"
    );
    assert!(text.contains("No generator is configured"), "{text}");
    assert!(!text.contains("sk-or-secret"), "{text}");
    let out = run(&["--json", "recall", "extract", "doctor"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["configured"], false);
    let gens = v["generators"].as_array().unwrap();
    assert!(
        gens.iter()
            .any(|g| g["kind"] == "agent" && g["name"] == "claude")
    );
    assert!(gens.iter().any(|g| g["kind"] == "key"
        && g["api_key_env"] == "OPENROUTER_API_KEY"
        && g["paid"] == true));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("sk-or-secret"));
}

#[test]
fn doctor_lists_what_it_detected_before_a_config_error_and_names_the_file_and_fix() {
    let env = Env::new();
    let path = stand_in_claude(&env);
    let run = |args: &[&str]| {
        env.command()
            .env("PATH", &path)
            .args(args)
            .output()
            .unwrap()
    };
    let file = env.data().join("config.toml");
    // A [recall.extract] that does not validate, then a file that does not parse at all.
    for (body, says) in [
        (
            "[recall.extract]\nenabled = true\ngenerator = \"claude\"\nconcurrency = 0\n",
            "concurrency",
        ),
        ("[recall.extract\nmodel = \"x\"\n", "config.toml"),
    ] {
        config(&env, body);
        let out = run(&["recall", "extract", "doctor"]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        let detected = text
            .find("agent  claude 2.1.3")
            .unwrap_or_else(|| panic!("{text}"));
        let problem = text
            .find("The configuration cannot be used: config ")
            .unwrap_or_else(|| panic!("{text}"));
        assert!(detected < problem, "{text}");
        assert!(
            text.contains(&file.display().to_string()) && text.contains(says),
            "{text}"
        );
        assert!(text.contains("\nFix: "), "{text}");
        let out = run(&["--json", "recall", "extract", "doctor"]);
        assert_eq!(out.status.code(), Some(1));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            (
                v["configured"].as_bool(),
                v["config_error"]["kind"].as_str()
            ),
            (Some(false), Some("config"))
        );
        assert!(
            v["generators"]
                .as_array()
                .unwrap()
                .iter()
                .any(|g| g["name"] == "claude"),
            "{v}"
        );
    }
}

#[test]
fn a_session_that_just_ended_is_said_to_wait_for_the_quiet_period() {
    let fake = FakeLlm::start(Some(KEY));
    let env = configured(&fake, "");
    // A session an agent wrote a minute ago: the default quiet period (30 minutes) leaves it.
    let now = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(60);
    let line = serde_json::json!({"type": "user", "uuid": "u1", "parentUuid": null, "sessionId": "fresh-one",
        "timestamp": now.to_string(), "cwd": "/tmp/fresh", "isSidechain": false, "userType": "external",
        "message": {"role": "user", "content": "plan the release"}});
    let dir = env.claude().join("-tmp-fresh");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("fresh-one.jsonl"), format!("{line}\n")).unwrap();
    env.ok(&["sync"]);
    let preview = ok(&env, &["recall", "extract", "preview"]);
    assert!(
        preview.contains("1 session would be left for a later pass")
            && preview.contains("quiet_period"),
        "{preview}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&ok(&env, &["--json", "recall", "extract", "preview"])).unwrap();
    assert_eq!(v["waiting_quiet"], 1, "{v}");
    let run = ok(&env, &["recall", "extract", "run"]);
    assert!(run.contains("1 session left for a later pass"), "{run}");
    // Named by a shortened key, as show reads one, the session is read now.
    let sessions: serde_json::Value =
        serde_json::from_str(&ok(&env, &["--json", "sessions"])).unwrap();
    let key = sessions
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["session_id"] == "fresh-one")
        .and_then(|s| s["session_key"].as_str())
        .unwrap()
        .to_owned();
    let preview = ok(
        &env,
        &["recall", "extract", "preview", "--session", &key[..12]],
    );
    assert!(preview.contains("Would read: 1 session"), "{preview}");
}
