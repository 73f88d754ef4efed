//! Codex rollouts shaped like the real ones.
//!
//! The record shapes (field sets of `session_meta`, `turn_context`, `response_item` messages,
//! reasoning, function calls and outputs, `event_msg` token counts, task start/complete,
//! `compacted`) are the real ones from `tests/fixtures/codex/small.jsonl` (CLI 0.146). That
//! file is trimmed ("[trimmed for fixture]"), so its text sizes are not real: prompt, reply,
//! reasoning and tool-output sizes, the number of calls per turn, the commands run and the
//! compaction rate are drawn from the real Claude Code sessions instead (see
//! [`crate::claude::Sizes`]). The base instructions in `session_meta` are sized like a real
//! rollout's (about 12 KB).

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{Value, json};

use crate::claude::Sizes;
use crate::rng::Rng;
use crate::template::{Session, Template, instantiate, timestamp};
use crate::text::TextGen;

const BASE_INSTRUCTIONS_BYTES: usize = 12_000;

pub struct CodexModel {
    session_meta: Template,
    turn_context: Template,
    task_started: Template,
    user_item: Template,
    user_event: Template,
    reasoning: Template,
    agent_reasoning: Template,
    function_call: Template,
    function_output: Template,
    token_count: Template,
    assistant_item: Template,
    agent_message: Template,
    task_complete: Template,
    compacted: Template,
    context_compacted: Template,
}

impl CodexModel {
    pub fn learn(dir: &Path) -> Result<CodexModel> {
        let path = dir.join("small.jsonl");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let lines: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let find = |ty: &str, payload: Option<&str>, role: Option<&str>| -> Result<Template> {
            lines
                .iter()
                .find(|v| {
                    v.get("type").and_then(Value::as_str) == Some(ty)
                        && payload.is_none_or(|p| v.pointer("/payload/type").and_then(Value::as_str) == Some(p))
                        && role.is_none_or(|r| v.pointer("/payload/role").and_then(Value::as_str) == Some(r))
                        // Skip the trimmed copies whose timestamp was trimmed too.
                        && v.get("timestamp").and_then(Value::as_str).is_some_and(|t| t.starts_with("20"))
                })
                .map(|v| Template::new(v.clone(), Some("/tmp/repo")))
                .with_context(|| format!("no {ty}/{payload:?} line in {}", path.display()))
        };
        Ok(CodexModel {
            session_meta: find("session_meta", None, None)?,
            turn_context: find("turn_context", None, None)?,
            task_started: find("event_msg", Some("task_started"), None)?,
            user_item: find("response_item", Some("message"), Some("user"))?,
            user_event: find("event_msg", Some("user_message"), None)?,
            reasoning: find("response_item", Some("reasoning"), None)?,
            agent_reasoning: find("event_msg", Some("agent_reasoning"), None)?,
            function_call: find("response_item", Some("function_call"), None)?,
            function_output: find("response_item", Some("function_call_output"), None)?,
            token_count: find("event_msg", Some("token_count"), None)?,
            assistant_item: find("response_item", Some("message"), Some("assistant"))?,
            agent_message: find("event_msg", Some("agent_message"), None)?,
            task_complete: find("event_msg", Some("task_complete"), None)?,
            compacted: find("compacted", None, None)?,
            context_compacted: find("event_msg", Some("context_compacted"), None)?,
        })
    }
}

pub struct SessionPlan {
    pub seed: u64,
    pub session_id: String,
    pub cwd: String,
    pub branch: String,
    pub start_ms: i64,
    pub target_bytes: usize,
    pub commits: bool,
}

struct Writer<'a> {
    m: &'a CodexModel,
    sizes: &'a Sizes,
    text: &'a TextGen,
    s: Session,
    out: Vec<u8>,
    since_compaction: f64,
    tokens: u64,
    turn_id: String,
}

impl Writer<'_> {
    fn line(&mut self, t: &Template, patch: impl FnOnce(&mut Value, &mut Session)) {
        let mut v = instantiate(t, &mut self.s, self.text);
        if let Some(p) = v.get_mut("payload")
            && let Some(obj) = p.as_object_mut()
        {
            for key in ["turn_id"] {
                if obj.contains_key(key) {
                    obj.insert(key.into(), Value::String(self.turn_id.clone()));
                }
            }
            if let Some(meta) = obj.get_mut("internal_chat_message_metadata_passthrough") {
                meta["turn_id"] = Value::String(self.turn_id.clone());
            }
            if let Some(meta) = obj.get_mut("metadata")
                && meta.is_object()
            {
                meta["turn_id"] = Value::String(self.turn_id.clone());
            }
        }
        patch(&mut v, &mut self.s);
        let before = self.out.len();
        let _ = serde_json::to_writer(&mut self.out, &v);
        self.out.push(b'\n');
        self.since_compaction += (self.out.len() - before) as f64;
    }

    fn sized(&mut self, pool: &[usize]) -> String {
        let n = pool[self.s.rng.below(pool.len().max(1))].max(1);
        self.text.text(&mut self.s.rng, n)
    }

    fn token_count(&mut self) {
        self.tokens += 2_000 + self.s.rng.below(20_000) as u64;
        let total = self.tokens;
        let m = self.m;
        self.line(&m.token_count, |v, _| {
            if let Some(info) = v.pointer_mut("/payload/info") {
                for k in ["total_token_usage", "last_token_usage"] {
                    if let Some(u) = info.get_mut(k) {
                        u["input_tokens"] = json!(total);
                        u["total_tokens"] = json!(total + 100);
                    }
                }
            }
        });
    }

    fn turn(&mut self, commit: bool, remaining: usize) {
        let m = self.m;
        self.turn_id = crate::template::uuid(&mut self.s.rng);
        self.line(&m.turn_context, |_, _| {});
        self.line(&m.task_started, |_, _| {});
        let prompt = self.sized(&self.sizes.prompts);
        let p1 = prompt.clone();
        self.line(&m.user_item, move |v, _| {
            v["payload"]["content"] = json!([{"type": "input_text", "text": p1}]);
        });
        self.line(&m.user_event, move |v, _| {
            v["payload"]["message"] = Value::String(prompt);
        });
        let sizes = self.sizes;
        // As for Claude: a session about to reach its size does not start a 148-call turn.
        let per_call =
            sizes.outputs.iter().sum::<usize>() as f64 / sizes.outputs.len().max(1) as f64 + 800.0;
        let fits = (remaining as f64 / per_call).ceil() as usize;
        let mut calls = 0;
        for _ in 0..4 {
            calls = sizes.calls_per_turn[self.s.rng.below(sizes.calls_per_turn.len().max(1))];
            if calls <= fits {
                break;
            }
        }
        let calls = calls.min(fits);
        let commit_at = commit.then(|| self.s.rng.below(calls.max(1)));
        for i in 0..calls.max(usize::from(commit)) {
            if self.s.rng.chance(sizes.p_thinking) {
                let summary = self.sized(&sizes.thinking);
                let enc_len = 400 + self.s.rng.below(2400);
                let encrypted: String = (0..enc_len)
                    .map(|_| {
                        char::from(
                            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
                                [self.s.rng.below(64)],
                        )
                    })
                    .collect();
                let s2 = summary.clone();
                self.line(&m.reasoning, move |v, _| {
                    v["payload"]["summary"] = json!([{"type": "summary_text", "text": s2}]);
                    v["payload"]["encrypted_content"] = Value::String(encrypted);
                });
                self.line(&m.agent_reasoning, move |v, _| {
                    v["payload"]["text"] = Value::String(summary);
                });
            }
            let call_id = format!(
                "call_{}",
                crate::template::fresh_id(&mut self.s.rng, "xxxxxxxxxxxxxxxxxxxxxxxx")
            );
            let (command, output) = if commit_at == Some(i) {
                let subject = self.text.vocab().sentence(&mut self.s.rng, 3, 8);
                let sha: String = (0..7)
                    .map(|_| char::from(b"0123456789abcdef"[self.s.rng.below(16)]))
                    .collect();
                (
                    format!("git add -A && git commit -m \"{subject}\""),
                    format!(
                        "[{} {sha}] {subject}\n 2 files changed, 31 insertions(+), 4 deletions(-)\n",
                        self.s.branch
                    ),
                )
            } else {
                let c = sizes.commands[self.s.rng.below(sizes.commands.len().max(1))].clone();
                (c, self.sized(&sizes.outputs))
            };
            let cwd = self.s.cwd.clone();
            let args = json!({"command": ["bash", "-lc", command], "workdir": cwd}).to_string();
            let id1 = call_id.clone();
            self.line(&m.function_call, move |v, _| {
                v["payload"]["name"] = Value::String("shell".into());
                v["payload"]["arguments"] = Value::String(args);
                v["payload"]["call_id"] = Value::String(id1);
            });
            let exit = if self.s.rng.chance(0.1) { 1 } else { 0 };
            let wall = format!("{:.1}", self.s.rng.below(90) as f64 / 10.0);
            self.line(&m.function_output, move |v, _| {
                v["payload"]["call_id"] = Value::String(call_id);
                v["payload"]["output"] = Value::String(
                    json!({"output": output, "metadata": {"exit_code": exit, "duration_seconds": wall}})
                        .to_string(),
                );
            });
            self.token_count();
        }
        let reply = self.sized(&sizes.replies);
        let (r1, r2) = (reply.clone(), reply.clone());
        self.line(&m.assistant_item, move |v, _| {
            v["payload"]["content"] = json!([{"type": "output_text", "text": r1}]);
        });
        self.line(&m.agent_message, move |v, _| {
            v["payload"]["message"] = Value::String(r2);
            if let Some(o) = v["payload"].as_object_mut() {
                o.remove("memory_citation");
            }
        });
        self.token_count();
        self.line(&m.task_complete, move |v, _| {
            v["payload"]["last_agent_message"] = Value::String(reply);
        });
        if self.since_compaction >= sizes.bytes_per_compaction {
            self.since_compaction = 0.0;
            let summary = self.sized(&sizes.summaries);
            self.line(&m.compacted, move |v, _| {
                v["payload"]["message"] = Value::String(summary);
            });
            self.line(&m.context_compacted, |_, _| {});
        }
    }
}

/// One rollout file's bytes.
pub fn session(m: &CodexModel, sizes: &Sizes, text: &TextGen, plan: &SessionPlan) -> Vec<u8> {
    let s = Session::new(
        Rng::new(plan.seed),
        plan.session_id.clone(),
        plan.cwd.clone(),
        plan.branch.clone(),
        plan.start_ms,
    );
    let mut w = Writer {
        m,
        sizes,
        text,
        s,
        out: Vec::with_capacity(plan.target_bytes + 64 * 1024),
        since_compaction: 0.0,
        tokens: 0,
        turn_id: String::new(),
    };
    let sid = plan.session_id.clone();
    let branch = plan.branch.clone();
    let instructions = text.text(&mut w.s.rng, BASE_INSTRUCTIONS_BYTES);
    let commit_hash: String = (0..40)
        .map(|_| char::from(b"0123456789abcdef"[w.s.rng.below(16)]))
        .collect();
    let repo = plan.cwd.rsplit('/').next().unwrap_or("repo").to_owned();
    w.line(&m.session_meta, move |v, _| {
        let p = &mut v["payload"];
        p["id"] = Value::String(sid.clone());
        p["session_id"] = Value::String(sid);
        p["base_instructions"] = json!({"text": instructions});
        p["git"] = json!({
            "branch": branch,
            "commit_hash": commit_hash,
            "repository_url": format!("https://example.invalid/dev/{repo}.git"),
        });
    });
    let mut committed = !plan.commits;
    while w.out.len() < plan.target_bytes {
        let commit = !committed && (w.s.rng.chance(0.3) || w.out.len() * 2 > plan.target_bytes);
        committed |= commit;
        let remaining = plan.target_bytes.saturating_sub(w.out.len());
        w.turn(commit, remaining);
    }
    if !committed {
        w.turn(true, 0);
    }
    w.out
}

/// One more turn for an existing rollout.
pub fn append_turn(
    m: &CodexModel,
    sizes: &Sizes,
    text: &TextGen,
    seed: u64,
    existing: &[u8],
) -> Option<Vec<u8>> {
    let first: Value = serde_json::from_slice(existing.split(|b| *b == b'\n').next()?).ok()?;
    let last_ts = existing
        .split(|b| *b == b'\n')
        .rev()
        .find_map(|l| serde_json::from_slice::<Value>(l).ok())
        .and_then(|v| {
            v.get("timestamp")?
                .as_str()?
                .parse::<jiff::Timestamp>()
                .ok()
        })
        .map_or(0, |t| t.as_millisecond());
    let p = first.get("payload")?;
    let s = Session::new(
        Rng::new(seed),
        p.get("id")?.as_str()?.to_owned(),
        p.get("cwd")?.as_str()?.to_owned(),
        p.pointer("/git/branch")
            .and_then(Value::as_str)
            .unwrap_or("main")
            .to_owned(),
        last_ts,
    );
    let short = Sizes {
        calls_per_turn: vec![1],
        ..sizes.clone()
    };
    let mut w = Writer {
        m,
        sizes: &short,
        text,
        s,
        out: Vec::new(),
        since_compaction: 0.0,
        tokens: 100_000,
        turn_id: String::new(),
    };
    w.turn(false, usize::MAX);
    Some(w.out)
}

/// Where Codex writes a rollout started at `start_ms`.
pub fn rollout_path(start_ms: i64, session_id: &str) -> String {
    let ts = timestamp(start_ms); // 2026-08-03T10:48:56.000Z
    let date = &ts[..10];
    let (y, rest) = date.split_at(4);
    let (mo, d) = (&rest[1..3], &rest[4..6]);
    let time = ts[11..19].replace(':', "-");
    format!("{y}/{mo}/{d}/rollout-{date}T{time}-{session_id}.jsonl")
}
