//! `cairn insights …` end to end, with stand-in agent CLIs that record what they were sent.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::Env;

const WIDE: [&str; 4] = ["--since", "2020-01-01", "--until", "2030-01-01"];
const PLANTED: &str = "AKIAIOSFODNN7EXAMPLE";

/// A stand-in agent CLI: saves its stdin, arguments, environment and working directory under
/// `log`, then answers with `answer` (a shell fragment writing to stdout).
fn stub(env: &Env, name: &str, answer: &str) -> (PathBuf, PathBuf) {
    let log = env.root.path().join(format!("{name}-log"));
    std::fs::create_dir_all(&log).unwrap();
    let bin = env.root.path().join(format!("bin-{name}"));
    let script = format!(
        "#!/bin/sh\nn=$(ls {log}/prompt-* 2>/dev/null | wc -l)\ncat > {log}/prompt-$n\necho \"$@\" > {log}/args-$n\nenv > {log}/env-$n\npwd > {log}/pwd-$n\n{answer}\n",
        log = log.display()
    );
    std::fs::write(&bin, script).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    (bin, log)
}

fn prompts(log: &Path) -> Vec<String> {
    let mut v: Vec<(usize, String)> = std::fs::read_dir(log)
        .unwrap()
        .filter_map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            let n = name.strip_prefix("prompt-")?.parse().ok()?;
            Some((n, std::fs::read_to_string(e.path()).unwrap()))
        })
        .collect();
    v.sort();
    v.into_iter().map(|(_, p)| p).collect()
}

fn config(env: &Env, text: &str) {
    std::fs::write(env.data().join("config.toml"), text).unwrap();
}

/// A session whose prompt carries a secret and a path in the home directory.
fn plant_session(env: &Env) {
    let dir = env.claude().join("-planted");
    std::fs::create_dir_all(&dir).unwrap();
    let home = env.home().display().to_string();
    let lines = [
        serde_json::json!({"type":"user","sessionId":"planted-1","cwd":format!("{home}/work/shop"),"timestamp":"2026-05-01T10:00:00.000Z",
            "uuid":"u1","entrypoint":"cli","message":{"role":"user","content":format!("deploy with {PLANTED}, the notes are in {home}/private/notes.txt")}}),
        serde_json::json!({"type":"assistant","sessionId":"planted-1","cwd":format!("{home}/work/shop"),"timestamp":"2026-05-01T10:00:05.000Z",
            "uuid":"u2","message":{"id":"m1","role":"assistant","model":"claude-x","content":[{"type":"text","text":"Deployed; I read /etc/deploy/settings.yaml first."}]}}),
    ];
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(dir.join("planted-1.jsonl"), text.join("\n") + "\n").unwrap();
}

fn claude_answer(report: &str) -> String {
    let json = serde_json::json!({"type":"result","is_error":false,"result":report,"modelUsage":{"stub-model-1":{}}});
    format!("cat <<'EOF'\n{json}\nEOF")
}

fn generate(env: &Env, extra: &[&str]) -> Value {
    let mut args = vec!["insights", "generate"];
    args.extend_from_slice(&WIDE);
    args.extend_from_slice(extra);
    env.json(&args)
}

/// [`generate`] with one more environment variable set for `cairn`.
fn generate_with_var(env: &Env, var: &str, value: &std::ffi::OsStr, extra: &[&str]) -> Value {
    let mut args = vec!["--json", "insights", "generate"];
    args.extend_from_slice(&WIDE);
    args.extend_from_slice(extra);
    let out = env.command().env(var, value).args(&args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_report_through_a_local_agent_is_stored_listed_starred_renamed_exported_and_deleted() {
    let env = Env::new().with_fixtures();
    plant_session(&env);
    env.ok(&["sync"]);
    let report = format!(
        "# Week\n\nWork on the spotter app. The key {PLANTED} leaked into my answer.\n\n<script>alert(1)</script> [bad](javascript:alert(1))"
    );
    let (bin, log) = stub(&env, "claude", &claude_answer(&report));
    config(
        &env,
        &format!("[agent.claude]\nbinary = \"{}\"\n", bin.display()),
    );

    let first = generate(
        &env,
        &["--template", "failure-patterns", "--focus", "flaky tests"],
    );
    assert_eq!(first["cached"], false);
    let insight = &first["insight"];
    // CLI.md: `insight.status`.
    assert_eq!(insight["status"], "generated");
    let id = insight["id"].as_i64().unwrap();
    assert_eq!(insight["generator"], "claude");
    assert_eq!(insight["model"], "stub-model-1");
    assert_eq!(insight["template_id"], "failure-patterns");
    assert_eq!(
        insight["link"],
        format!("cairn://recall?tab=generated&insight={id}")
    );
    assert!(insight["sessions_total"].as_u64().unwrap() >= 5);
    // The model's echo of a secret is not stored.
    let content = insight["content"].as_str().unwrap();
    assert!(
        !content.contains(PLANTED) && content.contains("[REDACTED:"),
        "{content}"
    );

    // What the agent received: the template, the focus, the material, and nothing private.
    let sent = prompts(&log);
    assert_eq!(sent.len(), 1);
    let prompt = &sent[0];
    assert!(prompt.contains("Failure patterns") && prompt.contains("flaky tests"));
    assert!(
        prompt.contains("cairn://session/sha256-"),
        "sessions are cited by link"
    );
    assert!(!prompt.contains(PLANTED), "a planted secret was sent");
    let home = env.home().display().to_string();
    assert!(!prompt.contains(&home), "a home path was sent");
    assert!(!prompt.contains("/etc/deploy"), "an absolute path was sent");
    assert!(prompt.contains("private/notes.txt") || prompt.contains("[REDACTED:path]"));
    // It ran with a minimal environment, in an empty throwaway directory, with claude's flags.
    let agent_env = std::fs::read_to_string(log.join("env-0")).unwrap();
    assert!(!agent_env.contains("CAIRN_DATA_DIR") && !agent_env.contains("CLAUDE_PROJECTS_DIR"));
    assert!(agent_env.contains("PATH="));
    let args = std::fs::read_to_string(log.join("args-0")).unwrap();
    assert!(
        args.starts_with("-p --output-format json --no-session-persistence"),
        "{args}"
    );
    let pwd = std::fs::read_to_string(log.join("pwd-0")).unwrap();
    assert!(
        !Path::new(pwd.trim()).exists(),
        "the work dir is removed afterwards"
    );

    // The same request is answered from the store; --force asks again.
    let again = generate(
        &env,
        &["--template", "failure-patterns", "--focus", "flaky tests"],
    );
    assert_eq!(
        (again["cached"].as_bool(), again["insight"]["id"].as_i64()),
        (Some(true), Some(id))
    );
    assert_eq!(again["insight"]["status"], "cached");
    assert_eq!(prompts(&log).len(), 1);
    let forced = generate(
        &env,
        &[
            "--template",
            "failure-patterns",
            "--focus",
            "flaky tests",
            "--force",
        ],
    );
    let id2 = forced["insight"]["id"].as_i64().unwrap();
    assert_ne!(id2, id);
    assert_eq!(prompts(&log).len(), 2);
    // Another template is another report; asked again without --until (which resolves to
    // the second it is asked), it is the same request over the same sessions.
    let open = [
        "insights",
        "generate",
        "--since",
        "2020-01-01",
        "--template",
        "weekly-summary",
    ];
    assert_eq!(env.json(&open)["cached"], false);
    assert_eq!(prompts(&log).len(), 3);
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_eq!(env.json(&open)["cached"], true);
    assert_eq!(prompts(&log).len(), 3);
    // A span back from now is the same request asked again, as typed.
    let span = [
        "insights",
        "generate",
        "--since",
        "3650d",
        "--template",
        "weekly-summary",
    ];
    assert_eq!(env.json(&span)["cached"], false);
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_eq!(env.json(&span)["cached"], true);
    assert_eq!(prompts(&log).len(), 4);
    // A bound that is no time is a usage error, as every command's.
    let out = env.run(&["insights", "generate", "--since", "someday"]);
    assert_eq!(out.status.code(), Some(2));

    // List, star, rename, search.
    let list = env.json(&["insights", "list"]);
    assert_eq!(list.as_array().unwrap().len(), 4);
    env.ok(&["insights", "star", &id.to_string()]);
    env.ok(&["insights", "rename", &id.to_string(), "Why the tests flake"]);
    let starred = env.json(&["insights", "list", "--starred"]);
    assert_eq!(starred.as_array().unwrap().len(), 1);
    assert_eq!(starred[0]["title"], "Why the tests flake");
    assert_eq!(
        env.json(&["insights", "list", "--search", "tests flake"])
            .as_array()
            .unwrap()
            .len(),
        1
    );
    // A title pasted with a key in it is stored redacted, as every text is.
    env.ok(&[
        "insights",
        "rename",
        &id.to_string(),
        "Flakes (key AKIAZ7QW3RT5YU8IOP2L)",
    ]);
    let renamed = env.json(&["insights", "list", "--starred"]);
    assert_eq!(
        renamed[0]["title"], "Flakes (key [REDACTED:aws-access-key])",
        "{renamed}"
    );
    env.ok(&["insights", "rename", &id.to_string(), "Why the tests flake"]);
    env.ok(&["insights", "star", &id.to_string(), "--off"]);
    assert!(
        env.json(&["insights", "list", "--starred"])
            .as_array()
            .unwrap()
            .is_empty()
    );

    // Exports: Markdown, standalone HTML with inlined styles and no script, JSON.
    let out = env.root.path().join("exports");
    std::fs::create_dir_all(&out).unwrap();
    for format in ["md", "html", "json"] {
        env.ok(&[
            "insights",
            "export",
            &id.to_string(),
            "--format",
            format,
            "-o",
            &out.display().to_string(),
        ]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 3, "{files:?}");
    // A report holds transcript text: the export is the user's alone, whatever the umask.
    for f in &files {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(f).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", f.display());
    }
    let read = |ext: &str| {
        let f = files
            .iter()
            .find(|f| f.extension().is_some_and(|e| e == ext))
            .unwrap();
        assert!(
            f.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&format!("insight-{id}-failure-patterns-"))
        );
        std::fs::read_to_string(f).unwrap()
    };
    let md = read("md");
    assert!(
        md.starts_with("# Why the tests flake\n")
            && md.contains("generated by claude (stub-model-1)"),
        "{md}"
    );
    let html = read("html");
    assert!(
        html.starts_with("<!doctype html>")
            && html.contains("<style>")
            && html.contains("Content-Security-Policy")
    );
    assert!(
        !html.contains("<script") && !html.contains("href=\"javascript"),
        "{html}"
    );
    assert!(
        !html.contains("<link") && !html.contains("src=\"http"),
        "standalone: nothing fetched"
    );
    let json: Value = serde_json::from_str(&read("json")).unwrap();
    assert_eq!(json["id"], id);
    for text in [&md, &html, &json.to_string()] {
        assert!(!text.contains(PLANTED) && !text.contains(&home));
    }
    // Stdout export too, and `-o -` is stdout (it wrote files named `-`, `- (2)`, …).
    for args in [&[][..], &["-o", "-"][..]] {
        let mut all = vec!["insights", "export"];
        let id = id.to_string();
        all.push(&id);
        all.extend(args);
        assert!(env.ok(&all).contains("Why the tests flake"), "{args:?}");
    }
    // An export never replaces a file, named or not (the desktop's rule): the user's own file
    // stays, and the report goes beside it.
    let mine = env.root.path().join("mine.md");
    std::fs::write(&mine, "my notes").unwrap();
    let wrote = env.ok(&[
        "insights",
        "export",
        &id.to_string(),
        "-o",
        &mine.display().to_string(),
    ]);
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "my notes");
    let beside = env.root.path().join("mine (2).md");
    assert!(wrote.contains("mine (2).md"), "{wrote}");
    assert!(
        std::fs::read_to_string(&beside)
            .unwrap()
            .contains("Why the tests flake")
    );
    // The file's name says the format when --format does not; a contrary one is refused.
    let page = env.root.path().join("report.html");
    env.ok(&[
        "insights",
        "export",
        &id.to_string(),
        "-o",
        &page.display().to_string(),
    ]);
    assert!(
        std::fs::read_to_string(&page)
            .unwrap()
            .starts_with("<!doctype html>")
    );
    let data = env.root.path().join("report.atif.json");
    env.ok(&[
        "insights",
        "export",
        &id.to_string(),
        "-o",
        &data.display().to_string(),
    ]);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&data).unwrap()).unwrap();
    assert_eq!(doc["id"], id, "a report has no ATIF form: JSON");
    let contrary = env.run(&[
        "insights",
        "export",
        &id.to_string(),
        "--format",
        "json",
        "-o",
        &env.root.path().join("r.md").display().to_string(),
    ]);
    assert_eq!(contrary.status.code(), Some(1));
    assert!(!env.root.path().join("r.md").exists());

    // Delete.
    env.ok(&["insights", "delete", &id.to_string()]);
    let gone = env.run(&["insights", "get", &id.to_string()]);
    assert_eq!(gone.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&gone.stderr).contains("cairn insights list"));
    assert_eq!(env.json(&["insights", "list"]).as_array().unwrap().len(), 3);
}

#[test]
fn codex_is_run_with_exec_and_its_last_message_is_the_report() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    // Write the answer to the file named after --output-last-message.
    let answer = "while [ $# -gt 0 ]; do if [ \"$1\" = --output-last-message ]; then shift; printf '# From codex\\n\\nDone.' > \"$1\"; fi; shift; done\necho '{\"type\":\"turn.completed\"}'";
    let (bin, log) = stub(&env, "codex", answer);
    config(
        &env,
        &format!("[agent.codex]\nbinary = \"{}\"\n", bin.display()),
    );
    let v = generate(
        &env,
        &["--generator", "codex", "--template", "decisions-log"],
    );
    assert_eq!(v["insight"]["generator"], "codex");
    assert_eq!(v["insight"]["content"], "# From codex\n\nDone.");
    let args = std::fs::read_to_string(log.join("args-0")).unwrap();
    assert!(
        args.starts_with("exec --json --sandbox read-only"),
        "{args}"
    );
    assert!(
        args.trim_end().ends_with(" -"),
        "the prompt goes on stdin: {args}"
    );
}

/// `copilot` found on PATH (no `binary` configured) gets the prompt on stdin: never as an
/// argument, where `ps` would show the transcript text.
#[test]
fn copilot_on_path_gets_the_prompt_on_stdin_not_as_an_argument() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let (bin, log) = stub(&env, "copilot", "printf '# From copilot'");
    let dir = env.root.path().join("path-bin");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::rename(&bin, dir.join("copilot")).unwrap();
    let path = std::env::join_paths(
        std::iter::once(dir).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let v = generate_with_var(&env, "PATH", &path, &["--generator", "copilot"]);
    assert_eq!(v["insight"]["content"], "# From copilot");
    let sent = prompts(&log);
    assert!(
        sent[0].contains("=== MATERIAL ==="),
        "the prompt arrives on stdin"
    );
    let argv = std::fs::read_to_string(log.join("args-0")).unwrap();
    assert!(
        !argv.contains("MATERIAL") && !argv.contains(" -p "),
        "{argv}"
    );
    assert!(argv.contains("--deny-tool shell"), "{argv}");
}

#[test]
fn generation_problems_say_what_to_do() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let err = |args: &[&str]| {
        let mut all = vec!["insights", "generate"];
        all.extend_from_slice(args);
        let out = env.run(&all);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    // A generator that is not installed.
    config(&env, "[agent.claude]\nbinary = \"/nonexistent/claude\"\n");
    let e = err(&WIDE);
    assert!(
        e.contains("not found") && e.contains("[agent.claude] binary") && !e.contains("<name>"),
        "{e}"
    );
    // Gemini needs a sandbox decision.
    let e = err(&["--generator", "gemini", "--since", "2020-01-01"]);
    assert!(e.contains("sandbox"), "{e}");
    // The endpoint needs configuring.
    let e = err(&["--generator", "endpoint"]);
    assert!(e.contains("config.toml") && e.contains("endpoint"), "{e}");
    // Nothing in the slice: nothing is sent.
    let e = err(&["--since", "2001-01-01", "--until", "2001-01-02"]);
    assert!(e.contains("no sessions in the slice"), "{e}");
    // An unknown template lists the known ones.
    let e = err(&["--template", "horoscope"]);
    assert!(e.contains("weekly-summary"), "{e}");
    // An agent that fails, and one that hangs past its timeout.
    let (bin, _) = stub(&env, "claude", "echo 'quota exceeded' >&2; exit 3");
    config(
        &env,
        &format!("[agent.claude]\nbinary = \"{}\"\n", bin.display()),
    );
    let e = err(&WIDE);
    assert!(e.contains("code 3") && e.contains("quota exceeded"), "{e}");
    let (bin, _) = stub(&env, "claude", "sleep 30");
    config(
        &env,
        &format!(
            "[agent.claude]\nbinary = \"{}\"\ntimeout_secs = 1\n",
            bin.display()
        ),
    );
    let e = err(&WIDE);
    assert!(e.contains("no answer within 1 s"), "{e}");
    assert!(
        env.json(&["insights", "list"])
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[test]
fn dry_run_shows_the_slice_and_the_prompt_without_running_anything() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let (bin, log) = stub(&env, "claude", &claude_answer("# x"));
    config(
        &env,
        &format!("[agent.claude]\nbinary = \"{}\"\n", bin.display()),
    );
    let mut args = vec!["insights", "generate", "--dry-run", "--agent", "codex"];
    args.extend_from_slice(&WIDE);
    let v = env.json(&args);
    assert_eq!(v["slice"]["agent"], "codex");
    assert!(v["slice_label"].as_str().unwrap().contains("codex"));
    assert!(v["sessions_total"].as_u64().unwrap() >= 1);
    assert!(v["prompt"].as_str().unwrap().contains("=== MATERIAL ==="));
    assert_eq!(v["cached_id"], Value::Null);
    assert!(prompts(&log).is_empty());
    let human = env.ok(&["insights", "generate", "--dry-run", "--since", "2020-01-01"]);
    assert!(
        human.contains("Sessions:") && human.contains("Generator: claude"),
        "{human}"
    );
    let templates = env.ok(&["insights", "templates"]);
    for t in [
        "branch-retrospective",
        "weekly-summary",
        "decisions-log",
        "failure-patterns",
        "recall-gaps",
    ] {
        assert!(templates.contains(t), "{templates}");
    }
}

/// `sessions --branch` lists the sessions that recorded a branch; a report counts those linked
/// to it by their work. The dry run says so, with how many it leaves out and the flag that
/// includes them, as the real run's error does (the dry run said only "Sessions: 0").
#[test]
fn a_branch_slice_says_which_sessions_it_counts_and_include_weak_adds_the_rest() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let recorded = env.json(&["sessions", "--branch", "master"]);
    let recorded = recorded.as_array().unwrap().len();
    assert!(recorded >= 1, "the fixtures record branch master");
    fn dry<'a>(extra: &[&'a str]) -> Vec<&'a str> {
        let mut args = vec!["insights", "generate", "--dry-run", "--branch", "master"];
        args.extend_from_slice(&WIDE);
        args.extend_from_slice(&["--automation", "include"]);
        args.extend_from_slice(extra);
        args
    }
    let v = env.json(&dry(&[]));
    assert_eq!(v["sessions_total"], 0, "{v}");
    assert_eq!(v["weak_sessions"], recorded as u64, "{v}");
    let human = env.ok(&dry(&[]));
    assert!(
        human.contains("Sessions: 0")
            && human.contains("not those that only recorded it or ran while it was checked out")
            && human.contains(&format!(
                "{recorded} session{} left out, --include-weak includes them",
                if recorded == 1 { "" } else { "s" }
            )),
        "{human}"
    );
    // The real run refuses the empty slice the same way.
    let mut run = vec!["insights", "generate", "--branch", "master"];
    run.extend_from_slice(&WIDE);
    run.extend_from_slice(&["--automation", "include"]);
    let out = env.run(&run);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--include-weak includes them"), "{err}");
    // --include-weak reads them.
    let v = env.json(&dry(&["--include-weak"]));
    assert_eq!(v["sessions_total"], recorded as u64, "{v}");
    assert_eq!(v["slice"]["include_weak"], true, "{v}");
    let human = env.ok(&dry(&["--include-weak"]));
    assert!(
        human.contains(&format!("Sessions: {recorded}"))
            && human.contains("only recorded it or ran while it was checked out"),
        "{human}"
    );
    // It means something only with a branch.
    let mut alone = vec!["insights", "generate", "--dry-run", "--include-weak"];
    alone.extend_from_slice(&WIDE);
    assert_eq!(env.run(&alone).status.code(), Some(2));
}

/// A model server that never answers: the message names the key `[insights]` takes
/// (`timeout_secs`), not a server table's `timeout`; and writing `timeout` there is refused by
/// every command with the key it means.
#[test]
fn a_silent_endpoint_and_a_wrong_timeout_key_name_insights_timeout_secs() {
    use crate::fake_llm::FakeLlm;
    let fake = FakeLlm::start(None);
    fake.hold_after(0);
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let base = format!("[insights]\nendpoint = \"{}\"\nmodel = \"m\"\n", fake.url());
    config(&env, &format!("{base}timeout_secs = 1\n"));
    let mut args = vec!["insights", "generate"];
    args.extend_from_slice(&WIDE);
    let out = env.run(&args);
    fake.release();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("gave no answer within 1 s")
            && err.contains("raise `timeout_secs` under [insights]")
            && !err.contains("server's `timeout`"),
        "{err}"
    );
    config(&env, &format!("{base}timeout = \"3s\"\n"));
    for cmd in [&["sync"][..], &["insights", "list"][..]] {
        let out = env.run(cmd);
        assert_eq!(out.status.code(), Some(1), "{cmd:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("unknown field `timeout`") && err.contains("did you mean `timeout_secs`"),
            "{cmd:?}: {err}"
        );
    }
    let doctor = env.run(&["doctor"]);
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert!(text.contains("did you mean `timeout_secs`"), "{text}");
}

const KEY_VAR: &str = "CAIRN_TEST_LLM_KEY";
const KEY: &str = "test-key-insights-71c2";

fn endpoint_config(url: &str, model: &str) -> String {
    format!("[insights]\nendpoint = \"{url}\"\nmodel = \"{model}\"\napi_key_env = \"{KEY_VAR}\"\n")
}

#[test]
fn a_report_through_an_openai_compatible_endpoint_sends_no_secret() {
    use crate::fake_llm::{FakeLlm, Reply};
    let fake = FakeLlm::start(Some(KEY));
    let env = Env::new().with_fixtures();
    plant_session(&env);
    env.ok(&["sync"]);
    config(&env, &endpoint_config(&fake.url(), "report-model"));
    fake.push(Reply::chat(
        &format!(
            "```markdown\n# Week\n\nShipped the spotter app; the key {PLANTED} came back.\n```"
        ),
        "stop",
    ));
    let v = generate_with_var(&env, KEY_VAR, KEY.as_ref(), &[]);
    let insight = &v["insight"];
    assert_eq!(insight["generator"], "endpoint", "{v}");
    assert_eq!(insight["model"], "report-model");
    assert!(
        insight["endpoint_hash"]
            .as_str()
            .is_some_and(|h| h.len() == 64)
    );
    let content = insight["content"].as_str().unwrap();
    assert!(
        content.starts_with("# Week\n") && content.contains("spotter"),
        "{content}"
    );
    assert!(!content.contains(PLANTED), "{content}");

    let requests = fake.requests();
    assert_eq!(requests.len(), 1, "one chat call");
    let sent = &requests[0];
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let body = sent.json();
    assert_eq!(body["model"], "report-model");
    let prompt = body["messages"][0]["content"].as_str().unwrap();
    assert!(
        prompt.contains("=== MATERIAL ===")
            && prompt.contains("deploy with [REDACTED:aws-access-key]"),
        "{prompt}"
    );
    let home = env.home().display().to_string();
    assert!(!sent.body.contains(PLANTED), "a planted secret was sent");
    assert!(!sent.body.contains(&home), "a home path was sent");

    // The same question again is answered from the store: nothing more is sent.
    let again = generate_with_var(&env, KEY_VAR, KEY.as_ref(), &[]);
    assert_eq!(again["cached"], true, "{again}");
    assert_eq!(fake.requests().len(), 1);
}

#[test]
fn a_half_configured_endpoint_names_the_missing_key() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let path = env.data().join("config.toml").display().to_string();
    for (body, key) in [
        ("[insights]\nmodel = \"m\"\n", "not `endpoint`"),
        (
            "[insights]\nendpoint = \"http://127.0.0.1:9/v1\"\n",
            "not `model`",
        ),
        (
            "[insights]\nendpoint = \"http://llm.example.com/v1\"\nmodel = \"m\"\n",
            "allow_http",
        ),
        (
            "[insights]\nendpoint = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\napi_key_env = \"CAIRN_UNSET_KEY_VAR\"\n",
            "CAIRN_UNSET_KEY_VAR",
        ),
    ] {
        config(&env, body);
        let mut args = vec!["insights", "generate"];
        args.extend_from_slice(&WIDE);
        let out = env.run(&args);
        assert_eq!(out.status.code(), Some(1), "{body}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&path) && err.contains(key), "{body}: {err}");
    }
}
