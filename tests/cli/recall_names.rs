//! Human output of Recall names sessions as a person knows them (agent, start, title or first
//! request), never by internal key (CLI.md: keys only with `--json` or `--keys`): extraction's
//! progress, report and status, and the brief's evidence lines. `--json` keeps its keys. And a
//! project's listing, which a brief's last line points at, lists the global entries of other
//! projects that the brief serves.

use std::process::Output;

use serde_json::{Value, json};

use crate::fake_llm::{FakeLlm, Reply};
use crate::support::Env;

const KEY_VAR: &str = "CAIRN_TEST_LLM_KEY";
const KEY: &str = "test-key-3f9a1c";
/// A Claude fixture session with no title: named by its first request.
const SMALL: &str = "55604662-cf2a-4331-851a-ec234028f8ca";

fn extracting(fake: &FakeLlm) -> Env {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    std::fs::write(
        env.data().join("config.toml"),
        format!(
            "[recall.extract]\nenabled = true\nmodel = \"test-model\"\nconcurrency = 1\n\
             [recall.extract.servers.local]\nendpoint = \"{}\"\napi_key_env = \"{KEY_VAR}\"\n",
            fake.url()
        ),
    )
    .unwrap();
    env
}

fn cairn(env: &Env, args: &[&str]) -> Output {
    env.command().env(KEY_VAR, KEY).args(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A pass whose first session fails: its progress lines, its report and the error, then
/// status, name the sessions by agent, start and first request; `--json` keeps the keys.
#[test]
fn extraction_names_sessions_without_their_keys() {
    let fake = FakeLlm::start(Some(KEY));
    let env = extracting(&fake);
    fake.push(Reply::chat("I cannot comply with that request.", "stop"));
    let run = cairn(&env, &["recall", "extract", "run", "--progress"]);
    assert_eq!(run.status.code(), Some(1));
    let (stdout, stderr) = (text(&run.stdout), text(&run.stderr));
    for out in [&stdout, &stderr] {
        assert!(!out.contains("sha256-"), "a key in human output:\n{out}");
    }
    // Started, its units, and the failed one: each session said as a person knows it.
    assert!(
        stderr.contains("[1/") && stderr.contains(" session of 20") && stderr.contains("] unit 1/"),
        "{stderr}"
    );
    let failed = stdout
        .lines()
        .find(|l| l.starts_with("failed "))
        .unwrap_or_else(|| panic!("no failure line:\n{stdout}"));
    assert!(
        failed.contains(" session of 20") && failed.contains("\": "),
        "{failed}"
    );
    let named = failed["failed ".len()..].split("\": ").next().unwrap();
    assert!(
        stderr.contains(&format!("cairn: 1 session failed, the first {named}\": "))
            && stderr.contains("at once with --session "),
        "{stderr}"
    );

    let status = cairn(&env, &["recall", "extract", "status"]);
    let status = text(&status.stdout);
    assert!(!status.contains("sha256-"), "{status}");
    assert!(status.contains(&failed.to_owned()), "{status}");

    // --keys asks for them; --json keeps them where it always had them.
    let keyed = text(&cairn(&env, &["--keys", "recall", "extract", "status"]).stdout);
    assert!(keyed.contains("failed sha256-"), "{keyed}");
    let doc: Value =
        serde_json::from_slice(&cairn(&env, &["--json", "recall", "extract", "status"]).stdout)
            .unwrap();
    let key = doc["failures"][0]["session_key"].as_str().unwrap();
    assert!(key.starts_with("sha256-"), "{doc}");
}

/// Entries citing a titled session and an untitled one: the human brief names both by agent,
/// start and title or first request; its `--json` text keeps the keys agents read.
#[test]
fn the_brief_names_the_sessions_its_evidence_cites() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let sessions = env.json(&["sessions"]);
    let titled = sessions
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["title"] == "Stage0 small fixture")
        .expect("the titled fixture session");
    let line = |id: &str, session: &str, title: &str| {
        json!({"candidate_id": id, "session_id": session, "type": "decision", "scope": "project",
               "project": "shop", "title": title, "body": "Integers only",
               "transferable": true, "provenance_ok": true, "label": "correct",
               "evidence": {"ordinal_start": 0, "ordinal_end": 1}})
        .to_string()
    };
    let file = env.root.path().join("entries.jsonl");
    let lines = [
        line("cents-a", SMALL, "Cart totals are kept in cents"),
        line(
            "cents-b",
            titled["session_key"].as_str().unwrap(),
            "Cents again in the cart",
        ),
    ];
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    env.ok(&["recall", "import", file.to_str().unwrap(), "--yes"]);

    let human = env.ok(&["recall", "brief", "cart cents", "--project", "shop"]);
    assert!(!human.contains("sha256-"), "{human}");
    assert!(
        human.contains(
            "   evidence: claude session of 2026-02-10 21:11 \"mix phx.server doesnt seem to start\" records 0-1"
        ),
        "{human}"
    );
    assert!(
        human.contains("\"Stage0 small fixture\" records 0-1"),
        "{human}"
    );
    let doc = env.json(&["recall", "brief", "cart cents", "--project", "shop"]);
    let packed = doc["text"].as_str().unwrap();
    assert_eq!(
        packed.matches("   evidence: sha256-").count(),
        2,
        "{packed}"
    );
    // The query's packed context too.
    let context = env.ok(&["recall", "query", "cart cents", "--context"]);
    assert!(
        context.contains("   evidence: claude session of") && !context.contains("sha256-"),
        "{context}"
    );
}

/// The brief's last line sends a person to `cairn recall list --project <p> --trusted-only` for
/// the notes it had no room for: that listing holds the trusted global entries of other
/// projects after the project's own, as the brief serves them, in either form; a narrower
/// filter keeps them out, as it does of every answer.
#[test]
fn a_project_s_listing_holds_the_global_entries_a_brief_serves() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let line = |id: &str, scope: &str, project: &str, title: &str| {
        json!({"candidate_id": id, "session_id": SMALL, "type": "preference", "scope": scope,
               "project": project, "title": title, "body": "b",
               "transferable": true, "provenance_ok": true, "label": "correct",
               "evidence": {"ordinal_start": 0, "ordinal_end": 1}})
        .to_string()
    };
    let file = env.root.path().join("entries.jsonl");
    let lines = [
        line("own", "project", "shop", "Shop builds with make"),
        line("everywhere", "global", "garden", "Prefer pnpm"),
        line("garden-only", "project", "garden", "Garden waters at dawn"),
    ];
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    env.ok(&["recall", "import", file.to_str().unwrap(), "--yes"]);

    let args = ["recall", "list", "--project", "shop", "--trusted-only"];
    let human = env.ok(&args);
    let own = human
        .find("own  preference  Shop builds with make")
        .unwrap();
    let global = human
        .find("everywhere  preference  Prefer pnpm (global, from garden)")
        .unwrap_or_else(|| panic!("{human}"));
    assert!(own < global, "{human}");
    assert!(!human.contains("garden-only"), "{human}");
    let ids: Vec<Value> = env
        .json(&args)
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].clone())
        .collect();
    assert_eq!(ids, [json!("own"), json!("everywhere")]);
    // Ranked by words too.
    let ranked = env.json(&[
        "recall",
        "list",
        "--query",
        "pnpm",
        "--project",
        "shop",
        "--trusted-only",
    ]);
    assert_eq!(ranked[0]["id"], "everywhere", "{ranked}");
    // A folder is narrower than a project: no other project's entry is in it.
    let narrow = env.json(&["recall", "list", "--project", "shop", "--cwd", "/nowhere"]);
    assert!(narrow.as_array().unwrap().is_empty(), "{narrow}");
}
