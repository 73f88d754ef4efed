//! Redaction at ingest: a secret of every rule, planted in every kind of record of both agents,
//! never reaches any byte under the data dir (database, WAL, retained copies), and each one is
//! recorded as a finding without the secret.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::archive::redact::Redactor;
use cairn_core::archive::secrets;
use serde_json::json;

/// What to plant, and the part of it that must never be stored: a rule's whole test value (so
/// context-bound rules see their key or scheme) and the slice the redactor removes from it.
struct Plant {
    rule: String,
    planted: String,
    secret: String,
}

fn plants() -> Vec<Plant> {
    let redactor = Redactor::global();
    let mut out = Vec::new();
    for rule in secrets::rules() {
        let findings = redactor.scan_text(rule.test_value);
        assert!(
            !findings.is_empty(),
            "rule {} does not detect its own test value",
            rule.name
        );
        for f in findings {
            out.push(Plant {
                rule: rule.name.to_owned(),
                planted: rule.test_value.to_owned(),
                secret: rule.test_value[f.start..f.end].to_owned(),
            });
        }
    }
    // The heuristic layers: a named value in text, an entropy-only token.
    out.push(Plant {
        rule: "named-secret".into(),
        planted: "DB_PASSWORD=s3cr3t-Passw0rd-value".into(),
        secret: "s3cr3t-Passw0rd-value".into(),
    });
    out.push(Plant {
        rule: "high-entropy".into(),
        planted: "Nf9K2pLm8QwEr7TyUi4OzXa3Bv6Cn0Md".into(),
        secret: "Nf9K2pLm8QwEr7TyUi4OzXa3Bv6Cn0Md".into(),
    });
    out
}

fn claude_lines(secret: &str, i: usize) -> Vec<String> {
    let sid = "secrets-claude";
    let env = |extra: serde_json::Value| {
        let mut v = json!({"sessionId": sid, "cwd": "/work/repo", "gitBranch": "main",
            "timestamp": format!("2026-03-01T10:{:02}:00.000Z", i % 60), "uuid": format!("u-{i}")});
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        v.to_string()
    };
    vec![
        env(
            json!({"type":"user","message":{"role":"user","content":format!("my key is {secret} please use it")}}),
        ),
        env(
            json!({"type":"assistant","message":{"id":format!("msg_{i}"),"role":"assistant","model":"claude-x","content":[
                {"type":"text","text":format!("I will export {secret}")},
                {"type":"tool_use","id":format!("toolu_{i}"),"name":"Bash","input":{"command":format!("curl -H 'X-Key: {secret}' https://example.invalid")}}
            ]}}),
        ),
        env(
            json!({"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":format!("toolu_{i}"),"content":format!("echo: {secret}")}]},
            "toolUseResult":{"stdout":format!("{secret}\n"),"stderr":""}}),
        ),
        env(
            json!({"type":"system","subtype":"api_error","content":format!("request failed for {secret}")}),
        ),
    ]
}

fn codex_lines(secret: &str, i: usize) -> Vec<String> {
    let item = |p: serde_json::Value| {
        json!({"timestamp":"2026-03-01T10:00:00Z","type":"response_item","payload":p}).to_string()
    };
    vec![
        item(
            json!({"type":"message","role":"user","content":[{"type":"input_text","text":format!("token {secret}")}]}),
        ),
        item(
            json!({"type":"function_call","name":"shell","call_id":format!("c{i}"),"arguments":json!({"command":["bash","-lc",format!("deploy --key {secret}")]}).to_string()}),
        ),
        item(
            json!({"type":"function_call_output","call_id":format!("c{i}"),"output":format!("Process exited with code 0\nOutput:\n{secret}")}),
        ),
        item(
            json!({"type":"custom_tool_call","name":"apply_patch","call_id":format!("p{i}"),"input":format!("*** Begin Patch\n*** Add File: .env\n+KEY={secret}\n*** End Patch\n")}),
        ),
    ]
}

fn every_byte_under(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in walk(dir) {
        let bytes = std::fs::read(&entry).unwrap();
        out.push((entry.display().to_string(), bytes.clone()));
        if entry.extension().is_some_and(|e| e == "zst") {
            out.push((
                format!("{} (decompressed)", entry.display()),
                zstd::stream::decode_all(&bytes[..]).unwrap(),
            ));
        }
    }
    out
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p))
        } else {
            out.push(p)
        }
    }
    out
}

#[test]
fn no_byte_of_a_planted_secret_reaches_the_data_dir() {
    let plants = plants();
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let mut claude = vec![
        json!({"type":"user","sessionId":"secrets-claude","timestamp":"2026-03-01T09:00:00.000Z",
        "message":{"role":"user","content":"start"}})
        .to_string(),
    ];
    let mut codex = vec![json!({"timestamp":"2026-03-01T09:00:00Z","type":"session_meta","payload":{"id":"secrets-codex","cwd":"/work/repo"}}).to_string()];
    for (i, plant) in plants.iter().enumerate() {
        claude.extend(claude_lines(&plant.planted, i));
        codex.extend(codex_lines(&plant.planted, i));
    }
    // Key-shaped secrets in JSON and `.env` text.
    claude.push(json!({"type":"assistant","sessionId":"secrets-claude","message":{"role":"assistant","content":[
        {"type":"tool_use","id":"toolu_cfg","name":"Write","input":{"file_path":"/work/repo/config.json",
         "content":"{\"password\": \"hunter2-correct-horse\"}\nDB_PASSWORD=s3cr3t-Passw0rd-value\n"}}]}}).to_string());
    let claude_path = src.path().join("claude.jsonl");
    let codex_path = src.path().join("codex.jsonl");
    std::fs::write(&claude_path, claude.join("\n") + "\n").unwrap();
    std::fs::write(&codex_path, codex.join("\n") + "\n").unwrap();

    let cairn = Cairn::open(data.path()).unwrap();
    let report = support::capture(
        &cairn,
        &[
            support::main_file(Agent::Claude, &claude_path),
            support::main_file(Agent::Codex, &codex_path),
        ],
    );
    assert!(report.records_added as usize >= plants.len() * 8);

    let files = every_byte_under(data.path());
    let mut leaks = Vec::new();
    let checks = plants
        .iter()
        .map(|p| (p.rule.as_str(), p.secret.as_str()))
        .chain([("sensitive-key", "hunter2-correct-horse")]);
    for (rule, secret) in checks {
        for (name, bytes) in &files {
            if memchr::memmem::find(bytes, secret.as_bytes()).is_some() {
                leaks.push(format!("{rule}: found in {name}"));
            }
        }
    }
    assert!(
        leaks.is_empty(),
        "secrets reached the data dir:\n{}",
        leaks.join("\n")
    );

    // Every plant is recorded as a finding (rule and place, no secret).
    let conn = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
    let findings: i64 = conn
        .query_row("SELECT COUNT(*) FROM secret_findings", [], |r| r.get(0))
        .unwrap();
    assert!(
        findings as usize >= plants.len() * 6,
        "{findings} findings for {} secrets",
        plants.len()
    );
    let redacted: i64 = conn
        .query_row("SELECT COUNT(*) FROM records WHERE text LIKE '%[REDACTED:%' OR tool_input LIKE '%[REDACTED:%'", [], |r| r.get(0))
        .unwrap();
    assert!(redacted as usize >= plants.len() * 6);
}

#[test]
fn real_fixtures_keep_their_shas_uuids_and_paths() {
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let files: Vec<_> = [
        "claude/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl",
        "claude/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
    ]
    .iter()
    .map(|f| support::main_file(Agent::Claude, &support::fixtures().join(f)))
    .collect();
    support::capture(&cairn, &files);
    let conn = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
    // Edited file paths survive ingest untouched (agentlog redacts them; Cairn keeps local paths).
    let paths: i64 = conn
        .query_row("SELECT COUNT(*) FROM records WHERE tool_input LIKE '%/home/USER/projects/spotter-worktrees/spotter-4te/lib/%'", [], |r| r.get(0))
        .unwrap();
    assert!(paths > 10, "{paths}");
    // Tool-use ids and UUIDs are not mistaken for secrets.
    let ids: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM records WHERE call_id LIKE 'toolu_%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(ids > 100);
}
