//! Retained copies: a compressed, redacted copy of every source file, so the archive outlives
//! the agents' own cleanup (Claude Code deletes transcripts after 30 days) and is safe to back up.
//!
//! Layout: `<data>/retained/<agent>/<source_key>.g<generation>.jsonl.zst`. Each capture batch
//! appends one zstd frame holding the batch's redacted lines, so a plain `zstdcat` shows the
//! JSONL. Lines the copy does not hold byte for byte (redacted, or invalid UTF-8 replaced) are
//! listed in a zstd *skippable* frame after the batch with their record keys, which keeps the
//! identity keys reproducible from the copy alone. A redacted line's key is the hash of its
//! redacted form ([`crate::keys::redacted_record_hash`]); no hash of a raw line that held a
//! secret is written (archives from before are re-keyed by [`super::rekey`]).
//! A rewritten source file starts a new generation file; appends never overwrite. Only a
//! reindex that finds lines today's rules redact further writes a copy again, whole, beside it,
//! and renames it over the old one ([`Retained::write_scrubbed`], `archive::swaps`).
//!
//! The directories are created 0700 and the copies 0600 ([`crate::private`]).
//!
//! Crash safety: the store records the copy's length after each committed batch. Bytes past that
//! length are a batch whose transaction never committed; they are cut off before the next append.
//! Where no length is recorded (an older generation's copy) only a *torn tail* is ever cut: the
//! copy's last bytes when they are a frame's beginning cut short with no whole frame after them.
//! Bytes inside a copy that are no frame are *damage*: kept byte for byte, refused by every
//! reader that would store or write less than the copy held (a reindex, a rewrite), and read
//! past, to the frames after them, by a rebuild from the copies alone ([`Retained::lines_past_damage`]).
//!
//! A source's copy opens with a skippable frame describing it ([`Manifest`]): the agent, the
//! path as the archive keeps it, the role, the read kind and the session, what the copies do
//! not hold and a rebuild of the archive from them alone needs (`archive::rebuild`). In the
//! copy rather than a file beside it: it is written in the same append as the copy's first
//! frame and cut with it when that batch rolls back, a forget that deletes the copies deletes
//! it, a person who saves the copies saves it, and every tool that lists or reads
//! `retained/` sees copies only, as before. `zstdcat` passes over it; a rewrite of the copy
//! makes it again from the archive's rows ([`Retained::write_scrubbed_with`]; migration 14's
//! re-key keeps every frame it does not change), and a reindex that redacts the rows a
//! manifest was made from writes the copy again with theirs ([`Retained::restate_manifest`]).
//! Nothing goes in one, or is read from one, but as the archive keeps it at rest
//! ([`Manifest::at_rest`]). An archive from before it has one appended to each copy
//! (migration 47).

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::archive::Agent;
use crate::error::{Error, Result};

/// Magic number of the skippable frames we write (zstd reserves 0x184D2A50..=0x184D2A5F).
const HASH_FRAME_MAGIC: u32 = 0x184D_2A5C;
// Level 1: the copies are written on every capture; ratio differs little on JSONL.
const COMPRESSION_LEVEL: i32 = 1;

/// The retained-copy directory of a data dir.
#[derive(Debug, Clone)]
pub struct Retained {
    root: PathBuf,
}

/// What happened to an append.
#[derive(Debug, PartialEq, Eq)]
pub enum Appended {
    /// The copy now has this many bytes.
    Ok(u64),
    /// The copy is shorter than the store says (lost in a power cut, or deleted): the caller
    /// must start a new generation and re-read the source from the beginning.
    Short { found: u64, expected: u64 },
}

/// One line of a retained copy, with its record key when the copy does not hold the raw line.
/// An empty line holds the place of a line capture skipped (longer than the limit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetainedLine {
    pub line_no: u64,
    pub text: Vec<u8>,
    pub record_hash: Option<String>,
}

impl Retained {
    pub fn new(data_dir: &Path) -> Retained {
        Retained {
            root: data_dir.join("retained"),
        }
    }

    pub fn path(&self, agent: Agent, source_key: &str, generation: u32) -> PathBuf {
        self.root
            .join(agent.as_str())
            .join(format!("{source_key}.g{generation}.jsonl.zst"))
    }

    /// Encode a batch (`lines`: redacted lines, each ending in `\n`; `changed`: `(line_no,
    /// record key)` of lines the copy does not hold byte for byte) as the bytes
    /// [`Retained::append`] writes. Pure, so capture runs it on the reading threads.
    pub fn encode(lines: &[u8], changed: &[(u64, String)]) -> std::io::Result<Vec<u8>> {
        let mut out = Vec::new();
        if !lines.is_empty() {
            out = zstd::bulk::compress(lines, COMPRESSION_LEVEL)?;
        }
        if !changed.is_empty() {
            let mut payload = String::new();
            for (line_no, hash) in changed {
                payload.push_str(&format!("{line_no} {hash}\n"));
            }
            out.extend_from_slice(&HASH_FRAME_MAGIC.to_le_bytes());
            out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
            out.extend_from_slice(payload.as_bytes());
        }
        Ok(out)
    }

    /// Whether the copy at `path` has fewer bytes than the store recorded (lost or deleted).
    pub fn is_short(&self, path: &Path, expected_len: u64) -> bool {
        expected_len > 0 && fs::metadata(path).map_or(true, |m| m.len() < expected_len)
    }

    /// Append encoded bytes to the copy whose committed length is `expected_len`. Bytes past
    /// it are cut first: the store records a copy's length in the transaction that commits
    /// its batch, so they are a batch that never committed. A caller with no committed length
    /// to give (migration 47 on an older generation's copy) gives the copy's length less a
    /// torn tail ([`Retained::whole_len`]): damage is never cut, only written after.
    pub fn append(&self, path: &Path, expected_len: u64, encoded: &[u8]) -> Result<Appended> {
        if let Some(dir) = path.parent() {
            crate::private::create_dir_all(dir).map_err(|e| self.write_err(dir, e))?;
        }
        let mut file = crate::private::open_options()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| self.write_err(path, e))?;
        let found = file.metadata().map_err(|e| self.write_err(path, e))?.len();
        if found < expected_len {
            return Ok(Appended::Short {
                found,
                expected: expected_len,
            });
        }
        // Nothing to write (a reindex's or a rebuild's batch, which stores records again from
        // the copy): the copy is left as it is, bytes past its committed length too. They are
        // cut by the next append that writes, and no read goes past the committed length.
        if encoded.is_empty() {
            return Ok(Appended::Ok(expected_len));
        }
        if found > expected_len {
            file.set_len(expected_len)
                .map_err(|e| self.write_err(path, e))?;
        }
        let written = file
            .seek(SeekFrom::Start(expected_len))
            .and_then(|_| file.write_all(encoded));
        if let Err(e) = written {
            // A full disk (or any failed write) can leave part of the frame behind: cut the
            // copy back to its committed length now rather than at the next append.
            self.discard_uncommitted(path, expected_len);
            return Err(self.write_err(path, e));
        }
        Ok(Appended::Ok(expected_len + encoded.len() as u64))
    }

    /// Best effort after a failed write or a rolled-back commit: cut the copy back to
    /// `committed_len` bytes (removing it when nothing of it was committed). Whatever is left
    /// is cut again before the next append.
    pub fn discard_uncommitted(&self, path: &Path, committed_len: u64) {
        if committed_len == 0 {
            let _ = fs::remove_file(path);
        } else if fs::metadata(path).is_ok_and(|m| m.len() > committed_len) {
            let _ = OpenOptions::new()
                .write(true)
                .open(path)
                .and_then(|f| f.set_len(committed_len));
        }
    }

    /// A failed write under the retained dir; [`Error::DiskFull`] when there was no room.
    fn write_err(&self, path: &Path, source: std::io::Error) -> Error {
        Error::write_in(self.root.parent().unwrap_or(&self.root), path, source)
    }

    /// Read a retained copy back: every line, with its record key where the frame lists one.
    pub fn read(&self, path: &Path, first_line_no: u64) -> Result<Vec<RetainedLine>> {
        self.read_committed(path, first_line_no, 0)
    }

    /// [`Retained::read`] of the copy's first `committed` bytes (what the store recorded; 0:
    /// the whole file), so a batch written but never committed is not read as the copy's.
    pub fn read_committed(
        &self,
        path: &Path,
        first_line_no: u64,
        committed: u64,
    ) -> Result<Vec<RetainedLine>> {
        self.lines(path, first_line_no, committed)?.collect()
    }

    /// The lines of [`Retained::read_committed`] one data frame at a time, so a reader holds
    /// a frame's text, not the copy's (the copy stays in memory compressed). A tail a write
    /// cut off mid-frame is left out; bytes inside the copy that are no frame (damage) are
    /// an error: a reader that stores what it reads in place of what the archive holds
    /// (a reindex) must not lose the lines they held.
    pub fn lines(&self, path: &Path, first_line_no: u64, committed: u64) -> Result<CopyLines> {
        self.open_lines(path, first_line_no, committed, false)
    }

    /// [`Retained::lines`] read past damage: the frames after bytes that are no frame are read
    /// as the copy's next lines (the damaged bytes' lines are lost: those after are numbered
    /// as they are read, and take the key a frame lists for them only when it is provably
    /// theirs). For a rebuild from the copies alone, where nothing else holds them.
    pub fn lines_past_damage(
        &self,
        path: &Path,
        first_line_no: u64,
        committed: u64,
    ) -> Result<CopyLines> {
        self.open_lines(path, first_line_no, committed, true)
    }

    fn open_lines(
        &self,
        path: &Path,
        first_line_no: u64,
        committed: u64,
        past_damage: bool,
    ) -> Result<CopyLines> {
        let mut raw = Vec::new();
        File::open(path)
            .and_then(|mut f| f.read_to_end(&mut raw))
            .map_err(|e| Error::Read {
                path: path.to_owned(),
                source: e,
            })?;
        if committed > 0 && (raw.len() as u64) > committed {
            raw.truncate(committed as usize);
        }
        let mut pieces = pieces(&raw);
        pieces.retain(|p| !matches!(p, Piece::Torn { .. }));
        if !past_damage
            && let Some(Piece::Damaged { at, len }) =
                pieces.iter().find(|p| matches!(p, Piece::Damaged { .. }))
        {
            return Err(damaged(path, *at, *len));
        }
        // The keys first: a key frame follows the data frame whose lines it lists. Those after
        // damage number lines the read cannot number (how many the damage held is not known).
        let mut keys = HashMap::new();
        let mut later = std::collections::HashSet::new();
        let mut after_damage = false;
        for piece in &pieces {
            let Piece::Frame { at, len } = *piece else {
                after_damage = true;
                continue;
            };
            let Some(Some(payload)) = hash_frame(&raw[at..at + len]) else {
                continue;
            };
            for row in String::from_utf8_lossy(payload).lines() {
                if let Some((n, h)) = row.split_once(' ')
                    && let Ok(n) = n.parse::<u64>()
                {
                    if after_damage {
                        later.insert(h.to_owned());
                    } else {
                        keys.insert(n, h.to_owned());
                    }
                }
            }
        }
        Ok(CopyLines {
            path: path.to_owned(),
            raw,
            pieces,
            next_piece: 0,
            past_damage,
            keys,
            later,
            unaligned: false,
            next_line: first_line_no,
            tail: Vec::new(),
            ready: std::collections::VecDeque::new(),
            done: false,
        })
    }
}

/// The payload of the skippable frame at the start of `rest` (`None` inside: it is cut short),
/// or `None` when `rest` does not start with one.
fn hash_frame(rest: &[u8]) -> Option<Option<&[u8]>> {
    if rest.len() < 8
        || u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]) != HASH_FRAME_MAGIC
    {
        return None;
    }
    let len = u32::from_le_bytes([rest[4], rest[5], rest[6], rest[7]]) as usize;
    Some(rest.get(8..8 + len))
}

fn corrupt(path: &Path, what: &str) -> Error {
    Error::Corrupt {
        path: path.to_owned(),
        what: what.to_owned(),
    }
}

/// The error of a copy holding `len` damaged bytes at byte `at`, which a reader or writer that
/// would lose what they held refuses.
fn damaged(path: &Path, at: usize, len: usize) -> Error {
    corrupt(
        path,
        &format!(
            "{} at byte {at} are no frame (damaged); the copy is left as it is, and a rebuild \
             from the copies (cairn reindex --from-copies) reads the frames after them",
            crate::text::plural(len as u64, "byte")
        ),
    )
}

/// A retained copy's lines in order, decoded one data frame at a time ([`Retained::lines`]).
/// Every line ended by a line end is one, an empty one too: capture writes an empty line where
/// it skipped one (longer than the limit), so the lines after keep their numbers. After an
/// error it yields nothing more.
pub struct CopyLines {
    path: PathBuf,
    raw: Vec<u8>,
    /// The copy's frames and damage, its torn tail left out ([`pieces`]).
    pieces: Vec<Piece>,
    next_piece: usize,
    /// Whether damage is passed over ([`Retained::lines_past_damage`]) or an error.
    past_damage: bool,
    /// Line number to the key its frame lists, taken as the line is read.
    keys: HashMap<u64, String>,
    /// The keys listed after damage, whose line numbers the read cannot tell.
    later: std::collections::HashSet<String>,
    /// Whether damage was passed over: the lines read since are not numbered as the copy
    /// numbered them.
    unaligned: bool,
    next_line: u64,
    /// The start of a line a frame ended without its line end.
    tail: Vec<u8>,
    ready: std::collections::VecDeque<RetainedLine>,
    done: bool,
}

impl CopyLines {
    fn push(&mut self, text: Vec<u8>) {
        let line_no = self.next_line;
        self.next_line += 1;
        // After damage a listed key is the line's only when it is the key of the line as
        // held (a redacted line's: [`crate::keys::redacted_record_hash`]); no other key is
        // given to a line whose number may be another's.
        let record_hash = if self.unaligned {
            let key = crate::keys::redacted_record_hash(&text);
            self.later.contains(&key).then_some(key)
        } else {
            self.keys.remove(&line_no)
        };
        self.ready.push_back(RetainedLine {
            line_no,
            record_hash,
            text,
        });
    }

    /// Pass over damage: the start of a line a frame left open ends there (what followed it
    /// is lost), and the lines after are not numbered as the copy numbered them.
    fn pass_damage(&mut self) {
        if !self.tail.is_empty() {
            let tail = std::mem::take(&mut self.tail);
            self.push(tail);
        }
        self.unaligned = true;
    }

    /// Decode the next data frame into `ready`; `false` at the end of the copy.
    fn decode_next(&mut self) -> Result<bool> {
        loop {
            let Some(&piece) = self.pieces.get(self.next_piece) else {
                if !self.tail.is_empty() {
                    let tail = std::mem::take(&mut self.tail);
                    self.push(tail);
                    return Ok(true);
                }
                return Ok(false);
            };
            self.next_piece += 1;
            let (at, len) = match piece {
                Piece::Frame { at, len } => (at, len),
                // Only a read past damage holds any (the torn tail is left out at the open).
                Piece::Damaged { .. } | Piece::Torn { .. } => {
                    self.pass_damage();
                    if !self.ready.is_empty() {
                        return Ok(true);
                    }
                    continue;
                }
            };
            let rest = &self.raw[at..at + len];
            // A key frame, the manifest, or a frame a later build writes: no lines in it.
            if skippable_len(rest).is_some() {
                continue;
            }
            let mut frame = Vec::new();
            let decoded = zstd::stream::read::Decoder::new(rest)
                .map(zstd::stream::read::Decoder::single_frame)
                .and_then(|mut d| d.read_to_end(&mut frame));
            match decoded {
                Ok(_) => {}
                // A frame whose bytes are damaged past its header: as damage.
                Err(_) if self.past_damage => {
                    self.pass_damage();
                    if !self.ready.is_empty() {
                        return Ok(true);
                    }
                    continue;
                }
                Err(e) => {
                    return Err(Error::Read {
                        path: self.path.clone(),
                        source: e,
                    });
                }
            }
            let mut pieces = frame.split(|b| *b == b'\n').peekable();
            while let Some(piece) = pieces.next() {
                if pieces.peek().is_none() {
                    // No line end after it (yet): it runs on into the next frame, or ends the copy.
                    self.tail.extend_from_slice(piece);
                } else if self.tail.is_empty() {
                    self.push(piece.to_vec());
                } else {
                    let mut line = std::mem::take(&mut self.tail);
                    line.extend_from_slice(piece);
                    self.push(line);
                }
            }
            if !self.ready.is_empty() {
                return Ok(true);
            }
        }
    }
}

impl Iterator for CopyLines {
    type Item = Result<RetainedLine>;

    fn next(&mut self) -> Option<Result<RetainedLine>> {
        if let Some(line) = self.ready.pop_front() {
            return Some(Ok(line));
        }
        if self.done {
            return None;
        }
        match self.decode_next() {
            Ok(true) => self.ready.pop_front().map(Ok),
            Ok(false) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// How much of a rewritten copy's text goes into one zstd frame (a capture batch's size), so it
/// is read back frame by frame as an appended one is.
const REWRITE_FRAME_BYTES: usize = 4 * 1024 * 1024;

impl Retained {
    /// Where the rewrite of the copy at `path` is written before it takes the copy's place.
    pub fn scrub_path(path: &Path) -> PathBuf {
        path.with_extension("zst.scrub")
    }

    /// Write `lines` (a whole copy, its lines in order with the keys of those it does not hold
    /// byte for byte) as the copy that is to replace the one at `path`, beside it
    /// ([`Retained::scrub_path`]), frame by frame as they come, synced to disk. Returns its
    /// length. A line that cannot be read leaves nothing written. Nothing takes the copy's
    /// place until [`Retained::swap_in`]. The copy's manifests go with it, each as the archive
    /// keeps it at rest ([`Manifest::at_rest`]).
    pub fn write_scrubbed(
        &self,
        path: &Path,
        lines: impl IntoIterator<Item = Result<RetainedLine>>,
    ) -> Result<u64> {
        self.write_scrubbed_with(path, None, lines)
    }

    /// [`Retained::write_scrubbed`], the copy's manifests (when it holds any) replaced by one
    /// from `rows` (what the archive's rows say of the source now, [`restated`]): a rewrite
    /// never carries a manifest whose path or facts the rows have since redacted.
    pub fn write_scrubbed_with(
        &self,
        path: &Path,
        rows: Option<&Manifest>,
        lines: impl IntoIterator<Item = Result<RetainedLine>>,
    ) -> Result<u64> {
        let tmp = Retained::scrub_path(path);
        if let Some(dir) = tmp.parent() {
            crate::private::create_dir_all(dir).map_err(|e| self.write_err(dir, e))?;
        }
        let held = fs::read(path).ok();
        // A rewrite holds the lines read, and no more: a copy with damage in it is not
        // written again, so the damaged bytes (and what a tool may yet read of them) stay.
        if let Some((at, len)) = held
            .as_deref()
            .and_then(|raw| damage_in(raw).first().copied())
        {
            return Err(damaged(path, at as usize, len as usize));
        }
        // The copy's manifest goes with it (the rewrite holds its lines again, and no more),
        // never as it was written: a build whose rules missed a secret wrote it.
        let manifests: Vec<Vec<u8>> = held
            .map(|raw| {
                let held = manifest_payloads(&raw);
                match rows {
                    Some(rows) if !held.is_empty() => {
                        vec![Retained::manifest_frame(&restated(&held, rows))]
                    }
                    _ => held
                        .into_iter()
                        .map(|p| skippable(MANIFEST_FRAME_MAGIC, &kept_payload(p)))
                        .collect(),
                }
            })
            .unwrap_or_default();
        let mut file = crate::private::open_options()
            .create(true)
            .truncate(true)
            .write(true)
            .open(&tmp)
            .map_err(|e| self.write_err(&tmp, e))?;
        let mut len = 0u64;
        for frame in &manifests {
            if let Err(e) = file.write_all(frame) {
                let _ = fs::remove_file(&tmp);
                return Err(self.write_err(&tmp, e));
            }
            len += frame.len() as u64;
        }
        let mut flush = |text: &mut Vec<u8>, keys: &mut Vec<(u64, String)>| -> Result<()> {
            let encoded = Retained::encode(text, keys).map_err(|e| self.write_err(&tmp, e))?;
            file.write_all(&encoded)
                .map_err(|e| self.write_err(&tmp, e))?;
            len += encoded.len() as u64;
            text.clear();
            keys.clear();
            Ok(())
        };
        let mut text = Vec::new();
        let mut keys = Vec::new();
        let written = (|| -> Result<()> {
            for line in lines {
                let line = line?;
                text.extend_from_slice(&line.text);
                text.push(b'\n');
                if let Some(key) = line.record_hash {
                    keys.push((line.line_no, key));
                }
                if text.len() >= REWRITE_FRAME_BYTES {
                    flush(&mut text, &mut keys)?;
                }
            }
            flush(&mut text, &mut keys)
        })();
        let synced = written.and_then(|()| file.sync_all().map_err(|e| self.write_err(&tmp, e)));
        if let Err(e) = synced {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
        Ok(len)
    }

    /// Put the rewrite of the copy at `path` in its place. `false`: there was none (already
    /// put in place, or removed with its copy by a forget).
    pub fn swap_in(&self, path: &Path) -> Result<bool> {
        let tmp = Retained::scrub_path(path);
        match fs::rename(&tmp, path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(self.write_err(path, e)),
        }
        // The rename itself made durable, so a power cut cannot bring the old copy back.
        if let Some(dir) = path.parent() {
            File::open(dir)
                .and_then(|d| d.sync_all())
                .map_err(|e| self.write_err(dir, e))?;
        }
        Ok(true)
    }

    /// Remove the rewrite of the copy at `path` that will not take its place.
    pub fn discard_scrubbed(&self, path: &Path) {
        let _ = fs::remove_file(Retained::scrub_path(path));
    }

    /// Set the record keys the skippable frames of the copy at `path` list for some lines
    /// (`keys`: line number to key). Rows of the same length are rewritten in place; otherwise
    /// the copy is written anew beside and renamed over. Returns the copy's length when it
    /// changed, `None` when it did not (or the copy does not exist). The caller holds the
    /// store's write lock, so no capture appends meanwhile.
    ///
    /// A copy with damage in it, or a tail a write cut off, is re-keyed as far as it reads:
    /// the key frames among its whole frames ([`pieces`]) are set, every other byte is kept as
    /// it is (a key frame inside the damage cannot be told from it). A frame that does not read
    /// is no reason to try again: it will not read better at the next open.
    pub fn set_keys(
        &self,
        path: &Path,
        keys: &std::collections::HashMap<u64, String>,
    ) -> Result<Option<u64>> {
        let raw = match fs::read(path) {
            Ok(raw) => raw,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(Error::Read {
                    path: path.to_owned(),
                    source,
                });
            }
        };
        let mut out = Vec::with_capacity(raw.len());
        let mut patches: Vec<(usize, Vec<u8>)> = Vec::new();
        let mut resized = false;
        for piece in pieces(&raw) {
            let (at, len) = match piece {
                Piece::Frame { at, len } => (at, len),
                Piece::Damaged { at, len } | Piece::Torn { at, len } => {
                    out.extend_from_slice(&raw[at..at + len]);
                    continue;
                }
            };
            let frame = &raw[at..at + len];
            if let Some(Some(payload)) = hash_frame(frame) {
                let len = payload.len();
                let mut new = String::with_capacity(len);
                for row in String::from_utf8_lossy(payload).lines() {
                    let key = row
                        .split_once(' ')
                        .and_then(|(n, _)| n.parse::<u64>().ok().map(|n| (n, keys.get(&n))));
                    match key {
                        Some((n, Some(key))) => new.push_str(&format!("{n} {key}\n")),
                        _ => {
                            new.push_str(row);
                            new.push('\n');
                        }
                    }
                }
                if new.as_bytes() != payload {
                    if new.len() == len {
                        patches.push((out.len() + 8, new.clone().into_bytes()));
                    } else {
                        resized = true;
                    }
                }
                out.extend_from_slice(&HASH_FRAME_MAGIC.to_le_bytes());
                out.extend_from_slice(&(new.len() as u32).to_le_bytes());
                out.extend_from_slice(new.as_bytes());
                continue;
            }
            out.extend_from_slice(frame);
        }
        let write_err = |e| self.write_err(path, e);
        if resized {
            let tmp = path.with_extension("zst.rekey");
            let written = File::create(&tmp)
                .and_then(|mut f| f.write_all(&out).and_then(|()| f.sync_all()))
                .and_then(|()| fs::rename(&tmp, path));
            if let Err(e) = written {
                let _ = fs::remove_file(&tmp);
                return Err(write_err(e));
            }
            return Ok(Some(out.len() as u64));
        }
        if patches.is_empty() {
            return Ok(None);
        }
        let mut file = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(write_err)?;
        for (at, bytes) in patches {
            file.seek(SeekFrom::Start(at as u64))
                .and_then(|_| file.write_all(&bytes))
                .map_err(write_err)?;
        }
        file.sync_all().map_err(write_err)?;
        Ok(Some(raw.len() as u64))
    }
}

/// Magic number of the skippable frame holding a copy's [`Manifest`].
const MANIFEST_FRAME_MAGIC: u32 = 0x184D_2A5D;
/// The format of the manifests this build writes.
pub const MANIFEST_FORMAT: u32 = 1;
/// The longest manifest read: a real one is a few hundred bytes.
const MAX_MANIFEST_BYTES: u64 = 64 * 1024;
/// The longest path or id a manifest may hold.
const MAX_FIELD_BYTES: usize = 4096;

/// What a source's retained copies are copies of: what the `sources` and `sessions` rows of an
/// archive held of it when it was first retained, and what a rebuild from the copies alone
/// needs that the copies do not hold. Nothing in it the database does not keep at rest: the
/// path is `sources.path` (redacted where a part of it held a secret), the session's fields
/// are its key, the agent's own ids and the facts its `sessions` row holds, redacted as the row
/// holds them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`MANIFEST_FORMAT`] of the build that wrote it.
    pub format: u32,
    /// The agent (its canonical name, the copies' folder).
    pub agent: String,
    pub source_key: String,
    /// The source's path as the archive keeps it (`sources.path`).
    pub path: String,
    /// `main` or `subagent`.
    pub role: String,
    /// How it was read: `lines`, `document`, `tree` or `database`.
    pub kind: String,
    pub session: ManifestSession,
    /// When its first batch was stored (RFC 3339): the session's `captured_at`.
    pub first_read: String,
    /// The session's row when the source was first stored: the order sessions are rebuilt in,
    /// so those a list cannot tell apart otherwise (the same times) keep their order.
    #[serde(default)]
    pub session_row: Option<i64>,
}

/// The session a source was first stored under, with the facts of it a parser may have read
/// beside the transcript rather than in it (kimi-cli's work dir in `kimi.json`, a title or
/// model in a metadata file): a rebuild takes them where its copies give none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestSession {
    pub key: String,
    /// The agent's own session id (a sub-agent's: its parent's).
    pub id: Option<String>,
    pub parent_key: Option<String>,
    pub relation: Option<String>,
    pub agent_id: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub git_branch: Option<String>,
    #[serde(default)]
    pub provider: Option<String>,
    #[serde(default)]
    pub tool_version: Option<String>,
    /// RFC 3339, as the session row keeps it.
    #[serde(default)]
    pub started_at: Option<String>,
    #[serde(default)]
    pub updated_at: Option<String>,
    /// The token totals an agent reports for the whole session, as JSON text.
    #[serde(default)]
    pub cumulative_usage: Option<String>,
}

/// The read kinds a manifest names.
pub const KINDS: [&str; 4] = ["lines", "document", "tree", "database"];

impl Manifest {
    /// Why a manifest read from outside is not one to rebuild from (`agent` and `key`: the
    /// folder and the name it was found under), or `None`. Every field a rebuild stores or
    /// prints is checked: a hostile manifest is named and passed over, never trusted.
    pub fn problem(&self, agent: &str, key: &str) -> Option<String> {
        if self.format == 0 || self.format > MANIFEST_FORMAT {
            return Some(format!(
                "written in format {} (this build reads 1 to {MANIFEST_FORMAT})",
                self.format
            ));
        }
        if Agent::parse(&self.agent).map(Agent::as_str) != Some(self.agent.as_str()) {
            return Some(format!(
                "names an agent this build does not know ({})",
                self.agent
            ));
        }
        if self.agent != agent {
            return Some(format!(
                "names agent {} but lies in {agent}'s folder",
                self.agent
            ));
        }
        if self.source_key != key {
            return Some(format!("names source {} but is {key}'s", self.source_key));
        }
        if !matches!(self.role.as_str(), "main" | "subagent") {
            return Some(format!("names role {} (main or subagent)", self.role));
        }
        if !KINDS.contains(&self.kind.as_str()) {
            return Some(format!("names read kind {}", self.kind));
        }
        if !is_absolute(&self.path) {
            return Some("holds a path that is not absolute".to_owned());
        }
        if crate::text::rfc3339(&self.first_read).is_none() {
            return Some("holds a first-read time that is not RFC 3339".to_owned());
        }
        if !is_session_key(&self.session.key) {
            return Some("holds a session key of the wrong form".to_owned());
        }
        if self
            .session
            .parent_key
            .as_deref()
            .is_some_and(|k| !is_session_key(k))
        {
            return Some("holds a parent key of the wrong form".to_owned());
        }
        if self
            .session
            .relation
            .as_deref()
            .is_some_and(|r| !matches!(r, "subagent" | "compaction" | "fork"))
        {
            return Some("names a relation this build does not know".to_owned());
        }
        let texts = [
            Some(&self.path),
            self.session.id.as_ref(),
            self.session.agent_id.as_ref(),
        ];
        if texts.into_iter().flatten().any(|t| !is_plain(t)) {
            return Some("holds control characters or is too long".to_owned());
        }
        None
    }

    /// The manifest holding only what the archive keeps at rest: its path and working
    /// directory kept part by part as `sources.path` is ([`crate::archive::store::at_rest`]),
    /// the facts a parser may read beside a transcript as `sessions` keeps them, every other
    /// field without what today's rules find definite. Every manifest written goes through
    /// here, and every one read: one an older build wrote before today's rules saw a secret in
    /// its path, or one a person forged, gives a rebuild no secret to store, and none is
    /// written again. Redacting twice changes nothing more.
    pub fn at_rest(&self) -> Manifest {
        let redactor = crate::archive::redact::Redactor::global();
        let definite = |t: &str| redactor.redact_definite(t).into_owned();
        let maybe = |t: &Option<String>| t.as_deref().map(definite);
        let fact = |field: &str, t: &Option<String>| {
            t.as_deref()
                .map(|t| crate::archive::store::kept_fact(field, t).unwrap_or_else(|| definite(t)))
        };
        let s = &self.session;
        Manifest {
            format: self.format,
            agent: definite(&self.agent),
            source_key: definite(&self.source_key),
            path: crate::archive::store::at_rest(&self.path).into_owned(),
            role: definite(&self.role),
            kind: definite(&self.kind),
            session: ManifestSession {
                key: definite(&s.key),
                id: maybe(&s.id),
                parent_key: maybe(&s.parent_key),
                relation: maybe(&s.relation),
                agent_id: maybe(&s.agent_id),
                cwd: fact("cwd", &s.cwd),
                title: fact("title", &s.title),
                model: fact("model", &s.model),
                git_branch: fact("git_branch", &s.git_branch),
                provider: fact("provider", &s.provider),
                tool_version: fact("tool_version", &s.tool_version),
                started_at: maybe(&s.started_at),
                updated_at: maybe(&s.updated_at),
                cumulative_usage: maybe(&s.cumulative_usage),
            },
            first_read: definite(&self.first_read),
            session_row: self.session_row,
        }
    }

    /// Whether a copy holding this manifest should hold `rows`' instead: it holds what today's
    /// rules redact, or names another agent, source or path than the rows do now (a reindex
    /// kept the path sealed, and the copies took the sealed path's key). The rows are taken
    /// at rest too, as their manifest is written: a path the rows keep as found (another
    /// source has its sealed form) does not make the copy stale at every reindex.
    fn stale_against(&self, rows: &Manifest) -> bool {
        let rows = rows.at_rest();
        (&self.agent, &self.source_key, &self.path) != (&rows.agent, &rows.source_key, &rows.path)
            || self.at_rest() != *self
    }
}

/// The manifest a copy holding the manifests `held` is to hold instead, from `rows` (what the
/// archive's rows say of its source now): when the copy's first source manifest reads, the
/// time it gives of the first read and the session row it gives are kept (they said where the
/// source began, which the rows say only approximately).
fn restated(held: &[&[u8]], rows: &Manifest) -> Manifest {
    let first = held
        .iter()
        .find_map(|p| serde_json::from_slice::<Manifest>(p).ok());
    let mut out = rows.clone();
    if let Some(first) = first {
        out.first_read = first.first_read;
        out.session_row = first.session_row.or(rows.session_row);
    }
    out.at_rest()
}

/// A manifest frame's payload as a rewrite carries it over: a manifest at rest
/// ([`Manifest::at_rest`]), or what does not read as one with what the rules find redacted.
fn kept_payload(payload: &[u8]) -> Vec<u8> {
    match serde_json::from_slice::<Manifest>(payload) {
        Ok(m) => manifest_payload(&m),
        Err(_) => {
            let text = String::from_utf8_lossy(payload);
            crate::archive::redact::Redactor::global()
                .redact_line(&text, &mut Vec::new())
                .into_owned()
                .into_bytes()
        }
    }
}

/// The payload of `manifest`'s frame: the manifest at rest, as JSON.
fn manifest_payload(manifest: &Manifest) -> Vec<u8> {
    serde_json::to_vec(&manifest.at_rest()).unwrap_or_default()
}

/// A path as every platform writes an absolute one.
fn is_absolute(path: &str) -> bool {
    let b = path.as_bytes();
    path.starts_with('/') || (b.len() > 2 && b[0].is_ascii_alphabetic() && b[1] == b':')
}

/// Text a terminal shows as it is: no control, bidi or invisible character, bounded.
fn is_plain(text: &str) -> bool {
    text.len() <= MAX_FIELD_BYTES
        && !text.chars().any(char::is_control)
        && crate::text::hidden(text).is_empty()
}

/// `sha256-` and 32 lower-case hex digits: the form of every key Cairn makes.
fn is_session_key(key: &str) -> bool {
    key.strip_prefix("sha256-").is_some_and(|h| {
        h.len() == 32
            && h.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// Every source whose copies a data dir holds, as found on disk, and what is there but belongs
/// to none ([`Retained::inventory`]).
#[derive(Debug, Default)]
pub struct Inventory {
    /// By agent folder and source key.
    pub sources: Vec<Held>,
    /// A folder or file that is no agent's copies, with why.
    pub strays: Vec<(PathBuf, String)>,
}

/// One source's copies under `retained/`.
#[derive(Debug)]
pub struct Held {
    /// The folder it is in (an agent's name).
    pub agent: String,
    pub source_key: String,
    /// Each generation's copy.
    pub copies: std::collections::BTreeMap<u32, PathBuf>,
}

/// A skippable frame: the magic, the length, the payload.
fn skippable(magic: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + payload.len());
    out.extend_from_slice(&magic.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// The length of the skippable frame (of any magic zstd reserves for them) at the start of
/// `rest`, when it is one and whole.
fn skippable_len(rest: &[u8]) -> Option<usize> {
    if rest.len() < 8 {
        return None;
    }
    let magic = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
    if magic & 0xFFFF_FFF0 != 0x184D_2A50 {
        return None;
    }
    let len = 8 + u32::from_le_bytes([rest[4], rest[5], rest[6], rest[7]]) as usize;
    (len <= rest.len()).then_some(len)
}

/// The payloads of the manifest frames among the whole frames of `raw`, in order (damage
/// passed over).
fn manifest_payloads(raw: &[u8]) -> Vec<&[u8]> {
    pieces(raw)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Frame { at, len } if raw[at..at + 4] == MANIFEST_FRAME_MAGIC.to_le_bytes() => {
                Some(&raw[at + 8..at + len])
            }
            _ => None,
        })
        .collect()
}

/// The magic number that opens a zstd frame.
const ZSTD_MAGIC: u32 = 0xFD2F_B528;
/// The magic numbers of skippable frames, less their last four bits.
const SKIPPABLE_MAGIC: u32 = 0x184D_2A50;
/// The most bytes a zstd block holds.
const MAX_BLOCK: usize = 128 * 1024;

/// A run of a copy's bytes, as [`pieces`] cuts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece {
    /// A whole frame, zstd or skippable, of `len` bytes at byte `at`.
    Frame { at: usize, len: usize },
    /// Bytes that are no frame, with a whole frame or the copy's end after them: damage, kept
    /// as it is (nothing ever cuts it).
    Damaged { at: usize, len: usize },
    /// The copy's last bytes, a frame's beginning cut short, with no whole frame after it: a
    /// write a crash or a full disk stopped, never committed. The only bytes a cut takes away
    /// when the store gives no committed length.
    Torn { at: usize, len: usize },
}

/// What the bytes at the start of `rest` are.
enum Start {
    /// A whole frame of this many bytes.
    Whole(usize),
    /// A frame's beginning that goes on past the end of `rest`.
    Short,
    /// No frame's beginning.
    No,
}

/// What the bytes at the start of `rest` are: a whole frame, one cut short, or neither.
fn frame_at(rest: &[u8]) -> Start {
    if let Some(len) = skippable_len(rest) {
        return Start::Whole(len);
    }
    if rest.len() < 4 {
        // The beginning of a magic number, cut short?
        let zstd = ZSTD_MAGIC.to_le_bytes();
        let skip = SKIPPABLE_MAGIC.to_le_bytes();
        let magic = !rest.is_empty()
            && (*rest == zstd[..rest.len()]
                || (rest[0] & 0xF0 == skip[0] && rest[1..] == skip[1..rest.len()]));
        return if magic { Start::Short } else { Start::No };
    }
    let magic = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
    if magic & 0xFFFF_FFF0 == SKIPPABLE_MAGIC {
        // Not whole (above): its length, or the payload it gives, runs past the end.
        return Start::Short;
    }
    if magic != ZSTD_MAGIC {
        return Start::No;
    }
    match zstd::zstd_safe::find_frame_compressed_size(rest) {
        Ok(n) if n > 0 && n <= rest.len() => Start::Whole(n),
        _ if zstd_cut_short(rest) => Start::Short,
        _ => Start::No,
    }
}

/// Whether the zstd frame at the start of `rest`, which zstd does not read as whole, is one
/// whose header and block headers read well up to the end of `rest` and go on past it (cut
/// short), rather than one whose bytes are damaged.
fn zstd_cut_short(rest: &[u8]) -> bool {
    let Some(&descriptor) = rest.get(4) else {
        return true;
    };
    if descriptor & 0x08 != 0 {
        // The reserved bit.
        return false;
    }
    let single_segment = descriptor & 0x20 != 0;
    let mut p = 5 + usize::from(!single_segment);
    p += [0, 1, 2, 4][usize::from(descriptor & 0x03)];
    p += [usize::from(single_segment), 2, 4, 8][usize::from(descriptor >> 6)];
    loop {
        let Some(h) = rest.get(p..p + 3) else {
            return true;
        };
        let header = u32::from(h[0]) | (u32::from(h[1]) << 8) | (u32::from(h[2]) << 16);
        let size = (header >> 3) as usize;
        p += 3;
        match (header >> 1) & 3 {
            3 => return false,
            _ if size > MAX_BLOCK => return false,
            1 => p += 1,
            _ => p += size,
        }
        if p > rest.len() {
            return true;
        }
        if header & 1 == 1 {
            break;
        }
    }
    if descriptor & 0x04 != 0 {
        p += 4;
    }
    p > rest.len()
}

/// The first byte at or after `from` where a whole frame starts, if any.
fn next_frame(raw: &[u8], from: usize) -> Option<usize> {
    let zstd = ZSTD_MAGIC.to_le_bytes();
    let skip = SKIPPABLE_MAGIC.to_le_bytes();
    (from..raw.len().saturating_sub(7)).find(|&at| {
        let m = &raw[at..at + 4];
        (*m == zstd || (m[0] & 0xF0 == skip[0] && m[1..] == skip[1..]))
            && matches!(frame_at(&raw[at..]), Start::Whole(_))
    })
}

/// `raw` (a copy, or its committed bytes) cut into its whole frames, the damage between them
/// and a torn tail ([`Piece`]): a run that starts no whole frame is a torn tail only when it
/// is the beginning of one cut short and no whole frame follows it; otherwise it is damage,
/// and the frames after it are the copy's still. Damage running to the end ends where a
/// frame's beginning cut short starts, if one does: from there it is a torn tail.
fn pieces(raw: &[u8]) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < raw.len() {
        let start = frame_at(&raw[at..]);
        if let Start::Whole(len) = start {
            out.push(Piece::Frame { at, len });
            at += len;
            continue;
        }
        match next_frame(raw, at + 1) {
            Some(next) => {
                out.push(Piece::Damaged { at, len: next - at });
                at = next;
            }
            None => {
                // Damage may run into a frame's beginning cut short (its whole magic number
                // there): that is still a torn tail, as a frame appended after it would be
                // read as its end. A few bytes that could begin a magic number are damage.
                let torn = match start {
                    Start::Short => Some(at),
                    _ => (at + 1..raw.len().saturating_sub(3))
                        .find(|&p| matches!(frame_at(&raw[p..]), Start::Short)),
                };
                if let Some(torn) = torn {
                    if torn > at {
                        out.push(Piece::Damaged { at, len: torn - at });
                    }
                    out.push(Piece::Torn {
                        at: torn,
                        len: raw.len() - torn,
                    });
                } else {
                    out.push(Piece::Damaged {
                        at,
                        len: raw.len() - at,
                    });
                }
                break;
            }
        }
    }
    out
}

/// How many bytes of `raw` are the copy's: all of them but a torn tail ([`Piece::Torn`]).
fn kept_len(raw: &[u8]) -> u64 {
    match pieces(raw).last() {
        Some(Piece::Torn { at, .. }) => *at as u64,
        _ => raw.len() as u64,
    }
}

/// The damaged runs of `raw` (byte and length), in order.
fn damage_in(raw: &[u8]) -> Vec<(u64, u64)> {
    pieces(raw)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Damaged { at, len } => Some((at as u64, len as u64)),
            _ => None,
        })
        .collect()
}

impl Retained {
    /// The skippable frame describing a source, which the capture writer puts first in a new
    /// source's copy ([`Manifest`]): `zstdcat` passes over it, a read of the lines too.
    /// The manifest goes in at rest ([`Manifest::at_rest`]), whoever made it.
    pub fn manifest_frame(manifest: &Manifest) -> Vec<u8> {
        skippable(MANIFEST_FRAME_MAGIC, &manifest_payload(manifest))
    }

    /// Append `manifest` to the copy at `path`, whose committed length is `committed` (0: not
    /// known, as of an older generation's copy: all of it but a torn tail), unless its last
    /// manifest says the same: migration 47's description of a source an older build
    /// retained. Returns the copy's length when it grew. Appended where the copy's committed
    /// bytes end, as a capture's batch is: bytes after them (a batch never committed) are cut
    /// first, so none is ever counted in the copy's length. Where no committed length is known
    /// the only bytes cut are a torn tail ([`Piece::Torn`]): damage anywhere is kept byte for
    /// byte, the manifest appended after it (a rebuild reads the frames on both sides of it).
    /// A copy whose committed bytes end inside a frame is refused, named, and left as it is.
    pub fn describe(
        &self,
        path: &Path,
        committed: u64,
        manifest: &Manifest,
    ) -> Result<Option<u64>> {
        let raw = fs::read(path).map_err(|source| Error::Read {
            path: path.to_owned(),
            source,
        })?;
        let committed = match committed {
            0 => kept_len(&raw),
            n if n > raw.len() as u64 => {
                return Err(corrupt(
                    path,
                    &format!(
                        "{} bytes, shorter than the archive recorded ({n})",
                        raw.len()
                    ),
                ));
            }
            n => {
                if let Some(Piece::Torn { at, .. }) = pieces(&raw[..n as usize]).last() {
                    return Err(corrupt(
                        path,
                        &format!(
                            "its committed bytes end inside a frame (at byte {at} of {n}): \
                             no manifest appended"
                        ),
                    ));
                }
                n
            }
        };
        let held = &raw[..committed as usize];
        let same = manifest_payload(manifest);
        if manifest_payloads(held)
            .last()
            .is_some_and(|last| *last == same.as_slice())
        {
            return Ok(None);
        }
        match self.append(path, committed, &Retained::manifest_frame(manifest))? {
            Appended::Ok(len) => Ok(Some(len)),
            Appended::Short { found, .. } => Err(corrupt(
                path,
                &format!("{found} bytes, shorter than the archive recorded"),
            )),
        }
    }

    /// The manifest the copies of a source hold (the last one of the newest copy that holds
    /// one, among their whole frames): `None` when none does; `Some(Err(why))` when it is not
    /// one to rebuild from (too long, not JSON, a field missing or of the wrong type, a value
    /// [`Manifest::problem`] refuses for `agent`'s source `key`).
    pub fn manifest_in(
        copies: &std::collections::BTreeMap<u32, PathBuf>,
        agent: &str,
        key: &str,
    ) -> Result<Option<std::result::Result<Manifest, String>>> {
        for copy in copies.values().rev() {
            let read_err = |source| Error::Read {
                path: copy.clone(),
                source,
            };
            // The writer's opens the copy, alone: read without the rest. Migration 47's closes
            // it: the whole copy is read for it.
            let mut file = File::open(copy).map_err(read_err)?;
            let mut head = [0u8; 8];
            let opened = file.read_exact(&mut head).is_ok()
                && head[..4] == MANIFEST_FRAME_MAGIC.to_le_bytes();
            let raw = if opened {
                let len = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as u64;
                let mut payload = Vec::new();
                (&mut file)
                    .take(len.min(MAX_MANIFEST_BYTES + 1))
                    .read_to_end(&mut payload)
                    .map_err(read_err)?;
                if payload.len() as u64 > MAX_MANIFEST_BYTES {
                    return Ok(Some(Err(format!("its manifest is too long ({len} bytes)"))));
                }
                if (payload.len() as u64) < len {
                    // Cut off: as a copy holding none.
                    continue;
                }
                skippable(MANIFEST_FRAME_MAGIC, &payload)
            } else {
                fs::read(copy).map_err(read_err)?
            };
            let Some(payload) = manifest_payloads(&raw).last().copied() else {
                continue;
            };
            if payload.len() as u64 > MAX_MANIFEST_BYTES {
                return Ok(Some(Err(format!(
                    "its manifest is too long ({} bytes)",
                    payload.len()
                ))));
            }
            // At rest before anything else reads it: a rebuild stores no secret an older
            // build or a person left in it (and a key or agent redaction changes is refused).
            let manifest = match serde_json::from_slice::<Manifest>(payload) {
                Ok(m) => m.at_rest(),
                Err(e) => {
                    return Ok(Some(Err(format!(
                        "its manifest is not one Cairn wrote: {e}"
                    ))));
                }
            };
            return Ok(Some(match manifest.problem(agent, key) {
                Some(why) => Err(format!("its manifest {why}")),
                None => Ok(manifest),
            }));
        }
        Ok(None)
    }

    /// Every source with copies under `retained/`: each agent folder read once. Files a write
    /// left on its way (a rewrite's `.scrub` or `.rekey`) are passed over.
    pub fn inventory(&self) -> Result<Inventory> {
        let mut found = Inventory::default();
        let dirs = match fs::read_dir(&self.root) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(found),
            Err(source) => {
                return Err(Error::Read {
                    path: self.root.clone(),
                    source,
                });
            }
        };
        let mut by_key: std::collections::BTreeMap<(String, String), Held> =
            std::collections::BTreeMap::new();
        for dir in dirs.flatten() {
            let path = dir.path();
            if !dir.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let name = dir.file_name().to_string_lossy().into_owned();
            if Agent::parse(&name).map(Agent::as_str) != Some(name.as_str()) {
                found
                    .strays
                    .push((path, "a folder of no agent this build knows".to_owned()));
                continue;
            }
            let entries = fs::read_dir(&path).map_err(|source| Error::Read {
                path: path.clone(),
                source,
            })?;
            for entry in entries.flatten() {
                let file = entry.file_name().to_string_lossy().into_owned();
                if let Some((key, generation)) = copy_name(&file) {
                    by_key
                        .entry((name.clone(), key.to_owned()))
                        .or_insert_with(|| Held {
                            agent: name.clone(),
                            source_key: key.to_owned(),
                            copies: std::collections::BTreeMap::new(),
                        })
                        .copies
                        .insert(generation, entry.path());
                } else if !(file.ends_with(".scrub") || file.ends_with(".rekey")) {
                    found
                        .strays
                        .push((entry.path(), "not a retained copy".to_owned()));
                }
            }
        }
        found.sources = by_key.into_values().collect();
        Ok(found)
    }

    /// How many bytes of the copy at `path` are the copy's: its length, less a tail a write
    /// cut off mid-frame (a crash, a full disk: [`Piece::Torn`]), which no read counts.
    /// Damaged bytes inside the copy count: they are kept, and only a read past damage
    /// ([`Retained::lines_past_damage`]) reads on after them.
    pub fn whole_len(path: &Path) -> Result<u64> {
        let raw = fs::read(path).map_err(|source| Error::Read {
            path: path.to_owned(),
            source,
        })?;
        Ok(kept_len(&raw))
    }

    /// The damaged runs of the copy at `path` (byte and length; [`Piece::Damaged`]), in
    /// order: none in a sound copy.
    pub fn damage(path: &Path) -> Result<Vec<(u64, u64)>> {
        let raw = fs::read(path).map_err(|source| Error::Read {
            path: path.to_owned(),
            source,
        })?;
        Ok(damage_in(&raw))
    }

    /// The copy at `path` (its committed bytes: `committed`, 0 for all of its whole frames) as
    /// it is to be written again so that its manifests say what `rows` say of its source now
    /// (the archive's rows after a reindex redacted them): `None` when it holds no manifest,
    /// or none that is stale ([`Manifest::stale_against`]). The new copy opens with the one
    /// manifest [`restated`] makes, then every other frame of the copy, byte for byte.
    /// Committed bytes that end inside a frame (damage) are refused, the copy left as it is.
    pub fn restate_manifest(
        &self,
        path: &Path,
        committed: u64,
        rows: &Manifest,
    ) -> Result<Option<Vec<u8>>> {
        let raw = fs::read(path).map_err(|source| Error::Read {
            path: path.to_owned(),
            source,
        })?;
        let end = if committed == 0 {
            kept_len(&raw)
        } else {
            committed.min(raw.len() as u64)
        };
        let held = &raw[..end as usize];
        // Written again, a copy keeps every frame: damage would be lost.
        match pieces(held)
            .into_iter()
            .find(|p| !matches!(p, Piece::Frame { .. }))
        {
            Some(Piece::Damaged { at, len }) => return Err(damaged(path, at, len)),
            Some(_) => return Err(corrupt(path, "its committed bytes end inside a frame")),
            None => {}
        }
        let payloads = manifest_payloads(held);
        // A payload that is not what this build writes of what it reads (a field it does not
        // know, which may hold anything) is stale too: the rewrite keeps only known fields.
        let stale = payloads.iter().any(|p| {
            serde_json::from_slice::<Manifest>(p).map_or(true, |m| {
                m.stale_against(rows) || manifest_payload(&m) != *p
            })
        });
        if !stale {
            return Ok(None);
        }
        let mut out = Retained::manifest_frame(&restated(&payloads, rows));
        let mut pos = 0usize;
        while pos < held.len() {
            let rest = &held[pos..];
            let len = match skippable_len(rest) {
                Some(len) => {
                    if rest[..4] == MANIFEST_FRAME_MAGIC.to_le_bytes() {
                        pos += len;
                        continue;
                    }
                    len
                }
                None => zstd::zstd_safe::find_frame_compressed_size(rest)
                    .map_err(|_| corrupt(path, "damaged zstd frame"))?,
            };
            out.extend_from_slice(&rest[..len]);
            pos += len;
        }
        Ok(Some(out))
    }

    /// Write `bytes` as the copy that is to replace the one at `path`, beside it
    /// ([`Retained::scrub_path`]), synced to disk, as [`Retained::write_scrubbed`] does.
    /// Returns its length.
    pub fn write_beside(&self, path: &Path, bytes: &[u8]) -> Result<u64> {
        let tmp = Retained::scrub_path(path);
        let written = crate::private::open_options()
            .create(true)
            .truncate(true)
            .write(true)
            .open(&tmp)
            .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()));
        if let Err(e) = written {
            let _ = fs::remove_file(&tmp);
            return Err(self.write_err(&tmp, e));
        }
        Ok(bytes.len() as u64)
    }
}

/// The source key and generation a copy's file name `<key>.g<n>.jsonl.zst` gives.
fn copy_name(file: &str) -> Option<(&str, u32)> {
    let stem = file.strip_suffix(".jsonl.zst")?;
    let (key, generation) = stem.rsplit_once(".g")?;
    let generation = generation.parse().ok()?;
    (!key.is_empty() && !key.contains('.')).then_some((key, generation))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_frames_and_reads_them_back_with_hashes() {
        let dir = tempfile::tempdir().unwrap();
        let r = Retained::new(dir.path());
        let path = r.path(Agent::Claude, "sha256-abc", 0);
        let enc =
            |lines: &[u8], changed: &[(u64, String)]| Retained::encode(lines, changed).unwrap();
        let Appended::Ok(len) = r.append(&path, 0, &enc(b"{\"a\":1}\n", &[])).unwrap() else {
            panic!()
        };
        let Appended::Ok(len2) = r
            .append(
                &path,
                len,
                &enc(b"{\"b\":\"[REDACTED:x]\"}\n", &[(1, "sha256:ff".into())]),
            )
            .unwrap()
        else {
            panic!()
        };
        assert!(len2 > len);
        let lines = r.read(&path, 0).unwrap();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].text, b"{\"a\":1}");
        assert_eq!(lines[1].record_hash.as_deref(), Some("sha256:ff"));
        // Plain zstd tools see the JSONL (skippable frames are ignored).
        let plain = zstd::stream::decode_all(std::fs::File::open(&path).unwrap()).unwrap();
        assert_eq!(plain, b"{\"a\":1}\n{\"b\":\"[REDACTED:x]\"}\n");
    }

    /// Lines are read frame by frame: an empty line is a numbered place (of a line capture
    /// skipped), and a line a frame ends without its line end (which the writer never leaves)
    /// is joined with the next frame's first, numbered as a whole copy would number it.
    #[test]
    fn lines_are_read_frame_by_frame_as_one_text() {
        let dir = tempfile::tempdir().unwrap();
        let r = Retained::new(dir.path());
        let path = r.path(Agent::Claude, "sha256-abc", 0);
        let mut len = 0;
        for frame in [&b"one\n\ntw"[..], b"o\nthree\n", b"", b"four"] {
            let encoded = Retained::encode(frame, &[]).unwrap();
            let Appended::Ok(next) = r.append(&path, len, &encoded).unwrap() else {
                panic!()
            };
            len = next;
        }
        let lines = r.read(&path, 7).unwrap();
        let got: Vec<(u64, &[u8])> = lines.iter().map(|l| (l.line_no, &l.text[..])).collect();
        assert_eq!(
            got,
            [
                (7, &b"one"[..]),
                (8, b""),
                (9, b"two"),
                (10, b"three"),
                (11, b"four")
            ]
        );
    }

    proptest::proptest! {
        /// However a copy's text is cut into frames (a line running on into the next frame, empty
        /// frames, key frames anywhere after their lines), it reads back as its lines, each with
        /// the key listed for it, whole or one frame at a time.
        #[test]
        fn any_cut_of_a_copy_into_frames_reads_back_as_its_lines(
            lines in proptest::collection::vec(
                ("[a-z{}\":, ]{0,40}", proptest::option::of("[0-9a-f]{8}")), 0..30),
            cuts in proptest::collection::vec(0usize..2000, 0..8),
            first in 0u64..5,
            ends_with_newline in proptest::bool::ANY,
        ) {
            let mut text = Vec::new();
            let mut ends = Vec::new();
            for (i, (line, _)) in lines.iter().enumerate() {
                text.extend_from_slice(line.as_bytes());
                if i + 1 < lines.len() || ends_with_newline {
                    text.push(b'\n');
                }
                ends.push(text.len());
            }
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (text.len() + 1)).collect();
            cuts.push(text.len());
            cuts.sort_unstable();
            let dir = tempfile::tempdir().unwrap();
            let r = Retained::new(dir.path());
            let path = r.path(Agent::Claude, "sha256-p", 0);
            let (mut len, mut start, mut listed) = (0, 0, 0);
            for cut in cuts {
                // The keys of the lines this frame ends go in its key frame.
                let mut keys = Vec::new();
                while listed < lines.len() && ends[listed] <= cut {
                    if let Some(key) = &lines[listed].1 {
                        keys.push((first + listed as u64, key.clone()));
                    }
                    listed += 1;
                }
                let encoded = Retained::encode(&text[start..cut], &keys).unwrap();
                let Appended::Ok(next) = r.append(&path, len, &encoded).unwrap() else {
                    panic!("short copy")
                };
                len = next;
                start = cut;
            }
            // A last line without its line end is read as a line; without lines, nothing.
            let want: Vec<RetainedLine> = lines
                .iter()
                .enumerate()
                .filter(|(i, (line, _))| ends_with_newline || *i + 1 < lines.len() || !line.is_empty())
                .map(|(i, (line, key))| RetainedLine {
                    line_no: first + i as u64,
                    text: line.as_bytes().to_vec(),
                    record_hash: key.clone(),
                })
                .collect();
            if len == 0 {
                proptest::prop_assert!(lines.is_empty() || want.is_empty());
                return Ok(());
            }
            proptest::prop_assert_eq!(&r.read(&path, first).unwrap(), &want);
            let streamed: Vec<RetainedLine> = r
                .lines(&path, first, 0)
                .unwrap()
                .collect::<Result<_>>()
                .unwrap();
            proptest::prop_assert_eq!(streamed, want);
        }
    }

    proptest::proptest! {
        /// A copy of several batches, one data frame of them damaged (its magic number gone,
        /// or bytes inside it changed), maybe with a tail a write cut off: only the torn tail
        /// is ever left out of its length, the damage is kept; a reindex's read refuses it,
        /// and a rebuild's reads every line of the other frames, in order, each keyed as it
        /// was where the key is provably its own.
        #[test]
        fn damage_is_kept_and_read_past_and_only_a_torn_tail_is_cut(
            batches in proptest::collection::vec(
                proptest::collection::vec(("[a-z{}\":, ]{1,40}", proptest::bool::ANY), 1..6),
                2..6),
            which in 0usize..6,
            inside in proptest::bool::ANY,
            torn in 0usize..3,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let r = Retained::new(dir.path());
            let path = r.path(Agent::Claude, "sha256-d", 0);
            let (mut len, mut line_no) = (0u64, 0u64);
            let mut starts = Vec::new();
            for batch in &batches {
                let mut text = Vec::new();
                let mut keys = Vec::new();
                for (line, redacted) in batch {
                    let line = if *redacted { format!("{line}[REDACTED:x]") } else { line.clone() };
                    if *redacted {
                        keys.push((line_no, crate::keys::redacted_record_hash(line.as_bytes())));
                    }
                    text.extend_from_slice(line.as_bytes());
                    text.push(b'\n');
                    line_no += 1;
                }
                starts.push(len as usize);
                let encoded = Retained::encode(&text, &keys).unwrap();
                let Appended::Ok(next) = r.append(&path, len, &encoded).unwrap() else {
                    panic!("short copy")
                };
                len = next;
            }
            let hit = which % batches.len();
            let mut raw = fs::read(&path).unwrap();
            if inside {
                // Its first block's type made the reserved one: the frame no longer reads.
                let frame = &raw[starts[hit]..];
                let single = frame[4] & 0x20 != 0;
                let at = 5
                    + usize::from(!single)
                    + [0, 1, 2, 4][usize::from(frame[4] & 3)]
                    + [usize::from(single), 2, 4, 8][usize::from(frame[4] >> 6)];
                raw[starts[hit] + at] |= 0x06;
            } else {
                raw[starts[hit]..starts[hit] + 4].fill(0);
            }
            let sound = raw.len() as u64;
            let cut_off = Retained::encode(b"late\n", &[]).unwrap();
            let torn = &cut_off[..[1, 7, cut_off.len() - 1][torn]];
            raw.extend_from_slice(torn);
            fs::write(&path, &raw).unwrap();

            // A byte that may begin a magic number after damage that runs to the end (the last
            // batch's, with no key frame after it) is damage too: kept.
            let to_the_end = hit + 1 == batches.len() && !batches[hit].iter().any(|(_, r)| *r);
            let kept = if to_the_end && torn.len() < 4 { raw.len() as u64 } else { sound };
            proptest::prop_assert_eq!(Retained::whole_len(&path).unwrap(), kept);
            proptest::prop_assert!(!Retained::damage(&path).unwrap().is_empty());
            proptest::prop_assert!(r.lines(&path, 0, 0).is_err());
            let want: Vec<(Vec<u8>, bool)> = batches
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != hit)
                .flat_map(|(_, b)| b.iter())
                .map(|(line, redacted)| {
                    let line = if *redacted { format!("{line}[REDACTED:x]") } else { line.clone() };
                    (line.into_bytes(), *redacted)
                })
                .collect();
            let got: Vec<RetainedLine> = r
                .lines_past_damage(&path, 0, 0)
                .unwrap()
                .collect::<Result<_>>()
                .unwrap();
            let texts: Vec<(Vec<u8>, bool)> = got
                .iter()
                .map(|l| (l.text.clone(), l.record_hash.is_some()))
                .collect();
            proptest::prop_assert_eq!(texts, want);
            for (n, line) in got.iter().enumerate() {
                proptest::prop_assert_eq!(line.line_no, n as u64);
                if let Some(key) = &line.record_hash {
                    proptest::prop_assert_eq!(key, &crate::keys::redacted_record_hash(&line.text));
                }
            }
            // A manifest where no committed length is known goes after every byte but the
            // torn tail.
            let manifest = Manifest {
                format: MANIFEST_FORMAT,
                agent: "claude".into(),
                source_key: "sha256-d".into(),
                path: "/p/s.jsonl".into(),
                role: "main".into(),
                kind: "lines".into(),
                session: ManifestSession {
                    key: format!("sha256-{}", "0".repeat(32)),
                    id: None,
                    parent_key: None,
                    relation: None,
                    agent_id: None,
                    cwd: None,
                    title: None,
                    model: None,
                    git_branch: None,
                    provider: None,
                    tool_version: None,
                    started_at: None,
                    updated_at: None,
                    cumulative_usage: None,
                },
                first_read: "2026-01-01T00:00:00Z".into(),
                session_row: None,
            };
            let grown = r.describe(&path, 0, &manifest).unwrap().unwrap();
            let after = fs::read(&path).unwrap();
            proptest::prop_assert_eq!(&after[..kept as usize], &raw[..kept as usize]);
            proptest::prop_assert_eq!(grown, after.len() as u64);
            proptest::prop_assert_eq!(manifest_payloads(&after).len(), 1);
        }
    }

    /// How a copy's bytes are cut into pieces: a frame's beginning cut short is a torn tail
    /// only when nothing whole follows it; bytes that start no frame are damage wherever.
    #[test]
    fn a_torn_tail_is_a_frames_beginning_with_nothing_whole_after_it() {
        let frame = Retained::encode(b"one\n", &[(0, "k".into())]).unwrap();
        let data = zstd::bulk::compress(b"one\n", 1).unwrap();
        let whole = |n: usize| Piece::Frame {
            at: n,
            len: data.len(),
        };
        assert_eq!(pieces(&data), [whole(0)]);
        for cut in 1..data.len() {
            let raw = [&data[..], &data[..cut]].concat();
            assert_eq!(
                pieces(&raw),
                [
                    whole(0),
                    Piece::Torn {
                        at: data.len(),
                        len: cut
                    }
                ],
                "cut at {cut}"
            );
            assert_eq!(kept_len(&raw), data.len() as u64);
            // The same bytes with a whole frame after them are no torn tail: kept. (Where
            // the cut-off frame's blocks read on into the next frame, what they take of it
            // reads as that frame's, and the rest of it as damage.)
            let raw = [&data[..], &data[..cut], &data[..]].concat();
            let cut_up = pieces(&raw);
            assert!(
                !cut_up.iter().any(|p| matches!(p, Piece::Torn { .. })),
                "cut at {cut}: {cut_up:?}"
            );
            assert_eq!(kept_len(&raw), raw.len() as u64);
        }
        // A skippable frame cut short, and bytes that are no frame's beginning at the end.
        let raw = [&frame[..], &frame[data.len()..frame.len() - 2]].concat();
        assert!(matches!(pieces(&raw).last(), Some(Piece::Torn { .. })));
        let raw = [&data[..], b"garbage"].concat();
        assert_eq!(
            pieces(&raw)[1],
            Piece::Damaged {
                at: data.len(),
                len: 7
            }
        );
        assert_eq!(kept_len(&raw), raw.len() as u64);
    }

    #[test]
    fn keys_are_set_in_place_or_by_a_rewrite() {
        let dir = tempfile::tempdir().unwrap();
        let r = Retained::new(dir.path());
        let path = r.path(Agent::Claude, "sha256-k", 0);
        let old = format!("sha256:{}", "a".repeat(64));
        let enc = Retained::encode(b"x\n[REDACTED:y]\n", &[(1, old.clone())]).unwrap();
        let Appended::Ok(len) = r.append(&path, 0, &enc).unwrap() else {
            panic!()
        };
        let new = format!("sha256:{}", "b".repeat(64));
        let keys = std::collections::HashMap::from([(1, new.clone()), (7, "x".into())]);
        assert_eq!(r.set_keys(&path, &keys).unwrap(), Some(len));
        assert_eq!(r.read(&path, 0).unwrap()[1].record_hash, Some(new.clone()));
        let raw = std::fs::read(&path).unwrap();
        assert!(memchr::memmem::find(&raw, old.as_bytes()).is_none());
        // Nothing left to change.
        assert_eq!(r.set_keys(&path, &keys).unwrap(), None);
        // A key of another length: the copy is written again, and still decodes.
        let keys = std::collections::HashMap::from([(1, "sha256:ff".to_owned())]);
        let shorter = r.set_keys(&path, &keys).unwrap().unwrap();
        assert!(shorter < len);
        let lines = r.read(&path, 0).unwrap();
        assert_eq!(lines[1].record_hash.as_deref(), Some("sha256:ff"));
        assert_eq!(lines[1].text, b"[REDACTED:y]");
        assert_eq!(
            r.set_keys(&dir.path().join("missing.zst"), &keys).unwrap(),
            None
        );
    }

    /// A copy with damage between its batches and a tail a write cut off has the keys of its
    /// whole key frames set, both sides of the damage, every other byte kept where it was.
    /// Before, the damage made the whole call fail, and migration 14 tried it again, failing,
    /// at every open.
    #[test]
    fn keys_are_set_past_damage_and_a_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let r = Retained::new(dir.path());
        let path = r.path(Agent::Claude, "sha256-k", 0);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let (old1, old3) = (
            format!("sha256:{}", "a".repeat(64)),
            format!("sha256:{}", "c".repeat(64)),
        );
        let first = Retained::encode(b"x\n[REDACTED:y]\n", &[(1, old1.clone())]).unwrap();
        let second = Retained::encode(b"z\n[REDACTED:w]\n", &[(3, old3.clone())]).unwrap();
        let junk = b"no frame at all, a disk's bytes".to_vec();
        let raw = [&first[..], &junk, &second, &first[..9]].concat();
        std::fs::write(&path, &raw).unwrap();
        let (new1, new3) = (
            format!("sha256:{}", "b".repeat(64)),
            format!("sha256:{}", "d".repeat(64)),
        );
        let keys = std::collections::HashMap::from([(1, new1.clone()), (3, new3.clone())]);
        assert_eq!(r.set_keys(&path, &keys).unwrap(), Some(raw.len() as u64));
        let after = std::fs::read(&path).unwrap();
        assert_eq!(after.len(), raw.len());
        for key in [&old1, &old3] {
            assert!(memchr::memmem::find(&after, key.as_bytes()).is_none());
        }
        for key in [&new1, &new3] {
            assert!(memchr::memmem::find(&after, key.as_bytes()).is_some());
        }
        let at = first.len();
        assert_eq!(&after[at..at + junk.len()], &junk[..]);
        assert_eq!(&after[raw.len() - 9..], &first[..9]);
        // Done: nothing is left to change.
        assert_eq!(r.set_keys(&path, &keys).unwrap(), None);
    }

    /// A copy written again reads back line for line with its keys, in frames of a batch's
    /// size (read one at a time, as an appended copy is); plain zstd tools still see the JSONL.
    #[test]
    fn a_rewritten_copy_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let r = Retained::new(dir.path());
        let path = r.path(Agent::Claude, "sha256-w", 0);
        let lines: Vec<RetainedLine> = (0..40u64)
            .map(|n| RetainedLine {
                line_no: n,
                text: format!("{{\"n\":{n},\"pad\":\"{}\"}}", "x".repeat(300_000)).into_bytes(),
                record_hash: (n % 7 == 3).then(|| format!("sha256:{n:064x}")),
            })
            .collect();
        let len = r
            .write_scrubbed(&path, lines.iter().cloned().map(Ok))
            .unwrap();
        let tmp = Retained::scrub_path(&path);
        assert_eq!(std::fs::metadata(&tmp).unwrap().len(), len);
        assert!(!path.exists(), "written beside the copy only");
        assert!(r.swap_in(&path).unwrap());
        assert!(!r.swap_in(&path).unwrap(), "nothing left to put in place");
        assert_eq!(r.read(&path, 0).unwrap(), lines);
        let raw = std::fs::read(&path).unwrap();
        let mut frames = 0;
        let mut pos = 0;
        while pos < raw.len() {
            let magic = u32::from_le_bytes(raw[pos..pos + 4].try_into().unwrap());
            if magic == HASH_FRAME_MAGIC {
                let n = u32::from_le_bytes(raw[pos + 4..pos + 8].try_into().unwrap()) as usize;
                pos += 8 + n;
            } else {
                frames += 1;
                pos += zstd::zstd_safe::find_frame_compressed_size(&raw[pos..]).unwrap();
            }
        }
        assert!(frames >= 3, "{frames} frames");
        let plain = zstd::stream::decode_all(&raw[..]).unwrap();
        assert_eq!(plain.iter().filter(|b| **b == b'\n').count(), 40);
    }

    /// Bytes past the length the store committed (a batch whose transaction never committed)
    /// are not the copy's.
    #[test]
    fn only_committed_bytes_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let r = Retained::new(dir.path());
        let path = r.path(Agent::Claude, "sha256-c", 0);
        let enc = |lines: &[u8]| Retained::encode(lines, &[]).unwrap();
        let Appended::Ok(len) = r.append(&path, 0, &enc(b"one\n")).unwrap() else {
            panic!()
        };
        r.append(&path, len, &enc(b"ghost\n")).unwrap();
        let texts = |committed| -> Vec<Vec<u8>> {
            r.read_committed(&path, 0, committed)
                .unwrap()
                .into_iter()
                .map(|l| l.text)
                .collect()
        };
        assert_eq!(texts(len), vec![b"one".to_vec()]);
        assert_eq!(texts(0), vec![b"one".to_vec(), b"ghost".to_vec()]);
    }

    #[test]
    fn uncommitted_tail_is_cut_and_short_copy_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let r = Retained::new(dir.path());
        let path = r.path(Agent::Codex, "sha256-k", 1);
        let enc = |lines: &[u8]| Retained::encode(lines, &[]).unwrap();
        let Appended::Ok(len) = r.append(&path, 0, &enc(b"one\n")).unwrap() else {
            panic!()
        };
        // A batch written but never committed:
        r.append(&path, len, &enc(b"ghost\n")).unwrap();
        // The next commit starts from the committed length again.
        r.append(&path, len, &enc(b"two\n")).unwrap();
        let texts: Vec<_> = r
            .read(&path, 0)
            .unwrap()
            .into_iter()
            .map(|l| l.text)
            .collect();
        assert_eq!(texts, vec![b"one".to_vec(), b"two".to_vec()]);
        assert!(matches!(
            r.append(&path, 10_000, &enc(b"x\n")).unwrap(),
            Appended::Short { .. }
        ));
    }
}
