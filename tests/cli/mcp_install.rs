//! `cairn mcp install|uninstall` (issue 15): the agents' MCP configs are the user's files, and
//! get the care `hooks install` gives settings files.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{Env, git};

fn cairn_path() -> String {
    std::fs::canonicalize(env!("CARGO_BIN_EXE_cairn"))
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// The arguments the server is registered with: the tests' archive is not at the default
/// place, so the agent must be told where it is.
fn server_args(env: &Env) -> Vec<String> {
    let data = std::fs::canonicalize(env.data()).unwrap();
    vec![
        "--data-dir".to_owned(),
        data.to_string_lossy().into_owned(),
        "mcp".to_owned(),
    ]
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

/// Where each agent's user config lives under the home (its makers' documentation).
fn user_config(agent: &str) -> &'static str {
    match agent {
        "claude" => ".claude.json",
        "codex" => ".codex/config.toml",
        "gemini" => ".gemini/settings.json",
        "cursor" => ".cursor/mcp.json",
        "copilot" => ".copilot/mcp-config.json",
        "qwen" => ".qwen/settings.json",
        "droid" => ".factory/mcp.json",
        "kimi" => ".kimi/mcp.json",
        other => panic!("no MCP config for {other}"),
    }
}

/// Every agent whose MCP config Cairn edits, with the config text a user may have.
const AGENTS: [(&str, &str); 8] = [
    ("claude", CLAUDE),
    ("codex", CODEX),
    ("gemini", GEMINI),
    ("cursor", CLAUDE),
    ("copilot", CLAUDE),
    ("qwen", QWEN),
    ("droid", CLAUDE),
    ("kimi", CLAUDE),
];

/// Qwen Code's settings hold far more than servers.
const QWEN: &str = "{\n  \"general\": {\"vimMode\": true},\n  \"mcpServers\": {\n    \"db\": {\"command\": \"pg-mcp\", \"env\": {\"PGPASSWORD\": \"Summer2024!\"}}\n  },\n  \"model\": {\"name\": \"qwen3-coder-plus\"}\n}\n";

/// Gemini CLI's settings hold far more than servers too.
const GEMINI: &str = "{\n  \"theme\": \"GitHub\",\n  \"mcpServers\": {\n    \"db\": {\"command\": \"pg-mcp\", \"env\": {\"PGPASSWORD\": \"Summer2024!\"}},\n    \"gh\": {\"httpUrl\": \"https://api.githubcopilot.com/mcp/\", \"headers\": {\"Authorization\": \"Bearer ghp_plantedplantedplantedplanted1234\"}}\n  },\n  \"general\": {\"checkpointing\": {\"enabled\": true}}\n}\n";

/// The user's config file of `agent`, kept in a dotfiles dir and linked into the home.
fn linked_config(env: &Env, agent: &str, text: &str) -> (PathBuf, PathBuf) {
    let dotfiles = env.root.path().join("dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    let (link, real) = (env.home().join(user_config(agent)), dotfiles.join(agent));
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::fs::write(&real, text).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    (link, real)
}

const CLAUDE: &str = "{\n  \"numStartups\": 41,\n  \"tipsHistory\": {\"a\": 1},\n  \"userID\": 18446744073709551617,\n  \"mcpServers\": {\n    \"db\": {\n      \"command\": \"pg-mcp\",\n      \"env\": {\"PGPASSWORD\": \"Summer2024!\"}\n    }\n  },\n  \"projects\": {}\n}\n";

const CODEX: &str = "model = \"gpt-5.1-codex\"\n# my servers\n[mcp_servers.db]\ncommand = \"pg-mcp\"\n\n[mcp_servers.db.env]\nPGPASSWORD = \"Summer2024!\"\n\n[features]\ncodex_hooks = true\n";

#[test]
fn install_and_uninstall_round_trip_for_every_agent() {
    for (agent, before) in AGENTS {
        let env = Env::new();
        let (link, real) = linked_config(&env, agent, before);

        let dry = env.json(&["mcp", "install", "--agent", agent, "--dry-run"]);
        let diff = dry["diff"].as_str().unwrap();
        assert!(
            dry["changed"] == true && diff.contains(&cairn_path()),
            "{diff}"
        );
        assert!(
            !diff.contains("Summer2024!") && !diff.contains("ghp_planted"),
            "{diff}"
        );
        assert_eq!(read(&real), before, "a dry run wrote");

        let done = env.json(&["mcp", "install", "--agent", agent]);
        assert_eq!(done["changed"], true);
        assert_eq!(
            read(done["backup"].as_str().map(Path::new).unwrap()),
            before
        );
        let after = read(&real);
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(mode(&real), 0o640);
        // What the agent reads: the server runs this binary with `mcp` on this archive.
        let (command, args) = match agent {
            "codex" => {
                let v: toml::Table = after.parse().unwrap();
                assert_eq!(v["mcp_servers"]["db"]["command"].as_str(), Some("pg-mcp"));
                assert_eq!(v["features"]["codex_hooks"].as_bool(), Some(true));
                let s = &v["mcp_servers"]["cairn"];
                let args: Vec<&str> = s["args"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| a.as_str().unwrap())
                    .collect();
                (
                    s["command"].as_str().unwrap().to_owned(),
                    serde_json::json!(args),
                )
            }
            _ => {
                let v: Value = serde_json::from_str(&after).unwrap();
                assert_eq!(v["mcpServers"]["db"]["command"], "pg-mcp");
                let s = &v["mcpServers"]["cairn"];
                if agent == "copilot" {
                    // Copilot CLI calls stdio `local` and loads only the tools listed.
                    assert_eq!(
                        (&s["type"], &s["tools"]),
                        (&"local".into(), &serde_json::json!(["*"]))
                    );
                }
                (s["command"].as_str().unwrap().to_owned(), s["args"].clone())
            }
        };
        assert_eq!(
            (command, args),
            (cairn_path(), serde_json::json!(server_args(&env)))
        );
        // Only lines were added.
        for line in before.lines() {
            assert!(after.contains(line), "{line} lost from\n{after}");
        }
        let check = mcp_check(&env.json(&["doctor"]), agent);
        assert_eq!(check["status"], "ok", "{check}");

        let again = env.json(&["mcp", "install", "--agent", agent]);
        assert!(again["changed"] == false && again["backup"].is_null());
        assert_eq!(read(&real), after);

        env.ok(&["mcp", "uninstall", "--agent", agent, "--dry-run"]);
        assert_eq!(read(&real), after, "a dry run wrote");
        let gone = env.json(&["mcp", "uninstall", "--agent", agent]);
        assert_eq!(
            (gone["changed"].clone(), gone["removed"].clone()),
            (true.into(), true.into())
        );
        assert_eq!(read(&real), before, "uninstall did not give the file back");
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(mode(&real), 0o640);
        assert_eq!(
            env.json(&["mcp", "uninstall", "--agent", agent])["changed"],
            false
        );
    }
}

#[test]
fn a_config_install_created_is_removed_by_uninstall_and_a_linked_one_kept() {
    let env = Env::new();
    env.ok(&["mcp", "install", "--agent", "claude"]);
    let path = env.home().join(".claude.json");
    assert_eq!(
        mode(&path),
        0o600,
        "~/.claude.json holds Claude Code's state"
    );
    let dry = env.ok(&["mcp", "uninstall", "--agent", "claude", "--dry-run"]);
    assert!(dry.contains("would be removed") && path.exists(), "{dry}");
    let out = env.ok(&["mcp", "uninstall", "--agent", "claude"]);
    assert!(!path.exists(), "an empty {{}} was left behind");
    assert!(out.contains("held nothing else"), "{out}");

    env.ok(&["mcp", "install", "--agent", "codex"]);
    let path = env.home().join(".codex/config.toml");
    env.ok(&["mcp", "uninstall", "--agent", "codex"]);
    assert!(!path.exists(), "an empty config.toml was left behind");

    // Through a link the target is the user's file: it stays, empty.
    let (link, real) = linked_config(&env, "claude", "");
    env.ok(&["mcp", "install", "--agent", "claude"]);
    env.ok(&["mcp", "uninstall", "--agent", "claude"]);
    assert!(std::fs::symlink_metadata(&link).is_ok());
    let v: Value = serde_json::from_str(&read(&real)).unwrap();
    assert_eq!(v, serde_json::json!({}));
}

/// A config that is a link into a folder not there yet (dotfiles not checked out) is refused
/// saying so and what to do, not "cannot write <folder>"; nothing is created.
#[test]
fn a_config_linked_into_a_missing_folder_is_refused_with_the_fix() {
    let env = Env::new();
    let link = env.home().join(".claude.json");
    let dotfiles = env.home().join("dotfiles");
    std::os::unix::fs::symlink(dotfiles.join("claude.json"), &link).unwrap();
    let out = env.run(&["mcp", "install", "--agent", "claude"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("{} is a symlink to", link.display()))
            && err.contains("whose folder does not exist")
            && err.contains(&format!("mkdir -p {}", dotfiles.display())),
        "{err}"
    );
    assert!(!dotfiles.exists());
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

/// An uninstall gives the file back as it was before the install: a server list the install
/// added goes when Cairn's server was all it held, and a person's own list stays, empty too
/// (the install's backup says which it was); the rest stays byte for byte.
#[test]
fn uninstall_takes_only_the_server_list_install_added_and_leaves_the_rest_byte_for_byte() {
    let env = Env::new();
    let claude = env.home().join(".claude.json");
    for before in [
        "{\n  \"a\": 1,\n  \"mcpServers\": {},\n  \"b\": [2]\n}\n",
        "{\"mcpServers\": {}, \"theme\": \"dark\"}\n",
        "{\n  \"a\": 1,\n  \"b\": [2]\n}\n",
    ] {
        std::fs::write(&claude, before).unwrap();
        env.ok(&["mcp", "install", "--agent", "claude"]);
        env.ok(&["mcp", "install", "--agent", "claude"]);
        env.ok(&["mcp", "uninstall", "--agent", "claude"]);
        assert_eq!(read(&claude), before, "from {before:?}");
    }

    // Install never writes an `[mcp_servers]` header (its table is `[mcp_servers.cairn]`):
    // one in the file is the person's, and stays.
    let codex = env.home().join(".codex/config.toml");
    std::fs::create_dir_all(codex.parent().unwrap()).unwrap();
    for before in [
        "model = \"x\"\n\n[mcp_servers]\n",
        "model = \"x\"\n\n[mcp_servers]\n\n[features]\ncodex_hooks = true\n",
        "[mcp_servers]\n\n[mcp_servers.db]\ncommand = \"pg\"\n",
        "[mcp_servers]\ndb = { command = \"pg\" }\n",
        "model = \"x\"\n",
    ] {
        std::fs::write(&codex, before).unwrap();
        env.ok(&["mcp", "install", "--agent", "codex"]);
        env.ok(&["mcp", "install", "--agent", "codex"]);
        env.ok(&["mcp", "uninstall", "--agent", "codex"]);
        assert_eq!(read(&codex), before, "from {before:?}");
    }
}

/// `cairn -C <dir> mcp install --agent <agent> --project`.
fn project_install<'a>(dir: &'a Path, agent: &'a str) -> [&'a str; 7] {
    let dir = dir.to_str().unwrap();
    ["-C", dir, "mcp", "install", "--agent", agent, "--project"]
}

/// The doctor's MCP check of `agent`.
fn mcp_check(doctor: &Value, agent: &str) -> Value {
    doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == format!("{agent} mcp"))
        .unwrap_or_else(|| panic!("no {agent} mcp check in {doctor}"))
        .clone()
}

#[test]
fn project_configs_land_in_the_repository_root() {
    let env = Env::new();
    let repo = env.root.path().join("shop");
    std::fs::create_dir_all(repo.join("src/deep")).unwrap();
    git(&repo, &["init", "-q"]);
    let deep = repo.join("src/deep");
    for (agent, file) in [
        ("claude", ".mcp.json"),
        ("codex", ".codex/config.toml"),
        ("qwen", ".qwen/settings.json"),
        ("droid", ".factory/mcp.json"),
        ("gemini", ".gemini/settings.json"),
        ("cursor", ".cursor/mcp.json"),
    ] {
        let r = env.json(&project_install(&deep, agent));
        let path = std::fs::canonicalize(&repo).unwrap().join(file);
        assert_eq!(r["path"], path.to_str().unwrap());
        assert!(read(&path).contains(&cairn_path()));
        assert_eq!(
            mode(&path),
            0o644,
            "a project's config is shared, not secret"
        );
        let notes = r["notes"].to_string();
        assert!(
            notes.contains("names this machine's cairn") && notes.contains("--project"),
            "a file the team commits names this machine's paths: {notes}"
        );
        // The tests' archive is away from its default place: its path is in the file too.
        assert!(
            notes.contains(&format!("its archive ({})", server_args(&env)[1])),
            "{notes}"
        );
        assert!(!env.home().join(".claude.json").exists());
    }
    // Agents whose makers document no project config: refused, nothing written.
    for agent in ["copilot", "kimi"] {
        let out = env.run(&project_install(&deep, agent));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("without --project"), "{err}");
    }
    assert!(!env.home().join(".copilot").exists() && !env.home().join(".kimi").exists());

    // Outside a repository there is no project: refused, nothing written where it ran.
    let loose = env.root.path().join("loose");
    std::fs::create_dir_all(&loose).unwrap();
    let out = env.run(&project_install(&loose, "claude"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("not in a git repository"), "{err}");
    assert_eq!(std::fs::read_dir(&loose).unwrap().count(), 0);

    // A second install over an existing project config keeps its backup in the git dir, where
    // `git add -A` does not pick it up.
    std::fs::write(repo.join(".cursor/mcp.json"), "{\"mcpServers\": {}}\n").unwrap();
    let r = env.json(&project_install(&deep, "cursor"));
    let backup = PathBuf::from(r["backup"].as_str().unwrap());
    assert!(
        backup.starts_with(
            std::fs::canonicalize(&repo)
                .unwrap()
                .join(".git/cairn-backups")
        ),
        "{backup:?}"
    );
    assert_eq!(read(&backup), "{\"mcpServers\": {}}\n");
    let status = std::process::Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=all"])
        .current_dir(&repo)
        .output()
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&status.stdout).contains("cairn-backup"),
        "{}",
        String::from_utf8_lossy(&status.stdout)
    );
}

/// A project config committed as a link out of the repository (to the user's own config,
/// which holds tokens) is refused: `--project` edited the user's file and copied it into the
/// work tree as a backup.
#[test]
fn a_project_config_linked_out_of_the_repository_is_refused() {
    let env = Env::new();
    let repo = env.root.path().join("shop");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    let user = env.home().join(".claude.json");
    let secret = "{\"oauthAccount\": {\"accessToken\": \"sk-ant-oat01-planted\"}}\n";
    std::fs::write(&user, secret).unwrap();
    std::os::unix::fs::symlink("../home/.claude.json", repo.join(".mcp.json")).unwrap();
    let out = env.run(&project_install(&repo, "claude"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("leads outside the repository"), "{err}");
    assert_eq!(read(&user), secret);
    let files: Vec<_> = std::fs::read_dir(&repo)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!files.iter().any(|f| f.contains("backup")), "{files:?}");
}

#[test]
fn a_moved_cairn_is_repointed_and_someone_elses_cairn_is_refused() {
    let env = Env::new();
    let (_, real) = linked_config(
        &env,
        "codex",
        "[mcp_servers.cairn]\ncommand = \"/old/bin/cairn\"\nargs = [\"mcp\"]\nstartup_timeout_sec = 20\n",
    );
    let said = env.ok(&["mcp", "install", "--agent", "codex"]);
    assert!(said.starts_with("Updated Cairn's MCP server in"), "{said}");
    let [flag, data, mcp] = &server_args(&env)[..] else {
        unreachable!()
    };
    assert_eq!(
        read(&real),
        format!(
            "[mcp_servers.cairn]\ncommand = \"{}\"\nargs = [\"{flag}\", \"{data}\", \"{mcp}\"]\nstartup_timeout_sec = 20\n",
            cairn_path()
        )
    );

    for (agent, text) in [
        (
            "claude",
            "{\"mcpServers\": {\"cairn\": {\"command\": \"/usr/bin/cairn\", \"args\": [\"serve\"]}}}",
        ),
        (
            "codex",
            "[mcp_servers.cairn]\ncommand = \"npx\"\nargs = [\"mcp\"]\n",
        ),
    ] {
        let env = Env::new();
        let (_, real) = linked_config(&env, agent, text);
        for verb in ["install", "uninstall"] {
            let out = env.run(&["mcp", verb, "--agent", agent]);
            assert_eq!(out.status.code(), Some(1));
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("not Cairn's server") && err.contains("rename or remove"),
                "{err}"
            );
            assert_eq!(read(&real), text);
        }
    }
}

/// Gemini CLI and Qwen Code strip `//` and `/* */` comments from their settings before reading
/// them: a commented settings file is valid, Cairn's server goes in with every comment where
/// it was (one that looks like a server, braces and quotes in comments, `//` and `/*` in
/// strings), and an uninstall gives the bytes back. Both were refused as "not valid JSON".
#[test]
fn gemini_and_qwen_settings_with_comments_keep_them_through_install_and_uninstall() {
    let text = "{\n  // my theme, {\"dark\"} and 'quoted'\n  \"theme\": \"dark\", /* a } brace */\n  \"url\": \"http://example.com//a/*b*/\" // the last one\n  /* \"mcpServers\": {\"cairn\": {}} */\n}\n";
    for agent in ["gemini", "qwen"] {
        let env = Env::new();
        let (_, real) = linked_config(&env, agent, text);
        let said = env.ok(&["mcp", "install", "--agent", agent]);
        assert!(said.contains("Added Cairn's MCP server"), "{said}");
        let after = read(&real);
        for comment in [
            "// my theme, {\"dark\"} and 'quoted'",
            "/* a } brace */",
            "// the last one",
            "/* \"mcpServers\": {\"cairn\": {}} */",
        ] {
            assert_eq!(after.matches(comment).count(), 1, "{comment}: {after}");
        }
        assert!(
            after.contains(
                "\"url\": \"http://example.com//a/*b*/\", // the last one\n  \"mcpServers\": {"
            ),
            "{after}"
        );
        let check = mcp_check(&env.json(&["doctor"]), agent);
        assert_eq!(check["status"], "ok", "{check}");
        assert_eq!(
            env.json(&["mcp", "install", "--agent", agent])["changed"],
            false
        );
        env.ok(&["mcp", "uninstall", "--agent", agent]);
        assert_eq!(read(&real), text, "{agent}: uninstall after install");
    }
}

#[test]
fn hostile_configs_are_refused_with_the_file_and_the_fix_and_nothing_written() {
    let cases: &[(&str, &str, &str)] = &[
        ("claude", "{\"mcpServers\": [1, 2]}", "must be an object"),
        ("claude", "{\"mcpServers\": {\"a\": 1,}}", "not valid JSON"),
        (
            "claude",
            "[\"not\", \"an\", \"object\"]",
            "must hold a JSON object",
        ),
        (
            "claude",
            "{\"mcpServers\": {\"cairn\": \"cairn mcp\"}}",
            "not Cairn's server",
        ),
        ("codex", "mcp_servers = 5\n", "must be a table"),
        ("codex", "[mcp_servers\ncommand = 1\n", "not valid TOML"),
        (
            "codex",
            "[mcp_servers.cairn]\ncommand = 7\nargs = \"mcp\"\n",
            "not Cairn's server",
        ),
        (
            "codex",
            "mcp_servers = { other = { command = \"x\" } }\n",
            "by hand",
        ),
        ("copilot", "{\"mcpServers\": \"all\"}", "must be an object"),
        (
            "copilot",
            "{\"mcpServers\": {\"cairn\": {\"type\": \"local\", \"command\": [\"cairn\"], \"args\": [\"mcp\"]}}}",
            "not Cairn's server",
        ),
        // Qwen Code reads comments in its settings (and Cairn keeps them), but not one that
        // is never closed, nor a trailing comma; Claude Code reads plain JSON.
        (
            "qwen",
            "{\n  /* my servers\n  \"mcpServers\": {}\n}\n",
            "the `/*` comment on line 2 is never closed",
        ),
        (
            "qwen",
            "{\n  // my servers\n  \"mcpServers\": {},\n}\n",
            "not valid JSON with comments",
        ),
        (
            "claude",
            "{\n  // my servers\n  \"mcpServers\": {}\n}\n",
            "holds comments (`//` or `/* */`), which JSON does not allow",
        ),
        ("qwen", "{\"mcpServers\": null}", "must be an object"),
        (
            "droid",
            "{\"mcpServers\": {\"cairn\": {\"command\": \"/bin/cairn\", \"args\": \"mcp\"}}}",
            "not Cairn's server",
        ),
        ("kimi", "\u{1b}[31m{}", "not valid JSON"),
    ];
    for (agent, text, says) in cases {
        let env = Env::new();
        let (link, real) = linked_config(&env, agent, text);
        let out = env.run(&["mcp", "install", "--agent", agent]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{text}: {err}");
        assert!(err.contains(says), "{text}: {err}");
        let name = link.file_name().unwrap().to_string_lossy().into_owned();
        assert!(err.contains(&name), "{err} does not name {name}");
        assert_eq!(read(&real), *text, "written");
        assert_eq!(
            std::fs::read_dir(real.parent().unwrap()).unwrap().count(),
            1
        );
    }

    // A huge file is not read whole, let alone rewritten.
    for (agent, _) in AGENTS {
        let env = Env::new();
        let path = env.home().join(user_config(agent));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(40 << 20).unwrap();
        let out = env.run(&["mcp", "install", "--agent", agent]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1));
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(err.contains(&name) && err.contains("by hand"), "{err}");
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 40 << 20);
    }
}

#[test]
fn doctor_sees_every_agents_mcp_config_and_nothing_is_written_unasked() {
    let env = Env::new();
    let doctor = env.json(&["doctor"]);
    for (agent, _) in AGENTS {
        let check = mcp_check(&doctor, agent);
        assert!(
            check["detail"].as_str().unwrap().contains("not registered"),
            "{check}"
        );
    }
    // Doctor and a dry run only read.
    for (agent, _) in AGENTS {
        env.ok(&["mcp", "install", "--agent", agent, "--dry-run"]);
    }
    let home: Vec<_> = std::fs::read_dir(env.home())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        !home.iter().any(|n| {
            let n = n.to_string_lossy();
            [
                ".claude.json",
                ".codex",
                ".copilot",
                ".qwen",
                ".factory",
                ".kimi",
                ".gemini",
                ".cursor",
            ]
            .contains(&n.as_ref())
        }),
        "{home:?}"
    );

    let (_, real) = linked_config(&env, "kimi", "{\"mcpServers\": {}}");
    env.ok(&["mcp", "install", "--agent", "kimi"]);
    let check = mcp_check(&env.json(&["doctor"]), "kimi");
    assert!(
        check["detail"].as_str().unwrap().contains(&cairn_path()),
        "{check}"
    );
    assert!(read(&real).contains(&cairn_path()));
}

/// Installed for an archive away from its default place, the server the agent starts (from the
/// entry alone: no `CAIRN_DATA_DIR` in the agent's environment) serves that archive, not an
/// empty default one. It did: the entry ran `cairn mcp`, and every answer came back empty.
#[test]
fn the_server_an_agent_starts_serves_the_archive_it_was_installed_for() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    env.ok(&["mcp", "install", "--agent", "claude"]);
    let config: Value = serde_json::from_str(&read(&env.home().join(".claude.json"))).unwrap();
    let entry = &config["mcpServers"]["cairn"];
    let args: Vec<&str> = entry["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let messages = [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "search", "arguments": {"query": "phoenix"}}}),
    ];
    let mut server = std::process::Command::new(entry["command"].as_str().unwrap())
        .args(&args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", env.home())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    for m in &messages {
        writeln!(stdin, "{m}").unwrap();
    }
    // Read until the search is answered, then close stdin (the server stops at its end); a
    // server that never answers fails the test rather than hanging it.
    let stdout = server.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(m) = serde_json::from_str::<Value>(&line)
                && m["id"] == 2
            {
                let _ = tx.send(m);
                return;
            }
        }
    });
    let answer = rx.recv_timeout(std::time::Duration::from_secs(120));
    drop(stdin);
    let _ = server.kill();
    let _ = server.wait();
    let answer = answer.expect("no answer to the search");
    let body: Value = answer["result"]["content"][0]["text"]
        .as_str()
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or_else(|| panic!("{answer}"));
    let hits = body["hits"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer}"));
    assert!(!hits.is_empty(), "{answer}");
    // Nothing was made at the default place.
    assert!(!env.home().join(".local/share/cairn").exists());

    // Doctor on another archive says the server is not its own, and how to point it there.
    let other = env.root.path().join("other archive");
    let doctor = env
        .command()
        .env("CAIRN_DATA_DIR", &other)
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let check = mcp_check(&report, "claude");
    assert_eq!(check["status"], "warn", "{check}");
    let detail = check["detail"].as_str().unwrap();
    assert!(
        detail.contains("not this one") && detail.contains("cairn mcp install --agent claude"),
        "{detail}"
    );
}
