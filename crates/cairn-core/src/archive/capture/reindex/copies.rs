//! A session rebuilt from its retained copies alone, into an archive that holds nothing of it
//! (`cairn reindex --from-copies`, `archive::rebuild`).
//!
//! Each source's copies are described by their manifest ([`Manifest`], a frame the writer puts
//! first in a new source's copy ([`manifest_frame`]), or migration 47 appends to an older
//! archive's from its rows). From it [`seed`] makes the `sessions` and `sources` rows a reindex
//! starts from, and [`from_copies`] reads the copies again exactly as a reindex does (the
//! reindex's [`plan`], [`scan`] and [`rebuild`]: today's parsers replay every line or unit,
//! keys from the copies' key frames, batches through the capture writer). Nothing is written
//! to a copy: a line today's rules redact further is stored redacted and its session marked
//! for `cairn reindex`, which writes the copy again.
//!
//! What a capture keeps of where its reads stopped is found again: a document's, a database
//! session's or a tree's cursor lists the units of the current copy with their revisions
//! (the next sync reads the source again and stores only what changed), and a line file still
//! on disk whose first lines are the copy's, checked as capture checks a file it resumes (the
//! first and last line's keys), is resumed after them. A line file gone, or holding other lines
//! now, keeps an offset no file reaches ([`UNKNOWN_OFFSET`]): found again, it is read whole into
//! a new generation, and the records it holds already are not stored twice.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};

use super::{Plan, ReadKind, Unit, kind_of, plan, rebuild, scan};
use crate::archive::capture::{Batch, UNREAD_MTIME, lines, mtime_ns, write};
use crate::archive::discover::FoundFile;
use crate::archive::jsonl::{Line, LineReader};
use crate::archive::retain::{MANIFEST_FORMAT, Manifest, ManifestSession, Retained};
use crate::archive::sources::{self, FileRole};
use crate::archive::{Agent, store};
use crate::error::Result;
use crate::keys;

/// The reading offset of a line file whose place in the file is not known (a rebuild found it
/// gone, or holding other lines than its copy): past any file's end, so the next read of it
/// takes it for rewritten and reads it whole into a new generation.
pub(crate) const UNKNOWN_OFFSET: i64 = i64::MAX;

/// The name a manifest gives a read kind.
fn kind_name(kind: ReadKind) -> &'static str {
    match kind {
        ReadKind::Lines => "lines",
        ReadKind::Document => "document",
        ReadKind::Tree => "tree",
        ReadKind::Database => "database",
    }
}

/// The manifest of the source `source_key` of `agent` at `path` (as kept), of `role`
/// (`main` or `subagent`), stored under `session`, first read at `first_read`.
pub(crate) fn manifest_of(
    agent: Agent,
    role: &str,
    path: &str,
    source_key: &str,
    session: ManifestSession,
    first_read: &str,
    session_row: i64,
) -> Manifest {
    let file = FoundFile {
        agent,
        role: if role == "subagent" {
            FileRole::Subagent
        } else {
            FileRole::Main
        },
        path: PathBuf::from(path),
        parent_hint: None,
        agent_id: None,
    };
    Manifest {
        format: MANIFEST_FORMAT,
        agent: agent.as_str().to_owned(),
        source_key: source_key.to_owned(),
        path: path.to_owned(),
        role: role.to_owned(),
        kind: kind_name(kind_of(&file)).to_owned(),
        session,
        first_read: first_read.to_owned(),
        session_row: Some(session_row),
    }
}

/// The frame that describes the batch's source, first in its copy: the writer appends it
/// with the source's first batch, in that batch's transaction (rolled back, both are cut).
pub(crate) fn manifest_frame(batch: &Batch, session_row: i64, now: &str) -> Vec<u8> {
    let id = &batch.identity;
    Retained::manifest_frame(&manifest_of(
        batch.agent,
        write::role_str(batch.role),
        &batch.path,
        &batch.source_key,
        ManifestSession {
            key: id.session_key.clone(),
            id: id.session_id.clone(),
            parent_key: id.parent_key.clone(),
            relation: id.relation.clone(),
            agent_id: id.agent_id.clone(),
            cwd: batch.meta.cwd.clone(),
            title: batch.meta.title.clone(),
            model: batch.meta.model.clone(),
            git_branch: batch.meta.git_branch.clone(),
            provider: batch.meta.provider.clone(),
            tool_version: batch.meta.tool_version.clone(),
            started_at: batch.meta.started_at.clone(),
            updated_at: batch.meta.updated_at.clone(),
            cumulative_usage: batch
                .meta
                .cumulative_usage
                .and_then(|u| serde_json::to_string(&u).ok()),
        },
        now,
        session_row,
    ))
}

/// What the current generation's copy says of where the last read of its source stopped: its
/// lines, the keys of its first and last (a line file's), and the revision its units and header
/// were read at last (a document's, a database session's, a tree's).
#[derive(Default)]
struct Tail {
    lines: u64,
    first: Option<String>,
    last: Option<String>,
    header: String,
    units: BTreeMap<String, String>,
}

fn tail_of(retained: &Retained, copy: &Path, committed: u64, units: bool) -> Result<Tail> {
    let mut tail = Tail::default();
    if committed == 0 {
        return Ok(tail);
    }
    for line in retained.lines_past_damage(copy, 0, committed)? {
        let line = line?;
        tail.lines = line.line_no + 1;
        if line.text.is_empty() {
            continue;
        }
        if units {
            let unit = Unit::of(copy, &line)?;
            let revision = unit.revision.unwrap_or_default();
            match unit.key {
                Some(key) => {
                    tail.units.insert(key, revision);
                }
                None => tail.header = revision,
            }
        } else {
            let key = line
                .record_hash
                .clone()
                .unwrap_or_else(|| keys::record_hash(&line.text));
            tail.first.get_or_insert_with(|| key.clone());
            tail.last = Some(key);
        }
    }
    Ok(tail)
}

/// A source seeded by [`seed`].
#[derive(Debug)]
pub(crate) struct Seeded {
    /// Its session's row.
    pub row: i64,
    /// Bytes at the end of its current copy that are no whole frame (left out).
    pub torn: u64,
}

/// Make the rows a reindex starts from for the source `manifest` describes, whose copies are
/// `copies` (by generation), in the caller's transaction: its session (unless another source
/// made it) and its source, with the copy's length (its whole frames) and the reading position
/// the copy tells. `Ok(Err(why))`: it cannot be rebuilt (a generation's copy missing, a copy
/// that does not read, another copy naming the same file).
pub(crate) fn seed(
    tx: &Connection,
    data_dir: &Path,
    manifest: &Manifest,
    copies: &BTreeMap<u32, PathBuf>,
    now: &str,
) -> Result<std::result::Result<Seeded, String>> {
    let db = crate::store::err_in(tx);
    let Some(agent) = Agent::parse(&manifest.agent) else {
        return Ok(Err(format!("agent {} is not known", manifest.agent)));
    };
    let Some((&generation, current)) = copies.last_key_value() else {
        return Ok(Err("no retained copy of it is left".to_owned()));
    };
    if let Some(gap) = (0..generation).find(|g| !copies.contains_key(g)) {
        return Ok(Err(format!(
            "the copy of its generation {gap} is missing (a rebuild would lose what it held)"
        )));
    }
    let (whole, len) = match Retained::whole_len(current)
        .map(|w| (w, std::fs::metadata(current).map_or(w, |m| m.len())))
    {
        Ok(lengths) => lengths,
        Err(e) => return Ok(Err(e.to_string())),
    };
    let file = FoundFile {
        agent,
        role: if manifest.role == "subagent" {
            FileRole::Subagent
        } else {
            FileRole::Main
        },
        path: PathBuf::from(&manifest.path),
        parent_hint: None,
        agent_id: None,
    };
    let kind = kind_of(&file);
    let retained = Retained::new(data_dir);
    let tail = match tail_of(&retained, current, whole, kind != ReadKind::Lines) {
        Ok(tail) => tail,
        Err(e) => return Ok(Err(e.to_string())),
    };
    let s = &manifest.session;
    let first_read = crate::text::rfc3339(&manifest.first_read)
        .map_or_else(|| now.to_owned(), std::borrow::Cow::into_owned);
    // The facts a parser read beside the transcript, which the copies may not give again
    // (the replay's own take their place where it has them, as a capture's later reads do).
    let project = s.cwd.as_deref().map(crate::archive::project::of_cwd);
    // Kept only when it reads as token totals.
    let usage = s
        .cumulative_usage
        .as_deref()
        .filter(|u| serde_json::from_str::<crate::archive::TokenUsage>(u).is_ok());
    let time = |t: &Option<String>| {
        t.as_deref()
            .and_then(crate::text::rfc3339)
            .map(std::borrow::Cow::into_owned)
    };
    tx.prepare_cached(
        "INSERT OR IGNORE INTO sessions (session_key, agent, session_id, parent_key, relation,
            agent_id, captured_at, read_by, cwd, project, title, model, git_branch, provider,
            tool_version, started_at, updated_at, cumulative_usage)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
            ?18)",
    )
    .and_then(|mut st| {
        st.execute(params![
            s.key,
            agent.as_str(),
            s.id,
            s.parent_key,
            s.relation,
            s.agent_id,
            first_read,
            sources::PARSERS_REVISION,
            s.cwd,
            project,
            s.title,
            s.model,
            s.git_branch,
            s.provider,
            s.tool_version,
            time(&s.started_at),
            time(&s.updated_at),
            usage
        ])
    })
    .map_err(db)?;
    // Several sources of one session: it was first captured when the first of them was.
    tx.prepare_cached(
        "UPDATE sessions SET captured_at = ?2 WHERE session_key = ?1 AND captured_at > ?2",
    )
    .and_then(|mut st| st.execute(params![s.key, first_read]))
    .map_err(db)?;
    let row: i64 = tx
        .prepare_cached("SELECT id FROM sessions WHERE session_key = ?1")
        .and_then(|mut st| st.query_row([&s.key], |r| r.get(0)))
        .map_err(db)?;
    // Until the rebuild settles it ([`settle`]): a line file's position is not known; a
    // source read by units is read again whole by the next sync, each unit compared with the
    // revision its copy holds.
    let (offset, cursor) = match kind {
        ReadKind::Lines => (UNKNOWN_OFFSET, None),
        _ => (
            0,
            Some(
                serde_json::json!({
                    "doc": "", "stamps": {}, "marker": "", "since": null, "read_at": 0,
                    "header": tail.header, "units": tail.units, "parser": null,
                })
                .to_string(),
            ),
        ),
    };
    let inserted = tx
        .prepare_cached(
            "INSERT OR IGNORE INTO sources (source_key, session_id, agent, role, path, size,
                mtime_ns, byte_offset, line_count, first_line_hash, last_line_hash, parser_state,
                generation, retained_len, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, 0, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        )
        .and_then(|mut st| {
            st.execute(params![
                manifest.source_key,
                row,
                agent.as_str(),
                manifest.role,
                manifest.path,
                UNREAD_MTIME,
                offset,
                tail.lines as i64,
                tail.first,
                tail.last,
                cursor,
                generation,
                whole as i64,
                now
            ])
        })
        .map_err(db)?;
    if inserted == 0 {
        return Ok(Err(format!(
            "another retained copy is of the same file ({})",
            manifest.path
        )));
    }
    Ok(Ok(Seeded {
        row,
        torn: len.saturating_sub(whole),
    }))
}

/// What [`from_copies`] made of a session.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FromCopies {
    /// Lines of its copies today's rules redact further: stored redacted, the session left
    /// for `cairn reindex` to write the copies again.
    pub to_redact: u64,
}

/// Read the seeded session at `row` again from its copies in the caller's transaction, as a
/// reindex does (without writing a copy), then settle its line files' reading positions.
/// `Ok(Err(why))`: it cannot be (the caller rolls back what [`seed`] made of it).
pub(crate) fn from_copies(
    tx: &Connection,
    data_dir: &Path,
    row: i64,
    now: &str,
) -> Result<std::result::Result<FromCopies, String>> {
    // The reindex's reasons end by saying the records stay: here there are none yet.
    let why = |reason: String| {
        reason
            .trim_end_matches("; its records are left as they are")
            .to_owned()
    };
    let mut plan = match plan(tx, data_dir, row)? {
        Ok(plan) => plan,
        Err(reason) => return Ok(Err(why(reason))),
    };
    plan.identity_from_copy = true;
    let reread = match scan(&plan, data_dir) {
        Ok(reread) => reread,
        Err(e) => return Ok(Err(e.to_string())),
    };
    if let Err(reason) = rebuild(tx, data_dir, &plan, &reread, now)? {
        return Ok(Err(why(reason)));
    }
    settle(tx, &plan).map_err(crate::store::err_in(tx))?;
    let to_redact = reread.rewritten();
    if to_redact > 0 {
        // Read before today's rules, as far as `doctor` and `reindex --outdated` can tell:
        // its copies still hold what they redact.
        tx.prepare_cached("UPDATE sessions SET read_by = 0 WHERE id = ?1")
            .and_then(|mut st| st.execute([row]))
            .map_err(crate::store::err_in(tx))?;
    }
    Ok(Ok(FromCopies { to_redact }))
}

/// Where the line files of `plan` are to be resumed: after the copy's lines, when the file on
/// disk begins with them (the key of its first line and of the copy's last line the same, as
/// capture checks a file it resumes).
fn settle(tx: &Connection, plan: &Plan) -> rusqlite::Result<()> {
    for source in &plan.sources {
        if source.kind != ReadKind::Lines || store::is_sealed(&source.state.path) {
            continue;
        }
        let kept: Option<(Option<String>, Option<String>, i64)> = tx
            .prepare_cached(
                "SELECT first_line_hash, last_line_hash, line_count FROM sources WHERE id = ?1",
            )?
            .query_row([source.state.id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .optional()?;
        let Some((first, last, lines)) = kept else {
            continue;
        };
        let Some(found) = on_disk(
            &source.file,
            lines.max(0) as u64,
            first.as_deref(),
            last.as_deref(),
        ) else {
            continue;
        };
        tx.prepare_cached(
            "UPDATE sources SET size = ?2, mtime_ns = ?3, byte_offset = ?4, last_line_start = ?5,
                sidecar_mtime_ns = COALESCE(?6, sidecar_mtime_ns)
             WHERE id = ?1",
        )?
        .execute(params![
            source.state.id,
            found.size as i64,
            found.mtime_ns,
            found.offset as i64,
            found.last_start.map(|s| s as i64),
            lines::sidecar_stamp(&source.file)
        ])?;
    }
    Ok(())
}

/// Where a line file on disk stands against its copy.
struct Found {
    size: u64,
    mtime_ns: i64,
    /// Just after its first `lines` lines (as capture counts them: blank lines not at all, a
    /// line over the limit as one).
    offset: u64,
    last_start: Option<u64>,
}

/// The line file `file` read as capture reads it up to its `lines`-th line, when its first
/// line's key is `first` and that line's key is `last` (`None`: the file is not there, is
/// shorter, or holds other lines).
fn on_disk(file: &FoundFile, lines: u64, first: Option<&str>, last: Option<&str>) -> Option<Found> {
    let meta = std::fs::metadata(&file.path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let handle = File::open(&file.path).ok()?;
    let handle: Box<dyn Read> = if sources::is_compressed(&file.path) {
        // As much of a compressed rollout as capture reads of one.
        Box::new(
            zstd::stream::read::Decoder::new(handle)
                .ok()?
                .take(lines::MAX_DECOMPRESSED),
        )
    } else {
        Box::new(handle)
    };
    let mut reader = LineReader::new(handle, 0);
    if !sources::lines_are_json(file.agent) {
        reader = reader.whole_lines_only();
    }
    let (mut read, mut first_key, mut last_line) = (0u64, None, None::<(u64, Vec<u8>)>);
    while read < lines {
        match reader.next_line().ok()?? {
            Line::Complete { bytes, start } => {
                if bytes.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                if first_key.is_none() {
                    first_key = Some(lines::raw_line_key(bytes));
                }
                let mut held = last_line.take().map(|(_, b)| b).unwrap_or_default();
                held.clear();
                held.extend_from_slice(bytes);
                last_line = Some((start, held));
            }
            Line::Oversized { .. } => {}
        }
        read += 1;
    }
    let last_key = last_line.as_ref().map(|(_, b)| lines::raw_line_key(b));
    (first_key.as_deref() == first && last_key.as_deref() == last).then(|| Found {
        size: meta.len(),
        mtime_ns: mtime_ns(&meta),
        offset: reader.offset(),
        last_start: last_line.map(|(start, _)| start),
    })
}
