//! Claude Code sessions shaped like the real ones in `tests/fixtures/claude/`.
//!
//! The real main transcripts are cut into *segments*: a prompt segment (the human prompt and
//! what follows it until the assistant answers), and one segment per assistant line (a
//! `tool_use` with its progress lines and `tool_result`, a text reply, a thinking block), plus
//! the compaction segment (`compact_boundary` and the summary). The model keeps:
//! - the segments themselves, as templates (record types, field sets and sizes are the real ones);
//! - the number of tool calls per turn, as the list of observed counts;
//! - how often a call or the closing reply is preceded by thinking or by text;
//! - how many bytes of transcript pass per compaction, and how many `Task` calls got a sub-agent
//!   file; the sub-agent and compaction side files (`<session>/subagents/agent-*.jsonl`).
//!
//! A generated session is a sequence of turns sampled from that model until it reaches its
//! target size. Some sessions commit on their branch (a `Bash` call running `git commit` whose
//! output names the branch), which is what links them to the branch for `skim`.

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::Value;

use crate::rng::Rng;
use crate::template::{Session, Template, instantiate, set_first, uuid};
use crate::text::TextGen;

type Segment = Vec<Template>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Prompt,
    ToolUse,
    Text,
    Thinking,
    Compaction,
    Rest,
}

#[derive(Default)]
pub struct ClaudeModel {
    preambles: Vec<Segment>,
    prompts: Vec<Segment>,
    tools: Vec<Segment>,
    /// Indices into `tools` of `Task`/`Agent` calls (the ones that may get a sub-agent file).
    tasks: Vec<usize>,
    /// Indices into `tools` of `Bash` calls (rewritten into `git commit` calls).
    bash: Vec<usize>,
    texts: Vec<Segment>,
    thinking: Vec<Segment>,
    compactions: Vec<Segment>,
    calls_per_turn: Vec<usize>,
    p_thinking: f64,
    p_text: f64,
    /// Real main-transcript bytes per compaction.
    bytes_per_compaction: f64,
    /// Sub-agent files per `Task` call.
    p_subagent: f64,
    /// The sub-agent transcripts: one prompt and its calls, cut the same way.
    sub_prompts: Vec<Segment>,
    sub_tools: Vec<Segment>,
    sub_texts: Vec<Segment>,
    sub_calls: Vec<usize>,
    /// The compaction side-agent transcripts (`agent-acompact-*.jsonl`), line by line.
    acompact: Vec<Segment>,
    /// Mean bytes of a tool segment (to keep a turn within what is left of a session's size).
    mean_tool_bytes: f64,
}

/// A line's kind, for cutting a real transcript into segments.
fn kind(v: &Value) -> Kind {
    let t = v.get("type").and_then(Value::as_str).unwrap_or("");
    match t {
        "assistant" => {
            let blocks = v.pointer("/message/content").and_then(Value::as_array);
            let has = |ty: &str| {
                blocks.is_some_and(|b| {
                    b.iter()
                        .any(|x| x.get("type").and_then(Value::as_str) == Some(ty))
                })
            };
            if has("tool_use") {
                Kind::ToolUse
            } else if has("text") {
                Kind::Text
            } else if has("thinking") {
                Kind::Thinking
            } else {
                Kind::Text
            }
        }
        "user" => {
            let flag = |k: &str| v.get(k).and_then(Value::as_bool).unwrap_or(false);
            if flag("isCompactSummary") {
                return Kind::Compaction;
            }
            let content = v.pointer("/message/content");
            let tool_result = content.and_then(Value::as_array).is_some_and(|b| {
                b.iter()
                    .any(|x| x.get("type").and_then(Value::as_str) == Some("tool_result"))
            });
            if tool_result || flag("isMeta") {
                Kind::Rest
            } else {
                Kind::Prompt
            }
        }
        "system" if v.get("subtype").and_then(Value::as_str) == Some("compact_boundary") => {
            Kind::Compaction
        }
        _ => Kind::Rest,
    }
}

fn tool_name(seg: &Segment) -> Option<&str> {
    seg.first()?
        .value
        .pointer("/message/content")?
        .as_array()?
        .iter()
        .find(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))?
        .get("name")?
        .as_str()
}

/// The call ids of a segment's blocks of `kind`: `tool_use` blocks by `id`, `tool_result`
/// blocks by `tool_use_id`.
fn block_ids<'s>(seg: &'s Segment, kind: &str, key: &str) -> Vec<Option<&'s str>> {
    seg.iter()
        .filter_map(|line| line.value.pointer("/message/content")?.as_array())
        .flatten()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some(kind))
        .map(|b| b.get(key).and_then(Value::as_str))
        .collect()
}

/// A segment that can become a `git commit` call: one call, and that call's result (a real
/// session's interrupted or parallel calls would leave the commit without its output, and so
/// without the evidence skim finds it by).
fn one_call_with_result(seg: &Segment) -> bool {
    match (
        block_ids(seg, "tool_use", "id").as_slice(),
        block_ids(seg, "tool_result", "tool_use_id").as_slice(),
    ) {
        ([Some(call)], [Some(result)]) => call == result,
        _ => false,
    }
}

fn read_lines(path: &Path) -> Result<Vec<Value>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect())
}

fn file_cwd(lines: &[Value]) -> Option<String> {
    lines
        .iter()
        .find_map(|v| v.get("cwd").and_then(Value::as_str))
        .map(str::to_owned)
}

/// Cut one transcript into segments. Returns (preamble, segments with kinds, calls per turn,
/// tool/text segments preceded by thinking, … by text, count of tool and closing segments).
struct Cut {
    preamble: Segment,
    segments: Vec<(Kind, Segment)>,
    calls_per_turn: Vec<usize>,
    after_thinking: usize,
    after_text: usize,
    tool_segments: usize,
}

fn cut(lines: Vec<Value>) -> Cut {
    let cwd = file_cwd(&lines);
    let mut out = Cut {
        preamble: Vec::new(),
        segments: Vec::new(),
        calls_per_turn: Vec::new(),
        after_thinking: 0,
        after_text: 0,
        tool_segments: 0,
    };
    let mut current: Option<(Kind, Segment)> = None;
    let mut calls: Option<usize> = None;
    let mut previous = Kind::Rest;
    for v in lines {
        let k = kind(&v);
        let t = Template::new(v, cwd.as_deref());
        let starts = match k {
            Kind::Prompt | Kind::ToolUse | Kind::Text | Kind::Thinking => true,
            // The summary line continues the boundary's segment.
            Kind::Compaction => !matches!(current, Some((Kind::Compaction, ref s)) if s.len() == 1),
            Kind::Rest => false,
        };
        if !starts {
            match current.as_mut() {
                Some((_, seg)) => seg.push(t),
                None => out.preamble.push(t),
            }
            continue;
        }
        if let Some(done) = current.take() {
            previous = done.0;
            out.segments.push(done);
        }
        match k {
            Kind::Prompt => {
                if let Some(n) = calls.replace(0) {
                    out.calls_per_turn.push(n);
                }
            }
            Kind::ToolUse => {
                if let Some(n) = calls.as_mut() {
                    *n += 1;
                }
                out.tool_segments += 1;
                match previous {
                    Kind::Thinking => out.after_thinking += 1,
                    Kind::Text => out.after_text += 1,
                    _ => {}
                }
            }
            _ => {}
        }
        current = Some((k, vec![t]));
    }
    if let Some(done) = current {
        out.segments.push(done);
    }
    if let Some(n) = calls {
        out.calls_per_turn.push(n);
    }
    out
}

impl ClaudeModel {
    /// Learn from the real transcripts under `dir` (`tests/fixtures/claude`). `small.jsonl` is
    /// left out: it is a partly synthetic schema-coverage file, not a session.
    pub fn learn(dir: &Path) -> Result<ClaudeModel> {
        let mut m = ClaudeModel::default();
        let mut main_bytes = 0usize;
        let mut compactions = 0usize;
        let mut task_calls = 0usize;
        let mut task_files = 0usize;
        let mut mains: Vec<_> = std::fs::read_dir(dir)
            .with_context(|| format!("cannot read {}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .filter(|p| p.file_name().is_some_and(|n| n != "small.jsonl"))
            .collect();
        mains.sort();
        let (mut after_thinking, mut after_text, mut tool_segments) = (0, 0, 0);
        for path in &mains {
            let lines = read_lines(path)?;
            main_bytes += lines.iter().map(|v| v.to_string().len() + 1).sum::<usize>();
            let c = cut(lines);
            after_thinking += c.after_thinking;
            after_text += c.after_text;
            tool_segments += c.tool_segments;
            if !c.preamble.is_empty() {
                m.preambles.push(c.preamble);
            }
            m.calls_per_turn.extend(c.calls_per_turn);
            for (k, seg) in c.segments {
                match k {
                    Kind::Prompt => m.prompts.push(seg),
                    Kind::ToolUse => {
                        let name = tool_name(&seg).unwrap_or("");
                        if name == "Task" || name == "Agent" {
                            task_calls += 1;
                            m.tasks.push(m.tools.len());
                        }
                        if name == "Bash" && one_call_with_result(&seg) {
                            m.bash.push(m.tools.len());
                        }
                        m.tools.push(seg);
                    }
                    Kind::Text => m.texts.push(seg),
                    Kind::Thinking => m.thinking.push(seg),
                    Kind::Compaction => {
                        compactions += 1;
                        m.compactions.push(seg);
                    }
                    Kind::Rest => {}
                }
            }
            // Side files of this session.
            let side = path.with_extension("").join("subagents");
            if let Ok(entries) = std::fs::read_dir(&side) {
                let mut files: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
                files.sort();
                for f in files {
                    let name = f
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    let lines = read_lines(&f)?;
                    if name.starts_with("agent-acompact") {
                        let cwd = file_cwd(&lines);
                        m.acompact.push(
                            lines
                                .into_iter()
                                .map(|v| Template::new(v, cwd.as_deref()))
                                .collect(),
                        );
                    } else {
                        task_files += 1;
                        let c = cut(lines);
                        m.sub_calls.extend(c.calls_per_turn);
                        for (k, seg) in c.segments {
                            match k {
                                Kind::Prompt => m.sub_prompts.push(seg),
                                Kind::ToolUse => m.sub_tools.push(seg),
                                Kind::Text => m.sub_texts.push(seg),
                                _ => {}
                            }
                        }
                    }
                }
            }
        }
        anyhow::ensure!(
            !m.prompts.is_empty() && !m.tools.is_empty() && !m.texts.is_empty(),
            "no Claude sessions to learn from in {}",
            dir.display()
        );
        m.mean_tool_bytes = m
            .tools
            .iter()
            .map(|seg| seg.iter().map(|t| t.bytes).sum::<usize>())
            .sum::<usize>() as f64
            / m.tools.len() as f64;
        let denom = tool_segments.max(1) as f64;
        m.p_thinking = after_thinking as f64 / denom;
        m.p_text = after_text as f64 / denom;
        m.bytes_per_compaction = main_bytes as f64 / compactions.max(1) as f64;
        m.p_subagent = if task_calls == 0 {
            0.0
        } else {
            (task_files as f64 / task_calls as f64).min(1.0)
        };
        Ok(m)
    }

    /// Text sizes and call counts of the real sessions, for generators whose own fixtures are
    /// trimmed (Codex).
    pub fn sizes(&self) -> Sizes {
        fn text_len(v: &Value) -> usize {
            match v {
                Value::String(s) => s.len(),
                Value::Array(items) => items
                    .iter()
                    .map(|b| {
                        b.get("text")
                            .or_else(|| b.get("thinking"))
                            .or_else(|| b.get("content"))
                            .map_or(0, text_len)
                    })
                    .sum(),
                _ => 0,
            }
        }
        let first_len = |seg: &Segment| {
            seg.first()
                .and_then(|t| t.value.pointer("/message/content"))
                .map_or(0, text_len)
        };
        let mut outputs = Vec::new();
        let mut commands = Vec::new();
        for seg in &self.tools {
            for t in seg {
                if let Some(blocks) = t
                    .value
                    .pointer("/message/content")
                    .and_then(Value::as_array)
                {
                    for b in blocks {
                        match b.get("type").and_then(Value::as_str) {
                            Some("tool_result") => {
                                outputs.push(b.get("content").map_or(0, text_len));
                            }
                            Some("tool_use") => {
                                if let Some(c) = b.pointer("/input/command").and_then(Value::as_str)
                                {
                                    let c = match &t.cwd {
                                        Some(cwd) => c.replace(cwd.as_str(), "."),
                                        None => c.to_owned(),
                                    };
                                    commands.push(c);
                                }
                            }
                            _ => {}
                        }
                    }
                }
            }
        }
        let nonzero = |v: Vec<usize>| -> Vec<usize> {
            let v: Vec<usize> = v.into_iter().filter(|n| *n > 0).collect();
            if v.is_empty() { vec![200] } else { v }
        };
        Sizes {
            prompts: nonzero(self.prompts.iter().map(first_len).collect()),
            replies: nonzero(self.texts.iter().map(first_len).collect()),
            thinking: nonzero(self.thinking.iter().map(first_len).collect()),
            outputs: nonzero(outputs),
            summaries: nonzero(
                self.compactions
                    .iter()
                    .filter_map(|seg| seg.get(1))
                    .filter_map(|t| t.value.pointer("/message/content"))
                    .map(text_len)
                    .collect(),
            ),
            commands: if commands.is_empty() {
                vec!["ls".to_owned()]
            } else {
                commands
            },
            calls_per_turn: self.calls_per_turn.clone(),
            p_thinking: self.p_thinking,
            bytes_per_compaction: self.bytes_per_compaction,
        }
    }

    pub fn describe(&self) -> String {
        format!(
            "claude model: {} prompt, {} tool, {} text, {} thinking, {} compaction segments; \
             calls per turn {:?}; p(thinking) {:.2}, p(text) {:.2}; one compaction per {:.1} MB; \
             p(sub-agent file | Task) {:.2}",
            self.prompts.len(),
            self.tools.len(),
            self.texts.len(),
            self.thinking.len(),
            self.compactions.len(),
            self.calls_per_turn,
            self.p_thinking,
            self.p_text,
            self.bytes_per_compaction / 1e6,
            self.p_subagent
        )
    }
}

/// Sizes and counts of the real sessions (bytes of text, calls per turn).
#[derive(Debug, Clone)]
pub struct Sizes {
    pub prompts: Vec<usize>,
    pub replies: Vec<usize>,
    pub thinking: Vec<usize>,
    pub outputs: Vec<usize>,
    pub summaries: Vec<usize>,
    pub commands: Vec<String>,
    pub calls_per_turn: Vec<usize>,
    pub p_thinking: f64,
    pub bytes_per_compaction: f64,
}

/// One generated file: where it goes (relative to the session's project dir) and its bytes.
pub struct OutFile {
    pub rel: String,
    pub bytes: Vec<u8>,
}

/// What a session should look like.
pub struct SessionPlan {
    pub seed: u64,
    pub session_id: String,
    pub cwd: String,
    pub branch: String,
    pub start_ms: i64,
    pub target_bytes: usize,
    /// Commit on the branch in one of the turns (links the session to the branch).
    pub commits: bool,
}

struct Writer<'a> {
    model: &'a ClaudeModel,
    text: &'a TextGen,
    s: Session,
    out: Vec<u8>,
    since_compaction: f64,
    side: Vec<OutFile>,
}

impl Writer<'_> {
    fn emit(&mut self, seg: &Segment) -> Vec<Value> {
        self.s.ids.clear();
        let mut lines = Vec::with_capacity(seg.len());
        for t in seg {
            lines.push(instantiate(t, &mut self.s, self.text));
        }
        lines
    }

    fn write(&mut self, lines: &[Value]) {
        for v in lines {
            let before = self.out.len();
            // Writing a Value to a Vec cannot fail.
            let _ = serde_json::to_writer(&mut self.out, v);
            self.out.push(b'\n');
            self.since_compaction += (self.out.len() - before) as f64;
        }
    }

    fn pick<'s>(&mut self, pool: &'s [Segment]) -> &'s Segment {
        &pool[self.s.rng.below(pool.len())]
    }

    /// Tool calls for the next turn: drawn from the real counts, but a session about to reach
    /// its size does not start a 148-call turn (redrawn a few times, then capped).
    fn calls(&mut self, remaining: usize) -> usize {
        let m = self.model;
        let fits = (remaining as f64 / m.mean_tool_bytes).ceil() as usize;
        let mut calls = 0;
        for _ in 0..4 {
            calls = m.calls_per_turn[self.s.rng.below(m.calls_per_turn.len().max(1))];
            if calls <= fits {
                return calls;
            }
        }
        calls.min(fits)
    }

    fn turn(&mut self, commit: bool, remaining: usize) {
        let m = self.model;
        let prompt = self.pick(&m.prompts);
        let lines = self.emit(prompt);
        self.write(&lines);
        let calls = self.calls(remaining);
        let commit_at = if commit {
            Some(self.s.rng.below(calls + 1))
        } else {
            None
        };
        for i in 0..=calls {
            if commit_at == Some(i) && !m.bash.is_empty() {
                let lines = self.commit_call();
                self.write(&lines);
            }
            if i == calls {
                break;
            }
            self.preface();
            let idx = self.s.rng.below(m.tools.len());
            let lines = self.emit(&m.tools[idx]);
            self.write(&lines);
            if m.tasks.contains(&idx) && self.s.rng.chance(m.p_subagent) {
                self.subagent();
            }
        }
        self.preface();
        let reply = self.pick(&m.texts);
        let lines = self.emit(reply);
        self.write(&lines);
        if !m.compactions.is_empty() && self.since_compaction >= m.bytes_per_compaction {
            self.since_compaction = 0.0;
            let seg = self.pick(&m.compactions);
            let lines = self.emit(seg);
            self.write(&lines);
            self.acompact();
        }
    }

    fn preface(&mut self) {
        let m = self.model;
        if !m.thinking.is_empty() && self.s.rng.chance(m.p_thinking) {
            let seg = self.pick(&m.thinking);
            let lines = self.emit(seg);
            self.write(&lines);
        }
        if self.s.rng.chance(m.p_text) {
            let seg = self.pick(&m.texts);
            let lines = self.emit(seg);
            self.write(&lines);
        }
    }

    /// A real `Bash` call rewritten to run `git commit` on the session's branch.
    fn commit_call(&mut self) -> Vec<Value> {
        let m = self.model;
        let idx = m.bash[self.s.rng.below(m.bash.len())];
        let mut lines = self.emit(&m.tools[idx]);
        let subject = self.text.vocab().sentence(&mut self.s.rng, 3, 8);
        let sha: String = (0..7)
            .map(|_| char::from(b"0123456789abcdef"[self.s.rng.below(16)]))
            .collect();
        let command = format!("git add -A && git commit -m \"{subject}\"");
        let output = format!(
            "[{} {sha}] {subject}\n {} files changed, {} insertions(+), {} deletions(-)",
            self.s.branch,
            1 + self.s.rng.below(6),
            1 + self.s.rng.below(200),
            self.s.rng.below(80)
        );
        for v in &mut lines {
            match v.get("type").and_then(Value::as_str) {
                Some("assistant") => {
                    set_first(v, "command", &command);
                }
                Some("user") => {
                    if let Some(blocks) = v
                        .pointer_mut("/message/content")
                        .and_then(Value::as_array_mut)
                    {
                        for b in blocks.iter_mut().filter(|b| {
                            b.get("type").and_then(Value::as_str) == Some("tool_result")
                        }) {
                            b["content"] = Value::String(output.clone());
                            b["is_error"] = Value::Bool(false);
                        }
                    }
                    if let Some(r) = v.get_mut("toolUseResult")
                        && r.is_object()
                    {
                        r["stdout"] = Value::String(output.clone());
                        r["stderr"] = Value::String(String::new());
                    }
                }
                _ => {}
            }
        }
        lines
    }

    /// A sub-agent transcript of this session: `<session>/subagents/agent-<id>.jsonl`.
    fn subagent(&mut self) {
        let m = self.model;
        if m.sub_prompts.is_empty() || m.sub_tools.is_empty() {
            return;
        }
        let agent_id: String = (0..7)
            .map(|_| char::from(b"0123456789abcdef"[self.s.rng.below(16)]))
            .collect();
        let mut sub = Session::new(
            Rng::new(self.s.rng.next_u64()),
            self.s.session_id.clone(),
            self.s.cwd.clone(),
            self.s.branch.clone(),
            self.s.clock_ms,
        );
        sub.sidechain = true;
        sub.agent_id = Some(agent_id.clone());
        let mut w = Writer {
            model: m,
            text: self.text,
            s: sub,
            out: Vec::new(),
            since_compaction: 0.0,
            side: Vec::new(),
        };
        let prompt = w.pick(&m.sub_prompts);
        let lines = w.emit(prompt);
        w.write(&lines);
        let calls = m.sub_calls[w.s.rng.below(m.sub_calls.len().max(1))];
        for _ in 0..calls {
            let seg = w.pick(&m.sub_tools);
            let lines = w.emit(seg);
            w.write(&lines);
        }
        if !m.sub_texts.is_empty() {
            let seg = w.pick(&m.sub_texts);
            let lines = w.emit(seg);
            w.write(&lines);
        }
        self.s.clock_ms = w.s.clock_ms;
        self.side.push(OutFile {
            rel: format!(
                "{}/subagents/agent-a{agent_id}.jsonl",
                self.s.session_id.clone()
            ),
            bytes: w.out,
        });
    }

    /// The compaction summariser's side transcript.
    fn acompact(&mut self) {
        let m = self.model;
        if m.acompact.is_empty() {
            return;
        }
        let agent_id: String = (0..6)
            .map(|_| char::from(b"0123456789abcdef"[self.s.rng.below(16)]))
            .collect();
        let mut sub = Session::new(
            Rng::new(self.s.rng.next_u64()),
            self.s.session_id.clone(),
            self.s.cwd.clone(),
            self.s.branch.clone(),
            self.s.clock_ms,
        );
        sub.sidechain = true;
        sub.agent_id = Some(format!("acompact-{agent_id}"));
        let seg = &m.acompact[self.s.rng.below(m.acompact.len())];
        let mut out = Vec::new();
        for t in seg {
            let v = instantiate(t, &mut sub, self.text);
            let _ = serde_json::to_writer(&mut out, &v);
            out.push(b'\n');
        }
        self.side.push(OutFile {
            rel: format!(
                "{}/subagents/agent-acompact-{agent_id}.jsonl",
                self.s.session_id.clone()
            ),
            bytes: out,
        });
    }
}

/// Generate one session: the main transcript (`<session id>.jsonl`) and its side files.
pub fn session(model: &ClaudeModel, text: &TextGen, plan: &SessionPlan) -> Vec<OutFile> {
    let s = Session::new(
        Rng::new(plan.seed),
        plan.session_id.clone(),
        plan.cwd.clone(),
        plan.branch.clone(),
        plan.start_ms,
    );
    let mut w = Writer {
        model,
        text,
        s,
        out: Vec::with_capacity(plan.target_bytes + 64 * 1024),
        since_compaction: 0.0,
        side: Vec::new(),
    };
    if !model.preambles.is_empty() {
        let seg = w.pick(&model.preambles);
        let lines = w.emit(seg);
        w.write(&lines);
    }
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
    let mut files = vec![OutFile {
        rel: format!("{}.jsonl", plan.session_id),
        bytes: w.out,
    }];
    files.append(&mut w.side);
    files
}

/// One more turn for an existing session (the incremental and hook benchmarks): a prompt, a
/// tool call or two and the reply, continuing the session's id, cwd, branch and clock.
pub fn append_turn(
    model: &ClaudeModel,
    text: &TextGen,
    seed: u64,
    existing: &[u8],
) -> Option<Vec<u8>> {
    let last = existing.split(|b| *b == b'\n').rev().find_map(|l| {
        serde_json::from_slice::<Value>(l)
            .ok()
            .filter(|v| v.get("sessionId").is_some())
    })?;
    let sid = last.get("sessionId")?.as_str()?.to_owned();
    let cwd = last
        .get("cwd")
        .and_then(Value::as_str)
        .unwrap_or("/")
        .to_owned();
    let branch = last
        .get("gitBranch")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let clock = last
        .get("timestamp")
        .and_then(Value::as_str)
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .map_or(0, |t| t.as_millisecond());
    let mut s = Session::new(Rng::new(seed), sid, cwd, branch, clock);
    s.last_uuid = last.get("uuid").and_then(Value::as_str).map(str::to_owned);
    let mut w = Writer {
        model,
        text,
        s,
        out: Vec::new(),
        since_compaction: 0.0,
        side: Vec::new(),
    };
    // A typical short turn: the prompt, one call, the reply.
    let prompt = w.pick(&model.prompts);
    let lines = w.emit(prompt);
    w.write(&lines);
    w.preface();
    let seg = w.pick(&model.tools);
    let lines = w.emit(seg);
    w.write(&lines);
    let reply = w.pick(&model.texts);
    let lines = w.emit(reply);
    w.write(&lines);
    Some(w.out)
}

/// A project directory name the way Claude Code derives it from the cwd.
pub fn project_dir(cwd: &str) -> String {
    cwd.replace(['/', '.'], "-")
}

/// A fresh session id.
pub fn session_id(rng: &mut Rng) -> String {
    uuid(rng)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn seg(lines: &[Value]) -> Segment {
        lines
            .iter()
            .map(|v| Template::new(v.clone(), None))
            .collect()
    }

    #[test]
    fn only_a_single_call_with_its_result_can_become_the_commit() {
        let call = |id: &str| json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": "ls"}});
        let result = |id: &str| json!({"type": "tool_result", "tool_use_id": id, "content": "ok"});
        let assistant =
            |blocks: Vec<Value>| json!({"type": "assistant", "message": {"content": blocks}});
        let user = |blocks: Vec<Value>| json!({"type": "user", "message": {"content": blocks}});

        let one = seg(&[assistant(vec![call("a")]), user(vec![result("a")])]);
        assert!(one_call_with_result(&one));
        let unanswered = seg(&[assistant(vec![call("a")])]);
        assert!(!one_call_with_result(&unanswered));
        let parallel = seg(&[
            assistant(vec![call("a"), call("b")]),
            user(vec![result("b")]),
        ]);
        assert!(!one_call_with_result(&parallel));
        let anothers = seg(&[assistant(vec![call("a")]), user(vec![result("z")])]);
        assert!(!one_call_with_result(&anothers));
    }
}
