//! OpenAI's chat message shape, which several agents keep their conversations in (Grok Build,
//! Hermes Agent, Mistral Vibe): an `assistant` message's `content`, its reasoning
//! (`reasoning_content`, or `reasoning`) and `tool_calls[{id, function{name, arguments}}]` (the
//! arguments JSON text or a value; Grok's newer lines put `name` and `arguments` on the call
//! itself), and a `tool` message answering one call by `tool_call_id`. One reading of it; each
//! agent names its tools' kinds, and reads its own prompts (each marks the ones it wrote itself
//! its own way).

use std::collections::BTreeMap;

use serde_json::Value;

use super::edited_path;
use super::{
    MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES, ToolOutput, cap_json, cap_text, str_at, text_value,
};
use crate::archive::{Agent, Record, RecordKind, ToolKind};

/// The arguments naming the file an edit writes, as the agents reading this shape name them.
const PATH_KEYS: [&str; 4] = ["target_file", "path", "file_path", "filePath"];

/// How one agent's chat messages read.
pub(crate) struct Chat {
    pub agent: Agent,
    /// The agent's tool names in Cairn's kinds.
    pub tool_kind: fn(&str) -> ToolKind,
}

impl Chat {
    /// The records of an assistant message, each its own block: its reasoning (0), its text (1),
    /// then each call (2 on). Every call is remembered in `pending` until its result names it.
    pub fn assistant(
        &self,
        msg: &Value,
        pending: &mut BTreeMap<String, String>,
        base: Record,
        out: &mut Vec<Record>,
    ) {
        let base = Record {
            role: Some("assistant".to_owned()),
            ..base
        };
        let reasoning = str_at(msg, &["reasoning_content"]).or_else(|| str_at(msg, &["reasoning"]));
        if let Some(text) = reasoning.filter(|t| !t.is_empty()) {
            out.push(Record {
                kind: Some(RecordKind::Reasoning),
                source_event_kind: format!("{}:assistant:reasoning", self.agent),
                text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                ..base.clone()
            });
        }
        if let Some(text) = msg.get("content").and_then(text_value) {
            out.push(Record {
                block: 1,
                kind: Some(RecordKind::Message),
                source_event_kind: format!("{}:assistant", self.agent),
                text: Some(cap_text(text, MAX_TEXT_BYTES)),
                ..base.clone()
            });
        }
        let calls = msg.get("tool_calls").and_then(Value::as_array);
        for (i, call) in calls.into_iter().flatten().enumerate() {
            let f = call.get("function").unwrap_or(call);
            let name = str_at(f, &["name"]).unwrap_or("unknown").to_owned();
            let id = str_at(call, &["id"]);
            if let Some(id) = id {
                super::remember_call(pending, id.to_owned(), name.clone());
            }
            let mut input = arguments(f.get("arguments"));
            let kind = (self.tool_kind)(&name);
            let file_paths = edited_path(kind, input.as_ref(), &PATH_KEYS);
            if let Some(i) = input.as_mut() {
                cap_json(i, MAX_INPUT_STRING_BYTES);
            }
            out.push(Record {
                block: u32::try_from(i + 2).unwrap_or(u32::MAX),
                kind: Some(RecordKind::ToolCall),
                source_event_kind: format!("{}:assistant:tool_call", self.agent),
                tool_kind: Some(kind),
                tool_name: Some(name),
                tool_input: input,
                call_id: id.map(str::to_owned),
                file_paths,
                ..base.clone()
            });
        }
    }

    /// A tool message's result, named by the call it answers (else by its own `tool_name` or
    /// `name`); `failed` is the agent's own word on it, when it gives one.
    pub fn tool(
        &self,
        msg: &Value,
        pending: &mut BTreeMap<String, String>,
        failed: Option<bool>,
        base: Record,
    ) -> Record {
        let call_id = str_at(msg, &["tool_call_id"]);
        let name = call_id.and_then(|id| pending.remove(id)).or_else(|| {
            str_at(msg, &["tool_name"])
                .or_else(|| str_at(msg, &["name"]))
                .map(str::to_owned)
        });
        let output = ToolOutput {
            name,
            call_id: call_id.map(str::to_owned),
            text: msg.get("content").and_then(text_value),
            failed,
            ..ToolOutput::default()
        };
        output.record(
            format!("{}:tool", self.agent),
            self.tool_kind,
            Record {
                role: Some("tool".to_owned()),
                ..base
            },
        )
    }
}

/// A call's arguments: JSON text parsed (the text itself when it is not JSON), or a value.
fn arguments(v: Option<&Value>) -> Option<Value> {
    match v? {
        Value::String(s) => {
            Some(serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone())))
        }
        Value::Null => None,
        other => Some(other.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::Outcome;
    use serde_json::json;

    #[test]
    fn calls_in_either_nesting_pair_with_their_results() {
        let chat = Chat {
            agent: Agent::Grok,
            tool_kind: ToolKind::of,
        };
        let mut pending = BTreeMap::new();
        let mut out = Vec::new();
        chat.assistant(
            &json!({"content": "Editing.", "reasoning": "first", "tool_calls": [
                {"id": "c1", "function": {"name": "edit_file", "arguments": "{\"target_file\":\"/w/a\"}"}},
                {"id": "c2", "name": "bash", "arguments": {"command": "make"}},
                {"id": "c3", "function": {"name": "bash", "arguments": "not json"}}]}),
            &mut pending,
            Record::default(),
            &mut out,
        );
        let blocks: Vec<_> = out.iter().map(|r| (r.block, r.kind)).collect();
        assert_eq!(
            blocks,
            [
                (0, Some(RecordKind::Reasoning)),
                (1, Some(RecordKind::Message)),
                (2, Some(RecordKind::ToolCall)),
                (3, Some(RecordKind::ToolCall)),
                (4, Some(RecordKind::ToolCall))
            ]
        );
        assert_eq!(out[2].file_paths, ["/w/a"]);
        assert_eq!(out[3].tool_input, Some(json!({"command": "make"})));
        assert_eq!(out[4].tool_input, Some(json!("not json")));
        let result = chat.tool(
            &json!({"tool_call_id": "c2", "content": "exit code 2"}),
            &mut pending,
            None,
            Record::default(),
        );
        assert_eq!(
            (
                result.tool_name.as_deref(),
                result.exit_code,
                result.outcome
            ),
            (Some("bash"), Some(2), Some(Outcome::Failed))
        );
        let orphan = chat.tool(
            &json!({"tool_call_id": "c9", "name": "read_file", "content": "x"}),
            &mut pending,
            Some(false),
            Record::default(),
        );
        assert_eq!(
            (orphan.tool_name.as_deref(), orphan.outcome),
            (Some("read_file"), Some(Outcome::Succeeded))
        );
    }
}
