//! The Lines read kind: an append-only line file (JSONL, Aider's Markdown history, a
//! compressed Codex rollout), read from the stored byte offset, each new line redacted, parsed by
//! the agent's adapter and handed on in batches; a file truncated or rewritten is read anew.

use std::borrow::Cow;
use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use super::{
    BATCH_BYTES, Base, Batch, LineRecord, Msg, UnitEvent, file_warning, finish_batch, locate,
    mtime_ns, new_batch, revision_of,
};
use crate::archive::discover::FoundFile;
use crate::archive::jsonl::{self, Line, LineReader};
use crate::archive::redact::Redactor;
use crate::archive::sources::{self, LineIdentity, LineOutput, parser_for_file};
use crate::archive::store::{self, SourceState};
use crate::archive::{Agent, Record, json_text};
use crate::keys;

/// How much of a file must be read.
pub(super) enum Plan {
    Unchanged,
    From {
        offset: u64,
        line_count: u64,
        state: Option<String>,
        generation: u32,
    },
}

/// The most of a compressed rollout read (Codex's are far smaller; the rest is warned of).
pub(super) const MAX_DECOMPRESSED: u64 = 4 << 30;

/// A reader that gives at most `left` bytes of `inner`, and marks `cut` when `inner` held more
/// (a few bytes of zstd can stand for terabytes).
pub(super) struct Capped<R> {
    inner: R,
    left: u64,
    cut: std::rc::Rc<std::cell::Cell<bool>>,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            if !self.cut.get() && self.inner.read(&mut [0u8])? > 0 {
                self.cut.set(true);
            }
            return Ok(0);
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.left -= n as u64;
        Ok(n)
    }
}

/// `bytes` for a person: whole GiB or MiB when it is one, else bytes.
pub(super) fn size_text(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b => crate::text::plural(b, "byte"),
    }
}

/// Read the new part of a line file and hand its batches to `emit` (which returns `false` to
/// stop). A compressed one (`.jsonl.zst`: Codex compresses a rollout a week old) is read whole
/// through its decoder, at most [`MAX_DECOMPRESSED`] of it.
pub(super) fn read_file(
    file: &FoundFile,
    prior: Option<&SourceState>,
    force_reread: bool,
    emit: &mut dyn FnMut(Msg) -> bool,
) {
    read_lines(file, prior, force_reread, MAX_DECOMPRESSED, emit);
}

/// [`read_file`] reading at most `cap` bytes of a compressed file's content.
pub(super) fn read_lines(
    file: &FoundFile,
    prior: Option<&SourceState>,
    force_reread: bool,
    cap: u64,
    emit: &mut dyn FnMut(Msg) -> bool,
) {
    let warn = |message: String| file_warning(file, message);
    let Some((canonical, size, mtime_ns)) = locate(file, emit) else {
        return;
    };
    let path_str = canonical.to_string_lossy().into_owned();
    // A compressed rollout is written once, whole: read it whole when it is new or changed.
    let compressed = sources::is_compressed(&canonical);
    if compressed
        && !force_reread
        && prior.is_some_and(|p| p.size == size && p.mtime_ns == mtime_ns)
    {
        return;
    }
    let force_reread = force_reread || (compressed && prior.is_some());
    let sidecar_mtime_ns = sidecar_stamp(file);
    let sidecars_moved =
        sidecar_mtime_ns.is_some_and(|s| prior.is_some_and(|p| p.sidecar_mtime_ns != s));
    let plan = match plan(
        &canonical,
        prior,
        (size, mtime_ns, sidecars_moved),
        force_reread,
    ) {
        Ok(p) => p,
        Err(e) => {
            emit(warn(format!("cannot read: {e}")));
            return;
        }
    };
    let Plan::From {
        offset,
        line_count,
        state,
        generation,
    } = plan
    else {
        return;
    };
    let base = Base {
        existed: prior.is_some(),
        byte_offset: prior.map_or(0, |p| p.byte_offset),
        generation: prior.map_or(0, |p| p.generation),
    };
    let saved = state.as_deref().and_then(|s| serde_json::from_str(s).ok());
    let mut parser = match parser_for_file(file, saved.as_ref()) {
        Ok(p) => p,
        // A state written by an incompatible build: read the file again from the start.
        Err(_) => {
            return read_lines(file, prior, true, cap, emit);
        }
    };
    let cut = std::rc::Rc::new(std::cell::Cell::new(false));
    let handle = File::open(&canonical).and_then(|mut f| -> std::io::Result<Box<dyn Read>> {
        if compressed {
            return Ok(Box::new(Capped {
                inner: zstd::stream::read::Decoder::new(f)?,
                left: cap,
                cut: cut.clone(),
            }));
        }
        f.seek(SeekFrom::Start(offset))?;
        Ok(Box::new(f))
    });
    let handle = match handle {
        Ok(h) => h,
        Err(e) => {
            emit(warn(format!("cannot read: {e}")));
            return;
        }
    };
    let source_key = prior
        .map(|p| p.source_key.clone())
        .unwrap_or_else(|| crate::archive::store::source_key(file.agent, &canonical));
    let redactor = Redactor::global();
    let line_identity = sources::line_identity(file.agent);
    let mut reader = LineReader::new(handle, offset);
    if !sources::lines_are_json(file.agent) {
        reader = reader.whole_lines_only();
    }
    let mut line_no = line_count;
    let mut first_line_hash = if offset == 0 {
        None
    } else {
        prior.and_then(|p| p.first_line_hash.clone())
    };
    let mut last_line = prior
        .filter(|_| offset > 0)
        .and_then(|p| p.last_line_start.zip(p.last_line_hash.clone()));
    let mut batch_start = offset;
    let mut out = LineOutput::default();
    let mut batch = new_batch(file, &path_str, &source_key, base, generation);
    let mut base = base;

    loop {
        let line = match reader.next_line() {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(e) if compressed => {
                // Said of the file: a damaged one may hold no session to say it of.
                emit(warn(format!(
                    "read stopped: the compressed file is damaged ({e}); what came before is kept"
                )));
                break;
            }
            Err(e) => {
                batch.warnings.push((None, format!("read stopped: {e}")));
                break;
            }
        };
        match line {
            Line::Oversized { len, .. } => {
                batch.warnings.push((
                    Some(line_no),
                    format!("line of {len} bytes skipped (longer than the 64 MiB limit)"),
                ));
                // An empty line in the copy holds its place, so the lines after it keep their
                // numbers when the copy is read again.
                batch.retained.push(b'\n');
                line_no += 1;
            }
            Line::Complete { bytes, start } => {
                if bytes.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                let (text, lossy) = match std::str::from_utf8(bytes) {
                    Ok(s) => (std::borrow::Cow::Borrowed(s), false),
                    Err(_) => (String::from_utf8_lossy(bytes), true),
                };
                if lossy {
                    batch.warnings.push((
                        Some(line_no),
                        "invalid UTF-8 replaced with U+FFFD".to_owned(),
                    ));
                }
                let mut findings = Vec::new();
                let clean = redactor.redact_line(&text, &mut findings);
                let hash = record_key(bytes, &clean);
                if first_line_hash.is_none() {
                    first_line_hash = Some(hash.clone());
                }
                last_line = Some((start, hash.clone()));
                let changed = lossy || matches!(clean, std::borrow::Cow::Owned(_));
                batch.retained.extend_from_slice(clean.as_bytes());
                batch.retained.push(b'\n');
                if changed {
                    batch.changed.push((line_no, hash.clone()));
                }
                batch
                    .findings
                    .extend(findings.into_iter().map(|f| (line_no, f)));
                // The retained copy keeps the line as written; the parser reads it without a
                // byte-order mark (an editor's save, or files joined), and a lone surrogate's
                // escape as the replacement character.
                let readable = json_text::readable_str(&clean);
                parse_into(
                    &mut *parser,
                    &mut batch,
                    line_identity,
                    line_no,
                    &hash,
                    &readable,
                    &mut out,
                );
                line_no += 1;
            }
        }
        if reader.offset() - batch_start >= BATCH_BYTES {
            let mut next = finish_batch(
                batch,
                file,
                &canonical,
                (parser.meta().clone(), parser.save().to_string()),
                size,
                mtime_ns,
                reader.offset(),
                line_no,
                &first_line_hash,
                &last_line,
                batch_start,
            );
            next.sidecar_mtime_ns = sidecar_mtime_ns;
            if !emit(Msg::Batch(Box::new(next))) {
                return;
            }
            base = Base {
                existed: true,
                byte_offset: reader.offset(),
                generation,
            };
            batch_start = reader.offset();
            batch = new_batch(file, &path_str, &source_key, base, generation);
        }
    }
    if cut.get() {
        emit(warn(format!(
            "read stopped after {} of the compressed file's content, the most Cairn reads of one; \
             the rest is not read",
            size_text(cap)
        )));
    }
    if !base.existed && reader.offset() == 0 {
        // Nothing complete to read yet (an empty file, or a first line still being written).
        if size == 0 {
            emit(warn(store::EMPTY_FILE.to_owned()));
        }
        return;
    }
    // A unit the parser still holds open.
    parser.flush(&mut out);
    let last_hash = last_line.as_ref().map_or("", |(_, h)| h.as_str());
    take_output(&mut batch, file.agent, line_no, last_hash, &mut out);
    let mut last = finish_batch(
        batch,
        file,
        &canonical,
        (parser.meta().clone(), parser.save().to_string()),
        size,
        mtime_ns,
        reader.offset(),
        line_no,
        &first_line_hash,
        &last_line,
        batch_start,
    );
    last.sidecar_mtime_ns = sidecar_mtime_ns;
    emit(Msg::Batch(Box::new(last)));
}

/// Parse one redacted line (`readable`: without a byte-order mark, see
/// [`json_text::readable_str`]) keyed `hash` into `batch`: a line a crash or an
/// interrupted write cut in front of a whole record is read from that record, a line that does
/// not parse is a warning. What capture and a reindex both do with a line.
#[allow(clippy::too_many_arguments)]
pub(super) fn parse_into(
    parser: &mut dyn sources::SourceParser,
    batch: &mut Batch,
    line_identity: LineIdentity,
    line_no: u64,
    hash: &str,
    readable: &str,
    out: &mut LineOutput,
) {
    // A JSON value that is not an object would be read by a parser's struct positionally (an
    // array's first string taken for the record's type): it is no record.
    let mut parsed = match not_an_object(batch.agent, readable) {
        Some(kind) => Err(<serde_json::Error as serde::de::Error>::custom(format!(
            "the line is a JSON {kind}, not an object"
        ))),
        None => parser.parse_line(readable, out),
    };
    if parsed.is_err()
        && let Some(whole) = json_text::record_after_cut(readable)
    {
        out.clear();
        parsed = parser.parse_line(whole, out);
        if parsed.is_ok() {
            let cut = &readable.as_bytes()[..readable.len() - whole.len()];
            let what = if cut.iter().all(|&b| b == 0) {
                format!("{} NUL bytes a crash left", cut.len())
            } else {
                format!(
                    "a record cut off by an interrupted write ({} bytes, kept only in the retained copy)",
                    cut.len()
                )
            };
            batch.warnings.push((
                Some(line_no),
                format!("{what}, then a whole record, which was read"),
            ));
        }
    }
    match parsed {
        Ok(()) => {
            let record_hash = match line_identity {
                LineIdentity::Content => Cow::Borrowed(hash),
                LineIdentity::Position => Cow::Owned(keys::record_hash_at(hash, line_no)),
            };
            let agent = batch.agent;
            take_output(batch, agent, line_no, &record_hash, out);
        }
        Err(e) => {
            out.clear();
            let what = if serde_json::from_str::<serde::de::IgnoredAny>(readable).is_ok() {
                "record of an unexpected shape kept only in the retained copy"
            } else {
                "malformed JSON skipped"
            };
            batch.warnings.push((Some(line_no), format!("{what}: {e}")));
        }
    }
}

/// What JSON value a line of an agent that writes JSON objects holds when it is not an object
/// (`None` for an object, a line that is not JSON, or an agent whose lines are not JSON).
fn not_an_object(agent: Agent, line: &str) -> Option<&'static str> {
    if !sources::lines_are_json(agent) || line.trim_start().starts_with('{') {
        return None;
    }
    // Not JSON at all is the parser's "malformed JSON" (rare: only such lines parse twice).
    serde_json::from_str::<serde::de::IgnoredAny>(line).ok()?;
    match line.trim_start().bytes().next()? {
        b'[' => Some("array"),
        b'"' => Some("string"),
        b'-' | b'0'..=b'9' => Some("number"),
        b't' | b'f' => Some("boolean"),
        b'n' => Some("null"),
        _ => None,
    }
}

/// Move what the parser made of one line (or one document unit) into the batch. A record the
/// parser keyed (`unit` and `key`) is identified by its key, not by the line's `hash`, and
/// carries a revision so a changed unit updates it in place.
pub(super) fn take_output(
    batch: &mut Batch,
    agent: Agent,
    line_no: u64,
    hash: &str,
    out: &mut LineOutput,
) {
    let mut versions: Vec<(String, Vec<String>)> = Vec::new();
    for unit in out.retract_units.drain(..) {
        // Its tokens read earlier in this batch go with it (the writer deletes those stored
        // before), so a read that sees a message and then its rewind counts none of them.
        batch.usage.retain(|(message, _)| *message != unit);
        batch
            .unit_events
            .push((batch.records.len(), UnitEvent::Retract(unit)));
    }
    let closing = std::mem::take(&mut out.closing);
    let back = std::mem::take(&mut out.closing_back);
    for (i, mut record) in out.records.drain(..).enumerate() {
        bound_tool_name(&mut record);
        let line_no = if i < closing {
            line_no.saturating_sub(back)
        } else {
            line_no
        };
        let tool_input = record.tool_input.as_ref().map(ToString::to_string);
        let file_paths = (!record.file_paths.is_empty())
            .then(|| serde_json::to_string(&record.file_paths).unwrap_or_default());
        let (hash, revision) = match (&record.unit, &record.key) {
            (Some(unit), Some(key)) => {
                let keyed = keys::keyed_record_hash(agent, unit, key);
                match versions.iter_mut().find(|(u, _)| u == unit) {
                    Some((_, hashes)) => hashes.push(keyed.clone()),
                    None => versions.push((unit.clone(), vec![keyed.clone()])),
                }
                let revision = revision_of(&record, tool_input.as_deref(), file_paths.as_deref());
                (keyed, Some(revision))
            }
            _ => (hash.to_owned(), None),
        };
        batch.records.push(LineRecord {
            line_no,
            hash,
            revision,
            record,
            tool_input,
            file_paths,
        });
    }
    for (unit, hashes) in versions {
        batch
            .unit_events
            .push((batch.records.len(), UnitEvent::Version(unit, hashes)));
    }
    batch.usage.append(&mut out.usage);
    batch
        .warnings
        .extend(out.warnings.drain(..).map(|w| (Some(line_no), w)));
}

/// How long a tool's name may be: longer ones are cut, with an ellipsis.
pub(super) const MAX_TOOL_NAME_CHARS: usize = 128;

/// A tool's name as every reader takes it from the transcript, made one printable line of bounded
/// length, so a hostile file cannot grow a turn's list of tools or a session's tally of them
/// without end (real names are short: `Bash`, `mcp__server__tool`).
pub(super) fn bound_tool_name(record: &mut Record) {
    if let Some(name) = record.tool_name.as_mut()
        && (name.chars().count() > MAX_TOOL_NAME_CHARS
            || name.chars().any(|c| {
                c.is_control()
                    || (c.is_whitespace() && c != ' ')
                    || crate::text::is_bidi_control(c)
                    || crate::text::is_invisible_break(c)
            }))
    {
        *name = crate::text::one_line(name, MAX_TOOL_NAME_CHARS);
    }
}

/// How much of the line file at `path` must be read, given its stored position (a known file is
/// checked to be still the same file): from the start (new, shorter, or changed where it was
/// read), from where the last read stopped (grown, or only the files read beside it moved:
/// `sidecars_moved`), or nothing.
pub(super) fn plan(
    path: &Path,
    prior: Option<&SourceState>,
    (size, mtime_ns, sidecars_moved): (u64, i64, bool),
    force: bool,
) -> std::io::Result<Plan> {
    let Some(p) = prior else {
        return Ok(Plan::From {
            offset: 0,
            line_count: 0,
            state: None,
            generation: 0,
        });
    };
    let reread = Plan::From {
        offset: 0,
        line_count: 0,
        state: None,
        generation: p.generation + 1,
    };
    if force || size < p.byte_offset {
        return Ok(reread);
    }
    if size == p.size && mtime_ns == p.mtime_ns && size == p.byte_offset {
        if !sidecars_moved {
            return Ok(Plan::Unchanged);
        }
        // Only what describes the session changed: its lines are not read again; the read
        // takes up where it stopped and the parser, made anew, reads the files beside it.
        return Ok(Plan::From {
            offset: p.byte_offset,
            line_count: p.line_count,
            state: p.parser_state.clone(),
            generation: p.generation,
        });
    }
    // Written since, yet not a byte longer: a line was changed in place (an edit, a tool
    // rewriting the file), which the first and last lines' keys need not show. Read again
    // (rare: agents append, which moves the size).
    if size == p.size && size == p.byte_offset && mtime_ns != p.mtime_ns {
        return Ok(reread);
    }
    if p.byte_offset > 0 {
        let mut file = BufReader::new(File::open(path)?);
        let same_first = match &p.first_line_hash {
            Some(h) => first_line_hash(&mut file)?.as_ref() == Some(h),
            None => true,
        };
        let same_last = match (&p.last_line_hash, p.last_line_start) {
            (Some(h), Some(start)) => line_hash_at(&mut file, start)?.as_ref() == Some(h),
            _ => true,
        };
        if !(same_first && same_last) {
            return Ok(reread);
        }
    }
    Ok(Plan::From {
        offset: p.byte_offset,
        line_count: p.line_count,
        state: p.parser_state.clone(),
        generation: p.generation,
    })
}

/// The key of one raw line: agentlog's record hash, or, when redaction changed the line (an
/// owned result of [`Redactor::redact_line`]), the hash of its redacted form, so the archive
/// holds no hash of a secret (see [`keys::redacted_record_hash`]).
#[allow(clippy::ptr_arg)] // whether it is owned is the point
pub(super) fn record_key(raw: &[u8], redacted: &std::borrow::Cow<'_, str>) -> String {
    if let std::borrow::Cow::Owned(r) = redacted {
        keys::redacted_record_hash(r.as_bytes())
    } else {
        keys::record_hash(raw)
    }
}

/// The key of the file's first line that is not blank: the reader skips blank lines, so that is
/// the line whose key it kept as the first (a Markdown history opens with an empty line).
pub(super) fn first_line_hash(file: &mut BufReader<File>) -> std::io::Result<Option<String>> {
    file.seek(SeekFrom::Start(0))?;
    loop {
        let Some(line) = next_raw_line(file)? else {
            return Ok(None);
        };
        if !line.iter().all(u8::is_ascii_whitespace) {
            return Ok(Some(raw_line_key(&line)));
        }
    }
}

/// The key of the line starting at `start`, computed as the reader computes it.
pub(super) fn line_hash_at(
    file: &mut BufReader<File>,
    start: u64,
) -> std::io::Result<Option<String>> {
    file.seek(SeekFrom::Start(start))?;
    Ok(next_raw_line(file)?.map(|line| raw_line_key(&line)))
}

/// The next line at the file's position, without its newline (`None` at the end).
pub(super) fn next_raw_line(file: &mut BufReader<File>) -> std::io::Result<Option<Vec<u8>>> {
    let mut line = Vec::new();
    // Bounded: a rewritten file could put anything here.
    (&mut *file)
        .take(jsonl::MAX_LINE_BYTES as u64)
        .read_until(b'\n', &mut line)?;
    if line.is_empty() {
        return Ok(None);
    }
    // As the reader trims (`jsonl::trim_newline`): CR too, or a CRLF file would never match.
    while matches!(line.last(), Some(b'\n' | b'\r')) {
        line.pop();
    }
    Ok(Some(line))
}

/// A raw line's key, as the reader computes it.
pub(super) fn raw_line_key(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let redacted = Redactor::global().redact_line(&text, &mut Vec::new());
    record_key(line, &redacted)
}

/// The newest mtime of the files read beside a line transcript ([`sources::sidecars`]; 0 when
/// none is there yet), `None` for an agent that keeps none.
///
/// [`sources::sidecars`]: sources::sidecars
pub(super) fn sidecar_stamp(file: &FoundFile) -> Option<i64> {
    let sidecars = sources::sidecars(file);
    (!sidecars.is_empty()).then(|| {
        sidecars
            .iter()
            .filter_map(|p| fs::metadata(p).ok())
            .map(|m| mtime_ns(&m))
            .fold(0, i64::max)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::Agent;

    /// A compressed rollout read under a cap: cut past the cap with a warning naming it, read
    /// whole and without one when its content is exactly the cap.
    #[test]
    fn a_compressed_file_is_read_up_to_the_cap_and_the_cut_is_said() {
        let plain = fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/codex/small.jsonl"),
        )
        .expect("fixture");
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir
            .path()
            .join("rollout-2026-08-03T10-48-56-019fc8be-3658-7ca3-9e29-000000000000.jsonl.zst");
        fs::write(&path, zstd::encode_all(&plain[..], 3).expect("compress")).expect("write");
        let file = FoundFile::main(Agent::Codex, &path);
        let read = |cap: u64| {
            let (mut records, mut warnings, mut offset) = (0, Vec::new(), 0);
            read_lines(&file, None, false, cap, &mut |msg| {
                match msg {
                    Msg::Batch(b) => {
                        records += b.records.len();
                        offset = b.byte_offset;
                    }
                    Msg::Warning(w) => warnings.push(w.message),
                }
                true
            });
            (records, warnings, offset)
        };
        let len = plain.len() as u64;
        let (whole, warned, offset) = read(len);
        assert!(warned.is_empty(), "{warned:?}");
        assert!(whole > 0);
        assert_eq!(offset, len);
        let (cut, warned, offset) = read(len / 2);
        assert!(cut > 0 && cut < whole, "{cut} of {whole}");
        assert!(offset <= len / 2, "{offset}");
        assert_eq!(
            warned,
            [format!(
                "read stopped after {} of the compressed file's content, the most Cairn reads \
                 of one; the rest is not read",
                crate::text::plural(len / 2, "byte")
            )]
        );
        assert_eq!(read(len - 1).1.len(), 1, "one byte past the cap is a cut");
    }

    #[test]
    fn sizes_are_said_in_the_largest_whole_unit() {
        assert_eq!(size_text(MAX_DECOMPRESSED), "4 GiB");
        assert_eq!(size_text(3 << 20), "3 MiB");
        assert_eq!(size_text((1 << 20) + 1), "1048577 bytes");
        assert_eq!(size_text(1), "1 byte");
    }
}
