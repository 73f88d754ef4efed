//! Every answer leaves through here: each string cleaned of control sequences and redacted by
//! the outbound redactor (`Redactor::outbound_text`, which applies `text::printable` first),
//! long strings cut, and lists cut to a byte budget with a cursor for the rest.

use cairn_core::archive::redact::{PATH, Redactor, marker};
use serde::Serialize;
use serde_json::{Map, Value};

/// The most one answer carries, in bytes of JSON.
pub const MAX_BYTES: usize = 48 * 1024;
/// The longest string in an answer, in characters: a longer one keeps its head and its tail
/// ([`cut`]; the archive keeps what the agent wrote, not more, so no page offers the middle).
pub const MAX_STRING: usize = 2_000;

/// How strings leave: paths inside `repo_root` (or another worktree of its repository) made
/// relative, the rest of the file system hidden.
#[derive(Debug, Clone, Default)]
pub struct Outbound {
    pub repo_root: Option<String>,
    /// The other worktrees of the repository: their sessions are this repository's (`skim`
    /// lists them), so their paths read as relative too.
    pub worktrees: Vec<String>,
    pub home: Option<String>,
}

impl Outbound {
    /// Redacted whole, then cut (cutting first could leave half a secret the rules no longer
    /// recognise).
    pub fn text(&self, s: &str) -> String {
        cut(self.uncut(s))
    }

    /// `s` cleaned and redacted, not cut: what [`Self::text`] cuts and [`Self::packed`] bounds.
    fn uncut(&self, s: &str) -> String {
        let mut findings = Vec::new();
        let roots: Vec<&str> = self
            .repo_root
            .iter()
            .chain(&self.worktrees)
            .map(String::as_str)
            .collect();
        Redactor::global().outbound_text_within(s, &roots, self.home.as_deref(), &mut findings)
    }

    /// A value with every string (keys too) cleaned and redacted. A string that holds JSON
    /// (a tool call's stored input) is cleaned inside: its escapes (`\u001b]0;…`) would give an
    /// agent that parses it the sequence itself.
    pub fn value(&self, v: Value) -> Value {
        self.value_cut(v, true)
    }

    /// [`Self::value`], its strings cut at [`MAX_STRING`] when `cutting`, else whole.
    fn value_cut(&self, v: Value, cutting: bool) -> Value {
        let done = |s: String| if cutting { cut(s) } else { s };
        match v {
            Value::String(s) => Value::String(
                self.json_text(&s, cutting)
                    .unwrap_or_else(|| done(self.uncut(&s))),
            ),
            Value::Array(items) => Value::Array(
                items
                    .into_iter()
                    .map(|i| self.value_cut(i, cutting))
                    .collect(),
            ),
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .map(|(k, v)| (done(self.key(&k)), self.value_cut(v, cutting)))
                    .collect::<Map<_, _>>(),
            ),
            other => other,
        }
    }

    /// An object's key cleaned and redacted, its hidden characters written out
    /// (`comm[U+202E]and`), not cut as a text's are: cut, a key with a bidi override or a
    /// zero-width space inside would read as `command` and stand for (or, in the map, replace)
    /// the real one. The desktop shows parsed keys the same way.
    fn key(&self, k: &str) -> String {
        let hidden = cairn_core::text::hidden(k);
        if hidden.is_empty() {
            return self.uncut(k);
        }
        let mut shown = String::with_capacity(k.len() + 8 * hidden.len());
        let mut at = 0;
        for (a, z) in hidden {
            shown.push_str(&k[at..a]);
            for c in k[a..z].chars() {
                shown.push_str(&format!("[U+{:04X}]", c as u32));
            }
            at = z;
        }
        shown.push_str(&k[at..]);
        self.uncut(&shown)
    }

    /// A tool call's stored input (JSON kept as text) as the JSON value it holds, so an agent
    /// parses it whole whatever its length: every key kept ([`Self::key`]), every string
    /// cleaned and redacted, then cut as [`cut`] cuts at [`MAX_STRING`] characters, shorter
    /// (halved, down to [`MIN_STRING`]) until the input takes at most [`MAX_INPUT`] bytes of
    /// JSON. Cutting the serialised text instead would send JSON cut in half. Text that holds
    /// no JSON object or array, and an input still too large at the shortest cut (thousands of
    /// fields), leave as a string, cut as [`Self::text`] cuts.
    pub fn tool_input(&self, s: &str) -> Value {
        let parsed = s
            .trim_start()
            .starts_with(['{', '['])
            .then(|| serde_json::from_str::<Value>(s).ok())
            .flatten();
        let Some(parsed) = parsed else {
            return Value::String(self.text(s));
        };
        let whole = self.value_cut(parsed, false);
        let mut max = MAX_STRING;
        loop {
            let v = cut_strings(whole.clone(), max);
            if serde_json::to_string(&v).map_or(usize::MAX, |j| j.len()) <= MAX_INPUT {
                return v;
            }
            if max <= MIN_STRING {
                return Value::String(self.text(s));
            }
            max = (max / 2).max(MIN_STRING);
        }
    }

    /// `s` cleaned as the JSON object or array it holds, re-serialised and cut as
    /// [`Self::text`] cuts (when `cutting`); `None` when it holds none.
    fn json_text(&self, s: &str, cutting: bool) -> Option<String> {
        if !s.trim_start().starts_with(['{', '[']) {
            return None;
        }
        let inner: Value = serde_json::from_str(s).ok()?;
        let out = serde_json::to_string(&self.value_cut(inner, cutting)).ok()?;
        Some(if cutting { cut(out) } else { out })
    }

    /// An item of an answer's list made outbound as [`Self::value`] makes it, but its field
    /// `field` (a string) whole, not cut at [`MAX_STRING`]: the text the agent asked for (a
    /// Recall entry's `body`: the entry is the knowledge asked for, and a cut takes its middle,
    /// where the steps are). Still cleaned and redacted (inside too, when it holds JSON). What
    /// bounds it is the answer's budget: [`fit_field`].
    pub fn value_keeping(&self, v: Value, field: &str) -> Value {
        match v {
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .map(|(k, v)| {
                        let v = match v {
                            Value::String(_) if k == field => self.value_cut(v, false),
                            v => self.value(v),
                        };
                        (cut(self.key(&k)), v)
                    })
                    .collect(),
            ),
            other => self.value(other),
        }
    }

    pub fn serialize<T: Serialize>(&self, v: &T) -> Value {
        self.value(serde_json::to_value(v).unwrap_or(Value::Null))
    }

    /// `msg` made outbound as [`Self::text`] makes it, with one exception: the data dir `dir`
    /// is named, where the rule hides every other folder outside the repository. An answer
    /// about the archive's own files (none there, damaged, unreadable, no room) must say which
    /// folder: the one this agent's MCP config names, and what the person checks. The dir is
    /// named only where it stands whole in `msg`, as a path or a path's start (`<dir>`,
    /// `<dir>/cairn.db`; never the `<dir>` in `<dir>c/x` or `/x<dir>`, another folder), and
    /// only when the outbound redactor finds no secret in it read whole ([`holds_secret`]; in
    /// fullwidth forms too): else it is hidden whole, as the rule hides every folder. A named
    /// dir's parts each pass the same redactor too. A dir of no part (`/`) is not named: the
    /// rule hides what it would.
    pub fn naming_dir(&self, msg: &str, dir: &str) -> String {
        // A stand-in no message holds, which the outbound rule reads as a plain word.
        const STAND_IN: &str = "CAIRNDATADIRSTANDIN";
        let dir = dir.trim_end_matches('/');
        let at = path_starts(msg, dir);
        if dir.is_empty() || at.is_empty() || msg.contains(STAND_IN) {
            return self.text(msg);
        }
        let mut stood = String::with_capacity(msg.len());
        let mut from = 0;
        for a in at {
            stood.push_str(&msg[from..a]);
            stood.push_str(STAND_IN);
            from = a + dir.len();
        }
        stood.push_str(&msg[from..]);
        let shown = if holds_secret(dir) {
            marker(PATH)
        } else {
            // Each part on its own as well: whole, the dir is a path the rule hides, and a
            // random run the scan leaves inside a path is judged on its own in a part. The
            // folders of macOS's temp folder are the system's, not random ([`macos_temp`]).
            let (system, rest) = dir.split_at(macos_temp(dir).unwrap_or(0));
            let parts: Vec<String> = rest.split('/').map(|part| self.text(part)).collect();
            format!("{system}{}", parts.join("/"))
        };
        self.text(&stood).replace(STAND_IN, &shown)
    }
}

/// Whether the outbound scan finds a secret in `dir` read whole, its path hiding aside: a
/// secret a `/` splits (an AWS secret key, `password=a/b`) is no secret in any one part, so
/// parts redacted one by one would send it whole. macOS's temp folder ([`macos_temp`]) is
/// read as `/tmp`: its names are no secret; the rest of the dir is scanned as ever.
fn holds_secret(dir: &str) -> bool {
    let scanned = match macos_temp(dir) {
        Some(end) => format!("/tmp{}", &dir[end..]),
        None => dir.to_owned(),
    };
    let mut findings = Vec::new();
    Redactor::global().outbound_text_within(&scanned, &[], None, &mut findings);
    findings.iter().any(|f| f.rule != PATH)
}

/// Where macOS's per-user temp folder ends in `dir`, when `dir` is in it:
/// `/var/folders/<2>/<30>/T` (`/private/var/…` once resolved: `/var` links there), the folder
/// `TMPDIR` names on a Mac and so the start of every temporary data dir there. The system
/// names its two folders from the user's ids, in lower-case letters, digits and `_` (`+`, `-`
/// too); the scan reads the 30-character one as a random token, which it is not. Only that
/// shape, from the root: the same run anywhere else is judged as any.
fn macos_temp(dir: &str) -> Option<usize> {
    const FOLDERS: &str = "/var/folders/";
    let root = if dir.starts_with("/private/") {
        "/private".len()
    } else {
        0
    };
    let rest = dir[root..].strip_prefix(FOLDERS)?;
    let mut parts = rest.splitn(4, '/');
    let (bucket, name, temp) = (parts.next()?, parts.next()?, parts.next()?);
    let system = |s: &str, len: usize| {
        s.len() == len
            && s.bytes().all(|b| {
                b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'+' | b'-')
            })
    };
    (system(bucket, 2) && system(name, 30) && temp == "T")
        .then_some(root + FOLDERS.len() + bucket.len() + name.len() + temp.len() + 2)
}

/// Where `dir` stands whole in `msg`: each start of it that no path character comes before
/// and that a path's end or a separator comes after (`.`, `:` or `,` then the text's end or
/// a space ends a sentence or a clause, not a name).
fn path_starts(msg: &str, dir: &str) -> Vec<usize> {
    if dir.is_empty() {
        return Vec::new();
    }
    let path_char = |c: char| {
        !c.is_whitespace()
            && !matches!(
                c,
                '"' | '\''
                    | '`'
                    | '('
                    | ')'
                    | '['
                    | ']'
                    | '{'
                    | '}'
                    | '<'
                    | '>'
                    | ','
                    | ';'
                    | '='
                    | '|'
            )
    };
    let mut starts = Vec::new();
    let mut from = 0;
    while let Some(i) = msg[from..].find(dir) {
        let a = from + i;
        let z = a + dir.len();
        let before = msg[..a].chars().next_back();
        let mut after = msg[z..].chars();
        let ends = match after.next() {
            None | Some('/') => true,
            Some('.' | ':' | ',') => after.next().is_none_or(char::is_whitespace),
            Some(c) => !path_char(c),
        };
        if ends && !before.is_some_and(path_char) {
            starts.push(a);
            from = z;
        } else {
            from = a + msg[a..].chars().next().map_or(1, char::len_utf8);
        }
    }
    starts
}

/// The most items a list inside an answer keeps (a commit's lines, a record's paths, a
/// session's turns); the answer's own paged list is cut by bytes instead ([`fit`]).
pub const MAX_ITEMS: usize = 100;

/// The key under which an answer says which of its lists were cut ([`shrink`]): each list's
/// JSON pointer and how many items it left out.
pub const LISTS_CUT: &str = "lists_cut";

/// `v` within `budget` bytes of JSON as far as its lists can make it: every list cut to
/// [`MAX_ITEMS`], then all of them halved until it fits (or each keeps one item). Each list
/// cut is noted in `cut` under its JSON pointer (`at` before it: where `v` sits in the answer)
/// with how many items it left out, counted against the list as it came.
pub fn shrink(v: &mut Value, at: &str, budget: usize, cut: &mut Map<String, Value>) {
    let mut max = MAX_ITEMS;
    trim_lists(v, at, max, cut);
    while max > 1 && serde_json::to_string(v).map_or(usize::MAX, |s| s.len()) > budget {
        max /= 2;
        trim_lists(v, at, max, cut);
    }
    // A list inside an item a shorter cut of its parent removed is gone with it; notes of
    // what lies outside `v` (the other items of a page) stay.
    cut.retain(|pointer, _| match pointer.strip_prefix(at) {
        Some(inner) if inner.is_empty() || inner.starts_with('/') => v.pointer(inner).is_some(),
        _ => true,
    });
}

/// Cut every list in `v` to at most `max` items, outermost first (what a list keeps is all
/// that is looked inside), adding what each lost to `cut` under its pointer.
fn trim_lists(v: &mut Value, at: &str, max: usize, cut: &mut Map<String, Value>) {
    match v {
        Value::Array(items) => {
            if items.len() > max {
                let lost = (items.len() - max) as u64;
                items.truncate(max);
                let before = cut.get(at).and_then(Value::as_u64).unwrap_or(0);
                cut.insert(at.to_owned(), Value::from(before + lost));
            }
            for (i, item) in items.iter_mut().enumerate() {
                trim_lists(item, &format!("{at}/{i}"), max, cut);
            }
        }
        Value::Object(map) => {
            for (k, item) in map.iter_mut() {
                let k = k.replace('~', "~0").replace('/', "~1");
                trim_lists(item, &format!("{at}/{k}"), max, cut);
            }
        }
        _ => {}
    }
}

/// Characters a cut string keeps of its head and of its tail: a long tool output's end (a
/// test run's failures, a build's last error) is kept as well as its start.
const HEAD: usize = 1_400;
const TAIL: usize = 560;

/// `out` whole when it has at most [`MAX_STRING`] characters; else its first [`HEAD`] and last
/// [`TAIL`] characters, with how many were cut between them (within [`MAX_STRING`] in all).
fn cut(out: String) -> String {
    cut_to(out, MAX_STRING)
}

/// [`cut`] at `max` characters: a longer `out` keeps a head and a tail in [`HEAD`] and
/// [`TAIL`]'s proportions of `max`, with how many were cut between them.
fn cut_to(out: String, max: usize) -> String {
    let n = out.chars().count();
    if n <= max {
        return out;
    }
    let (keep_head, keep_tail) = (max * HEAD / MAX_STRING, max * TAIL / MAX_STRING);
    let at = |k: usize| out.char_indices().nth(k).map_or(out.len(), |(i, _)| i);
    let (head, tail) = (at(keep_head), at(n - keep_tail));
    format!(
        "{}\n[… {} characters cut …]\n{}",
        &out[..head],
        n - keep_head - keep_tail,
        &out[tail..]
    )
}

/// Every string in `v` (not its keys) cut at `max` characters as [`cut_to`] cuts.
fn cut_strings(v: Value, max: usize) -> Value {
    match v {
        Value::String(s) => Value::String(cut_to(s, max)),
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|i| cut_strings(i, max)).collect())
        }
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, cut_strings(v, max)))
                .collect(),
        ),
        other => other,
    }
}

/// The most bytes of JSON a tool call's input takes in an answer ([`Outbound::tool_input`]):
/// half of it, the rest left for the record's other fields and the records beside it.
pub const MAX_INPUT: usize = MAX_BYTES / 2;
/// The shortest cut a tool input's strings are taken to before it leaves as a cut string.
const MIN_STRING: usize = 125;

/// Room for the marker a cut leaves (`\n[… N characters cut …]\n`), in bytes of JSON.
const MARKER: usize = 64;

/// `v` within `budget` bytes of JSON by cutting its field `field` (a string), when it alone
/// would not fit: a whole text ([`Outbound::value_keeping`]) too long for an answer of its
/// own. It keeps its head and its tail in [`cut`]'s proportions, saying how many characters
/// were cut between. A `v` that fits, or whose other fields fill the budget, is left as it is
/// (the answer's lists are [`shrink`]'s).
pub fn fit_field(v: &mut Value, field: &str, budget: usize) {
    let size = serde_json::to_string(v).map_or(usize::MAX, |s| s.len());
    if size <= budget {
        return;
    }
    let Some(Value::String(s)) = v.get_mut(field) else {
        return;
    };
    let own: usize = 2 + s.chars().map(json_len).sum::<usize>();
    let Some(room) = budget
        .checked_sub(size - own)
        .and_then(|r| r.checked_sub(2 + MARKER))
        .filter(|r| *r > 0)
    else {
        return;
    };
    let head_room = room * HEAD / (HEAD + TAIL);
    let tail_room = room - head_room;
    let mut used = 0;
    let head = s
        .char_indices()
        .find(|(_, c)| {
            used += json_len(*c);
            used > head_room
        })
        .map_or(s.len(), |(i, _)| i);
    used = 0;
    let tail = s
        .char_indices()
        .rev()
        .find(|(_, c)| {
            used += json_len(*c);
            used > tail_room
        })
        .map_or(0, |(i, c)| i + c.len_utf8())
        .max(head);
    let cut = s[head..tail].chars().count();
    *s = format!("{}\n[… {cut} characters cut …]\n{}", &s[..head], &s[tail..]);
}

/// The bytes a text its tool packs to the agent's own budget is packed to at most (a brief's
/// `max_bytes`, whatever its `max_tokens`): half an answer.
pub const PACK_BYTES: usize = MAX_BYTES / 2;

/// The most bytes of JSON a packed text takes in an answer ([`Outbound::packed`]): more than
/// [`PACK_BYTES`] by the room its escapes take (a newline or a quote is two bytes in JSON), the
/// rest of the answer left for its other fields and its list.
pub const MAX_PACKED: usize = MAX_BYTES * 3 / 4;

impl Outbound {
    /// `s` cleaned and redacted as [`Self::text`] makes it, but whole: a text its tool packed
    /// to a budget the agent set (a brief, to `max_tokens` and [`PACK_BYTES`]) is what the
    /// agent asked for, and [`MAX_STRING`]'s cut would take the middle of its entries. The
    /// rule still bounds it, for a text no packer bounded: past [`MAX_PACKED`] bytes of JSON
    /// it keeps its whole lines up to there and says how many characters were cut after.
    pub fn packed(&self, s: &str) -> String {
        let out = self.uncut(s);
        const NOTE: usize = 64;
        let mut size = 2;
        let mut end = None;
        let mut line_end = 0;
        for (i, c) in out.char_indices() {
            size += json_len(c);
            if size + NOTE > MAX_PACKED {
                end = Some(if line_end > 0 { line_end } else { i });
                break;
            }
            if c == '\n' {
                line_end = i;
            }
        }
        let Some(end) = end else {
            return out;
        };
        let cut = out[end..].chars().count();
        format!("{}\n[… {cut} characters cut …]", &out[..end])
    }
}

/// The bytes `c` takes inside a JSON string, as serde_json writes it.
fn json_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// A page of items: as many of `items` as fit in `budget` bytes beside the rest of the
/// answer, in order (at least one, so a page always moves on). Items are taken one by one, so
/// each is cleaned only when it is reached. Returns the kept items and whether any
/// were left out for the budget.
pub fn fit(items: impl IntoIterator<Item = Value>, budget: usize) -> (Vec<Value>, bool) {
    let mut used = 0;
    let mut kept = Vec::new();
    for item in items {
        let size = serde_json::to_string(&item).map_or(usize::MAX, |s| s.len() + 1);
        if !kept.is_empty() && used + size > budget {
            return (kept, true);
        }
        used = used.saturating_add(size);
        kept.push(item);
    }
    (kept, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lists inside an answer are cut to fit, each cut named by its pointer with what it left
    /// out; a cut of a parent takes its children's notes with it.
    #[test]
    fn long_lists_are_cut_and_say_so() {
        let commit = |i: u32| serde_json::json!({"id": format!("c{i}"), "lines": (0..2000).collect::<Vec<u32>>()});
        let mut v = serde_json::json!({
            "kind": "lines",
            "commits": (0..400).map(commit).collect::<Vec<_>>(),
            "a/b": (0..150).collect::<Vec<u32>>(),
        });
        let mut cut = Map::new();
        shrink(&mut v, "", 16 * 1024, &mut cut);
        let size = serde_json::to_string(&v).unwrap().len();
        assert!(size <= 16 * 1024, "{size} bytes");
        let kept = v["commits"].as_array().unwrap().len() as u64;
        assert!((1..=MAX_ITEMS as u64).contains(&kept), "{kept}");
        assert_eq!(cut["/commits"], 400 - kept);
        let lines = v["commits"][0]["lines"].as_array().unwrap().len() as u64;
        assert_eq!(cut["/commits/0/lines"], 2000 - lines);
        assert!(cut.contains_key("/a~1b"), "{cut:?}");
        // Every note points at a list the answer still has.
        for pointer in cut.keys() {
            assert!(v.pointer(pointer).is_some(), "{pointer}");
        }
        assert!(!cut.contains_key(&format!("/commits/{kept}/lines")));
        // Items of one page share the notes: each keeps its own (`/r/1` is no prefix of
        // `/r/10`).
        let mut page = Map::new();
        for i in [1, 10] {
            let mut item = serde_json::json!({"paths": (0..300).collect::<Vec<u32>>()});
            shrink(&mut item, &format!("/r/{i}"), MAX_BYTES, &mut page);
        }
        assert_eq!(page.len(), 2, "{page:?}");
        assert_eq!(page["/r/1/paths"], 200);
        assert_eq!(page["/r/10/paths"], 200);
        // Within budget already: nothing is cut, nothing noted.
        let mut small = serde_json::json!({"paths": ["a", "b"]});
        let mut none = Map::new();
        shrink(&mut small, "/records/0", MAX_BYTES, &mut none);
        assert!(none.is_empty());
        assert_eq!(small["paths"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn strings_are_cleaned_redacted_and_cut() {
        let o = Outbound::default();
        let key = format!("AKIA{}", "ABCDEFGHIJKLMNOP");
        let v = o.value(serde_json::json!({
            "a": format!("\u{1b}[31mred\u{1b}[0m key {key}"),
            "b": ["x".repeat(MAX_STRING * 2)],
        }));
        let s = v.to_string();
        assert!(!s.contains('\u{1b}'), "{s}");
        assert!(!s.contains(&key), "{s}");
        assert!(s.contains("red"));
        assert!(v["b"][0].as_str().unwrap().chars().count() <= MAX_STRING + 1);
    }

    /// A long text keeps its head and its tail (a log's last lines, where its failure is),
    /// saying how much went between, within the longest string an answer holds.
    #[test]
    fn a_long_text_keeps_its_head_and_its_tail() {
        let o = Outbound::default();
        let log = format!(
            "START of the run\n{}FAILED: test_login at the end",
            "ok test_x passed\n".repeat(2_000)
        );
        let kept = o.text(&log);
        assert!(
            kept.chars().count() <= MAX_STRING,
            "{}",
            kept.chars().count()
        );
        assert!(kept.starts_with("START of the run"), "{kept}");
        assert!(kept.ends_with("FAILED: test_login at the end"), "{kept}");
        let cut = log.chars().count() - HEAD - TAIL;
        assert!(
            kept.contains(&format!("[… {cut} characters cut …]")),
            "{kept}"
        );
        // Multi-byte characters are cut at their boundaries; a short text is left whole.
        let wide = "é".repeat(MAX_STRING * 3);
        assert!(o.text(&wide).chars().count() <= MAX_STRING);
        assert_eq!(o.text("short"), "short");
        let exact = "x".repeat(MAX_STRING);
        assert_eq!(o.text(&exact), exact);
    }

    /// A tool call's input is stored JSON: the sequences its escapes spell are cleaned inside,
    /// so an agent parsing it gets none, and the string stays JSON.
    #[test]
    fn a_string_holding_json_is_cleaned_inside() {
        let o = Outbound::default();
        let input = r#"{"command":"printf '\u001b]0;pwned\u0007'","args":["\u001b[2Jx"]}"#;
        let out = o.value(Value::String(input.to_owned()));
        let text = out.as_str().unwrap();
        let parsed: Value = serde_json::from_str(text).unwrap();
        let mut all = String::new();
        for s in [&parsed["command"], &parsed["args"][0]] {
            all.push_str(s.as_str().unwrap());
        }
        assert!(!all.contains('\u{1b}') && !all.contains('\u{7}'), "{all:?}");
        assert!(all.contains("printf") && all.contains('x'), "{all:?}");
        // Text that only looks like JSON is cleaned as text.
        assert_eq!(o.value(Value::String("{not json".into())), "{not json");
    }

    /// A tool input too large for an answer with each string cut at [`MAX_STRING`] has them
    /// cut shorter, every key kept, until it fits in [`MAX_INPUT`]; text that only starts like
    /// JSON leaves as a string, cut as any text.
    #[test]
    fn a_large_tool_input_has_its_strings_cut_shorter_and_keeps_every_key() {
        let o = Outbound::default();
        let fields: Map<String, Value> = (0..40)
            .map(|i| {
                (
                    format!("f{i}"),
                    Value::String(format!("head{i} {}", "y".repeat(5_000))),
                )
            })
            .collect();
        let input = Value::Object(fields).to_string();
        let out = o.tool_input(&input);
        let map = out.as_object().unwrap();
        assert_eq!(map.len(), 40);
        assert!(
            out.to_string().len() <= MAX_INPUT,
            "{}",
            out.to_string().len()
        );
        for (i, v) in map.values().enumerate() {
            let s = v.as_str().unwrap();
            assert!(s.chars().count() < MAX_STRING / 2, "{}", s.chars().count());
            assert!(
                s.starts_with("head") && s.contains("characters cut …]"),
                "{i}: {s}"
            );
        }
        let broken = format!("{{not json {}", "word ".repeat(1_000));
        let out = o.tool_input(&broken);
        let text = out.as_str().unwrap();
        assert!(text.starts_with("{not json") && text.chars().count() <= MAX_STRING);
        // Hidden characters in a key are written out, as in the desktop; its value kept.
        let out = o.tool_input(r#"{"a\u200bb": 1, "ab": 2}"#);
        assert_eq!(out, serde_json::json!({"a[U+200B]b": 1, "ab": 2}));
    }

    /// The data dir an answer about the archive names (the outbound rule's one exception):
    /// named only where it stands whole, each part through the outbound redactor; any other
    /// folder hidden as in every answer.
    #[test]
    fn the_data_dir_is_named_whole_and_redacted_as_every_answer() {
        let o = Outbound::default();
        let dir = "/srv/cairn-data";
        for (msg, named) in [
            ("cannot read /srv/cairn-data/cairn.db: I/O error", true),
            (
                "no Cairn archive in /srv/cairn-data (cairn.db is missing)",
                true,
            ),
            ("the archive in /srv/cairn-data. Run `cairn doctor`", true),
            ("in \"/srv/cairn-data\", the folder", true),
            // A folder it is only the start of, or the end of, is another folder.
            ("cannot read /srv/cairn-data-old/cairn.db", false),
            ("cannot read /srv/cairn-datax", false),
            ("cannot read /home/ann/srv/cairn-data/cairn.db", false),
        ] {
            let out = o.naming_dir(msg, dir);
            assert_eq!(out.contains("/srv/cairn-data"), named, "{msg} -> {out}");
            if !named {
                assert!(out.contains("[REDACTED:path]"), "{msg} -> {out}");
            }
        }
        // Only where it stands whole: a folder beside it in the same message stays hidden.
        let out = o.naming_dir(
            "cannot read /srv/cairn-data/cairn.db (copy at /srv/cairn-data-old/cairn.db)",
            dir,
        );
        assert!(
            out.contains("cannot read /srv/cairn-data/cairn.db"),
            "{out}"
        );
        assert!(!out.contains("cairn-data-old"), "{out}");
        // Characters a pattern would read as operators are matched as written.
        let odd = "/tmp/a.b*(c)+[d]?$";
        let out = o.naming_dir(&format!("cannot read {odd}/cairn.db: gone"), odd);
        assert!(out.contains(&format!("{odd}/cairn.db")), "{out}");
        assert!(
            o.naming_dir("cannot read /tmp/aXb*(c)+[d]?$/x/y", odd)
                .contains("[REDACTED:path]")
        );
        // A dir holding a secret is not named: hidden whole, as the rule hides every folder,
        // wherever it stands. The secret is found in the dir read whole, so one a `/` splits
        // (an AWS secret key is base64; a password may hold a `/`; a token cut in two
        // folders) is found too, where no part alone shows it; and one written in fullwidth
        // forms (which only the outbound scan decodes).
        let token = format!("ghp_{}", "R4nd0mT0k3nV4lu3F0rT3st1ngXyZ9Q8w7E6");
        let fullwidth: String = token
            .chars()
            .map(|c| char::from_u32(c as u32 + 0xfee0).unwrap())
            .collect();
        for (secret, tail) in [
            (token.as_str(), token.as_str()),
            (fullwidth.as_str(), fullwidth.as_str()),
            (
                "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "bPxRfiCYEXAMPLEKEY",
            ),
            ("password=Xk9#mQ2/vL8pR4zT", "vL8pR4zT"),
            (
                "ghp_R4nd0mT0k3nV4lu3F0r/T3st1ngXyZ9Q8w7E6",
                "T3st1ngXyZ9Q8w7E6",
            ),
        ] {
            let dir = format!("/srv/{secret}/data");
            for (msg, hidden) in [
                (
                    format!("no Cairn archive in {dir} (cairn.db is missing)"),
                    "no Cairn archive in [REDACTED:path] (cairn.db is missing)",
                ),
                (
                    format!("cannot read {dir}/cairn.db: I/O error"),
                    "cannot read [REDACTED:path]/cairn.db: I/O error",
                ),
            ] {
                let out = o.naming_dir(&msg, &dir);
                assert!(!out.contains(tail), "{out}");
                assert_eq!(out, hidden);
            }
        }
        // A random run the whole read dilutes (a long plain folder before it, the `/` between
        // them read into one run) is still judged on its own, in its part.
        let run = "q8Zt3LmX9vKp2RwY7nBc4HdJ6sFg1TxE";
        let dir = format!("/srv/{}/{run}", "a".repeat(60));
        let out = o.naming_dir(&format!("cannot read {dir}/cairn.db"), &dir);
        assert!(!out.contains(run), "{out}");
        assert!(
            out.starts_with("cannot read /srv/aaaa")
                && out.ends_with("/[REDACTED:high-entropy]/cairn.db"),
            "{out}"
        );
        // A dir of no part names nothing: every path stays hidden.
        for root in ["/", ""] {
            let out = o.naming_dir("cannot read /srv/x/cairn.db", root);
            assert!(
                out.contains("[REDACTED:path]") && !out.contains("/srv"),
                "{out}"
            );
        }
        // A trailing separator names the same folder.
        assert!(
            o.naming_dir("in /srv/cairn-data/cairn.db", "/srv/cairn-data/")
                .contains("/srv/cairn-data/cairn.db")
        );
    }

    /// macOS's per-user temporary folder (`/var/folders/<2>/<30>/T`, what `TMPDIR` names there,
    /// and so every temporary data dir) is named: its 30-character name is the system's, which
    /// the scan reads as a random token. Only that shape: the same run anywhere else, and a
    /// token elsewhere in a path under it, still hide it.
    #[test]
    fn the_macos_temp_folder_is_named_and_nothing_else_of_its_shape() {
        let o = Outbound::default();
        // One the scan reads as random (the brief's example, mostly zeros, it does not).
        let run = "k1jk4xl91xg6s4mnlql0bjrc0000gn";
        for dir in [
            format!("/var/folders/3d/{run}/T/.tmpAbC123/data"),
            format!("/private/var/folders/3d/{run}/T/cairn-x"),
            "/private/var/folders/zz/zyxvpxvq6csfxvn_n0000000000000/T/cairn-x".to_owned(),
            format!("/var/folders/3d/{run}/T"),
        ] {
            let msg = format!("no Cairn archive in {dir} (cairn.db is missing)");
            assert_eq!(o.naming_dir(&msg, &dir), msg);
        }
        let token = format!("ghp_{}", "R4nd0mT0k3nV4lu3F0rT3st1ngXyZ9Q8w7E6");
        for dir in [
            // A token elsewhere in a path under the temp folder.
            format!("/var/folders/3d/{run}/T/{token}/data"),
            // The shape anywhere but at the root, or not the temp folder (`C` is its cache),
            // or not the system's lengths.
            format!("/home/ann/var/folders/3d/{run}/T/data"),
            format!("/var/folders/3d/{run}/C/data"),
            format!("/var/folders/3dd/{run}/T/data"),
            format!("/var/folders/3d/{run}x/T/data"),
            format!("/var/folders/3d/{}/T/data", run.to_uppercase()),
        ] {
            let out = o.naming_dir(&format!("cannot read {dir}/cairn.db"), &dir);
            assert!(
                !out.contains(&token) && !out.contains(run) && out.contains("[REDACTED:"),
                "{dir} -> {out}"
            );
        }
        // A secret a `/` splits under the temp folder is found read whole, and hides it all.
        let dir = format!("/var/folders/3d/{run}/T/password=Xk9#mQ2/vL8pR4zT");
        let out = o.naming_dir(&format!("cannot read {dir}/cairn.db"), &dir);
        assert_eq!(out, "cannot read [REDACTED:path]/cairn.db");
    }

    #[test]
    fn fit_keeps_one_and_cuts_at_the_budget() {
        let items: Vec<Value> = (0..100)
            .map(|i| Value::String(format!("{i:0100}")))
            .collect();
        let (kept, cut) = fit(items.clone(), 1_000);
        assert!(cut);
        assert!(kept.len() < 10 && !kept.is_empty());
        let (kept, cut) = fit(items[..1].to_vec(), 10);
        assert_eq!(kept.len(), 1);
        assert!(!cut);
    }
}
