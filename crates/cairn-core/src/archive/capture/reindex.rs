//! Reindex: a session's records stored again from its retained copies, read by today's
//! parsers, so what a since-fixed parser misread (a prompt taken for the model's words, a
//! failed command recorded as succeeded, lines it skipped) is put right in an archive
//! captured before the fix, even after the agent deleted the transcript.
//!
//! The copies are the authority: each holds the redacted lines capture read, generation by
//! generation, with the key of every line redaction changed ([`Retained::read`]). Those lines
//! are redacted again with today's rules ([`scan`], before anything is written), then read once
//! more, parsed with a fresh parser, and committed batch by batch through the capture writer
//! ([`commit_in`]) into the emptied session ([`batches`], [`rebuild`]), in one transaction with
//! the deletion of its old records, turns, token counts and branches: a reindex killed at any
//! point leaves the session as it was, or rebuilt whole. A copy's text is held a frame at a
//! time and a session's records a batch at a time. Record keys come from the copy, so a record
//! read the same way keeps its key, and every room that cites records by key (Recall's
//! evidence) finds it again; the session row, its sources and their reading positions stay.
//!
//! A line today's rules redact further (a secret an older build let through) is rewritten in
//! the copy too ([`Scrub`]), and keyed as a capture keys a line redaction changed, by its
//! redacted form: the old key, a hash of the line with the secret in it, would let a guess of
//! the secret be checked. The records, the turns they open and the sources' line keys take the
//! new key in the rebuild; the rooms above re-key what they cite ([`Reread::rekeyed`]); the
//! rewritten copy takes the old one's place after the commit (`archive::swaps`).
//!
//! A line file's copy is read line by line as capture read the file. A document's, a
//! database session's or a tree's copy holds each unit as the parser got it, every time it
//! changed (`{"u","r","v"}` lines, `u` null for the header): replayed in order through the
//! agent's unit parser, a unit read again updates its records in place, as at capture; the
//! units the last read no longer found (its stored cursor lists those it did) are retracted.

mod copies;

pub(crate) use copies::{from_copies, manifest_frame, manifest_of, seed};

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use super::{
    BATCH_BYTES, Base, Batch, Commit, Identity, LineOutput, Retained, Trigger, commit_in, document,
    new_batch, parse_into, take_output,
};
use crate::archive::discover::FoundFile;
use crate::archive::redact::{Finding, Redactor};
use crate::archive::retain::RetainedLine;
use crate::archive::sources::{
    self, FileRole, LineIdentity, ReadKind, SessionMeta, UnitParser, database,
};
use crate::archive::store::SourceState;
use crate::archive::{Agent, store};
use crate::error::{Error, Result};
use crate::keys;

/// One source of a session, with the retained copies it can be read again from.
#[derive(Debug)]
struct Copied {
    file: FoundFile,
    kind: ReadKind,
    state: SourceState,
    /// The copy of each of its generations, oldest first.
    copies: Vec<PathBuf>,
}

/// A session that can be read again, ready for [`scan`] and [`rebuild`].
#[derive(Debug)]
pub struct Plan {
    row: i64,
    identity: Identity,
    sources: Vec<Copied>,
    /// Bytes of retained copy to read.
    pub bytes: u64,
    /// A rebuild from the copies alone ([`from_copies`]): a session its manifest names by
    /// its file's path alone (first stored before a line named it) takes the identity its
    /// records give, as capture's next batch would have.
    identity_from_copy: bool,
}

impl Plan {
    /// The session's row.
    pub fn row(&self) -> i64 {
        self.row
    }

    pub fn session_key(&self) -> &str {
        &self.identity.session_key
    }

    /// A copy's lines as the plan reads them: a rebuild from the copies alone reads past
    /// damage (nothing else holds the lines after it); a reindex refuses it, so the session's
    /// records stay as they are rather than lose those of the damaged frames.
    fn copy_lines(
        &self,
        retained: &Retained,
        copy: &Path,
        committed: u64,
    ) -> Result<crate::archive::retain::CopyLines> {
        if self.identity_from_copy {
            retained.lines_past_damage(copy, 0, committed)
        } else {
            retained.lines(copy, 0, committed)
        }
    }
}

/// What the records of a session were, and are after a reindex.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rebuilt {
    pub records_before: u64,
    pub records_after: u64,
    pub turns_before: u64,
    pub turns_after: u64,
    /// Records that read differently now, or are new, or are gone.
    pub records_changed: u64,
}

/// How a session's sources can be read again: `Ok` with the plan, or `Err` with why not (no
/// transcript of it was read here; a copy is missing or cut; an agent this build does not know).
pub fn plan(
    conn: &Connection,
    data_dir: &Path,
    row: i64,
) -> Result<std::result::Result<Plan, String>> {
    let db = crate::store::err_in(conn);
    let identity = conn
        .prepare_cached(
            "SELECT session_key, session_id, parent_key, relation, agent_id FROM sessions WHERE id = ?1",
        )
        .and_then(|mut s| {
            s.query_row([row], |r| {
                Ok(Identity {
                    session_key: r.get(0)?,
                    session_id: r.get(1)?,
                    parent_key: r.get(2)?,
                    relation: r.get(3)?,
                    agent_id: r.get(4)?,
                })
            })
        })
        .map_err(db)?;
    let rows: Vec<(String, String, SourceState)> = conn
        .prepare_cached(&format!(
            "SELECT {}, agent, role FROM sources WHERE session_id = ?1 ORDER BY id",
            store::SOURCE_COLUMNS
        ))
        .and_then(|mut s| {
            s.query_map([row], |r| {
                let after = store::SOURCE_COLUMN_COUNT;
                Ok((r.get(after)?, r.get(after + 1)?, SourceState::from_row(r)?))
            })?
            .collect()
        })
        .map_err(db)?;
    if rows.is_empty() {
        return Ok(Err(
            "no transcript of it was read here, so there is no copy to read again".to_owned(),
        ));
    }
    let retained = Retained::new(data_dir);
    let mut sources_read = Vec::with_capacity(rows.len());
    let mut bytes = 0;
    for (agent, role, state) in rows {
        let Some(agent) = Agent::parse(&agent) else {
            return Ok(Err(format!(
                "read by an agent this build does not know ({agent})"
            )));
        };
        let file = FoundFile {
            role: if role == "subagent" {
                FileRole::Subagent
            } else {
                FileRole::Main
            },
            ..FoundFile::main(agent, Path::new(&state.path))
        };
        let kind = kind_of(&file);
        if crate::archive::swaps::waiting(conn, state.id).map_err(db)? {
            return Ok(Err(format!(
                "a copy of {} written again without a secret could not be put in place yet \
                 (it is tried at every start; the log says why); its records are left as they are",
                state.path
            )));
        }
        let mut copies = Vec::new();
        let mut source_bytes = 0;
        // Every generation's copy: a record read from one that is gone could not be stored
        // again, so such a session is left as it is rather than rebuilt without it.
        for generation in 0..=state.generation {
            let path = retained.path(agent, &state.source_key, generation);
            let len = match std::fs::metadata(&path) {
                Ok(m) => m.len(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Ok(Err(lacking(&path, &state.path)));
                }
                Err(source) => return Err(Error::Read { path, source }),
            };
            if generation == state.generation && retained.is_short(&path, state.retained_len) {
                return Ok(Err(lacking(&path, &state.path)));
            }
            source_bytes += len;
            copies.push(path);
        }
        bytes += source_bytes;
        sources_read.push(Copied {
            file,
            kind,
            state,
            copies,
        });
    }
    Ok(Ok(Plan {
        row,
        identity,
        sources: sources_read,
        bytes,
        identity_from_copy: false,
    }))
}

/// Every session a transcript was read for whose retained copies could not be read again
/// (one missing or cut), with why, and how many such sessions were looked at: `cairn doctor`'s
/// check that the archive can still be rebuilt from its copies.
pub fn lacking_copies(conn: &Connection, data_dir: &Path) -> Result<(u64, Vec<(i64, String)>)> {
    let rows: Vec<i64> = conn
        .prepare_cached("SELECT DISTINCT session_id FROM sources ORDER BY session_id")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .map_err(crate::store::err_in(conn))?;
    let mut lacking = Vec::new();
    for &row in &rows {
        if let Err(why) = plan(conn, data_dir, row)? {
            lacking.push((row, why));
        }
    }
    Ok((rows.len() as u64, lacking))
}

/// How a source was read: a database's session (its path the database's, `#` and the
/// session's id) by units, else as [`sources::read_kind`] says of its file.
fn kind_of(file: &FoundFile) -> ReadKind {
    if sources::database_of_session(file.agent, &file.path).is_some() {
        ReadKind::Database
    } else {
        sources::read_kind(file)
    }
}

/// Why a session is not read again when its copy `copy` of the transcript `path` is missing or
/// cut (deleted by hand, lost in a restore): a rebuild would lose what only the copy held.
fn lacking(copy: &Path, path: &str) -> String {
    format!(
        "the retained copy {} of {path} is missing or shorter than the archive recorded; \
         its records are left as they are",
        copy.display()
    )
}

/// What a reindex says of the place a skipped line holds in a copy.
const SKIPPED_WHEN_CAPTURED: &str =
    "a line longer than the 64 MiB limit was skipped when it was captured";

/// A retained copy holding lines today's rules redact further, as it is to be written again.
#[derive(Debug)]
pub(crate) struct Scrub {
    pub source_id: i64,
    pub generation: u32,
    pub copy: PathBuf,
    /// The source's current generation, whose copy's length the store records.
    pub current: bool,
    /// How much of the copy the store committed (0: all of it), as it was read.
    committed: u64,
    /// The rewritten lines with their new keys, in order; the copy's other lines stay.
    rewrites: Vec<RetainedLine>,
    /// What today's rules found in the rewritten lines, by line number, in order.
    findings: Vec<(u64, Finding)>,
    /// A rewritten unit's `(unit key, old revision)` and its new revision, for the cursor.
    revisions: Vec<((String, String), String)>,
}

impl Scrub {
    /// The copy of `state`'s `generation` at `copy`, when any line of it was rewritten.
    fn of(
        state: &SourceState,
        generation: usize,
        copy: &Path,
        committed: u64,
        rewrites: Vec<RetainedLine>,
        findings: Vec<(u64, Finding)>,
        revisions: Vec<((String, String), String)>,
    ) -> Option<Scrub> {
        let generation = u32::try_from(generation).ok()?;
        (!rewrites.is_empty()).then(|| Scrub {
            source_id: state.id,
            generation,
            copy: copy.to_owned(),
            current: generation == state.generation,
            committed,
            rewrites,
            findings,
            revisions,
        })
    }

    /// The copy as it is to be written again: read once more, frame by frame (the capture
    /// lock is still held: it is the copy read before), each rewritten line in its place. A
    /// rewritten line the copy no longer holds is an error, so no old line is written again.
    pub fn lines<'a>(&'a self, retained: &Retained) -> Result<Scrubbed<'a>> {
        Ok(Scrubbed {
            copy: &self.copy,
            lines: retained.lines(&self.copy, 0, self.committed)?,
            rewrites: self.rewrites.iter().peekable(),
        })
    }
}

/// The lines of a [`Scrub`]'s copy as they are to be written ([`Scrub::lines`]).
pub(crate) struct Scrubbed<'a> {
    copy: &'a Path,
    lines: crate::archive::retain::CopyLines,
    rewrites: std::iter::Peekable<std::slice::Iter<'a, RetainedLine>>,
}

impl Iterator for Scrubbed<'_> {
    type Item = Result<RetainedLine>;

    fn next(&mut self) -> Option<Result<RetainedLine>> {
        let Some(line) = self.lines.next() else {
            let missed = self.rewrites.next()?;
            return Some(Err(Error::Corrupt {
                path: self.copy.to_owned(),
                what: format!(
                    "line {} changed while it was read again",
                    missed.line_no + 1
                ),
            }));
        };
        Some(line.map(
            |line| match self.rewrites.next_if(|r| r.line_no == line.line_no) {
                Some(rewrite) => rewrite.clone(),
                None => line,
            },
        ))
    }
}

/// How much of the copy of `state`'s `generation` the store committed (0: all of it; only the
/// current generation's length is recorded).
fn committed_len(state: &SourceState, generation: usize) -> u64 {
    if generation as u64 == u64::from(state.generation) {
        state.retained_len
    } else {
        0
    }
}

/// What reading a session's copies again finds before anything is written: the copies to
/// write again, the record keys that change with their lines, and the line keys of the
/// sources that follow. [`batches`] then reads the copies once more into records.
#[derive(Debug, Default)]
pub(crate) struct Reread {
    pub scrubs: Vec<Scrub>,
    /// `(old, new)` record keys of the records read from rewritten lines, for the rooms that
    /// cite records by key.
    pub rekeyed: Vec<(String, String)>,
    /// Old line key to new, for the sources' first and last line keys.
    line_keys: HashMap<String, String>,
}

impl Reread {
    /// Copy lines rewritten.
    pub fn rewritten(&self) -> u64 {
        self.scrubs.iter().map(|s| s.rewrites.len() as u64).sum()
    }

    /// The scrub of `state`'s copy of `generation`, when a line of it was rewritten.
    fn scrub(&self, state: &SourceState, generation: usize) -> Option<&Scrub> {
        self.scrubs
            .iter()
            .find(|s| s.source_id == state.id && s.generation as usize == generation)
    }
}

/// Redact every line of the plan's copies again with today's rules, keeping only what they
/// change ([`Reread`]): the lines of a copy are held a frame at a time. Touches no row and no
/// file: it can run beside other readers.
pub(crate) fn scan(plan: &Plan, data_dir: &Path) -> Result<Reread> {
    let retained = Retained::new(data_dir);
    let redactor = Redactor::global();
    let mut reread = Reread::default();
    for source in &plan.sources {
        let state = &source.state;
        let units = source.kind != ReadKind::Lines;
        let line_identity = sources::line_identity(source.file.agent);
        for (generation, copy) in source.copies.iter().enumerate() {
            let committed = committed_len(state, generation);
            let mut rewrites = Vec::new();
            let mut findings = Vec::new();
            let mut revisions = Vec::new();
            for line in plan.copy_lines(&retained, copy, committed)? {
                let line = line?;
                if line.text.is_empty() {
                    continue;
                }
                let mut found = Vec::new();
                let rewrite = if units {
                    let mut unit = Unit::of(copy, &line)?;
                    if !redactor.redact_json(&mut unit.value, &mut found) {
                        continue;
                    }
                    let text = unit.value.to_string();
                    let revision = document::revision(&text);
                    if let Some(old) = unit.revision {
                        revisions.push((
                            (unit.key.clone().unwrap_or_default(), old),
                            revision.clone(),
                        ));
                    }
                    let mut rewritten = Vec::new();
                    document::unit_line(&mut rewritten, unit.key.as_deref(), &revision, &text);
                    RetainedLine {
                        line_no: line.line_no,
                        text: rewritten,
                        record_hash: line.record_hash.clone(),
                    }
                } else {
                    let text = String::from_utf8_lossy(&line.text);
                    // Redaction is idempotent: a line it changes now held something the rules
                    // that wrote the copy let through.
                    let Cow::Owned(clean) = redactor.redact_line(&text, &mut found) else {
                        continue;
                    };
                    let old = match &line.record_hash {
                        Some(h) => h.clone(),
                        None => keys::record_hash(&line.text),
                    };
                    let hash = keys::redacted_record_hash(clean.as_bytes());
                    reread.rekeyed.push(match line_identity {
                        LineIdentity::Content => (old.clone(), hash.clone()),
                        LineIdentity::Position => (
                            keys::record_hash_at(&old, line.line_no),
                            keys::record_hash_at(&hash, line.line_no),
                        ),
                    });
                    reread.line_keys.insert(old, hash.clone());
                    RetainedLine {
                        line_no: line.line_no,
                        text: clean.into_bytes(),
                        record_hash: Some(hash),
                    }
                };
                findings.extend(found.into_iter().map(|f| (line.line_no, f)));
                rewrites.push(rewrite);
            }
            reread.scrubs.extend(Scrub::of(
                state, generation, copy, committed, rewrites, findings, revisions,
            ));
        }
    }
    Ok(reread)
}

/// A unit line of a document's, database session's or tree's copy: `{"u","r","v"}`.
struct Unit {
    /// `None` for the header.
    key: Option<String>,
    revision: Option<String>,
    value: Value,
}

impl Unit {
    fn of(copy: &Path, line: &RetainedLine) -> Result<Unit> {
        let corrupt = |what: String| Error::Corrupt {
            path: copy.to_owned(),
            what,
        };
        let mut held: serde_json::Map<String, Value> = serde_json::from_slice(&line.text)
            .map_err(|e| corrupt(format!("line {} is not a unit: {e}", line.line_no + 1)))?;
        let key = match held.remove("u") {
            Some(Value::String(u)) => Some(u),
            Some(Value::Null) | None => None,
            Some(_) => return Err(corrupt(format!("line {} names no unit", line.line_no + 1))),
        };
        let revision = match held.remove("r") {
            Some(Value::String(r)) => Some(r),
            _ => None,
        };
        Ok(Unit {
            key,
            revision,
            value: held.remove("v").unwrap_or(Value::Null),
        })
    }
}

/// Each copy line as it reads today: its rewrite when [`scan`] rewrote it (with what the rules
/// found in it), else as the copy holds it (today's rules change nothing in it, so it is not
/// redacted a second time).
struct Today<'a> {
    lines: crate::archive::retain::CopyLines,
    rewrites: std::iter::Peekable<std::slice::Iter<'a, RetainedLine>>,
    findings: std::iter::Peekable<std::slice::Iter<'a, (u64, Finding)>>,
}

impl<'a> Today<'a> {
    fn of(lines: crate::archive::retain::CopyLines, scrub: Option<&'a Scrub>) -> Result<Self> {
        let (rewrites, findings) = match scrub {
            Some(s) => (&s.rewrites[..], &s.findings[..]),
            None => (&[][..], &[][..]),
        };
        Ok(Today {
            lines,
            rewrites: rewrites.iter().peekable(),
            findings: findings.iter().peekable(),
        })
    }

    /// The next line as it reads today, and what the rules found in it.
    fn next(&mut self) -> Option<Result<(RetainedLine, Vec<Finding>)>> {
        Some(self.lines.next()?.map(|line| {
            let mut found = Vec::new();
            while let Some((_, f)) = self.findings.next_if(|(n, _)| *n == line.line_no) {
                found.push(f.clone());
            }
            match self.rewrites.next_if(|r| r.line_no == line.line_no) {
                Some(rewrite) => (rewrite.clone(), found),
                None => (line, found),
            }
        }))
    }
}

/// Read every copy of the plan's sources again with today's parsers, as [`scan`] found them,
/// handing each batch to `commit` as it is made (a line file's lines, or a document's,
/// database session's or tree's units, in batches of a capture's size). `commit` answers
/// whether to go on.
pub(crate) fn batches(
    plan: &Plan,
    data_dir: &Path,
    reread: &Reread,
    commit: &mut dyn FnMut(Batch) -> Result<bool>,
) -> Result<()> {
    let retained = Retained::new(data_dir);
    for source in &plan.sources {
        let state = &source.state;
        let base = Base {
            existed: true,
            byte_offset: state.byte_offset,
            generation: state.generation,
        };
        let go_on = if source.kind == ReadKind::Lines {
            read_lines(&retained, plan, source, base, reread, commit)?
        } else {
            replay(&retained, plan, source, base, reread, commit)?
        };
        if !go_on {
            break;
        }
    }
    Ok(())
}

/// [`batches`] of a line file.
fn read_lines(
    retained: &Retained,
    plan: &Plan,
    source: &Copied,
    base: Base,
    reread: &Reread,
    commit: &mut dyn FnMut(Batch) -> Result<bool>,
) -> Result<bool> {
    let file = &source.file;
    let state = &source.state;
    let line_identity = sources::line_identity(file.agent);
    // The next capture compares the file's first and last lines with these, keyed as today.
    let today = |key: &Option<String>| {
        key.as_ref()
            .map(|k| reread.line_keys.get(k).unwrap_or(k).clone())
    };
    let mut finished = |batch: Batch, parser: &dyn sources::SourceParser| {
        let mut batch = finish(batch, plan, source, parser.meta().clone(), parser.save());
        batch.first_line_hash = today(&batch.first_line_hash);
        batch.last_line_hash = today(&batch.last_line_hash);
        commit(batch)
    };
    for (generation, copy) in source.copies.iter().enumerate() {
        let committed = committed_len(state, generation);
        let mut lines = Today::of(
            plan.copy_lines(retained, copy, committed)?,
            reread.scrub(state, generation),
        )?;
        let mut parser = sources::parser_for_file(file, None).map_err(|e| Error::Corrupt {
            path: copy.clone(),
            what: format!("no parser for it: {e}"),
        })?;
        let mut out = LineOutput::default();
        let mut batch = fresh(source, base);
        let mut batch_bytes = 0u64;
        let mut last_hash = String::new();
        let mut line_no = 0;
        while let Some(line) = lines.next() {
            let (line, found) = line?;
            line_no = line.line_no;
            batch_bytes += line.text.len() as u64 + 1;
            if line.text.is_empty() {
                // The place of a line capture skipped, as it said then.
                batch
                    .warnings
                    .push((Some(line.line_no), SKIPPED_WHEN_CAPTURED.to_owned()));
                line_no += 1;
                continue;
            }
            batch
                .findings
                .extend(found.into_iter().map(|f| (line.line_no, f)));
            let hash = line
                .record_hash
                .clone()
                .unwrap_or_else(|| keys::record_hash(&line.text));
            let text = String::from_utf8_lossy(&line.text);
            let readable = crate::archive::json_text::readable_str(&text);
            parse_into(
                &mut *parser,
                &mut batch,
                line_identity,
                line.line_no,
                &hash,
                &readable,
                &mut out,
            );
            last_hash = hash;
            line_no += 1;
            if batch_bytes >= BATCH_BYTES {
                let full = std::mem::replace(&mut batch, fresh(source, base));
                batch_bytes = 0;
                if !finished(full, &*parser)? {
                    return Ok(false);
                }
            }
        }
        // A unit the parser still holds open, as at the end of every capture's read.
        parser.flush(&mut out);
        let agent = batch.agent;
        take_output(&mut batch, agent, line_no, &last_hash, &mut out);
        if !finished(batch, &*parser)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// An empty batch of `source`'s records, read again from `base`.
fn fresh(source: &Copied, base: Base) -> Batch {
    let state = &source.state;
    new_batch(
        &source.file,
        &state.path,
        &state.source_key,
        base,
        state.generation,
    )
}

/// The parser of a source read by units, fresh.
fn unit_parser(source: &Copied) -> std::result::Result<Box<dyn UnitParser>, serde_json::Error> {
    let file = &source.file;
    match source.kind {
        ReadKind::Database => {
            let db = sources::database_of_session(file.agent, &file.path);
            match (database::source_for(file.agent), db) {
                (Some(s), Some(db)) => s.parser(db, None),
                _ => Err(serde::de::Error::custom(format!(
                    "{} is no session of a {} database",
                    file.path.display(),
                    file.agent
                ))),
            }
        }
        ReadKind::Tree => sources::opencode::tree_parser(None),
        _ => sources::document_parser_for_file(file, None).map(|p| -> Box<dyn UnitParser> { p }),
    }
}

/// Replay the units of a document's, database session's or tree's copies, all generations in
/// order, as [`scan`] found them, into batches of a capture's size handed to `commit` (the
/// last retracts the units the stored cursor no longer lists and stores that cursor). A unit
/// it rewrote has a new revision, which the stored cursor takes too (the next capture compares
/// the unit's revision with it).
fn replay(
    retained: &Retained,
    plan: &Plan,
    source: &Copied,
    base: Base,
    reread: &Reread,
    commit: &mut dyn FnMut(Batch) -> Result<bool>,
) -> Result<bool> {
    let state = &source.state;
    let current = source.copies.last().map_or_else(PathBuf::new, Clone::clone);
    let mut parser = unit_parser(source).map_err(|e| Error::Corrupt {
        path: current.clone(),
        what: format!("no parser for it: {e}"),
    })?;
    let mut batch = fresh(source, base);
    let mut seen = std::collections::BTreeSet::new();
    // (unit key, old revision) to the new revision, for the cursor.
    let mut revisions: HashMap<(String, String), String> = HashMap::new();
    let mut line_no = 0;
    let mut batch_bytes = 0u64;
    for (generation, copy) in source.copies.iter().enumerate() {
        let committed = committed_len(state, generation);
        let scrub = reread.scrub(state, generation);
        if let Some(scrub) = scrub {
            revisions.extend(scrub.revisions.iter().cloned());
        }
        let mut lines = Today::of(plan.copy_lines(retained, copy, committed)?, scrub)?;
        while let Some(line) = lines.next() {
            let (line, found) = line?;
            line_no = line.line_no;
            if line.text.is_empty() {
                continue;
            }
            let unit = Unit::of(copy, &line)?;
            batch
                .findings
                .extend(found.into_iter().map(|f| (line.line_no, f)));
            let mut out = LineOutput::default();
            match &unit.key {
                Some(key) => parser.unit(key, &unit.value, &mut out),
                None => parser.header(&unit.value, &mut out),
            }
            let key = unit.key.unwrap_or_default();
            document::key_records(&mut out, &key);
            let agent = batch.agent;
            take_output(&mut batch, agent, line.line_no, "", &mut out);
            seen.insert(key);
            line_no += 1;
            batch_bytes += line.text.len() as u64 + 1;
            if batch_bytes >= BATCH_BYTES {
                let full = std::mem::replace(&mut batch, fresh(source, base));
                batch_bytes = 0;
                let meta = parser.meta().clone();
                if !commit(finish(full, plan, source, meta, parser.save()))? {
                    return Ok(false);
                }
            }
        }
    }
    // What the last read found: the units its cursor lists (and the header, keyed "").
    let cursor: Value = state
        .parser_state
        .as_deref()
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or(Value::Null);
    if let Some(live) = cursor.get("units").and_then(Value::as_object) {
        let gone: Vec<String> = seen
            .into_iter()
            .filter(|k| !k.is_empty() && !live.contains_key(k))
            .collect();
        document::retract(&mut batch, gone, line_no);
    }
    let mut batch = finish(batch, plan, source, parser.meta().clone(), Value::Null);
    let mut cursor = cursor;
    if let Some(c) = cursor.as_object_mut() {
        c.insert("parser".to_owned(), parser.save());
        if let Some(Value::String(rev)) = c.get_mut("header")
            && let Some(new) = revisions.get(&(String::new(), rev.clone()))
        {
            *rev = new.clone();
        }
        if let Some(Value::Object(units)) = c.get_mut("units") {
            for (key, rev) in units.iter_mut() {
                if let Value::String(old) = rev
                    && let Some(new) = revisions.get(&(key.clone(), old.clone()))
                {
                    *rev = Value::String(new.clone());
                }
            }
        }
    }
    batch.parser_state = cursor.to_string();
    commit(batch)
}

/// A batch of re-read records that leaves its source's stored position as it is (only the
/// parser's state is today's: the one a capture resuming after the same lines would hold).
fn finish(
    mut batch: Batch,
    plan: &Plan,
    source: &Copied,
    meta: SessionMeta,
    saved: Value,
) -> Batch {
    let state = &source.state;
    let meta = super::batch::placed(meta, &source.file);
    batch.identity = if plan.identity_from_copy
        && plan.identity.session_id.is_none()
        && source.file.role == FileRole::Main
    {
        super::batch::identity(&source.file, Path::new(&state.path), &meta)
    } else {
        plan.identity.clone()
    };
    batch.project = meta.cwd.as_deref().map(crate::archive::project::of_cwd);
    batch.meta = meta;
    batch.parser_state = saved.to_string();
    batch.size = state.size;
    batch.mtime_ns = state.mtime_ns;
    batch.byte_offset = state.byte_offset;
    batch.line_count = state.line_count;
    batch.first_line_hash = state.first_line_hash.clone();
    batch.last_line_start = state.last_line_start;
    batch.last_line_hash = state.last_line_hash.clone();
    batch
}

/// A record's identity in its session, compact: the first half of a SHA-256 of its key and
/// block (a session of 800k records holds two maps of these, before and after).
type Place = [u8; 16];

/// What a stored record is: its ordinal, and a digest of what it holds that a parser decides
/// (digests, not the texts: a session's whole text twice over is what a large one would
/// otherwise hold in memory), to tell a record read differently.
#[derive(Clone, Copy)]
struct Held {
    ordinal: i64,
    content: [u8; 32],
}

/// Every record of the session by its place.
fn held(conn: &Connection, row: i64) -> rusqlite::Result<HashMap<Place, Held>> {
    use sha2::{Digest as _, Sha256};
    conn.prepare_cached(
        "SELECT record_hash, block, ordinal, json_array(kind, role, source_event_kind, text,
                tool_name, tool_kind, tool_input, call_id, exit_code, outcome, prompt_source,
                file_paths, is_sidechain, is_compaction, message_id, timestamp,
                retracted_at IS NULL)
         FROM records WHERE session_id = ?1",
    )?
    .query_map([row], |r| {
        let key = Sha256::new()
            .chain_update(r.get_ref(0)?.as_bytes()?)
            .chain_update(r.get::<_, i64>(1)?.to_le_bytes())
            .finalize();
        let mut place = [0u8; 16];
        place.copy_from_slice(&key[..16]);
        let content = Sha256::digest(r.get_ref(3)?.as_bytes()?).into();
        Ok((
            place,
            Held {
                ordinal: r.get(2)?,
                content,
            },
        ))
    })?
    .collect()
}

/// Replace the session's records with what [`batches`] reads (after [`scan`]) in the caller's
/// transaction (`Ok(Err(why))`: a source changed since it was planned, or a copy cannot be
/// read, and the caller rolls back): its full-text entries, records, turns, token counts,
/// branches and warnings go, the batches are committed as a capture would, and the capture
/// batches' ordinal ranges follow their records to their new places. The rooms above (links,
/// vectors, evidence) are the caller's.
pub(crate) fn rebuild(
    tx: &Connection,
    data_dir: &Path,
    plan: &Plan,
    reread: &Reread,
    now: &str,
) -> Result<std::result::Result<Rebuilt, String>> {
    let path = crate::store::path_of(tx);
    let e = crate::store::err_at(&path);
    let row = plan.row;
    let (records_before, turns_before): (i64, i64) = tx
        .query_row(
            "SELECT (SELECT COUNT(*) FROM records WHERE session_id = ?1),
                    (SELECT COUNT(*) FROM turns WHERE session_id = ?1)",
            [row],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(e)?;
    let before = held(tx, row).map_err(e)?;
    (|| -> rusqlite::Result<()> {
        store::unindex_session(tx, row)?;
        for table in ["token_usage", "session_branches", "warnings"] {
            tx.execute(&format!("DELETE FROM {table} WHERE session_id = ?1"), [row])?;
        }
        tx.execute("DELETE FROM records WHERE session_id = ?1", [row])?;
        tx.execute("DELETE FROM turns WHERE session_id = ?1", [row])?;
        tx.execute(
            "UPDATE sessions SET record_count = 0, next_ordinal = 0, turn_count = 0, warning_count = 0,
                read_by = ?2
             WHERE id = ?1",
            [row, sources::PARSERS_REVISION],
        )?;
        Ok(())
    })()
    .map_err(e)?;
    let retained = Retained::new(data_dir);
    let mut stopped = None;
    // Each batch is committed, and its records indexed, as it is read: a session's records are
    // never all in memory at once.
    let read = batches(plan, data_dir, reread, &mut |batch| {
        let mut indexed = Vec::new();
        match commit_in(
            tx,
            &retained,
            Trigger::Reindex,
            now,
            &batch,
            &path,
            &mut indexed,
        )? {
            Commit::Done { .. } => {}
            // Its source went or moved meanwhile (a forget, which takes no capture lock): the
            // caller rolls the rebuild back.
            _ => {
                stopped = Some(format!(
                    "{} changed while it was read again; its records are left as they are",
                    batch.path
                ));
                return Ok(false);
            }
        }
        for (rowid, text, tool_input) in indexed {
            store::index_record(tx, rowid, text, tool_input).map_err(e)?;
        }
        Ok(true)
    });
    match read {
        Ok(()) => {}
        // A copy that cannot be read leaves the session as it is (the caller rolls back); a
        // failed write is the caller's error.
        Err(err @ (Error::Read { .. } | Error::Corrupt { .. })) => {
            return Ok(Err(format!("{err}; its records are left as they are")));
        }
        Err(err) => return Err(err),
    }
    if let Some(why) = stopped {
        return Ok(Err(why));
    }
    let after = held(tx, row).map_err(e)?;
    let mut changed = before
        .iter()
        .filter(|(k, v)| after.get(*k).map(|a| a.content) != Some(v.content))
        .count() as u64;
    changed += after.keys().filter(|k| !before.contains_key(*k)).count() as u64;
    follow_captures(tx, row, &before, &after).map_err(e)?;
    // A session named by its path alone hands its source to the session its records name
    // when another holds that one ([`from_copies`]): its row is gone then.
    let (records_after, turns_after): (i64, i64) = tx
        .query_row(
            "SELECT record_count, turn_count FROM sessions WHERE id = ?1",
            [row],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .map_err(e)?
        .unwrap_or_default();
    Ok(Ok(Rebuilt {
        records_before: records_before.max(0) as u64,
        records_after: records_after.max(0) as u64,
        turns_before: turns_before.max(0) as u64,
        turns_after: turns_after.max(0) as u64,
        records_changed: changed,
    }))
}

/// Move each capture batch's ordinal range to where its records are now. A record kept by the
/// reindex belongs to the batch it was in; a new one (a line the old parser skipped) to the
/// batch of the kept record before it. A batch whose records are all gone keeps no range.
fn follow_captures(
    tx: &Connection,
    row: i64,
    old: &HashMap<Place, Held>,
    new: &HashMap<Place, Held>,
) -> rusqlite::Result<()> {
    // For each new ordinal, the old ordinal it stands for.
    let mut order: Vec<(i64, Option<i64>)> = new
        .iter()
        .map(|(key, h)| (h.ordinal, old.get(key).map(|o| o.ordinal)))
        .collect();
    order.sort_unstable();
    let mut stands_for = Vec::with_capacity(order.len());
    let mut last = -1;
    for (ordinal, was) in order {
        if let Some(was) = was {
            last = was;
        }
        stands_for.push((ordinal, last));
    }
    let captures: Vec<(i64, Option<i64>, Option<i64>)> = tx
        .prepare_cached(
            "SELECT id, first_ordinal, last_ordinal FROM captures WHERE session_id = ?1 ORDER BY id",
        )?
        .query_map([row], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut update = tx.prepare_cached(
        "UPDATE captures SET first_ordinal = ?2, last_ordinal = ?3 WHERE id = ?1",
    )?;
    for (id, first, last) in captures {
        let (Some(first), Some(last)) = (first, last) else {
            continue;
        };
        let mut inside = stands_for
            .iter()
            .filter(|(_, was)| (first..=last).contains(was))
            .map(|(ordinal, _)| *ordinal);
        let range = inside
            .next()
            .map(|lo| (lo, inside.next_back().unwrap_or(lo)));
        update.execute(params![id, range.map(|r| r.0), range.map(|r| r.1)])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::Agent;

    /// A copy of three lines, the middle one keyed, and a scrub of it rewriting `rewrites`.
    fn scrub_of(dir: &Path, rewrites: &[u64]) -> (Retained, Scrub) {
        let retained = Retained::new(dir);
        let copy = retained.path(Agent::Claude, "sha256-s", 0);
        let encoded = Retained::encode(b"a\nb\nc\n", &[(1, "sha256:b".into())]).unwrap();
        retained.append(&copy, 0, &encoded).unwrap();
        let rewrites = rewrites
            .iter()
            .map(|&n| RetainedLine {
                line_no: n,
                text: format!("new {n}").into_bytes(),
                record_hash: Some(format!("sha256:new{n}")),
            })
            .collect();
        let scrub = Scrub {
            source_id: 1,
            generation: 0,
            copy,
            current: true,
            committed: 0,
            rewrites,
            findings: Vec::new(),
            revisions: Vec::new(),
        };
        (retained, scrub)
    }

    #[test]
    fn a_scrub_writes_the_copy_with_its_rewritten_lines_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let (retained, scrub) = scrub_of(dir.path(), &[1]);
        retained
            .write_scrubbed(&scrub.copy, scrub.lines(&retained).unwrap())
            .unwrap();
        assert!(retained.swap_in(&scrub.copy).unwrap());
        let lines: Vec<_> = retained
            .read(&scrub.copy, 0)
            .unwrap()
            .into_iter()
            .map(|l| (String::from_utf8(l.text).unwrap(), l.record_hash))
            .collect();
        assert_eq!(
            lines,
            [
                ("a".to_owned(), None),
                ("new 1".to_owned(), Some("sha256:new1".to_owned())),
                ("c".to_owned(), None),
            ]
        );
    }

    /// A rewritten line the copy does not hold (it changed since it was read) writes nothing,
    /// rather than a copy that keeps the line it was to replace.
    #[test]
    fn a_rewrite_the_copy_no_longer_holds_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let (retained, scrub) = scrub_of(dir.path(), &[1, 5]);
        let err = retained
            .write_scrubbed(&scrub.copy, scrub.lines(&retained).unwrap())
            .unwrap_err();
        assert!(err.to_string().contains("line 6 changed"), "{err}");
        assert!(!Retained::scrub_path(&scrub.copy).exists());
    }
}
