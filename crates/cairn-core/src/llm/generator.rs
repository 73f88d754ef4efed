//! One way to ask a model, whichever kind answers: an OpenAI-compatible endpoint
//! ([`EndpointGenerator`], through [`super::Client`]) or a local agent CLI run headless
//! ([`AgentGenerator`], through [`super::agent_cli`]). Extraction and generated insights both
//! ask through [`Generator`], so a setting that works for one works for the other.
//!
//! * Every outbound byte passes the [`Outbound`] guard first (redacted, re-scanned, refused on a
//!   hit): the endpoint's client does it per message, the agent generator on the whole prompt
//!   before the CLI starts.
//! * A structured question ([`Ask::schema`]) is a strict `json_schema` response format for an
//!   endpoint; an agent CLI, which has no such switch, gets the schema in the prompt and its
//!   answer is taken out of a Markdown code fence if it wrapped one. Either way the caller
//!   parses and validates the text with the same function (extraction:
//!   `recall::extract::output::parse`).
//! * Failures are [`LlmError`]s with a [`super::Scope`]: an agent that cannot start, exits
//!   non-zero, times out or answers nothing is [`LlmError::Generator`] (scope: the generator), so
//!   a pass stops instead of failing every session in turn; an answer too long to read
//!   ([`LlmError::TooLarge`]) fails only the question asked, as a server's does.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::agent_cli::{self, AgentKind};
use super::{ChatMessage, ChatRequest, Client, LlmError, Outbound, Server, Usage};
use crate::config::AgentCliConfig;
use crate::error::{Error, Result};

/// Who answers, as far as cache keys and stored rows are concerned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct GeneratorIdentity {
    /// `endpoint`, or the agent CLI's name.
    pub backend: String,
    pub model: Option<String>,
    /// SHA-256 of the endpoint URL (the address itself is not stored with what it wrote).
    pub endpoint_hash: Option<String>,
}

/// One question.
#[derive(Debug, Clone, Default)]
pub struct Ask<'a> {
    /// Instructions; empty for none.
    pub system: &'a str,
    pub user: &'a str,
    /// A strict JSON schema the answer must follow: `(name, schema)`.
    pub schema: Option<(&'a str, &'a Value)>,
    /// Endpoint only (an agent CLI picks its own).
    pub temperature: Option<f64>,
    /// Endpoint only.
    pub max_tokens: Option<u32>,
    /// Endpoint only: extra top-level request fields.
    pub extra_body: Option<&'a Map<String, Value>>,
}

/// One answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answer {
    pub content: String,
    /// The model that answered, when known.
    pub model: Option<String>,
    /// Token counts, when the generator reports them (an agent CLI does not: zero).
    pub usage: Usage,
}

/// A report's text and its model (what insights store).
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratorOutput {
    pub text: String,
    pub model: Option<String>,
}

/// Something that answers prompts.
pub trait Generator {
    fn identity(&self) -> GeneratorIdentity;

    /// For messages: `endpoint http://127.0.0.1:8080/v1` (redacted), `claude (/usr/bin/claude)`.
    fn describe(&self) -> String {
        self.identity().backend
    }

    /// Ask one question; `outbound` is where the text comes from (which paths may stay).
    fn ask(&self, ask: &Ask<'_>, outbound: &Outbound) -> std::result::Result<Answer, LlmError>;

    /// A free-text prompt with no system part (generated insights).
    fn generate(&self, prompt: &str) -> Result<GeneratorOutput> {
        let ask = Ask {
            user: prompt,
            ..Default::default()
        };
        match self.ask(&ask, &Outbound::for_root(None)) {
            Ok(a) => Ok(GeneratorOutput {
                text: a.content,
                model: a.model,
            }),
            Err(LlmError::Generator { what, message }) => Err(Error::Generator { what, message }),
            Err(e) => Err(Error::Generator {
                what: self.describe(),
                message: e.to_string(),
            }),
        }
    }
}

/// An OpenAI-compatible endpoint and the model to ask there.
pub struct EndpointGenerator {
    client: Client,
    model: String,
    endpoint_hash: String,
}

impl EndpointGenerator {
    pub fn new(server: &Server, model: &str) -> std::result::Result<Self, LlmError> {
        Ok(EndpointGenerator {
            endpoint_hash: hex::encode(Sha256::digest(server.endpoint.url("").as_bytes())),
            client: Client::new(server)?,
            model: model.to_owned(),
        })
    }

    /// A generator over an already built client (tests shorten its retry ladder).
    pub fn with_client(client: Client, model: &str, endpoint_hash: String) -> Self {
        EndpointGenerator {
            client,
            model: model.to_owned(),
            endpoint_hash,
        }
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    pub fn client_mut(&mut self) -> &mut Client {
        &mut self.client
    }

    /// The endpoint, redacted for display.
    pub fn endpoint(&self) -> String {
        self.client.endpoint()
    }
}

impl Generator for EndpointGenerator {
    fn identity(&self) -> GeneratorIdentity {
        GeneratorIdentity {
            backend: "endpoint".to_owned(),
            model: Some(self.model.clone()),
            endpoint_hash: Some(self.endpoint_hash.clone()),
        }
    }

    fn describe(&self) -> String {
        format!("endpoint {}", self.client.endpoint())
    }

    fn ask(&self, ask: &Ask<'_>, outbound: &Outbound) -> std::result::Result<Answer, LlmError> {
        let mut messages = Vec::with_capacity(2);
        if !ask.system.is_empty() {
            messages.push(ChatMessage::system(ask.system));
        }
        messages.push(ChatMessage::user(ask.user));
        let req = ChatRequest {
            model: self.model.clone(),
            messages,
            temperature: ask.temperature,
            max_tokens: ask.max_tokens,
            json_schema: ask.schema.map(|(n, s)| (n.to_owned(), s.clone())),
            extra_body: ask.extra_body.cloned().unwrap_or_default(),
        };
        let reply = self.client.chat(&req, outbound)?;
        Ok(Answer {
            content: reply.content,
            model: Some(self.model.clone()),
            usage: reply.usage,
        })
    }
}

/// A local agent CLI, run headless and isolated ([`agent_cli::run`]).
#[derive(Debug, Clone)]
pub struct AgentGenerator {
    pub kind: AgentKind,
    pub config: Option<AgentCliConfig>,
}

impl AgentGenerator {
    fn binary(&self) -> String {
        self.config
            .as_ref()
            .and_then(|c| c.binary.clone())
            .unwrap_or_else(|| self.kind.as_str().to_owned())
    }
}

/// The prompt an agent CLI gets: instructions, the question, and the schema to answer in.
pub fn agent_prompt(ask: &Ask<'_>) -> String {
    let mut text = String::new();
    if !ask.system.is_empty() {
        text.push_str(ask.system);
        text.push_str("\n\n");
    }
    text.push_str(ask.user);
    if let Some((name, schema)) = ask.schema {
        text.push_str(&format!(
            "\n\nANSWER FORMAT: reply with one JSON object and nothing else (no prose, no code fence, no tool use). It must follow this JSON Schema, named {name:?}, exactly:\n{schema}\n"
        ));
    }
    text
}

/// An agent's structured answer: the JSON inside a Markdown code fence when the whole answer
/// is one fenced block, else the answer trimmed. Nothing else is repaired.
pub fn unfence(text: &str) -> &str {
    let t = text.trim();
    let Some(rest) = t.strip_prefix("```") else {
        return t;
    };
    let Some(body) = rest.strip_suffix("```") else {
        return t;
    };
    // The info string (`json`) runs to the end of the first line. Inside, a line opening with
    // backticks is another fence (two blocks); backticks within a line are the JSON's own text
    // (an entry about Markdown), as a JSON string never spans lines.
    match body.split_once('\n') {
        Some((info, inner))
            if !info.contains('`') && !inner.lines().any(|l| l.trim_start().starts_with("```")) =>
        {
            inner.trim()
        }
        _ => t,
    }
}

impl Generator for AgentGenerator {
    fn identity(&self) -> GeneratorIdentity {
        GeneratorIdentity {
            backend: self.kind.as_str().to_owned(),
            model: None,
            endpoint_hash: None,
        }
    }

    fn describe(&self) -> String {
        format!("{} ({})", self.kind.as_str(), self.binary())
    }

    fn ask(&self, ask: &Ask<'_>, outbound: &Outbound) -> std::result::Result<Answer, LlmError> {
        let prompt = outbound.clean(&agent_prompt(ask))?;
        let out = agent_cli::run(self.kind, self.config.as_ref(), &prompt)?;
        let content = if ask.schema.is_some() {
            unfence(&out.text).to_owned()
        } else {
            out.text
        };
        Ok(Answer {
            content,
            model: out.model,
            usage: Usage::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unfence_takes_only_one_whole_fenced_block() {
        assert_eq!(unfence("```json\n{\"a\":1}\n```"), "{\"a\":1}");
        assert_eq!(unfence("  {\"a\":1}\n"), "{\"a\":1}");
        assert_eq!(unfence("```\n{}\n```"), "{}");
        // Prose around a fence, or two fences, stay as they are (and fail validation).
        assert_eq!(
            unfence("Here:\n```json\n{}\n```"),
            "Here:\n```json\n{}\n```"
        );
        let two = "```json\n{}\n```\n```\n{}\n```";
        assert_eq!(unfence(two), two);
        // Backticks inside the JSON's text are not a fence.
        let md = "{\"title\":\"Close a ``` block\"}";
        assert_eq!(unfence(&format!("```json\n{md}\n```")), md);
        assert_eq!(unfence("```"), "```");
    }

    #[test]
    fn an_agent_prompt_carries_the_schema() {
        let schema = serde_json::json!({"type": "object"});
        let p = agent_prompt(&Ask {
            system: "SYS",
            user: "USER",
            schema: Some(("entries", &schema)),
            ..Default::default()
        });
        assert!(p.starts_with("SYS\n\nUSER\n\nANSWER FORMAT"), "{p}");
        assert!(p.contains(r#"{"type":"object"}"#), "{p}");
        assert_eq!(
            agent_prompt(&Ask {
                user: "U",
                ..Default::default()
            }),
            "U"
        );
    }
}
