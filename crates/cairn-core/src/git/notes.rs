//! Git AI authorship logs (the Git AI Standard, `authorship/3.x`): notes under `refs/notes/ai`
//! saying which lines of a commit which agent session wrote. `why` reads them as evidence; Cairn
//! writes none yet.
//!
//! A log is an attestation section (a file path at the start of a line, then lines indented by
//! two spaces: a 16-hex session hash and line ranges such as `1-4,9`), a line `---`, and a JSON
//! object whose `prompts` map each hash to its `agent_id` (`tool`, `id`, `model`).

use serde_json::Value;

use super::repo::Repo;

/// Where authorship logs live.
pub const NOTES_REF: &str = "refs/notes/ai";
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
    /// The agent's own session id.
    pub id: String,
    pub model: Option<String>,
}

impl AuthorshipLog {
    /// How many lines session `hash` is attributed, and in which files.
    pub fn line_count(&self, hash: &str) -> (u32, Vec<String>) {
        let mut n = 0u32;
        let mut paths = Vec::new();
        for (path, entries) in &self.files {
            for (_, ranges) in entries.iter().filter(|(h, _)| h == hash) {
                n = n.saturating_add(ranges.iter().map(|(a, b)| b - a + 1).sum::<u32>());
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
        sessions.push(NoteSession {
            hash: hash.clone(),
            tool: s("tool")?,
            id: s("id")?,
            model: s("model"),
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

impl Repo {
    /// The authorship log attached to `commit`, if there is one and it reads as one.
    pub fn authorship_log(&self, commit: &str) -> Option<AuthorshipLog> {
        let note = self
            .git(&["notes", &format!("--ref={NOTES_REF}"), "show", commit])
            .ok()?;
        parse(&note)
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
