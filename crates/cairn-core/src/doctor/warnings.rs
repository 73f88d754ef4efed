//! Doctor's check of what the syncs could not read, as far as the archive keeps it: the lines of
//! transcripts its parsers skipped or read in part (the `warnings` table, a session's parse
//! warnings, which `cairn show` lists after its timeline). The files and folders a sync could
//! not open at all are said in that sync's own report and kept nowhere (nothing records them),
//! so this check says so rather than count them; a source folder that will not open is checked
//! live by its source dir check.

use rusqlite::Connection;

use super::{Check, Status, check};
use crate::archive::store::UnreadLines as Unread;

/// How many files the check names; the rest are counted.
const NAMED: usize = 3;

/// What the archive keeps of the lines its syncs could not read, the first [`NAMED`] files
/// named (the archive reads its own `warnings` table).
pub(crate) fn unread(conn: &Connection) -> rusqlite::Result<Unread> {
    crate::archive::store::unread_lines(conn, NAMED)
}

/// What a sync never keeps, said on every answer: a file it could not open is in its report only.
const NOT_KEPT: &str = "a file or folder a sync could not open at all is said in that sync's report only (run `cairn sync` to see it again); nothing keeps it";

/// The check: nothing skipped is fine; otherwise how much, the first files with their first
/// problem and the session to read them in, and the fix.
pub(crate) fn check_unread(unread: rusqlite::Result<Unread>) -> Check {
    let u = match unread {
        Ok(u) => u,
        Err(e) => return check("unread lines", Status::Fail, e.to_string()),
    };
    if u.warnings == 0 {
        return check(
            "unread lines",
            Status::Ok,
            format!("every line the syncs met was read; {NOT_KEPT}"),
        );
    }
    let each: Vec<String> = u
        .named
        .iter()
        .map(|(path, n, first, session)| {
            format!(
                "{path} ({}, first {}; `cairn show {session}`)",
                crate::text::plural(*n, "warning"),
                crate::text::one_line(first, 160)
            )
        })
        .collect();
    let more = match u.files.saturating_sub(u.named.len() as u64) {
        0 => String::new(),
        n => format!(" and {} more", crate::text::plural(n, "file")),
    };
    check(
        "unread lines",
        Status::Warn,
        format!(
            "{} in {} of {}, each a line a sync could not read in full (skipped, or read in part): {}{more}. Their text is kept in the retained copies: a Cairn whose parsers read them reads them again with `cairn reindex`; {NOT_KEPT}",
            crate::text::plural(u.warnings, "parse warning"),
            crate::text::plural(u.files, "file"),
            crate::text::plural(u.sessions, "session"),
            each.join(", "),
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The warnings of sessions are counted by file, newest first, each with its first line's
    /// problem and the session to show; an empty file's note (no session) is not a warning.
    #[test]
    fn unread_lines_are_counted_by_file_with_the_first_problem() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::Store::open(&dir.path().join("cairn.db")).unwrap();
        let conn = store.conn();
        assert_eq!(check_unread(unread(conn)).status, Status::Ok);
        conn.execute_batch(
            "INSERT INTO sessions (id, session_key, agent, captured_at) VALUES (1, 'sha256-aa', 'claude', 'now');
             INSERT INTO warnings (session_id, path, line, message, created_at) VALUES
               (1, '/t/a.jsonl', 7, 'not JSON', '2026-01-02'),
               (1, '/t/a.jsonl', 3, 'cut short', '2026-01-02'),
               (1, '/t/b.jsonl', NULL, 'no session id', '2026-01-01'),
               (NULL, '/t/empty.jsonl', NULL, 'empty file skipped', '2026-01-03');",
        )
        .unwrap();
        let u = unread(conn).unwrap();
        assert_eq!((u.warnings, u.sessions, u.files), (3, 1, 2));
        assert_eq!(
            u.named[0],
            (
                "/t/a.jsonl".to_owned(),
                2,
                "line 3: cut short".to_owned(),
                "sha256-aa".to_owned()
            )
        );
        let c = check_unread(Ok(u));
        assert_eq!(c.status, Status::Warn);
        assert!(
            c.detail
                .starts_with("3 parse warnings in 2 files of 1 session")
                && c.detail.contains(
                    "/t/a.jsonl (2 warnings, first line 3: cut short; `cairn show sha256-aa`)"
                )
                && c.detail.contains("nothing keeps it"),
            "{c:?}"
        );
    }
}
