//! `[embeddings] provider = "endpoint"`: an OpenAI-compatible `/embeddings` server as the
//! [`Embedder`].
//!
//! No network code lives here: requests go through the `llm` module's [`Client`], so the
//! endpoint gets the same transport policy as every other model call (plain HTTP only to a
//! loopback host unless `allow_http = true`; no credentials in the URL; redirects never
//! followed; no proxies; the API key only from the environment variable named by `api_key_env`;
//! replies capped in size), the same outbound guard (every text redacted, then re-scanned, and
//! refused on any remaining secret or absolute path) and the same retry ladder. What stays here
//! is the part that belongs to semantic search: empty texts are never sent, inputs go in
//! batches, replies are checked (dimension) and normalised.

use std::path::Path;

use super::embed::{Embedder, InputKind, normalize};
use crate::config::EmbeddingsConfig;
use crate::error::{Error, Result};
use crate::llm::{Client, LlmError, Outbound, ServerConfig};

/// Inputs per request.
const BATCH: usize = 64;

pub struct EndpointEmbedder {
    client: Client,
    /// The base URL for messages, redacted.
    shown: String,
    model: String,
    dimensions: Option<u32>,
    /// Outbound scope: no repository root, so every absolute path is removed.
    outbound: Outbound,
    dims: usize,
    fingerprint: String,
}

fn endpoint_err(endpoint: &str, message: impl Into<String>) -> Error {
    Error::Endpoint {
        endpoint: endpoint.to_owned(),
        message: message.into(),
    }
}

impl EndpointEmbedder {
    /// Check the config (`config_path` names the file in errors) and learn the vectors'
    /// dimension (from `dimensions`, else by embedding one fixed word).
    pub fn connect(config: &EmbeddingsConfig, config_path: &Path) -> Result<EndpointEmbedder> {
        let server = ServerConfig {
            endpoint: config.endpoint.clone().unwrap_or_default(),
            api_key_env: config.api_key_env.clone().unwrap_or_default(),
            timeout: None,
            allow_http: config.allow_http,
        }
        .resolve(config_path, "embeddings")?;
        let shown = server.endpoint.redacted();
        let model = config.model.as_deref().unwrap_or("").trim().to_owned();
        if model.is_empty() {
            return Err(Error::Config {
                path: config_path.to_owned(),
                message: "embeddings.model: is missing; name the server's embedding model".into(),
            });
        }
        let client = Client::new(&server).map_err(|e| endpoint_err(&shown, e.to_string()))?;
        let mut e = EndpointEmbedder {
            client,
            shown,
            model,
            dimensions: config.dimensions,
            outbound: Outbound::for_root(None),
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

    /// One `/embeddings` request: the vectors of `inputs`, in order.
    fn post(&self, inputs: &[String]) -> Result<Vec<Vec<f32>>> {
        self.client
            .embeddings_sized(&self.model, inputs, self.dimensions, &self.outbound)
            .map_err(|e: LlmError| endpoint_err(&self.shown, e.to_string()))
    }
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
        // Empty texts stay rows of zeros and are not sent.
        let todo: Vec<(usize, String)> = texts
            .iter()
            .enumerate()
            .filter(|(_, t)| !t.trim().is_empty())
            .map(|(i, t)| (i, (*t).to_owned()))
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
