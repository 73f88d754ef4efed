//! Redaction at ingest: a secret of every rule, planted in every kind of record of both agents,
//! never reaches any byte under the data dir (database, WAL, retained copies), and each one is
//! recorded as a finding without the secret.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

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

    let files = support::every_byte_under(data.path());
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

/// Realistic secrets, written for this corpus in each provider's published format (none is a
/// rule's own test value): the whole text planted, and the part that must not be stored.
const CORPUS: &[(&str, &str, &str)] = &[
    (
        "aws-access-key",
        "AKIAZ7QW3RT5YU8IOP2L",
        "AKIAZ7QW3RT5YU8IOP2L",
    ),
    (
        "aws-secret",
        "aws_secret_access_key = Qm8vT2xN4bR6yW1kZ9pL3sD7fG5hJ0cV2nB8mA4q",
        "Qm8vT2xN4bR6yW1kZ9pL3sD7fG5hJ0cV2nB8mA4q",
    ),
    (
        "gcp-api-key",
        "AIzaSyD4xQ9rT2vW7kL1mN5pB8cF3gH6jK0sZ2aE",
        "AIzaSyD4xQ9rT2vW7kL1mN5pB8cF3gH6jK0sZ2aE",
    ),
    (
        "github-pat",
        "ghp_R7sT2vX9kL4mN8qP1wZ5yB3cD6fH0jK2aE4gQ",
        "ghp_R7sT2vX9kL4mN8qP1wZ5yB3cD6fH0jK2aE4gQ",
    ),
    (
        "github-fine",
        "github_pat_11ABCDEFG0aZ9yX8wV7uT6_sR5qP4oN3mL2kJ1iH0gF9eD8cB7aZ6yX5wV4uT3sR2qP1oN0mL9kJ8iH7gF6eD5cB4",
        "github_pat_11ABCDEFG0aZ9yX8wV7uT6_sR5qP4oN3mL2kJ1iH0gF9eD8cB7aZ6yX5wV4uT3sR2qP1oN0mL9kJ8iH7gF6eD5cB4",
    ),
    (
        "gitlab-pat",
        "glpat-Zq8Xw2Rt5Yv9Ub3Nm6Kp",
        "glpat-Zq8Xw2Rt5Yv9Ub3Nm6Kp",
    ),
    (
        "slack-bot",
        "xoxb-284756193028-4829301746352-Qw8Er2Ty6Ui0Op4As7Df9Gh1",
        "xoxb-284756193028-4829301746352-Qw8Er2Ty6Ui0Op4As7Df9Gh1",
    ),
    (
        "slack-webhook",
        "https://hooks.slack.com/services/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",
        "Zk7Wq2Er9Ty4Ui1Op6As3Df8",
    ),
    (
        "stripe-live",
        "sk_live_51Hx7Qw2Er9Ty4Ui1Op6As3Df8Gh0Jk5Lz7Xc2Vb9Nm4",
        "sk_live_51Hx7Qw2Er9Ty4Ui1Op6As3Df8Gh0Jk5Lz7Xc2Vb9Nm4",
    ),
    (
        "stripe-restricted",
        "rk_live_51Hx7Qw2Er9Ty4Ui1Op6As3Df8Gh0Jk5Lz7",
        "rk_live_51Hx7Qw2Er9Ty4Ui1Op6As3Df8Gh0Jk5Lz7",
    ),
    (
        "openai",
        "sk-proj-Xq7Wr2Et9Yu4Io1Pa6Sd3Fg8Hj0Kl5Zx7Cv2Bn9Mq4We8Rt1Yu6Io3Pa0Sd5Fg",
        "sk-proj-Xq7Wr2Et9Yu4Io1Pa6Sd3Fg8Hj0Kl5Zx7Cv2Bn9Mq4We8Rt1Yu6Io3Pa0Sd5Fg",
    ),
    (
        "anthropic",
        "sk-ant-api03-Wq7Er2Ty9Ui4Op1As6Df3Gh8Jk0Lz5Xc7Vb2Nm9Qw4Er8Ty1Ui6Op3As0Df5Gh2Jk7Lz4Xc9Vb6Nm1Qw3Er8Ty5Ui0Op2As7Df4-Gh9JkAA",
        "sk-ant-api03-Wq7Er2Ty9Ui4Op1As6Df3Gh8Jk0Lz5Xc7Vb2Nm9Qw4Er8Ty1Ui6Op3As0Df5Gh2Jk7Lz4Xc9Vb6Nm1Qw3Er8Ty5Ui0Op2As7Df4-Gh9JkAA",
    ),
    (
        "npm",
        "npm_Zq8Xw2Rt5Yv9Ub3Nm6Kp1Lo4Ij7Hg0Fd2Sa5",
        "npm_Zq8Xw2Rt5Yv9Ub3Nm6Kp1Lo4Ij7Hg0Fd2Sa5",
    ),
    (
        "postgres-url",
        "postgres://billing:Vx7Qp2Lm9Kd4@db.internal.example:5432/billing",
        "Vx7Qp2Lm9Kd4",
    ),
    (
        "mysql-url",
        "mysql://root:Tr0ub4dor-Horse-88@10.1.2.3:3306/app",
        "Tr0ub4dor-Horse-88",
    ),
    (
        "mongodb-url",
        "mongodb+srv://admin:Qz8Wx3Ec7Rv1@cluster0.ab1cd.mongodb.net/prod",
        "Qz8Wx3Ec7Rv1",
    ),
    (
        "redis-url",
        "redis://:Hq4Jw8Ke2Lr6@cache.internal:6379/0",
        "Hq4Jw8Ke2Lr6",
    ),
    (
        "rsa-key",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo9z+40RQzuVaE8AkAFmxZzow3x+VJYKdjykkJ0iT9wCS0DRTXu269V264Vf/3jvredZiKRkgwlL9xNAwxXFg0x/XFw005UWVRIkdgcKWTjpBP2dPwVZ4WWC+9aGVd+Gyn1o0CLelf4rEjGoXbAAEgAqeGUxrcIlbjXfbcmwIDAQABAoIBAQCxYZ2Zq9gBxx3sSRnZ7hVyGDuWQUsmW7pY2fSqXJ0kMxyoqgk\n-----END RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0",
    ),
    (
        "openssh-key",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUxOQAAACDxK7v9Qw2Er8Ty4Ui1Op6As3Df8Gh0Jk5Lz7Xc2Vb9NmAAAAJgAAAAA\n-----END OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUxOQAAACDxK7v9Qw2Er8Ty4Ui1Op6As3Df8Gh0Jk5Lz7Xc2Vb9Nm",
    ),
    (
        "jwt",
        "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1c2VyLTQyIiwicm9sZSI6ImFkbWluIiwiaWF0IjoxNzY0NTAwMDAwfQ.Kq7Wr2Et9Yu4Io1Pa6Sd3Fg8Hj0Kl5Zx7Cv2Bn9Mq4",
        "Kq7Wr2Et9Yu4Io1Pa6Sd3Fg8Hj0Kl5Zx7Cv2Bn9Mq4",
    ),
    (
        "env-password",
        "DATABASE_PASSWORD=correct-Horse-battery-9",
        "correct-Horse-battery-9",
    ),
    (
        "sendgrid",
        "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",
        "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",
    ),
];

/// Things that look random but are not secrets and must stay readable.
fn look_alikes() -> Vec<String> {
    let png = format!(
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk{}",
        "+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg".repeat(20)
    );
    [
        "commit 3f786850e387550fdab836ed7e6dc881de23001b",
        "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "session 55604662-cf2a-4331-851a-ec234028f8ca",
        "request_id=req_011CVbJ4Gq8c2Zt1XyW9aBcD",
        "tool use toolu_01A09q90qw90lq917835lq9",
        "/home/USER/projects/spotter-worktrees/spotter-4te/lib/spotter/telemetry/otel.ex",
        "C:\\Users\\dev\\source\\repos\\app\\Program.cs",
        "integrity sha512-9h5YbJkNnPk3k7qYQq2bT2pVv8vX8xq0Yc9hQ7yFj3rW5w2Qy6q3cGzXv9xQ+3mH0xq5Z6b8q9Q==",
        "image: ghcr.io/org/app@sha256:0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9",
        "go.sum h1:Kd9Ye6e8pBQ7xW5Fq3Hj0Vt2Nn8Lm4Zp1Rs7Gu0Ac3E=",
        "https://github.com/org/repo/pull/4242#issuecomment-1987654321",
        "version 1.49.0-rc.3+build.20261130",
        "AbstractSingletonProxyFactoryBeanDefinitionRegistryPostProcessor",
        "password: ${{ secrets.DB_PASSWORD }}",
        "export API_KEY=<your-api-key>",
        "msg_01XFDUDYJgAACzvnptvVoYEL",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([png])
    .collect()
}

#[test]
fn a_realistic_corpus_never_reaches_storage_and_look_alikes_stay() {
    let redactor = Redactor::global();
    // Found: the redactor's scan covers the secret part of each plant.
    let mut missed = Vec::new();
    for (name, planted, secret) in CORPUS {
        let at = planted.find(secret).unwrap();
        let covered = redactor
            .scan_text(planted)
            .iter()
            .any(|f| f.start <= at && f.end >= at + secret.len());
        if !covered {
            missed.push(*name);
        }
    }
    // Flagged: any finding in a look-alike.
    let flagged: Vec<_> = look_alikes()
        .into_iter()
        .filter(|s| !redactor.scan_text(s).is_empty())
        .collect();

    // Every kind of record of both agents, through a real capture.
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let mut claude = Vec::new();
    let mut codex = vec![json!({"timestamp":"2026-03-01T09:00:00Z","type":"session_meta","payload":{"id":"corpus-codex","cwd":"/work/repo"}}).to_string()];
    for (i, (_, planted, _)) in CORPUS.iter().enumerate() {
        claude.extend(claude_lines(planted, 1000 + i));
        codex.extend(codex_lines(planted, 1000 + i));
    }
    for (i, s) in look_alikes().iter().enumerate() {
        claude.extend(claude_lines(s, 2000 + i));
    }
    let claude_path = src.path().join("claude.jsonl");
    let codex_path = src.path().join("codex.jsonl");
    std::fs::write(&claude_path, claude.join("\n") + "\n").unwrap();
    std::fs::write(&codex_path, codex.join("\n") + "\n").unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    support::capture(
        &cairn,
        &[
            support::main_file(Agent::Claude, &claude_path),
            support::main_file(Agent::Codex, &codex_path),
        ],
    );
    let files = support::every_byte_under(data.path());
    let mut leaked = Vec::new();
    for (name, _, secret) in CORPUS {
        for (file, bytes) in &files {
            if memchr::memmem::find(bytes, secret.as_bytes()).is_some() {
                leaked.push(format!("{name} in {file}"));
            }
        }
    }
    // Outbound material (LLM prompts, insight material, exports) is built from stored text
    // through the outbound redactor: nothing it would send holds a planted secret either.
    let conn = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
    let mut stmt = conn
        .prepare("SELECT coalesce(text, '') || ' ' || coalesce(tool_input, '') FROM records")
        .unwrap();
    let stored: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for text in &stored {
        let out = redactor.outbound_text(text, Some("/work/repo"), None, &mut Vec::new());
        for (name, _, secret) in CORPUS {
            if out.contains(secret) {
                leaked.push(format!("{name} in outbound text"));
            }
        }
    }
    // Look-alikes survive ingest verbatim.
    let kept = look_alikes()
        .iter()
        .filter(|s| stored.iter().any(|t| t.contains(s.as_str())))
        .count();
    eprintln!(
        "secrets corpus: {} planted x {} record kinds, {} found by the scanner, {} stored anywhere; \
         look-alikes: {} tried, {} flagged, {} kept verbatim",
        CORPUS.len(),
        8,
        CORPUS.len() - missed.len(),
        leaked.len(),
        look_alikes().len(),
        flagged.len(),
        kept
    );
    assert!(missed.is_empty(), "not detected: {missed:?}");
    assert!(leaked.is_empty(), "leaked:\n{}", leaked.join("\n"));
    assert!(flagged.is_empty(), "look-alikes flagged: {flagged:?}");
    assert_eq!(
        kept,
        look_alikes().len(),
        "a look-alike was changed at ingest"
    );
}

/// A transcript in a folder named after a secret (a project folder for a working directory that
/// holds a token, as Claude Code names them), and an empty one beside it: no byte of the secret
/// under the data dir, its path included; the transcript is read once, not again at the next
/// capture; and the session is not said gone for want of a file at the path kept.
#[test]
fn a_secret_in_a_transcript_s_path_never_reaches_the_data_dir() {
    // Paths are kept without what the rules find definite (a token's shape), not without what
    // only reads as random: folder names are full of ids (`at_rest`).
    let plants: Vec<Plant> = plants()
        .into_iter()
        .filter(|p| !p.planted.contains(['/', '\n', '\\']) && p.planted.len() < 200)
        .filter(|p| {
            !matches!(
                Redactor::global().redact_definite(&p.planted),
                std::borrow::Cow::Borrowed(_)
            )
        })
        .collect();
    assert!(plants.len() > 10, "{} path-safe plants", plants.len());
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let mut files = Vec::new();
    for (i, plant) in plants.iter().enumerate() {
        let folder = src.path().join(format!("-home-me-{}", plant.planted));
        std::fs::create_dir_all(&folder).unwrap();
        let path = folder.join(format!("s{i}.jsonl"));
        let line = json!({"type":"user","sessionId":format!("path-secret-{i}"),"cwd":src.path(),
            "timestamp":"2026-03-01T09:00:00.000Z","message":{"role":"user","content":"start"}});
        std::fs::write(&path, format!("{line}\n")).unwrap();
        files.push(support::main_file(Agent::Claude, &path));
        let empty = folder.join(format!("e{i}.jsonl"));
        std::fs::write(&empty, "").unwrap();
        files.push(support::main_file(Agent::Claude, &empty));
    }
    let first = support::capture(&cairn, &files);
    assert_eq!(first.records_added as usize, plants.len(), "{first:?}");
    assert_eq!(
        first.warnings.len(),
        plants.len(),
        "each empty file said: {first:?}"
    );
    for w in &first.warnings {
        assert!(!plants.iter().any(|p| w.path.contains(&p.secret)), "{w:?}");
    }
    let again = support::capture(&cairn, &files);
    assert_eq!(again.records_added, 0, "read again: {again:?}");
    assert!(
        again.warnings.is_empty(),
        "said again: {:?}",
        again.warnings
    );

    let leaks: Vec<String> = support::every_byte_under(data.path())
        .iter()
        .flat_map(|(name, bytes)| {
            plants
                .iter()
                .filter(|p| memchr::memmem::find(bytes, p.secret.as_bytes()).is_some())
                .map(move |p| format!("{}: found in {name}", p.rule))
        })
        .collect();
    assert!(
        leaks.is_empty(),
        "secrets reached the data dir:\n{}",
        leaks.join("\n")
    );

    let conn = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
    let key: String = conn
        .query_row("SELECT session_key FROM sessions LIMIT 1", [], |r| r.get(0))
        .unwrap();
    drop(conn);
    let resume = cairn.resume_command(&key).unwrap();
    assert_eq!(resume.problem, None, "{resume:?}");
}

/// What a parser takes from the files beside a transcript (Grok's `summary.json`, Vibe's
/// `meta.json`, gptme's `config.toml`: a title, a working directory, a branch, a model) is
/// redacted like the transcript: no byte of a secret planted there reaches the data dir.
#[test]
fn secrets_in_the_files_beside_a_transcript_never_reach_the_data_dir() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let key = "AKIAZ7Q4N2M8K3T6W1XR";
    let token = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
    let password = "Sup3rS3cretPassw0rd";
    let url = format!("postgres://admin:{password}@db/x");
    let copy = |from: &std::path::Path, to: &std::path::Path| {
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from, to).unwrap();
    };

    let grok = src
        .path()
        .join("grok/p/019f6000-0000-7000-8000-000000000001");
    let grok_fixture = fixtures.join(
        "grok/%2Fworkspace%2Fgrok-worktrees%2Fparser-audit/019f6000-0000-7000-8000-000000000001",
    );
    copy(
        &grok_fixture.join("chat_history.jsonl"),
        &grok.join("chat_history.jsonl"),
    );
    let mut summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(grok_fixture.join("summary.json")).unwrap()).unwrap();
    summary["generated_title"] = json!(format!("deploy {key}"));
    summary["info"]["cwd"] = json!(format!("/h/{url}"));
    summary["head_branch"] = json!(format!("feat/{token}"));
    std::fs::write(grok.join("summary.json"), summary.to_string()).unwrap();

    let vibe = src.path().join("vibe/session_with_tools");
    let vibe_fixture = fixtures.join("vibe/session_with_tools");
    copy(
        &vibe_fixture.join("messages.jsonl"),
        &vibe.join("messages.jsonl"),
    );
    let mut meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(vibe_fixture.join("meta.json")).unwrap()).unwrap();
    meta["title"] = json!(format!("use {token}"));
    meta["git_branch"] = json!(format!("fix/{key}"));
    meta["environment"]["working_directory"] = json!(format!("/h/{url}"));
    std::fs::write(vibe.join("meta.json"), meta.to_string()).unwrap();

    let gptme = src.path().join("gptme/2026-06-13-write-hello-world");
    copy(
        &fixtures.join("gptme/2026-06-13-write-hello-world/conversation.jsonl"),
        &gptme.join("conversation.jsonl"),
    );
    std::fs::write(
        gptme.join("config.toml"),
        format!("[chat]\nname = \"with {token}\"\nmodel = \"m-{key}\"\nworkspace = \"/h/{url}\"\n"),
    )
    .unwrap();

    let cairn = Cairn::open(data.path()).unwrap();
    let report = support::capture(
        &cairn,
        &[
            support::main_file(Agent::Grok, &grok.join("chat_history.jsonl")),
            support::main_file(Agent::Vibe, &vibe.join("messages.jsonl")),
            support::main_file(Agent::Gptme, &gptme.join("conversation.jsonl")),
        ],
    );
    assert_eq!(report.sessions_added, 3, "{report:?}");
    let conn = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
    let redacted: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM sessions WHERE title LIKE '%[REDACTED:%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(redacted, 3, "every session's title kept, redacted");
    drop(conn);
    let leaks: Vec<String> = support::every_byte_under(data.path())
        .iter()
        .flat_map(|(name, bytes)| {
            [key, token, password]
                .into_iter()
                .filter(|s| memchr::memmem::find(bytes, s.as_bytes()).is_some())
                .map(move |s| format!("{s}: found in {name}"))
        })
        .collect();
    assert!(
        leaks.is_empty(),
        "secrets reached the data dir:\n{}",
        leaks.join("\n")
    );
}

/// A Gemini session document in a project folder named after a token: kept under the path
/// without it, read again by a reindex to the same records (the kind of a source is read from
/// its kept path); and a path stored as found, as before the rules saw the token, is kept
/// anew by the next capture, which reads on where it stopped.
#[test]
fn a_source_kept_without_the_secret_in_its_path_reads_again_whole() {
    let token = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let chats = src.path().join(format!("tmp/proj-{token}/chats"));
    std::fs::create_dir_all(&chats).unwrap();
    let doc = chats.join("session-2026-01-10T01-55-ac6d3016.json");
    std::fs::copy(
        support::fixtures().join("gemini/m-gemini/chats/session-2026-01-10T01-55-ac6d3016.json"),
        &doc,
    )
    .unwrap();
    let claude = src.path().join(format!("-home-me-{token}"));
    std::fs::create_dir_all(&claude).unwrap();
    let line = |i: u32| {
        json!({"type":"user","sessionId":"kept-path","cwd":"/w","uuid":format!("u{i}"),
            "timestamp":"2026-03-01T09:00:00.000Z","message":{"role":"user","content":format!("prompt {i}")}})
        .to_string()
            + "\n"
    };
    let transcript = claude.join("kept-path.jsonl");
    std::fs::write(&transcript, line(0)).unwrap();
    let files = [
        support::main_file(Agent::Gemini, &doc),
        support::main_file(Agent::Claude, &transcript),
    ];
    let cairn = Cairn::open(data.path()).unwrap();
    let first = support::capture(&cairn, &files);
    let records = support::count(data.path(), "SELECT count(*) FROM records");
    assert!(records > 10, "{first:?}");

    let report = cairn
        .reindex(
            &cairn_core::ReindexRequest::default(),
            &cairn_core::archive::capture::Quiet,
        )
        .unwrap();
    assert!(report.skipped.is_empty(), "{report:?}");
    assert_eq!(
        (report.records_before, report.records_after),
        (records as u32, records as u32),
        "{report:?}"
    );

    // As an older build stored it: the path as found.
    let conn = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
    let raw = std::fs::canonicalize(&transcript)
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert_eq!(
        conn.execute(
            "UPDATE sources SET path = ?1 WHERE path LIKE '%kept-path.jsonl'",
            [&raw]
        )
        .unwrap(),
        1
    );
    drop(conn);
    std::fs::write(&transcript, line(0) + &line(1)).unwrap();
    let conn = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    drop(conn);
    let again = support::capture(&cairn, &files);
    assert_eq!(
        again.records_added, 1,
        "read on where it stopped: {again:?}"
    );
    // Once the log is written back, as it is in time: no page keeps the path as found.
    let conn = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    drop(conn);
    assert_eq!(
        support::count(
            data.path(),
            "SELECT count(*) FROM sources WHERE path LIKE '%kept-path.jsonl'"
        ),
        1
    );
    let leaks: Vec<String> = support::every_byte_under(data.path())
        .iter()
        .filter(|(_, bytes)| memchr::memmem::find(bytes, token.as_bytes()).is_some())
        .map(|(name, _)| name.clone())
        .collect();
    assert!(leaks.is_empty(), "the token reached: {leaks:?}");
}
