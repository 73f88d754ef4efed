//! `cairn export`: the fixture sessions as Markdown, HTML and ATIF (pinned), every ATIF file
//! validated by ATIF's reference models (PyPI `harbor`, in .venv/ from scripts/setup.sh), and
//! what an export must never carry: secrets, escape sequences, markup, the home directory.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::support::Env;

/// Claude fixture session under /home/marco (tool calls, a rejected command, an injected prompt).
pub(crate) const SMALL: &str = "55604662-cf2a-4331-851a-ec234028f8ca";
/// The Claude schema fixture (six turns, edits).
pub(crate) const STAGE0: &str = "ses_stage0_small";
/// The Claude fixture session with a sub-agent (and a compaction).
pub(crate) const WITH_SUBAGENT: &str = "ae4a77f8-aedd-4bc1-888f-c94edc91af04";
/// The Codex rollout fixture.
pub(crate) const CODEX: &str = "019fc8be-3658-7ca3-9e29-000000000000";

pub(crate) fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The project's Python with ATIF's reference models, or `None` outside `make test` before
/// setup ran (under CI that is a failure: setup always installs them).
pub(crate) fn reference_python() -> Option<PathBuf> {
    let python = repo_root().join(".venv/bin/python");
    let has_models = python.exists()
        && Command::new(&python)
            .args(["-c", "import harbor.models.trajectories"])
            .status()
            .is_ok_and(|s| s.success());
    if has_models {
        return Some(python);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{} lacks ATIF's reference models (harbor): run scripts/setup.sh",
        python.display()
    );
    eprintln!("skipped: no .venv with ATIF's reference models; run scripts/setup.sh");
    None
}

/// `cairn export` as the fixtures' own user (HOME=/home/marco), so the home becomes `~`.
pub(crate) fn export(env: &Env, args: &[&str]) -> String {
    let out = env
        .command()
        .env("HOME", "/home/marco")
        .arg("export")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cairn export {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

pub(crate) fn synced() -> Env {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    env
}

#[test]
fn markdown_html_and_atif_exports_of_the_fixtures_are_pinned() {
    let env = synced();
    insta::assert_snapshot!("small_md", export(&env, &[SMALL, "--format", "md"]));
    insta::assert_snapshot!("stage0_md", export(&env, &[STAGE0, "--format", "md"]));
    insta::assert_snapshot!("stage0_html", export(&env, &[STAGE0, "--format", "html"]));
    insta::assert_snapshot!("codex_atif", export(&env, &[CODEX, "--format", "atif"]));
    // A Claude session with its sub-agent embedded (ATIF-v1.7 `subagent_trajectories`): the
    // sub-agent's trajectory, its first steps pinned (the whole session is 780 KB).
    let mut atif: serde_json::Value =
        serde_json::from_str(&export(&env, &[WITH_SUBAGENT, "--format", "atif"])).unwrap();
    assert_eq!(atif["schema_version"], "ATIF-v1.7");
    let mut sub = atif["subagent_trajectories"][0].take();
    let steps = sub["steps"].as_array_mut().unwrap();
    let total = steps.len();
    steps.truncate(4);
    sub["steps_in_all"] = json!(total);
    insta::assert_snapshot!(
        "with_subagent_atif_subagent",
        serde_json::to_string_pretty(&sub).unwrap()
    );
    // Markdown and HTML carry the sub-agent and the compaction too, after the session; a
    // sub-agent's web search is the marker.
    let sub_search = "opentelemetry_bandit elixir latest version 2026";
    for format in ["md", "html"] {
        let text = export(&env, &[WITH_SUBAGENT, "--format", format]);
        assert!(text.contains("Sub-agent: "), "{format}");
        // A Claude sub-agent carries its parent's id: not printed again as its own.
        let sub_part = &text[text.find("Sub-agent: ").unwrap()..];
        assert!(!sub_part.contains(WITH_SUBAGENT), "{format}");
        assert!(
            text.contains(sub_search),
            "{format}: the sub-agent's search is missing"
        );
        assert!(text.contains("Compaction: "), "{format}");
        assert!(!text.contains("not in this export"), "{format}");
    }
    let html = export(&env, &[WITH_SUBAGENT, "--format", "html"]);
    let footer = &html[html.find("<footer>").unwrap()..];
    assert!(
        footer.contains("<code>--max-output BYTES</code>") && !footer.contains('`'),
        "{footer}"
    );
    // JSON is Cairn's own view types: the session detail, the turns and their records.
    let doc: serde_json::Value =
        serde_json::from_str(&export(&env, &[SMALL, "--format", "json"])).unwrap();
    assert_eq!(doc["session"]["session_id"], SMALL);
    assert_eq!(doc["session"]["cwd"], "~/projects/spotter");
    assert_eq!(doc["turns"][0]["turn"]["turn_index"], 0);
    assert_eq!(doc["turns"][0]["records"][0]["kind"], "message");
    assert_eq!(doc["left_out"]["home_written_as_tilde"], true);
}

#[test]
fn every_atif_export_validates_with_the_reference_models() {
    let Some(python) = reference_python() else {
        return;
    };
    let env = synced();
    let sessions = env.json(&["sessions"]);
    let dir = env.root.path().join("atif");
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    for s in sessions.as_array().unwrap() {
        let key = s["session_key"].as_str().unwrap();
        let path = dir.join(format!("{key}.atif.json"));
        std::fs::write(&path, export(&env, &[key, "--format", "atif"])).unwrap();
        files.push(path);
    }
    // Sub-agent sessions are sessions too, and a parent embeds its sub-agents and its
    // compactions as whole trajectories.
    let detail = env.json(&["show", WITH_SUBAGENT]);
    let parent = detail["session_key"].as_str().unwrap();
    let with_subagent = files
        .iter()
        .position(|f| f.ends_with(format!("{parent}.atif.json")))
        .unwrap();
    // A turn range, and a tiny output limit, still make valid trajectories.
    let ranged = dir.join("ranged.atif.json");
    std::fs::write(
        &ranged,
        export(
            &env,
            &[
                STAGE0,
                "--format",
                "atif",
                "--turns",
                "1..1",
                "--max-output",
                "10",
            ],
        ),
    )
    .unwrap();
    files.push(ranged);
    assert_eq!(files.len(), sessions.as_array().unwrap().len() + 1);
    let out = Command::new(python)
        .arg(repo_root().join("tests/atif/validate.py"))
        .args(&files)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the reference models refused an export: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(seen["valid"], files.len());
    for (i, version) in seen["schema_versions"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let (want, subagents) = if i == with_subagent {
            ("ATIF-v1.7", 2)
        } else {
            ("ATIF-v1.4", 0)
        };
        assert_eq!(version, want, "{}", files[i].display());
        assert_eq!(seen["subagents"][i].as_array().unwrap().len(), subagents);
    }
    let exported: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&files[with_subagent]).unwrap()).unwrap();
    let sub = &exported["subagent_trajectories"][0];
    assert_eq!(sub["trajectory_id"], "aac57f5");
    assert_eq!(sub["steps"][0]["step_id"], 1);
    let compaction = &exported["subagent_trajectories"][1];
    assert_eq!(compaction["trajectory_id"], "acompact-946d2b");
    assert_eq!(compaction["extra"]["cairn"]["relation"], "compaction");
}

#[test]
fn the_reference_models_refuse_a_broken_trajectory() {
    // The validator is not a rubber stamp: a result that names no call of its step fails.
    let Some(python) = reference_python() else {
        return;
    };
    let env = synced();
    let mut doc: serde_json::Value =
        serde_json::from_str(&export(&env, &[SMALL, "--format", "atif"])).unwrap();
    let step = doc["steps"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|s| s.get("observation").is_some())
        .unwrap();
    step["observation"]["results"][0]["source_call_id"] = json!("no-such-call");
    let path = env.root.path().join("broken.atif.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    let out = Command::new(python)
        .arg(repo_root().join("tests/atif/validate.py"))
        .arg(&path)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-call"));
}

/// A Claude session with a secret, escape sequences, markup and a long tool output.
fn plant_hostile(env: &Env) -> String {
    let secret = format!("ghp_{}", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8");
    let line = |uuid: &str, parent: Option<&str>, kind: &str, content: serde_json::Value| {
        json!({"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "hostile-export",
               "timestamp": "2026-03-01T10:00:00Z", "cwd": "/home/marco/projects/spotter", "gitBranch": "master",
               "isSidechain": false, "userType": "external",
               "message": {"role": kind, "content": content}})
        .to_string()
    };
    let long_output = "x".repeat(10_000);
    let lines = [
        line(
            "u1",
            None,
            "user",
            json!(format!(
                "use {secret} \u{1b}]8;;http://evil\u{7}here\u{1b}]8;;\u{7} <script>alert(1)</script> in /home/marco/.ssh ![img](http://evil.example/p.png) [click](javascript:alert(1))"
            )),
        ),
        line(
            "a1",
            Some("u1"),
            "assistant",
            // A clipboard write and a colour in the command: JSON text in the archive, where
            // they are escapes until a writer decodes the input.
            json!([{"type": "tool_use", "id": "t1", "name": "Bash",
                    "input": {"command": "cat big.log \u{1b}]52;c;SGVsbG8=\u{7}\u{1b}[31mRED"}}]),
        ),
        line(
            "r1",
            Some("a1"),
            "user",
            json!([{"type": "tool_result", "tool_use_id": "t1", "content": long_output}]),
        ),
    ];
    std::fs::write(
        env.claude()
            .join("-home-USER-projects-spotter/hostile.jsonl"),
        lines.join("\n") + "\n",
    )
    .unwrap();
    env.ok(&["sync"]);
    secret
}

#[test]
fn an_export_carries_no_secret_escape_markup_or_home_and_says_what_it_left_out() {
    let env = synced();
    let secret = plant_hostile(&env);
    for format in ["md", "html", "json", "atif"] {
        let text = export(&env, &["hostile-export", "--format", format]);
        assert!(!text.contains(&secret), "{format}");
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{format}"
        );
        assert!(!text.contains("/home/marco"), "{format}");
        assert!(text.contains("~/.ssh"), "{format}");
        assert!(text.contains("[REDACTED:github-pat]"), "{format}");
        assert!(
            !text.contains(&"x".repeat(4097)),
            "{format}: output not cut"
        );
        if format == "json" {
            let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(doc["left_out"]["redactions"], json!({"github-pat": 1}));
            assert_eq!(doc["left_out"]["outputs_cut"], 1);
            assert_eq!(doc["left_out"]["output_bytes_cut"], 10_000 - 4096);
        } else {
            assert!(
                text.contains("github-pat ×1"),
                "{format}: the trailer names the redaction"
            );
            assert!(
                text.contains("1 tool output cut at 4096 bytes ("),
                "{format}"
            );
        }
    }
    let html = export(&env, &["hostile-export", "--format", "html"]);
    assert!(!html.contains("<script"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    // One self-contained file: no script, no remote load, by policy and in fact.
    assert!(html.contains("default-src 'none'"));
    for remote in ["src=", "href=", "@import", "url("] {
        assert!(!html.contains(remote), "{remote}");
    }
    assert!(html.contains("prefers-color-scheme: dark"));
    // Markdown keeps what agents wrote, but no raw tag outside code opens in a viewer.
    let md = export(&env, &["hostile-export", "--format", "md"]);
    assert!(!md.contains("<script"));
    assert!(md.contains("&lt;script>alert(1)&lt;/script>"));
    // An image would load when the file is opened, a `javascript:` link runs when clicked:
    // the alt text and the link's text are kept, never the address.
    // (The title line escapes every mark, so it shows them as text.)
    let message = md
        .lines()
        .find(|l| l.starts_with("> use "))
        .unwrap_or_default();
    for gone in ["![", "evil.example", "javascript:"] {
        assert!(!message.contains(gone), "{gone} in {md}");
    }
    assert!(message.ends_with("~/.ssh img click"), "{md}");
    assert!(!md.contains("](javascript:"), "{md}");
    // The limit can be raised: nothing is cut then.
    let all = export(&env, &["hostile-export", "--max-output", "100000"]);
    assert!(all.contains(&"x".repeat(10_000)));
    assert!(!all.contains("cut at"));
}

/// A key split across two records: its start ends one message and the rest starts the next,
/// and a token split between a command and its output. Extraction fails such a session closed;
/// every export format marks each piece where it stands (issue: `export` shipped both halves).
#[test]
fn a_secret_split_across_two_records_is_marked_in_both_in_every_format() {
    let env = synced();
    let line = |uuid: &str, parent: Option<&str>, kind: &str, content: serde_json::Value| {
        json!({"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "split-export",
               "timestamp": "2026-03-01T10:00:00Z", "cwd": "/home/marco/projects/spotter", "gitBranch": "master",
               "isSidechain": false, "userType": "external",
               "message": {"role": kind, "content": content}})
        .to_string()
    };
    let text = |t: &str| json!([{"type": "text", "text": t}]);
    let lines = [
        line("u1", None, "user", json!("Rotate the access id")),
        line(
            "a1",
            Some("u1"),
            "assistant",
            text("The new id begins AKIAZ7Q4N2M8"),
        ),
        line("a2", Some("a1"), "assistant", text("K3T6W1XR ends it")),
        line(
            "a3",
            Some("a2"),
            "assistant",
            json!([{"type": "tool_use", "id": "t1", "name": "Bash",
                    "input": {"command": "printf ghp_R4nd0mT0k3nV4lu3F0"}}]),
        ),
        line(
            "r1",
            Some("a3"),
            "user",
            json!([{"type": "tool_result", "tool_use_id": "t1", "content": "rT3st1ngAbCdEf1234 printed"}]),
        ),
        line("u2", Some("r1"), "user", json!("thanks")),
    ];
    std::fs::write(
        env.claude().join("-home-USER-projects-spotter/split.jsonl"),
        lines.join("\n") + "\n",
    )
    .unwrap();
    env.ok(&["sync"]);
    let halves = [
        "AKIAZ7Q4N2M8",
        "K3T6W1XR",
        "ghp_R4nd0mT0k3nV4lu3F0",
        "rT3st1ngAbCdEf1234",
    ];
    for format in ["md", "html", "json", "atif"] {
        let out = export(&env, &["split-export", "--format", format]);
        for half in halves {
            assert!(!out.contains(half), "{format}: {half} left in\n{out}");
        }
        // The export still works: the rest of each record is there, each piece marked.
        assert!(
            out.contains("The new id begins [REDACTED:aws-access-key]"),
            "{format}\n{out}"
        );
        assert!(
            out.contains("[REDACTED:aws-access-key] ends it"),
            "{format}\n{out}"
        );
        assert!(
            out.contains("[REDACTED:github-pat] printed"),
            "{format}\n{out}"
        );
        if format == "json" {
            let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
            assert_eq!(doc["left_out"]["secrets_split"], 2);
            assert_eq!(doc["left_out"]["redactions"]["aws-access-key"], 2);
            // The turn's previews repeat the records' text: marked there too.
            assert_eq!(
                doc["turns"][0]["turn"]["assistant_preview"]
                    .as_str()
                    .map(|p| p.contains("ghp_") || p.contains("K3T6")),
                Some(false),
                "{out}"
            );
        } else {
            assert!(
                out.contains("2 secrets split across records are marked in each of them."),
                "{format}: the trailer says so\n{out}"
            );
        }
    }
}

/// A Gemini rewind (the real session's document written again without its last eleven
/// messages): the records the agent took back stay in the archive, marked. Every format a
/// person reads marks each of them where it stands and says at the top how many there are; ATIF
/// keeps the time in the step's `extra.cairn` and still validates (issue: Markdown, HTML and
/// ATIF showed them as ordinary conversation).
#[test]
fn records_the_agent_took_back_are_marked_in_every_format() {
    let (env, id) = crate::support::rewound_gemini();
    let rewound = "can you install helium and not just run it from downloads?";

    let doc: serde_json::Value =
        serde_json::from_str(&export(&env, &[id, "--format", "json"])).unwrap();
    let records: Vec<&serde_json::Value> = doc["turns"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["records"].as_array().unwrap())
        .collect();
    let retracted = records
        .iter()
        .filter(|r| r["retracted_at"].is_string())
        .count();
    assert!(retracted > 0 && retracted < records.len(), "{retracted}");
    let note = format!("{retracted} records are marked \"retracted by the agent\"");

    let md = export(&env, &[id, "--format", "md"]);
    assert!(md.contains(&note), "{md}");
    assert!(
        md.contains(&format!("**User (retracted by the agent)**\n\n> {rewound}")),
        "{md}"
    );
    // What the conversation still holds reads as before: its first prompt is not marked.
    let first = md.find("**User").unwrap();
    assert!(md[first..].starts_with("**User**\n"), "{md}");
    // Each record shown is marked once, in its heading (tool calls and output too).
    assert!(md.matches("(retracted by the agent)").count() > 1, "{md}");

    let html = export(&env, &[id, "--format", "html"]);
    assert!(html.contains(&note.replace('"', "&quot;")), "{html}");
    assert!(
        html.contains(&format!(
            "<div class=\"msg user retracted\"><div class=\"who\">User <span class=\"gone\">(retracted by the agent)</span></div><div class=\"text\">{rewound}"
        )),
        "{html}"
    );
    assert!(html.contains("<details class=\"retracted\">"), "{html}");

    let atif_text = export(&env, &[id, "--format", "atif"]);
    let atif: serde_json::Value = serde_json::from_str(&atif_text).unwrap();
    assert!(atif["notes"].as_str().unwrap().contains(&note), "{atif}");
    let steps = atif["steps"].as_array().unwrap();
    // Every retracted record keeps its time: on its step, or on the call's step it joined.
    let marked = steps
        .iter()
        .map(|s| {
            let own = usize::from(s["extra"]["cairn"]["retracted_at"].is_string());
            let joined = s["extra"]["cairn_results"].as_array().map_or(0, |rs| {
                rs.iter().filter(|r| r["retracted_at"].is_string()).count()
            });
            own + joined
        })
        .sum::<usize>();
    assert_eq!(marked, retracted, "{atif}");
    let step = steps.iter().find(|s| s["message"] == rewound).unwrap();
    assert!(step["extra"]["cairn"]["retracted_at"].is_string(), "{step}");
    assert!(
        steps[0]["extra"]["cairn"].get("retracted_at").is_none(),
        "{atif}"
    );
    if let Some(python) = reference_python() {
        let file = env.root.path().join("rewound.atif.json");
        std::fs::write(&file, &atif_text).unwrap();
        let out = Command::new(python)
            .arg(repo_root().join("tests/atif/validate.py"))
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn a_turn_range_exports_those_turns_and_a_bad_one_is_refused() {
    let env = synced();
    let doc: serde_json::Value = serde_json::from_str(&export(
        &env,
        &[STAGE0, "--format", "json", "--turns", "2..3"],
    ))
    .unwrap();
    let turns: Vec<u64> = doc["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["turn"]["turn_index"].as_u64().unwrap())
        .collect();
    assert_eq!(turns, [2, 3]);
    assert_eq!(doc["left_out"]["turns_not_exported"], 5);
    // A range that is no range is a usage error (exit 2); one past the session's turns is not.
    for (bad, code, says) in [
        ("7..3", 2, "ends before it starts".to_owned()),
        ("x", 2, "is not A..B".to_owned()),
        // Its hint names the session as the person can type it: its agent's id.
        (
            "40..50",
            1,
            format!(
                "no turn 40..50 in this session (it has 7); list its turns with `cairn show {STAGE0}`"
            ),
        ),
        // An open end is said as typed.
        ("40..", 1, "no turn 40.. in this session".to_owned()),
    ] {
        let out = env.run(&["export", STAGE0, "--turns", bad]);
        assert_eq!(out.status.code(), Some(code), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&says), "{bad}: {err}");
    }
    let out = env.run(&["export", STAGE0, "--format", "pdf"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("use md, html, json or atif"));
    // --json promises one JSON document on stdout: the JSON export unless another was asked
    // for, and Markdown or HTML asked for there is a usage error saying how to get either.
    let out = env.run(&["--json", "export", STAGE0]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["turns"].is_array(), "{doc}");
    let out = env.run(&["--json", "export", STAGE0, "--format", "md"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--output"));
    // A folder that is not there is refused, not made.
    let missing = env.root.path().join("no-such-folder/x.md");
    let out = env.run(&["export", STAGE0, "-o", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("there is no folder"));
    assert!(!missing.parent().unwrap().exists());
    let out = env.run(&["export", "no-such-session"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("not found"));
}

#[test]
fn export_to_a_file_never_replaces_one() {
    let env = synced();
    let dir = env.root.path().join("out");
    std::fs::create_dir_all(&dir).unwrap();
    let dir_arg = dir.to_str().unwrap();
    let first = env.json(&["export", SMALL, "--format", "html", "-o", dir_arg]);
    let second = env.json(&["export", SMALL, "--format", "html", "-o", dir_arg]);
    let (a, b) = (
        Path::new(first["path"].as_str().unwrap()),
        Path::new(second["path"].as_str().unwrap()),
    );
    assert_ne!(a, b);
    assert!(
        a.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("session-claude-55604662-20260210")
    );
    assert!(b.to_str().unwrap().ends_with(" (2).html"));
    assert_eq!(std::fs::read(a).unwrap(), std::fs::read(b).unwrap());

    // No output at all is not a cut: 0 is refused (it was taken as the default, 4096).
    let zero = env.run(&["export", SMALL, "--max-output", "0"]);
    assert_eq!(zero.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&zero.stderr).contains("--max-output"));

    // `-o -` is stdout; a device or FIFO is refused (`-o /dev/null` made `/dev/null (2)`), and
    // so is a name with a control character (printed as another name).
    let stdout = env.run(&["export", SMALL, "--format", "md", "-o", "-"]);
    assert!(stdout.status.success());
    assert!(String::from_utf8_lossy(&stdout.stdout).starts_with('#'));
    assert!(!env.root.path().join("-").exists());
    let fifo = dir.join("pipe");
    crate::support::mkfifo(&fifo);
    let before: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    for bad in [fifo.to_str().unwrap(), &format!("{dir_arg}/a\nb.md")] {
        let out = env.run(&["export", SMALL, "-o", bad]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{bad:?}: {err}");
        assert!(
            err.contains("not a regular file") || err.contains("control character"),
            "{err}"
        );
    }
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), before.len());
}

/// The file's name says the format when --format does not (`-o x.html` wrote Markdown), and a
/// name asking for another format than --format's is refused, writing nothing.
#[test]
fn the_output_file_name_picks_the_format_and_a_contrary_one_is_refused() {
    let env = synced();
    let dir = env.root.path().join("out");
    std::fs::create_dir_all(&dir).unwrap();
    let at = |name: &str| dir.join(name).to_str().unwrap().to_owned();
    let read =
        |v: &serde_json::Value| std::fs::read_to_string(v["path"].as_str().unwrap()).unwrap();
    let html = env.json(&["export", SMALL, "-o", &at("x.html")]);
    assert_eq!(html["format"], "html");
    assert!(
        read(&html)
            .trim_start()
            .to_ascii_lowercase()
            .starts_with("<!doctype html")
    );
    let atif = env.json(&["export", SMALL, "-o", &at("x.atif.json")]);
    assert_eq!(atif["format"], "atif");
    let doc: serde_json::Value = serde_json::from_str(&read(&atif)).unwrap();
    assert!(doc["schema_version"].as_str().unwrap().starts_with("ATIF"));
    assert_eq!(
        env.json(&["export", SMALL, "-o", &at("short.atif")])["format"],
        "atif"
    );
    let json = env.json(&["export", SMALL, "-o", &at("x.JSON")]);
    assert_eq!(json["format"], "json");
    let md = env.json(&["export", SMALL, "-o", &at("notes.txt")]);
    assert_eq!(md["format"], "md");
    let atif_as_json = env.json(&["export", SMALL, "--format", "atif", "-o", &at("t.json")]);
    assert_eq!(atif_as_json["format"], "atif");

    let before = std::fs::read_dir(&dir).unwrap().count();
    let out = env.run(&["export", SMALL, "--format", "md", "-o", &at("y.html")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("y.html names a .html file but the export is md"),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), before);
}

/// A teammate's or imported trajectory is exported as the agent that ran it (what the session
/// view shows, `agent::ran_by` of the trajectory's name), not as the ATIF format it came in.
#[test]
fn an_imported_session_exports_as_the_agent_that_ran_it() {
    let env = Env::new();
    let trajectory = json!({
        "schema_version": "ATIF-v1.4",
        "session_id": "imported-one",
        "agent": {"name": "claude-code", "version": "2.0.0"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "parse the headers",
             "timestamp": "2026-11-02T10:00:00Z"},
            {"step_id": 2, "source": "agent", "message": "Done.",
             "timestamp": "2026-11-02T10:00:30Z"}
        ]
    });
    let path = env.root.path().join("imported.atif.json");
    std::fs::write(&path, trajectory.to_string()).unwrap();
    let key = env.json(&["import", path.to_str().unwrap()])["session_key"]
        .as_str()
        .unwrap()
        .to_owned();
    let md = export(&env, &[&key, "--format", "md"]);
    assert!(md.contains("**Agent:** claude ·"), "{md}");
    let html = export(&env, &[&key, "--format", "html"]);
    assert!(html.contains("agent <b>claude</b>"), "{html}");
    for doc in [&md, &html] {
        assert!(!doc.contains("atif"), "{doc}");
    }
    let atif: serde_json::Value =
        serde_json::from_str(&export(&env, &[&key, "--format", "atif"])).unwrap();
    assert_eq!(atif["agent"]["name"], "claude");
}
