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
    /// Plain HTTP to a server that is not on this machine (its table's `allow_http`):
    /// transcript text then crosses the network unencrypted, so it is off until a person turns
    /// it on for this server, and a new generator starts without it. Left out, it is off.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "specta", specta(optional))]
    pub allow_http: bool,
}

/// Which generator answers and how it is reached: the part of a setup that choosing a
/// generator sets whole. A new generator starts blank, so nothing the one before it needed (its
/// server, its model, the variable holding its key, plain HTTP allowed to it) is carried to it
/// unasked.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct GeneratorChoice {
    /// `endpoint`, or an agent CLI's name.
    pub generator: String,
    pub endpoint: String,
    pub model: String,
    pub api_key_env: String,
    /// Never by detection: a person allows plain HTTP to a server by name.
    #[serde(default)]
    pub allow_http: bool,
}

impl GeneratorChoice {
    /// An agent CLI (`claude`, `codex`, …), its default model answering.
    pub fn agent(name: &str) -> GeneratorChoice {
        GeneratorChoice {
            generator: name.to_owned(),
            ..GeneratorChoice::default()
        }
    }

    /// The OpenAI-compatible server at `url`, with no model and no key variable yet.
    pub fn endpoint(url: &str) -> GeneratorChoice {
        GeneratorChoice {
            generator: "endpoint".to_owned(),
            endpoint: url.to_owned(),
            ..GeneratorChoice::default()
        }
    }
}

/// What a person chose for `[recall.extract]` (`cairn recall extract setup`'s flags, a pick in
/// the desktop's list): each part given replaces what the setup held, each left `None` keeps
/// it. The generator is applied first, so a model or key variable named with it is kept.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SetupChoice {
    pub generator: Option<GeneratorChoice>,
    pub model: Option<String>,
    pub api_key_env: Option<String>,
    pub schedule: Option<Schedule>,
    pub input_price_per_mtok: Option<f64>,
    pub output_price_per_mtok: Option<f64>,
    pub enabled: Option<bool>,
}

impl ExtractSetup {
    /// This setup with `choice` applied: the one rule both front doors follow.
    pub fn with_choice(&self, choice: &SetupChoice) -> ExtractSetup {
        let mut setup = match &choice.generator {
            Some(g) => ExtractSetup {
                generator: g.generator.clone(),
                endpoint: g.endpoint.clone(),
                model: g.model.clone(),
                api_key_env: g.api_key_env.clone(),
                allow_http: g.allow_http,
                ..self.clone()
            },
            None => self.clone(),
        };
        if let Some(m) = &choice.model {
            setup.model.clone_from(m);
        }
        if let Some(v) = &choice.api_key_env {
            setup.api_key_env.clone_from(v);
        }
        if let Some(s) = choice.schedule {
            setup.schedule = s;
        }
        if let Some(p) = choice.input_price_per_mtok {
            setup.input_price_per_mtok = Some(p);
        }
        if let Some(p) = choice.output_price_per_mtok {
            setup.output_price_per_mtok = Some(p);
        }
        if let Some(on) = choice.enabled {
            setup.enabled = on;
        }
        setup
    }

    /// This setup with the generator `g` chosen, the schedule, prices and switch kept.
    pub fn with_generator(&self, g: &GeneratorChoice) -> ExtractSetup {
        self.with_choice(&SetupChoice {
            generator: Some(g.clone()),
            ..SetupChoice::default()
        })
    }
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
            allow_http: server.is_some_and(|s| s.allow_http),
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
        if setup.allow_http {
            super::set_kept(server, "allow_http", true);
        } else {
            server.remove("allow_http");
        }
        if several {
            super::set_kept(extract, "server", name);
        }
    }
    super::comments::keep_closing_comments(&mut doc);
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
            allow_http: false,
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

    /// `[recall.extract]` added under a `[recall]` whose last line is a comment: the comment
    /// stays at the end of `[recall]` (toml_edit would write it under the new header), at the
    /// end of the file and before the next table alike; the comment right above the next
    /// table's header stays there.
    #[test]
    fn a_comment_closing_recall_stays_under_recall() {
        let after = write_extract_setup(
            "[recall]\nsession_start_tokens = 2000\n# keep it short\n",
            &setup(),
        )
        .unwrap();
        assert!(
            after.starts_with(
                "[recall]\nsession_start_tokens = 2000\n# keep it short\n\n[recall.extract]\n"
            ),
            "{after}"
        );
        let before = "[recall]\nsession_start_tokens = 2000\n# keep it short\n\n# reports\n[insights]\nmodel = \"x\"\n";
        let after = write_extract_setup(before, &setup()).unwrap();
        assert!(
            after.starts_with(
                "[recall]\nsession_start_tokens = 2000\n# keep it short\n\n[recall.extract]\n"
            ),
            "{after}"
        );
        assert!(
            after.ends_with("\n\n# reports\n[insights]\nmodel = \"x\"\n"),
            "{after}"
        );
        let c: crate::config::Config = toml::from_str(&after).unwrap();
        assert_eq!(c.recall.extract.setup(), setup());
    }

    /// A new generator starts blank: a server's key variable and model are not carried to an
    /// agent or to another server; a model or key variable chosen with it, and every other
    /// part given, replace what the setup held; what is not given stays.
    #[test]
    fn a_choice_replaces_what_it_names_and_a_new_generator_starts_blank() {
        let saved = ExtractSetup {
            api_key_env: "BOX_KEY".into(),
            input_price_per_mtok: Some(1.5),
            allow_http: true,
            ..setup()
        };
        let agent = saved.with_generator(&GeneratorChoice::agent("codex"));
        assert_eq!(
            (
                agent.generator.as_str(),
                agent.endpoint.as_str(),
                agent.model.as_str(),
                agent.api_key_env.as_str()
            ),
            ("codex", "", "", "")
        );
        assert_eq!(
            (agent.schedule, agent.input_price_per_mtok, agent.enabled),
            (Schedule::Nightly, Some(1.5), true)
        );
        let other = saved.with_choice(&SetupChoice {
            generator: Some(GeneratorChoice::endpoint("http://127.0.0.1:8080/v1")),
            model: Some("llama3".into()),
            enabled: Some(false),
            ..SetupChoice::default()
        });
        assert_eq!(other.endpoint, "http://127.0.0.1:8080/v1");
        assert_eq!(other.model, "llama3");
        assert!(
            other.api_key_env.is_empty() && !other.allow_http,
            "{other:?}"
        );
        assert!(!other.enabled);
        // No generator given: the saved one stays, what is named changes.
        let priced = saved.with_choice(&SetupChoice {
            output_price_per_mtok: Some(4.0),
            schedule: Some(Schedule::Manual),
            ..SetupChoice::default()
        });
        assert_eq!(
            priced,
            ExtractSetup {
                output_price_per_mtok: Some(4.0),
                schedule: Schedule::Manual,
                ..saved
            }
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
