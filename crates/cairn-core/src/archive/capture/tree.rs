//! The Tree read kind: a session kept as a tree of small JSON files (OpenCode's legacy
//! `storage/`: `session/<project>/<id>.json`, `message/<session>/<message>.json`, and parts
//! either per message, `part/<message>/<part>.json`, or in the older flat layout,
//! `part/<part>.json` naming their `messageID`). The session file is the source; every read lists
//! the session's message and part files and reads only those whose size or mtime moved. A unit
//! is a message with its parts (`{"info", "parts"}`, what the Database kind gives OpenCode's
//! parser too), redacted as JSON before it is parsed, skipped when its redacted revision is the
//! one read, retracted when its file is gone. Files are read whole up to
//! [`MAX_TREE_FILE_BYTES`]. A part that does not parse and changed within the last minute is
//! still being written: its message, and every message after it, wait for the next read (as a
//! half-written last line does), so none takes ordinals out of the order it was written. One
//! unchanged for longer is broken for good: its message is read without it, with a warning.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::document::{ReadUnit, redacted_key, retract, take_header, take_unit};
use super::{
    Base, Batch, Msg, SourceState, file_warning, finish_batch, is_full, locate, new_batch,
    take_unread,
};
use crate::archive::discover::FoundFile;
use crate::archive::sources::UnitParser;
use crate::keys;

/// Files of a tree larger than this are skipped with a warning.
pub(crate) const MAX_TREE_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// What the store keeps of a session's tree between reads (`sources.parser_state`).
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct Cursor {
    /// The stamp (size and mtime) of every file of each message, by message key.
    stamps: BTreeMap<String, String>,
    /// Revision of the redacted header and of each unit at the last read.
    header: String,
    units: BTreeMap<String, String>,
    parser: Value,
}

/// A file's size and mtime, as one comparable text.
fn stamp(path: &Path) -> Option<String> {
    let m = fs::metadata(path).ok()?;
    Some(format!("{}:{}", m.len(), super::mtime_ns(&m)))
}

/// The JSON files directly in `dir`, by name.
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    out.sort();
    out
}

/// The name of a file of the tree, for a warning.
fn file_name(path: &Path) -> std::borrow::Cow<'_, str> {
    path.file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default()
}

/// A JSON file of the tree, bounded, with the warning to give when a byte of it was not UTF-8
/// (read as U+FFFD, as in a line); `Err` says why it was not read.
fn read_json(path: &Path) -> Result<(Value, Option<String>), String> {
    use std::io::Read as _;
    let size = fs::metadata(path).map_err(|e| e.to_string())?.len();
    if size > MAX_TREE_FILE_BYTES {
        return Err(format!("{size} bytes (over the 64 MiB limit)"));
    }
    let mut bytes = Vec::new();
    fs::File::open(path)
        .and_then(|f| f.take(MAX_TREE_FILE_BYTES).read_to_end(&mut bytes))
        .map_err(|e| e.to_string())?;
    // A byte-order mark, or a lone surrogate's escape (a JavaScript writer's cut string), is
    // read as in the other kinds' files.
    let (value, lossy) = crate::archive::json_text::parse_lossy(&bytes)
        .map_err(|e| format!("not complete JSON: {e}"))?;
    let lossy = lossy.then(|| format!("{}: invalid UTF-8 replaced with U+FFFD", file_name(path)));
    Ok((value, lossy))
}

/// OpenCode's layout around a session file: `<storage>/session/<project>/<id>.json`.
struct Layout {
    storage: PathBuf,
}

impl Layout {
    fn of(session_file: &Path) -> Option<Layout> {
        let project = session_file.parent()?;
        let session_dir = project.parent()?;
        (session_dir.file_name()? == "session").then(|| Layout {
            storage: session_dir
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default(),
        })
    }

    /// The part files of a message: its own folder, and the flat layout's files naming it.
    fn parts(&self, message: &str, flat: &FlatParts) -> Vec<PathBuf> {
        let mut parts = json_files(&self.storage.join("part").join(message));
        if let Some(more) = flat.get(message) {
            parts.extend(more.iter().cloned());
        }
        parts
    }

    /// The flat layout's part files (directly under `part/`), grouped by the message they name.
    ///
    /// `part/` holds a folder per message of every session, so listing it for each session read
    /// made a sync quadratic (20 MB of storage tree, 86k files: 55 s of CPU). The listing is
    /// kept per `part/` folder while the folder's mtime (which any file or folder added,
    /// removed or renamed in it moves) is unchanged; only when every flat file in it was read
    /// whole (one still being written is read again next time), and on a file system whose
    /// clock counts whole seconds only once that mtime is [`SETTLED_NS`] old.
    fn flat_parts(&self) -> Arc<FlatParts> {
        type Kept = HashMap<PathBuf, (i64, Arc<FlatParts>)>;
        static KEPT: OnceLock<Mutex<Kept>> = OnceLock::new();
        let dir = self.storage.join("part");
        let meta = fs::metadata(&dir).ok();
        let mtime = meta.as_ref().map_or(0, super::mtime_ns);
        // A clock with whole seconds (FAT, HFS+, some network shares) would not move the mtime
        // for a file added in the same tick as the listing; a finer one would.
        let fine = mtime % 1_000_000_000 != 0;
        let settled = meta
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| fine || age.as_nanos() > SETTLED_NS);
        let mut kept = KEPT
            .get_or_init(Mutex::default)
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((at, parts)) = kept.get(&dir)
            && *at == mtime
        {
            return Arc::clone(parts);
        }
        let mut out = FlatParts::new();
        let mut whole = true;
        for p in json_files(&dir) {
            match read_json(&p) {
                Ok((v, _)) => {
                    if let Some(m) = v.get("messageID").and_then(Value::as_str) {
                        out.entry(m.to_owned()).or_default().push(p);
                    }
                }
                Err(_) => whole = false,
            }
        }
        let out = Arc::new(out);
        if whole && settled {
            kept.insert(dir, (mtime, Arc::clone(&out)));
        } else {
            kept.remove(&dir);
        }
        out
    }
}

/// Flat part files by the message they name.
type FlatParts = BTreeMap<String, Vec<PathBuf>>;

/// A changed message of the tree, listed: its id, its message file and that file's value, its
/// parts' files (read when it is taken) and the stamp of all its files.
struct TreeUnit {
    key: String,
    message: PathBuf,
    info: Value,
    /// The warning its message file's bytes call for (not UTF-8), given when it is taken.
    lossy: Option<String>,
    parts: Vec<PathBuf>,
    stamp: String,
}

/// A message's parts as read, and whether every one of them was: `None` when one is still
/// being written. A part broken for good is a warning in `batch`, and the message is read without it
/// (and not stamped, so it is read again).
fn read_parts(batch: &mut Batch, parts: &[PathBuf]) -> Option<(Vec<Value>, bool)> {
    let mut list = Vec::with_capacity(parts.len());
    let mut whole = true;
    for p in parts {
        match read_json(p) {
            Ok((v, lossy)) => {
                list.push(v);
                batch.warnings.extend(lossy.map(|w| (None, w)));
            }
            Err(_) if written_lately(p) => return None,
            Err(e) => {
                whole = false;
                batch.warnings.push((
                    None,
                    format!("{}: {e}; its message is read without it", file_name(p)),
                ));
            }
        }
    }
    Some((list, whole))
}

/// How long after its last change a file that does not parse is taken as still being written
/// (OpenCode writes a part in milliseconds; a minute is generous), not as broken for good.
const WRITING_NS: u128 = 60_000_000_000;

/// Whether `path` changed within [`WRITING_NS`] (or its age cannot be told).
fn written_lately(path: &Path) -> bool {
    fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_none_or(|age| age.as_nanos() < WRITING_NS)
}

/// How old a `part/` folder's whole-second mtime must be before its listing is kept (2 s:
/// FAT's tick).
const SETTLED_NS: u128 = 2_000_000_000;

/// Read what changed in one session's tree and hand it to `emit` in batches of a capture's
/// size. Every batch but the last stores the cursor the read started from: a read cut short
/// after any batch is made again (the units it takes again are stored as they were).
pub(super) fn read_tree(
    file: &FoundFile,
    prior: Option<&SourceState>,
    force: bool,
    emit: &mut dyn FnMut(Msg) -> bool,
) {
    let warn = |message: String| file_warning(file, message);
    let Some((canonical, size, mtime_ns)) = locate(file, emit) else {
        return;
    };
    let Some(layout) = Layout::of(&canonical) else {
        emit(warn(
            "not in a storage/session/<project>/ folder: not read".to_owned(),
        ));
        return;
    };
    let (header, header_lossy) = match read_json(&canonical) {
        Ok(read) => read,
        Err(e) => {
            emit(warn(format!("read again on the next sync: {e}")));
            return;
        }
    };
    let cursor: Cursor = prior
        .filter(|_| !force)
        .and_then(|p| p.parser_state.as_deref())
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or_default();
    let session = header
        .get("id")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| {
            canonical
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
        })
        .unwrap_or_default();
    let flat = layout.flat_parts();
    let message_files = json_files(&layout.storage.join("message").join(&session));
    let saved = (!cursor.parser.is_null()).then_some(&cursor.parser);
    let parser: Result<Box<dyn UnitParser>, _> =
        crate::archive::sources::opencode::tree_parser(saved)
            .or_else(|_| crate::archive::sources::opencode::tree_parser(None));
    let Ok(mut parser) = parser else {
        emit(warn("cannot resume its reading state".to_owned()));
        return;
    };
    let generation = match prior {
        Some(p) if force => p.generation + 1,
        Some(p) => p.generation,
        None => 0,
    };
    let base = Base {
        existed: prior.is_some(),
        byte_offset: prior.map_or(0, |p| p.byte_offset),
        generation: prior.map_or(0, |p| p.generation),
    };
    let path_str = canonical.to_string_lossy().into_owned();
    let source_key = prior
        .map(|p| p.source_key.clone())
        .unwrap_or_else(|| crate::archive::store::source_key(file.agent, &canonical));
    let mut batch = new_batch(file, &path_str, &source_key, base, generation);
    let mut line_no = prior.filter(|_| !force).map_or(0, |p| p.line_count);
    let mut next = Cursor {
        units: cursor.units.clone(),
        ..Cursor::default()
    };
    let mut bytes = 0u64;
    let restart = serde_json::to_string(&cursor).unwrap_or_default();
    let mut handed = 0usize;

    next.header = take_header(
        &mut batch,
        &mut *parser,
        header,
        &cursor.header,
        &mut line_no,
    );
    if next.header != cursor.header {
        batch.warnings.extend(header_lossy.map(|w| (None, w)));
    }

    let mut units: Vec<TreeUnit> = Vec::new();
    let mut live = std::collections::BTreeSet::new();
    for message in &message_files {
        // Message files are small and name their id (which names their parts' folder): each is
        // read; parts only when a file of the message moved.
        let (info, lossy) = match read_json(message) {
            Ok(read) => read,
            Err(e) => {
                batch.warnings.push((
                    None,
                    format!("{}: {e}; read again on the next sync", file_name(message)),
                ));
                continue;
            }
        };
        let key = info
            .get("id")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| {
                message
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
            })
            .unwrap_or_default();
        live.insert(redacted_key(&key, &mut Vec::new()));
        let parts = layout.parts(&key, &flat);
        let stamps: Vec<String> = std::iter::once(message)
            .chain(parts.iter())
            .map(|p| format!("{}={}", p.display(), stamp(p).unwrap_or_default()))
            .collect();
        let stamp = keys::digest_hex(stamps.join("\n").as_bytes());
        if cursor.stamps.get(&key) == Some(&stamp) {
            next.stamps.insert(key, stamp);
            continue;
        }
        units.push(TreeUnit {
            key,
            message: message.clone(),
            info,
            lossy,
            parts,
            stamp,
        });
    }
    // Messages in the order OpenCode wrote them (their creation time, then their id), their
    // parts read as each is taken.
    units.sort_by_key(|u| {
        (
            u.info
                .pointer("/time/created")
                .and_then(Value::as_i64)
                .unwrap_or(i64::MAX),
            u.key.clone(),
        )
    });
    for TreeUnit {
        key,
        message,
        info,
        lossy,
        parts,
        stamp,
    } in units
    {
        // A message with a part still being written ends what is read now, as a half-written
        // last line does: read later, it and every message after it would take ordinals
        // after theirs, out of the order they were written.
        let Some((list, whole)) = read_parts(&mut batch, &parts) else {
            break;
        };
        batch.warnings.extend(lossy.map(|w| (None, w)));
        if whole {
            next.stamps.insert(key.clone(), stamp);
        }
        bytes += std::iter::once(&message)
            .chain(&parts)
            .filter_map(|p| fs::metadata(p).ok())
            .map(|m| m.len())
            .sum::<u64>();
        let value = serde_json::json!({"info": info, "parts": list});
        let unit = ReadUnit::new(&key, value, None);
        let read = next.units.get(&unit.key).cloned();
        let (key, rev) = take_unit(
            &mut batch,
            &mut *parser,
            unit,
            read.as_deref(),
            &mut line_no,
        );
        next.units.insert(key, rev);
        if is_full(&batch) {
            // Chained to the next batch by the count of units it leaves read.
            let taken = next.units.len() as u64;
            handed += 1;
            let meta = (parser.meta().clone(), restart.clone());
            let mut part = take_unread(&mut batch, file, &canonical, meta, taken, line_no);
            part.bytes = std::mem::take(&mut bytes);
            if !emit(Msg::Batch(Box::new(part))) {
                return;
            }
        }
    }
    // Messages whose file is gone.
    let gone: Vec<String> = next
        .units
        .keys()
        .filter(|k| !live.contains(*k))
        .cloned()
        .collect();
    for k in &gone {
        next.units.remove(k);
    }
    retract(&mut batch, gone, line_no);
    let changed =
        !batch.records.is_empty() || !batch.unit_events.is_empty() || next.header != cursor.header;
    if prior.is_some()
        && !force
        && handed == 0
        && !changed
        && next.stamps == cursor.stamps
        && batch.warnings.is_empty()
    {
        return; // nothing moved
    }
    if prior.is_none() && handed == 0 && batch.records.is_empty() {
        if !batch.warnings.is_empty() {
            for (_, w) in batch.warnings {
                emit(warn(w));
            }
        }
        return; // a session without messages yet: read again when it changes
    }
    next.parser = parser.save();
    let state = serde_json::to_string(&next).unwrap_or_default();
    let offset = next.units.len() as u64;
    let mut last = finish_batch(
        batch,
        file,
        &canonical,
        (parser.meta().clone(), state),
        size,
        mtime_ns,
        offset,
        line_no,
        &None,
        &None,
        offset,
    );
    last.bytes = bytes;
    emit(Msg::Batch(Box::new(last)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::capture::UNREAD_MTIME;
    use crate::archive::capture::testing::{assert_resumes, batches_of, state_after};

    /// Every batch a read of `file` hands over, with `prior` as its stored position.
    fn batches(file: &FoundFile, prior: Option<&SourceState>) -> Vec<Batch> {
        batches_of(|emit| read_tree(file, prior, false, emit))
    }

    /// A session of more messages than a batch holds is handed over in batches chained base
    /// to base; killed after the first, the next read makes the cut read again, and the two
    /// store what one read stores; after the last, nothing is read again.
    #[test]
    fn a_long_tree_is_read_in_batches_that_resume() {
        let dir = tempfile::tempdir().unwrap();
        let storage = dir.path().join("storage");
        let session = storage.join("session/proj/ses_long.json");
        fs::create_dir_all(session.parent().unwrap()).unwrap();
        fs::write(
            &session,
            r#"{"id":"ses_long","projectID":"proj","directory":"/tmp/long","title":"Long","time":{"created":1730000000000,"updated":1730000999000}}"#,
        )
        .unwrap();
        let messages = storage.join("message/ses_long");
        fs::create_dir_all(&messages).unwrap();
        for i in 0..2_300u64 {
            let id = format!("msg_{i:05}");
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            fs::write(
                messages.join(format!("{id}.json")),
                format!(
                    r#"{{"id":"{id}","sessionID":"ses_long","role":"{role}","time":{{"created":{}}}}}"#,
                    1_730_000_000_000 + i
                ),
            )
            .unwrap();
            let parts = storage.join("part").join(&id);
            fs::create_dir_all(&parts).unwrap();
            fs::write(
                parts.join("001.json"),
                format!(r#"{{"id":"p{i}","type":"text","text":"message {i}"}}"#),
            )
            .unwrap();
        }
        let file = FoundFile::main(crate::archive::Agent::Opencode, &session);

        let whole = batches(&file, None);
        let (last, partial) = whole.split_last().unwrap();
        assert!(!partial.is_empty());
        for b in partial {
            assert_eq!(
                (b.size, b.mtime_ns),
                (0, UNREAD_MTIME),
                "no file's position"
            );
        }
        let session_size = fs::metadata(&session).unwrap().len();
        assert_eq!(last.size, session_size);
        let resumed = batches(&file, Some(&state_after(&whole[0])));
        assert_resumes(
            &whole.iter().collect::<Vec<_>>(),
            &resumed.iter().collect::<Vec<_>>(),
        );
        assert!(batches(&file, Some(&state_after(last))).is_empty());
    }
}
