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

    /// Append encoded bytes to the copy whose committed length is `expected_len`.
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
    /// a frame's text, not the copy's (the copy stays in memory compressed).
    pub fn lines(&self, path: &Path, first_line_no: u64, committed: u64) -> Result<CopyLines> {
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
        // The keys first: a key frame follows the data frame whose lines it lists.
        let mut keys = HashMap::new();
        let mut pos = 0usize;
        while pos < raw.len() {
            let rest = &raw[pos..];
            if let Some(payload) = hash_frame(rest) {
                let payload = payload.ok_or_else(|| corrupt(path, "truncated hash frame"))?;
                for row in String::from_utf8_lossy(payload).lines() {
                    if let Some((n, h)) = row.split_once(' ')
                        && let Ok(n) = n.parse::<u64>()
                    {
                        keys.insert(n, h.to_owned());
                    }
                }
                pos += 8 + payload.len();
                continue;
            }
            pos += zstd::zstd_safe::find_frame_compressed_size(rest)
                .map_err(|_| corrupt(path, "damaged zstd frame"))?;
        }
        Ok(CopyLines {
            path: path.to_owned(),
            raw,
            pos: 0,
            keys,
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

/// A retained copy's lines in order, decoded one data frame at a time ([`Retained::lines`]).
/// Every line ended by a line end is one, an empty one too: capture writes an empty line where
/// it skipped one (longer than the limit), so the lines after keep their numbers. After an
/// error it yields nothing more.
pub struct CopyLines {
    path: PathBuf,
    raw: Vec<u8>,
    pos: usize,
    /// Line number to the key its frame lists, taken as the line is read.
    keys: HashMap<u64, String>,
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
        self.ready.push_back(RetainedLine {
            line_no,
            record_hash: self.keys.remove(&line_no),
            text,
        });
    }

    /// Decode the next data frame into `ready`; `false` at the end of the copy.
    fn decode_next(&mut self) -> Result<bool> {
        loop {
            let rest = &self.raw[self.pos..];
            if rest.is_empty() {
                if !self.tail.is_empty() {
                    let tail = std::mem::take(&mut self.tail);
                    self.push(tail);
                    return Ok(true);
                }
                return Ok(false);
            }
            if let Some(payload) = hash_frame(rest) {
                self.pos += 8 + payload.map_or(0, <[u8]>::len);
                continue;
            }
            // The manifest, or a frame a later build writes: no lines in it.
            if let Some(len) = skippable_len(rest) {
                self.pos += len;
                continue;
            }
            let frame_len = zstd::zstd_safe::find_frame_compressed_size(rest)
                .map_err(|_| corrupt(&self.path, "damaged zstd frame"))?;
            let mut frame = Vec::new();
            zstd::stream::read::Decoder::new(&rest[..frame_len])
                .map(zstd::stream::read::Decoder::single_frame)
                .and_then(|mut d| d.read_to_end(&mut frame))
                .map_err(|e| Error::Read {
                    path: self.path.clone(),
                    source: e,
                })?;
            self.pos += frame_len;
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
        // The copy's manifest goes with it (the rewrite holds its lines again, and no more),
        // never as it was written: a build whose rules missed a secret wrote it.
        let manifests: Vec<Vec<u8>> = fs::read(path)
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
        let mut pos = 0usize;
        while pos < raw.len() {
            let rest = &raw[pos..];
            if let Some(payload) = hash_frame(rest) {
                let payload = payload.ok_or_else(|| corrupt(path, "truncated hash frame"))?;
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
                pos += 8 + len;
                continue;
            }
            let frame_len = zstd::zstd_safe::find_frame_compressed_size(rest)
                .map_err(|_| corrupt(path, "damaged zstd frame"))?;
            out.extend_from_slice(&rest[..frame_len]);
            pos += frame_len;
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

/// The payloads of the manifest frames among the whole frames at the start of `raw`, in order.
fn manifest_payloads(raw: &[u8]) -> Vec<&[u8]> {
    let mut found = Vec::new();
    let mut pos = 0usize;
    while pos < raw.len() {
        let rest = &raw[pos..];
        let len = match skippable_len(rest) {
            Some(len) => {
                if rest[..4] == MANIFEST_FRAME_MAGIC.to_le_bytes() {
                    found.push(&rest[8..len]);
                }
                len
            }
            None => match zstd::zstd_safe::find_frame_compressed_size(rest) {
                Ok(n) if n > 0 && n <= rest.len() => n,
                _ => break,
            },
        };
        pos += len;
    }
    found
}

impl Retained {
    /// The skippable frame describing a source, which the capture writer puts first in a new
    /// source's copy ([`Manifest`]): `zstdcat` passes over it, a read of the lines too.
    /// The manifest goes in at rest ([`Manifest::at_rest`]), whoever made it.
    pub fn manifest_frame(manifest: &Manifest) -> Vec<u8> {
        skippable(MANIFEST_FRAME_MAGIC, &manifest_payload(manifest))
    }

    /// Append `manifest` to the copy at `path`, whose committed length is `committed` (0: all
    /// of it, up to a frame cut off), unless its last manifest says the same: migration 47's
    /// description of a source an older build retained. Returns the copy's length when it
    /// grew. Appended where the copy's committed frames end, as a capture's batch is: bytes
    /// after them (a batch never committed, a frame a crash cut off) are cut first, so none
    /// is ever counted in the copy's length. A copy whose committed bytes end inside a frame
    /// (damaged) is refused, named, and left as it is.
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
            0 => whole_frames(&raw),
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
                let whole = whole_frames(&raw[..n as usize]);
                if whole < n {
                    return Err(corrupt(
                        path,
                        &format!(
                            "its committed bytes end inside a frame (at byte {whole} of {n}): \
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

    /// How many bytes at the start of the copy at `path` are whole frames: its length, unless
    /// its tail was cut off mid-frame (a write stopped by a crash or a full disk, or damage),
    /// which a read must leave out.
    pub fn whole_len(path: &Path) -> Result<u64> {
        let raw = fs::read(path).map_err(|source| Error::Read {
            path: path.to_owned(),
            source,
        })?;
        Ok(whole_frames(&raw))
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
            whole_frames(&raw)
        } else {
            committed.min(raw.len() as u64)
        };
        let held = &raw[..end as usize];
        if whole_frames(held) < end {
            return Err(corrupt(path, "its committed bytes end inside a frame"));
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

/// How many bytes at the start of `raw` are whole frames (up to a frame cut off).
fn whole_frames(raw: &[u8]) -> u64 {
    let mut pos = 0usize;
    while pos < raw.len() {
        let rest = &raw[pos..];
        let len = match skippable_len(rest) {
            Some(len) => len,
            None => match zstd::zstd_safe::find_frame_compressed_size(rest) {
                Ok(n) if n > 0 && n <= rest.len() => n,
                _ => break,
            },
        };
        pos += len;
    }
    pos as u64
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
