//! `[embeddings] provider = "endpoint"`: an OpenAI-compatible `/embeddings` server as the
//! [`Embedder`].
//!
//! Deliberately minimal and self-contained (this one file): the `llm` module (branch `extract`)
//! owns Cairn's model-server client; when it lands, [`EndpointEmbedder::post`] becomes a call to
//! `llm::Client::embeddings` and the transport code below goes away. What stays is the part
//! that belongs to semantic search: every text passes the outbound redactor before it leaves,
//! empty texts are never sent, replies are checked (count, dimension) and normalised.
//!
//! Transport rules (the same as the `llm` client's): plain HTTP only to a loopback host unless
//! `allow_http = true`; no credentials in the URL; redirects never followed; no proxies; the
//! API key only from the environment variable named by `api_key_env`; replies capped in size.

use std::time::Duration;

use serde_json::{Value, json};

use super::embed::{Embedder, InputKind, normalize};
use crate::archive::redact::Redactor;
use crate::config::EmbeddingsConfig;
use crate::error::{Error, Result};

/// Inputs per request.
const BATCH: usize = 64;
/// A reply larger than this is refused (64 inputs × 4096 dims of JSON floats fit easily).
const MAX_REPLY_BYTES: u64 = 64 << 20;
const TIMEOUT: Duration = Duration::from_secs(120);

pub struct EndpointEmbedder {
    /// `<base>/embeddings`.
    url: String,
    /// The base URL for messages: scheme, host, port and path only.
    shown: String,
    model: String,
    dimensions: Option<u32>,
    api_key: Option<String>,
    agent: ureq::Agent,
    dims: usize,
    fingerprint: String,
}

/// Check a base URL against the transport rules; returns it without a trailing slash.
pub fn check_url(endpoint: &str, allow_http: bool) -> std::result::Result<String, String> {
    let base = endpoint.trim().trim_end_matches('/');
    let (scheme, rest) = base
        .split_once("://")
        .ok_or_else(|| format!("`{base}` is not an http:// or https:// URL"))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') {
        return Err(
            "credentials do not belong in the URL; name an environment variable in \
                    `api_key_env`"
                .into(),
        );
    }
    if rest.contains(['?', '#']) {
        return Err("the endpoint URL must not carry a query or fragment".into());
    }
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        authority.rsplit_once(':').map_or(authority, |(h, _)| h)
    };
    if host.is_empty() {
        return Err(format!("`{base}` has no host"));
    }
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    match scheme.to_ascii_lowercase().as_str() {
        "https" => Ok(base.to_owned()),
        "http" if loopback || allow_http => Ok(base.to_owned()),
        "http" => Err(format!(
            "plain HTTP to `{host}` would send text unencrypted; use https://, a loopback \
             address, or set `allow_http = true`"
        )),
        other => Err(format!("unsupported scheme `{other}`; use https://")),
    }
}

fn endpoint_err(endpoint: &str, message: impl Into<String>) -> Error {
    Error::Endpoint {
        endpoint: endpoint.to_owned(),
        message: message.into(),
    }
}

/// Printable, bounded, without control characters (server texts end up in terminals).
fn sanitize(s: &str, max: usize) -> String {
    s.chars()
        .filter(|c| !c.is_control())
        .take(max)
        .collect::<String>()
}

impl EndpointEmbedder {
    /// Check the config and learn the vectors' dimension (from `dimensions`, else by embedding
    /// one fixed word).
    pub fn connect(config: &EmbeddingsConfig) -> Result<EndpointEmbedder> {
        let raw = config.endpoint.as_deref().unwrap_or("").trim();
        let shown = check_url(raw, config.allow_http)
            .map_err(|m| endpoint_err(raw.split('?').next().unwrap_or(""), m))?;
        let model = config.model.as_deref().unwrap_or("").trim().to_owned();
        if model.is_empty() {
            return Err(endpoint_err(&shown, "[embeddings] needs `model`"));
        }
        let api_key = match config.api_key_env.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(var) => Some(std::env::var(var).map_err(|_| {
                endpoint_err(
                    &shown,
                    format!("the API key variable `{var}` (from `api_key_env`) is not set"),
                )
            })?),
        };
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .proxy(None)
            .timeout_global(Some(TIMEOUT))
            .user_agent(concat!("cairn/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        let mut e = EndpointEmbedder {
            url: format!("{shown}/embeddings"),
            shown,
            model,
            dimensions: config.dimensions,
            api_key,
            agent,
            dims: config.dimensions.map_or(0, |d| d as usize),
            fingerprint: super::endpoint_fingerprint(config),
        };
        if e.dims == 0 {
            let probe = e.post(&["dimension".to_owned()])?;
            e.dims = probe.first().map_or(0, Vec::len);
            if e.dims == 0 {
                return Err(endpoint_err(
                    &e.shown,
                    "the server returned an empty vector",
                ));
            }
        }
        Ok(e)
    }

    /// One `/embeddings` request: the vectors of `inputs`, in order. The swap point for
    /// `llm::Client::embeddings`.
    fn post(&self, inputs: &[String]) -> Result<Vec<Vec<f32>>> {
        let mut body = json!({"model": self.model, "input": inputs, "encoding_format": "float"});
        if let Some(d) = self.dimensions {
            body["dimensions"] = json!(d);
        }
        let bytes =
            serde_json::to_vec(&body).map_err(|e| endpoint_err(&self.shown, e.to_string()))?;
        let mut req = self
            .agent
            .post(&self.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json");
        if let Some(k) = &self.api_key {
            req = req.header("Authorization", format!("Bearer {k}"));
        }
        let mut resp = req.send(&bytes[..]).map_err(|e| {
            endpoint_err(
                &self.shown,
                format!("cannot reach the server: {}", sanitize(&e.to_string(), 200)),
            )
        })?;
        let status = resp.status().as_u16();
        if (300..400).contains(&status) {
            return Err(endpoint_err(
                &self.shown,
                format!(
                    "answered with a redirect (HTTP {status}), which Cairn never follows; configure the final URL"
                ),
            ));
        }
        let reply = resp
            .body_mut()
            .with_config()
            .limit(MAX_REPLY_BYTES)
            .read_to_vec()
            .map_err(|e| {
                endpoint_err(
                    &self.shown,
                    format!("reading the reply: {}", sanitize(&e.to_string(), 200)),
                )
            })?;
        if !(200..300).contains(&status) {
            return Err(endpoint_err(
                &self.shown,
                format!(
                    "HTTP {status}: {}; check the endpoint, the model name and the API key variable",
                    sanitize(&String::from_utf8_lossy(&reply), 300)
                ),
            ));
        }
        let v: Value = serde_json::from_slice(&reply)
            .map_err(|e| endpoint_err(&self.shown, format!("the reply is not JSON: {e}")))?;
        parse(&v, inputs.len()).map_err(|m| endpoint_err(&self.shown, m))
    }
}

/// `{"data": [{"index": i, "embedding": [...]}, ...]}` → vectors in input order.
fn parse(v: &Value, n: usize) -> std::result::Result<Vec<Vec<f32>>, String> {
    let data = v
        .get("data")
        .and_then(Value::as_array)
        .ok_or("the reply has no `data` array")?;
    if data.len() != n {
        return Err(format!("asked for {n} vectors, got {}", data.len()));
    }
    let mut out: Vec<Option<Vec<f32>>> = vec![None; n];
    for (pos, item) in data.iter().enumerate() {
        let index = item
            .get("index")
            .and_then(Value::as_u64)
            .map_or(pos, |i| i as usize);
        let emb = item
            .get("embedding")
            .and_then(Value::as_array)
            .ok_or("an item has no `embedding` array (is encoding_format float supported?)")?;
        let vec: Vec<f32> = emb
            .iter()
            .map(|x| {
                x.as_f64()
                    .map(|f| f as f32)
                    .ok_or("a non-number in an embedding")
            })
            .collect::<std::result::Result<_, _>>()?;
        let slot = out
            .get_mut(index)
            .ok_or("an item's index is out of range")?;
        if slot.replace(vec).is_some() {
            return Err(format!("index {index} appears twice"));
        }
    }
    out.into_iter()
        .map(|v| v.ok_or_else(|| "an index is missing".to_owned()))
        .collect()
}

impl Embedder for EndpointEmbedder {
    fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    fn dims(&self) -> usize {
        self.dims
    }

    fn embed(&self, texts: &[&str], _kind: InputKind) -> Result<Vec<f32>> {
        let mut out = vec![0f32; texts.len() * self.dims];
        let home = std::env::var("HOME").ok();
        let redactor = Redactor::global();
        // Empty texts stay rows of zeros and are not sent.
        let todo: Vec<(usize, String)> = texts
            .iter()
            .enumerate()
            .filter(|(_, t)| !t.trim().is_empty())
            .map(|(i, t)| {
                let mut findings = Vec::new();
                (
                    i,
                    redactor.outbound_text(t, None, home.as_deref(), &mut findings),
                )
            })
            .collect();
        for chunk in todo.chunks(BATCH) {
            let inputs: Vec<String> = chunk.iter().map(|(_, t)| t.clone()).collect();
            let vectors = self.post(&inputs)?;
            for ((i, _), mut v) in chunk.iter().zip(vectors) {
                if v.len() != self.dims {
                    return Err(endpoint_err(
                        &self.shown,
                        format!(
                            "returned a vector of {} dimensions, expected {}; vectors of another \
                             size need a rebuild (`cairn embeddings build --force`)",
                            v.len(),
                            self.dims
                        ),
                    ));
                }
                normalize(&mut v);
                out[i * self.dims..(i + 1) * self.dims].copy_from_slice(&v);
            }
        }
        Ok(out)
    }

    fn refresh_on_write(&self) -> bool {
        false
    }

    fn describe(&self) -> String {
        format!(
            "endpoint {} model {} ({} dims)",
            self.shown, self.model, self.dims
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transport_rules() {
        assert_eq!(
            check_url("http://127.0.0.1:8080/v1/", false).unwrap(),
            "http://127.0.0.1:8080/v1"
        );
        assert!(check_url("http://localhost/v1", false).is_ok());
        assert!(check_url("http://[::1]:9/v1", false).is_ok());
        assert!(check_url("https://api.example.com/v1", false).is_ok());
        let err = check_url("http://10.0.0.5:8080/v1", false).unwrap_err();
        assert!(err.contains("allow_http"), "{err}");
        assert!(check_url("http://10.0.0.5:8080/v1", true).is_ok());
        assert!(
            check_url("https://user:pw@api.example.com/v1", false)
                .unwrap_err()
                .contains("api_key_env")
        );
        assert!(check_url("https://api.example.com/v1?key=x", false).is_err());
        assert!(check_url("ftp://x/v1", false).is_err());
        assert!(check_url("api.example.com", false).is_err());
    }

    #[test]
    fn parses_replies_in_index_order_and_rejects_bad_ones() {
        let v = json!({"data": [
            {"index": 1, "embedding": [0.0, 1.0]},
            {"index": 0, "embedding": [1.0, 0.0]}
        ]});
        assert_eq!(parse(&v, 2).unwrap(), vec![vec![1.0, 0.0], vec![0.0, 1.0]]);
        assert!(parse(&v, 3).unwrap_err().contains("asked for 3"));
        let dup =
            json!({"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]});
        assert!(parse(&dup, 2).unwrap_err().contains("twice"));
        assert!(parse(&json!({"error": "x"}), 1).is_err());
        let b64 = json!({"data": [{"index": 0, "embedding": "AAAA"}]});
        assert!(parse(&b64, 1).unwrap_err().contains("encoding_format"));
    }
}
