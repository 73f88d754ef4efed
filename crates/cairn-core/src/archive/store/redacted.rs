//! Text the rooms stored from transcripts or model answers, redacted again with today's rules
//! (a reindex's sweep after older rules let a secret through): one helper over a room's own
//! columns, the room naming them.

use rusqlite::Connection;

/// Redact again, with today's secret rules, the text columns `columns` of every row of `table`
/// (a room's own table, named by its code): for text a room stored from transcripts or model
/// answers, after a reindex found secrets older rules let through. The rows whose text changes
/// are rewritten when `apply`; their `key` column's values come back either way.
pub(crate) fn redact_columns(
    conn: &Connection,
    table: &str,
    key: &str,
    columns: &[&str],
    apply: bool,
) -> rusqlite::Result<Vec<rusqlite::types::Value>> {
    let redactor = crate::archive::redact::Redactor::global();
    let select = format!("SELECT {key}, {} FROM {table}", columns.join(", "));
    let set: Vec<String> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| format!("{c} = ?{}", i + 2))
        .collect();
    let update = format!("UPDATE {table} SET {} WHERE {key} = ?1", set.join(", "));
    let mut changed = Vec::new();
    let mut rows: Vec<(rusqlite::types::Value, Vec<Option<String>>)> = Vec::new();
    {
        let mut stmt = conn.prepare(&select)?;
        let mut read = stmt.query([])?;
        while let Some(r) = read.next()? {
            let texts = (1..=columns.len())
                .map(|i| r.get::<_, Option<String>>(i))
                .collect::<rusqlite::Result<Vec<_>>>()?;
            rows.push((r.get(0)?, texts));
        }
    }
    for (id, texts) in rows {
        let mut any = false;
        let cleaned: Vec<Option<String>> = texts
            .iter()
            .zip(columns)
            .map(|(text, column)| {
                text.as_deref().map(|t| {
                    let out = redactor.redact_text(t, column, &mut Vec::new());
                    any |= matches!(out, std::borrow::Cow::Owned(_));
                    out.into_owned()
                })
            })
            .collect();
        if !any {
            continue;
        }
        if apply {
            let mut values: Vec<rusqlite::types::Value> = vec![id.clone()];
            values.extend(cleaned.into_iter().map(rusqlite::types::Value::from));
            conn.prepare_cached(&update)?
                .execute(rusqlite::params_from_iter(values))?;
        }
        changed.push(id);
    }
    Ok(changed)
}

/// The session facts a parser took from a file beside its transcript (a title, a working
/// directory, a branch, a model: Grok's `summary.json`, Vibe's `meta.json`, Droid's settings,
/// gptme's `config.toml`), which older builds stored as read: redacted with today's rules in
/// `sessions`, in each record's `cwd` and in the parsers' saved state (migration 46's Rust
/// half). Identities (ids, keys) are left: they came through the same rules at ingest. Returns
/// how many rows changed.
pub(crate) fn redact_session_facts(conn: &Connection) -> rusqlite::Result<usize> {
    // The pages the facts as read leave are zeroed, not left free with them.
    conn.pragma_update(None, "secure_delete", true)?;
    let changed = redact_session_facts_in(conn);
    conn.pragma_update(None, "secure_delete", false)?;
    changed
}

fn redact_session_facts_in(conn: &Connection) -> rusqlite::Result<usize> {
    const FACTS: [&str; 7] = [
        "title",
        "project",
        "cwd",
        "git_branch",
        "repository_url",
        "model",
        "provider",
    ];
    let mut changed = 0;
    let rows = conn
        .prepare(&format!("SELECT id, {} FROM sessions", FACTS.join(", ")))?
        .query_map([], |r| {
            let facts = (1..=FACTS.len())
                .map(|i| r.get::<_, Option<String>>(i))
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok((r.get::<_, i64>(0)?, facts))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    for (id, facts) in rows {
        for (column, fact) in FACTS.iter().zip(facts) {
            if let Some(kept) = fact.as_deref().and_then(|f| kept_fact(column, f)) {
                changed += conn.execute(
                    &format!("UPDATE sessions SET {column} = ?2 WHERE id = ?1"),
                    rusqlite::params![id, kept],
                )?;
            }
        }
    }
    // Few working directories, many records: each distinct one redacted once.
    let cwds = conn
        .prepare("SELECT DISTINCT cwd FROM records WHERE cwd IS NOT NULL")?
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    for cwd in cwds {
        if let Some(kept) = kept_fact("cwd", &cwd) {
            changed += conn.execute("UPDATE records SET cwd = ?2 WHERE cwd = ?1", [&cwd, &kept])?;
        }
    }
    let states = conn
        .prepare("SELECT id, parser_state FROM sources WHERE parser_state IS NOT NULL")?
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let redactor = crate::archive::redact::Redactor::global();
    for (id, state) in states {
        if let std::borrow::Cow::Owned(kept) = redactor.redact_line(&state, &mut Vec::new()) {
            changed += conn.execute(
                "UPDATE sources SET parser_state = ?2 WHERE id = ?1",
                rusqlite::params![id, kept],
            )?;
        }
    }
    Ok(changed)
}

/// `value`, the session fact `field`, redacted with today's rules: a folder (`cwd`, `project`)
/// part by part as a source's path is kept (`archive::store::at_rest`: a random-looking temp
/// folder glued to the next is no secret), any other fact as capture redacts it under that key
/// of a transcript's JSON. `None` when it stays as it is.
pub(crate) fn kept_fact(field: &str, value: &str) -> Option<String> {
    if matches!(field, "cwd" | "project") {
        return match super::at_rest(value) {
            std::borrow::Cow::Owned(kept) => Some(kept),
            std::borrow::Cow::Borrowed(_) => None,
        };
    }
    let mut wrapped = serde_json::json!({ field: value });
    if !crate::archive::redact::Redactor::global().redact_json(&mut wrapped, &mut Vec::new()) {
        return None;
    }
    wrapped[field].as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use crate::store::Store;

    /// Migration 46: a title, branch, record's cwd and parser state holding a key are redacted
    /// (each fact a row), the session's id and clean facts left; a second pass changes nothing.
    #[test]
    fn facts_an_older_build_took_from_side_files_are_redacted() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("cairn.db")).unwrap();
        let key = "AKIAZ7Q4N2M8K3T6W1XR";
        store
            .conn()
            .execute_batch(&format!(
                "INSERT INTO sessions (id, session_key, agent, session_id, title, git_branch, model, captured_at)
                   VALUES (1, 'k', 'grok', 'id-1', 'deploy {key}', 'feat/{key}', 'grok-4', 'now');
                 INSERT INTO sources (id, source_key, session_id, agent, role, path, updated_at, parser_state)
                   VALUES (1, 's', 1, 'grok', 'main', '/p', 'now', '{{\"meta\":{{\"title\":\"deploy {key}\"}}}}');
                 INSERT INTO records (session_id, ordinal, source_id, line_no, block, record_hash, kind,
                   source_event_kind, tool_kind, outcome, cwd)
                   VALUES (1, 0, 1, 0, 0, 'h0', 'message', 'x', NULL, NULL, '/h/{key}');"
            ))
            .unwrap();
        // A folder that reads random in free text is no secret in a cwd: kept as it is.
        let tmp = "/tmp/.tmpL3j12b/Starmel-OpenSuperWhisper";
        store
            .conn()
            .execute(
                "INSERT INTO sessions (id, session_key, agent, cwd, captured_at) VALUES (2, 'k2', 'crush', ?1, 'now')",
                [tmp],
            )
            .unwrap();
        assert_eq!(super::redact_session_facts(store.conn()).unwrap(), 4);
        let cwd: String = store
            .conn()
            .query_row("SELECT cwd FROM sessions WHERE id = 2", [], |r| r.get(0))
            .unwrap();
        assert_eq!(cwd, tmp);
        assert_eq!(super::redact_session_facts(store.conn()).unwrap(), 0);
        let (id, title, branch, model, cwd, state): (String, String, String, String, String, String) =
            store
                .conn()
                .query_row(
                    "SELECT s.session_id, s.title, s.git_branch, s.model, r.cwd, x.parser_state
                     FROM sessions s JOIN records r ON r.session_id = s.id JOIN sources x ON x.session_id = s.id",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)),
                )
                .unwrap();
        assert_eq!((id.as_str(), model.as_str()), ("id-1", "grok-4"));
        for kept in [&title, &branch, &cwd, &state] {
            assert!(!kept.contains(key) && kept.contains("[REDACTED:"), "{kept}");
        }
    }
}
