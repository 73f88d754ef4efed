//! Secret formats the rule table, key names and entropy layer once missed (each planted alone, in
//! prose, in a transcript line and through a real capture), look-alikes that must stay readable,
//! providers' opaque blobs, base64 looked inside, and secrets or paths behind terminal escape
//! sequences.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::archive::redact::{PATH, Redactor};
use cairn_core::llm::Outbound;
use serde_json::{Value, json};

fn r() -> &'static Redactor {
    Redactor::global()
}

/// Deterministic bytes (an LCG), so the planted values are random-looking but fixed.
fn bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) as u8
        })
        .collect()
}

fn hex(seed: u64, digits: usize) -> String {
    bytes(seed, digits.div_ceil(2))
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>()[..digits]
        .to_owned()
}

fn from_alphabet(seed: u64, alphabet: &[u8], n: usize) -> String {
    bytes(seed, n)
        .iter()
        .map(|b| alphabet[usize::from(*b) % alphabet.len()] as char)
        .collect()
}

fn b64(data: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= u32::from(c) << (16 - 8 * i);
        }
        for i in 0..4 {
            out.push(if i <= chunk.len() {
                A[((acc >> (18 - 6 * i)) & 63) as usize] as char
            } else {
                '='
            });
        }
    }
    out
}

/// A PEM private key with a DER-shaped body (`SEQUENCE { INTEGER 0, … }`) of random bytes.
fn pem(label: &str, seed: u64) -> String {
    let mut der = vec![
        0x30, 0x82, 0x04, 0xa4, 0x02, 0x01, 0x00, 0x02, 0x82, 0x01, 0x01, 0x00,
    ];
    der.extend(bytes(seed, 1180));
    let body = b64(&der);
    let lines: Vec<&str> = body
        .as_bytes()
        .chunks(64)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    format!(
        "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
        lines.join("\n")
    )
}

/// One format: a name, the text planted and the part of it that must never be stored.
struct Format {
    name: &'static str,
    planted: String,
    secret: String,
}

fn format(name: &'static str, planted: String, secret: &str) -> Format {
    assert!(planted.contains(secret), "{name}");
    Format {
        name,
        secret: secret.to_owned(),
        planted,
    }
}

/// The formats that survived ingest before: realistic values in each one's published shape.
fn formats() -> Vec<Format> {
    let secret_key_base = hex(1, 128);
    let encryption_key = hex(2, 64);
    let master_key = hex(3, 32);
    let dop = format!("dop_v1_{}", hex(4, 64));
    let shpat = format!("shpat_{}", hex(5, 32));
    let age = format!(
        "AGE-SECRET-KEY-1{}",
        from_alphabet(6, b"QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)
    );
    let mailgun = format!("key-{}", hex(7, 32));
    let client_key = b64(pem("RSA PRIVATE KEY", 8).as_bytes());
    let service_account = json!({
        "type": "service_account",
        "project_id": "demo-project-4471",
        "private_key_id": hex(9, 40),
        "private_key": pem("PRIVATE KEY", 10),
        "client_email": "ci-deployer@demo-project-4471.iam.gserviceaccount.com",
        "client_id": "104729384756102938475",
        "token_uri": "https://oauth2.googleapis.com/token",
    });
    let google = b64(serde_json::to_string_pretty(&service_account)
        .unwrap()
        .as_bytes());
    let pgp_body: String = b64(&bytes(11, 900))
        .as_bytes()
        .chunks(64)
        .map(|c| format!("{}\n", std::str::from_utf8(c).unwrap()))
        .collect();
    let pgp = format!(
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{pgp_body}=Qm7T\n-----END PGP PRIVATE KEY BLOCK-----\n"
    );
    let sig = "Xq7Wr2Et9Yu4Io1Pa6Sd3Fg8Hj0Kl5Zx7Cv2Bn9M%2Bq4%3D".to_owned();
    vec![
        format("DB_PASS", "export DB_PASS=Zk8s!qP2vRw".into(), "Zk8s!qP2vRw"),
        format(
            "MYSQL_PWD",
            "MYSQL_PWD=Hq7vL3xTz9 mysqldump app > app.sql".into(),
            "Hq7vL3xTz9",
        ),
        format(
            "SECRET_KEY_BASE",
            format!("SECRET_KEY_BASE={secret_key_base}"),
            &secret_key_base,
        ),
        format(
            "ENCRYPTION_KEY",
            format!("ENCRYPTION_KEY={encryption_key}\nPORT=3000"),
            &encryption_key,
        ),
        format(
            "RAILS_MASTER_KEY",
            format!("RAILS_MASTER_KEY={master_key} bin/rails credentials:edit"),
            &master_key,
        ),
        format(
            "curl -u",
            "curl -s -u deploy:Tr0ub4dor-3 https://api.example.com/v1/status".into(),
            "Tr0ub4dor-3",
        ),
        format(
            "mysql -p",
            "mysql -h db.internal -u app -pWinter2025x appdb < schema.sql".into(),
            "Winter2025x",
        ),
        format(
            "sshpass -p",
            "sshpass -p 'Spring#2025' ssh deploy@10.0.0.5 uptime".into(),
            "Spring#2025",
        ),
        format(
            ".netrc password",
            "machine github.com\n  login octocat\n  password gh-Netrc-Passw0rd\n".into(),
            "gh-Netrc-Passw0rd",
        ),
        format(
            "dop_v1_",
            format!("DigitalOcean token {dop} (read/write)"),
            &dop,
        ),
        format("shpat_", format!("X-Shopify-Access-Token {shpat}"), &shpat),
        format(
            "AGE-SECRET-KEY-1",
            format!("# created: 2026-03-01\n# public key: age1example\n{age}\n"),
            &age,
        ),
        format(
            "Mailgun key-",
            format!("the Mailgun key is {mailgun}, rotate it monthly"),
            &mailgun,
        ),
        format(
            "kubeconfig client-key-data",
            format!(
                "users:\n- name: admin\n  user:\n    client-key-data: {client_key}\n    token: null\n"
            ),
            &client_key,
        ),
        format(
            "GOOGLE_CREDENTIALS_BASE64",
            format!("GOOGLE_CREDENTIALS_BASE64={google}"),
            &google,
        ),
        format("PGP private key block", pgp.clone(), &pgp[40..200]),
        format(
            "Azure SAS sig=",
            format!(
                "https://demo.blob.core.windows.net/backups/db.tar.gz?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-12-31T00:00:00Z&sig={sig}"
            ),
            &sig,
        ),
    ]
    .into_iter()
    .chain([{
        let mut der = vec![0x30, 0x82, 0x02, 0x5c, 0x02, 0x01, 0x00];
        der.extend(bytes(13, 600));
        let key = b64(&der);
        format(
            "bare base64 DER private key",
            format!("it printed {key} and exited"),
            &key,
        )
    }])
    .collect()
}

/// Things that look random but are not secrets and must stay readable.
fn look_alikes() -> Vec<(&'static str, String)> {
    let png = {
        let mut data = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        data.extend(bytes(20, 3000));
        b64(&data)
    };
    let certificate = {
        let mut der = vec![0x30, 0x82, 0x03, 0x10, 0x30, 0x82, 0x02, 0xf8, 0xa0, 0x03];
        der.extend(bytes(21, 700));
        let body = b64(&der);
        let lines: Vec<&str> = body
            .as_bytes()
            .chunks(64)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        b64(format!(
            "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
            lines.join("\n")
        )
        .as_bytes())
    };
    vec![
        (
            "git SHA",
            "commit 3f786850e387550fdab836ed7e6dc881de23001b (HEAD -> main)".into(),
        ),
        ("short SHA", "[main 3f78685] fix the parser".into()),
        (
            "UUID",
            "session 55604662-cf2a-4331-851a-ec234028f8ca resumed".into(),
        ),
        ("base64 image", format!("data:image/png;base64,{png}")),
        ("base64 image without a label", format!("{{\"thumbnail\": \"{png}\"}}")),
        (
            "lockfile integrity",
            "\"integrity\": \"sha512-9h5YbJkNnPk3k7qYQq2bT2pVv8vX8xq0Yc9hQ7yFj3rW5w2Qy6q3cGzXv9xQ+3mH0xq5Z6b8q9QzPq1rT3w4Aa==\"".into(),
        ),
        (
            "npm shasum",
            format!("\"shasum\": \"{}\"", hex(22, 40)),
        ),
        (
            "cargo checksum",
            format!("checksum = \"{}\"", hex(23, 64)),
        ),
        ("MD5", format!("md5sum: {}  app.tar.gz", hex(24, 32))),
        ("SHA-384", format!("{}  release.zip", hex(25, 96))),
        ("SHA-512", format!("{}  release.zip", hex(26, 128))),
        (
            "pip hash",
            format!("--hash=sha256:{}", hex(27, 64)),
        ),
        ("short hex id", format!("ObjectId(\"{}\")", hex(28, 24))),
        (
            "kubeconfig certificate-authority-data",
            format!("    certificate-authority-data: {certificate}"),
        ),
        (
            "session_key",
            "session_key = sha256-6cd272dd886b6129c5dd7f2144b048d0".into(),
        ),
        ("PWD", "PWD=/home/dev/projects/app OLDPWD=/home/dev".into()),
        ("PRIMARY_KEY", "PRIMARY_KEY=user_id".into()),
        ("bypass", "bypass: maintenance-window".into()),
    ]
}

/// Findings in `planted` that cover the whole of `secret`.
fn covered(planted: &str, secret: &str) -> bool {
    let at = planted.find(secret).unwrap();
    r().scan_text(planted)
        .iter()
        .any(|f| f.start <= at && f.end >= at + secret.len())
}

fn claude_line(text: &str, i: usize) -> String {
    json!({"type":"user","sessionId":"formats","uuid":format!("u-{i}"),
        "timestamp":format!("2026-03-01T10:{:02}:00.000Z", i % 60),
        "message":{"role":"user","content":[{"type":"tool_result","tool_use_id":format!("toolu_{i}"),"content":text}]}})
    .to_string()
}

#[test]
fn every_format_is_found_alone_in_prose_and_in_a_line() {
    let mut missed = Vec::new();
    for (i, f) in formats().iter().enumerate() {
        let prose = format!("ok, here it is:\n{}\nthat is all", f.planted);
        for (place, text) in [("alone", f.planted.as_str()), ("prose", prose.as_str())] {
            if !covered(text, &f.secret) {
                missed.push(format!("{} ({place})", f.name));
            }
            let red = r().redact_text(text, "", &mut Vec::new());
            assert!(!red.contains(&f.secret), "{} ({place}): {red}", f.name);
        }
        let line = claude_line(&prose, i);
        let mut found = Vec::new();
        let red = r().redact_line(&line, &mut found);
        let v: Value = serde_json::from_str(&red).unwrap();
        assert!(!red.contains(&f.secret), "{} (line): {red}", f.name);
        assert!(v["message"]["content"][0]["content"].is_string());
        assert!(!found.is_empty(), "{}", f.name);
        // idempotent
        assert_eq!(r().redact_line(&red, &mut Vec::new()), red);
    }
    assert!(missed.is_empty(), "not found: {missed:?}");
}

#[test]
fn look_alikes_are_not_flagged() {
    let flagged: Vec<_> = look_alikes()
        .into_iter()
        .filter(|(_, s)| !r().scan_text(s).is_empty())
        .map(|(name, s)| (name, r().scan_text(&s)))
        .collect();
    assert!(flagged.is_empty(), "flagged: {flagged:?}");
}

#[test]
fn formats_never_reach_the_data_dir_and_look_alikes_are_kept_verbatim() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let formats = formats();
    let look_alikes = look_alikes();
    let mut lines = vec![
        json!({"type":"user","sessionId":"formats","timestamp":"2026-03-01T09:00:00.000Z",
            "message":{"role":"user","content":"start"}})
        .to_string(),
    ];
    for (i, f) in formats.iter().enumerate() {
        lines.push(claude_line(&f.planted, i));
    }
    for (i, (_, s)) in look_alikes.iter().enumerate() {
        lines.push(claude_line(s, 100 + i));
    }
    let path = src.path().join("formats.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    support::capture(&cairn, &[support::main_file(Agent::Claude, &path)]);

    let files = support::every_byte_under(data.path());
    let mut leaked = Vec::new();
    for f in &formats {
        for (name, bytes) in &files {
            if memchr::memmem::find(bytes, f.secret.as_bytes()).is_some() {
                leaked.push(format!("{} in {name}", f.name));
            }
        }
    }
    let conn = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
    let stored: Vec<String> = conn
        .prepare("SELECT text FROM records WHERE text IS NOT NULL")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let changed: Vec<_> = look_alikes
        .iter()
        .filter(|(_, s)| !stored.iter().any(|t| t == s))
        .map(|(name, _)| *name)
        .collect();
    eprintln!(
        "formats: {} planted, {} stored anywhere under the data dir; look-alikes: {} tried, {} changed",
        formats.len(),
        leaked.len(),
        look_alikes.len(),
        changed.len()
    );
    assert!(leaked.is_empty(), "leaked:\n{}", leaked.join("\n"));
    assert!(
        changed.is_empty(),
        "look-alikes changed at ingest: {changed:?}"
    );
}

#[test]
fn provider_blobs_are_kept_only_at_their_own_paths() {
    let blob = b64(&bytes(30, 600));
    // Claude's thinking signature, an inline image, Codex's encrypted reasoning: kept.
    for line in [
        json!({"type":"assistant","message":{"content":[{"type":"thinking","thinking":"let me look","signature":blob}]}}),
        json!({"type":"assistant","message":{"content":[{"type":"redacted_thinking","data":blob}]}}),
        json!({"type":"user","message":{"content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":blob}}]}}),
        json!({"type":"response_item","payload":{"type":"reasoning","summary":[],"encrypted_content":blob}}),
    ] {
        let line = line.to_string();
        let mut found = Vec::new();
        assert_eq!(r().redact_line(&line, &mut found), line);
        assert!(found.is_empty(), "{found:?} in {line}");
    }
    // The same keys anywhere else hold whatever a tool printed: scanned.
    for line in [
        json!({"type":"user","toolUseResult":{"signature":blob}}),
        json!({"type":"user","toolUseResult":{"data":blob}}),
        json!({"type":"user","toolUseResult":{"encrypted_content":blob}}),
    ] {
        let line = line.to_string();
        let red = r().redact_line(&line, &mut Vec::new());
        assert!(!red.contains(&blob), "{red}");
    }
}

#[test]
fn escape_sequences_hide_no_secret_and_no_path() {
    // Ingest: a token coloured by a tool.
    let token = "ghp_R7sT2vX9kL4mN8qP1wZ5yB3cD6fH0jK2aE4g";
    let line = claude_line(
        &format!("\u{1b}[1m{token}\u{1b}[0m and \u{9b}32m{token}"),
        1,
    );
    let red = r().redact_line(&line, &mut Vec::new());
    assert!(!red.contains(token), "{red}");
    let v: Value = serde_json::from_str(&red).unwrap();
    assert_eq!(
        v["message"]["content"][0]["content"],
        "\u{1b}[1m[REDACTED:github-pat]\u{1b}[0m and \u{9b}32m[REDACTED:github-pat]",
        "the sequences around it are kept (the archive stores what the tool printed)"
    );
    // A colour code glued to a key name.
    let red = r().redact_text(
        "\u{1b}[33mexport DB_PASS=\u{1b}[1mZk8s!qP2vRw\u{1b}[0m",
        "",
        &mut Vec::new(),
    );
    assert!(!red.contains("Zk8s!qP2vRw"), "{red}");

    // Outbound: a test runner's coloured path, the same path plain, an OSC hyperlink.
    let printed = "  \u{1b}[90m/home/USER/projects/shop/assets\u{1b}[39m\n  at /home/USER/projects/shop/assets\n\u{1b}]8;;file:///home/USER/x\u{7}link\u{1b}]8;;\u{7}";
    let mut found = Vec::new();
    let out = r().outbound_text(printed, None, Some("/home/USER"), &mut found);
    assert!(!out.contains("/home/USER"), "{out}");
    assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "{out:?}");
    assert_eq!(found.iter().filter(|f| f.rule == PATH).count(), 2, "{out}");
    // And through the LLM guard every prompt passes.
    let ob = Outbound {
        repo_root: Some("/work/shop".into()),
        home: Some("/home/USER".into()),
    };
    let sent = ob.clean(printed).unwrap();
    assert!(
        !sent.contains("/home/USER") && !sent.contains('\u{1b}'),
        "{sent:?}"
    );
}
