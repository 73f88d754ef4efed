//! The `insights` table: saving, listing, searching, starring, renaming and deleting reports.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::{Insight, InsightSummary, Slice};

const COLUMNS: &str = "id, title, template_id, template_version, slice, focus, generator, model,
    endpoint_hash, cache_key, material_hash, sessions_total, sessions_included, prompt_chars,
    content, starred, created_at, elapsed_ms";

fn slice_of(text: &str) -> rusqlite::Result<Slice> {
    serde_json::from_str(text).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e))
    })
}

fn insight(r: &Row<'_>) -> rusqlite::Result<Insight> {
    let template_id: String = r.get(2)?;
    Ok(Insight {
        id: r.get(0)?,
        status: super::Status::Stored,
        title: r.get(1)?,
        template_title: template_id.clone(),
        template_id,
        template_version: r.get(3)?,
        slice: slice_of(&r.get::<_, String>(4)?)?,
        focus: r.get(5)?,
        generator: r.get(6)?,
        model: r.get(7)?,
        endpoint_hash: r.get(8)?,
        cache_key: r.get(9)?,
        material_hash: r.get(10)?,
        sessions_total: r.get(11)?,
        sessions_included: r.get(12)?,
        prompt_chars: r.get(13)?,
        content: r.get(14)?,
        starred: r.get(15)?,
        created_at: r.get(16)?,
        elapsed_ms: r.get(17)?,
        session_keys: Vec::new(),
        link: String::new(),
    })
}

/// Save a new report with the sessions it read; returns its id.
pub fn insert(conn: &mut Connection, i: &Insight) -> rusqlite::Result<i64> {
    let tx = conn.transaction()?;
    tx.execute(
        "INSERT INTO insights (title, template_id, template_version, slice, focus, generator, model,
            endpoint_hash, cache_key, material_hash, sessions_total, sessions_included, prompt_chars,
            content, starred, created_at, elapsed_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
        params![
            i.title,
            i.template_id,
            i.template_version,
            serde_json::to_string(&i.slice).unwrap_or_default(),
            i.focus,
            i.generator,
            i.model,
            i.endpoint_hash,
            i.cache_key,
            i.material_hash,
            i.sessions_total,
            i.sessions_included,
            i.prompt_chars,
            i.content,
            i.starred,
            i.created_at,
            i.elapsed_ms,
        ],
    )?;
    let id = tx.last_insert_rowid();
    {
        let mut stmt = tx.prepare(
            "INSERT OR IGNORE INTO insight_sessions (insight_id, session_key) VALUES (?1, ?2)",
        )?;
        for key in &i.session_keys {
            stmt.execute(params![id, key])?;
        }
    }
    tx.commit()?;
    Ok(id)
}

pub fn get(conn: &Connection, id: i64) -> rusqlite::Result<Option<Insight>> {
    let Some(mut found) = conn
        .query_row(
            &format!("SELECT {COLUMNS} FROM insights WHERE id = ?1"),
            params![id],
            insight,
        )
        .optional()?
    else {
        return Ok(None);
    };
    let mut stmt = conn.prepare_cached(
        "SELECT session_key FROM insight_sessions WHERE insight_id = ?1 ORDER BY session_key",
    )?;
    found.session_keys = stmt
        .query_map(params![id], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(Some(found))
}

/// The newest report made with this cache key.
pub fn by_cache_key(conn: &Connection, key: &str) -> rusqlite::Result<Option<i64>> {
    conn.query_row(
        "SELECT id FROM insights WHERE cache_key = ?1 ORDER BY created_at DESC, id DESC LIMIT 1",
        params![key],
        |r| r.get(0),
    )
    .optional()
}

/// Reports, newest first; `search` matches title and content (case-insensitive words, all
/// must match), `starred` keeps starred ones only. The content is matched as a person reads it
/// ([`super::render::read_text`]): a word found only in a link's address (every report cites
/// sessions as `cairn://session/…`) does not find the report.
pub fn list(
    conn: &Connection,
    search: Option<&str>,
    starred: bool,
    limit: u32,
) -> rusqlite::Result<Vec<InsightSummary>> {
    let mut sql = String::from(
        "SELECT id, title, template_id, generator, model, slice, starred, created_at, sessions_total,
                content
         FROM insights WHERE 1 = 1",
    );
    let words: Vec<&str> = search.unwrap_or("").split_whitespace().take(8).collect();
    let mut args: Vec<String> = Vec::new();
    // SQL narrows to the reports holding every word anywhere; the words read are checked below.
    for word in &words {
        let escaped = word
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_");
        sql.push_str(" AND (title LIKE ? ESCAPE '\\' OR content LIKE ? ESCAPE '\\')");
        args.push(format!("%{escaped}%"));
        args.push(format!("%{escaped}%"));
    }
    if starred {
        sql.push_str(" AND starred = 1");
    }
    sql.push_str(" ORDER BY created_at DESC, id DESC");
    if words.is_empty() {
        sql.push_str(&format!(" LIMIT {limit}"));
    }
    // LIKE folds ASCII letters only: so does the check, or it would find what LIKE left out.
    let words: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(args), |r| {
        let id: i64 = r.get(0)?;
        let slice = slice_of(&r.get::<_, String>(5)?)?;
        let title: String = r.get(1)?;
        let found = words.is_empty() || {
            let content: Option<String> = r.get(9)?;
            let read = super::render::read_text(content.as_deref().unwrap_or_default());
            let (title, read) = (title.to_ascii_lowercase(), read.to_ascii_lowercase());
            words
                .iter()
                .all(|w| title.contains(w.as_str()) || read.contains(w.as_str()))
        };
        if !found {
            return Ok(None);
        }
        Ok(Some(InsightSummary {
            id,
            title,
            template_id: r.get(2)?,
            generator: r.get(3)?,
            model: r.get(4)?,
            slice_label: slice.label(),
            starred: r.get(6)?,
            created_at: r.get(7)?,
            sessions_total: r.get(8)?,
            link: super::link(id),
        }))
    })?;
    let mut out = Vec::new();
    for row in rows {
        if let Some(summary) = row? {
            out.push(summary);
            if out.len() >= limit as usize {
                break;
            }
        }
    }
    Ok(out)
}

pub fn set_starred(conn: &Connection, id: i64, starred: bool) -> rusqlite::Result<bool> {
    Ok(conn.execute(
        "UPDATE insights SET starred = ?2 WHERE id = ?1",
        params![id, starred],
    )? == 1)
}

pub fn rename(conn: &Connection, id: i64, title: &str) -> rusqlite::Result<bool> {
    Ok(conn.execute(
        "UPDATE insights SET title = ?2 WHERE id = ?1",
        params![id, title],
    )? == 1)
}

pub fn delete(conn: &Connection, id: i64) -> rusqlite::Result<bool> {
    Ok(conn.execute("DELETE FROM insights WHERE id = ?1", params![id])? == 1)
}

/// A reindex's part in Insights when it found secrets older rules let through: the reports'
/// text (written by a model from transcripts) redacted again with today's rules. `apply` false
/// counts only. Returns how many reports changed.
pub(crate) fn redact_stored(conn: &Connection, apply: bool) -> rusqlite::Result<u32> {
    let changed = crate::archive::store::redact_columns(
        conn,
        "insights",
        "id",
        &["title", "focus", "content"],
        apply,
    )?;
    Ok(u32::try_from(changed.len()).unwrap_or(u32::MAX))
}

/// A rebuild from the copies (`cairn reindex --from-copies`): the reports of `old` (read-only,
/// maybe damaged) carried into the rebuilt `new`, row by row, under their ids (the window's
/// links name a report by it), with the sessions each read. Those sessions are named by key,
/// which a rebuild keeps, so nothing needs mapping; a report that read a session forgotten
/// since is left behind, as the forget would have taken it. What is left behind is counted,
/// and so are reports that read a session the rebuild could not bring back (their links to it
/// open nothing). Never fails.
pub fn carry_from(old: &Connection, new: &Connection) -> crate::archive::rebuild::Carry {
    let (mut rows, mut forgotten, mut partial) = (0u64, 0u64, 0u64);
    let copied = (|| -> rusqlite::Result<()> {
        let mut read = old.prepare(&format!("SELECT {COLUMNS} FROM insights ORDER BY id"))?;
        let n = read.column_count();
        let mut sessions_of =
            old.prepare("SELECT session_key FROM insight_sessions WHERE insight_id = ?1")?;
        let marks = (1..=n).map(|i| format!("?{i}")).collect::<Vec<_>>();
        let mut write = new.prepare(&format!(
            "INSERT OR IGNORE INTO insights ({COLUMNS}) VALUES ({})",
            marks.join(", ")
        ))?;
        let mut read_by = new.prepare(
            "INSERT OR IGNORE INTO insight_sessions (insight_id, session_key) VALUES (?1, ?2)",
        )?;
        let mut found = read.query([])?;
        while let Some(row) = found.next()? {
            let values: Vec<rusqlite::types::Value> = (0..n)
                .map(|i| row.get(i))
                .collect::<rusqlite::Result<_>>()?;
            let id: i64 = row.get(0)?;
            let keys: Vec<String> = sessions_of
                .query_map([id], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            let mut missing = false;
            let mut gone = false;
            for key in &keys {
                gone |= crate::archive::forget::is_forgotten_session(new, key)?;
                missing |= crate::archive::rebuild::session_row(new, key)?.is_none();
            }
            if gone {
                forgotten += 1;
                continue;
            }
            if write.execute(rusqlite::params_from_iter(values))? == 0 {
                continue;
            }
            for key in &keys {
                read_by.execute(params![id, key])?;
            }
            rows += 1;
            partial += u64::from(missing);
        }
        Ok(())
    })();
    let mut carry = crate::archive::rebuild::Carry::default();
    carry.carried.push(crate::archive::rebuild::Carried {
        what: "generated insight reports",
        rows,
        error: copied.err().map(|e| e.to_string()),
    });
    if forgotten > 0 {
        carry.not_carried.push(format!(
            "{} that read a forgotten session, as the forget takes them",
            crate::text::plural(forgotten, "generated report")
        ));
    }
    if partial > 0 {
        carry.not_carried.push(format!(
            "{} read sessions that were not rebuilt: links to those sessions open nothing",
            crate::text::plural(partial, "carried report"),
        ));
    }
    carry
}
