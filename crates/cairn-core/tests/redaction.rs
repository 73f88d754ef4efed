#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Redaction guarantees, end to end: every rule's test value is found alone, in prose, in a
//! Claude-like JSONL line and in a shell command, and is gone afterwards; redaction is idempotent;
//! JSON lines stay valid JSON; look-alikes (digests, UUIDs, paths, provider ids, code) are left
//! alone; and property tests plant secrets at random places in random JSON.

use std::borrow::Cow;
use std::path::Path;

use cairn_core::archive::redact::{Confidence, Finding, Redactor};
use cairn_core::archive::secrets::{SecretRule, rules};
use proptest::prelude::*;
use regex::Regex;
use serde_json::{Value, json};

fn r() -> &'static Redactor {
    Redactor::global()
}

/// The part of a rule's test value that has to disappear (its `secret` group, or the match).
fn secret_of(rule: &SecretRule) -> String {
    let re = Regex::new(rule.pattern).unwrap();
    let caps = re.captures(rule.test_value).unwrap();
    caps.name("secret")
        .or_else(|| caps.get(0))
        .unwrap()
        .as_str()
        .to_owned()
}

fn claude_line(text: &str) -> String {
    json!({
        "parentUuid": "8d0e3a56-1f0e-4d8c-9f1a-2b3c4d5e6f70",
        "isSidechain": false,
        "type": "user",
        "message": {"role": "user", "content": [{"type": "text", "text": text}]},
        "uuid": "019fc8be-3658-7ca3-9e29-000000000000",
        "timestamp": "2026-05-07T09:30:00.000Z",
        "cwd": "/home/user/project",
        "gitBranch": "main"
    })
    .to_string()
}

fn bash_line(command: &str) -> String {
    json!({
        "type": "assistant",
        "message": {
            "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
            "content": [{
                "type": "tool_use",
                "id": "toolu_01ABCdefGHIjklMNOpqrST",
                "name": "Bash",
                "input": {"command": command, "description": "Run the tool"}
            }],
            "usage": {"input_tokens": 12, "output_tokens": 340, "cache_creation_input_tokens": 2048}
        },
        "requestId": "req_011CUVabcDEFghiJKLmnoPQ"
    })
    .to_string()
}

/// Every string and key of a JSON value, joined by newlines.
fn all_text(v: &Value) -> String {
    fn walk(v: &Value, out: &mut String) {
        match v {
            Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
            Value::Object(map) => {
                for (k, v) in map {
                    out.push_str(k);
                    out.push('\n');
                    walk(v, out);
                }
            }
            _ => {}
        }
    }
    let mut out = String::new();
    walk(v, &mut out);
    out
}

/// Neither the secret nor any 8-byte piece of it is left in `output`, unless that piece also
/// occurs in the text around the secret.
fn assert_gone(output: &str, secret: &str, around: &str, what: &str) {
    assert!(
        !output.contains(secret),
        "{what}: secret left in {output:?}"
    );
    for w in secret.as_bytes().windows(8) {
        let w = std::str::from_utf8(w).unwrap();
        assert!(
            !output.contains(w) || around.contains(w),
            "{what}: {w:?} left in {output:?}"
        );
    }
}

fn has_rule(findings: &[Finding], rule: &str) -> bool {
    findings.iter().any(|f| f.rule == rule)
}

fn check_text(rule: &SecretRule, text: &str, secret: &str, what: &str) {
    assert!(
        has_rule(&r().scan_text(text), rule.name),
        "{what}: {} not found in {text:?}",
        rule.name
    );
    let mut out = Vec::new();
    let red = r().redact_text(text, "", &mut out).into_owned();
    assert!(has_rule(&out, rule.name), "{what}");
    assert_gone(&red, secret, &text.replace(secret, " "), what);
    assert!(
        r().scan_text(&red).is_empty(),
        "{what}: output still has findings: {red:?}"
    );
    assert_eq!(
        r().redact_text(&red, "", &mut Vec::new()),
        red,
        "{what}: not idempotent"
    );
}

fn check_line(rule: &SecretRule, line: &str, secret: &str, what: &str) {
    let mut out = Vec::new();
    let red = r().redact_line(line, &mut out);
    assert!(matches!(red, Cow::Owned(_)), "{what}: line not redacted");
    assert!(
        has_rule(&out, rule.name),
        "{what}: {} not among {out:?}",
        rule.name
    );
    let parsed: Value =
        serde_json::from_str(&red).unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {red}"));
    assert!(!red.contains('\n'), "{what}: output is not one line");
    let original: Value = serde_json::from_str(line).unwrap();
    assert_gone(
        &all_text(&parsed),
        secret,
        &all_text(&original).replace(secret, " "),
        what,
    );
    assert!(!red.contains(secret));
    for f in &out {
        assert!(
            parsed.pointer(&f.field).is_some(),
            "{what}: field {:?} does not resolve",
            f.field
        );
        assert!(f.start < f.end);
    }
    // Findings are safe to store: serialised, they hold no part of the secret.
    assert_gone(&serde_json::to_string(&out).unwrap(), secret, "", what);
    let mut again = Vec::new();
    assert!(
        matches!(r().redact_line(&red, &mut again), Cow::Borrowed(_)),
        "{what}: second pass changed {red}"
    );
    assert!(again.is_empty(), "{what}: second pass found {again:?}");
}

#[test]
fn every_rule_test_value_is_found_everywhere_and_removed() {
    for rule in rules() {
        let secret = secret_of(rule);
        let v = rule.test_value;
        let what = |place: &str| format!("{} ({place})", rule.name);
        assert!(has_rule(&r().scan_text(v), rule.name), "{}", what("alone"));
        check_text(rule, v, &secret, &what("alone"));
        let prose = format!("here is my key {v} ok");
        check_text(rule, &prose, &secret, &what("prose"));
        check_line(rule, &claude_line(&prose), &secret, &what("claude line"));
        let command = format!("cd /home/user/project && echo {v} | tool --stdin > out.txt");
        check_line(rule, &bash_line(&command), &secret, &what("shell command"));
        // As a plain (non-JSON) line, too.
        let mut out = Vec::new();
        let red = r().redact_line(&prose, &mut out);
        assert!(
            !red.contains(&secret) && has_rule(&out, rule.name),
            "{}",
            what("text line")
        );
    }
}

#[test]
fn rule_confidences_follow_the_table() {
    for rule in rules() {
        let found = r().scan_text(rule.test_value);
        let f = found.iter().find(|f| f.rule == rule.name).unwrap();
        assert_eq!(f.confidence, rule.confidence, "{}", rule.name);
    }
}

#[test]
fn private_key_with_escaped_newlines_inside_a_json_string() {
    // A tool output that printed a service-account JSON: the PEM's newlines are `\n` escapes
    // inside the decoded string, and `\\n` in the raw line.
    let body = "MIIEvEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLE00000000";
    let printed = format!(
        r#"{{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n", "client_email": "x@example.iam.gserviceaccount.com"}}"#
    );
    let line = json!({"type": "user", "toolUseResult": {"stdout": printed}}).to_string();
    let mut out = Vec::new();
    let red = r().redact_line(&line, &mut out);
    assert!(has_rule(&out, "private-key-block"));
    assert!(!red.contains(body) && !red.contains("MIIEvEXAMPLE"));
    let v: Value = serde_json::from_str(&red).unwrap();
    let stdout = v["toolUseResult"]["stdout"].as_str().unwrap();
    assert!(stdout.contains(
        "-----BEGIN PRIVATE KEY-----[REDACTED:private-key-block]-----END PRIVATE KEY-----"
    ));
    assert_eq!(out[0].field, "/toolUseResult/stdout");
}

#[test]
fn sensitive_keys_in_json_redact_whole_values() {
    let line = json!({
        "env": {
            "DB_PASSWORD": "changeme",
            "API_TOKEN": "tok-123-abc",
            "GITHUB_TOKEN": "ghp_EXAMPLE00000000000000000000000000000",
            "PATH": "/usr/local/bin:/usr/bin",
            "HOME": "/home/user",
            "EMPTY_SECRET": "",
            "PLACEHOLDER_TOKEN": "${TOKEN}",
            "cwd": "/home/user/project",
            "session_id": "019fc8be-3658-7ca3-9e29-000000000000",
        },
        "usage": {"input_tokens": 12, "max_tokens": 4096},
        "credentials": ["first-secret-value", "second-secret-value"],
    })
    .to_string();
    let mut out = Vec::new();
    let red = r().redact_line(&line, &mut out);
    let v: Value = serde_json::from_str(&red).unwrap();
    assert_eq!(v["env"]["DB_PASSWORD"], "[REDACTED:sensitive-key]");
    assert_eq!(v["env"]["API_TOKEN"], "[REDACTED:sensitive-key]");
    assert_eq!(v["env"]["GITHUB_TOKEN"], "[REDACTED:github-pat]");
    assert_eq!(v["env"]["PATH"], "/usr/local/bin:/usr/bin");
    assert_eq!(v["env"]["EMPTY_SECRET"], "");
    assert_eq!(v["env"]["PLACEHOLDER_TOKEN"], "${TOKEN}");
    assert_eq!(v["env"]["cwd"], "/home/user/project");
    assert_eq!(
        v["env"]["session_id"],
        "019fc8be-3658-7ca3-9e29-000000000000"
    );
    assert_eq!(v["usage"]["max_tokens"], 4096);
    assert_eq!(
        v["credentials"],
        json!(["[REDACTED:sensitive-key]", "[REDACTED:sensitive-key]"])
    );
    let gh = out.iter().find(|f| f.field == "/env/GITHUB_TOKEN").unwrap();
    assert_eq!(gh.confidence, Confidence::Definite);
    let pw = out.iter().find(|f| f.field == "/env/DB_PASSWORD").unwrap();
    assert_eq!(
        (pw.rule, pw.confidence, pw.start, pw.end),
        ("sensitive-key", Confidence::Candidate, 0, 8)
    );
}

#[test]
fn thinking_signatures_encrypted_reasoning_and_images_are_left_alone() {
    let sig = "Nf9K2pLm8QwEr7TyUi4OzXa3Bv6Cn0Md".repeat(3);
    let line = json!({
        "type": "assistant",
        "message": {"content": [
            {"type": "thinking", "thinking": "Let me look.", "signature": sig},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="}}
        ]},
        "payload": {"type": "reasoning", "encrypted_content": "gAAAAABoXyZ1aB2cD3eF4gH5iJ6kL7mN8oP9qR0sT1uV2wX3yZ4"}
    })
    .to_string();
    let mut out = Vec::new();
    assert!(
        matches!(r().redact_line(&line, &mut out), Cow::Borrowed(_)),
        "{out:?}"
    );
    assert!(out.is_empty());
}

#[test]
fn lines_with_unicode_or_slash_escapes_take_the_structural_path() {
    // A key split by an escape in the raw line is still found once decoded.
    let line = r#"{"a":"key AKIA\u0049OSFODNN7EXAMPLE","b":"https:\/\/x.example\/\u00e9"}"#;
    let mut out = Vec::new();
    let red = r().redact_line(line, &mut out);
    assert!(red.contains("[REDACTED:aws-access-key]"), "{red}");
    assert!(!red.contains("IOSFODNN7EXAMPLE"));
    // Nothing to find: the line is returned as it was, escapes and all.
    let clean = r#"{"a":"caf\u00e9 \/ ok"}"#;
    assert!(matches!(
        r().redact_line(clean, &mut Vec::new()),
        Cow::Borrowed(_)
    ));
}

#[test]
fn non_json_and_malformed_lines_are_redacted_as_text() {
    let line = r#"{"truncated": "export OPENAI_API_KEY=sk-proj-EXAMPLEEXAMPLEEXAMPLE0000000000000"#;
    let mut out = Vec::new();
    let red = r().redact_line(line, &mut out);
    assert_eq!(
        red,
        r#"{"truncated": "export OPENAI_API_KEY=[REDACTED:openai-key]"#
    );
    assert_eq!(out[0].field, "");
}

/// Things that look random or secret-ish but are not secrets.
const LOOK_ALIKES: &[&str] = &[
    // digests and ids
    "0123456789abcdef0123456789abcdef01234567",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 (HEAD -> main)",
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "DEADBEEF0123456789ABCDEFdeadbeef01234567",
    "019fc8be-3658-7ca3-9e29-000000000000",
    "F47AC10B-58CC-4372-A567-0E02B2C3D479",
    "trace 550e8400-e29b-41d4-a716-446655440000 ok",
    "session_id=550e8400-e29b-41d4-a716-446655440000",
    "sha256-0123456789abcdef0123456789abcdef",
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "\"integrity\": \"sha512-Kq5sNclPz7QV2+lfQIuDuRb6rmE0FoLd0rChUAhsmN5E6RMbYPcmCmOS91sYg7R7kbk3A1jBzrKjYqjdJcVyQ==\"",
    "github.com/stretchr/testify v1.8.4 h1:CcVxjf3Q8PM0mHUKJCdn+eZZtm5yQwehR5yeSVQQcUk=",
    "toolu_01ABCdefGHIjklMNOpqrST",
    "srvtoolu_01XYZabcDEF123ghiJKL456m",
    "msg_01XFDUDYJgAACzvnptvVoYEL",
    "req_011CUVabcDEFghiJKLmnoPQ",
    "call_AbC123dEf456GhI789jKl012",
    "agent_msg_0184sjfFV1sinxvhH3bAStsb",
    "chatcmpl-9AbCdEfGhIjKlMnOpQrStUvWxYz12",
    // paths
    "/home/user/project/src/main.rs",
    "crates/cairn-core/src/lib.rs",
    "src/archive/sources/claude.rs",
    "docs/quarterly-notes/agent-trail-review",
    "../../Library/Application Support/Code/User/settings.json",
    "C:\\Users\\Dev\\source\\repos\\App2\\Program.cs",
    "node_modules/@types/react/index.d.ts",
    "src/components/MyButton2/MyButton2Props.tsx",
    "https://github.com/anthropics/claude-code/blob/9fceb02d0ae598e95dc970b74767f19372d61af8/README.md",
    "assets/index-BxK3f9Qa.js",
    // inline data
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    // times and versions
    "2026-05-07T09:30:00.000Z",
    "2026-05-07T09-30-00Z",
    "20260507T093000Z",
    "v1.2.3-beta.4+build.567",
    "rustc 1.95.0 (f2d3ce0bd 2026-03-21)",
    // identifiers
    "abcdefghijklmnopqrst",
    "function_call_output",
    "cache_creation_input_tokens",
    "MyComponent2Props",
    "convertUtf8ToUtf16StringFast",
    "HTTPServer2ConfigBuilder",
    "test_sha256_hashing_Function",
    "ERR_OSSL_EVP_UNSUPPORTED",
    "x86_64-unknown-linux-gnu",
    // code
    "password = getpass()",
    "let token = tokens.next();",
    "const token = await getToken();",
    "def login(username: str, password: str) -> Token:",
    "api_key = os.environ[\"OPENAI_API_KEY\"]",
    "token: Option<String>,",
    "password = request_password",
    "if (password !== confirmPassword) return;",
    "headers = {\"Authorization\": f\"Bearer {token}\"}",
    "curl -H \"Authorization: Bearer $GITHUB_TOKEN\" https://api.github.com/user",
    "export GITHUB_TOKEN=$(gh auth token)",
    "password: ${{ secrets.DB_PASSWORD }}",
    "\"max_tokens\": 4096",
    "\"input_tokens\": 12",
    "{\"type\":\"string\",\"description\":\"The API token\"}",
    "the task-runner reads disk-usage and risk-level",
    "-----BEGIN PRIVATE KEY----- marks the start of a PEM key",
    "see postgres://localhost:5432/app and https://example.com:8443/path",
    "git@github.com:anthropics/claude-code.git",
    // prose
    "The tokenizer splits the password field into tokens; authors must rotate secrets regularly.",
    "Authentication token: expired. Please log in again.",
    "I'll update the cookie handling and the credentials docs next.",
];

#[test]
fn look_alikes_are_not_flagged() {
    for s in LOOK_ALIKES {
        assert!(r().scan_text(s).is_empty(), "{s:?}: {:?}", r().scan_text(s));
        let line = claude_line(s);
        let mut out = Vec::new();
        assert!(
            matches!(r().redact_line(&line, &mut out), Cow::Borrowed(_)),
            "{s:?} as a line: {out:?}"
        );
    }
}

#[test]
fn bundled_real_transcripts_have_no_findings() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let mut lines = 0;
    for file in crate::support::files_under(&root) {
        // archive-v11 is synthetic, with a password planted on purpose.
        if file.extension().is_none_or(|e| e != "jsonl")
            || file.starts_with(root.join("archive-v11"))
        {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let mut out = Vec::new();
            let red = r().redact_line(line, &mut out);
            assert!(out.is_empty(), "{}:{}: {out:?}", file.display(), n + 1);
            assert!(matches!(red, Cow::Borrowed(_)));
            lines += 1;
        }
    }
    assert!(lines > 1000, "fixtures not found under {}", root.display());
}

// ---- property tests -------------------------------------------------------------------------

fn test_values() -> Vec<&'static str> {
    rules().iter().map(|r| r.test_value).collect()
}

/// Pieces that exercise every layer: key names, separators, quotes, escapes, markers, runs.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => plain_fragment(),
        1 => prop::sample::select(test_values()).prop_map(String::from),
    ]
}

/// Like [`fragment`] but without whole test values, for text around a planted one: a second copy
/// glued to other text is a different string, not that secret.
fn plain_fragment() -> impl Strategy<Value = String> {
    let pieces = vec![
        "password",
        "token",
        "api_key",
        "DB_PASSWORD=",
        "Authorization: ",
        "Bearer ",
        "Cookie: ",
        "a=b; ",
        "--password ",
        "export ",
        "=",
        ": ",
        ":",
        "\"",
        "'",
        "`",
        "\\",
        "\\n",
        "\\\"",
        "\n",
        "\t",
        " ",
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        ",",
        ";",
        ".",
        "/",
        "[REDACTED:jwt]",
        "[REDACTED:",
        "sk-",
        "ghp_",
        "AKIA",
        "://",
        "user:",
        "@host",
        "eyJ",
        "-----BEGIN PRIVATE KEY-----",
        "-----END PRIVATE KEY-----",
        "sha256-",
        "toolu_",
        "changeme",
        "${X}",
        "é",
        "日本",
    ];
    prop_oneof![
        3 => prop::sample::select(pieces).prop_map(String::from),
        2 => "[A-Za-z0-9_+/=-]{0,40}",
        1 => "[a-z]{1,8}",
        1 => any::<char>().prop_map(String::from),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(fragment(), 0..14).prop_map(|v| v.concat())
}

fn plain_text() -> impl Strategy<Value = String> {
    prop::collection::vec(plain_fragment(), 0..14).prop_map(|v| v.concat())
}

fn key(text: BoxedStrategy<String>) -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "type",
            "text",
            "content",
            "message",
            "password",
            "token",
            "api_key",
            "input_tokens",
            "id",
            "cwd",
            "path",
            "Authorization",
            "cookie",
            "command",
            "uuid",
            "credentials",
            "stdout",
            "signature",
            "data",
            "encrypted_content",
        ])
        .prop_map(String::from),
        "[a-zA-Z_]{1,10}",
        text,
    ]
}

/// Random JSON whose strings (and some keys) come from `text`.
fn json_with(text: BoxedStrategy<String>) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        text.clone().prop_map(Value::String),
        // the `type`s that make a blob key a provider's own, and blob-like long runs
        prop::sample::select(vec!["thinking", "reasoning", "base64", "redacted_thinking"])
            .prop_map(|t| Value::String(t.into())),
        "[A-Za-z0-9+/]{150,400}={0,2}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 40, 5, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key(text.clone()), inner), 0..5)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Random JSON that may hold test values anywhere.
fn json_value() -> impl Strategy<Value = Value> {
    json_with(text().boxed())
}

/// Replace the `k`-th string (modulo their number) of `v` with `text`, or wrap `v` if it has none.
fn plant(v: &mut Value, k: usize, text: String) {
    fn strings(v: &mut Value) -> Vec<&mut String> {
        match v {
            Value::String(s) => vec![s],
            Value::Array(items) => items.iter_mut().flat_map(strings).collect(),
            Value::Object(map) => map.values_mut().flat_map(strings).collect(),
            _ => Vec::new(),
        }
    }
    let mut leaves = strings(v);
    if leaves.is_empty() {
        let old = v.take();
        *v = json!({"text": text, "rest": old});
    } else {
        let n = leaves.len();
        *leaves[k % n] = text;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::support::proptest_cases(512)))]

    #[test]
    fn redact_text_is_idempotent(s in text()) {
        let once = r().redact_text(&s, "", &mut Vec::new()).into_owned();
        let mut again = Vec::new();
        let twice = r().redact_text(&once, "", &mut again);
        prop_assert_eq!(&twice, &once);
        prop_assert!(again.is_empty(), "{:?} -> {:?} still has {:?}", s, once, again);
    }

    #[test]
    fn redact_text_never_panics_on_arbitrary_unicode(s in any::<String>()) {
        let once = r().redact_text(&s, "", &mut Vec::new()).into_owned();
        let twice = r().redact_text(&once, "", &mut Vec::new()).into_owned();
        prop_assert_eq!(twice, once);
    }

    #[test]
    fn planted_secrets_never_survive_redact_line(
        mut v in json_with(plain_text().boxed()),
        rule in 0..rules().len(),
        k in any::<usize>(),
        pre in plain_text(),
        before in prop::sample::select(vec![" ", "\n", "\t", "(", "\"", "'", "=", ": ", "\\n"]),
        after in prop::sample::select(vec![" ", "\n", ")", "\"", ",", ";", ". ", "\\n", "-", "_"]),
        post in plain_text(),
        as_key in any::<bool>(),
    ) {
        let rule = &rules()[rule];
        let secret = secret_of(rule);
        let planted = format!("{pre}{before}{}{after}{post}", rule.test_value);
        if as_key {
            v = json!({planted: v});
        } else {
            plant(&mut v, k, planted);
        }
        let line = serde_json::to_string(&v).unwrap();
        let mut out = Vec::new();
        let red = r().redact_line(&line, &mut out);
        let parsed: Value = serde_json::from_str(&red).unwrap();
        prop_assert!(!all_text(&parsed).contains(&secret), "{} survived in {}", rule.name, red);
        prop_assert!(!red.contains(&secret));
        let mut again = Vec::new();
        prop_assert!(matches!(r().redact_line(&red, &mut again), Cow::Borrowed(_)), "second pass changed {}", red);
        prop_assert!(again.is_empty());
    }

    /// JSON quoted in a string, written as a Go agent writes it (Crush's tool inputs: `<`, `>` and
    /// `&` as `\u003c`, `\u003e`, `\u0026`), hides no secret: what the parser decodes from the
    /// redacted line holds none, wherever the secret sits and whatever escaped character is glued
    /// to it (`<api_key>sk-ant-…`, `a&&xoxb-…`).
    #[test]
    fn planted_secrets_never_survive_in_go_quoted_json(
        mut v in json_with(plain_text().boxed()),
        rule in 0..rules().len(),
        k in any::<usize>(),
        pre in plain_text(),
        before in prop::sample::select(vec!["<", ">", "&", "&&", "<key>", "\"=", " "]),
        after in prop::sample::select(vec!["<", ">", "&", "</key>", " ", "&&"]),
        post in plain_text(),
    ) {
        let rule = &rules()[rule];
        let secret = secret_of(rule);
        plant(&mut v, k, format!("{pre}{before}{}{after}{post}", rule.test_value));
        let go = serde_json::to_string(&v)
            .unwrap()
            .replace('<', "\\u003c")
            .replace('>', "\\u003e")
            .replace('&', "\\u0026");
        let line = serde_json::to_string(&json!({"type": "tool_call", "input": go})).unwrap();
        let red = r().redact_line(&line, &mut Vec::new());
        let outer: Value = serde_json::from_str(&red).unwrap();
        let input = outer["input"].as_str().unwrap();
        let decoded = match serde_json::from_str::<Value>(input) {
            Ok(inner) => all_text(&inner),
            Err(_) => input.to_owned(),
        };
        prop_assert!(!decoded.contains(&secret), "{} survived in {}", rule.name, red);
        let mut again = Vec::new();
        prop_assert!(matches!(r().redact_line(&red, &mut again), Cow::Borrowed(_)), "second pass changed {}", red);
        prop_assert!(again.is_empty());
    }

    /// The same quoted JSON cut off anywhere after the secret (a tool input or output the agent
    /// truncated), with `/` written `\/` too, and quoted once or twice more (each level doubles
    /// the backslashes): text that is no document any more is redacted where it stands, so the
    /// input decoded by hand holds no secret.
    #[test]
    fn planted_secrets_never_survive_in_cut_off_escaped_json(
        mut v in json_with(plain_text().boxed()),
        rule in 0..rules().len(),
        k in any::<usize>(),
        pre in plain_text(),
        before in prop::sample::select(vec!["<", ">", "&", "&&", "/", "\"=", " "]),
        after in prop::sample::select(vec!["<", ">", "&", "/", " ", "&&"]),
        post in plain_text(),
        slashes in any::<bool>(),
        cut in any::<prop::sample::Index>(),
        levels in 1..=3usize,
    ) {
        let rule = &rules()[rule];
        let secret = secret_of(rule);
        plant(&mut v, k, format!("{pre}{before}{}{after}{post}", rule.test_value));
        let escape = |t: &str| {
            let t = t
                .replace('<', "\\u003c")
                .replace('>', "\\u003e")
                .replace('&', "\\u0026");
            if slashes { t.replace('/', "\\/") } else { t }
        };
        // By hand, every level at once: a run of backslashes is one.
        let unescape = |t: &str| {
            let mut t = t.to_owned();
            while t.contains("\\\\") {
                t = t.replace("\\\\", "\\");
            }
            t.replace("\\u003c", "<")
                .replace("\\u003e", ">")
                .replace("\\u0026", "&")
                .replace("\\/", "/")
                .replace("\\\"", "\"")
        };
        let go = escape(&serde_json::to_string(&v).unwrap());
        // Cut anywhere after the rule's whole example as written (a password is one only with
        // the `@host` after it), on a char boundary.
        let quoted = serde_json::to_string(rule.test_value).unwrap();
        let written = escape(&quoted[1..quoted.len() - 1]);
        let Some(end) = go.find(&written).map(|a| a + written.len()) else {
            return Ok(());
        };
        let mut at = end + cut.index(go.len() - end + 1);
        while !go.is_char_boundary(at) {
            at += 1;
        }
        let mut cut_go = go[..at].to_owned();
        for _ in 1..levels {
            let quoted = serde_json::to_string(&cut_go).unwrap();
            cut_go = quoted[1..quoted.len() - 1].to_owned();
        }
        let line = serde_json::to_string(&json!({"type": "tool_result", "output": cut_go})).unwrap();
        let red = r().redact_line(&line, &mut Vec::new());
        let outer: Value = serde_json::from_str(&red).unwrap();
        let output = outer["output"].as_str().unwrap();
        prop_assert!(!unescape(output).contains(&secret), "{} survived in {}", rule.name, red);
        let mut again = Vec::new();
        prop_assert!(matches!(r().redact_line(&red, &mut again), Cow::Borrowed(_)), "second pass changed {}", red);
        prop_assert!(again.is_empty());
    }

    /// The raw-line gate never hides what the structural path would find.
    #[test]
    fn gate_never_misses_a_structural_finding(v in json_value()) {
        let line = serde_json::to_string(&v).unwrap();
        if !r().might_contain_secret(&line) {
            let mut v = v;
            let mut out = Vec::new();
            prop_assert!(!r().redact_json(&mut v, &mut out), "gate missed {:?} in {}", out, line);
        }
    }

    #[test]
    fn redacted_lines_stay_valid_json(v in json_value()) {
        let line = serde_json::to_string(&v).unwrap();
        let red = r().redact_line(&line, &mut Vec::new());
        prop_assert!(serde_json::from_str::<Value>(&red).is_ok());
        prop_assert!(!red.contains('\n'));
    }
}

/// A provider's blob key does not make any text opaque: what sits there is skipped only when
/// it is base64 (found by the property test above: a key planted at an image's `data`).
#[test]
fn text_at_a_blob_key_that_is_not_base64_is_scanned() {
    for line in [
        r#"{"type":{"type":"base64","data":" AKIAIOSFODNN7EXAMPLE "}}"#,
        r#"{"type":"thinking","signature":"key=AKIAIOSFODNN7EXAMPLE"}"#,
        r#"{"type":"reasoning","encrypted_content":"AKIAIOSFODNN7EXAMPLE and more"}"#,
    ] {
        let mut out = Vec::new();
        let red = r().redact_line(line, &mut out);
        assert!(!red.contains("AKIAIOSFODNN7EXAMPLE"), "{red}");
        assert_eq!(out.len(), 1, "{line}: {out:?}");
    }
}
