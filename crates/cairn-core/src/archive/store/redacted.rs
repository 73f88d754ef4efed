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
