//! Git AI authorship logs (the Git AI Standard, `authorship/3.x`): notes under `refs/notes/ai`
//! saying which lines of a commit which agent session wrote. `why` reads them as evidence;
//! `cairn why --write-notes` writes them ([`render`], [`Repo::write_note`]).
//!
//! A log is an attestation section (a file path at the start of a line, quoted when it holds a
//! space or a tab, then lines indented by two spaces: a 16-hex session hash and ascending line
//! ranges such as `1-4,9`), a line `---`, and a JSON object: `schema_version`,
//! `base_commit_sha` (the commit the note is on) and `prompts`, which map each hash (the first
//! 16 hex digits of SHA-256 of `<tool>:<id>`) to its `agent_id` (`tool`, `id`, `model`), its
//! `messages` and its line counts. Files with no attributed line are not listed.
//!
//! What Cairn writes: `tool` is the agent's name in Cairn and `id` the agent's own session id
//! (Claude Code's session UUID, Codex's thread id: what other tools of the standard expect
//! there; Cairn's session key only for a transcript that had no id), so the hash is the one
//! the agent's own Git AI integration would write. Sessions that share an id (a sub-agent and
//! its parent) are one prompt record. `messages` stay empty unless asked for
//! (`--with-messages`: redacted). The prompt record's `custom_attributes`, the standard's
//! string map for a tool's own data, carry `recorded_by` = `cairn`, by which a later run knows
//! its own note from another tool's (which it never replaces), and `session_keys`: Cairn's keys
//! of the sessions behind the record, comma-separated.
//!
//! Reading back ([`crate::archive::store::sessions_of_note`]) finds sessions by the agent's
//! session id; `session_keys` only chooses among sessions that share it. Notes Cairn wrote
//! before, with its session key as the `id`, are still read: an id that is no agent's session id
//! is matched as a key.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::repo::{Repo, git_failure, run_git_raw, verb};
use crate::error::Result;

/// Where authorship logs live.
pub const NOTES_REF: &str = "refs/notes/ai";
/// The schema version Cairn writes.
pub const SCHEMA_VERSION: &str = "authorship/3.0.0";
/// `custom_attributes.recorded_by` of every prompt record Cairn writes.
pub const RECORDED_BY: &str = "cairn";
/// Session keys read from one prompt record's `custom_attributes.session_keys` at most (a note
/// is another machine's text: the rest are ignored).
const MAX_NOTE_KEYS: usize = 64;
/// A note larger than this is not read (a log lists line ranges and prompt records).
pub const MAX_NOTE_BYTES: usize = 4 << 20;

/// A file's attributed lines: (session hash, inclusive line ranges) per session.
pub type FileLines = (String, Vec<(String, Vec<(u32, u32)>)>);

/// A parsed authorship log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorshipLog {
    /// Per file: (session hash, inclusive line ranges).
    pub files: Vec<FileLines>,
    /// The sessions the hashes stand for.
    pub sessions: Vec<NoteSession>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteSession {
    pub hash: String,
    pub tool: String,
    /// The agent's own session id (in notes Cairn wrote before, its session key).
    pub id: String,
    pub model: Option<String>,
    /// Cairn's session keys the record carries (`custom_attributes.session_keys`); empty in
    /// other tools' notes.
    pub session_keys: Vec<String>,
}

impl AuthorshipLog {
    /// How many lines session `hash` is attributed, and in which files.
    pub fn line_count(&self, hash: &str) -> (u32, Vec<String>) {
        let mut n = 0u32;
        let mut paths = Vec::new();
        for (path, entries) in &self.files {
            for (_, ranges) in entries.iter().filter(|(h, _)| h == hash) {
                n = ranges
                    .iter()
                    .fold(n, |n, (a, b)| n.saturating_add(b - a + 1));
                if !paths.contains(path) {
                    paths.push(path.clone());
                }
            }
        }
        (n, paths)
    }

    /// Whether line `line` of `path` is attributed to session `hash`.
    pub fn attributes(&self, path: &str, line: u32, hash: &str) -> bool {
        self.files.iter().any(|(p, entries)| {
            p == path
                && entries
                    .iter()
                    .any(|(h, r)| h == hash && r.iter().any(|(a, b)| (*a..=*b).contains(&line)))
        })
    }
}

/// `1-4,9` as ranges; `None` when it does not read as ranges (ascending, 1-based).
fn ranges(spec: &str) -> Option<Vec<(u32, u32)>> {
    spec.split(',')
        .map(|part| {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
            (a >= 1 && b >= a).then_some((a, b))
        })
        .collect()
}

/// A note as an authorship log; `None` for anything else (another tool's note, a malformed one,
/// another schema major version).
pub fn parse(note: &str) -> Option<AuthorshipLog> {
    if note.len() > MAX_NOTE_BYTES {
        return None;
    }
    let (attestation, metadata) = match note.split_once("\n---\n") {
        Some(parts) => parts,
        None => ("", note.strip_prefix("---\n")?),
    };
    let meta: Value = serde_json::from_str(metadata.trim()).ok()?;
    let version = meta.get("schema_version")?.as_str()?;
    if !version.starts_with("authorship/3.") {
        return None;
    }
    let mut sessions = Vec::new();
    for (hash, record) in meta.get("prompts")?.as_object()? {
        let agent = record.get("agent_id")?;
        let s = |k: &str| agent.get(k).and_then(Value::as_str).map(str::to_owned);
        let session_keys = record
            .pointer("/custom_attributes/session_keys")
            .and_then(Value::as_str)
            .map(|keys| {
                keys.split(',')
                    .map(str::trim)
                    .filter(|k| !k.is_empty())
                    .take(MAX_NOTE_KEYS)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        sessions.push(NoteSession {
            hash: hash.clone(),
            tool: s("tool")?,
            id: s("id")?,
            model: s("model"),
            session_keys,
        });
    }
    let mut files: Vec<FileLines> = Vec::new();
    for line in attestation.lines().filter(|l| !l.trim().is_empty()) {
        if let Some(entry) = line.strip_prefix("  ") {
            let (hash, spec) = entry.split_once(' ')?;
            if !(7..=16).contains(&hash.len()) || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            files
                .last_mut()?
                .1
                .push((hash.to_owned(), ranges(spec.trim())?));
        } else if !line.starts_with(' ') {
            let path = line.trim_end();
            let path = path
                .strip_prefix('"')
                .and_then(|p| p.strip_suffix('"'))
                .unwrap_or(path);
            files.push((path.to_owned(), Vec::new()));
        } else {
            return None;
        }
    }
    Some(AuthorshipLog { files, sessions })
}

/// The session hash of the standard: the first 16 hex digits of SHA-256 of `<tool>:<id>`.
pub fn session_hash(tool: &str, id: &str) -> String {
    let digest = Sha256::digest(format!("{tool}:{id}").as_bytes());
    hex::encode(digest)[..16].to_owned()
}

/// One prompt record of a log Cairn writes: one agent session, which may be several of
/// Cairn's (a sub-agent's work is its parent session's).
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    pub tool: String,
    /// The agent's own session id.
    pub id: String,
    /// Cairn's keys of the sessions behind it, in the order the note first names them.
    pub session_keys: Vec<String>,
    pub model: Option<String>,
    /// Git AI messages (`user`, `assistant`, `tool_use`); empty unless asked for.
    pub messages: Vec<Value>,
}

/// One file of a log to write: its path and, per session (an index into the prompts), its lines.
pub type NewFile = (String, Vec<(usize, Vec<u32>)>);

/// A log Cairn writes for one commit.
#[derive(Debug, Clone, PartialEq)]
pub struct NewLog {
    pub base_commit_sha: String,
    /// Per file, in diff order.
    pub files: Vec<NewFile>,
    pub prompts: Vec<Prompt>,
}

/// Ascending, deduplicated line numbers as a range specification (`1-4,9`).
pub fn ranges_spec(lines: &[u32]) -> String {
    let mut sorted = lines.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

/// `log` as the text of a note: the attestation section, `---`, the metadata as indented JSON.
/// Files with no line and sessions with no line anywhere are left out.
pub fn render(log: &NewLog) -> String {
    let mut out = String::new();
    let mut counts = vec![0u32; log.prompts.len()];
    for (path, entries) in &log.files {
        // One line per prompt record and file, even when two of the sessions behind it wrote
        // in the file.
        let mut merged: Vec<(usize, Vec<u32>)> = Vec::new();
        for (p, lines) in entries {
            if *p >= log.prompts.len() || lines.is_empty() {
                continue;
            }
            match merged.iter_mut().find(|(q, _)| q == p) {
                Some((_, all)) => all.extend_from_slice(lines),
                None => merged.push((*p, lines.clone())),
            }
        }
        let entries = merged;
        if entries.is_empty() {
            continue;
        }
        // Quoted when it holds a space or a tab, and when written bare it would read as the
        // section's end (`---`) or as an entry (a leading space).
        if path.contains([' ', '\t']) || path == "---" {
            out.push_str(&format!("\"{path}\"\n"));
        } else {
            out.push_str(path);
            out.push('\n');
        }
        for (p, mut unique) in entries {
            let prompt = &log.prompts[p];
            unique.sort_unstable();
            unique.dedup();
            counts[p] += u32::try_from(unique.len()).unwrap_or(u32::MAX);
            out.push_str(&format!(
                "  {} {}\n",
                session_hash(&prompt.tool, &prompt.id),
                ranges_spec(&unique)
            ));
        }
    }
    let mut prompts = Map::new();
    for (p, prompt) in log.prompts.iter().enumerate() {
        if counts[p] == 0 {
            continue;
        }
        prompts.insert(
            session_hash(&prompt.tool, &prompt.id),
            json!({
                "agent_id": {
                    "tool": prompt.tool,
                    "id": prompt.id,
                    // The standard's model is a string; Git AI writes "unknown" when none is known.
                    "model": prompt.model.as_deref().unwrap_or("unknown"),
                },
                "messages": prompt.messages,
                // What Cairn can tell: the commit's lines this session wrote.
                "total_additions": counts[p],
                "total_deletions": 0,
                "accepted_lines": counts[p],
                "overriden_lines": 0,
                "custom_attributes": {
                    "recorded_by": RECORDED_BY,
                    "session_keys": prompt.session_keys.join(","),
                },
            }),
        );
    }
    let meta = json!({
        "schema_version": SCHEMA_VERSION,
        "base_commit_sha": log.base_commit_sha,
        "prompts": prompts,
    });
    out.push_str("---\n");
    out.push_str(&serde_json::to_string_pretty(&meta).unwrap_or_default());
    out.push('\n');
    out
}

/// Whether `note` is an authorship log Cairn wrote: every prompt record (at least one) says
/// `recorded_by: cairn`.
pub fn is_cairns(note: &str) -> bool {
    let Some(metadata) = note
        .split_once("\n---\n")
        .map(|(_, m)| m)
        .or_else(|| note.strip_prefix("---\n"))
    else {
        return false;
    };
    let Ok(meta) = serde_json::from_str::<Value>(metadata.trim()) else {
        return false;
    };
    let Some(prompts) = meta.get("prompts").and_then(Value::as_object) else {
        return false;
    };
    !prompts.is_empty()
        && prompts.values().all(|p| {
            p.pointer("/custom_attributes/recorded_by")
                .and_then(Value::as_str)
                == Some(RECORDED_BY)
        })
}

impl Repo {
    /// The note under [`NOTES_REF`] on `commit`, as it is (any tool's), if there is one.
    pub fn note_text(&self, commit: &str) -> Option<String> {
        let args = ["notes", &format!("--ref={NOTES_REF}"), "show", commit];
        let out = run_git_raw(&self.root, &args, None).ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Attach `text` as the note on `commit` under [`NOTES_REF`], byte for byte (a blob, so git
    /// does not reformat it); `replace` overwrites the note there, else git refuses if one is.
    /// The notes commit names Cairn as its author.
    pub fn write_note(&self, commit: &str, text: &str, replace: bool) -> Result<()> {
        let run = |args: &[&str], input: Option<Vec<u8>>| -> Result<String> {
            let out = run_git_raw(&self.root, args, input)?;
            if !out.status.success() {
                return Err(git_failure(&self.root, verb(args), &out));
            }
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
        };
        let blob = run(
            &["hash-object", "-w", "--stdin"],
            Some(text.as_bytes().to_vec()),
        )?;
        let notes_ref = format!("--ref={NOTES_REF}");
        let mut args = vec![
            "-c",
            "user.name=Cairn",
            "-c",
            "user.email=cairn@localhost",
            "notes",
            &notes_ref,
            "add",
        ];
        if replace {
            args.push("-f");
        }
        args.extend(["-C", blob.as_str(), commit]);
        run(&args, None).map(|_| ())
    }

    /// The authorship log attached to `commit`, if there is one and it reads as one.
    pub fn authorship_log(&self, commit: &str) -> Option<AuthorshipLog> {
        parse(&self.note_text(commit)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const META: &str = r#"{"schema_version":"authorship/3.0.0","base_commit_sha":"abc","prompts":{"d9978a8723e02b52":{"agent_id":{"tool":"claude","id":"s-1","model":"m"},"messages":[]},"866dabf":{"agent_id":{"tool":"cursor","id":"s-2"},"messages":[]}}}"#;

    #[test]
    fn logs_read_and_lines_are_attributed() {
        let note = format!(
            "src/a.rs\n  d9978a8723e02b52 1-4,9\n\"src/my file.rs\"\n  866dabf 2\n---\n{META}\n"
        );
        let log = parse(&note).unwrap();
        assert_eq!(log.files.len(), 2);
        assert_eq!(log.files[1].0, "src/my file.rs");
        assert!(log.attributes("src/a.rs", 9, "d9978a8723e02b52"));
        assert!(!log.attributes("src/a.rs", 5, "d9978a8723e02b52"));
        assert_eq!(
            log.line_count("d9978a8723e02b52"),
            (5, vec!["src/a.rs".to_owned()])
        );
        let s = log.sessions.iter().find(|s| s.id == "s-2").unwrap();
        assert_eq!((s.tool.as_str(), s.model.as_deref()), ("cursor", None));
        // Only metadata: a log of a commit with no attributed line.
        assert!(parse(&format!("---\n{META}")).unwrap().files.is_empty());
    }

    #[test]
    fn session_hashes_are_the_standards() {
        // The Git AI implementation's own value for tool "cursor", id "session_123".
        assert_eq!(session_hash("cursor", "session_123"), "c9883b05a2487d6d");
        assert_eq!(session_hash("claude", "k").len(), 16);
        assert_ne!(session_hash("claude", "k"), session_hash("codex", "k"));
    }

    #[test]
    fn ranges_are_ascending_and_merged() {
        assert_eq!(ranges_spec(&[9, 1, 2, 3, 4, 4, 12, 11]), "1-4,9,11-12");
        assert_eq!(ranges_spec(&[7]), "7");
        assert_eq!(ranges_spec(&[]), "");
    }

    fn prompt(tool: &str, id: &str, model: Option<&str>) -> Prompt {
        Prompt {
            tool: tool.into(),
            id: id.into(),
            session_keys: vec![format!("sha256-key-of-{id}")],
            model: model.map(str::to_owned),
            messages: Vec::new(),
        }
    }

    /// A file named `---` is written so the note still reads back whole.
    #[test]
    fn a_file_named_like_the_section_end_reads_back() {
        let log = NewLog {
            base_commit_sha: "abc123".into(),
            files: vec![
                ("+a.txt".into(), vec![(0, vec![1])]),
                ("---".into(), vec![(0, vec![1])]),
            ],
            prompts: vec![prompt("claude", "s-1", None)],
        };
        let back = parse(&render(&log)).expect("reads back");
        let paths: Vec<&str> = back.files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["+a.txt", "---"]);
        assert_eq!(back.sessions.len(), 1);
    }

    #[test]
    fn what_cairn_writes_reads_back_and_is_known_as_its_own() {
        let log = NewLog {
            base_commit_sha: "abc123".into(),
            files: vec![
                ("src/a.rs".into(), vec![(0, vec![3, 1, 2, 9]), (1, vec![5])]),
                ("docs/my notes.md".into(), vec![(0, vec![1])]),
                // No line: not listed.
                ("empty.rs".into(), vec![(1, vec![])]),
            ],
            prompts: vec![
                prompt(
                    "claude",
                    "ae4a77f8-aedd-4bc1-888f-c94edc91af04",
                    Some("claude-opus-4-6"),
                ),
                prompt("codex", "019a0c1e-thread", None),
                // Named by no line: left out of the prompts.
                prompt("gemini", "g-3", None),
            ],
        };
        let text = render(&log);
        // The hash is the standard's over the agent's own session id, as the agent's own Git AI
        // integration computes it.
        let one = session_hash("claude", "ae4a77f8-aedd-4bc1-888f-c94edc91af04");
        let two = session_hash("codex", "019a0c1e-thread");
        assert!(
            text.starts_with(&format!(
                "src/a.rs\n  {one} 1-3,9\n  {two} 5\n\"docs/my notes.md\"\n  {one} 1\n---\n{{\n"
            )),
            "{text}"
        );
        assert!(
            !text.contains("empty.rs") && !text.contains("gemini"),
            "{text}"
        );
        let meta: Value = serde_json::from_str(text.split_once("---\n").unwrap().1).unwrap();
        assert_eq!(meta["schema_version"], "authorship/3.0.0");
        assert_eq!(meta["base_commit_sha"], "abc123");
        let p = &meta["prompts"][&one];
        assert_eq!(p["agent_id"]["model"], "claude-opus-4-6");
        assert_eq!(p["messages"], serde_json::json!([]));
        assert_eq!(
            (p["total_additions"].as_u64(), p["accepted_lines"].as_u64()),
            (Some(5), Some(5))
        );
        assert_eq!(meta["prompts"][&two]["agent_id"]["model"], "unknown");
        assert_eq!(
            p["agent_id"]["id"], "ae4a77f8-aedd-4bc1-888f-c94edc91af04",
            "agent_id.id is the agent's session id"
        );
        assert_eq!(
            p["custom_attributes"],
            serde_json::json!({
                "recorded_by": "cairn",
                "session_keys": "sha256-key-of-ae4a77f8-aedd-4bc1-888f-c94edc91af04",
            })
        );

        let back = parse(&text).expect("Cairn's note is a log");
        assert!(back.attributes("docs/my notes.md", 1, &one));
        assert!(back.attributes("src/a.rs", 5, &two));
        assert!(!back.attributes("src/a.rs", 4, &one));
        let ids: Vec<(&str, &str)> = back
            .sessions
            .iter()
            .map(|s| (s.id.as_str(), s.session_keys[0].as_str()))
            .collect();
        assert_eq!(
            ids,
            [
                (
                    "ae4a77f8-aedd-4bc1-888f-c94edc91af04",
                    "sha256-key-of-ae4a77f8-aedd-4bc1-888f-c94edc91af04"
                ),
                ("019a0c1e-thread", "sha256-key-of-019a0c1e-thread")
            ]
        );
        for s in &back.sessions {
            assert_eq!(s.hash, session_hash(&s.tool, &s.id), "{s:?}");
        }

        assert!(is_cairns(&text));
        // Another tool's log (no recorded_by), a log Cairn shares with another tool's prompt,
        // and anything that is not a log are not Cairn's.
        assert!(!is_cairns(&format!(
            "src/a.rs\n  d9978a8723e02b52 1\n---\n{META}"
        )));
        let mixed = text.replacen(
            "\"recorded_by\": \"cairn\"",
            "\"recorded_by\": \"other\"",
            1,
        );
        assert!(!is_cairns(&mixed));
        assert!(!is_cairns("free text"));
        assert!(!is_cairns("---\n{\"prompts\":{}}"));
    }

    #[test]
    fn sessions_sharing_an_agent_session_are_one_record() {
        // A sub-agent and its parent share the agent's session id: one hash, one line per
        // file, both keys carried, the lines counted once.
        let mut parent = prompt("claude", "s-1", Some("m"));
        parent.session_keys = vec!["sha256-parent".into(), "sha256-child".into()];
        let log = NewLog {
            base_commit_sha: "abc".into(),
            files: vec![("src/a.rs".into(), vec![(0, vec![1, 2]), (0, vec![2, 5])])],
            prompts: vec![parent],
        };
        let text = render(&log);
        let hash = session_hash("claude", "s-1");
        assert!(
            text.starts_with(&format!("src/a.rs\n  {hash} 1-2,5\n---\n")),
            "{text}"
        );
        let back = parse(&text).unwrap();
        assert_eq!(back.sessions.len(), 1);
        assert_eq!(
            back.sessions[0].session_keys,
            ["sha256-parent", "sha256-child"]
        );
        assert_eq!(back.line_count(&hash).0, 3);
        // Another tool's record has no keys; a record whose keys are not a string has none.
        assert!(
            parse(&format!("---\n{META}"))
                .unwrap()
                .sessions
                .iter()
                .all(|s| s.session_keys.is_empty())
        );
        let odd = text.replace(
            "\"session_keys\": \"sha256-parent,sha256-child\"",
            "\"session_keys\": [1, 2]",
        );
        assert_ne!(odd, text);
        assert!(parse(&odd).unwrap().sessions[0].session_keys.is_empty());
    }

    /// A note is another machine's text: ranges that together count more lines than a `u32`
    /// holds are counted up to its most, never past it (an overflow panicked in debug builds
    /// and wrapped to a small count in release ones).
    #[test]
    fn line_counts_of_huge_ranges_stop_at_the_most_a_count_holds() {
        let max = u32::MAX;
        let note = format!(
            "a.rs\n  d9978a8723e02b52 1-{max},1-{max}\nb.rs\n  d9978a8723e02b52 1-{max}\n---\n{META}\n"
        );
        let log = parse(&note).unwrap();
        assert_eq!(log.line_count("d9978a8723e02b52").0, max);
        assert!(log.attributes("b.rs", max, "d9978a8723e02b52"));
    }

    #[test]
    fn anything_else_is_not_a_log() {
        for bad in [
            "free text".to_owned(),
            format!("src/a.rs\n  d9978a8723e02b52 4-1\n---\n{META}"),
            format!("src/a.rs\n  d9978a8723e02b52 0\n---\n{META}"),
            format!("src/a.rs\n  zz 1\n---\n{META}"),
            format!("  d9978a8723e02b52 1\n---\n{META}"),
            format!("src/a.rs\n   d9978a8723e02b52 1\n---\n{META}"),
            "src/a.rs\n---\n{\"schema_version\":\"authorship/4.0.0\",\"prompts\":{}}".to_owned(),
            "src/a.rs\n---\n{not json".to_owned(),
            format!("{}\n---\n{META}", "x".repeat(MAX_NOTE_BYTES)),
        ] {
            assert!(parse(&bad).is_none(), "{bad:.80}");
        }
    }
}
