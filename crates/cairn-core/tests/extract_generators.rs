//! Extraction through either generator kind: an OpenAI-compatible server on loopback
//! (`tests/support/fake_llm.rs`) and a stand-in `claude` script on disk. The same answer makes
//! the same entries either way; a hostile answer (not JSON, prose, too many entries) fails its
//! session, a failing or silent agent stops the pass, each with a message, and nothing is lost.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::fake_llm;
use crate::support;

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::recall::extract::{RunOptions, RunReport, Silent};
use cairn_core::recall::model::{ReviewState, Status};
use cairn_core::recall::store::Filters;
use fake_llm::{FakeLlm, Reply};
use serde_json::{Value, json};

/// One answer for every unit: hostile evidence (out of every unit's bounds, reversed) is
/// bound to the whole unit, with the same note, for both kinds.
fn answer() -> Value {
    json!({"entries": [
        {"type": "fact", "title": "The dev server runs on port 4173",
         "body": "Port 3000 is taken by the API gateway.", "trigger": "when starting the dev server",
         "confidence": 0.8, "entities": ["dev server"], "evidence": {"first": -7, "last": 99999}},
        {"type": "warning", "title": "Do not use port 3000", "body": "The gateway owns it.",
         "trigger": "", "confidence": 0.6, "entities": [], "evidence": {"first": 2, "last": 1}}
    ]})
}

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }
    fn write_config(&self, text: &str) {
        std::fs::create_dir_all(self.data()).unwrap();
        std::fs::write(self.data().join("config.toml"), text).unwrap();
    }
    /// `[recall.extract]` through the fake server at `url`.
    fn endpoint(&self, url: &str) {
        self.endpoint_with_timeout(url, "20s");
    }
    fn endpoint_with_timeout(&self, url: &str, timeout: &str) {
        self.write_config(&format!(
            "[recall.extract]\nenabled = true\nmodel = \"claude\"\n\
             [recall.extract.servers.local]\nendpoint = \"{url}\"\ntimeout = \"{timeout}\"\n"
        ));
    }
    /// `[recall.extract]` through the stand-in agent at `bin`.
    fn agent(&self, bin: &Path, extra: &str) {
        self.write_config(&format!(
            "[recall.extract]\nenabled = true\ngenerator = \"claude\"\n\
             [agent.claude]\nbinary = \"{}\"\n{extra}\n",
            bin.display()
        ));
    }
    fn open(&self) -> Cairn {
        Cairn::open(self.data()).unwrap()
    }
    /// One session: a standing preference, a command and its answer.
    fn session(&self, cairn: &Cairn) {
        let home = std::env::var("HOME").unwrap_or_else(|_| "/home/someone".into());
        let lines: Vec<String> = [
            json!({"type": "user", "message": {"role": "user", "content":
                format!("Run the dev server on port 4173 from now on; notes in {home}/private/ports.txt")}}),
            json!({"type": "assistant", "message": {"id": "m1", "role": "assistant", "model": "claude-x",
                "content": [{"type": "text", "text": "Understood: 4173 it is."}]}}),
        ]
        .into_iter()
        .enumerate()
        .map(|(n, mut v)| {
            let o = v.as_object_mut().unwrap();
            o.insert("sessionId".into(), json!("sess-g"));
            o.insert("cwd".into(), json!("/work/proj"));
            o.insert("gitBranch".into(), json!("main"));
            o.insert("timestamp".into(), json!(format!("2026-03-01T10:00:0{n}.000Z")));
            o.insert("uuid".into(), json!(format!("u{n}")));
            v.to_string()
        })
        .collect();
        let path = self.dir.path().join("src/sess-g.jsonl");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        support::capture(cairn, &[support::main_file(Agent::Claude, &path)]);
    }
    /// A stand-in `claude` that logs its stdin and argv, prints `stdout` and exits with `code`.
    fn stub(&self, stdout: &[u8], code: i32) -> PathBuf {
        let bin = self.dir.path().join("bin/claude");
        std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
        let out = self.dir.path().join("bin/answer");
        std::fs::write(&out, stdout).unwrap();
        let log = self.dir.path().join("bin");
        std::fs::write(
            &bin,
            format!(
                "#!/bin/sh\ncat > '{log}/stdin'\nfor a in \"$@\"; do printf '<%s>\\n' \"$a\"; done > '{log}/argv'\ncat '{out}'\necho 'stand-in agent says goodbye' >&2\nexit {code}\n",
                log = log.display(),
                out = out.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        bin
    }
    fn logged(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join("bin").join(name)).unwrap_or_default()
    }
}

/// `claude -p --output-format json`'s envelope around `text`.
fn claude_says(text: &str) -> Vec<u8> {
    json!({"type": "result", "is_error": false, "result": text, "modelUsage": {"claude-x": {}}})
        .to_string()
        .into_bytes()
}

fn run(cairn: &Cairn) -> RunReport {
    cairn
        .recall_extract_run(&RunOptions::default(), &Silent)
        .unwrap()
}

/// What an entry says and cites, generator-independent: type, title, body, trigger, evidence.
type Said = (String, String, String, String, Vec<(u32, u32)>);

fn entries(cairn: &Cairn) -> Vec<Said> {
    let list = |status| {
        cairn
            .recall_list(&Filters {
                status: Some(status),
                review_state: Some(ReviewState::UnreviewedAuto),
                limit: Some(100),
                ..Default::default()
            })
            .unwrap()
    };
    let mut out: Vec<_> = list(Status::Archived)
        .into_iter()
        .chain(list(Status::Accepted))
        .map(|e| {
            (
                e.entry_type.as_str().to_owned(),
                e.title,
                e.body,
                e.trigger,
                e.evidence
                    .iter()
                    .map(|v| (v.ordinal_start, v.ordinal_end))
                    .collect(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn both_generator_kinds_make_the_same_entries_from_the_same_answer() {
    let fake = FakeLlm::start(None);
    for _ in 0..8 {
        fake.push(Reply::chat(&answer().to_string(), "stop"));
    }
    let by_endpoint = Env::new();
    by_endpoint.endpoint(&fake.url());
    let cairn = by_endpoint.open();
    by_endpoint.session(&cairn);
    let report = run(&cairn);
    assert!(report.aborted.is_none(), "{report:?}");
    let via_endpoint = entries(&cairn);
    assert_eq!(via_endpoint.len(), 2 * report.units as usize);
    // Neither citation lies in its unit: each entry says so, none silently widened.
    assert_eq!(report.evidence_out_of_unit, 2 * report.units, "{report:?}");

    let by_agent = Env::new();
    // Agents like to fence their JSON: the fence is taken off, nothing else is repaired.
    let bin = by_agent.stub(&claude_says(&format!("```json\n{}\n```", answer())), 0);
    by_agent.agent(&bin, "");
    let cairn = by_agent.open();
    by_agent.session(&cairn);
    let report = run(&cairn);
    assert!(report.aborted.is_none(), "{report:?}");
    assert_eq!(entries(&cairn), via_endpoint);

    // The agent got the prompt on stdin with the schema, never on its command line, and the
    // home path in the transcript was redacted on the way out.
    let stdin = by_agent.logged("stdin");
    let argv = by_agent.logged("argv");
    assert!(
        stdin.contains("ANSWER FORMAT") && stdin.contains("\"entries\""),
        "{stdin}"
    );
    assert!(stdin.contains("4173") && !argv.contains("4173"), "{argv}");
    let home = std::env::var("HOME").unwrap();
    assert!(!stdin.contains(&format!("{home}/private")), "{stdin}");
    assert!(
        argv.contains("<--strict-mcp-config>") && argv.contains("<--tools>"),
        "{argv}"
    );
}

/// An answer that names secrets and the home folder in every text field: what a model that
/// decodes what it was shown (or repeats a planted secret) writes.
fn leaky_answer(home: &str) -> Value {
    let token = "ghp_EXAMPLE00000000000000000000000000000";
    json!({"entries": [{"type": "fact", "title": format!("Use token {token}"),
        "body": format!("AWS key AKIAIOSFODNN7EXAMPLE; read {home}/.ssh/id_rsa\n\
            -----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx7Hq2vN9pLzKjW3mR8tYbQ4cF6sD1eA0uG5hJ2kL9oP3iX7n\n\
            -----END RSA PRIVATE KEY-----"),
        "trigger": format!("export GITHUB_TOKEN={token}"), "confidence": 0.9,
        "entities": [token, format!("{home}/projects/shop")], "evidence": {"first": 0, "last": 1}}]})
}

#[test]
fn what_the_model_writes_is_redacted_before_it_is_stored() {
    let home = std::env::var("HOME").unwrap_or_else(|_| "/home/someone".into());
    let leaks = [
        "ghp_EXAMPLE",
        "AKIAIOSFODNN7EXAMPLE",
        "MIIEowIBAAKCAQEA",
        &format!("{home}/"),
    ];
    let check = |cairn: &Cairn| {
        let stored = entries(cairn);
        assert!(!stored.is_empty());
        let all = format!("{stored:?}");
        for leak in leaks {
            assert!(!all.contains(leak), "{leak} stored: {all}");
        }
        assert!(all.contains("[REDACTED:"), "{all}");
    };
    let fake = FakeLlm::start(None);
    for _ in 0..8 {
        fake.push(Reply::chat(&leaky_answer(&home).to_string(), "stop"));
    }
    let by_endpoint = Env::new();
    by_endpoint.endpoint(&fake.url());
    let cairn = by_endpoint.open();
    by_endpoint.session(&cairn);
    assert!(run(&cairn).aborted.is_none());
    check(&cairn);

    let by_agent = Env::new();
    let bin = by_agent.stub(&claude_says(&leaky_answer(&home).to_string()), 0);
    by_agent.agent(&bin, "");
    let cairn = by_agent.open();
    by_agent.session(&cairn);
    assert!(run(&cairn).aborted.is_none());
    check(&cairn);
}

/// One pass over `sess-g` by name (a session that failed is not left to its back-off).
fn run_named(cairn: &Cairn) -> RunReport {
    cairn
        .recall_extract_run(
            &RunOptions {
                scope: cairn_core::recall::extract::Scope {
                    session: Some("sess-g".into()),
                    ..Default::default()
                },
                ..Default::default()
            },
            &Silent,
        )
        .unwrap()
}

/// What a pass said went wrong: why it stopped, else why its first session failed.
fn said(report: &RunReport) -> String {
    report
        .aborted
        .clone()
        .or_else(|| report.failures.first().map(|f| f.error.clone()))
        .unwrap_or_default()
}

/// An answer the schema refuses, or one too long to read, fails its session (the agent works;
/// another unit may be answered well); an agent that cannot answer at all stops the pass.
#[test]
fn hostile_agent_answers_fail_the_session_or_stop_the_pass_and_lose_nothing() {
    let many = |n: usize| {
        format!(
            "{{\"entries\": [{}]}}",
            vec![answer()["entries"][0].to_string(); n].join(",")
        )
    };
    // (agent's stdout, its exit code, what the report says, whether the pass stopped)
    let cases: Vec<(Vec<u8>, i32, &str, bool)> = vec![
        (claude_says("not json at all"), 0, "not JSON", false),
        (
            claude_says("Sure! Here are the entries:\n{\"entries\": []}"),
            0,
            "not JSON",
            false,
        ),
        (
            claude_says("{\"entries\": {\"type\": \"fact\"}}"),
            0,
            "not an array",
            false,
        ),
        (claude_says(&many(101)), 0, "more than", false),
        // Past the 4 MiB output cap: this unit's answer is unusable, the agent is not broken.
        (
            claude_says(&many(20_000)),
            0,
            "reply is larger than 4194304 bytes",
            false,
        ),
        (
            b"{\"truncated\": ".to_vec(),
            0,
            "expected one JSON object",
            true,
        ),
        (claude_says(""), 0, "answered with no text", true),
        (claude_says("{}"), 3, "exited with code 3", true),
    ];
    for (stdout, code, want, stops) in cases {
        let env = Env::new();
        let bin = env.stub(&stdout, code);
        env.agent(&bin, "");
        let cairn = env.open();
        env.session(&cairn);
        let report = run(&cairn);
        let said = said(&report);
        assert!(said.contains(want), "want {want:?}, got {report:?}");
        assert_eq!(report.aborted.is_some(), stops, "{want}: {report:?}");
        assert_eq!(report.failed, u32::from(!stops), "{want}: {report:?}");
        assert!(!said.contains('\u{1b}'));
        assert_eq!((report.units, report.entries), (0, 0), "{report:?}");
        assert!(entries(&cairn).is_empty());
        // Nothing is lost: the same session is read in full once the agent answers well.
        env.stub(&claude_says(&answer().to_string()), 0);
        let report = run_named(&cairn);
        assert!(
            report.aborted.is_none() && report.sessions == 1,
            "{report:?}"
        );
        assert!(!entries(&cairn).is_empty());
    }
}

/// The endpoint's side of the same rule: an answer that is not JSON, a server that never answers
/// (past its timeout, retries included) or keeps failing (HTTP 500) stops the pass or fails the
/// session with a message that says so, writes nothing, and the session is read in full once the
/// server answers well.
#[test]
fn hostile_endpoint_answers_stop_the_pass_with_a_message_and_lose_nothing() {
    let fake = FakeLlm::start(None);
    let failing = || {
        Reply::json(500, json!({"error": {"message": "upstream exploded"}}))
            .with_header("Retry-After", "0")
    };
    type Setup<'a> = Box<dyn Fn() + 'a>;
    let cases: Vec<(&str, Setup, &str)> = vec![
        (
            "not JSON",
            Box::new(|| fake.push(Reply::chat("Sure! Here are the entries: none", "stop"))),
            "not JSON",
        ),
        (
            "silent",
            Box::new(|| fake.hold_after(0)),
            "gave no answer within 1 s",
        ),
        (
            "HTTP 500",
            Box::new(|| fake.fail_after(0, Some(failing()))),
            "HTTP 500",
        ),
    ];
    for (case, setup, want) in cases {
        let env = Env::new();
        env.endpoint_with_timeout(&fake.url(), "1s");
        let cairn = env.open();
        env.session(&cairn);
        setup();
        let report = run(&cairn);
        fake.release();
        fake.fail_after(0, None);
        let said = said(&report);
        assert!(said.contains(want), "{case}: want {want:?}, got {report:?}");
        assert!(!said.contains('\u{1b}'), "{case}");
        assert_eq!((report.units, report.entries), (0, 0), "{case}: {report:?}");
        assert!(entries(&cairn).is_empty(), "{case}");
        // Nothing is lost: the session is read in full once the server answers (named, so a
        // session that failed is not left to its back-off).
        let again = run_named(&cairn);
        assert!(
            again.aborted.is_none() && again.failed == 0 && again.sessions == 1,
            "{case}: {again:?}"
        );
        assert!(!entries(&cairn).is_empty(), "{case}");
    }
}

#[test]
fn an_agent_that_never_answers_is_killed_at_its_timeout() {
    let env = Env::new();
    let bin = env.dir.path().join("bin/claude");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    std::fs::write(&bin, "#!/bin/sh\ncat > /dev/null\nexec sleep 60\n").unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    env.agent(&bin, "timeout_secs = 1");
    let cairn = env.open();
    env.session(&cairn);
    let report = run(&cairn);
    let aborted = report.aborted.unwrap_or_default();
    assert!(aborted.contains("no answer within 1 s"), "{aborted}");
    assert!(entries(&cairn).is_empty());
}

/// An agent that prints a token on stderr as it fails, or reports an error quoting one: the
/// token reaches neither the report nor `recall extract status`.
#[test]
fn a_token_an_agent_prints_as_it_fails_is_redacted() {
    let token = "ghp_EXAMPLE00000000000000000000000000000";
    for (stdout, code) in [
        (b"".to_vec(), 3),
        (
            json!({"type": "result", "is_error": true, "result": format!("bad key {token}")})
                .to_string()
                .into_bytes(),
            0,
        ),
    ] {
        let env = Env::new();
        let bin = env.dir.path().join("bin/claude");
        std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
        std::fs::write(env.dir.path().join("bin/answer"), &stdout).unwrap();
        std::fs::write(
            &bin,
            format!(
                "#!/bin/sh\ncat > /dev/null\ncat '{}'\necho 'GITHUB_TOKEN={token}' >&2\necho 'giving up' >&2\nexit {code}\n",
                env.dir.path().join("bin/answer").display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        env.agent(&bin, "");
        let cairn = env.open();
        env.session(&cairn);
        let aborted = run(&cairn).aborted.unwrap_or_default();
        assert!(!aborted.is_empty() && !aborted.contains(token), "{aborted}");
        let stored = cairn.recall_extract_status().unwrap().last_run.unwrap();
        let stored = stored.aborted.unwrap_or_default();
        assert!(
            stored.contains("[REDACTED:") && !stored.contains(token),
            "{stored}"
        );
    }
}

#[test]
fn a_missing_agent_is_named_with_the_fix() {
    let env = Env::new();
    env.agent(Path::new("/nonexistent/cairn-test/claude"), "");
    let cairn = env.open();
    env.session(&cairn);
    let report = run(&cairn);
    let aborted = report.aborted.unwrap_or_default();
    assert!(aborted.contains("not found on PATH"), "{aborted}");
}

#[test]
fn the_doctor_probes_an_agent_cli_with_one_tiny_request() {
    let env = Env::new();
    let bin = env.stub(&claude_says(&answer().to_string()), 0);
    env.agent(&bin, "");
    let cairn = env.open();
    let d = cairn.recall_extract_doctor().unwrap();
    assert!(d.ok(), "{d:?}");
    assert_eq!(d.probe_entries, Some(2));
    assert!(env.logged("stdin").contains("port 4173"));
}

/// Extraction throughput per generator kind against the stand-ins (the fake server answering at
/// once, the stand-in agent printing a canned answer): what Cairn itself costs per model call on
/// each path (HTTP on loopback vs spawning an isolated agent process), not a model's speed. A
/// measurement, not a check: run by hand and copied into bench/RESULTS.md.
/// `cargo test -p cairn-core --test integration -- --ignored --nocapture extract_generators::throughput`
#[test]
#[ignore = "a measurement for bench/RESULTS.md, run by hand"]
fn throughput_per_generator_kind() {
    const SESSIONS: usize = 24;
    const TURNS: usize = 4;
    let sessions = |env: &Env, cairn: &Cairn| {
        let mut files = Vec::new();
        for s in 0..SESSIONS {
            let mut lines = Vec::new();
            for t in 0..TURNS {
                for (n, v) in [
                    json!({"type": "user", "message": {"role": "user", "content":
                        format!("Session {s} turn {t}: run the dev server on port {} and keep the logs", 4000 + t)}}),
                    json!({"type": "assistant", "message": {"id": format!("m{s}-{t}"), "role": "assistant", "model": "claude-x",
                        "content": [{"type": "text", "text": format!("Started on port {}; logs in /tmp/dev-{t}.log.", 4000 + t)}]}}),
                ]
                .into_iter()
                .enumerate()
                {
                    let mut v = v;
                    let o = v.as_object_mut().unwrap();
                    o.insert("sessionId".into(), json!(format!("sess-{s}")));
                    o.insert("cwd".into(), json!("/work/proj"));
                    o.insert("timestamp".into(), json!(format!("2026-03-01T10:{t:02}:0{n}.000Z")));
                    o.insert("uuid".into(), json!(format!("u{s}-{t}-{n}")));
                    lines.push(v.to_string());
                }
            }
            let path = env.dir.path().join(format!("src/sess-{s}.jsonl"));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, lines.join("\n") + "\n").unwrap();
            files.push(support::main_file(Agent::Claude, &path));
        }
        support::capture(cairn, &files);
    };
    // CPU seconds of this process (the pass, the fake server's thread, the model) and of its
    // waited-for children (the stand-in agents), from /proc (Linux clock ticks, 100 a second).
    let cpu = || -> f64 {
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
        let after = stat.rsplit_once(')').unwrap().1;
        let f: Vec<f64> = after
            .split_whitespace()
            .map(|x| x.parse().unwrap_or(0.0))
            .collect();
        // utime, stime, cutime, cstime: fields 14-17, i.e. 11-14 after the command name.
        (f[11] + f[12] + f[13] + f[14]) / 100.0
    };
    let measure = |kind: &str, env: &Env, embed: bool| {
        let cairn = env.open();
        if !embed {
            // Writes do not embed with an endpoint embedder (never called on a write).
            cairn.set_embedder(std::sync::Arc::new(NoRefresh));
        }
        sessions(env, &cairn);
        let (started, cpu0) = (std::time::Instant::now(), cpu());
        let report = run(&cairn);
        let (secs, cpus) = (started.elapsed().as_secs_f64(), cpu() - cpu0);
        assert!(report.aborted.is_none() && report.failed == 0, "{report:?}");
        let vectors = cairn.embeddings_status().unwrap().stores[0].vectors;
        println!(
            "| {kind} | {} | {} | {} | {vectors} | {secs:.2} | {:.1} | {cpus:.2} | {:.1} |",
            report.sessions,
            report.units,
            report.entries,
            f64::from(report.units) / secs,
            cpus * 1000.0 / f64::from(report.units),
        );
    };
    println!(
        "| generator | sessions | units (calls) | entries | vectors | wall (s) | units/s | CPU (s) | CPU ms/unit |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    let fake = FakeLlm::start(None);
    for embed in [false, true] {
        let with = if embed {
            ", local model embeds as it goes"
        } else {
            ""
        };
        let by_endpoint = Env::new();
        by_endpoint.endpoint(&fake.url());
        measure(
            &format!("endpoint (fake OpenAI-compatible server, loopback){with}"),
            &by_endpoint,
            embed,
        );
        let by_agent = Env::new();
        let bin = by_agent.stub(&claude_says(&answer().to_string()), 0);
        by_agent.agent(&bin, "");
        measure(
            &format!("agent CLI (stand-in `claude`, isolated, prompt on stdin){with}"),
            &by_agent,
            embed,
        );
    }
}

/// An embedder that writes never call (as an endpoint embedder): the throughput of extraction
/// alone.
struct NoRefresh;

impl cairn_core::semantic::embed::Embedder for NoRefresh {
    fn fingerprint(&self) -> &str {
        "none/test"
    }
    fn dims(&self) -> usize {
        1
    }
    fn embed(
        &self,
        texts: &[&str],
        _kind: cairn_core::semantic::embed::InputKind,
    ) -> cairn_core::Result<Vec<f32>> {
        Ok(vec![1.0; texts.len()])
    }
    fn refresh_on_write(&self) -> bool {
        false
    }
    fn describe(&self) -> String {
        "none".into()
    }
}
