//! Sharing through git itself: `publish` writes the redacted metadata of the sessions related to
//! a target as one commit per session under `refs/cairn/sessions/<session_key>` (a single
//! `session.json`, see [`super::document`]); `cairn push` sends those refs (this machine's own,
//! never a teammate's); `cairn pull` fetches a remote's into `refs/cairn/remotes/<remote>/…`
//! without force and imports each document that passes the checks, and skim shows it as
//! `published` and untrusted in that repository only.
//!
//! What leaves is an allowlist: keys, agent, times, counts, labels, tool names, previews and
//! reasons — every text through the outbound redactor (absolute paths made repo-relative or
//! removed; the stored text has no secrets already, and a final scan refuses to write if one is
//! found). No records, tool inputs or outputs leave.
//!
//! What arrives is a teammate's text and nothing more: a document is read only from a ref whose
//! name is a session key, only up to the size limits, parsed strictly and refused whole when a
//! check fails (a warning naming the ref; the pull goes on). The user's own `refs/cairn/…` are
//! never written by a pull, and a ref a teammate rewrote is not force-updated.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};

pub use super::document::{DOCUMENT_SCHEMA, PublishedSession};
use super::document::{DocSession, is_key, limits};
use super::repo::{Repo, git_failure, run_git, run_git_raw, verb};
use super::targets::Target;
use super::transcript;
use crate::archive::redact::Redactor;
use crate::archive::store::PublishedBy;
use crate::error::{Error, Result};

/// The refs `publish` writes: this machine's own documents.
pub const REF_PREFIX: &str = "refs/cairn/sessions/";

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
    /// `--full`: each session's redacted transcript leaves too.
    #[serde(default)]
    pub full: bool,
    /// With `full`: who the transcripts name as their publisher (the repository's git
    /// `user.name` and `user.email`).
    #[serde(default)]
    pub publisher: Option<String>,
    /// With `full`: the transcripts written (or that would be), and their compressed bytes.
    #[serde(default)]
    pub transcripts: u32,
    #[serde(default)]
    pub transcript_bytes: u64,
    /// Sessions that only ran while the target was checked out (weak links alone): never
    /// published.
    pub weak_left_out: u32,
    /// Sessions related to the target by work whose repository is not known (their folder was
    /// in none Cairn could read at capture, or its name was redacted): never published, since
    /// a document is shared in its repository's refs only.
    #[serde(default)]
    pub unplaced_left_out: u32,
    /// Of [`PublishReport::unplaced_left_out`], those whose folder's name was redacted at
    /// capture (it looked like a secret).
    #[serde(default)]
    pub unplaced_redacted: u32,
}

/// What `publish --full` adds: who publishes, and each session's ATIF trajectory as the archive
/// holds it (redacted at capture; [`transcript::outbound`] redacts it for leaving).
#[derive(Debug, Clone, Default)]
pub struct Full {
    pub publisher: String,
    pub trajectories: BTreeMap<String, serde_json::Value>,
}

/// What `push` sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PushReport {
    pub remote: String,
    /// This machine's own published refs the remote took (new or moved on).
    pub pushed: u32,
    /// Own refs the remote already had as they are.
    pub unchanged: u32,
    /// Copies of sessions forgotten here (`cairn forget`) deleted, at the remote and here.
    pub withdrawn: u32,
    /// Refs under `refs/cairn/sessions/` left out because this archive did not capture their
    /// session (a teammate's document an older Cairn fetched there).
    pub not_own: u32,
    /// Refs the remote refused, each with why and what to do; the rest was pushed.
    pub refused: Vec<SkippedRef>,
}

/// What `pull` did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PullReport {
    pub remote: String,
    /// Documents imported (new or changed).
    pub sessions_imported: u32,
    /// Documents already imported as they are.
    pub unchanged: u32,
    /// Full transcripts (`publish --full`) imported as sessions of this archive.
    #[serde(default)]
    pub transcripts_imported: u32,
    /// Refs not imported, each with why (the first [`MAX_LISTED_SKIPS`]). A ref name is
    /// shown cleaned.
    pub skipped: Vec<SkippedRef>,
    /// Refs skipped beyond those listed.
    pub skipped_more: u32,
    /// Documents of sessions forgotten here (`cairn forget`), left out without a word each.
    pub forgotten: u32,
    /// Documents pulled before that the remote no longer has (their publisher withdrew them,
    /// a forget and a push): dropped here, with the session pulled from one. Nothing keeps them
    /// out: published again, the next pull takes them again.
    #[serde(default)]
    pub withdrawn: u32,
}

/// Skipped refs a pull lists one by one; a remote advertising a million junk refs gets a count.
pub const MAX_LISTED_SKIPS: usize = 100;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SkippedRef {
    #[serde(rename = "ref")]
    pub refname: String,
    pub reason: String,
}

impl PullReport {
    /// List `refname` as not imported, for `reason`.
    pub fn skip(&mut self, refname: &str, reason: impl Into<String>) {
        if self.skipped.len() >= MAX_LISTED_SKIPS {
            self.skipped_more += 1;
            return;
        }
        let refname = crate::text::one_line(refname, 200);
        let reason = reason.into();
        tracing::warn!("{refname}: {reason}; skipped");
        self.skipped.push(SkippedRef { refname, reason });
    }
}

/// Redact every text of a session for leaving the machine.
fn outbound(mut s: DocSession, repo: &Repo, home: Option<&str>) -> Result<DocSession> {
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
        return Err(Error::Refused(format!(
            "refusing to publish session {}: the outbound scan still finds a {} after redaction",
            s.session_key, f.rule
        )));
    }
    Ok(s)
}

/// Publish `sessions` (what skim relates to `target`: this machine's own captures, never a
/// teammate's session pulled here, each with the target keys it is related to) in `repo`.
pub fn publish(
    conn: &Connection,
    repo: &Repo,
    target: &Target,
    sessions: Vec<(DocSession, Vec<String>)>,
    full: Option<Full>,
    dry_run: bool,
    now: &str,
) -> Result<PublishReport> {
    let db = crate::store::err_in(conn);
    let home = dirs::home_dir().map(|h| h.to_string_lossy().into_owned());
    let root = repo.root.to_string_lossy().into_owned();
    let mut documents = Vec::new();
    let mut packed: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for (s, target_keys) in sessions {
        let key = s.session_key.clone();
        if let Some(full) = &full {
            let Some(trajectory) = full.trajectories.get(&key) else {
                return Err(Error::Invalid(format!(
                    "cannot publish session {key} in full: it has no records to publish"
                )));
            };
            let trajectory = transcript::outbound(trajectory.clone(), &root, home.as_deref())
                .map_err(|rule| {
                    Error::Refused(format!(
                        "refusing to publish session {key}: the outbound scan still finds a {rule} in its transcript after redaction"
                    ))
                })?;
            let envelope = transcript::PublishedTranscript {
                schema: transcript::TRANSCRIPT_SCHEMA.to_owned(),
                session_key: key.clone(),
                publisher: full.publisher.clone(),
                published_at: now.to_owned(),
                trajectory,
            };
            if let Err(why) = envelope.check(&key) {
                return Err(Error::Invalid(format!(
                    "cannot publish session {key} in full: {why}"
                )));
            }
            let bytes = transcript::encode(&envelope).map_err(|why| {
                Error::Invalid(format!(
                    "cannot publish session {key} in full: {why}; publish it without --full"
                ))
            })?;
            packed.insert(key.clone(), bytes);
        }
        let doc = PublishedSession::new(outbound(s, repo, home.as_deref())?, target_keys, now);
        // What teammates would refuse is not written.
        let refused = doc.check(&key).err().or_else(|| {
            let bytes = serde_json::to_string_pretty(&doc).map_or(0, |j| j.len()) as u64;
            (bytes > limits::DOCUMENT_BYTES).then(|| {
                format!(
                    "{bytes} bytes, more than the {} a document may have",
                    limits::DOCUMENT_BYTES
                )
            })
        });
        if let Some(why) = refused {
            return Err(Error::Invalid(format!(
                "cannot publish session {key}: {why}"
            )));
        }
        documents.push(doc);
    }
    let report = PublishReport {
        target_key: target.key.clone(),
        dry_run,
        sessions: documents.len() as u32,
        turns: documents.iter().map(|d| d.session.turn_count).sum(),
        related_turns: documents.iter().map(|d| d.session.related_turn_count).sum(),
        documents,
        full: full.is_some(),
        publisher: full.map(|f| f.publisher),
        transcripts: packed.len() as u32,
        transcript_bytes: packed.values().map(|b| b.len() as u64).sum(),
        weak_left_out: 0,
        unplaced_left_out: 0,
        unplaced_redacted: 0,
    };
    if dry_run {
        return Ok(report);
    }
    for doc in &report.documents {
        write_ref(
            repo,
            doc,
            packed.get(&doc.session.session_key).map(Vec::as_slice),
        )?;
        crate::archive::store::mark_published(conn, &doc.session.session_key, now).map_err(db)?;
        super::forget::shared_again(conn, &doc.session.session_key).map_err(db)?;
    }
    Ok(report)
}

/// Write one document (and with `--full` its compressed transcript) as a commit on
/// `refs/cairn/sessions/<key>` (parent: the previous one).
fn write_ref(repo: &Repo, doc: &PublishedSession, transcript: Option<&[u8]>) -> Result<()> {
    let json = serde_json::to_string_pretty(doc).unwrap_or_default();
    let blob = |bytes: &[u8]| git_stdin(&repo.root, &["hash-object", "-w", "--stdin"], bytes);
    let mut entries = format!("100644 blob {}\tsession.json\n", blob(json.as_bytes())?);
    if let Some(bytes) = transcript {
        entries.push_str(&format!(
            "100644 blob {}\t{}\n",
            blob(bytes)?,
            transcript::TRANSCRIPT_FILE
        ));
    }
    let tree = git_stdin(&repo.root, &["mktree"], entries.as_bytes())?;
    let refname = format!("{REF_PREFIX}{}", doc.session.session_key);
    let parent = run_git(&repo.root, &["rev-parse", "-q", "--verify", &refname])
        .ok()
        .map(|s| s.trim().to_owned());
    let mut args = CAIRN_IDENTITY.to_vec();
    args.extend(["commit-tree", tree.as_str(), "-m", "cairn publish"]);
    if let Some(p) = parent.as_deref().filter(|p| !p.is_empty()) {
        args.extend(["-p", p]);
    }
    let commit = run_git(&repo.root, &args)?;
    run_git(&repo.root, &["update-ref", &refname, commit.trim()])?;
    Ok(())
}

/// Who `publish --full` names as the publisher: the repository's git `user.name` and
/// `user.email` (`Name <email>`), else the login name; cleaned and cut to what a teammate's
/// Cairn accepts.
pub fn publisher(repo: &Repo) -> String {
    let get = |key: &str| {
        run_git(&repo.root, &["config", "--get", key])
            .ok()
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let name = match (get("user.name"), get("user.email")) {
        (Some(n), Some(e)) => format!("{n} <{e}>"),
        (Some(n), None) => n,
        (None, Some(e)) => format!("<{e}>"),
        (None, None) => std::env::var("USER").unwrap_or_default(),
    };
    let name = crate::text::one_line(&name, transcript::limits::PUBLISHER_CHARS / 2);
    if transcript::publisher_ok(&name) {
        name
    } else {
        "unknown".to_owned()
    }
}

/// `commit-tree` needs an identity; publishing must not depend on the user having one set.
const CAIRN_IDENTITY: [&str; 4] = ["-c", "user.name=Cairn", "-c", "user.email=cairn@localhost"];

fn git_stdin(dir: &Path, args: &[&str], input: &[u8]) -> Result<String> {
    let out = run_git_raw(dir, args, Some(input.to_vec()))?;
    if !out.status.success() {
        return Err(git_failure(dir, verb(args), &out));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Push this machine's own published refs (`refs/cairn/sessions/<key>` of a session this
/// archive captured) to `remote`, never forced: a teammate's document is never re-sent. The
/// copies of sessions forgotten here since they were published are deleted, here (every ref of
/// theirs under `refs/cairn/`) and at the remote. What the remote refuses is listed in the
/// report, each ref with git's reason; the rest is done.
pub fn push(conn: &Connection, repo: &Repo, remote: &str) -> Result<PushReport> {
    let db = crate::store::err_in(conn);
    let to = super::pull_from::check_push(repo, remote)?;
    let refs = run_git(
        &repo.root,
        &["for-each-ref", "--format=%(refname)", REF_PREFIX],
    )?;
    let mut report = PushReport {
        remote: to.shown.clone(),
        pushed: 0,
        unchanged: 0,
        withdrawn: 0,
        not_own: 0,
        refused: Vec::new(),
    };
    // Forgotten, and not captured again since (a transcript imported anew, under its key: its
    // row goes, and it is this machine's own again).
    let mut forgotten = super::forget::forgotten_shared(conn).map_err(db)?;
    let mut again = Vec::new();
    for (key, own) in &forgotten {
        if *own && crate::archive::store::captured(conn, key).map_err(db)? {
            super::forget::shared_again(conn, key).map_err(db)?;
            again.push(key.clone());
        }
    }
    forgotten.retain(|(key, _)| !again.contains(key));
    let gone: HashSet<String> = forgotten
        .iter()
        .filter(|(_, own)| *own)
        .map(|(key, _)| key.clone())
        .collect();
    let mut refspecs = Vec::new();
    for refname in refs.lines().filter(|l| !l.is_empty()) {
        let key = refname.strip_prefix(REF_PREFIX).unwrap_or_default();
        if gone.contains(key) {
            continue;
        } else if is_key(key) && crate::archive::store::captured(conn, key).map_err(db)? {
            refspecs.push(format!("{refname}:{refname}"));
        } else {
            report.not_own += 1;
        }
    }
    // The remote's copies of forgotten sessions, whether or not this clone still has the ref.
    if !gone.is_empty() {
        let mut args: Vec<&str> = super::pull_from::PROTOCOLS.to_vec();
        let pattern = format!("{REF_PREFIX}*");
        args.extend(["ls-remote", "--refs", "--", to.git_arg.as_str(), &pattern]);
        for line in run_git(&repo.root, &args)?.lines() {
            let Some((_, refname)) = line.split_once('\t') else {
                continue;
            };
            if gone.contains(refname.strip_prefix(REF_PREFIX).unwrap_or_default()) {
                refspecs.push(format!(":{refname}"));
            }
        }
    }
    // The forgotten sessions whose copies went, at the remote or here.
    let mut withdrawn: HashSet<String> = HashSet::new();
    // Bounded command lines: a long-lived archive can have published thousands.
    // The place after `--`: whatever it is, git never reads it as an option; and only the
    // transports a pull may use (a configured remote's URL is checked, not only the argument).
    for chunk in refspecs.chunks(500) {
        let mut args: Vec<&str> = super::pull_from::PROTOCOLS.to_vec();
        args.extend(["push", "--porcelain", "--", to.git_arg.as_str()]);
        args.extend(chunk.iter().map(String::as_str));
        let out = run_git_raw(&repo.root, &args, None)?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let statuses = pushed_refs(&stdout);
        if statuses.is_empty() && !out.status.success() {
            return Err(git_failure(&repo.root, "push", &out));
        }
        for (flag, deletion, refname, summary) in statuses {
            match flag {
                '*' | ' ' | '+' => report.pushed += 1,
                '=' => report.unchanged += 1,
                '-' => {
                    withdrawn.insert(
                        refname
                            .strip_prefix(REF_PREFIX)
                            .unwrap_or(refname)
                            .to_owned(),
                    );
                }
                _ => report
                    .refused
                    .push(refused(&to.shown, refname, deletion, summary)),
            }
        }
    }
    // Whatever the remote did, this clone keeps no copy of a forgotten session.
    withdrawn.extend(drop_forgotten_refs(repo, &forgotten, true)?);
    report.withdrawn = withdrawn.len() as u32;
    Ok(report)
}

/// A ref the remote `shown` refused (`!` in `git push --porcelain`), with git's reason and what
/// to do about it.
fn refused(shown: &str, refname: &str, deletion: bool, summary: &str) -> SkippedRef {
    let why = summary.replace(['[', ']'], "");
    let why = crate::text::one_line(&why, 200);
    let reason = if deletion {
        format!("{why}: the copy of a session forgotten here stays at {shown}; ask who keeps it")
    } else if why.contains("non-fast-forward") || why.contains("fetch first") {
        format!(
            "{why}: someone else moved it on there since your last push; `git push --force {shown} {refname}` puts your copy back"
        )
    } else {
        format!("{why}: the remote's own rules refused it; ask who keeps it")
    };
    SkippedRef {
        refname: crate::text::one_line(refname, 200),
        reason,
    }
}

/// Delete the refs under `refs/cairn/` of each session in `forgotten`: the copies pulls fetched
/// from each remote, and with `published` this machine's own published refs too (a push's
/// work: it withdraws them at the remote in the same go). Returns the keys whose refs went.
fn drop_forgotten_refs(
    repo: &Repo,
    forgotten: &[(String, bool)],
    published: bool,
) -> Result<Vec<String>> {
    let mut dropped = Vec::new();
    if forgotten.is_empty() {
        return Ok(dropped);
    }
    let refs = run_git(
        &repo.root,
        &["for-each-ref", "--format=%(refname)", "refs/cairn/"],
    )?;
    for refname in refs.lines() {
        let Some((prefix, key)) = refname.rsplit_once('/') else {
            continue;
        };
        let own = refname.starts_with(REF_PREFIX);
        if prefix.ends_with("/sessions")
            && (published || !own)
            && is_key(key)
            && super::forget::document_forgotten(forgotten, key)
        {
            run_git(&repo.root, &["update-ref", "-d", refname])?;
            dropped.push(key.to_owned());
        }
    }
    Ok(dropped)
}

/// The ref lines of `git push --porcelain`'s output: each ref's flag (`*` new, ` ` moved on,
/// `+` forced, `-` deleted, `=` as it was, `!` refused), whether it was a deletion (nothing on
/// the left of its `from:to`), its name at the remote, and git's summary.
fn pushed_refs(out: &str) -> Vec<(char, bool, &str, &str)> {
    out.lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, '\t');
            let flag = parts.next()?;
            let refs = parts.next()?;
            let summary = parts.next().unwrap_or("");
            let mut chars = flag.chars();
            let flag = chars.next().filter(|_| chars.next().is_none())?;
            let (from, to) = refs.split_once(':')?;
            Some((flag, from.is_empty(), to, summary))
        })
        .collect()
}

/// Fetch the published documents of `remote` (a configured remote, a URL or a path: see
/// [`super::pull_from`]) into `refs/cairn/remotes/<remote>/sessions/` (for a URL or a path,
/// `refs/cairn/fetched/<hash>/sessions/`) and import each new or changed one that passes the
/// checks. The report names the remote as the archive records it (a URL without credentials).
///
/// Returns the report, the checked full transcripts (`publish --full`) of the documents
/// imported, and the keys of documents the remote withdrew (dropped here: the caller removes
/// the sessions pulled from them). The caller captures the transcripts ([`crate::archive`]
/// owns the sessions) and then marks each done with [`transcript_done`]: until then the
/// document's import is pending, so a pull killed between the two completes on the next one.
pub fn pull(
    conn: &Connection,
    repo: &Repo,
    remote: &str,
    now: &str,
) -> Result<(PullReport, Vec<PendingTranscript>, Vec<String>)> {
    let db = crate::store::err_in(conn);
    let from = super::pull_from::check(repo, remote)?;
    let remote = from.shown.as_str();
    let mut report = PullReport {
        remote: remote.to_owned(),
        sessions_imported: 0,
        unchanged: 0,
        transcripts_imported: 0,
        skipped: Vec::new(),
        skipped_more: 0,
        forgotten: 0,
        withdrawn: 0,
    };
    let common_dir = repo.common_dir.to_string_lossy().into_owned();
    let local_prefix = from.ref_prefix.as_str();
    // Every command that reaches the remote runs with the transport allowlist.
    let reach = |args: &[&'static str]| -> Vec<&str> {
        let mut all: Vec<&str> = super::pull_from::PROTOCOLS.to_vec();
        all.extend(args);
        all.push(from.git_arg.as_str());
        all
    };

    // What the remote has: only refs named by a session key are read at all.
    let mut ls_remote = reach(&["ls-remote", "--refs"]);
    let pattern = format!("{REF_PREFIX}*");
    ls_remote.push(&pattern);
    let advertised = run_git(&repo.root, &ls_remote)?;
    let mut wanted: BTreeMap<String, String> = BTreeMap::new();
    for line in advertised.lines() {
        let Some((oid, refname)) = line.split_once('\t') else {
            continue;
        };
        match refname.strip_prefix(REF_PREFIX) {
            Some(key) if is_key(key) && is_oid(oid) => {
                wanted.insert(key.to_owned(), oid.to_owned());
            }
            _ => report.skip(
                refname,
                "not a Cairn session ref (its name is not a session key)",
            ),
        }
    }

    // Already imported as they are: nothing to do.
    let imported: BTreeMap<String, String> = conn
        .prepare_cached(
            "SELECT session_key, ref_commit FROM published_sessions WHERE common_dir = ?1 AND remote = ?2",
        )
        .map_err(db)?
        .query_map(params![common_dir, remote], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(db)?
        .collect::<rusqlite::Result<_>>()
        .map_err(db)?;
    // Pulled from this remote before and gone from it now: its publisher withdrew it.
    let withdrawn: Vec<String> = imported
        .keys()
        .filter(|k| !wanted.contains_key(*k))
        .cloned()
        .collect();
    if !withdrawn.is_empty() {
        let fetched = local_refs(repo, local_prefix)?;
        for key in &withdrawn {
            conn.prepare_cached(
                "DELETE FROM published_sessions WHERE common_dir = ?1 AND remote = ?2 AND session_key = ?3",
            )
            .and_then(|mut s| s.execute(params![common_dir, remote, key]))
            .map_err(db)?;
            if fetched.contains_key(key) {
                run_git(
                    &repo.root,
                    &["update-ref", "-d", &format!("{local_prefix}{key}")],
                )?;
            }
        }
        report.withdrawn = u32::try_from(withdrawn.len()).unwrap_or(u32::MAX);
    }
    wanted.retain(|key, oid| {
        let same = imported.get(key) == Some(oid);
        report.unchanged += u32::from(same);
        !same
    });
    // A session forgotten here stays forgotten, whoever still publishes it, and no copy of it
    // stays fetched here.
    let forgotten = super::forget::forgotten_shared(conn).map_err(db)?;
    wanted.retain(|key, _| {
        let gone = super::forget::document_forgotten(&forgotten, key);
        report.forgotten += u32::from(gone);
        !gone
    });
    drop_forgotten_refs(repo, &forgotten, false)?;
    let local_oids = local_refs(repo, local_prefix)?;
    if wanted.len() > limits::DOCUMENTS_PER_PULL {
        // Refs fetched before at this commit and still not imported were refused (or their
        // pull was cut short): the ones this machine has not seen go first, so refs that are
        // refused every time can never hold back a teammate's new work.
        let (fresh, seen): (Vec<_>, Vec<_>) = std::mem::take(&mut wanted)
            .into_iter()
            .partition(|(k, oid)| local_oids.get(k) != Some(oid));
        let left = fresh.len().saturating_sub(limits::DOCUMENTS_PER_PULL);
        wanted = fresh
            .into_iter()
            .chain(seen)
            .take(limits::DOCUMENTS_PER_PULL)
            .collect();
        if left > 0 {
            report.skip(
                &format!("{REF_PREFIX}*"),
                format!(
                    "{left} more new or changed documents than the {} one pull imports: pull again for the rest",
                    limits::DOCUMENTS_PER_PULL
                ),
            );
        }
    }
    if wanted.is_empty() {
        return Ok((report, Vec::new(), withdrawn));
    }

    // Fetch without force into the remote's own namespace; `--refmap=` keeps configured fetch
    // refspecs (say a `+refs/cairn/*:refs/cairn/*` someone added) from updating anything else.
    let refspecs: String = wanted
        .keys()
        .filter(|k| local_oids.get(*k) != wanted.get(*k))
        .map(|k| format!("{REF_PREFIX}{k}:{local_prefix}{k}\n"))
        .collect();
    if !refspecs.is_empty() {
        let out = run_git_raw(
            &repo.root,
            &reach(&[
                "fetch",
                "--no-tags",
                "--no-write-fetch-head",
                "--no-recurse-submodules",
                "--refmap=",
                "--stdin",
            ]),
            Some(refspecs.into_bytes()),
        )?;
        // A fetch refusing a rewritten ref (`! [rejected] … (non-fast-forward)`; git runs
        // with LC_ALL=C) still updates the others: that is reported per ref below. Any other
        // failure is the pull's.
        if !out.status.success() && !String::from_utf8_lossy(&out.stderr).contains("[rejected]") {
            return Err(git_failure(&repo.root, "fetch", &out));
        }
        let after = local_refs(repo, local_prefix)?;
        for (key, oid) in &wanted {
            if after.get(key) != Some(oid) {
                report.skip(
                    &format!("{REF_PREFIX}{key}"),
                    format!(
                        "not updated: the remote's ref is not a fast-forward of {local_prefix}{key} (rewritten history is never forced; delete that ref to accept it)"
                    ),
                );
            }
        }
        wanted.retain(|k, oid| after.get(k) == Some(oid));
    }
    let transcripts = import(conn, repo, remote, &common_dir, &wanted, now, &mut report)?;
    let transcripts = transcripts
        .into_iter()
        .filter_map(|t| {
            Some(PendingTranscript {
                ref_commit: wanted.get(&t.session_key)?.clone(),
                common_dir: common_dir.clone(),
                remote: remote.to_owned(),
                transcript: t,
            })
        })
        .collect();
    Ok((report, transcripts, withdrawn))
}

/// `published_sessions.ref_commit` of a document whose transcript is still to be captured: a
/// commit no ref has, so the next pull takes the ref again.
const PENDING: &str = "";

/// A teammate's checked transcript a pull stored the document of, still to be captured.
#[derive(Debug, Clone)]
pub struct PendingTranscript {
    pub transcript: transcript::PublishedTranscript,
    common_dir: String,
    remote: String,
    ref_commit: String,
}

/// Mark the import of `p`'s document done, its transcript captured or refused: the next pull
/// leaves the ref alone until it changes.
pub fn transcript_done(conn: &Connection, p: &PendingTranscript) -> rusqlite::Result<()> {
    set_imported(
        conn,
        &p.common_dir,
        &p.remote,
        &p.transcript.session_key,
        &p.ref_commit,
    )
}

fn set_imported(
    conn: &Connection,
    common_dir: &str,
    remote: &str,
    key: &str,
    commit: &str,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "UPDATE published_sessions SET ref_commit = ?4 WHERE common_dir = ?1 AND remote = ?2 AND session_key = ?3",
    )?
    .execute(params![common_dir, remote, key, commit])?;
    Ok(())
}

/// Whether a teammate's full transcript may become a session of this archive. Never one
/// claiming a session this archive captured (a teammate's text never takes the place of your
/// own), nor your own `cairn import` of it, nor one already pulled that now names another
/// publisher (someone else re-publishing a teammate's session). Returns the file name to store
/// it under and who published it, or why not.
pub fn admit(
    conn: &Connection,
    t: &transcript::PublishedTranscript,
    remote: &str,
) -> rusqlite::Result<std::result::Result<(String, PublishedBy), String>> {
    if crate::archive::store::captured(conn, &t.session_key)? {
        return Ok(Err(format!(
            "it is of session {}, which this archive captured itself (your own publication, or another's claim to it): the session captured here stays the one shown",
            t.session_key
        )));
    }
    let local = crate::keys::session_key(crate::archive::Agent::Atif, t.session_key.as_bytes());
    Ok(match crate::archive::store::session_origin(conn, &local)? {
        Some(None) => Err(format!(
            "its session is already in this archive as {local}, imported by you (`cairn import`)"
        )),
        Some(Some(by)) if by.publisher != t.publisher => Err(format!(
            "session {local} was published by {}; a transcript naming another publisher for it is refused (`cairn forget {local} --allow-reimport` first to accept it)",
            crate::text::one_line(&by.publisher, 100)
        )),
        _ => Ok((
            format!("{local}.atif.json"),
            PublishedBy {
                publisher: t.publisher.clone(),
                published_at: Some(t.published_at.clone()),
                pulled_from: remote.to_owned(),
            },
        )),
    })
}

/// Whether any remote of any repository still holds the document of session `key` as pulled
/// here.
pub fn pulled_anywhere(conn: &Connection, key: &str) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM published_sessions WHERE session_key = ?1)")?
        .query_row([key], |r| r.get(0))
}

/// A rebuild from the copies (`cairn reindex --from-copies`): the teammates' documents `old`
/// (read-only, maybe damaged) imported, carried into the rebuilt `new` row by row. They are
/// keyed by repository, remote and the publisher's session key, none of which a rebuild
/// changes; skim shows them again without a pull. Never fails.
pub fn carry_from(old: &Connection, new: &Connection) -> crate::archive::rebuild::Carried {
    crate::archive::rebuild::Carried::of(
        "teammates' sessions pulled through git (cairn pull)",
        crate::archive::rebuild::copy_each(
            old,
            "SELECT common_dir, remote, session_key, document, target_keys, ref_commit, imported_at
             FROM published_sessions",
            new,
            "INSERT OR IGNORE INTO published_sessions (common_dir, remote, session_key, document,
                 target_keys, ref_commit, imported_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        ),
    )
}

/// Why a document's full transcript was not imported, as a pull lists it: its summary was (it
/// is counted among the documents imported, and skim shows it).
pub fn transcript_refused(why: &str) -> String {
    format!("summary imported, full transcript not: {why}")
}

/// A full object id (SHA-1 or SHA-256).
fn is_oid(s: &str) -> bool {
    matches!(s.len(), 40 | 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The refs under `prefix` by session key, with their commits.
fn local_refs(repo: &Repo, prefix: &str) -> Result<BTreeMap<String, String>> {
    let out = run_git(
        &repo.root,
        &["for-each-ref", "--format=%(objectname) %(refname)", prefix],
    )?;
    Ok(out
        .lines()
        .filter_map(|l| l.split_once(' '))
        .filter_map(|(oid, r)| Some((r.strip_prefix(prefix)?.to_owned(), oid.to_owned())))
        .collect())
}

/// The blobs named `file` in the commits of `wanted` (session key → commit), within the size
/// limits: each at most `max` bytes, all of them together (with `total`, what this pull already
/// read) at most [`limits::PULL_BYTES`]. Sizes come first (`cat-file --batch-check`), so an
/// oversized blob is never read. A commit without the file is skipped as `missing` says, or
/// left out silently when `missing` is `None` (the file is optional). Also returns the keys left
/// for the next pull because this one's byte budget ran out.
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn read_blobs<'k>(
    repo: &Repo,
    wanted: impl Iterator<Item = (&'k str, &'k str)>,
    file: &str,
    max: u64,
    missing: Option<&str>,
    total: &mut u64,
    report: &mut PullReport,
) -> Result<(Vec<(&'k str, Vec<u8>)>, Vec<&'k str>)> {
    let refname = |key: &str| format!("{REF_PREFIX}{key}");
    // A transcript is read after its document was stored: the summary is in either way.
    let refused = |why: String| {
        if file == transcript::TRANSCRIPT_FILE {
            transcript_refused(&why)
        } else {
            why
        }
    };
    let wanted: Vec<(&str, &str)> = wanted.collect();
    let mut deferred = Vec::new();
    let specs: String = wanted
        .iter()
        .map(|(_, oid)| format!("{oid}:{file}\n"))
        .collect();
    let sizes = run_git_raw(
        &repo.root,
        &[
            "cat-file",
            "--batch-check=%(objectname) %(objecttype) %(objectsize)",
        ],
        Some(specs.into_bytes()),
    )?;
    if !sizes.status.success() {
        return Err(git_failure(&repo.root, "cat-file", &sizes));
    }
    let sizes = String::from_utf8_lossy(&sizes.stdout).into_owned();
    let mut blobs: Vec<(&str, String)> = Vec::new();
    for ((key, _), line) in wanted.iter().zip(sizes.lines()) {
        let mut parts = line.split(' ');
        let (Some(blob), Some(kind), Some(size)) = (parts.next(), parts.next(), parts.next())
        else {
            if let Some(why) = missing {
                report.skip(&refname(key), why);
            }
            continue;
        };
        let size: u64 = size.parse().unwrap_or(u64::MAX);
        if kind != "blob" {
            report.skip(&refname(key), refused(format!("its {file} is not a file")));
        } else if size > max {
            report.skip(
                &refname(key),
                refused(format!(
                    "{file} has {size} bytes, more than the {max} a document may have"
                )),
            );
        } else if *total + size > limits::PULL_BYTES {
            deferred.push(*key);
            report.skip(
                &refname(key),
                format!(
                    "the documents of this pull pass {} bytes: pull again for the rest",
                    limits::PULL_BYTES
                ),
            );
        } else {
            *total += size;
            blobs.push((key, blob.to_owned()));
        }
    }
    if blobs.is_empty() {
        return Ok((Vec::new(), deferred));
    }
    let input: String = blobs.iter().map(|(_, b)| format!("{b}\n")).collect();
    let out = run_git_raw(
        &repo.root,
        &["cat-file", "--batch"],
        Some(input.into_bytes()),
    )?;
    if !out.status.success() {
        return Err(git_failure(&repo.root, "cat-file", &out));
    }
    let contents = batch_contents(&out.stdout);
    let mut read = Vec::new();
    for ((key, _), bytes) in blobs.into_iter().zip(contents) {
        match bytes {
            Some(bytes) => read.push((key, bytes.to_vec())),
            None => report.skip(
                &refname(key),
                refused(format!("its {file} could not be read")),
            ),
        }
    }
    Ok((read, deferred))
}

/// Read, check and store the documents of `wanted` (session key → fetched commit); then read
/// and check the full transcripts (`publish --full`) of those stored, for the caller to capture.
fn import(
    conn: &Connection,
    repo: &Repo,
    remote: &str,
    common_dir: &str,
    wanted: &BTreeMap<String, String>,
    now: &str,
    report: &mut PullReport,
) -> Result<Vec<transcript::PublishedTranscript>> {
    let db = crate::store::err_in(conn);
    let refname = |key: &str| format!("{REF_PREFIX}{key}");
    let mut total = 0u64;
    // A document left for the next pull is not stored: that pull reads it.
    let (blobs, _) = read_blobs(
        repo,
        wanted.iter().map(|(k, o)| (k.as_str(), o.as_str())),
        "session.json",
        limits::DOCUMENT_BYTES,
        Some("no session.json in its commit"),
        &mut total,
        report,
    )?;
    if blobs.is_empty() {
        return Ok(Vec::new());
    }
    let mut stored: Vec<&str> = Vec::new();
    let tx = conn.unchecked_transaction().map_err(db)?;
    for (key, bytes) in &blobs {
        let doc = match super::document::read(bytes, key) {
            Ok(doc) => doc,
            Err(why) => {
                report.skip(&refname(key), why);
                continue;
            }
        };
        let document = serde_json::to_string(&doc).unwrap_or_default();
        // The same document still pending (its transcript's capture failed, or waited for the
        // byte budget) was counted by the pull that stored it: taking it again imports nothing.
        let retried = tx
            .prepare_cached(
                "SELECT 1 FROM published_sessions WHERE common_dir = ?1 AND remote = ?2
                     AND session_key = ?3 AND ref_commit = ?4 AND document = ?5",
            )
            .map_err(db)?
            .exists(params![common_dir, remote, key, PENDING, document])
            .map_err(db)?;
        tx.prepare_cached(
            "INSERT INTO published_sessions (common_dir, remote, session_key, document, target_keys, ref_commit, imported_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT (common_dir, remote, session_key) DO UPDATE SET document = excluded.document,
                target_keys = excluded.target_keys, ref_commit = excluded.ref_commit, imported_at = excluded.imported_at",
        )
        .map_err(db)?
        .execute(params![
            common_dir,
            remote,
            key,
            document,
            serde_json::to_string(&doc.target_keys).unwrap_or_default(),
            PENDING,
            now
        ])
        .map_err(db)?;
        report.sessions_imported += u32::from(!retried);
        stored.push(key);
    }
    tx.commit().map_err(db)?;

    // The full transcripts of the documents just stored; a document without one was published
    // without --full.
    let (full, deferred) = read_blobs(
        repo,
        stored
            .iter()
            .filter_map(|k| Some((*k, wanted.get(*k)?.as_str()))),
        transcript::TRANSCRIPT_FILE,
        transcript::limits::COMPRESSED_BYTES,
        None,
        &mut total,
        report,
    )?;
    let mut transcripts = Vec::new();
    for (key, bytes) in full {
        match transcript::decode(&bytes, key) {
            Ok(t) => transcripts.push(t),
            Err(why) => report.skip(&refname(key), transcript_refused(&why)),
        }
    }
    // The documents with no transcript to capture (none, or refused) are done now; those whose
    // transcript waits for the next pull stay pending; the others are done once the caller
    // captured theirs.
    let tx = conn.unchecked_transaction().map_err(db)?;
    for key in stored
        .iter()
        .filter(|k| !deferred.contains(*k) && !transcripts.iter().any(|t| t.session_key == **k))
    {
        let commit = wanted.get(*key).map(String::as_str).unwrap_or(PENDING);
        set_imported(&tx, common_dir, remote, key, commit).map_err(db)?;
    }
    tx.commit().map_err(db)?;
    Ok(transcripts)
}

/// The objects of a `git cat-file --batch` answer, in order (`None` for one git could not
/// give: `<name> missing`).
fn batch_contents(mut out: &[u8]) -> Vec<Option<&[u8]>> {
    let mut objects = Vec::new();
    while let Some(end) = out.iter().position(|&b| b == b'\n') {
        let header = String::from_utf8_lossy(&out[..end]).into_owned();
        out = &out[end + 1..];
        let size = header
            .rsplit(' ')
            .next()
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|_| header.split(' ').count() == 3);
        match size {
            Some(size) if size < out.len() => {
                objects.push(Some(&out[..size]));
                out = &out[size + 1..];
            }
            _ => objects.push(None),
        }
    }
    objects
}

/// Sessions teammates published in the repository whose git common dir is `common_dir`,
/// related to any of `keys`, that this machine never captured, each with the remote it was
/// pulled from. Each stored document is read through the checks again, so nothing an older
/// Cairn stored unchecked can show.
pub fn published_for(
    conn: &Connection,
    keys: &[String],
    common_dir: &str,
) -> rusqlite::Result<Vec<(PublishedSession, String)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT p.session_key, p.remote, p.document, p.target_keys FROM published_sessions p
         WHERE p.common_dir = ?1
         ORDER BY p.imported_at DESC, p.remote",
    )?;
    let rows = stmt.query_map([common_dir], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
        ))
    })?;
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for row in rows {
        let (key, remote, doc, targets) = row?;
        let targets: Vec<String> = serde_json::from_str(&targets).unwrap_or_default();
        if !targets.iter().any(|t| keys.contains(t)) || seen.contains(&key) {
            continue;
        }
        // A session this archive captured shows from the archive, not its published copy.
        if crate::archive::store::captured(conn, &key)? {
            continue;
        }
        // Two remotes may carry the same session: the latest import shows.
        if let Ok(doc) = super::document::read(doc.as_bytes(), &key) {
            seen.insert(key);
            out.push((doc, remote));
        }
    }
    Ok(out)
}
