//! What every read kind builds its batches with: a batch begun and finished, cut when full, the
//! revision of a keyed record, and the file's place, identity and project.

use std::fs;
use std::path::{Path, PathBuf};

use super::{BATCH_BYTES, BATCH_RECORDS, Base, Batch, Identity, Msg, UNREAD_MTIME, Warning};
use crate::archive::discover::FoundFile;
use crate::archive::retain::Retained;
use crate::archive::sources::{FileRole, SessionMeta};
use crate::archive::{Agent, Record};
use crate::keys;

/// The revision of a keyed record: a digest of every field the writer stores for it, so a
/// re-read of an unchanged unit is told apart from an update. The fields are hashed as they
/// are: serialising them first (the text escaped again, copied into a JSON value) cost more
/// than the hash itself.
pub(super) fn revision_of(
    r: &Record,
    tool_input: Option<&str>,
    file_paths: Option<&str>,
) -> String {
    let exit_code = r.exit_code.map(|c| c.to_string());
    let flag = |b: bool| Some(if b { &b"1"[..] } else { &b"0"[..] });
    fn text(s: &Option<String>) -> Option<&[u8]> {
        s.as_deref().map(str::as_bytes)
    }
    keys::fields_digest(&[
        Some(r.kind().as_str().as_bytes()),
        text(&r.timestamp),
        text(&r.role),
        Some(r.source_event_kind.as_bytes()),
        text(&r.text),
        text(&r.tool_name),
        r.tool_kind.map(|k| k.as_str().as_bytes()),
        tool_input.map(str::as_bytes),
        text(&r.call_id),
        exit_code.as_deref().map(str::as_bytes),
        r.outcome.map(|o| o.as_str().as_bytes()),
        r.prompt_source.map(|p| p.as_str().as_bytes()),
        file_paths.map(str::as_bytes),
        flag(r.is_sidechain),
        flag(r.is_compaction),
        text(&r.message_id),
        text(&r.cwd),
        text(&r.git_branch),
    ])
}

/// Take `batch` whole for the writer, leaving in its place an empty batch of the same source
/// that chains on to it after `taken` units (what the taken batch stores as its position).
pub(super) fn take_full(batch: &mut Batch, taken: u64) -> Batch {
    let chained = Base {
        existed: true,
        byte_offset: taken,
        generation: batch.generation,
    };
    let next = empty_batch(
        batch.agent,
        batch.role,
        &batch.path,
        &batch.source_key,
        chained,
        batch.generation,
    );
    std::mem::replace(batch, next)
}

/// Take the full `batch` of a document or tree read still under way, `taken` units and
/// `line_no` lines in: it stores `restart` (the cursor the read started from) and no file's
/// position (size 0, [`UNREAD_MTIME`]), so a sync cut short after it reads the source again.
pub(super) fn take_unread(
    batch: &mut Batch,
    file: &FoundFile,
    canonical: &Path,
    (meta, restart): (SessionMeta, String),
    taken: u64,
    line_no: u64,
) -> Batch {
    let full = take_full(batch, taken);
    finish_batch(
        full,
        file,
        canonical,
        (meta, restart),
        0,
        UNREAD_MTIME,
        taken,
        line_no,
        &None,
        &None,
        taken,
    )
}

/// Whether a batch read by units is as large as a capture's batch gets ([`BATCH_RECORDS`]
/// records or [`BATCH_BYTES`] of retained rows).
pub(super) fn is_full(batch: &Batch) -> bool {
    batch.records.len() >= BATCH_RECORDS || batch.retained.len() as u64 >= BATCH_BYTES
}

/// A batch of the source found at `path`, which it stores as the archive keeps it
/// ([`crate::archive::store::at_rest`]).
pub(super) fn new_batch(
    file: &FoundFile,
    path: &str,
    source_key: &str,
    base: Base,
    generation: u32,
) -> Batch {
    let kept = crate::archive::store::at_rest(path);
    empty_batch(file.agent, file.role, &kept, source_key, base, generation)
}

pub(super) fn empty_batch(
    agent: Agent,
    role: FileRole,
    path: &str,
    source_key: &str,
    base: Base,
    generation: u32,
) -> Batch {
    Batch {
        agent,
        role,
        path: path.to_owned(),
        source_key: source_key.to_owned(),
        base,
        generation,
        retained: Vec::new(),
        changed: Vec::new(),
        encoded: Vec::new(),
        records: Vec::new(),
        unit_events: Vec::new(),
        usage: Vec::new(),
        findings: Vec::new(),
        warnings: Vec::new(),
        identity: Identity {
            session_key: String::new(),
            session_id: None,
            parent_key: None,
            relation: None,
            agent_id: None,
        },
        meta: SessionMeta::default(),
        project: None,
        size: 0,
        mtime_ns: 0,
        sidecar_mtime_ns: None,
        byte_offset: 0,
        line_count: 0,
        first_line_hash: None,
        last_line_start: None,
        last_line_hash: None,
        parser_state: String::new(),
        bytes: 0,
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn finish_batch(
    mut batch: Batch,
    file: &FoundFile,
    canonical: &Path,
    (meta, parser_state): (SessionMeta, String),
    size: u64,
    mtime_ns: i64,
    offset: u64,
    line_count: u64,
    first_line_hash: &Option<String>,
    last_line: &Option<(u64, String)>,
    batch_start: u64,
) -> Batch {
    let meta = placed(meta, file);
    batch.identity = identity(file, canonical, &meta);
    batch.project = meta.cwd.as_deref().map(crate::archive::project::of_cwd);
    batch.meta = meta;
    batch.parser_state = parser_state;
    batch.size = size;
    batch.mtime_ns = mtime_ns;
    batch.byte_offset = offset;
    batch.line_count = line_count;
    batch.first_line_hash = first_line_hash.clone();
    batch.last_line_start = last_line.as_ref().map(|(s, _)| *s);
    batch.last_line_hash = last_line.as_ref().map(|(_, h)| h.clone());
    batch.bytes = offset.saturating_sub(batch_start);
    match Retained::encode(&batch.retained, &batch.changed) {
        Ok(encoded) => batch.encoded = encoded,
        // Compression cannot fail on valid input; if it does, keep the copy uncompressed-free of
        // this batch and say so rather than lose the records.
        Err(e) => batch.warnings.push((
            None,
            format!("retained copy not written for this batch: {e}"),
        )),
    }
    batch.retained = Vec::new();
    batch
}

/// A warning about `file` as a whole (no line).
pub(super) fn file_warning(file: &FoundFile, message: String) -> Msg {
    Msg::Warning(Warning::of_file(&file.path, message))
}

/// Where `file` is (its canonical path), with its size and mtime; `None`, after a warning
/// naming it, when it is gone or cannot be read.
pub(super) fn locate(
    file: &FoundFile,
    emit: &mut dyn FnMut(Msg) -> bool,
) -> Option<(PathBuf, u64, i64)> {
    let found = fs::canonicalize(&file.path).and_then(|p| {
        let m = fs::metadata(&p)?;
        Ok((p, m.len(), mtime_ns(&m)))
    });
    match found {
        Ok(found) => Some(found),
        Err(e) => {
            emit(file_warning(file, format!("cannot read: {e}")));
            None
        }
    }
}

pub(crate) fn mtime_ns(m: &fs::Metadata) -> i64 {
    m.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// The session a file belongs to. Sub-agent files are sessions of their own, keyed under the
/// parent's id so two sub-agents of one session never collide.
/// What is taken from a transcript's path (its folder's or file's name as an id, the path
/// itself) is redacted as its text is: the archive stores these, and keys hash them.
pub(super) fn identity(file: &FoundFile, canonical: &Path, meta: &SessionMeta) -> Identity {
    let agent = file.agent;
    let from_path = |s: &str| {
        crate::archive::redact::Redactor::global()
            .redact_text(s, "", &mut Vec::new())
            .into_owned()
    };
    let path = crate::archive::store::at_rest(&canonical.to_string_lossy()).into_owned();
    let provider_id = meta
        .session_id
        .clone()
        .or_else(|| file.parent_hint.as_deref().map(from_path));
    match file.role {
        FileRole::Subagent => {
            let parent = provider_id.unwrap_or_else(|| path.clone());
            let agent_id = file
                .agent_id
                .as_deref()
                .map(from_path)
                .or_else(|| meta.agent_id.clone())
                .unwrap_or_default();
            let identity = format!("{parent}/subagents/agent-{agent_id}");
            let relation = if agent_id.starts_with("acompact") {
                "compaction"
            } else {
                "subagent"
            };
            Identity {
                session_key: keys::session_key(agent, identity.as_bytes()),
                session_id: Some(parent.clone()),
                parent_key: Some(keys::session_key(agent, parent.as_bytes())),
                relation: Some(relation.to_owned()),
                agent_id: Some(agent_id),
            }
        }
        FileRole::Main => {
            // An agent that names its sessions only by folder (Kimi) gives the id as a hint.
            let key = match &provider_id {
                Some(id) => keys::session_key(agent, id.as_bytes()),
                // The path as found where it holds no secret (agentlog's key), else as kept.
                None if path.as_str() == canonical.to_string_lossy() => {
                    keys::session_key(agent, canonical.as_os_str().as_encoded_bytes())
                }
                None => keys::session_key(agent, path.as_bytes()),
            };
            Identity {
                session_key: key,
                session_id: provider_id,
                parent_key: meta
                    .parent_session_id
                    .as_ref()
                    .map(|p| keys::session_key(agent, p.as_bytes())),
                relation: meta.relation.clone(),
                agent_id: None,
            }
        }
    }
}

/// `meta` with the cwd its transcript's path names, when the transcript wrote none (an agent
/// that names its project in the path: [`crate::archive::sources::cwd_of_path`]).
pub(super) fn placed(mut meta: SessionMeta, file: &FoundFile) -> SessionMeta {
    if meta.cwd.is_none() {
        meta.cwd = crate::archive::sources::cwd_of_path(file)
            .map(|cwd| crate::archive::store::at_rest(&cwd).into_owned());
    }
    meta
}
