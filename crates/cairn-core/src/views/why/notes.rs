//! `cairn why --write-notes <range>`: the line attribution `why` finds for each commit of a
//! range, recorded as Git AI authorship logs under `refs/notes/ai` ([`crate::git::notes`]), so
//! other tools and other machines read the same answer (and `why` reads it back as `ai_note`
//! evidence).
//!
//! Nothing is written unless asked (`--write-notes`); `--dry-run` shows each note instead. A
//! note another tool wrote is never replaced; Cairn's own is replaced when it changed (so a run
//! is idempotent). By default a note holds the attribution only (lines, agent, model, the
//! agent's own session id as the prompt id, Cairn's session keys as a custom attribute) and no
//! transcript text; `--with-messages` adds each session's
//! messages (prompts, answers and tool calls, never tool output) through the outbound redactor
//! and the final scan, the same consent as `publish --full`.

use std::collections::HashMap;

use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Why;
use crate::archive::store as archive;
use crate::error::{Error, Result};
use crate::git::notes::{self, MAX_NOTE_BYTES, NOTES_REF, NewLog, Prompt};
use crate::git::repo::Repo;

/// The most commits one run writes notes for.
pub const MAX_COMMITS: u32 = 500;

/// What one run did (or, with `dry_run`, would do).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NotesReport {
    /// The range as given (cleaned for printing).
    pub range: String,
    pub notes_ref: String,
    pub dry_run: bool,
    pub with_messages: bool,
    /// Merge commits of the range, left without a note.
    pub merges: u32,
    /// Oldest first.
    pub commits: Vec<NoteOutcome>,
}

impl NotesReport {
    /// How many commits ended with `action`.
    pub fn count(&self, action: NoteAction) -> usize {
        self.commits.iter().filter(|c| c.action == action).count()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoteAction {
    /// A note was attached (dry run: would be).
    Written,
    /// Cairn's own earlier note was replaced by a different one (dry run: would be).
    Replaced,
    /// Cairn's own note already says this.
    Unchanged,
    /// No line of the commit was written by an archived session's edit: no note.
    Nothing,
    /// Left alone, for the reason given (another tool's note, too large, refused by the scan).
    Skipped,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoteOutcome {
    pub commit: String,
    pub subject: String,
    pub action: NoteAction,
    pub reason: Option<String>,
    /// Lines the commit added to text files, and how many of them the note attributes.
    pub added: u32,
    pub attributed: u32,
    pub binary_files: u32,
    pub sessions: Vec<NotedSession>,
    /// The note's text (dry run only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NotedSession {
    pub session_key: String,
    pub agent: String,
    pub lines: u32,
}

/// The commits of `range` (`<from>..<to>`, either side defaulting to HEAD as in git, or one
/// commit), oldest first, without merges; and how many merges were left out. Each side is
/// resolved on its own ([`Repo::resolve_rev`] refuses options and anything else that is not a
/// revision) before git lists anything.
pub fn commits_in(repo: &Repo, range: &str) -> Result<(Vec<String>, u32)> {
    let shown = crate::text::printable(range);
    let trimmed = range.trim();
    if trimmed.starts_with('-') {
        return Err(Error::Invalid(format!(
            "{shown:?} looks like an option, not a commit range: write <from>..<to> (main..HEAD) or one commit"
        )));
    }
    if trimmed.is_empty() || trimmed.contains("...") {
        return Err(Error::Invalid(format!(
            "{shown:?} is not a commit range: write <from>..<to> (main..HEAD) or one commit"
        )));
    }
    let resolve = |rev: &str| -> Result<String> {
        let rev = if rev.is_empty() { "HEAD" } else { rev };
        repo.resolve_rev(rev)?.ok_or_else(|| {
            Error::NotFound(format!(
                "commit {:?} in {}; list commits with `git log`",
                crate::text::printable(rev),
                repo.root.display()
            ))
        })
    };
    let spec = match trimmed.split_once("..") {
        Some((from, to)) => format!("{}..{}", resolve(from)?, resolve(to)?),
        None => format!("{}^!", resolve(trimmed)?),
    };
    let count = |extra: &str| -> Result<u32> {
        let out = repo.git(&["rev-list", "--count", extra, &spec, "--"])?;
        Ok(out.trim().parse().unwrap_or(0))
    };
    let total = count("--no-merges")?;
    if total > MAX_COMMITS {
        return Err(Error::Invalid(format!(
            "{shown} holds {total} commits; write notes for at most {MAX_COMMITS} at once (narrow the range, e.g. HEAD~{MAX_COMMITS}..HEAD)"
        )));
    }
    let merges = count("--merges")?;
    let list = repo.git(&["rev-list", "--no-merges", "--reverse", &spec, "--"])?;
    Ok((list.lines().map(str::to_owned).collect(), merges))
}

/// Write (or with `dry_run` show) the authorship notes of every commit of `range`.
pub fn write_notes(
    conn: &Connection,
    repo: &Repo,
    range: &str,
    with_messages: bool,
    dry_run: bool,
) -> Result<NotesReport> {
    let (commits, merges) = commits_in(repo, range)?;
    let db = crate::store::err_in(conn);
    let mut why = Why::new(conn, repo).map_err(db)?;
    let root = repo.root.to_string_lossy().into_owned();
    let home = dirs::home_dir().map(|h| h.to_string_lossy().into_owned());
    // Per session row: its identity, and (with messages) its redacted messages or the rule the
    // final scan still found.
    let mut who: HashMap<i64, Option<archive::NoteIdentity>> = HashMap::new();
    let mut said: HashMap<i64, std::result::Result<Vec<Value>, &'static str>> = HashMap::new();
    let mut report = NotesReport {
        range: crate::text::printable(range.trim()),
        notes_ref: NOTES_REF.to_owned(),
        dry_run,
        with_messages,
        merges,
        commits: Vec::new(),
    };
    for id in commits {
        let info = repo.commit_info(&id)?;
        let found = why.attribute(&id)?;
        let mut outcome = NoteOutcome {
            commit: id.clone(),
            subject: crate::text::printable(&info.subject),
            action: NoteAction::Nothing,
            reason: None,
            added: found.added,
            attributed: 0,
            binary_files: found.binary,
            sessions: Vec::new(),
            note: None,
        };
        if found.added > super::MAX_ATTRIBUTED_LINES {
            outcome.action = NoteAction::Skipped;
            outcome.reason = Some(format!(
                "it adds {} lines, more than the {} one note attributes",
                found.added,
                super::MAX_ATTRIBUTED_LINES
            ));
            report.commits.push(outcome);
            continue;
        }
        // The sessions in the order the note first names them.
        let mut log = NewLog {
            base_commit_sha: id.clone(),
            files: Vec::new(),
            prompts: Vec::new(),
        };
        // Per session row: its prompt record and its place in `outcome.sessions`; per agent
        // session (agent, id): its prompt record.
        let mut index: HashMap<i64, (usize, usize)> = HashMap::new();
        let mut prompt_of: HashMap<(String, String), usize> = HashMap::new();
        let mut refused: Option<String> = None;
        for (path, per) in &found.files {
            let mut entries = Vec::new();
            for (session, lines) in per {
                let identity = match who.get(session) {
                    Some(i) => i.clone(),
                    None => {
                        let i = archive::session_identity(conn, *session).map_err(db)?;
                        who.insert(*session, i.clone());
                        i
                    }
                };
                let Some(identity) = identity else {
                    continue;
                };
                let (p, n) = match index.get(session) {
                    Some(pn) => *pn,
                    None => {
                        let key = &identity.key;
                        let messages = if with_messages {
                            if !said.contains_key(session) {
                                let m = messages_of(conn, *session, key, &root, home.as_deref())?;
                                said.insert(*session, m);
                            }
                            match &said[session] {
                                Ok(m) => m.clone(),
                                Err(rule) => {
                                    refused.get_or_insert(format!(
                                        "the outbound scan still finds a {rule} in the messages of session {key} after redaction"
                                    ));
                                    Vec::new()
                                }
                            }
                        } else {
                            Vec::new()
                        };
                        let agent_session = note_id(&identity);
                        let slot = (identity.agent.clone(), agent_session.clone());
                        let p = match prompt_of.get(&slot) {
                            Some(p) => {
                                let prompt = &mut log.prompts[*p];
                                prompt.session_keys.push(key.clone());
                                prompt.messages.extend(messages);
                                *p
                            }
                            None => {
                                log.prompts.push(Prompt {
                                    tool: identity.agent.clone(),
                                    id: agent_session,
                                    session_keys: vec![key.clone()],
                                    model: identity
                                        .model
                                        .as_deref()
                                        .map(|m| crate::text::one_line(m, 200)),
                                    messages,
                                });
                                prompt_of.insert(slot, log.prompts.len() - 1);
                                log.prompts.len() - 1
                            }
                        };
                        outcome.sessions.push(NotedSession {
                            session_key: key.clone(),
                            agent: identity.agent.clone(),
                            lines: 0,
                        });
                        index.insert(*session, (p, outcome.sessions.len() - 1));
                        (p, outcome.sessions.len() - 1)
                    }
                };
                outcome.sessions[n].lines += u32::try_from(lines.len()).unwrap_or(u32::MAX);
                entries.push((p, lines.clone()));
            }
            log.files.push((path.clone(), entries));
        }
        outcome.attributed = outcome.sessions.iter().map(|s| s.lines).sum();
        if outcome.attributed == 0 {
            outcome.reason = Some(
                "no line it added was written by the edits of a session in this archive".into(),
            );
            report.commits.push(outcome);
            continue;
        }
        if let Some(reason) = refused {
            outcome.action = NoteAction::Skipped;
            outcome.reason = Some(reason);
            report.commits.push(outcome);
            continue;
        }
        let text = notes::render(&log);
        if text.len() > MAX_NOTE_BYTES {
            outcome.action = NoteAction::Skipped;
            outcome.reason = Some(format!(
                "its note would be {} bytes, more than the {MAX_NOTE_BYTES} readers take{}",
                text.len(),
                if with_messages {
                    "; write it without --with-messages"
                } else {
                    ""
                }
            ));
            report.commits.push(outcome);
            continue;
        }
        let existing = repo.note_text(&id);
        outcome.action = match existing.as_deref() {
            None => NoteAction::Written,
            Some(old) if old.trim_end() == text.trim_end() => NoteAction::Unchanged,
            Some(old) if notes::is_cairns(old) => NoteAction::Replaced,
            Some(_) => {
                outcome.action = NoteAction::Skipped;
                outcome.reason = Some(format!(
                    "another tool's note is on it ({NOTES_REF}); Cairn never replaces it"
                ));
                report.commits.push(outcome);
                continue;
            }
        };
        if dry_run {
            outcome.note = Some(text);
        } else if outcome.action != NoteAction::Unchanged {
            repo.write_note(&id, &text, outcome.action == NoteAction::Replaced)?;
        }
        report.commits.push(outcome);
    }
    Ok(report)
}

/// The `agent_id.id` of a session's prompt record: the agent's own session id, what the agent's
/// own Git AI integration writes there; Cairn's key when the transcript had none, or had one
/// no reader could take for an id (over 200 bytes, or control characters).
fn note_id(identity: &archive::NoteIdentity) -> String {
    match identity.session_id.as_deref().map(str::trim) {
        Some(id) if !id.is_empty() && id.len() <= 200 && !id.chars().any(char::is_control) => {
            id.to_owned()
        }
        _ => identity.key.clone(),
    }
}

/// Session `session`'s messages as the standard lists them (`user` prompts, `assistant`
/// answers, `tool_use` calls with their input; never a tool's output), every string through
/// the outbound redactor and the final scan; the inner `Err` names the rule the scan still
/// found.
fn messages_of(
    conn: &Connection,
    session: i64,
    key: &str,
    root: &str,
    home: Option<&str>,
) -> Result<std::result::Result<Vec<Value>, &'static str>> {
    let trajectory =
        crate::views::export::trajectory_value(conn, session, key, crate::store::err_in(conn))?;
    let mut messages = Vec::new();
    for step in trajectory
        .get("steps")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let mut m = serde_json::Map::new();
        let text = step.get("message").and_then(Value::as_str).unwrap_or("");
        let calls = step.get("tool_calls").and_then(Value::as_array);
        let kind = match (step.get("source").and_then(Value::as_str), calls) {
            (Some("user"), _) if !text.trim().is_empty() => "user",
            (Some("agent"), Some(calls)) => {
                for c in calls {
                    let mut call = serde_json::Map::new();
                    call.insert("type".into(), "tool_use".into());
                    call.insert(
                        "name".into(),
                        c.get("function_name").cloned().unwrap_or(Value::Null),
                    );
                    call.insert(
                        "input".into(),
                        c.get("arguments").cloned().unwrap_or(Value::Null),
                    );
                    if let Some(t) = step.get("timestamp") {
                        call.insert("timestamp".into(), t.clone());
                    }
                    messages.push(Value::Object(call));
                }
                continue;
            }
            (Some("agent"), None) if !text.trim().is_empty() => "assistant",
            _ => continue,
        };
        m.insert("type".into(), kind.into());
        m.insert("text".into(), text.into());
        if let Some(t) = step.get("timestamp") {
            m.insert("timestamp".into(), t.clone());
        }
        messages.push(Value::Object(m));
    }
    Ok(
        crate::git::transcript::outbound(Value::Array(messages), root, home).map(|v| match v {
            Value::Array(m) => m,
            _ => Vec::new(),
        }),
    )
}
