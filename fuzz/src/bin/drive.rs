//! The stable-Rust fuzz driver: replays every seed through a target, then mutates seeds with a
//! seeded PRNG for a time budget, calling the same target bodies as the libFuzzer front end.
//! No coverage feedback (that is what `cargo fuzz` adds), but it runs anywhere stable Rust does,
//! so CI's short run needs no nightly toolchain.
//!
//! ```text
//! drive [--seconds N] [--seed S] [TARGET...]   fuzz each target for N seconds (default 3)
//! drive --replay TARGET FILE                  run one saved input once
//! drive --write-corpus DIR                      write the fixture seeds to DIR/<target>/ (for cargo fuzz)
//! ```
//! A panicking input is saved under `fuzz/artifacts/<target>/` and the driver exits with 1.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use cairn_fuzz::{TARGETS, fixtures};

/// Inputs bigger than this are cut into line windows: the driver wants many small executions.
const MAX_SEED: usize = 16 * 1024;

/// Tokens that matter to the parsers and the redactor, spliced in by the mutator.
const DICTIONARY: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b"\\",
    b"\\u0000",
    b"\\ud800",
    b"\\n",
    b":",
    b",",
    b"\n",
    b"\r\n",
    b"\0",
    b"\xff\xfe",
    b"\xe2\x80\x8b",
    b"null",
    b"true",
    b"0",
    b"-1e999",
    b"\"type\":",
    b"\"message\":",
    b"\"content\":",
    b"\"payload\":",
    b"\"tool_use\"",
    b"\"tool_result\"",
    b"\"response_item\"",
    b"\"session_meta\"",
    b"\"sessionId\":",
    b"\"uuid\":",
    b"\"parentUuid\":",
    b"AKIA",
    b"\x1b[90m",
    b"\x1b]8;;",
    b"\xc2\x9b",
    b"-----BEGIN",
    b"LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0t",
    b"ewogICJ0eXBlIjogInNlcnZpY2VfYWNjb3VudCIs",
    b"&sig=",
    b"_KEY=",
    b"_PASS=",
    b"ghp_",
    b"xoxb-",
    b"sk_live_",
    b"sk-ant-",
    b"eyJ",
    b"-----BEGIN ",
    b"PRIVATE KEY-----",
    b"postgres://u:p@h/db",
    b"password=",
    b"api_key",
    b"/home/",
    b"/Users/",
    b"C:\\Users\\",
    b"\x1b[31m",
    b"\"evidence\":",
    b"\"session_id\":",
    b"\"body\":",
    b"\"title\":",
    b"\"hooks\":",
    b"\"SessionStart\":",
    b"\"mcpServers\":",
    b"\"cairn\":",
    b"\"env\":",
    b"/usr/bin/cairn hook --agent claude",
    b"18446744073709551617",
    b"[mcp_servers.cairn]\n",
    b"\"\"\"",
    b"'''",
    b" = {",
    b"\"entries\":",
    b"\"confidence\":",
    b"\"first\":",
    b"```json\n",
    b"9223372036854775808",
    b"\\u001b]0;t\\u0007",
];

/// SplitMix64: tiny, seedable, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn files_under(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == ext) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Cut a file into windows of at most `lines` lines and `MAX_SEED` bytes.
fn windows(data: &[u8], lines: usize, out: &mut Vec<Vec<u8>>) {
    let all: Vec<&[u8]> = data.split_inclusive(|&b| b == b'\n').collect();
    for chunk in all.chunks(lines.max(1)) {
        let mut seed: Vec<u8> = chunk.concat();
        seed.truncate(MAX_SEED);
        if !seed.is_empty() {
            out.push(seed);
        }
    }
}

/// The seeds of one target, all from the repository's fixtures.
/// The first seed of `out` without its leading byte (a document to put under another key).
fn docs_first(out: &[Vec<u8>]) -> &[u8] {
    out.first()
        .map_or(&[][..], |d| d.get(1..).unwrap_or_default())
}

fn seeds(target: &str) -> Vec<Vec<u8>> {
    let root = fixtures();
    let mut out = Vec::new();
    let read = |p: &Path| std::fs::read(p).unwrap_or_default();
    match target {
        "claude" | "codex" | "copilot" | "qwen" | "droid" | "kimi" | "gemini" | "cursor"
        | "grok" | "antigravity" | "vibe" | "iflow" | "gptme" | "posit" => {
            for p in files_under(&root.join(target), "jsonl") {
                windows(&read(&p), 6, &mut out);
            }
            for p in files_under(&root.join("agentsview").join(target), "jsonl") {
                out.push(read(&p));
            }
        }
        // Pi's format, as Pi and OpenClaw write it.
        "pi" => {
            for dir in ["pi", "openclaw"] {
                for p in files_under(&root.join(dir), "jsonl") {
                    windows(&read(&p), 6, &mut out);
                }
            }
        }
        "aider" => {
            for p in files_under(&root.join("aider"), "md") {
                windows(&read(&p), 12, &mut out);
            }
        }
        "redact" => {
            for rule in cairn_core::archive::secrets::rules() {
                out.push(rule.test_value.as_bytes().to_vec());
                out.push(format!("{{\"text\":\"run with {} now\"}}", rule.test_value).into_bytes());
            }
            // Escapes a marker splits (`\/\u0026…` became `\/\[REDACTED:…]`, which the second
            // outbound pass read as a path; found by the outbound property test).
            out.push(
                br"\/\u00261a0aaaa0a8aa010cbbdf1fceb25e3ba44c70db30DISCORD_BOT_TOKEN=MTAwMDAwMDAwMDAwMDAwMDAw.EXAMPL.EXAMPLEEXAMPLEEXAMPLEEXAMPLE00"
                    .to_vec(),
            );
            for p in files_under(&root.join("claude"), "jsonl")
                .into_iter()
                .take(3)
            {
                windows(&read(&p), 1, &mut out);
            }
            for p in files_under(&root.join("codex"), "jsonl") {
                windows(&read(&p), 1, &mut out);
            }
        }
        "database_units" => {
            // A Crush session row and messages (as the reader builds them from the real
            // database), then an OpenCode session and a message with its parts.
            let crush = [
                r#"{"id":"s1","parent_session_id":"p","title":"t","prompt_tokens":5,"completion_tokens":2,"created_at":1754331191,"updated_at":1754331192,"summary_message_id":"u3"}"#,
                r#"{"id":"m1","role":"user","parts":[{"type":"text","data":{"text":"make CRUSH.md"}}],"created_at":1754331191}"#,
                r#"{"id":"m2","role":"assistant","model":"x","provider":"openrouter","parts":[{"type":"reasoning","data":{"thinking":"hm"}},{"type":"tool_call","data":{"id":"c1","name":"edit","input":"{\"file_path\":\"/p/a\"}"}},{"type":"finish","data":{"reason":"canceled","message":"stop"}}]}"#,
                r#"{"id":"m3","role":"tool","parts":[{"type":"tool_result","data":{"tool_call_id":"c1","content":"exit code 1","is_error":true,"metadata":"{\"working_directory\":\"/p\"}"}}]}"#,
            ];
            out.push([b"\0".as_slice(), crush.join("\n").as_bytes()].concat());
            for p in files_under(&root.join("opencode"), "json") {
                out.push([b"\x01{}\n".as_slice(), &read(&p)].concat());
            }
            let opencode = [
                r#"{"id":"ses","parent_id":"p","directory":"/w","title":"t","version":"1.3","time_created":1730000100000}"#,
                r#"{"info":{"role":"assistant","time":{"created":1730000102000},"modelID":"m","path":{"cwd":"/w"},"tokens":{"input":1,"cache":{"read":2}},"error":{"name":"E","data":{"message":"x"}}},"parts":[{"id":"p1","type":"tool","callID":"c","tool":"bash","state":{"status":"completed","input":{"command":"ls"},"output":"o","metadata":{"exit":2}}},{"type":"compaction"},{"type":"subtask","prompt":"go"}]}"#,
            ];
            out.push([b"\x01".as_slice(), opencode.join("\n").as_bytes()].concat());
            // A Cursor composer header and its bubbles (the IDE store's rows).
            let cursor = [
                r#"{"composerId":"c1","name":"t","createdAt":1754331000000,"lastUpdatedAt":1754331300000,"modelConfig":{"modelName":"m"}}"#,
                r#"{"type":1,"text":"fix it","workspaceProjectDir":"/w","createdAt":"2025-08-04T18:10:00Z"}"#,
                r#"{"type":2,"thinking":{"text":"hm"},"text":"ok","tokenCount":{"inputTokens":3,"outputTokens":1}}"#,
                r#"{"type":2,"toolFormerData":{"name":"run_terminal_cmd","toolCallId":"t","rawArgs":"{\"command\":\"ls\"}","status":"completed","result":"{\"output\":\"x\",\"exitCode\":2}"}}"#,
                r#"{"type":2,"toolFormerData":{"name":"edit_file","rawArgs":"{\"target_file\":\"a\"}","status":"error"}}"#,
            ];
            out.push([b"\x02".as_slice(), cursor.join("\n").as_bytes()].concat());
            for p in files_under(&root.join("kiro"), "json") {
                // A Kiro conversation: its header, then each history entry.
                let v: serde_json::Value = serde_json::from_slice(&read(&p)).unwrap_or_default();
                let mut seed =
                    b"\x03{\"conversation_id\":\"c\",\"key\":\"/w\",\"created_at\":1779012000000}"
                        .to_vec();
                for e in v["history"].as_array().into_iter().flatten() {
                    seed.push(b'\n');
                    seed.extend(e.to_string().as_bytes());
                }
                out.push(seed);
            }
            let sql = read(&root.join("cursor/vscdb/state.sql"));
            for line in String::from_utf8_lossy(&sql).lines() {
                // The values of the fixture's rows, as the reader hands them over.
                if let Some(v) = line
                    .split_once(", '")
                    .and_then(|(_, v)| v.strip_suffix("');"))
                {
                    out.push([b"\x02{}\n".as_slice(), v.replace("''", "'").as_bytes()].concat());
                }
            }
        }
        "hermes_document" => {
            for p in files_under(&root.join("hermes"), "json") {
                out.push(read(&p));
            }
        }
        "vscopilot_traces" => {
            for p in files_under(&root.join("vscopilot"), "jsonl") {
                out.push(read(&p));
            }
        }
        "qwenpaw_document" => {
            for p in files_under(&root.join("qwenpaw"), "json") {
                out.push(read(&p));
            }
        }
        "cline_document" => {
            for p in files_under(&root.join("cline"), "json") {
                if p.file_name().is_some_and(|n| n == "ui_messages.json") {
                    out.push(read(&p));
                }
            }
        }
        "gemini_document" => {
            for p in files_under(&root.join("gemini"), "json") {
                out.push(read(&p));
            }
            for p in files_under(&root.join("agentsview").join("gemini"), "json") {
                out.push(read(&p));
            }
        }
        "analyze" => {
            for p in files_under(&root.join("recall"), "jsonl") {
                windows(&read(&p), 1, &mut out);
            }
            for p in files_under(&root.join("recall"), "json") {
                windows(&read(&p), 4, &mut out);
            }
            out.push(
                "Ångström ﬁle naïve İstanbul ß 東京 🎉 e\u{301}"
                    .as_bytes()
                    .to_vec(),
            );
        }
        "import" => {
            for p in files_under(&root.join("recall"), "jsonl") {
                windows(&read(&p), 2, &mut out);
            }
        }
        "settings" => {
            // The first byte picks the agents, the memory hook and the `cairn` path.
            let claude = read(&root.join("retention/claude-settings.json"));
            let files: &[&[u8]] = &[
                &claude,
                // As an install left them: Claude's settings, Codex's hooks.json.
                b"{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"/usr/bin/cairn hook --agent claude\"\n          }\n        ]\n      }\n    ],\n    \"SessionStart\": [\n      {\n        \"matcher\": \"startup\",\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"echo hi\"\n          },\n          {\n            \"type\": \"command\",\n            \"command\": \"/old/bin/cairn hook --agent claude\"\n          }\n        ]\n      }\n    ]\n  },\n  \"n\": 18446744073709551617\n}\n",
                b"{\n  \"hooks\": {\n    \"SessionStart\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"'/home/a b/it'\\\\''s/cairn' hook --agent claude\"}]}]\n  }\n}\n",
                b"{\"hooks\":{\"Stop\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"cairn hook --agent codex\"}]}],\"SessionStart\":[]}}",
                // Claude Code's ~/.claude.json and Gemini CLI's settings: servers with secrets.
                b"{\n  \"numStartups\": 41,\n  \"userID\": 18446744073709551617,\n  \"mcpServers\": {\n    \"db\": {\"command\": \"pg-mcp\", \"env\": {\"PGPASSWORD\": \"Summer2024!\"}},\n    \"cairn\": {\"type\": \"stdio\", \"command\": \"/old/bin/cairn\", \"args\": [\"mcp\"]}\n  },\n  \"projects\": {}\n}\n",
                b"{\"theme\": \"GitHub\", \"mcpServers\": {\"gh\": {\"httpUrl\": \"https://x/mcp/\", \"headers\": {\"Authorization\": \"Bearer ghp_x\"}}}, \"k\": \"\\ud800\\u00e9\\/\", \"mcpServers\": {}}",
                // Codex's config.toml, and lines that look like Cairn's table without being it.
                b"model = \"gpt-5.1-codex\"\n# my servers\n[mcp_servers.db]\ncommand = \"pg-mcp\"\n\n[mcp_servers.db.env]\nPGPASSWORD = \"Summer2024!\"\n\n[features]\ncodex_hooks = true\n",
                b"[mcp_servers.cairn]\ncommand = \"/old/bin/cairn\" # moved\nargs = [\"mcp\"]\nstartup_timeout_sec = 20\n\n[mcp_servers.cairn.env]\nX = \"y\"\n",
                // Cairn's sub-table after other tables, and a person's comments around it
                // (an uninstall left the sub-table, then refused the entry it made).
                b"[mcp_servers.cairn]\ncommand = \"/old/bin/cairn\"\nargs = [\"mcp\"]\n\n# the database\n[mcp_servers.db.env]\nPGPASSWORD = \"Summer2024!\"\n\n[mcp_servers.cairn.env]\nX = \"y\"\n# the end\n",
                b"# a \"\"\" in a comment\nnotes = '''\n[mcp_servers.cairn]\n'''\nlist = [\n  [\"mcp_servers.cairn\"]\n]\n[\"mcp_servers.cairn\"]\ncommand = \"x\"\n[mcp_servers]\ndb = { command = \"x\", env = {\n  TOKEN = \"t\",\n} }\n",
            ];
            for file in files {
                for which in [0u8, 1, 2, 3, 0x14, 0x2d, 0x3e] {
                    out.push([&[which][..], file].concat());
                }
            }
        }
        "retained_copy" => {
            // Copies as capture and a reindex write them: frames of lines (a line running on
            // into the next frame, an empty line holding a skipped one's place), each with the
            // skippable frame of its keys, and a copy cut short inside a frame.
            use cairn_core::archive::retain::Retained;
            let frame = |text: &[u8], keys: &[(u64, String)]| {
                Retained::encode(text, keys).expect("a frame encoded")
            };
            let key = |n: u64| (n, format!("sha256:{n:064x}"));
            let lines = [
                frame(b"{\"type\":\"user\"}\n\n{\"a\":", &[key(0)]),
                frame(b"1}\nlast\n", &[key(2)]),
                frame(b"", &[]),
                frame(b"no end", &[key(9)]),
            ];
            for which in [0u8, 0x13, 0x80, 0xff] {
                let copy = lines.concat();
                out.push([&[which][..], &copy].concat());
                out.push([&[which][..], &copy[..copy.len() / 2]].concat());
            }
            for p in files_under(&root.join("claude"), "jsonl")
                .into_iter()
                .take(2)
            {
                out.push([&[0x40][..], &frame(&read(&p), &[key(1)])].concat());
            }
        }
        "model_answer" => {
            // Answers shaped like a model's (as the fake server in tests/support/fake_llm.rs
            // gives them), then the ways a model gets them wrong: a code fence, prose around
            // it, a cut-off tail, terminal escapes, ordinals past u32 and i64, repeated keys,
            // wrong types, too many entries, deep nesting.
            let entry = |ty: &str, title: &str, first: &str, last: &str| {
                format!(
                    r#"{{"type":"{ty}","title":"{title}","body":"What happened in records 3 to 7.","trigger":"when revisiting record 3","confidence":0.75,"entities":["record-3","cargo test","record-3"],"evidence":{{"first":{first},"last":{last}}}}}"#
                )
            };
            let reply = |entries: &[String]| format!(r#"{{"entries":[{}]}}"#, entries.join(","));
            let good = reply(&[
                entry("fact", "Records 3-7: the build needs sqlite3", "3", "7"),
                entry(
                    "procedure",
                    "Run the fuzz targets with scripts/fuzz.sh",
                    "9",
                    "9",
                ),
                entry(
                    "open_question",
                    "Why does the watcher miss renames?",
                    "12",
                    "10",
                ),
            ]);
            let pretty = serde_json::from_str::<serde_json::Value>(&good)
                .and_then(|v| serde_json::to_string_pretty(&v))
                .unwrap_or_default();
            let every_type: Vec<String> = cairn_core::recall::extract::prompt::TYPES
                .iter()
                .map(|t| entry(t.as_str(), "A title", "1", "2"))
                .collect();
            let one = |title: &str, first: &str, last: &str| {
                reply(&[entry("warning", title, first, last)])
            };
            let fine = entry("fact", "T", "1", "1");
            let bad = |from: &str, to: &str| reply(&[fine.replace(from, to)]);
            let mut answers = vec![
                r#"{"entries":[]}"#.to_owned(),
                good.clone(),
                pretty.clone(),
                format!("```json\n{good}\n```"),
                format!("\n```\n{pretty}\n```\n"),
                format!("Sure! Here are the entries:\n```json\n{good}\n```\nAnything else?"),
                format!("Here you go: {good}"),
                format!("\u{feff}{good}"),
                format!("\n\u{feff}{pretty}"),
                good[..good.len() / 2].to_owned(),
                pretty[..pretty.len() - 2].to_owned(),
                reply(&every_type),
                one(
                    r"\u001b]0;pwned\u0007Title\u001b[31m red\u202e\u0000\u009b2J",
                    "3",
                    "4",
                ),
                one(r"\u001b[2J \u200b", "3", "4"),
                one("T", "4294967299", "4294967296"),
                one("T", "-1", "3"),
                one("T", "9223372036854775807", "-9223372036854775808"),
                one("T", "9223372036854775808", "0"),
                one("T", "3.0", "-0"),
                one("T", "\"3\"", "1e400"),
                format!(r#"{{"entries":[{fine}],"entries":[]}}"#),
                bad(r#""title":"T""#, r#""title":"T","title":"U""#),
                bad(r#""title":"T""#, r#""title":5"#),
                bad("0.75", r#""high""#),
                bad(r#"["record-3","cargo test","record-3"]"#, r#""a""#),
                bad(r#"{"first":1,"last":1}"#, "[1,1]"),
                bad(
                    r#""trigger":"when revisiting record 3""#,
                    r#""trigger":null"#,
                ),
                bad(r#""type":"fact""#, r#""type":"rumour""#),
                reply(&vec![fine.clone(); 100]),
                reply(&vec![fine.clone(); 101]),
                bad(
                    r#"["record-3""#,
                    &format!("[{}{}, \"record-3\"", "[".repeat(200), "]".repeat(200)),
                ),
                format!("{}{}", "[".repeat(300), "]".repeat(300)),
            ];
            answers.push(one(&"x".repeat(500), "1", "2"));
            answers.push(one(&"x".repeat(501), "1", "2"));
            out.extend(answers.into_iter().map(String::into_bytes));
        }
        "published_document" => {
            // A document as `publish` writes it (the shape of git/document.rs's tests), then a
            // newer build's agent, a teammate's hostile texts, a secret, odd times; the first
            // byte picks the ref key (0: the document's own).
            let doc = |agent: &str, title: &str, preview: &str, at: &str| {
                format!(
                    r#"{{"schema":"cairn.published-session.v1","published_at":"{at}","target_keys":["ref:refs/heads/feat"],"session":{{"session_key":"{key}","status":"published","agent":"{agent}","title":"{title}","project":"app","started_at":"2026-03-01T09:00:00Z","updated_at":"2026-03-01T09:30:00+02:00","turn_count":1,"record_count":4,"related_turn_count":1,"weak":false,"why_related":[{{"evidence":"commit_by_session","confidence":0.95,"target_key":"ref:refs/heads/feat","turn_key":"sha256-fedcba9876543210fedcba9876543210","turn_index":0,"ordinal":3,"commit":"1a2b3c4","reason":"committed 1a2b3c4"}}],"previews":["user: {preview}","assistant: done"],"turns":[{{"turn_key":"sha256-fedcba9876543210fedcba9876543210","turn_index":0,"started_at":"2026-03-01T09:00:00Z","related":true,"record_count":4,"tool_call_count":1,"tool_names":["Edit"],"labels":["implemented","committed"],"previews":["user: {preview}"]}}]}}}}"#,
                    key = cairn_fuzz::DOC_KEY
                )
            };
            let docs = [
                doc(
                    "claude",
                    "Add login",
                    "add login",
                    "2026-03-01T10:00:00.000Z",
                ),
                doc("zed", "Add login", "add login", "2026-03-01T10:00:00Z"),
                doc("atif", "Add login", "add login", "2026-03-01T10:00:00Z"),
                doc(
                    "claude",
                    "\\u001b]52;c;eA==\\u0007Add \\u202elogin",
                    "password=hunter2 and ghp_0123456789abcdefghijklmnopqrstuvwxyz",
                    "2026-03-01 10:00:00",
                ),
                doc("vim\\u001b[2J", "t", "p", "2026-03-01T10:00:00Z"),
                doc("Zed", "t", "p", "2026-03-01T10:00:00Z"),
            ];
            for d in docs {
                out.push([b"\0".as_slice(), d.as_bytes()].concat());
            }
            out.push([b"\x01".as_slice(), docs_first(&out)].concat());
        }
        "ai_note" => {
            use cairn_core::git::notes::{NewLog, Prompt, render};
            let meta = r#"{"schema_version":"authorship/3.0.0","base_commit_sha":"abc","prompts":{"d9978a8723e02b52":{"agent_id":{"tool":"claude","id":"s-1","model":"m"},"messages":[],"custom_attributes":{"recorded_by":"cairn","session_keys":"k1, k2"}},"866dabf":{"agent_id":{"tool":"cursor","id":"s-2"},"messages":[]}}}"#;
            let max = u32::MAX;
            for note in [
                format!(
                    "src/a.rs\n  d9978a8723e02b52 1-4,9\n\"src/my file.rs\"\n  866dabf 2\n---\n{meta}\n"
                ),
                format!("---\n{meta}"),
                format!("a.rs\n  d9978a8723e02b52 1-{max},1-{max}\n---\n{meta}\n"),
                format!("\"---\"\n  866dabf 3-3\n---\n{meta}"),
            ] {
                out.push(note.into_bytes());
            }
            let log = NewLog {
                base_commit_sha: "0123456789abcdef0123456789abcdef01234567".to_owned(),
                files: vec![
                    (
                        "src/lib.rs".to_owned(),
                        vec![(0, vec![3, 1, 2, 9]), (1, vec![5])],
                    ),
                    ("a b.rs".to_owned(), vec![(0, vec![1])]),
                ],
                prompts: vec![
                    Prompt {
                        tool: "claude".to_owned(),
                        id: "s-1".to_owned(),
                        session_keys: vec!["sha256-0123456789abcdef0123456789abcdef".to_owned()],
                        model: Some("m".to_owned()),
                        messages: Vec::new(),
                    },
                    Prompt {
                        tool: "codex".to_owned(),
                        id: "t-2".to_owned(),
                        session_keys: Vec::new(),
                        model: None,
                        messages: Vec::new(),
                    },
                ],
            };
            out.push(render(&log).into_bytes());
        }
        _ => {}
    }
    // Keep the set small enough that a short run still spends most of its time mutating.
    if out.len() > 400 {
        let step = out.len().div_ceil(400);
        out = out.into_iter().step_by(step).collect();
    }
    out
}

fn mutate(rng: &mut Rng, seeds: &[Vec<u8>], input: &mut Vec<u8>) {
    let rounds = 1 + rng.below(4);
    for _ in 0..rounds {
        let len = input.len();
        match rng.below(9) {
            0 if len > 0 => {
                let i = rng.below(len);
                input[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                input[i] = rng.next() as u8;
            }
            2 => {
                let tok = DICTIONARY[rng.below(DICTIONARY.len())];
                let at = rng.below(len + 1);
                input.splice(at..at, tok.iter().copied());
            }
            3 if len > 0 => {
                let a = rng.below(len);
                let b = (a + 1 + rng.below(64)).min(len);
                input.drain(a..b);
            }
            4 if len > 0 => {
                let a = rng.below(len);
                let b = (a + 1 + rng.below(256)).min(len);
                let piece = input[a..b].to_vec();
                let at = rng.below(len + 1);
                input.splice(at..at, piece);
            }
            5 => {
                let other = &seeds[rng.below(seeds.len())];
                if !other.is_empty() {
                    let a = rng.below(other.len());
                    let b = (a + 1 + rng.below(512)).min(other.len());
                    let at = rng.below(len + 1);
                    input.splice(at..at, other[a..b].iter().copied());
                }
            }
            6 if len > 0 => input.truncate(rng.below(len)),
            7 => {
                // Nesting: wrap a slice in brackets, many times.
                let depth = 1 + rng.below(200);
                let at = rng.below(len + 1);
                let open: Vec<u8> = std::iter::repeat_n(b'[', depth).collect();
                input.splice(at..at, open);
            }
            _ => {
                let at = rng.below(len + 1);
                let byte = [0u8, b'\n', b'"', b'\\', 0x80, 0xc3, 0xed][rng.below(7)];
                input.insert(at, byte);
            }
        }
    }
    input.truncate(4 * MAX_SEED);
}

fn save_crash(target: &str, input: &[u8]) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("artifacts")
        .join(target);
    let _ = std::fs::create_dir_all(&dir);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in input {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    let path = dir.join(format!("crash-{h:016x}"));
    let _ = std::fs::write(&path, input);
    path
}

fn run(target: &str, body: cairn_fuzz::Target, seconds: f64, seed: u64) -> Result<u64, PathBuf> {
    let seeds = seeds(target);
    let mut execs = 0u64;
    let call = |input: &[u8]| catch_unwind(AssertUnwindSafe(|| body(input))).is_ok();
    for s in &seeds {
        execs += 1;
        if !call(s) {
            return Err(save_crash(target, s));
        }
    }
    let mut rng = Rng(seed
        ^ target
            .bytes()
            .fold(0u64, |h, b| h.rotate_left(5) ^ u64::from(b)));
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let mut input = Vec::new();
    while Instant::now() < deadline {
        input.clear();
        if !seeds.is_empty() {
            input.extend_from_slice(&seeds[rng.below(seeds.len())]);
        }
        mutate(&mut rng, &seeds, &mut input);
        execs += 1;
        if !call(&input) {
            return Err(save_crash(target, &input));
        }
    }
    println!(
        "fuzz {target}: {execs} executions ({} seeds) in {seconds}s, seed {seed}",
        seeds.len()
    );
    Ok(execs)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut seconds = 3.0;
    let mut seed = 0x00C0_FFEE_u64;
    let mut names = Vec::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--seconds" => seconds = args.next().and_then(|v| v.parse().ok()).unwrap_or(seconds),
            "--seed" => seed = args.next().and_then(|v| v.parse().ok()).unwrap_or(seed),
            "--write-corpus" => {
                let Some(dir) = args.next() else {
                    eprintln!("--write-corpus needs a directory");
                    return ExitCode::from(2);
                };
                for (name, _) in TARGETS {
                    let d = Path::new(&dir).join(name);
                    if let Err(e) = std::fs::create_dir_all(&d) {
                        eprintln!("cannot create {}: {e}", d.display());
                        return ExitCode::from(2);
                    }
                    for (i, s) in seeds(name).iter().enumerate() {
                        let _ = std::fs::write(d.join(format!("seed-{i:04}")), s);
                    }
                }
                return ExitCode::SUCCESS;
            }
            "--replay" => {
                // --replay TARGET FILE: run one input once, panics and all.
                let (Some(name), Some(file)) = (args.next(), args.next()) else {
                    eprintln!("--replay needs a target and a file");
                    return ExitCode::from(2);
                };
                let Some((_, body)) = TARGETS.iter().find(|(n, _)| *n == name) else {
                    eprintln!("no target {name}");
                    return ExitCode::from(2);
                };
                match std::fs::read(&file) {
                    Ok(data) => body(&data),
                    Err(e) => {
                        eprintln!("cannot read {file}: {e}");
                        return ExitCode::from(2);
                    }
                }
                println!("{name}: {file} passes");
                return ExitCode::SUCCESS;
            }
            name => names.push(name.to_owned()),
        }
    }
    // A panic is reported once, by the driver, with the saved input.
    std::panic::set_hook(Box::new(|info| eprintln!("{info}")));
    let mut total = 0;
    for (name, body) in TARGETS {
        if !names.is_empty() && !names.iter().any(|n| n == name) {
            continue;
        }
        match run(name, *body, seconds, seed) {
            Ok(n) => total += n,
            Err(path) => {
                eprintln!("fuzz {name}: FAILED; input saved to {}", path.display());
                eprintln!("replay: scripts/fuzz.sh replay {name} {}", path.display());
                return ExitCode::FAILURE;
            }
        }
    }
    println!("fuzz: {total} executions in all");
    ExitCode::SUCCESS
}
