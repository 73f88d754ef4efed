//! The OpenAI-compatible endpoint as a report [`crate::llm::Generator`]: `[insights]` `endpoint` + `model`,
//! through the [`crate::llm`] client (transport policy, no redirects or proxies, the outbound
//! guard on every request body).

use std::path::Path;
use std::time::Duration;

use crate::config::InsightsConfig;
use crate::error::{Error, Result};
use crate::llm::{EndpointGenerator, ServerConfig};

/// Reports are long answers; a slow local model gets this long unless `timeout_secs` says
/// otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// A key's value when it holds more than whitespace.
fn set(v: Option<&str>) -> Option<&str> {
    v.map(str::trim).filter(|s| !s.is_empty())
}

/// The generator `[insights]` configures: `None` when neither `endpoint` nor `model` is set; an
/// error naming `config_path` and the missing or bad key otherwise.
pub fn from_config(
    config: &InsightsConfig,
    config_path: &Path,
) -> Result<Option<EndpointGenerator>> {
    let bad = |message: String| Error::Config {
        path: config_path.to_owned(),
        message,
    };
    let (endpoint, model) = match (
        set(config.endpoint.as_deref()),
        set(config.model.as_deref()),
    ) {
        (None, None) => return Ok(None),
        (Some(_), None) => {
            return Err(bad(
                    "insights.model is missing: an [insights] endpoint needs the model to ask, e.g. model = \"qwen3-32b\"".into(),
                ));
        }
        (None, Some(_)) => {
            return Err(bad(
                    "insights.endpoint is missing: [insights] model needs the server's OpenAI-compatible base URL, e.g. endpoint = \"http://127.0.0.1:8080/v1\"".into(),
                ));
        }
        (Some(e), Some(m)) => (e, m),
    };
    let timeout = match config.timeout_secs {
        Some(0) => return Err(bad("insights.timeout_secs must be more than zero".into())),
        Some(s) if s > crate::llm::endpoint::MAX_TIMEOUT.as_secs() => {
            return Err(bad(format!(
                "insights.timeout_secs is {s}; at most {} (a day) is allowed",
                crate::llm::endpoint::MAX_TIMEOUT.as_secs()
            )));
        }
        Some(s) => Duration::from_secs(s),
        None => DEFAULT_TIMEOUT,
    };
    let server = ServerConfig {
        endpoint: endpoint.to_owned(),
        api_key_env: config.api_key_env.clone().unwrap_or_default(),
        timeout: None,
        allow_http: config.allow_http,
    }
    .resolve(config_path, "insights")?;
    let server = crate::llm::Server {
        timeout,
        timeout_setting: Some(
            "`timeout_secs` under [insights] (whole seconds, e.g. timeout_secs = 1200)".to_owned(),
        ),
        ..server
    };
    let generator =
        EndpointGenerator::new(&server, model).map_err(|e| bad(format!("[insights]: {e}")))?;
    Ok(Some(generator))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_past_a_day_is_refused_with_the_file_and_key() {
        let with = |secs: u64| {
            from_config(
                &InsightsConfig {
                    endpoint: Some("http://127.0.0.1:8080/v1".into()),
                    model: Some("m".into()),
                    timeout_secs: Some(secs),
                    ..Default::default()
                },
                Path::new("/d/config.toml"),
            )
        };
        assert!(with(86_400).is_ok());
        for long in [86_401, 9_223_372_036_854_775_807, u64::MAX] {
            let err = with(long).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(
                err.contains("/d/config.toml") && err.contains("insights.timeout_secs"),
                "{long}: {err}"
            );
        }
    }
}
