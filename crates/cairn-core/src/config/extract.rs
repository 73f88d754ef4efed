//! `[recall.extract]` as written in `config.toml`: syntax only. Its meaning (servers, durations,
//! prompts) is checked when extraction resolves it (`recall::extract::config`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ServerConfig;

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
