//! Prompts per unit kind, prompt profiles, the reply schema and the generation fingerprint.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::segment::{self, Unit, UnitKind};
use crate::recall::model::EntryType;

/// Bumped whenever the request or the mapping of replies changes meaning.
pub const PROTOCOL: &str = "cairn-extract/1";
/// `response_format.json_schema.name`.
pub const SCHEMA_NAME: &str = "recall_entries";

/// System prompt of intent units (one user message).
pub const INTENT_PROMPT: &str = r#"You are reading one message that a person wrote to a coding agent. Write down what a future agent working in the same project should know from it, as JSON that follows the given schema.

Make a separate entry for each of these that the message contains:
- the task and its goal, naming the concrete things it is about: files, directories, repositories, branches, commands, tools, APIs, versions, deadlines (type "fact");
- constraints and success criteria the person set (type "fact");
- corrections of the agent and feedback on its work (type "preference" when it states a lasting wish, otherwise "fact");
- standing preferences about how work is done: style, tools, process (type "preference");
- anything the person left open or wants decided later (type "open_question").

Rules:
- One entry per distinct item. If nothing is worth keeping, answer {"entries": []}. Never pad.
- Each entry must make sense on its own, months later, to someone who never saw the message.
- Copy paths, commands, identifiers and error messages exactly as written.
- "title": one specific sentence of at most 120 characters. "body": one to three dense sentences.
- "trigger": a short phrase naming the situation in which this should be recalled, e.g. "when changing the login flow"; "" if it always applies.
- "confidence": from 0 to 1, how plainly the message supports the entry.
- "entities": the exact strings someone would search for: file names, commands, identifiers.
- "evidence": the ordinals of the first and last message that support the entry, read from the labels in the text ("USER MESSAGE (ordinal N)", "[N]").
- Text shown as [REDACTED:...] was removed on purpose. Never guess or reconstruct it."#;

/// System prompt of action units (a stretch of the agent's work).
pub const ACTION_PROMPT: &str = r#"You are reading a stretch of a coding agent's work: its replies, the tools it called and what they returned. Write down what was done and what was learned, for a future agent working in the same project, as JSON that follows the given schema.

Entry types:
- "procedure": how something was achieved that worked: the steps, the exact commands, the result;
- "fact": a change of state ("the API client moved from v1 to v2") or something found out about the code, its tools or its environment; record findings generously;
- "decision": a choice between alternatives, which ones, and why this one;
- "warning": an error, a failing command or a trap to avoid, with the exact message;
- "debugging_method": how a problem was narrowed down and what finally revealed the cause.

Rules:
- One entry per distinct item. If nothing is worth keeping, answer {"entries": []}. Never pad; skip chatter and restated plans.
- Say how things turned out: whether a command, test or change worked.
- Each entry must make sense on its own, months later, to someone who never saw this work.
- Copy paths, commands, identifiers and error messages exactly as written.
- "title": one specific sentence of at most 120 characters. "body": one to four dense sentences.
- "trigger": a short phrase naming the situation in which this should be recalled, e.g. "when the integration tests time out"; "" if it always applies.
- "confidence": from 0 to 1, how plainly the work supports the entry.
- "entities": the exact strings someone would search for: file names, commands, identifiers, error codes.
- "evidence": the ordinals of the first and last block that support the entry, read from the "[N]" labels.
- A CONTEXT section, when present, is the request this work answered. Use it to understand why; take entries only from the SEGMENT.
- Text shown as [REDACTED:...] was removed on purpose. Never guess or reconstruct it."#;

/// A prompt profile: defaults that suit a family of models.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    pub name: &'static str,
    pub max_tokens: u32,
    pub temperature: f64,
    pub extra_body: serde_json::Map<String, Value>,
}

/// Known profiles.
pub const PROFILES: &[&str] = &["base", "qwen"];

/// The profile named `name`; `""` picks one by the model name (`qwen*` → `qwen`).
pub fn profile(name: &str, model: &str) -> Option<Profile> {
    let name = if name.is_empty() {
        if model.to_ascii_lowercase().starts_with("qwen") {
            "qwen"
        } else {
            "base"
        }
    } else {
        name
    };
    match name {
        "base" => Some(Profile {
            name: "base",
            max_tokens: 4096,
            temperature: 0.0,
            extra_body: serde_json::Map::new(),
        }),
        "qwen" => {
            let mut extra = serde_json::Map::new();
            // Qwen's chat template thinks aloud by default, which eats max_tokens.
            extra.insert(
                "chat_template_kwargs".into(),
                json!({"enable_thinking": false}),
            );
            Some(Profile {
                name: "qwen",
                max_tokens: 4096,
                temperature: 0.0,
                extra_body: extra,
            })
        }
        _ => None,
    }
}

/// The prompts a generation uses (built-in or from `prompts.dir`).
#[derive(Debug, Clone, PartialEq)]
pub struct Prompts {
    pub intent: String,
    pub action: String,
}

impl Default for Prompts {
    fn default() -> Self {
        Prompts {
            intent: INTENT_PROMPT.to_owned(),
            action: ACTION_PROMPT.to_owned(),
        }
    }
}

impl Prompts {
    pub fn for_kind(&self, kind: UnitKind) -> &str {
        match kind {
            UnitKind::Intent => &self.intent,
            UnitKind::ActionRun => &self.action,
        }
    }
}

/// Entry types the model may use.
pub const TYPES: &[EntryType] = &[
    EntryType::Fact,
    EntryType::Decision,
    EntryType::Procedure,
    EntryType::DebuggingMethod,
    EntryType::Warning,
    EntryType::Preference,
    EntryType::OpenQuestion,
];

/// Client-side limits of a reply (some are deliberately not in the schema: a large
/// `maxLength` breaks some servers' grammar compilers).
pub const MAX_ENTRIES: usize = 100;
pub const MAX_TITLE: usize = 500;
pub const MAX_BODY: usize = 5000;
pub const MAX_TRIGGER: usize = 500;
pub const MAX_ENTITIES: usize = 50;
pub const MAX_ENTITY: usize = 200;

/// The strict JSON schema of a reply.
pub fn schema() -> Value {
    let types: Vec<&str> = TYPES.iter().map(|t| t.as_str()).collect();
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["entries"],
        "properties": {
            "entries": {
                "type": "array",
                "maxItems": MAX_ENTRIES,
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["type", "title", "body", "trigger", "confidence", "entities", "evidence"],
                    "properties": {
                        "type": {"type": "string", "enum": types},
                        "title": {"type": "string", "minLength": 1, "maxLength": MAX_TITLE},
                        "body": {"type": "string", "minLength": 1},
                        "trigger": {"type": "string"},
                        "confidence": {"type": "number"},
                        "entities": {
                            "type": "array",
                            "maxItems": MAX_ENTITIES,
                            "items": {"type": "string", "maxLength": MAX_ENTITY}
                        },
                        "evidence": {
                            "type": "object",
                            "additionalProperties": false,
                            "required": ["first", "last"],
                            "properties": {
                                "first": {"type": "integer"},
                                "last": {"type": "integer"}
                            }
                        }
                    }
                }
            }
        }
    })
}

/// The user message of one unit (or one piece of a split unit).
pub fn user_message(unit: &Unit, text: &str) -> String {
    match &unit.context {
        Some(ctx) => format!(
            "CONTEXT (the request this work answered; do not take entries from it):\n{ctx}\n\nSEGMENT:\n{text}"
        ),
        None => text.to_owned(),
    }
}

/// Object keys sorted at every level, so equal settings always hash the same.
pub fn canonical(v: &Value) -> Value {
    match v {
        Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            let mut out = serde_json::Map::new();
            for k in keys {
                out.insert(k.clone(), canonical(&o[k]));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

pub fn sha256_hex(s: &str) -> String {
    hex::encode(Sha256::digest(s.as_bytes()))
}

/// What makes a generation: model identity, segmenter and its parameters, prompts, schema and
/// request shape. The endpoint is deliberately left out (the same model behind another URL is
/// the same generation).
#[derive(Debug, Clone, PartialEq)]
pub struct Identity {
    pub model: String,
    pub deployment: String,
    pub max_window_chars: usize,
    pub prompts: Prompts,
    pub temperature: f64,
    pub max_tokens: u32,
    pub extra_body: serde_json::Map<String, Value>,
}

impl Identity {
    pub fn params(&self) -> Value {
        json!({
            "max_window_chars": self.max_window_chars,
            "tool_chars": segment::TOOL_CHARS,
            "context_chars": segment::CONTEXT_CHARS,
        })
    }

    /// The fingerprinted document.
    pub fn document(&self) -> Value {
        canonical(&json!({
            "protocol": PROTOCOL,
            "model": {"model": self.model, "deployment": self.deployment},
            "segmenter": {"name": segment::SEGMENTER, "params": self.params()},
            "prompts": {
                "intent": sha256_hex(&self.prompts.intent),
                "action": sha256_hex(&self.prompts.action),
            },
            "schema": sha256_hex(&canonical(&schema()).to_string()),
            "request": {
                "temperature": self.temperature,
                "max_tokens": self.max_tokens,
                "extra_body": Value::Object(self.extra_body.clone()),
            },
        }))
    }

    pub fn fingerprint(&self) -> String {
        sha256_hex(&self.document().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id() -> Identity {
        Identity {
            model: "m".into(),
            deployment: String::new(),
            max_window_chars: 50_000,
            prompts: Prompts::default(),
            temperature: 0.0,
            max_tokens: 4096,
            extra_body: serde_json::Map::new(),
        }
    }

    #[test]
    fn fingerprint_is_stable_and_sensitive() {
        assert_eq!(id().fingerprint(), id().fingerprint());
        assert_eq!(id().fingerprint().len(), 64);
        let mut changes: Vec<Identity> = Vec::new();
        for f in [
            |i: &mut Identity| i.model = "n".into(),
            |i: &mut Identity| i.deployment = "d".into(),
            |i: &mut Identity| i.max_window_chars = 10,
            |i: &mut Identity| i.prompts.intent.push('!'),
            |i: &mut Identity| i.prompts.action.push('!'),
            |i: &mut Identity| i.temperature = 0.2,
            |i: &mut Identity| i.max_tokens = 1,
            |i: &mut Identity| {
                i.extra_body.insert("top_p".into(), json!(0.9));
            },
        ] {
            let mut i = id();
            f(&mut i);
            changes.push(i);
        }
        for c in &changes {
            assert_ne!(c.fingerprint(), id().fingerprint(), "{c:?}");
        }
        // Key order in extra_body does not matter.
        let mut a = id();
        a.extra_body.insert("a".into(), json!(1));
        a.extra_body.insert("b".into(), json!(2));
        let mut b = id();
        b.extra_body.insert("b".into(), json!(2));
        b.extra_body.insert("a".into(), json!(1));
        assert_eq!(a.fingerprint(), b.fingerprint());
    }

    #[test]
    fn profiles_by_name_and_model_prefix() {
        assert_eq!(profile("", "Qwen3-8B").unwrap().name, "qwen");
        assert_eq!(profile("", "llama3").unwrap().name, "base");
        assert_eq!(profile("base", "qwen3").unwrap().name, "base");
        assert!(profile("mistral", "x").is_none());
        assert!(
            profile("qwen", "x")
                .unwrap()
                .extra_body
                .contains_key("chat_template_kwargs")
        );
    }
}
