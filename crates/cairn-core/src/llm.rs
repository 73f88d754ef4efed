//! The only network code in Cairn: a client for OpenAI-compatible model servers.
//!
//! * [`endpoint`]: base URLs, the transport policy (plain HTTP only to loopback unless
//!   `allow_http`; no credentials in URLs) and redacted display; [`ServerConfig`] is the
//!   `[….servers.<name>]` config table any feature can embed.
//! * [`outbound`]: the guard every outgoing text passes — the outbound redactor, then a re-scan
//!   that refuses the request on any remaining secret or absolute path.
//! * [`client`]: `/chat/completions` (strict `json_schema` replies), `/embeddings`, `/models`,
//!   the retry ladder, the response size cap, no redirects, no proxies.
//! * [`agent_cli`]: a local agent CLI (`claude -p`, `codex exec`, …) run headless and isolated.
//! * [`generator`]: one [`Generator`] over both, used by extraction and generated insights.
//! * [`models`]: what a `/models` answer says of the model a setup names, cleaned and bounded.
//! * [`detect`]: what is at hand (agent CLIs, loopback servers, key variables), sending nothing.
//!
//! Using it from another feature:
//!
//! ```no_run
//! # fn demo(config_path: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
//! use cairn_core::llm::{Client, ServerConfig};
//! let server = ServerConfig { endpoint: "http://127.0.0.1:8080/v1".into(), ..Default::default() }
//!     .resolve(config_path, "recall.embeddings.server")?;
//! let client = Client::new(&server)?;
//! let vectors: Vec<Vec<f32>> = client.embeddings("nomic-embed-text", &["some text".to_owned()])?;
//! # Ok(()) }
//! ```

pub mod agent_cli;
pub mod client;
pub mod detect;
pub mod endpoint;
pub mod generator;
pub mod models;
pub mod outbound;

pub use client::{ChatMessage, ChatReply, ChatRequest, Client, RetryPolicy, Usage};
pub use endpoint::{Endpoint, Server, ServerConfig, parse_duration};
pub use generator::{AgentGenerator, Answer, Ask, EndpointGenerator, Generator, GeneratorIdentity};
pub use outbound::Outbound;

/// Text a server or an agent CLI wrote (an error body, stderr, a reported error), as Cairn
/// shows and stores it: printable, secrets redacted, several lines kept. A server echoing the
/// request or an agent printing its environment can hand back a token, and this text reaches
/// the terminal and `recall_extract_runs`. Redacted whole, before any cut, so a secret is never
/// cut into a piece the redactor no longer recognises.
pub(crate) fn redacted(text: &str) -> String {
    crate::archive::redact::Redactor::global().redact_printable(text, "", &mut Vec::new())
}

/// [`redacted`], then one line of at most `max` characters.
pub(crate) fn told(text: &str, max: usize) -> String {
    crate::text::excerpt(&redacted(text), max)
}

/// How much of a model's text an error message quotes.
const QUOTED_CHARS: usize = 40;

/// A piece of a model's answer quoted in an error message (an unknown key, a type that is not
/// allowed, a finish reason), in double quotes. The one way every parser of an answer quotes
/// it: a model can echo a secret it decoded or made up into the very field that breaks the
/// answer's format, and the message reaches the terminal, `recall_extract_progress` and the
/// desktop. So the text is [`told`]: redacted whole before it is cut, since a token cut short
/// is a piece no rule recognises.
pub(crate) fn quoted(text: &str) -> String {
    format!("{:?}", told(text, QUOTED_CHARS))
}

/// How far a failure reaches: what the caller should stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The server or its configuration is at fault: stop talking to it for now.
    Endpoint,
    /// This input failed; others may work.
    Input,
    /// The input did not fit (context overflow or a truncated reply): split it and retry.
    Split,
}

/// Client errors. Messages never hold the API key or transcript text; server texts are
/// control-stripped, bounded, and withheld when the endpoint URL may carry credentials.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    #[error("{0}")]
    Config(String),
    /// The outbound guard refused the text (fail closed): nothing was sent.
    #[error("not sent: {0}")]
    Refused(String),
    #[error("{0}")]
    Unreachable(String),
    /// 408, 429 or 5xx after every retry.
    #[error("model server {endpoint} is busy or failing (HTTP {status}) after retries: {detail}")]
    Busy {
        status: u16,
        endpoint: String,
        detail: String,
    },
    /// 401, 403, 404, 405, 415, 501: the endpoint, key or model is wrong.
    #[error(
        "model server {endpoint} refused the request (HTTP {status}): {detail}; check the endpoint, the model name and the API key variable"
    )]
    Rejected {
        status: u16,
        endpoint: String,
        detail: String,
    },
    #[error(
        "model server {endpoint} answered with a redirect (HTTP {status}), which Cairn never follows; configure the final URL"
    )]
    Redirect { status: u16, endpoint: String },
    /// Any other 4xx: this request was wrong, not the server.
    #[error("model server rejected this input (HTTP {status}): {detail}")]
    BadRequest { status: u16, detail: String },
    #[error("the input is larger than the model's context: {0}")]
    Overflow(String),
    #[error("the model's reply was cut off at max_tokens")]
    Truncated,
    /// A 200 that does not follow the protocol (no choices, a body that is not JSON): the
    /// server is at fault, not this input.
    #[error("model server broke the protocol: {0}")]
    Protocol(String),
    /// The model answered, but not as the requested schema says (prose, a wrong type, a key
    /// twice): this input's answer is unusable, the generator is not broken, so only the unit
    /// asked about fails (another unit, or the same one later, may be answered well).
    #[error("the answer does not follow the schema: {0}")]
    Schema(String),
    /// A usable HTTP reply with an unusable answer (empty, odd finish reason).
    #[error("{0}")]
    Reply(String),
    #[error("the model's reply is larger than {limit} bytes")]
    TooLarge { limit: u64 },
    /// A local agent CLI could not answer (not found, exited non-zero, timed out, said
    /// nothing); `what` names it.
    #[error("{what}: {message}")]
    Generator { what: String, message: String },
}

impl LlmError {
    pub fn scope(&self) -> Scope {
        match self {
            LlmError::Config(_)
            | LlmError::Unreachable(_)
            | LlmError::Busy { .. }
            | LlmError::Rejected { .. }
            | LlmError::Redirect { .. }
            | LlmError::Protocol(_)
            | LlmError::Generator { .. } => Scope::Endpoint,
            LlmError::Overflow(_) | LlmError::Truncated => Scope::Split,
            LlmError::Refused(_)
            | LlmError::BadRequest { .. }
            | LlmError::Schema(_)
            | LlmError::Reply(_)
            | LlmError::TooLarge { .. } => Scope::Input,
        }
    }
}

impl From<LlmError> for crate::Error {
    fn from(e: LlmError) -> Self {
        match e {
            LlmError::Refused(_) => crate::Error::Refused(e.to_string()),
            LlmError::Config(_) | LlmError::BadRequest { .. } => {
                crate::Error::Invalid(e.to_string())
            }
            LlmError::Generator { what, message } => crate::Error::Generator { what, message },
            _ => crate::Error::External(e.to_string()),
        }
    }
}
