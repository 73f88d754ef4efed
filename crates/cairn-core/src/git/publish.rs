//! Sharing through git itself: `publish` writes the redacted metadata of the sessions related to
//! a target as one commit per session under `refs/cairn/sessions/<session_key>` (a single
//! `session.json`); `git push`/`git fetch` of `refs/cairn/*` (or `cairn push`/`cairn pull`) carry
//! them; `pull` imports what teammates published, and skim shows it as `published`.
//!
//! What leaves is an allowlist: keys, agent, times, counts, labels, tool names, previews and
//! reasons — every text through the outbound redactor (absolute paths made repo-relative or
//! removed; the stored text has no secrets already, and a final scan refuses to write if one is
//! found). No records, tool inputs or outputs leave.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};

use super::repo::{Repo, run_git};
use super::targets::Target;
use crate::archive::redact::Redactor;
use crate::error::{Error, Result};
use crate::views::skim::{SkimQuery, SkimSession, skim};

/// The refs Cairn writes.
pub const REF_PREFIX: &str = "refs/cairn/sessions/";
/// Schema of a published document.
pub const DOCUMENT_SCHEMA: &str = "cairn.published-session.v1";

/// A session as published: what a teammate's skim shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PublishedSession {
    pub schema: String,
    pub published_at: String,
    /// Target keys this session was related to when published.
    pub target_keys: Vec<String>,
    pub session: SkimSession,
}

/// What `publish` did (or would do).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PublishReport {
    pub target_key: String,
    pub dry_run: bool,
    pub sessions: u32,
    pub turns: u32,
    pub related_turns: u32,
    /// The documents that leave (or would leave) the machine, after redaction.
    pub documents: Vec<PublishedSession>,
}

fn db(e: rusqlite::Error) -> Error {
    crate::archive::store::db_err(Path::new(":publish"), e)
}

/// Redact every text of a skim session for leaving the machine.
fn outbound(mut s: SkimSession, repo: &Repo, home: Option<&str>) -> Result<SkimSession> {
    let r = Redactor::global();
    let root = repo.root.to_string_lossy().into_owned();
    let mut findings = Vec::new();
    let mut clean = |t: &str| r.outbound_text(t, Some(&root), home, &mut findings);
    s.title = s.title.as_deref().map(&mut clean);
    s.project = s.project.as_deref().map(&mut clean);
    s.previews = s.previews.iter().map(|p| clean(p)).collect();
    for w in &mut s.why_related {
        w.reason = clean(&w.reason);
    }
    for t in &mut s.turns {
        t.previews = t.previews.iter().map(|p| clean(p)).collect();
    }
    // Defence in depth: nothing the scanner recognises may remain.
    let text = serde_json::to_string(&s).unwrap_or_default();
    let leftover = r.scan_text(&text);
    if let Some(f) = leftover
        .iter()
        .find(|f| f.rule != crate::archive::redact::PATH)
    {
        return Err(Error::Invalid(format!(
            "refusing to publish session {}: the outbound scan still finds a {} after redaction",
            s.session_key, f.rule
        )));
    }
    Ok(s)
}

/// Publish the sessions related to `target` in `repo`.
pub fn publish(
    conn: &Connection,
    repo: &Repo,
    target: &Target,
    dry_run: bool,
    now: &str,
) -> Result<PublishReport> {
    let view = skim(
        conn,
        &SkimQuery {
            target: target.clone(),
            include_weak: false,
            limit: None,
            repo_root: None,
        },
    )
    .map_err(db)?;
    let home = dirs::home_dir().map(|h| h.to_string_lossy().into_owned());
    let mut documents = Vec::new();
    for s in view
        .sessions
        .into_iter()
        .filter(|s| s.status == "local-only" || s.status == "published")
    {
        let mut target_keys: Vec<String> =
            s.why_related.iter().map(|w| w.target_key.clone()).collect();
        target_keys.push(target.key.clone());
        target_keys.sort();
        target_keys.dedup();
        let mut session = outbound(s, repo, home.as_deref())?;
        session.status = "published".to_owned();
        documents.push(PublishedSession {
            schema: DOCUMENT_SCHEMA.to_owned(),
            published_at: now.to_owned(),
            target_keys,
            session,
        });
    }
    let report = PublishReport {
        target_key: target.key.clone(),
        dry_run,
        sessions: documents.len() as u32,
        turns: documents.iter().map(|d| d.session.turn_count).sum(),
        related_turns: documents.iter().map(|d| d.session.related_turn_count).sum(),
        documents,
    };
    if dry_run {
        return Ok(report);
    }
    for doc in &report.documents {
        write_ref(repo, doc)?;
        conn.prepare_cached("UPDATE sessions SET published_at = ?2 WHERE session_key = ?1")
            .map_err(db)?
            .execute(params![doc.session.session_key, now])
            .map_err(db)?;
    }
    Ok(report)
}

/// Write one document as a commit on `refs/cairn/sessions/<key>` (parent: the previous one).
fn write_ref(repo: &Repo, doc: &PublishedSession) -> Result<()> {
    let json = serde_json::to_string_pretty(doc).unwrap_or_default();
    let blob = git_stdin(
        &repo.root,
        &["hash-object", "-w", "--stdin"],
        json.as_bytes(),
    )?;
    let tree = git_stdin(
        &repo.root,
        &["mktree"],
        format!("100644 blob {blob}\tsession.json\n").as_bytes(),
    )?;
    let refname = format!("{REF_PREFIX}{}", doc.session.session_key);
    let parent = run_git(&repo.root, &["rev-parse", "-q", "--verify", &refname])
        .ok()
        .map(|s| s.trim().to_owned());
    let mut args = vec!["commit-tree", tree.as_str(), "-m", "cairn publish"];
    if let Some(p) = parent.as_deref().filter(|p| !p.is_empty()) {
        args.extend(["-p", p]);
    }
    let commit = git_env(&repo.root, &args)?;
    run_git(&repo.root, &["update-ref", &refname, &commit])?;
    Ok(())
}

/// `commit-tree` needs an identity; publishing must not depend on the user having one set.
fn git_env(dir: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "Cairn")
        .env("GIT_AUTHOR_EMAIL", "cairn@localhost")
        .env("GIT_COMMITTER_NAME", "Cairn")
        .env("GIT_COMMITTER_EMAIL", "cairn@localhost")
        .output()
        .map_err(|e| Error::Git {
            dir: dir.to_owned(),
            message: format!("cannot run git: {e}"),
        })?;
    if !out.status.success() {
        return Err(Error::Git {
            dir: dir.to_owned(),
            message: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn git_stdin(dir: &Path, args: &[&str], input: &[u8]) -> Result<String> {
    let mut child = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Error::Git {
            dir: dir.to_owned(),
            message: format!("cannot run git: {e}"),
        })?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(input).map_err(|e| Error::Git {
            dir: dir.to_owned(),
            message: format!("git {}: {e}", args[0]),
        })?;
    }
    let out = child.wait_with_output().map_err(|e| Error::Git {
        dir: dir.to_owned(),
        message: format!("git {}: {e}", args[0]),
    })?;
    if !out.status.success() {
        return Err(Error::Git {
            dir: dir.to_owned(),
            message: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Push `refs/cairn/*` to `remote`; returns how many refs exist to push.
pub fn push(repo: &Repo, remote: &str) -> Result<u32> {
    let refs = run_git(
        &repo.root,
        &["for-each-ref", "--format=%(refname)", "refs/cairn/"],
    )?;
    let count = refs.lines().filter(|l| !l.is_empty()).count() as u32;
    if count > 0 {
        run_git(
            &repo.root,
            &["push", "--quiet", remote, "refs/cairn/*:refs/cairn/*"],
        )?;
    }
    Ok(count)
}

/// Fetch `refs/cairn/*` from `remote` and import every published session document.
pub fn pull(conn: &Connection, repo: &Repo, remote: &str, now: &str) -> Result<u32> {
    run_git(
        &repo.root,
        &["fetch", "--quiet", remote, "+refs/cairn/*:refs/cairn/*"],
    )?;
    import(conn, repo, now)
}

/// Import the documents under `refs/cairn/sessions/` of `repo`.
pub fn import(conn: &Connection, repo: &Repo, now: &str) -> Result<u32> {
    let refs = run_git(
        &repo.root,
        &[
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            REF_PREFIX,
        ],
    )?;
    let repo_row = super::snapshot::repo_id(conn, repo, now).map_err(db)?;
    let mut imported = 0;
    for line in refs.lines() {
        let Some((refname, commit)) = line.split_once(' ') else {
            continue;
        };
        let Ok(text) = run_git(
            &repo.root,
            &["cat-file", "blob", &format!("{commit}:session.json")],
        ) else {
            continue;
        };
        let Ok(doc) = serde_json::from_str::<PublishedSession>(&text) else {
            tracing::warn!("{refname}: not a Cairn session document; skipped");
            continue;
        };
        if doc.schema != DOCUMENT_SCHEMA
            || refname.strip_prefix(REF_PREFIX) != Some(doc.session.session_key.as_str())
        {
            continue;
        }
        imported += conn
            .prepare_cached(
                "INSERT INTO published_sessions (session_key, repo_id, document, target_keys, ref_commit, imported_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (session_key) DO UPDATE SET document = excluded.document, target_keys = excluded.target_keys,
                    ref_commit = excluded.ref_commit, imported_at = excluded.imported_at
                 WHERE published_sessions.ref_commit != excluded.ref_commit",
            )
            .map_err(db)?
            .execute(params![
                doc.session.session_key,
                repo_row,
                text,
                serde_json::to_string(&doc.target_keys).unwrap_or_default(),
                commit,
                now
            ])
            .map_err(db)?;
    }
    Ok(imported as u32)
}

/// Published sessions (from teammates) related to any of `keys`, not captured here.
pub fn published_for(conn: &Connection, keys: &[String]) -> rusqlite::Result<Vec<SkimSession>> {
    let mut stmt = conn.prepare_cached(
        "SELECT p.document, p.target_keys FROM published_sessions p
         WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.session_key = p.session_key)",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    let mut out = Vec::new();
    for row in rows {
        let (doc, targets) = row?;
        let targets: Vec<String> = serde_json::from_str(&targets).unwrap_or_default();
        if !targets.iter().any(|t| keys.contains(t)) {
            continue;
        }
        if let Ok(doc) = serde_json::from_str::<PublishedSession>(&doc) {
            out.push(doc.session);
        }
    }
    Ok(out)
}
