//! A model server (`[….servers.<name>]`) as written in `config.toml`: syntax only; `llm`
//! validates it into a `Server` (`ServerConfig::resolve`).

use serde::{Deserialize, Serialize};

/// `[….servers.<name>]` as written in `config.toml`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// OpenAI-compatible base URL; `/chat/completions`, `/embeddings` and `/models` are appended
    /// to its path (query parameters such as `api-version` are kept).
    #[serde(default)]
    pub endpoint: String,
    /// Name of the environment variable holding the API key (sent as `Authorization: Bearer`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_key_env: String,
    /// Per-request timeout, e.g. `"120s"`, `"2m"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    /// Allow plain HTTP to a host that is not loopback.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_http: bool,
}
