//! `[recall.extract]` as written in `config.toml`: syntax only. Its meaning (servers, durations,
//! prompts) is checked when extraction resolves it (`recall::extract::config`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ServerConfig;

/// When the desktop app runs extraction passes (`[recall.extract] schedule`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Schedule {
    /// After each sync (debounced), once the touched sessions are quiet, and a backstop.
    #[default]
    AfterSync,
    /// Once a night, around 03:00 local time.
    Nightly,
    /// Only when asked (the Run button, `cairn recall extract run`).
    Manual,
}

impl Schedule {
    pub const ALL: [Schedule; 3] = [Schedule::AfterSync, Schedule::Nightly, Schedule::Manual];

    pub fn as_str(self) -> &'static str {
        match self {
            Schedule::AfterSync => "after_sync",
            Schedule::Nightly => "nightly",
            Schedule::Manual => "manual",
        }
    }

    pub fn parse(s: &str) -> Option<Schedule> {
        Schedule::ALL.into_iter().find(|x| x.as_str() == s)
    }
}

/// What the Settings form edits in `[recall.extract]`: who answers, when, and at what price.
/// Written by [`write_extract_setup`]; everything else in the file is kept.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ExtractSetup {
    pub enabled: bool,
    /// `endpoint`, or an agent CLI: `claude`, `codex`, `gemini`, `copilot`.
    pub generator: String,
    /// The endpoint's OpenAI-compatible base URL (endpoint only).
    pub endpoint: String,
    /// The model to ask (an agent CLI: optional, its default model answers).
    pub model: String,
    /// The *name* of the variable holding the API key (endpoint only; empty for none).
    pub api_key_env: String,
    pub schedule: Schedule,
    pub input_price_per_mtok: Option<f64>,
    pub output_price_per_mtok: Option<f64>,
}

/// The server table the form writes when none exists.
pub const SETUP_SERVER: &str = "local";

impl ExtractConfig {
    /// The form's view of this table.
    pub fn setup(&self) -> ExtractSetup {
        let server = if self.server.is_empty() {
            self.servers.values().next()
        } else {
            self.servers.get(&self.server)
        };
        ExtractSetup {
            enabled: self.enabled,
            generator: if self.generator.trim().is_empty() {
                "endpoint".to_owned()
            } else {
                self.generator.trim().to_owned()
            },
            endpoint: server.map(|s| s.endpoint.clone()).unwrap_or_default(),
            model: self.model.clone(),
            api_key_env: server.map(|s| s.api_key_env.clone()).unwrap_or_default(),
            schedule: Schedule::parse(self.schedule.trim()).unwrap_or_default(),
            input_price_per_mtok: self.input_price_per_mtok,
            output_price_per_mtok: self.output_price_per_mtok,
        }
    }
}

/// `text` (a `config.toml`) with `[recall.extract]` set as `setup` says. Comments, order and
/// every other key stay as they were. Errors say which part of the file is in the way.
pub fn write_extract_setup(text: &str, setup: &ExtractSetup) -> Result<String, String> {
    use toml_edit::{DocumentMut, Item, Table};
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| e.to_string().replace('\n', " ").trim().to_owned())?;
    fn table<'a>(parent: &'a mut Table, key: &str, at: &str) -> Result<&'a mut Table, String> {
        let item = parent.entry(key).or_insert_with(|| {
            let mut t = Table::new();
            t.set_implicit(true);
            Item::Table(t)
        });
        item.as_table_mut().ok_or_else(|| {
            format!("`{at}` is not a [table] (an inline table or a value): rewrite it as [{at}] so Cairn can edit it")
        })
    }
    let extract = table(
        table(doc.as_table_mut(), "recall", "recall")?,
        "extract",
        "recall.extract",
    )?;
    extract.set_implicit(false);
    let set_str = |t: &mut Table, key: &str, v: &str| {
        if v.trim().is_empty() {
            t.remove(key);
        } else {
            super::set_kept(t, key, v.trim());
        }
    };
    super::set_kept(extract, "enabled", setup.enabled);
    let agent = setup.generator.trim() != "endpoint";
    set_str(extract, "generator", &setup.generator);
    set_str(extract, "model", &setup.model);
    super::set_kept(extract, "schedule", setup.schedule.as_str());
    for (key, v) in [
        ("input_price_per_mtok", setup.input_price_per_mtok),
        ("output_price_per_mtok", setup.output_price_per_mtok),
    ] {
        match v {
            Some(p) => super::set_kept(extract, key, p),
            None => {
                extract.remove(key);
            }
        }
    }
    if !agent {
        let chosen = extract
            .get("server")
            .and_then(Item::as_str)
            .map(str::to_owned);
        let servers = table(extract, "servers", "recall.extract.servers")?;
        let names: Vec<String> = servers.iter().map(|(k, _)| k.to_owned()).collect();
        let name = match (chosen, names.as_slice()) {
            (Some(c), _) if names.contains(&c) => c,
            (_, [only]) => only.clone(),
            _ => SETUP_SERVER.to_owned(),
        };
        let several = !names.is_empty() && !names.contains(&name) || names.len() > 1;
        let server = table(servers, &name, &format!("recall.extract.servers.{name}"))?;
        server.set_implicit(false);
        set_str(server, "endpoint", &setup.endpoint);
        set_str(server, "api_key_env", &setup.api_key_env);
        if several {
            super::set_kept(extract, "server", name);
        }
    }
    Ok(doc.to_string())
}

#[cfg(test)]
mod edit_tests {
    use super::*;

    const BEFORE: &str = "# my settings\n[sources.claude]\ndirs = [\"/x\"]  # where I keep them\n\n[recall.extract]\n# the model I trust\nmodel = \"old\"\nconcurrency = 3\n\n[recall.extract.servers.box]\nendpoint = \"http://127.0.0.1:9/v1\"\ntimeout = \"90s\" # slow box\n";

    fn setup() -> ExtractSetup {
        ExtractSetup {
            enabled: true,
            generator: "endpoint".into(),
            endpoint: "http://127.0.0.1:11434/v1".into(),
            model: "qwen3:8b".into(),
            api_key_env: String::new(),
            schedule: Schedule::Nightly,
            input_price_per_mtok: None,
            output_price_per_mtok: None,
        }
    }

    #[test]
    fn keeps_comments_and_other_keys() {
        let after = write_extract_setup(BEFORE, &setup()).unwrap();
        for kept in [
            "# my settings",
            "# where I keep them",
            "# the model I trust",
            "concurrency = 3",
            "timeout = \"90s\" # slow box",
        ] {
            assert!(after.contains(kept), "{kept} lost:\n{after}");
        }
        let c: crate::config::Config = toml::from_str(&after).unwrap();
        let x = &c.recall.extract;
        assert_eq!(
            (x.model.as_str(), x.enabled, x.schedule.as_str()),
            ("qwen3:8b", true, "nightly")
        );
        // The one existing server is the one edited.
        assert_eq!(x.servers["box"].endpoint, "http://127.0.0.1:11434/v1");
        assert_eq!(x.servers.len(), 1);
        assert_eq!(x.setup(), setup());
    }

    #[test]
    fn an_empty_file_gets_a_whole_table_and_an_agent_keeps_the_servers() {
        let after = write_extract_setup("", &setup()).unwrap();
        let c: crate::config::Config = toml::from_str(&after).unwrap();
        assert_eq!(
            c.recall.extract.servers[SETUP_SERVER].endpoint,
            "http://127.0.0.1:11434/v1"
        );
        let agent = ExtractSetup {
            generator: "codex".into(),
            model: String::new(),
            ..setup()
        };
        let again = write_extract_setup(BEFORE, &agent).unwrap();
        let c: crate::config::Config = toml::from_str(&again).unwrap();
        assert_eq!(c.recall.extract.generator, "codex");
        assert!(c.recall.extract.model.is_empty());
        assert_eq!(
            c.recall.extract.servers["box"].endpoint,
            "http://127.0.0.1:9/v1"
        );
    }

    #[test]
    fn an_inline_table_or_bad_toml_is_refused_with_the_place() {
        let err = write_extract_setup("recall = { extract = { model = \"m\" } }\n", &setup())
            .unwrap_err();
        assert!(err.contains("`recall` is not a [table]"), "{err}");
        assert!(write_extract_setup("[recall\n", &setup()).is_err());
    }
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExtractConfig {
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub enabled: bool,
    /// Who answers: `endpoint` (the default: `servers`) or a local agent CLI (`claude`,
    /// `codex`, `gemini`, `copilot`, run as `[agent.<name>]` says).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub generator: String,
    /// When passes run in the desktop app: `after_sync` (the default), `nightly` or `manual`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub schedule: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub deployment: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub server: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub servers: BTreeMap<String, ServerConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_window_chars: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiet_period: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backstop_interval: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_backoff: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<i64>,
    /// A paid API's price per million input tokens (for the preview's cost estimate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_price_per_mtok: Option<f64>,
    /// A paid API's price per million output tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_price_per_mtok: Option<f64>,
    #[serde(default, skip_serializing_if = "PromptsConfig::is_empty")]
    pub prompts: PromptsConfig,
    #[serde(default, skip_serializing_if = "RequestConfig::is_empty")]
    pub request: RequestConfig,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PromptsConfig {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub profile: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub dir: String,
}

impl PromptsConfig {
    pub(crate) fn is_empty(&self) -> bool {
        self == &PromptsConfig::default()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RequestConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_body: Option<serde_json::Map<String, Value>>,
}

impl RequestConfig {
    pub(crate) fn is_empty(&self) -> bool {
        self == &RequestConfig::default()
    }
}

impl ExtractConfig {
    pub fn is_empty(&self) -> bool {
        self == &ExtractConfig::default()
    }
}
