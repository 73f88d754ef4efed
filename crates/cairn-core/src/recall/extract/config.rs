//! `[recall.extract]` in `config.toml` (AgentsView's keys, plus `concurrency`), and its
//! validation into [`Settings`]. Every error names the config file and the key to fix.
//!
//! ```toml
//! [recall.extract]
//! enabled = true                 # opt-in: extraction sends (redacted) transcript text to the server
//! generator = "endpoint"         # or a local agent CLI: "claude", "codex", "gemini", "copilot"
//! schedule = "after_sync"        # desktop: "after_sync", "nightly" (around 03:00) or "manual"
//! input_price_per_mtok = 0.0     # a paid API's prices, for the preview's cost estimate
//! output_price_per_mtok = 0.0
//! model = "qwen3-8b"             # an agent CLI: optional, a label (its own default model answers)
//! deployment = ""                # identity label: same model name, different weights
//! server = "local"               # required when several servers are defined
//! max_window_chars = 50000       # action unit size (part of the fingerprint)
//! max_tokens = 0                 # 0: the profile's default (4096)
//! quiet_period = "30m"           # a session must be idle this long before it is extracted
//! backstop_interval = "1h"       # full pass at least this often when scheduled; negative disables
//! failure_backoff = "1h"         # a failed session (or endpoint) waits this long before a retry;
//!                                # a session failing again waits twice as long, at most a week
//! concurrency = 2                # sessions in flight at once
//!
//! [recall.extract.servers.local]
//! endpoint = "http://127.0.0.1:8080/v1"
//! api_key_env = ""               # name of the variable holding the key, never the key
//! timeout = "120s"
//! allow_http = false             # plain HTTP to a non-loopback host
//!
//! [recall.extract.prompts]
//! profile = ""                   # "" = by model name (qwen* → qwen, else base)
//! dir = ""                       # intent.txt / action.txt / generic.txt overrides
//!
//! [recall.extract.request]
//! temperature = 0.0
//! extra_body = {}                # merged into the request; may not set reserved keys
//! ```

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::prompt::{self, Identity, Prompts};
use crate::config::ExtractConfig;
use crate::error::{Error, Result};
use crate::llm::agent_cli::AgentKind;
use crate::llm::client::RESERVED_KEYS;
use crate::llm::{Server, parse_duration};

pub use crate::config::Schedule;

const KEY: &str = "recall.extract";

/// Where a person sets extraction up, in the words every message uses.
pub const SETUP_HOW: &str =
    "`cairn recall extract setup` (in the desktop app, Settings → Recall extraction)";

/// Validated extraction settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub enabled: bool,
    /// A local agent CLI answers instead of an endpoint.
    pub agent: Option<AgentKind>,
    pub schedule: Schedule,
    /// A paid API's prices per million (input, output) tokens.
    pub prices: Option<(f64, f64)>,
    /// Empty when no model is configured (then there is no generation to speak of).
    pub model: String,
    pub deployment: String,
    pub profile: &'static str,
    /// The selected server and its name; `None` when no server is configured.
    pub server: Option<(String, Server)>,
    pub max_window_chars: usize,
    pub max_tokens: u32,
    /// Milliseconds.
    pub quiet_period_ms: i64,
    /// Milliseconds; `None` = disabled.
    pub backstop_interval_ms: Option<i64>,
    pub failure_backoff_ms: i64,
    pub concurrency: usize,
    pub prompts: Prompts,
    pub temperature: f64,
    pub extra_body: serde_json::Map<String, Value>,
    /// The config file, for messages.
    pub config_path: PathBuf,
}

impl Settings {
    /// The generation identity; `None` without a model.
    pub fn identity(&self) -> Option<Identity> {
        (!self.model.is_empty()).then(|| Identity {
            model: self.model.clone(),
            deployment: self.deployment.clone(),
            max_window_chars: self.max_window_chars,
            prompts: self.prompts.clone(),
            temperature: self.temperature,
            max_tokens: self.max_tokens,
            extra_body: self.extra_body.clone(),
        })
    }

    pub fn fingerprint(&self) -> Option<String> {
        self.identity().map(|i| i.fingerprint())
    }

    /// A generator is chosen (a model, or an agent CLI), enabled or not.
    pub fn is_configured(&self) -> bool {
        !self.model.is_empty()
    }

    /// Ready to send: enabled, a model and a server (or an agent CLI).
    pub fn runnable(&self) -> Result<()> {
        let err = |m: String| Error::Config {
            path: self.config_path.clone(),
            message: m,
        };
        // Said without the file: before setup there is none, and the way in is setup, not an
        // edit (a pass sends redacted transcript text out, so it waits for someone to choose).
        if !self.enabled && !self.is_configured() {
            return Err(Error::Refused(format!(
                "Recall extraction is not set up: {SETUP_HOW} chooses who reads your sessions (an agent CLI or a model server), tests it and turns extraction on; a pass sends them redacted transcript text, so nothing runs until then"
            )));
        }
        if !self.enabled {
            return Err(Error::Refused(format!(
                "Recall extraction is off (set up with --off, or switched off since): {SETUP_HOW} turns it on again (on a terminal, Enter keeps the saved generator)"
            )));
        }
        match (&self.server, self.agent) {
            (_, Some(_)) | (Some(_), None) => Ok(()),
            (None, None) => Err(err(format!(
                "{KEY}.servers: no model server is defined; choose one with {SETUP_HOW}"
            ))),
        }
    }
}

impl ExtractConfig {
    /// Validate. `config_path` is named in every error.
    pub fn resolve(&self, config_path: &Path) -> Result<Settings> {
        let err = |key: &str, m: String| Error::Config {
            path: config_path.to_owned(),
            message: format!("{KEY}.{key}: {m}"),
        };
        let agent = match self.generator.trim() {
            "" | "endpoint" => None,
            name => Some(AgentKind::parse(name).ok_or_else(|| {
                err(
                    "generator",
                    format!(
                        "unknown generator {:?}; use endpoint, claude, codex, gemini or copilot",
                        crate::text::one_line(name, 40)
                    ),
                )
            })?),
        };
        let schedule = match self.schedule.trim() {
            "" => Schedule::default(),
            s => Schedule::parse(s).ok_or_else(|| {
                err(
                    "schedule",
                    format!(
                        "unknown schedule {:?}; use after_sync, nightly or manual",
                        crate::text::one_line(s, 40)
                    ),
                )
            })?,
        };
        let price = |key: &str, v: Option<f64>| -> Result<Option<f64>> {
            match v {
                Some(p) if !(p.is_finite() && p >= 0.0) => {
                    Err(err(key, format!("must be a price of 0 or more (is {p})")))
                }
                v => Ok(v),
            }
        };
        let prices = match (
            price("input_price_per_mtok", self.input_price_per_mtok)?,
            price("output_price_per_mtok", self.output_price_per_mtok)?,
        ) {
            (None, None) => None,
            (i, o) => Some((i.unwrap_or(0.0), o.unwrap_or(0.0))),
        };
        // An agent CLI answers with its own default model: the name is a label.
        let model = match (self.model.trim(), agent) {
            ("", Some(kind)) => kind.as_str().to_owned(),
            (m, _) => m.to_owned(),
        };
        if self.enabled && model.is_empty() {
            return Err(err(
                "model",
                "is required when extraction is enabled; name the model the server serves".into(),
            ));
        }
        let server = if self.servers.is_empty() {
            if !self.server.is_empty() {
                return Err(err(
                    "server",
                    format!(
                        "names {:?} but no [{KEY}.servers.{}] table exists",
                        self.server, self.server
                    ),
                ));
            }
            if self.enabled && agent.is_none() {
                return Err(err(
                    "servers",
                    format!("no model server is defined: choose one with {SETUP_HOW}"),
                ));
            }
            None
        } else {
            let name = if self.server.is_empty() {
                if self.servers.len() > 1 {
                    return Err(err(
                        "server",
                        format!(
                            "is required when several servers are defined; pick one of: {}",
                            self.servers.keys().cloned().collect::<Vec<_>>().join(", ")
                        ),
                    ));
                }
                self.servers.keys().next().cloned().unwrap_or_default()
            } else {
                self.server.clone()
            };
            let cfg = self.servers.get(&name).ok_or_else(|| {
                err(
                    "server",
                    format!(
                        "names {name:?}, which is not defined; defined: {}",
                        self.servers.keys().cloned().collect::<Vec<_>>().join(", ")
                    ),
                )
            })?;
            Some((
                name.clone(),
                cfg.resolve(config_path, &format!("{KEY}.servers.{name}"))?,
            ))
        };
        let max_window_chars = match self.max_window_chars {
            None => 50_000,
            Some(n) if n > 0 => n as usize,
            Some(n) => {
                return Err(err(
                    "max_window_chars",
                    format!("must be more than 0 (is {n})"),
                ));
            }
        };
        let profile = prompt::profile(&self.prompts.profile, &model).ok_or_else(|| {
            err(
                "prompts.profile",
                format!(
                    "unknown profile {:?}; known: {}",
                    self.prompts.profile,
                    prompt::PROFILES.join(", ")
                ),
            )
        })?;
        let max_tokens = match self.max_tokens {
            None | Some(0) => profile.max_tokens,
            Some(n) if n > 0 && n <= i64::from(u32::MAX) => n as u32,
            Some(n) => {
                return Err(err(
                    "max_tokens",
                    format!("must be 0 (the profile's default) or more (is {n})"),
                ));
            }
        };
        let dur = |key: &str, v: &Option<String>, default: i64| -> Result<i64> {
            match v {
                None => Ok(default),
                Some(t) => parse_duration(t).map_err(|m| err(key, m)),
            }
        };
        let quiet_period_ms = dur("quiet_period", &self.quiet_period, 30 * 60_000)?;
        if quiet_period_ms < 0 {
            return Err(err("quiet_period", "may not be negative".into()));
        }
        let backstop = dur("backstop_interval", &self.backstop_interval, 3_600_000)?;
        if backstop == 0 {
            return Err(err(
                "backstop_interval",
                "may not be 0; use a negative value such as \"-1h\" to disable the backstop".into(),
            ));
        }
        let failure_backoff_ms = dur("failure_backoff", &self.failure_backoff, 3_600_000)?;
        if failure_backoff_ms <= 0 {
            return Err(err("failure_backoff", "must be more than 0".into()));
        }
        let concurrency = match self.concurrency {
            None => 2,
            Some(n) if (1..=16).contains(&n) => n as usize,
            Some(n) => {
                return Err(err(
                    "concurrency",
                    format!("must be between 1 and 16 (is {n})"),
                ));
            }
        };
        let temperature = self.request.temperature.unwrap_or(profile.temperature);
        if !(0.0..=2.0).contains(&temperature) {
            return Err(err(
                "request.temperature",
                format!("must be between 0 and 2 (is {temperature})"),
            ));
        }
        let mut extra_body = profile.extra_body.clone();
        for (k, v) in self.request.extra_body.iter().flatten() {
            if RESERVED_KEYS.contains(&k.as_str()) {
                return Err(err(
                    "request.extra_body",
                    format!(
                        "may not set `{k}`; these are set by Cairn: {}",
                        RESERVED_KEYS.join(", ")
                    ),
                ));
            }
            extra_body.insert(k.clone(), v.clone());
        }
        let prompts = load_prompts(&self.prompts.dir, config_path)?;
        // The same model name through an agent CLI is another generation.
        let deployment = match (self.deployment.trim(), agent) {
            ("", Some(kind)) => format!("agent-cli:{}", kind.as_str()),
            (d, _) => d.to_owned(),
        };
        Ok(Settings {
            enabled: self.enabled,
            agent,
            schedule,
            prices,
            model,
            deployment,
            profile: profile.name,
            server,
            max_window_chars,
            max_tokens,
            quiet_period_ms,
            backstop_interval_ms: (backstop > 0).then_some(backstop),
            failure_backoff_ms,
            concurrency,
            prompts,
            temperature,
            extra_body,
            config_path: config_path.to_owned(),
        })
    }
}

/// Built-in prompts, overridden by `intent.txt` / `action.txt` in `dir`; `generic.txt` stands
/// in for either when its own file is absent. A relative dir is relative to the config file.
fn load_prompts(dir: &str, config_path: &Path) -> Result<Prompts> {
    let mut prompts = Prompts::default();
    let dir = dir.trim();
    if dir.is_empty() {
        return Ok(prompts);
    }
    let dir = match (dir.strip_prefix("~/"), dirs::home_dir()) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => {
            let p = PathBuf::from(dir);
            if p.is_absolute() {
                p
            } else {
                config_path.parent().unwrap_or(Path::new(".")).join(p)
            }
        }
    };
    if !dir.is_dir() {
        return Err(Error::Config {
            path: config_path.to_owned(),
            message: format!("{KEY}.prompts.dir: {} is not a directory", dir.display()),
        });
    }
    let read = |name: &str| -> Result<Option<String>> {
        let path = dir.join(name);
        match std::fs::read_to_string(&path) {
            Ok(t) if t.trim().is_empty() => Err(Error::Config {
                path: config_path.to_owned(),
                message: format!(
                    "{KEY}.prompts.dir: {} is empty; delete it to use the built-in prompt",
                    path.display()
                ),
            }),
            Ok(t) => Ok(Some(t.trim().to_owned())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::Read { path, source: e }),
        }
    };
    let generic = read("generic.txt")?;
    if let Some(t) = read("intent.txt")?.or_else(|| generic.clone()) {
        prompts.intent = t;
    }
    if let Some(t) = read("action.txt")?.or(generic) {
        prompts.action = t;
    }
    Ok(prompts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(toml_text: &str) -> Result<Settings> {
        let c: ExtractConfig = toml::from_str(toml_text).unwrap();
        c.resolve(Path::new("/data/config.toml"))
    }

    #[test]
    fn defaults_and_server_selection() {
        let s = parse("enabled = true\nmodel = \"qwen3\"\n[servers.a]\nendpoint = \"http://127.0.0.1:9/v1\"\n").unwrap();
        assert_eq!(s.max_window_chars, 50_000);
        assert_eq!(s.max_tokens, 4096);
        assert_eq!(s.quiet_period_ms, 1_800_000);
        assert_eq!(s.backstop_interval_ms, Some(3_600_000));
        assert_eq!(s.concurrency, 2);
        assert_eq!(s.profile, "qwen");
        assert_eq!(s.server.as_ref().unwrap().0, "a");
        assert!(s.runnable().is_ok());
        let off = parse("model = \"m\"").unwrap();
        assert!(off.server.is_none() && off.runnable().is_err());
        // Before setup (no file at all) and after `setup --off`, a pass that will not run
        // points at setup, not at a hand edit of a file that may not exist.
        let off = parse(
            "enabled = false\nmodel = \"m\"\n[servers.a]\nendpoint = \"http://127.0.0.1:9/v1\"\n",
        )
        .unwrap();
        for (settings, says) in [(parse("").unwrap(), "is not set up"), (off, "is off")] {
            let why = settings.runnable().unwrap_err().to_string();
            assert!(
                why.contains(says)
                    && why.contains("`cairn recall extract setup`")
                    && why.contains("Settings → Recall extraction")
                    && !why.contains("enabled = true")
                    && !why.contains("config.toml"),
                "{why}"
            );
        }
        assert_eq!(s.schedule, Schedule::AfterSync);
        assert!(s.agent.is_none() && s.prices.is_none());
        assert!(
            parse("backstop_interval = \"-1h\"")
                .unwrap()
                .backstop_interval_ms
                .is_none()
        );
    }

    #[test]
    fn errors_name_the_file_and_key() {
        for (text, key) in [
            (
                "enabled = true\n[servers.a]\nendpoint = \"http://127.0.0.1:9\"",
                "recall.extract.model",
            ),
            (
                "model = \"m\"\n[servers.a]\nendpoint = \"http://a:1\"\n[servers.b]\nendpoint = \"http://b:1\"",
                "recall.extract.server",
            ),
            (
                "model = \"m\"\n[servers.a]\nendpoint = \"http://example.com/v1\"",
                "recall.extract.servers.a.endpoint",
            ),
            ("max_window_chars = 0", "recall.extract.max_window_chars"),
            ("max_tokens = -1", "recall.extract.max_tokens"),
            ("quiet_period = \"soon\"", "recall.extract.quiet_period"),
            (
                "backstop_interval = \"0\"",
                "recall.extract.backstop_interval",
            ),
            ("failure_backoff = \"0\"", "recall.extract.failure_backoff"),
            ("concurrency = 0", "recall.extract.concurrency"),
            (
                "[prompts]\nprofile = \"gpt\"",
                "recall.extract.prompts.profile",
            ),
            (
                "[request]\nextra_body = { model = \"x\" }",
                "recall.extract.request.extra_body",
            ),
            (
                "[request]\ntemperature = 3.0",
                "recall.extract.request.temperature",
            ),
            (
                "[prompts]\ndir = \"/nonexistent-cairn-prompts\"",
                "recall.extract.prompts.dir",
            ),
            ("generator = \"vim\"", "recall.extract.generator"),
            ("schedule = \"hourly\"", "recall.extract.schedule"),
            (
                "input_price_per_mtok = -1.0",
                "recall.extract.input_price_per_mtok",
            ),
            (
                "output_price_per_mtok = nan",
                "recall.extract.output_price_per_mtok",
            ),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(
                e.contains("/data/config.toml") && e.contains(key),
                "{text}: {e}"
            );
        }
    }

    #[test]
    fn an_agent_cli_needs_no_server_and_is_its_own_generation() {
        let s = parse("enabled = true\ngenerator = \"codex\"\nschedule = \"nightly\"\ninput_price_per_mtok = 3.0").unwrap();
        assert_eq!(s.agent, Some(AgentKind::Codex));
        assert!(s.server.is_none() && s.runnable().is_ok());
        assert_eq!(
            (s.model.as_str(), s.deployment.as_str()),
            ("codex", "agent-cli:codex")
        );
        assert_eq!(s.schedule, Schedule::Nightly);
        assert_eq!(s.prices, Some((3.0, 0.0)));
        let endpoint = parse(
            "enabled = true\nmodel = \"codex\"\n[servers.a]\nendpoint = \"http://127.0.0.1:9/v1\"",
        )
        .unwrap();
        assert_ne!(s.fingerprint(), endpoint.fingerprint());
    }

    #[test]
    fn prompt_overrides_from_a_dir() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("generic.txt"), "GENERIC").unwrap();
        std::fs::write(dir.path().join("intent.txt"), "INTENT").unwrap();
        let p = load_prompts(&dir.path().to_string_lossy(), Path::new("/c.toml")).unwrap();
        assert_eq!(
            (p.intent.as_str(), p.action.as_str()),
            ("INTENT", "GENERIC")
        );
        std::fs::write(dir.path().join("action.txt"), "  \n").unwrap();
        assert!(load_prompts(&dir.path().to_string_lossy(), Path::new("/c.toml")).is_err());
    }
}
