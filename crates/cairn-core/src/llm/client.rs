//! The OpenAI-compatible client: `/chat/completions`, `/embeddings`, `/models`.
//!
//! Blocking (ureq over rustls), one request at a time per call; share one [`Client`] across
//! threads. Redirects are never followed and proxies from the environment are ignored: a
//! redirect or a proxy would replay transcript text to a host nobody configured. Every request
//! body's text passes the [`Outbound`] guard, and the serialised body is scanned once more for
//! secrets before it is sent.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::outbound::Outbound;
use super::{Endpoint, LlmError, Server};
use crate::archive::redact::Redactor;

/// How transient failures are retried (reference §5.7): up to `max_attempts` tries, waiting
/// `base · 2^(n-1)` (or the server's `Retry-After`), never more than `cap`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub max_attempts: u32,
    pub base: Duration,
    pub cap: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 3,
            base: Duration::from_millis(500),
            cap: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The wait before attempt `attempt + 1`, given the server's `Retry-After` header (seconds or
    /// an HTTP date) if it sent one.
    pub fn delay(&self, attempt: u32, retry_after: Option<&str>, now: jiff::Timestamp) -> Duration {
        let server = retry_after.and_then(|v| {
            let v = v.trim();
            if let Ok(secs) = v.parse::<u64>() {
                return Some(Duration::from_secs(secs));
            }
            let when = jiff::fmt::rfc2822::parse(v).ok()?.timestamp();
            let ms = when.as_millisecond() - now.as_millisecond();
            Some(Duration::from_millis(ms.max(0) as u64))
        });
        let exp = self
            .base
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
        server.unwrap_or(exp).min(self.cap)
    }
}

/// How long a connection to a server may take to open, apart from the request's own timeout:
/// a host that drops the connection attempt (another network, a firewall, an address that
/// routes nowhere) is said to be unreachable in seconds, not after the minutes a slow model
/// may take to answer. Half the request's timeout when that is shorter
/// ([`connect_timeout_for`]).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The connect timeout of a request that may take `timeout` in all: [`CONNECT_TIMEOUT`], or
/// half of `timeout` when that is less, so the connection's deadline always comes first and a
/// connection that never opened is never said to be a server that did not answer.
pub fn connect_timeout_for(timeout: Duration) -> Duration {
    CONNECT_TIMEOUT.min(timeout / 2)
}

/// Largest response body read (16 MiB); a larger one fails the request.
pub const MAX_RESPONSE_BYTES: u64 = 16 << 20;

/// An API key read from the environment. Never printed, never stored.
#[derive(Clone)]
struct ApiKey(String);

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(..)")
    }
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

impl ChatMessage {
    pub fn system(content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role: "system".into(),
            content: content.into(),
        }
    }
    pub fn user(content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role: "user".into(),
            content: content.into(),
        }
    }
}

/// A `/chat/completions` request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatRequest {
    pub model: String,
    pub messages: Vec<ChatMessage>,
    pub temperature: Option<f64>,
    pub max_tokens: Option<u32>,
    /// A strict JSON schema for the reply: sent as
    /// `response_format = {type: json_schema, json_schema: {name, strict: true, schema}}`.
    pub json_schema: Option<(String, Value)>,
    /// Extra top-level fields (e.g. `chat_template_kwargs`); may not override the fields above.
    pub extra_body: Map<String, Value>,
}

/// Fields `extra_body` may not set.
pub const RESERVED_KEYS: &[&str] = &[
    "model",
    "messages",
    "max_tokens",
    "temperature",
    "response_format",
];

/// Token counts the server reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, o: Usage) {
        self.prompt_tokens += o.prompt_tokens;
        self.completion_tokens += o.completion_tokens;
    }
}

/// A completed chat call.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatReply {
    pub content: String,
    pub usage: Usage,
    /// HTTP attempts it took (retries included).
    pub attempts: u32,
}

/// What one HTTP attempt came to.
enum Attempt<T> {
    Done(T),
    /// Worth another try (after the server's `Retry-After`, if any).
    Retry(LlmError, Option<String>),
    Fail(LlmError),
}

/// The client for one server.
#[derive(Debug, Clone)]
pub struct Client {
    endpoint: Endpoint,
    api_key: Option<ApiKey>,
    agent: ureq::Agent,
    /// How long one request may take, named when it runs out.
    timeout: Duration,
    /// Where the config sets that (see [`Server::timeout_setting`]), named with it.
    timeout_setting: Option<String>,
    /// Retry ladder; tests shorten it.
    pub retry: RetryPolicy,
    /// Response size cap.
    pub max_response_bytes: u64,
}

impl Client {
    /// A client for a validated server. Reads the API key from the variable named by
    /// `api_key_env` now; a named but unset variable is an error.
    pub fn new(server: &Server) -> Result<Client, LlmError> {
        let api_key = if server.api_key_env.is_empty() {
            None
        } else {
            match std::env::var(&server.api_key_env) {
                Ok(k) if !k.trim().is_empty() => {
                    let k = k.trim().to_owned();
                    if !k.bytes().all(|b| b.is_ascii_graphic()) {
                        return Err(LlmError::Config(format!(
                            "the API key in ${} has characters an HTTP header cannot carry",
                            server.api_key_env
                        )));
                    }
                    Some(ApiKey(k))
                }
                _ => {
                    return Err(LlmError::Config(format!(
                        "the API key variable ${} (api_key_env) is not set; export it in the environment that runs Cairn",
                        server.api_key_env
                    )));
                }
            }
        };
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .proxy(None)
            .timeout_global(Some(server.timeout))
            .timeout_connect(Some(connect_timeout_for(server.timeout)))
            .user_agent(concat!("cairn/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Ok(Client {
            endpoint: server.endpoint.clone(),
            api_key,
            agent,
            timeout: server.timeout,
            timeout_setting: server.timeout_setting.clone(),
            retry: RetryPolicy::default(),
            max_response_bytes: MAX_RESPONSE_BYTES,
        })
    }

    /// The endpoint, redacted for display.
    pub fn endpoint(&self) -> String {
        self.endpoint.redacted()
    }

    /// One chat completion. Message contents pass `outbound` (redacted, re-scanned, refused on
    /// any hit) before anything is sent. Transient failures are retried per [`RetryPolicy`].
    pub fn chat(&self, req: &ChatRequest, outbound: &Outbound) -> Result<ChatReply, LlmError> {
        if let Some(k) = req
            .extra_body
            .keys()
            .find(|k| RESERVED_KEYS.contains(&k.as_str()))
        {
            return Err(LlmError::Config(format!(
                "request.extra_body may not set `{k}` (reserved: {})",
                RESERVED_KEYS.join(", ")
            )));
        }
        let mut messages = Vec::with_capacity(req.messages.len());
        for m in &req.messages {
            messages.push(json!({"role": m.role, "content": outbound.clean(&m.content)?}));
        }
        let mut body = Map::new();
        for (k, v) in &req.extra_body {
            body.insert(k.clone(), v.clone());
        }
        body.insert("model".into(), json!(req.model));
        body.insert("messages".into(), Value::Array(messages));
        if let Some(t) = req.temperature {
            body.insert("temperature".into(), json!(t));
        }
        if let Some(n) = req.max_tokens {
            body.insert("max_tokens".into(), json!(n));
        }
        if let Some((name, schema)) = &req.json_schema {
            body.insert(
                "response_format".into(),
                json!({"type": "json_schema", "json_schema": {"name": name, "strict": true, "schema": schema}}),
            );
        }
        let body = Value::Object(body);
        self.send("/chat/completions", &body, |v| {
            let Some(choice) = v.get("choices").and_then(|c| c.get(0)) else {
                return Attempt::Retry(LlmError::Protocol("the reply had no choices".into()), None);
            };
            let usage = usage_of(v);
            match choice.get("finish_reason").and_then(Value::as_str) {
                None | Some("stop") => {}
                Some("length") => return Attempt::Fail(LlmError::Truncated),
                Some(other) => {
                    return Attempt::Fail(LlmError::Reply(format!(
                        "the model stopped with finish_reason {}",
                        super::quoted(other)
                    )));
                }
            }
            match choice.get("message").and_then(|m| m.get("content")) {
                Some(Value::String(c)) if !c.trim().is_empty() => Attempt::Done(ChatReply {
                    content: c.to_owned(),
                    usage,
                    attempts: 0,
                }),
                None | Some(Value::Null | Value::String(_)) => {
                    Attempt::Fail(LlmError::Reply("the model returned empty content".into()))
                }
                // Said apart from an empty answer: a server that answers `42` or a list of parts
                // is not following the protocol the same way as a model with nothing to say.
                Some(other) => Attempt::Fail(LlmError::Reply(format!(
                    "the model's content is {}, not text",
                    json_kind(other)
                ))),
            }
        })
        .map(|(mut reply, attempts)| {
            reply.attempts = attempts;
            reply
        })
    }

    /// Embed `inputs` with `model` (`/embeddings`), one vector per input, in input order. The
    /// inputs pass the outbound guard with no repository root (every absolute path removed).
    /// All inputs go in one request: batch on the caller's side.
    pub fn embeddings(&self, model: &str, inputs: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        self.embeddings_from(model, inputs, &Outbound::for_root(None))
    }

    /// [`Client::embeddings`] with an explicit outbound scope.
    pub fn embeddings_from(
        &self,
        model: &str,
        inputs: &[String],
        outbound: &Outbound,
    ) -> Result<Vec<Vec<f32>>, LlmError> {
        self.embeddings_sized(model, inputs, None, outbound)
    }

    /// [`Client::embeddings_from`] asking for vectors of `dimensions` (sent as `dimensions`, for
    /// models that can shorten their vectors; None sends nothing).
    pub fn embeddings_sized(
        &self,
        model: &str,
        inputs: &[String],
        dimensions: Option<u32>,
        outbound: &Outbound,
    ) -> Result<Vec<Vec<f32>>, LlmError> {
        if inputs.is_empty() {
            return Ok(Vec::new());
        }
        let mut clean = Vec::with_capacity(inputs.len());
        for i in inputs {
            clean.push(outbound.clean(i)?);
        }
        let mut body = json!({"model": model, "input": clean, "encoding_format": "float"});
        if let Some(d) = dimensions {
            body["dimensions"] = json!(d);
        }
        let n = inputs.len();
        self.send("/embeddings", &body, |v| match parse_embeddings(v, n) {
            Ok(vs) => Attempt::Done(vs),
            Err(e) => Attempt::Fail(e),
        })
        .map(|(v, _)| v)
    }

    /// The model ids the server lists (`GET /models`).
    pub fn models(&self) -> Result<Vec<String>, LlmError> {
        let url = self.endpoint.url("/models");
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut req = self.agent.get(&url).header("Accept", "application/json");
            if let Some(k) = &self.api_key {
                req = req.header("Authorization", format!("Bearer {}", k.0));
            }
            let outcome = self.interpret(req.call(), |v| {
                let ids = v
                    .get("data")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|m| m.get("id").and_then(Value::as_str))
                            .map(|s| super::told(s, 200))
                            .collect()
                    })
                    .unwrap_or_default();
                Attempt::Done(ids)
            });
            match self.step(outcome, attempt) {
                Some(r) => return r,
                None => continue,
            }
        }
    }

    /// POST `body` to `route` with retries; `read` interprets a 2xx JSON reply.
    fn send<T>(
        &self,
        route: &str,
        body: &Value,
        read: impl Fn(&Value) -> Attempt<T>,
    ) -> Result<(T, u32), LlmError> {
        // The last line of defence: no string in the body may hold a secret.
        let mut hit = None;
        walk_strings(body, &mut |s| {
            if hit.is_none() {
                hit = Redactor::global().scan_text(s).first().map(|f| f.rule);
            }
        });
        if let Some(rule) = hit {
            return Err(LlmError::Refused(format!(
                "the request body still held a secret (rule {rule}); nothing was sent"
            )));
        }
        let bytes = serde_json::to_vec(body)
            .map_err(|e| LlmError::Config(format!("cannot encode the request: {e}")))?;
        let url = self.endpoint.url(route);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut req = self
                .agent
                .post(&url)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json");
            if let Some(k) = &self.api_key {
                req = req.header("Authorization", format!("Bearer {}", k.0));
            }
            let outcome = self.interpret(req.send(&bytes[..]), &read);
            match self.step(outcome, attempt) {
                Some(r) => return r.map(|v| (v, attempt)),
                None => continue,
            }
        }
    }

    /// Finish (`Some`) or wait and go again (`None`).
    fn step<T>(&self, outcome: Attempt<T>, attempt: u32) -> Option<Result<T, LlmError>> {
        match outcome {
            Attempt::Done(v) => Some(Ok(v)),
            Attempt::Fail(e) => Some(Err(e)),
            Attempt::Retry(e, _) if attempt >= self.retry.max_attempts => Some(Err(e)),
            Attempt::Retry(e, after) => {
                let wait = self
                    .retry
                    .delay(attempt, after.as_deref(), jiff::Timestamp::now());
                tracing::debug!("model server: {e}; retrying in {wait:?}");
                std::thread::sleep(wait);
                None
            }
        }
    }

    /// What an exchange that got no HTTP answer comes to, in words that say whether the
    /// connection never opened (within [`CONNECT_TIMEOUT`], refused, no such host: the
    /// address or the server is at fault) or the server took it and did not answer in time (a
    /// slow model: the request's timeout, named where it is set).
    fn unanswered(&self, e: &ureq::Error) -> LlmError {
        use ureq::Timeout;
        let at = self.endpoint.redacted();
        let to = self.endpoint.host_port();
        let io_kind = match e {
            ureq::Error::Io(io) => Some(io.kind()),
            _ => None,
        };
        let message = match (e, io_kind) {
            (ureq::Error::Timeout(Timeout::Connect | Timeout::Resolve), _) => format!(
                "could not connect to {to} within {} s ({at}): check that the server runs and that this machine can reach that address (another network, a VPN or a firewall may drop the connection)",
                connect_timeout_for(self.timeout).as_secs_f64()
            ),
            (ureq::Error::Timeout(_), _) => {
                let fix = match &self.timeout_setting {
                    Some(setting) => {
                        format!("for a slow model, raise {setting} in config.toml")
                    }
                    None => "no setting changes this wait: check that the server is running and not stuck".to_owned(),
                };
                format!(
                    "{at} gave no answer within {} s ({fix})",
                    self.timeout.as_secs_f64()
                )
            }
            (_, Some(std::io::ErrorKind::ConnectionRefused)) => format!(
                "could not connect to {to} ({at}): the connection was refused; start the server, or check the endpoint's port"
            ),
            (ureq::Error::HostNotFound, _) => format!(
                "could not connect to {to} ({at}): no such host; check the endpoint's host name"
            ),
            _ => format!(
                "cannot reach {at}: {}",
                crate::text::one_line(&e.to_string(), 200)
            ),
        };
        LlmError::Unreachable(message)
    }

    /// Classify one HTTP exchange (reference §5.7).
    fn interpret<T>(
        &self,
        sent: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
        read: impl Fn(&Value) -> Attempt<T>,
    ) -> Attempt<T> {
        let at = self.endpoint.redacted();
        let mut resp = match sent {
            Ok(r) => r,
            Err(e) => return Attempt::Retry(self.unanswered(&e), None),
        };
        let status = resp.status().as_u16();
        let header = |name: &str| {
            resp.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let retry_after = header("retry-after");
        if (300..400).contains(&status) {
            return Attempt::Fail(LlmError::Redirect {
                status,
                endpoint: at,
            });
        }
        let body = match resp
            .body_mut()
            .with_config()
            .limit(self.max_response_bytes)
            .read_to_vec()
        {
            Ok(b) => b,
            Err(ureq::Error::BodyExceedsLimit(limit)) => {
                return Attempt::Fail(LlmError::TooLarge { limit });
            }
            Err(e @ ureq::Error::Timeout(_)) => return Attempt::Retry(self.unanswered(&e), None),
            Err(e) => {
                return Attempt::Retry(
                    LlmError::Unreachable(format!(
                        "reading the reply from {at} failed: {}",
                        crate::text::one_line(&e.to_string(), 200)
                    )),
                    None,
                );
            }
        };
        if (200..300).contains(&status) {
            return match serde_json::from_slice::<Value>(&body) {
                Ok(v) => read(&v),
                Err(_) => Attempt::Retry(
                    LlmError::Protocol(format!(
                        "{at} answered HTTP {status} with a body that is not JSON"
                    )),
                    None,
                ),
            };
        }
        let raw = String::from_utf8_lossy(&body);
        let detail = if self.endpoint.carries_credentials() {
            "(server text withheld: the endpoint URL may carry credentials)".to_owned()
        } else {
            super::told(&self.without_key(&error_text(&raw)), 200)
        };
        match status {
            408 | 429 => Attempt::Retry(
                LlmError::Busy {
                    status,
                    endpoint: at,
                    detail,
                },
                retry_after,
            ),
            413 => Attempt::Fail(LlmError::Overflow(format!("HTTP 413 {detail}"))),
            400 if is_overflow(&raw) => Attempt::Fail(LlmError::Overflow(detail)),
            401 | 403 | 404 | 405 | 415 | 501 => Attempt::Fail(LlmError::Rejected {
                status,
                endpoint: at,
                detail,
            }),
            500..=599 => Attempt::Retry(
                LlmError::Busy {
                    status,
                    endpoint: at,
                    detail,
                },
                retry_after,
            ),
            _ => Attempt::Fail(LlmError::BadRequest { status, detail }),
        }
    }
}

/// What a JSON value is, in a message's words ("a number"): said of an answer's content
/// without quoting it.
fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn usage_of(v: &Value) -> Usage {
    let n = |k: &str| {
        v.get("usage")
            .and_then(|u| u.get(k))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    Usage {
        prompt_tokens: n("prompt_tokens"),
        completion_tokens: n("completion_tokens"),
    }
}

fn parse_embeddings(v: &Value, n: usize) -> Result<Vec<Vec<f32>>, LlmError> {
    let bad = |m: &str| LlmError::Protocol(format!("embeddings reply: {m}"));
    let data = v
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no data array"))?;
    if data.len() != n {
        return Err(bad(&format!("{} vectors for {n} inputs", data.len())));
    }
    let mut out: Vec<Option<Vec<f32>>> = vec![None; n];
    for (pos, item) in data.iter().enumerate() {
        let index = item
            .get("index")
            .and_then(Value::as_u64)
            .map_or(pos, |i| i as usize);
        let vec = item
            .get("embedding")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("an item has no embedding array"))?
            .iter()
            .map(|x| x.as_f64().filter(|f| f.is_finite()).map(|f| f as f32))
            .collect::<Option<Vec<f32>>>()
            .ok_or_else(|| bad("an embedding holds a non-number"))?;
        let slot = out
            .get_mut(index)
            .ok_or_else(|| bad("an index is out of range"))?;
        if slot.replace(vec).is_some() {
            return Err(bad("an index repeats"));
        }
    }
    let out: Vec<Vec<f32>> = out.into_iter().flatten().collect();
    let dim = out.first().map_or(0, Vec::len);
    if dim == 0 || out.iter().any(|v| v.len() != dim) || out.len() != n {
        return Err(bad("vectors are empty or of different lengths"));
    }
    Ok(out)
}

impl Client {
    /// A server's error text (decoded: a JSON-escaped `\u0026` is `&` by now) without the API
    /// key it was sent, wherever the server quotes it: an error that echoes the request's
    /// header is printed and stored in the run log, and a local server's key matches no rule
    /// the redactor knows. A key shorter than [`MIN_SCRUBBED_KEY`] is a placeholder
    /// (`ollama`, `EMPTY`) that guards nothing and reads as an ordinary word: left alone. Only
    /// error text: a model's answer is parsed as the server sent it.
    fn without_key(&self, text: &str) -> String {
        match &self.api_key {
            Some(ApiKey(key)) if key.chars().count() >= MIN_SCRUBBED_KEY => {
                text.replace(key.as_str(), "[REDACTED:api-key]")
            }
            _ => text.to_owned(),
        }
    }
}

/// The shortest API key [`Client::without_key`] takes out of a server's error text.
const MIN_SCRUBBED_KEY: usize = 10;

/// The server's own error message when the body is OpenAI-shaped, else the raw text.
fn error_text(raw: &str) -> String {
    serde_json::from_str::<Value>(raw)
        .ok()
        .and_then(|v| {
            let e = v.get("error")?;
            e.get("message")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .or_else(|| e.as_str().map(str::to_owned))
        })
        .unwrap_or_else(|| raw.to_owned())
}

/// A 400 that says the input did not fit the model's context.
fn is_overflow(raw: &str) -> bool {
    let t = raw.to_ascii_lowercase();
    t.contains("context_length_exceeded")
        || t.contains("context length")
        || t.contains("context window")
        || t.contains("maximum context")
        || t.contains("too many tokens")
        || ((t.contains("prompt") || t.contains("input")) && t.contains("too long"))
        || (t.contains("exceed") && t.contains("context"))
}

fn walk_strings(v: &Value, f: &mut impl FnMut(&str)) {
    match v {
        Value::String(s) => f(s),
        Value::Array(a) => a.iter().for_each(|x| walk_strings(x, f)),
        Value::Object(o) => o.iter().for_each(|(k, x)| {
            f(k);
            walk_strings(x, f);
        }),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_delay_is_exponential_capped_and_honours_retry_after() {
        let p = RetryPolicy::default();
        let now = jiff::Timestamp::from_second(1_700_000_000).unwrap();
        assert_eq!(p.delay(1, None, now), Duration::from_millis(500));
        assert_eq!(p.delay(2, None, now), Duration::from_millis(1000));
        assert_eq!(p.delay(3, None, now), Duration::from_millis(2000));
        assert_eq!(p.delay(20, None, now), Duration::from_secs(30));
        assert_eq!(p.delay(1, Some("7"), now), Duration::from_secs(7));
        assert_eq!(p.delay(1, Some("3600"), now), Duration::from_secs(30));
        let date = "Tue, 14 Nov 2023 22:13:25 GMT"; // now + 5 s
        assert_eq!(p.delay(1, Some(date), now), Duration::from_secs(5));
        // An unreadable header falls back to the ladder.
        assert_eq!(p.delay(2, Some("soon"), now), Duration::from_millis(1000));
    }

    #[test]
    fn overflow_phrases() {
        assert!(is_overflow(
            r#"{"error":{"code":"context_length_exceeded"}}"#
        ));
        assert!(is_overflow("the prompt is too long for this model"));
        assert!(is_overflow("input exceeds the model's context window"));
        assert!(!is_overflow("invalid value for temperature"));
    }

    #[test]
    fn embeddings_are_put_in_input_order_and_checked() {
        let v = json!({"data": [{"index": 1, "embedding": [0.5, 1.0]}, {"index": 0, "embedding": [1.5, 2.0]}]});
        assert_eq!(
            parse_embeddings(&v, 2).unwrap(),
            vec![vec![1.5, 2.0], vec![0.5, 1.0]]
        );
        let v = json!({"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [1.0, 2.0]}]});
        assert!(parse_embeddings(&v, 2).is_err());
        let v = json!({"data": [{"index": 0, "embedding": [1.0]}]});
        assert!(parse_embeddings(&v, 2).is_err());
    }

    fn client_for(url: &str, timeout: Duration) -> Client {
        let mut c = Client::new(&Server {
            endpoint: Endpoint::parse(url).unwrap(),
            api_key_env: String::new(),
            timeout,
            timeout_setting: Some("`timeout` under [t]".into()),
        })
        .unwrap();
        c.retry.max_attempts = 1;
        c
    }

    /// A connection refused, one that never opens and a server that takes it and never
    /// answers are three different failures, each said with its host and its fix: the first
    /// two are the address or the server, the last a slow model (its timeout named).
    #[test]
    fn a_connection_that_never_opens_is_told_from_a_server_that_never_answers() {
        use std::net::{TcpListener, TcpStream};
        let err = |c: &Client| match c.models() {
            Err(LlmError::Unreachable(m)) => m,
            other => panic!("{other:?}"),
        };
        // Nobody listens.
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let said = err(&client_for(
            &format!("http://127.0.0.1:{port}/v1"),
            Duration::from_secs(30),
        ));
        assert!(
            said.contains(&format!("could not connect to 127.0.0.1:{port}"))
                && said.contains("refused")
                && said.contains("start the server"),
            "{said}"
        );
        // Listening, with a backlog no one accepts from: filled, a further connection waits
        // for a handshake that never comes (as to a host that drops it).
        let full = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = full.local_addr().unwrap();
        let mut held = Vec::new();
        // Full once two attempts in a row wait in vain (one may only have been slow).
        let mut in_vain = 0;
        let filled = (0..20_000).any(|_| {
            match TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
                Ok(s) => {
                    held.push(s);
                    in_vain = 0;
                }
                Err(_) => in_vain += 1,
            }
            in_vain == 2
        });
        assert!(filled, "the backlog never filled ({} held)", held.len());
        let said = err(&client_for(
            &format!("http://{addr}/v1"),
            Duration::from_secs(1),
        ));
        assert!(
            said.contains(&format!("could not connect to {addr} within 0.5 s"))
                && said.contains("check that the server runs")
                && !said.contains("gave no answer"),
            "{said}"
        );
        drop(held);
        // Accepted, then silence: the request's own timeout, and where to raise it.
        let silent = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = silent.local_addr().unwrap();
        let keep = std::thread::spawn(move || silent.accept().map(|(s, _)| s));
        let said = err(&client_for(
            &format!("http://{addr}/v1"),
            Duration::from_secs(1),
        ));
        assert!(
            said.contains("gave no answer within 1 s")
                && said.contains("raise `timeout` under [t]")
                && !said.contains("could not connect"),
            "{said}"
        );
        drop(keep.join());
    }

    /// The host and port a connection is made to, the scheme's port when none is written.
    #[test]
    fn host_port_names_the_connection() {
        let at = |u: &str| Endpoint::parse(u).unwrap().host_port();
        assert_eq!(at("https://api.example.com/v1"), "api.example.com:443");
        assert_eq!(at("http://10.255.255.1/v1"), "10.255.255.1:80");
        assert_eq!(at("http://[::1]:8080/v1"), "[::1]:8080");
    }
}
