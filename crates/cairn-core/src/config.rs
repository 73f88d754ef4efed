//! `config.toml` in the data dir. Every key is optional; a missing file is an empty config.
//! Errors name the file, the key and the line (toml's messages carry them), so a typo is
//! fixed in one look.
//!
//! ```toml
//! [sources.claude]
//! dirs = ["~/work/claude-projects"]   # replaces the env var / default dir
//! enabled = true
//!
//! [sources.codex]
//! enabled = false
//!
//! [embeddings]                         # semantic search (vector and hybrid modes)
//! provider = "local"                   # the built-in model (default), or "endpoint"
//! model_dir = "~/models/all-MiniLM-L6-v2"  # local: where the model is, if not in the usual places
//! threads = 2                          # local: CPU threads for inference (default: cores, at most 4)
//! endpoint = "http://127.0.0.1:8080/v1"    # endpoint: OpenAI-compatible base URL
//! model = "nomic-embed-text"           # endpoint: model name
//! api_key_env = "EMBEDDINGS_API_KEY"   # endpoint: env var holding the API key, if one is needed
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::agent::Agent;
use crate::error::{Error, Result};

mod agents;
mod comments;
mod extract;
mod hint;
mod server;
mod sources;
mod team;

pub use agents::write_agent_binary;
pub use extract::{
    ExtractConfig, ExtractSetup, GeneratorChoice, PromptsConfig, RequestConfig, SETUP_SERVER,
    Schedule, SetupChoice, write_extract_setup,
};
pub use server::ServerConfig;
pub use sources::write_source_dirs;
pub use team::{DEFAULT_PASSWORD_ENV, TeamConfig, write_team_setup};

pub const CONFIG_FILE: &str = "config.toml";

/// Set `key` of a table being edited in `config.toml` to `v`, in place: an entry already there
/// keeps its key, the comments before its line and the one after its value (`host = "x" # lab`);
/// a new one is added. What Cairn's own writers of the file set values with.
fn set_kept(table: &mut dyn toml_edit::TableLike, key: &str, v: impl Into<toml_edit::Value>) {
    let mut v = v.into();
    match table.get_mut(key) {
        Some(item) => {
            if let Some(old) = item.as_value() {
                *v.decor_mut() = old.decor().clone();
            }
            *item = toml_edit::Item::Value(v);
        }
        None => {
            table.insert(key, toml_edit::Item::Value(v));
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub sources: BTreeMap<String, SourceConfig>,
    #[serde(default, skip_serializing_if = "RecallConfig::is_empty")]
    pub recall: RecallConfig,
    /// Generated insights: the endpoint generator and the prompt budget.
    #[serde(default, skip_serializing_if = "InsightsConfig::is_empty")]
    pub insights: InsightsConfig,
    /// Local agent CLIs used as generators (`[agent.claude] binary = …`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub agent: BTreeMap<String, AgentCliConfig>,
    #[serde(default)]
    pub embeddings: EmbeddingsConfig,
    /// The team archive (PostgreSQL): where it is and where its password comes from.
    #[serde(default, skip_serializing_if = "TeamConfig::is_empty")]
    pub team: TeamConfig,
}

/// Which embedder semantic search uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EmbeddingsProvider {
    /// The built-in all-MiniLM-L6-v2, in-process; vectors refreshed on every write.
    #[default]
    Local,
    /// An OpenAI-compatible `/embeddings` endpoint; vectors refreshed only by
    /// `cairn embeddings build` (each build is a consent to send the text, redacted).
    Endpoint,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EmbeddingsConfig {
    #[serde(default)]
    pub provider: EmbeddingsProvider,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_dir: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Ask the endpoint for vectors of this many dimensions (models that support it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dimensions: Option<u32>,
    /// Allow plain HTTP to a host that is not loopback.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_http: bool,
}

impl EmbeddingsConfig {
    /// `model_dir` with `~` expanded.
    pub fn model_dir(&self) -> Option<PathBuf> {
        self.model_dir.as_deref().map(expand_home)
    }
}

/// `[recall.*]`: Recall's settings. Syntax is checked when the config loads; meaning (URLs,
/// durations, the transport policy) when a feature resolves its table, so a bad extraction
/// setting never stops the archive from opening.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RecallConfig {
    /// `[recall.extract]`: see [`crate::recall::extract::config`].
    #[serde(default, skip_serializing_if = "ExtractConfig::is_empty")]
    pub extract: ExtractConfig,
    /// Budget of the brief of trusted entries injected when an agent session starts, in
    /// estimated tokens (default [`crate::recall::memory::DEFAULT_MAX_TOKENS`]; 0: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_start_tokens: Option<u32>,
}

impl RecallConfig {
    pub fn is_empty(&self) -> bool {
        self == &RecallConfig::default()
    }
}

/// `[insights]`: an OpenAI-compatible endpoint generates reports when `endpoint` and `model`
/// are both set (setting one without the other is an error).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct InsightsConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The environment variable holding the API key (the key itself is never in the config).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Allow plain HTTP to a host that is not loopback.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_http: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    /// How much transcript material a prompt may carry (characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_prompt_chars: Option<usize>,
}

impl InsightsConfig {
    fn is_empty(&self) -> bool {
        self == &InsightsConfig::default()
    }
}

/// The endpoint `[insights]` names for reports, as `cairn insights setup` writes it: a base URL,
/// the model to ask, the *name* of the variable holding the key (empty for none), and whether
/// plain HTTP to it is allowed though it is not on this machine.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InsightsEndpoint {
    pub endpoint: String,
    pub model: String,
    pub api_key_env: String,
    /// `allow_http`: given with the endpoint it is meant for, so an endpoint written without
    /// it takes it out (sessions' text would otherwise go unencrypted to a server nobody
    /// allowed it for).
    #[serde(default)]
    pub allow_http: bool,
}

/// `text` (a `config.toml`) with `[insights]`' `endpoint`, `model`, `api_key_env` and
/// `allow_http` set as `endpoint` says, or taken out when it is `None` (reports then go to an
/// agent CLI). Comments, order and the table's other keys (`timeout_secs`, `max_prompt_chars`)
/// stay; a file without `[insights]` that is cleared is left as it was.
pub fn write_insights_endpoint(
    text: &str,
    endpoint: Option<&InsightsEndpoint>,
) -> std::result::Result<String, String> {
    use toml_edit::{DocumentMut, Item, Table};
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| e.to_string().replace('\n', " ").trim().to_owned())?;
    let Some(e) = endpoint else {
        if let Some(table) = doc.get_mut("insights").and_then(Item::as_table_like_mut) {
            for key in ["endpoint", "model", "api_key_env", "allow_http"] {
                table.remove(key);
            }
        }
        return Ok(doc.to_string());
    };
    let table = doc
        .as_table_mut()
        .entry("insights")
        .or_insert_with(|| Item::Table(Table::new()))
        .as_table_mut()
        .ok_or_else(|| {
            "`insights` is not a [table] (an inline table or a value): rewrite it as [insights] so Cairn can edit it".to_owned()
        })?;
    for (key, v) in [
        ("endpoint", &e.endpoint),
        ("model", &e.model),
        ("api_key_env", &e.api_key_env),
    ] {
        if v.trim().is_empty() {
            table.remove(key);
        } else {
            set_kept(table, key, v.trim());
        }
    }
    if e.allow_http {
        set_kept(table, "allow_http", true);
    } else {
        table.remove("allow_http");
    }
    comments::keep_closing_comments(&mut doc);
    Ok(doc.to_string())
}

/// `[agent.<name>]`: how to run a local agent CLI as a generator.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AgentCliConfig {
    /// The binary to run instead of the agent's name looked up on PATH.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    /// More environment variables to pass through (the agent gets a minimal environment).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// Gemini only: the sandbox to run in (passed as `GEMINI_SANDBOX`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// Gemini only: run without a sandbox.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_unsafe: bool,
}

/// The agent CLIs that can generate insights.
pub const GENERATOR_AGENTS: [&str; 4] = ["claude", "codex", "gemini", "copilot"];

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SourceConfig {
    #[serde(default)]
    pub dirs: Vec<String>,
    #[serde(default = "yes")]
    pub enabled: bool,
}

fn yes() -> bool {
    true
}

impl Config {
    /// Load `config.toml` from `data_dir`; a missing file is the default config.
    pub fn load(data_dir: &Path) -> Result<Config> {
        let path = data_dir.join(CONFIG_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
            Err(e) => return Err(Error::Read { path, source: e }),
        };
        Config::parse(&text, &path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<Config> {
        // Before toml's own errors, which quote the offending line: a password written into
        // [team] must not be repeated in a message.
        if team::holds_a_password(text) {
            return Err(Error::Config {
                path: path.to_owned(),
                message:
                    "[team] holds a password: Cairn never reads one from config.toml. Remove it, \
                          put the password in an environment variable and name that variable in \
                          `password_env`"
                        .into(),
            });
        }
        let config: Config = toml::from_str(text).map_err(|e| Error::Config {
            path: path.to_owned(),
            message: format!(
                "{}{}",
                e.to_string().replace('\n', " ").trim(),
                hint::unknown_key(e.message()).unwrap_or_default()
            ),
        })?;
        if config.embeddings.provider == EmbeddingsProvider::Endpoint
            && (config
                .embeddings
                .endpoint
                .as_deref()
                .is_none_or(|e| e.trim().is_empty())
                || config
                    .embeddings
                    .model
                    .as_deref()
                    .is_none_or(|m| m.trim().is_empty()))
        {
            return Err(Error::Config {
                path: path.to_owned(),
                message:
                    "[embeddings] provider = \"endpoint\" needs `endpoint` (base URL) and `model`"
                        .into(),
            });
        }
        for name in config.sources.keys() {
            if Agent::parse(name).is_none() {
                return Err(Error::Config {
                    path: path.to_owned(),
                    message: format!(
                        "unknown agent `{name}` in [sources.{name}]; known agents: claude, codex"
                    ),
                });
            }
        }
        for name in config.agent.keys() {
            if !GENERATOR_AGENTS.contains(&name.as_str()) {
                return Err(Error::Config {
                    path: path.to_owned(),
                    message: format!(
                        "unknown agent `{name}` in [agent.{name}]; known: {}",
                        GENERATOR_AGENTS.join(", ")
                    ),
                });
            }
        }
        let i = &config.insights;
        match (&i.endpoint, &i.model) {
            (Some(_), None) => {
                return Err(Error::Config {
                    path: path.to_owned(),
                    message: "[insights] sets `endpoint` but not `model`: set both, or neither to use a local agent CLI".to_owned(),
                });
            }
            (None, Some(_)) => {
                return Err(Error::Config {
                    path: path.to_owned(),
                    message: "[insights] sets `model` but not `endpoint`: set both, or neither to use a local agent CLI".to_owned(),
                });
            }
            _ => {}
        }
        Ok(config)
    }

    fn source(&self, agent: Agent) -> Option<&SourceConfig> {
        self.sources
            .iter()
            .find(|(k, _)| Agent::parse(k) == Some(agent))
            .map(|(_, v)| v)
    }

    /// Configured dirs for an agent, with `~` expanded.
    pub fn source_dirs(&self, agent: Agent) -> Vec<PathBuf> {
        self.source(agent)
            .map(|s| s.dirs.iter().map(|d| expand_home(d)).collect())
            .unwrap_or_default()
    }

    pub fn agent_enabled(&self, agent: Agent) -> bool {
        self.source(agent).is_none_or(|s| s.enabled)
    }
}

/// Check a source dir before it is saved. The desktop's Settings page (a webview) can send any
/// string, and whatever folder is configured gets its `*.jsonl` read into the archive, so only
/// an absolute path (or one starting with `~/`) without control characters, naming an existing
/// directory that is neither the file-system root nor inside the data dir, is accepted.
pub fn check_source_dir(dir: &str, data_dir: &Path) -> Result<()> {
    let bad = |why: &str| Err(Error::Invalid(format!("source dir {dir:?} {why}")));
    if dir.trim().is_empty() {
        return bad("is empty: name the folder holding the agent's transcripts");
    }
    if dir.chars().any(char::is_control) {
        return bad(
            "contains a control character (NUL, newline, …): type the folder's path without them",
        );
    }
    if dir.len() > 4096 {
        return bad("is longer than 4096 bytes");
    }
    let path = expand_home(dir);
    if !path.is_absolute() {
        return bad("is relative: give an absolute path (or one starting with ~/)");
    }
    match std::fs::metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return bad("does not exist: create it first or pick an existing folder");
        }
        Err(e) => return bad(&format!("cannot be read: {e}")),
        Ok(m) if !m.is_dir() => return bad("is not a directory: pick the folder, not a file"),
        Ok(_) => {}
    }
    let canonical = std::fs::canonicalize(&path).unwrap_or(path);
    if canonical.parent().is_none() {
        return bad("is the file-system root: pick the agent's transcript folder");
    }
    let data = std::fs::canonicalize(data_dir).unwrap_or_else(|_| data_dir.to_owned());
    if canonical.starts_with(&data) {
        return bad(&format!(
            "is inside the data dir {}: pick the agent's transcript folder",
            data.display()
        ));
    }
    Ok(())
}

fn expand_home(dir: &str) -> PathBuf {
    match (dir.strip_prefix("~/"), dirs::home_dir()) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(dir),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_dirs_must_be_existing_absolute_folders_outside_the_data_dir() {
        let root = tempfile::tempdir().unwrap();
        let data = root.path().join("data");
        let good = root.path().join("claude");
        std::fs::create_dir_all(data.join("retained")).unwrap();
        std::fs::create_dir_all(&good).unwrap();
        std::fs::write(root.path().join("file"), "").unwrap();
        let check = |dir: &str| check_source_dir(dir, &data).map_err(|e| e.to_string());
        assert_eq!(check(&good.display().to_string()), Ok(()));
        let cases = [
            ("", "is empty"),
            ("projects/claude", "is relative"),
            ("./claude", "is relative"),
            ("~", "is relative"),
            (
                &format!("{}/missing", root.path().display()),
                "does not exist",
            ),
            (
                &format!("{}/file", root.path().display()),
                "is not a directory",
            ),
            (&format!("{}\n/etc", good.display()), "control character"),
            (&format!("{}\0", good.display()), "control character"),
            ("/", "file-system root"),
            (&data.display().to_string(), "inside the data dir"),
            (
                &format!("{}/retained", data.display()),
                "inside the data dir",
            ),
            (
                &format!("{}/../data", good.display()),
                "inside the data dir",
            ),
        ];
        for (dir, why) in cases {
            let err = check(dir).expect_err(dir);
            assert!(err.contains(why), "{dir:?}: {err}");
            // The path is quoted with its control characters escaped.
            assert!(!err.contains('\n') && !err.contains('\0'), "{err:?}");
        }
    }

    #[test]
    fn the_facade_refuses_a_bad_source_dir_and_keeps_the_config() {
        let root = tempfile::tempdir().unwrap();
        let data = root.path().join("data");
        let good = root.path().join("claude");
        std::fs::create_dir_all(&good).unwrap();
        let cairn = crate::Cairn::open(&data).unwrap();
        cairn
            .set_source_dirs(Agent::Claude, vec![good.display().to_string()])
            .unwrap();
        let before = std::fs::read_to_string(data.join(CONFIG_FILE)).unwrap();
        for bad in ["relative/dir", "/no/such/dir/anywhere", "/tmp\nevil"] {
            let err = cairn
                .set_source_dirs(Agent::Claude, vec![good.display().to_string(), bad.into()])
                .unwrap_err();
            assert!(err.to_string().contains("source dir"), "{err}");
        }
        assert_eq!(
            std::fs::read_to_string(data.join(CONFIG_FILE)).unwrap(),
            before
        );
        // An empty list still restores the default.
        cairn.set_source_dirs(Agent::Claude, Vec::new()).unwrap();
    }

    /// Settings → Folders keeps what a person wrote in `config.toml` (it rewrote the file from
    /// its parsed form, comments gone).
    #[test]
    fn changing_an_agents_folders_keeps_the_files_comments() {
        let root = tempfile::tempdir().unwrap();
        let data = root.path().join("data");
        let dir = root.path().join("claude");
        std::fs::create_dir_all(&dir).unwrap();
        let cairn = crate::Cairn::open(&data).unwrap();
        let mine = "# my setup, see the README
[recall]
session_start_tokens = 200 # short briefs
";
        std::fs::write(data.join(CONFIG_FILE), mine).unwrap();
        cairn
            .set_source_dirs(Agent::Claude, vec![dir.display().to_string()])
            .unwrap();
        let text = std::fs::read_to_string(data.join(CONFIG_FILE)).unwrap();
        assert!(text.starts_with(mine), "{text}");
        assert_eq!(
            Config::load(&data).unwrap().source_dirs(Agent::Claude),
            [dir]
        );
        cairn.set_source_dirs(Agent::Claude, Vec::new()).unwrap();
        assert_eq!(
            std::fs::read_to_string(data.join(CONFIG_FILE)).unwrap(),
            mine
        );
    }

    /// The desktop's Settings and a CLI command write `config.toml` at the same time, each its
    /// own table: neither change is lost (each edit reads, changes and renames under
    /// `config.lock`; without it one writer's rename dropped what the other had just written).
    #[test]
    fn two_writers_of_the_config_never_lose_each_others_change() {
        let root = tempfile::tempdir().unwrap();
        let data = root.path().join("data");
        crate::Cairn::open(&data).unwrap();
        let agents = [Agent::Claude, Agent::Codex, Agent::Gemini, Agent::Kimi];
        let dirs: Vec<PathBuf> = agents
            .iter()
            .map(|a| {
                let d = root.path().join(a.as_str());
                std::fs::create_dir_all(&d).unwrap();
                d
            })
            .collect();
        std::thread::scope(|s| {
            for (agent, dir) in agents.iter().zip(&dirs) {
                let data = &data;
                s.spawn(move || {
                    let cairn = crate::Cairn::open(data).unwrap();
                    for round in 0..25 {
                        let dirs = if round % 2 == 0 {
                            vec![dir.display().to_string()]
                        } else {
                            Vec::new()
                        };
                        cairn.set_source_dirs(*agent, dirs).unwrap();
                    }
                    // The last word: this agent's folder set.
                    cairn
                        .set_source_dirs(*agent, vec![dir.display().to_string()])
                        .unwrap();
                });
            }
        });
        let config = Config::load(&data).unwrap();
        for (agent, dir) in agents.iter().zip(&dirs) {
            assert_eq!(
                config.source_dirs(*agent),
                std::slice::from_ref(dir),
                "{agent}"
            );
        }
    }

    #[test]
    fn parses_sources() {
        let c = Config::parse(
            "[sources.claude]\ndirs = [\"/x\"]\n[sources.codex]\nenabled = false\n",
            Path::new("config.toml"),
        )
        .unwrap();
        assert_eq!(c.source_dirs(Agent::Claude), vec![PathBuf::from("/x")]);
        assert!(c.agent_enabled(Agent::Claude));
        assert!(!c.agent_enabled(Agent::Codex));
    }

    #[test]
    fn insights_endpoint_and_model_come_together() {
        let err = Config::parse(
            "[insights]\nendpoint = \"http://127.0.0.1:8080/v1\"\n",
            Path::new("/d/config.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("/d/config.toml") && err.contains("not `model`"),
            "{err}"
        );
        let err = Config::parse("[insights]\nmodel = \"m\"\n", Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("not `endpoint`"), "{err}");
        let ok = Config::parse(
            "[insights]\nendpoint = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\n[agent.codex]\nbinary = \"/opt/codex\"\n",
            Path::new("c.toml"),
        )
        .unwrap();
        assert_eq!(ok.agent["codex"].binary.as_deref(), Some("/opt/codex"));
        let err = Config::parse("[agent.vim]\n", Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown agent `vim` in [agent.vim]"), "{err}");
    }

    #[test]
    fn parses_embeddings() {
        let c = Config::parse("", Path::new("c.toml")).unwrap();
        assert_eq!(c.embeddings.provider, EmbeddingsProvider::Local);
        let c = Config::parse(
            "[embeddings]\nprovider = \"endpoint\"\nendpoint = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n",
            Path::new("c.toml"),
        )
        .unwrap();
        assert_eq!(c.embeddings.provider, EmbeddingsProvider::Endpoint);
        let err = Config::parse(
            "[embeddings]\nprovider = \"endpoint\"\n",
            Path::new("/d/config.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("/d/config.toml") && err.contains("endpoint"),
            "{err}"
        );
        let err = Config::parse("[embeddings]\nprovider = \"cloud\"\n", Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("cloud") || err.contains("provider"), "{err}");
    }

    #[test]
    fn errors_name_the_key() {
        let err = Config::parse(
            "[sources.claude]\ndir = [\"/x\"]\n",
            Path::new("/d/config.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("/d/config.toml") && err.contains("dir"),
            "{err}"
        );
        let err = Config::parse("[sources.vim]\n", Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown agent `vim`"), "{err}");
        let err = Config::parse(
            "[recall.extract]\nmodle = \"m\"\n",
            Path::new("/d/config.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("/d/config.toml") && err.contains("modle"),
            "{err}"
        );
    }

    /// `timeout` is a server table's key and `timeout_secs` `[insights]`' (and an agent's): the
    /// file stays strict, and the message names the key that table takes.
    #[test]
    fn an_unknown_key_comes_with_the_key_it_likely_means() {
        let err = |text: &str| {
            Config::parse(text, Path::new("/d/config.toml"))
                .unwrap_err()
                .to_string()
        };
        let e = err(
            "[insights]\nendpoint = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\ntimeout = \"3s\"\n",
        );
        assert!(
            e.contains("/d/config.toml")
                && e.contains("unknown field `timeout`")
                && e.contains("did you mean `timeout_secs` (whole seconds"),
            "{e}"
        );
        let e = err(
            "[recall.extract.servers.local]\nendpoint = \"http://127.0.0.1:9/v1\"\ntimeout_secs = 3\n",
        );
        assert!(
            e.contains("did you mean `timeout` (a duration, e.g. timeout = \"10m\")"),
            "{e}"
        );
        let e = err("[agent.claude]\ntimeout = 30\n");
        assert!(e.contains("did you mean `timeout_secs`"), "{e}");
    }

    #[test]
    fn the_insights_endpoint_is_written_in_place_and_cleared() {
        let before = "# mine\n[insights]\n# slow box\nendpoint = \"http://127.0.0.1:9/v1\" # lab\nmodel = \"old\"\ntimeout_secs = 900\n";
        let e = InsightsEndpoint {
            endpoint: "https://api.example.com/v1".into(),
            model: "m2".into(),
            api_key_env: "EXAMPLE_KEY".into(),
            ..Default::default()
        };
        let after = write_insights_endpoint(before, Some(&e)).unwrap();
        for kept in ["# mine", "# slow box", "# lab", "timeout_secs = 900"] {
            assert!(after.contains(kept), "{kept} lost:\n{after}");
        }
        let c = Config::parse(&after, Path::new("c.toml")).unwrap();
        assert_eq!(
            (
                c.insights.endpoint.as_deref(),
                c.insights.model.as_deref(),
                c.insights.api_key_env.as_deref(),
                c.insights.timeout_secs
            ),
            (
                Some("https://api.example.com/v1"),
                Some("m2"),
                Some("EXAMPLE_KEY"),
                Some(900)
            )
        );
        let cleared = write_insights_endpoint(&after, None).unwrap();
        let c = Config::parse(&cleared, Path::new("c.toml")).unwrap();
        assert_eq!((c.insights.endpoint, c.insights.model), (None, None));
        assert_eq!(c.insights.timeout_secs, Some(900));
        assert!(cleared.contains("# mine"), "{cleared}");
        // Nothing to clear: the file stays byte for byte; an inline table is refused by name.
        assert_eq!(write_insights_endpoint("# x\n", None).unwrap(), "# x\n");
        let err = write_insights_endpoint("insights = { model = \"m\" }\n", Some(&e)).unwrap_err();
        assert!(err.contains("`insights` is not a [table]"), "{err}");
    }

    /// `allow_http` goes with the endpoint it was given for: written with it, taken out by an
    /// endpoint written without it and by a clear.
    #[test]
    fn allow_http_is_written_with_its_endpoint_and_dropped_by_the_next() {
        let far = InsightsEndpoint {
            endpoint: "http://192.0.2.7:8080/v1".into(),
            model: "m".into(),
            allow_http: true,
            ..Default::default()
        };
        let allowed =
            write_insights_endpoint("[insights]\ntimeout_secs = 60\n", Some(&far)).unwrap();
        let c = Config::parse(&allowed, Path::new("c.toml")).unwrap();
        assert!(c.insights.allow_http, "{allowed}");
        let next = InsightsEndpoint {
            endpoint: "https://api.example.com/v1".into(),
            allow_http: false,
            ..far.clone()
        };
        let dropped = write_insights_endpoint(&allowed, Some(&next)).unwrap();
        assert!(!dropped.contains("allow_http"), "{dropped}");
        let cleared = write_insights_endpoint(&allowed, None).unwrap();
        assert!(!cleared.contains("allow_http"), "{cleared}");
        assert!(cleared.contains("timeout_secs = 60"), "{cleared}");
    }

    /// `[insights]` added at the end of a file whose last table ends in a comment: the comment
    /// stays under that table, not under `[insights]`; one above a header stays above it.
    #[test]
    fn a_comment_closing_a_table_stays_there_when_insights_is_added() {
        let e = InsightsEndpoint {
            endpoint: "http://127.0.0.1:9/v1".into(),
            model: "m".into(),
            ..Default::default()
        };
        let before = "[recall]\nsession_start_tokens = 2000\n# recall: keep it short\n";
        assert_eq!(
            write_insights_endpoint(before, Some(&e)).unwrap(),
            "[recall]\nsession_start_tokens = 2000\n# recall: keep it short\n\n[insights]\nendpoint = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n"
        );
    }
}
