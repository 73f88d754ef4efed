//! Floors point only down, and each room names only its own tables.
//!
//! A module of `cairn-core` may use the rooms on the floors below its own, never one above it,
//! and the rooms sharing a floor above the foundation do not use each other. The floors are
//! drawn in docs/ARCHITECTURE.md ("Floors"); this test reads every `crate::…` (and `super::…`
//! that leaves its room) path in `src/` outside comments and `#[cfg(test)]` items and fails on
//! each import that points up, naming file, line and rule. It also reads which room's
//! migrations create each table, and fails on SQL naming another room's table (save the debts
//! still listed in `FOREIGN_TABLES_LEFT`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The floors, bottom first. A room is a top-level module of the crate; `""` is the crate root
/// (`lib.rs`: the facade). Every top-level module must be on a floor.
const FLOORS: &[(&str, &[&str])] = &[
    (
        "foundation",
        &[
            "agent", "atomic", "clock", "config", "error", "keys", "private", "store", "text",
        ],
    ),
    ("archive", &["archive"]),
    ("git", &["git"]),
    ("llm", &["llm"]),
    ("semantic", &["semantic"]),
    ("rooms", &["hooks", "recall", "views"]),
    ("reports", &["insights", "team"]),
    ("facade", &["", "doctor", "facade", "schema"]),
];

/// Items the crate root re-exports from a room: a path through the root to them lands there.
const ROOT_REEXPORTS: &[(&str, &str)] = &[
    ("Error", "error"),
    ("ErrorKind", "error"),
    ("ErrorReport", "error"),
    ("Result", "error"),
    ("SessionStartBrief", "facade"),
    ("AgentWriter", "facade"),
];

fn floor_of(room: &str) -> Option<usize> {
    FLOORS.iter().position(|(_, rooms)| rooms.contains(&room))
}

/// Why `from` may not use `to`, or `None` when it may.
fn forbidden(from: &str, to: &str) -> Option<String> {
    if from == to {
        return None;
    }
    let (a, b) = (floor_of(from)?, floor_of(to)?);
    // The foundation and the facade are each one room: their modules use each other freely.
    if b < a || (a == b && (a == 0 || a == FLOORS.len() - 1)) {
        return None;
    }
    let name = |f: usize| FLOORS[f].0;
    Some(if a == b {
        format!(
            "`{from}` and `{to}` share the {} floor and do not use each other",
            name(a)
        )
    } else {
        format!(
            "`{from}` ({} floor) uses `{to}` on the {} floor above it",
            name(a),
            name(b)
        )
    })
}

/// Replace comments, char literals and (unless `keep_strings`) string literals with spaces
/// (newlines kept, so lines still count).
fn code_only(src: &str, keep_strings: bool) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, bytes: &[u8]| {
        out.extend(bytes.iter().map(|&c| if c == b'\n' { b'\n' } else { b' ' }))
    };
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            let end = rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest.starts_with(b"/*") {
            let end = rest
                .windows(2)
                .position(|w| w == b"*/")
                .map_or(rest.len(), |p| p + 2);
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest[0] == b'r'
            && (rest.get(1) == Some(&b'"') || rest.get(1) == Some(&b'#'))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            let hashes = rest[1..].iter().take_while(|&&c| c == b'#').count();
            if rest.get(1 + hashes) != Some(&b'"') {
                out.push(rest[0]);
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            let body = 2 + hashes;
            let end = rest[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(rest.len(), |p| body + p + close.len());
            if keep_strings {
                out.extend_from_slice(&rest[..end]);
            } else {
                blank(&mut out, &rest[..end]);
            }
            i += end;
        } else if rest[0] == b'"' {
            let mut j = 1;
            while j < rest.len() && rest[j] != b'"' {
                j += if rest[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(rest.len());
            if keep_strings {
                out.extend_from_slice(&rest[..end]);
            } else {
                blank(&mut out, &rest[..end]);
            }
            i += end;
        } else if rest[0] == b'\'' {
            // A char literal ('x', '\n', '\u{7f}') or a lifetime ('a): only the former is blanked.
            let len = if rest.get(1) == Some(&b'\\') {
                rest[2..].iter().position(|&c| c == b'\'').map(|p| p + 3)
            } else {
                let ch = std::str::from_utf8(&rest[1..rest.len().min(5)])
                    .ok()
                    .or_else(|| std::str::from_utf8(&rest[1..2]).ok())
                    .and_then(|s| s.chars().next());
                ch.map(char::len_utf8)
                    .filter(|n| rest.get(1 + n) == Some(&b'\''))
                    .map(|n| n + 2)
            };
            match len {
                Some(n) => {
                    blank(&mut out, &rest[..n]);
                    i += n;
                }
                None => {
                    out.push(b'\'');
                    i += 1;
                }
            }
        } else {
            out.push(rest[0]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The byte ranges of every `#[cfg(test)]` (or `#[cfg(all(test, …))]`) item in `code` (comments
/// and literals already blanked): its tests may set up through any floor and table.
fn test_items(code: &str) -> Vec<std::ops::Range<usize>> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("#[cfg(").map(|p| p + from) {
        let attr_end = code[at..].find(")]").map_or(code.len(), |p| at + p);
        let words: Vec<&str> = code[at..attr_end]
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .collect();
        if !words.contains(&"test") || words.contains(&"not") {
            from = attr_end;
            continue;
        }
        let Some(open) = bytes[at..]
            .iter()
            .position(|&c| c == b'{' || c == b';')
            .map(|p| p + at)
        else {
            break;
        };
        let mut end = open + 1;
        if bytes[open] == b'{' {
            let mut depth = 1;
            while end < bytes.len() && depth > 0 {
                match bytes[end] {
                    b'{' => depth += 1,
                    b'}' => depth -= 1,
                    _ => {}
                }
                end += 1;
            }
        }
        out.push(at..end);
        from = end;
    }
    out
}

/// The code of a source file outside comments and test items; string literals kept when
/// `keep_strings` (byte offsets, so lines, are those of the file).
fn source(text: &str, keep_strings: bool) -> String {
    let tests = test_items(&code_only(text, false));
    let mut bytes = code_only(text, keep_strings).into_bytes();
    for range in tests {
        for b in &mut bytes[range] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

fn skip_ws(s: &str) -> &str {
    s.trim_start()
}

/// The rooms a path after `crate::` reaches: one, or each of a `{…}` group.
fn rooms_after_crate(rest: &str) -> Vec<String> {
    let rest = skip_ws(rest);
    let room = |ident: &str| -> String {
        if ident.starts_with(|c: char| c.is_ascii_uppercase()) || ident.is_empty() {
            ROOT_REEXPORTS
                .iter()
                .find(|(item, _)| *item == ident)
                .map_or(String::new(), |(_, room)| (*room).to_owned())
        } else {
            ident.to_owned()
        }
    };
    if let Some(group) = rest.strip_prefix('{') {
        let mut out = Vec::new();
        let mut depth = 0;
        let mut start = true;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => start = true,
                c if start && !c.is_whitespace() => {
                    start = false;
                    let id = ident_at(&group[i..]);
                    if id == "self" {
                        out.push(String::new());
                    } else {
                        out.push(room(id));
                    }
                }
                _ => {}
            }
        }
        out
    } else {
        vec![room(ident_at(rest))]
    }
}

struct Import {
    file: String,
    line: usize,
    to: String,
}

/// Every room each file of `src` uses, with where.
fn imports(src: &Path) -> Vec<(String, Import)> {
    let mut out = Vec::new();
    for file in rust_files(src) {
        let rel = file.strip_prefix(src).unwrap();
        let parts: Vec<String> = rel
            .with_extension("")
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        let from = if parts == ["lib"] {
            String::new()
        } else {
            parts[0].clone()
        };
        // Depth of the file's module below the root (`git/publish.rs` is 2, `git.rs` is 1).
        let depth = if parts == ["lib"] { 0 } else { parts.len() };
        let text = std::fs::read_to_string(&file).unwrap();
        let code = source(&text, false);
        let mut push = |at: usize, to: String| {
            let line = code[..at].matches('\n').count() + 1;
            out.push((
                from.clone(),
                Import {
                    file: rel.display().to_string(),
                    line,
                    to,
                },
            ));
        };
        for (at, _) in code.match_indices("crate::") {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            for to in rooms_after_crate(&code[at + "crate::".len()..]) {
                push(at, to);
            }
        }
        // `super::super::x` from `git/publish.rs` reaches the root room `x`.
        for (at, _) in code.match_indices("super::") {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut rest = &code[at..];
            let mut ups = 0;
            while let Some(r) = rest.strip_prefix("super::") {
                ups += 1;
                rest = skip_ws(r);
            }
            if depth > 0 && ups >= depth {
                for to in rooms_after_crate(rest) {
                    push(at, to);
                }
            }
        }
    }
    out
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn upward(src: &Path) -> Vec<String> {
    imports(src)
        .into_iter()
        .filter_map(|(from, i)| {
            forbidden(&from, &i.to).map(|why| format!("{}:{}: {why}", i.file, i.line))
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn every_room_is_on_a_floor() {
    let mut rooms = BTreeSet::new();
    for (from, i) in imports(&src()) {
        rooms.insert(from);
        if !i.to.is_empty() && !i.to.starts_with(|c: char| c.is_ascii_uppercase()) {
            rooms.insert(i.to);
        }
    }
    let unplaced: Vec<_> = rooms.iter().filter(|r| floor_of(r).is_none()).collect();
    assert!(
        unplaced.is_empty(),
        "rooms on no floor (add them to FLOORS in tests/floors.rs and to docs/ARCHITECTURE.md): {unplaced:?}"
    );
}

#[test]
fn floors_point_only_down() {
    let found = upward(&src());
    println!("upward imports: {}", found.len());
    assert!(
        found.is_empty(),
        "{} imports point up a floor (see docs/ARCHITECTURE.md, \"Floors\"):\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn the_check_sees_an_upward_import() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("archive")).unwrap();
    std::fs::write(src.join("lib.rs"), "pub mod archive;\npub mod views;\n").unwrap();
    std::fs::write(
        src.join("archive/capture.rs"),
        "//! Uses crate::views only in a comment.\n\
         use crate::{error::Result, views::skim};\n\
         const S: &str = \"crate::recall\";\n\
         fn f() { super::super::insights::run(); let c = '{'; }\n\
         #[cfg(test)]\nmod tests { use crate::Cairn; fn g() { let _ = \"}\"; } }\n",
    )
    .unwrap();
    std::fs::write(src.join("views.rs"), "use crate::archive::Agent;\n").unwrap();
    let found = upward(src);
    assert_eq!(
        found,
        [
            "archive/capture.rs:2: `archive` (archive floor) uses `views` on the rooms floor above it",
            "archive/capture.rs:4: `archive` (archive floor) uses `insights` on the reports floor above it",
        ],
    );
}

/// The room whose migrations (`src/<room>/migrations/*.sql`) create each table.
fn table_owners(src: &Path) -> std::collections::BTreeMap<String, String> {
    let mut owners = std::collections::BTreeMap::new();
    for entry in std::fs::read_dir(src).unwrap() {
        let room = entry.unwrap().path();
        let dir = room.join("migrations");
        if !dir.is_dir() {
            continue;
        }
        let name = room.file_name().unwrap().to_string_lossy().into_owned();
        for sql in std::fs::read_dir(&dir).unwrap() {
            let text = std::fs::read_to_string(sql.unwrap().path()).unwrap();
            for table in sql_names(&text, &["CREATE TABLE", "CREATE VIRTUAL TABLE"]) {
                owners.insert(table, name.clone());
            }
        }
    }
    owners
}

/// Lower-case names following any of `keywords` (whitespace between them and the name).
fn sql_names(text: &str, keywords: &[&str]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for keyword in keywords {
        for (at, _) in text.match_indices(keyword) {
            let before = text[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let rest = text[at + keyword.len()..].trim_start();
            let rest = rest
                .strip_prefix("IF NOT EXISTS")
                .unwrap_or(rest)
                .trim_start();
            let name = ident_at(rest);
            if !name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
                out.insert(name.to_owned());
            }
        }
    }
    out
}

/// `file: table` for each table of another room a file's SQL names.
fn foreign_tables(src: &Path) -> BTreeSet<String> {
    let owners = table_owners(src);
    let mut out = BTreeSet::new();
    for file in rust_files(src) {
        let rel = file.strip_prefix(src).unwrap();
        let rel_name = rel.display().to_string();
        let room = if rel_name == "lib.rs" {
            String::new()
        } else {
            rel.iter()
                .next()
                .unwrap()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_owned()
        };
        let text = std::fs::read_to_string(&file).unwrap();
        let code = source(&text, true);
        for table in sql_names(&code, &["FROM", "JOIN", "INTO", "UPDATE", "TABLE"]) {
            if owners.get(&table).is_some_and(|owner| *owner != room) {
                out.insert(format!("{rel_name}: {table}"));
            }
        }
    }
    out
}

/// What still reads or writes another room's table instead of going through that room's typed
/// reads. The list may only shrink: a new entry fails `rooms_name_only_their_own_tables`, and
/// so does an entry that no longer holds (remove it). Migration code (`archive/rekey.rs`, step
/// 14) may touch any table.
const FOREIGN_TABLES_LEFT: &[&str] = &[];

#[test]
fn rooms_name_only_their_own_tables() {
    let found = foreign_tables(&src());
    let left: BTreeSet<String> = FOREIGN_TABLES_LEFT.iter().map(|s| s.to_string()).collect();
    let files: BTreeSet<_> = found.iter().filter_map(|f| f.split(':').next()).collect();
    println!("files naming another room's table: {}", files.len());
    let new: Vec<&str> = found.difference(&left).map(String::as_str).collect();
    let gone: Vec<&str> = left.difference(&found).map(String::as_str).collect();
    assert!(
        new.is_empty(),
        "SQL naming another room's table (read it through that room's typed reads instead):\n{}",
        new.join("\n")
    );
    assert!(
        gone.is_empty(),
        "no longer found; remove from FOREIGN_TABLES_LEFT in tests/floors.rs:\n{}",
        gone.join("\n")
    );
}

#[test]
fn the_table_check_sees_a_foreign_table() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("archive/migrations")).unwrap();
    std::fs::create_dir_all(src.join("recall/migrations")).unwrap();
    std::fs::write(
        src.join("archive/migrations/0001_archive.sql"),
        "CREATE TABLE sessions (id INTEGER);\nCREATE VIRTUAL TABLE records_fts USING fts5(text);",
    )
    .unwrap();
    std::fs::write(
        src.join("recall/migrations/0004_recall.sql"),
        "CREATE TABLE IF NOT EXISTS recall_entries (id TEXT);",
    )
    .unwrap();
    std::fs::write(
        src.join("recall.rs"),
        "// SELECT * FROM sessions (a comment)\n\
         const Q: &str = \"SELECT id FROM recall_entries e JOIN sessions s ON s.id = e.session_id\";\n\
         const R: &str = r#\"SELECT rowid FROM records_fts\"#;\n\
         #[cfg(test)]\nmod tests { const T: &str = \"DELETE FROM sessions\"; }\n",
    )
    .unwrap();
    assert_eq!(
        foreign_tables(src).into_iter().collect::<Vec<_>>(),
        ["recall.rs: records_fts", "recall.rs: sessions"]
    );
}

/// Where a front door (outside its tests) touches a raw database connection.
fn raw_connections(doors: &[PathBuf]) -> Vec<String> {
    let mut out = Vec::new();
    for door in doors {
        for file in rust_files(door) {
            let code = source(&std::fs::read_to_string(&file).unwrap(), false);
            for needle in [".conn()", ".conn_mut()", "rusqlite::"] {
                for (at, _) in code.match_indices(needle) {
                    let line = code[..at].matches('\n').count() + 1;
                    out.push(format!("{}:{line}: {needle}", file.display()));
                }
            }
        }
    }
    out
}

#[test]
fn front_doors_never_touch_a_connection() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let doors: Vec<PathBuf> = [
        "crates/cairn-cli/src",
        "crates/cairn-mcp/src",
        "src-tauri/src",
    ]
    .iter()
    .map(|d| root.join(d))
    .collect();
    let found = raw_connections(&doors);
    assert!(
        found.is_empty(),
        "front doors reach the database only through Cairn's methods:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_connection_check_sees_a_raw_connection() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("main.rs"),
        "fn f(s: &Store) { s.conn().execute(\"x\", []); }\n\
         // s.conn() in a comment\n\
         #[cfg(test)]\nmod tests { fn g() { rusqlite::Connection::open(\"x\"); } }\n",
    )
    .unwrap();
    let found = raw_connections(&[dir.path().to_owned()]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].ends_with("main.rs:1: .conn()"), "{found:?}");
}
