//! The review inbox: the only way an automatic entry becomes trusted.
//!
//! * accept → `human_reviewed`, transferable, stale cleared (a person vouched for it now);
//! * unaccept → an accept taken back (the window's Undo, nothing else): the review state it
//!   had before, no longer transferable, any edit kept; a replacement whose supersession the
//!   rules no longer allow (it replaced a reviewed entry) hands service back as a rejected one
//!   does, and accepting it again replaces that entry again;
//! * edit (title, body, trigger, type, scope) then accept;
//! * reject → `archived`; a rejected replacement that was served hands service back to the
//!   entry it replaced (as that one was, its evidence checked again), and taking the rejection
//!   back lets it replace that entry again. A rejected link inside a chain (replaced itself)
//!   leaves it: the entry that replaced it now replaces the one it had replaced, so one entry
//!   per chain is served, and a later rejection of the leaf hands service to that one;
//! * supersede an older entry with a newer one (single-leaf chains, one transaction);
//! * merge a duplicate into a kept entry: its evidence joins the kept entry, it is archived as
//!   superseded by it, and nobody's trust changes.
//!
//! The queue lists accepted entries that are unreviewed, stale, or whose provenance was revoked.

use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};

use super::model::{Entry, EntryType, ReviewState, Scope, Status};
use super::store::{self, ENTRY_COLUMNS, complete, entry_from_row};
use crate::error::{Error, Result};

/// One change a review made, as `cairn recall review --json` reports it (`action` names it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum ReviewChange {
    /// Entries whose cited files changed, flagged stale: `flagged` in all, of which
    /// `trusted_returned` were trusted and are back in the inbox (no longer served), and
    /// `untrusted_marked` were waiting for review already ([`super::stale::Flagged`]).
    CheckStale {
        flagged: u32,
        trusted_returned: u32,
        untrusted_marked: u32,
    },
    Accept {
        id: String,
        review_state: ReviewState,
        trusted: bool,
    },
    Edit {
        id: String,
        review_state: ReviewState,
        trusted: bool,
    },
    Reject {
        id: String,
        status: Status,
        /// The entry the rejected one had replaced, served again in its place.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reinstated: Option<String>,
    },
    /// A rejection taken back: the entry is where it was before.
    Restore {
        id: String,
        status: Status,
        trusted: bool,
        /// The entry it replaces again (it had replaced it before it was rejected).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replaces: Option<String>,
    },
    /// An accept taken back: the entry waits in the inbox again, in `review_state`.
    Unaccept {
        id: String,
        review_state: ReviewState,
        /// The entry it had replaced, served again in its place (a reviewed entry is replaced
        /// only by a reviewed one).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reinstated: Option<String>,
    },
    Supersede {
        old: String,
        new: String,
    },
    /// `duplicate` folded into `kept` (its evidence added, itself archived).
    Merge {
        duplicate: String,
        kept: String,
    },
}

impl ReviewChange {
    /// A staleness check that flagged `f`.
    pub fn checked(f: super::stale::Flagged) -> ReviewChange {
        ReviewChange::CheckStale {
            flagged: f.total(),
            trusted_returned: f.trusted,
            untrusted_marked: f.untrusted,
        }
    }

    /// An accept (or, with `edited`, an edit) of `e`.
    pub fn accepted(e: &Entry, edited: bool) -> ReviewChange {
        let (id, review_state, trusted) = (e.id.clone(), e.review_state, e.is_trusted());
        if edited {
            ReviewChange::Edit {
                id,
                review_state,
                trusted,
            }
        } else {
            ReviewChange::Accept {
                id,
                review_state,
                trusted,
            }
        }
    }
}

/// An edit a reviewer makes before accepting. Absent fields are left as they are.
///
/// A field it does not know is refused, not ignored: the scope names no place of its own (a
/// branch scope is the entry's own branch, a project scope its own repository), so an edit
/// naming one (`"branch": "feat/x"`) would otherwise be applied as something it did not ask for,
/// as the CLI refuses a flag `--edit` does not take.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct Edit {
    pub title: Option<String>,
    pub body: Option<String>,
    pub trigger: Option<String>,
    #[serde(rename = "type")]
    pub entry_type: Option<EntryType>,
    pub scope: Option<Scope>,
}

/// Why an entry is in the inbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum InboxReason {
    Unreviewed,
    Stale,
    ProvenanceRevoked,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct InboxItem {
    pub reason: InboxReason,
    pub entry: Entry,
    /// Where the entry came from when an agent proposed it (through `cairn mcp`).
    #[serde(default)]
    pub proposed_by: Option<super::agents::ProposedBy>,
}

/// The entries in the review inbox (what [`reason_of`] says is there), as SQL over `e`.
const IN_INBOX: &str =
    "e.status = 'accepted' AND (e.review_state != 'human_reviewed' OR e.stale = 1 OR
               (e.provenance_ok = 0 AND e.review_state = 'human_reviewed'))";

/// The review queue, newest first.
pub fn queue(conn: &Connection, limit: u32) -> Result<Vec<InboxItem>> {
    let db = crate::store::err_in(conn);
    let sql = format!(
        "SELECT {ENTRY_COLUMNS} FROM recall_entries e WHERE {IN_INBOX}
         ORDER BY e.stale DESC, e.updated_at DESC, e.id LIMIT ?1"
    );
    let mut stmt = conn.prepare_cached(&sql).map_err(db)?;
    let rows = stmt.query_map([limit], entry_from_row).map_err(db)?;
    let mut out = Vec::new();
    for row in rows.collect::<rusqlite::Result<Vec<_>>>().map_err(db)? {
        let (entry, _) = complete(conn, row).map_err(db)?;
        let Some(reason) = reason_of(&entry) else {
            continue;
        };
        let proposed_by = super::agents::proposed_by(conn, &entry.id)?;
        out.push(InboxItem {
            reason,
            entry,
            proposed_by,
        });
    }
    Ok(out)
}

/// How many entries the review inbox holds ([`queue`] shows at most its limit of them).
pub fn queue_len(conn: &Connection) -> Result<u64> {
    let db = crate::store::err_in(conn);
    conn.prepare_cached(&format!(
        "SELECT COUNT(*) FROM recall_entries e WHERE {IN_INBOX}"
    ))
    .and_then(|mut stmt| stmt.query_row([], |r| r.get::<_, i64>(0)))
    .map(|n| u64::try_from(n).unwrap_or(0))
    .map_err(db)
}

/// Why `entry` is in the inbox; `None` when it is not (archived, or reviewed and sound).
pub fn reason_of(entry: &Entry) -> Option<InboxReason> {
    if entry.status != Status::Accepted {
        None
    } else if entry.stale {
        Some(InboxReason::Stale)
    } else if entry.review_state != ReviewState::HumanReviewed {
        Some(InboxReason::Unreviewed)
    } else if !entry.provenance_ok {
        Some(InboxReason::ProvenanceRevoked)
    } else {
        None
    }
}

fn load(conn: &Connection, id: &str) -> Result<Entry> {
    let db = crate::store::err_in(conn);
    store::get(conn, id).map_err(db)?.ok_or_else(|| {
        Error::NotFound(format!(
            "recall entry {id:?}; list the inbox with `cairn recall review`"
        ))
    })
}

/// Accept an entry, optionally editing it first. A rejected entry (archived, replaced by none)
/// is taken back by accepting it: a mis-click is undone, and a replacement taken back so
/// replaces again the entry it had replaced ([`resupersede`]). A superseded or merged one is
/// not while what replaced it is served: that is the one to review. One whose replacement is
/// no longer served (rejected before rejections handed service back, retired, gone) is taken
/// back like a rejected one.
pub fn accept(conn: &Connection, id: &str, edit: Option<&Edit>, now: &str) -> Result<Entry> {
    let db = crate::store::err_in(conn);
    let mut entry = load(conn, id)?;
    if entry.status != Status::Accepted {
        if !entry.superseded_by_entry_id.is_empty() && !replacement_gone(conn, &entry)? {
            return Err(replaced(conn, &entry)?);
        }
        // Taken back only on evidence that still holds, as if its provenance were revoked:
        // whatever happened to its sessions while it was archived.
        reverify(conn, &entry)?;
        conn.prepare_cached(
            "UPDATE recall_entries SET status = 'accepted', rejected_at = NULL, superseded_by_entry_id = '',
                updated_at = ?2 WHERE id = ?1",
        )
        .map_err(db)?
        .execute(params![id, now])
        .map_err(db)?;
        entry = load(conn, id)?;
    } else if !entry.provenance_ok {
        reverify(conn, &entry)?;
    }
    if let Some(edit) = edit {
        apply_edit(conn, &entry, edit, now)?;
    }
    conn.prepare_cached(
        "UPDATE recall_entries SET review_state = 'human_reviewed', transferable = 1, stale = 0, stale_note = NULL,
            provenance_ok = 1, provenance_note = NULL, reviewed_at = ?2, updated_at = ?2 WHERE id = ?1",
    )
    .map_err(db)?
    .execute(params![id, now])
    .map_err(db)?;
    resupersede(conn, id, now)?;
    load(conn, id)
}

/// The refusal to review an entry another one replaces while that one is served. One rejected
/// out of its chain ([`splice_out`]) is no longer what the replacement hands back to.
fn replaced(conn: &Connection, entry: &Entry) -> Result<Error> {
    let db = crate::store::err_in(conn);
    let (id, by) = (&entry.id, &entry.superseded_by_entry_id);
    let in_chain = store::get(conn, by)
        .map_err(db)?
        .is_some_and(|r| r.supersedes_entry_id == *id);
    Ok(Error::Conflict(if in_chain {
        format!(
            "recall entry {id} was replaced by {by}, which is served in its place: review that one \
             (`cairn recall review --show {by}`); rejecting {by} hands its place back to {id}"
        )
    } else {
        format!(
            "recall entry {id} was replaced by {by}, which is served in its place, and left that \
             chain when it was rejected: review {by} (`cairn recall review --show {by}`); {id} can \
             be taken back once {by} is no longer served"
        )
    }))
}

/// Whether the entry that replaced `old` no longer serves in its place: it is gone, or archived
/// without a replacement of its own (rejected, or its extraction retired). A chain whose newer
/// link was itself replaced still serves through that link.
fn replacement_gone(conn: &Connection, old: &Entry) -> Result<bool> {
    let db = crate::store::err_in(conn);
    if old.superseded_by_entry_id.is_empty() {
        return Ok(false);
    }
    Ok(
        match store::get(conn, &old.superseded_by_entry_id).map_err(db)? {
            None => true,
            Some(r) => r.status == Status::Archived && r.superseded_by_entry_id.is_empty(),
        },
    )
}

fn rejected_at(conn: &Connection, id: &str) -> Result<Option<String>> {
    let db = crate::store::err_in(conn);
    conn.prepare_cached("SELECT rejected_at FROM recall_entries WHERE id = ?1")
        .and_then(|mut s| s.query_row([id], |r| r.get(0)))
        .map_err(db)
}

/// An entry a person trusted is trusted again only on evidence that still holds: whatever
/// happened to its sessions while it was archived (no check looks at archived entries) is
/// checked now, and a range gone or changed revokes its provenance with `note` (it waits in the
/// inbox, where an accept checks again).
fn recheck_provenance(conn: &Connection, entry: &Entry, note: &str) -> Result<()> {
    let db = crate::store::err_in(conn);
    if entry.review_state != ReviewState::HumanReviewed || !entry.provenance_ok {
        return Ok(());
    }
    let cited = super::evidence::check_entry(conn, &entry.id)?;
    if cited.is_empty() || cited.iter().any(|s| s.changed.is_some()) {
        conn.prepare_cached(
            "UPDATE recall_entries SET provenance_ok = 0, provenance_note = ?2 WHERE id = ?1",
        )
        .map_err(db)?
        .execute(params![entry.id, note])
        .map_err(db)?;
    }
    Ok(())
}

/// A replacement left service (rejected, its accept taken back, or its evidence forgotten): the
/// entry it replaced serves again in its place, as it was before it was replaced (its review
/// state kept, its evidence checked again). Returns that entry when it serves again.
///
/// `replacement` is the entry as it was before it left: only the one served (accepted, replaced
/// by none: a chain's leaf) hands anything back. A link inside a chain hands nothing back: the
/// newer entry still serves (a rejection splices it out instead, [`splice_out`]).
///
/// The replacement keeps its `supersedes_entry_id`, so taking its rejection back replaces the
/// entry again ([`resupersede`]). An older entry a person rejected meanwhile stays rejected: only
/// the link goes, so `--restore` can take that rejection back.
pub fn hand_back(conn: &Connection, replacement: &Entry, now: &str) -> Result<Option<Entry>> {
    let db = crate::store::err_in(conn);
    let served =
        replacement.status == Status::Accepted && replacement.superseded_by_entry_id.is_empty();
    if !served || replacement.supersedes_entry_id.is_empty() {
        return Ok(None);
    }
    let Some(old) = store::get(conn, &replacement.supersedes_entry_id).map_err(db)? else {
        return Ok(None);
    };
    if old.superseded_by_entry_id != replacement.id {
        return Ok(None);
    }
    let serves = old.status == Status::Archived && rejected_at(conn, &old.id)?.is_none();
    conn.prepare_cached(
        "UPDATE recall_entries SET superseded_by_entry_id = '',
            status = CASE WHEN ?3 THEN 'accepted' ELSE status END, updated_at = ?2 WHERE id = ?1",
    )
    .map_err(db)?
    .execute(params![old.id, now, serves])
    .map_err(db)?;
    if !serves {
        return Ok(None);
    }
    recheck_provenance(
        conn,
        &old,
        "its evidence changed while another entry replaced it",
    )?;
    load(conn, &old.id).map(Some)
}

/// A rejected link inside a chain (an entry replaced by a newer one, which claims it) leaves the
/// chain: the newer entry now replaces the one the rejected entry had replaced (nothing, when
/// it was the chain's root). The served leaf stays the only entry served, and rejecting it later
/// hands service to an entry nobody rejected. The rejected entry keeps its own links (what it
/// replaced, what replaced it), as history; while the newer entry is served it cannot be taken
/// back ([`replaced`]), and once that one is not, it is taken back as any stranded entry is.
/// Returns the entry the newer one now replaces.
fn splice_out(conn: &Connection, link: &Entry, now: &str) -> Result<Option<String>> {
    let db = crate::store::err_in(conn);
    if link.superseded_by_entry_id.is_empty() {
        return Ok(None);
    }
    let Some(newer) = store::get(conn, &link.superseded_by_entry_id).map_err(db)? else {
        return Ok(None);
    };
    // A merged duplicate is not claimed by the entry it was merged into: no chain to mend.
    if newer.supersedes_entry_id != link.id {
        return Ok(None);
    }
    let older = if link.supersedes_entry_id.is_empty() {
        None
    } else {
        store::get(conn, &link.supersedes_entry_id)
            .map_err(db)?
            .filter(|o| o.superseded_by_entry_id == link.id)
    };
    let older_id = older.as_ref().map_or("", |o| o.id.as_str());
    conn.prepare_cached(
        "UPDATE recall_entries SET supersedes_entry_id = ?2, updated_at = ?3 WHERE id = ?1",
    )
    .map_err(db)?
    .execute(params![newer.id, older_id, now])
    .map_err(db)?;
    if let Some(o) = &older {
        conn.prepare_cached(
            "UPDATE recall_entries SET superseded_by_entry_id = ?2, updated_at = ?3 WHERE id = ?1",
        )
        .map_err(db)?
        .execute(params![o.id, newer.id, now])
        .map_err(db)?;
    }
    Ok(older.map(|o| o.id))
}

/// A replacement served again (its rejection taken back): it replaces again the entry it had
/// replaced, when that one is served and replaced by none and the rules of [`supersede`] allow.
/// Otherwise (that entry rejected, replaced by another, or more trusted now) it no longer
/// claims to replace it: the link goes, so the chain says what is served. Returns the entry it
/// replaces once done (again, or still: one whose replacement was never undone).
fn resupersede(conn: &Connection, id: &str, now: &str) -> Result<Option<String>> {
    let db = crate::store::err_in(conn);
    let new = load(conn, id)?;
    if new.status != Status::Accepted || new.supersedes_entry_id.is_empty() {
        return Ok(None);
    }
    let old = store::get(conn, &new.supersedes_entry_id).map_err(db)?;
    if let Some(o) = &old {
        if o.superseded_by_entry_id == new.id {
            // It replaces it already.
            return Ok(Some(o.id.clone()));
        }
        if o.status == Status::Accepted
            && o.superseded_by_entry_id.is_empty()
            && may_supersede(o, &new).is_ok()
        {
            conn.prepare_cached(
                "UPDATE recall_entries SET status = 'archived', superseded_by_entry_id = ?2, updated_at = ?3
                 WHERE id = ?1",
            )
            .map_err(db)?
            .execute(params![o.id, new.id, now])
            .map_err(db)?;
            return Ok(Some(o.id.clone()));
        }
    }
    conn.prepare_cached("UPDATE recall_entries SET supersedes_entry_id = '' WHERE id = ?1")
        .map_err(db)?
        .execute([id])
        .map_err(db)?;
    Ok(None)
}

/// Whether `n` may replace `o` (both served): trust only moves to what is as trusted.
fn may_supersede(o: &Entry, n: &Entry) -> std::result::Result<(), String> {
    let (old, new) = (&o.id, &n.id);
    if o.provenance_ok && !n.provenance_ok {
        return Err(format!(
            "recall entry {new} has unverified provenance and cannot supersede {old}, whose evidence is verified"
        ));
    }
    // A person's trust is not handed to text nobody read: agents would stop being served the
    // reviewed entry, and nothing in its place.
    if o.review_state == ReviewState::HumanReviewed && n.review_state != ReviewState::HumanReviewed
    {
        return Err(format!(
            "recall entry {old} was reviewed by a person and {new} was not: accept {new} first (or edit it there), then let it supersede {old}"
        ));
    }
    Ok(())
}

/// Before an entry whose provenance was revoked is accepted: a person's accept makes it trusted,
/// and trust needs evidence that still says what it said when it was cited (docs/SECURITY.md:
/// accepted, human reviewed, transferable, provenance intact). So its evidence is checked against
/// the archive now. Every range the same again (the transcript was restored, or read again as it
/// was): the provenance is intact and the accept clears the revocation. No evidence left (the
/// sessions it cited were forgotten) or a range still changed: refused, saying why and what to do
/// instead; an accept never makes an unanchored claim trusted.
fn reverify(conn: &Connection, entry: &Entry) -> Result<()> {
    let id = &entry.id;
    let cited = super::evidence::check_entry(conn, id)?;
    let why = entry
        .provenance_note
        .as_deref()
        .map(|n| crate::text::one_line(n, 200))
        .unwrap_or_else(|| "its provenance was revoked".to_owned());
    if cited.is_empty() {
        return Err(Error::Conflict(format!(
            "recall entry {id} cannot be accepted: {why}, and no evidence is left to check it against. \
             Reject it (`cairn recall review --reject {id}`), or import it again citing a session that supports it"
        )));
    }
    if let Some((key, changed)) = cited
        .iter()
        .find_map(|s| s.changed.as_ref().map(|c| (&s.session_key, c)))
    {
        return Err(Error::Conflict(format!(
            "recall entry {id} cannot be accepted: in session {key}, {changed}. \
             Reject it (`cairn recall review --reject {id}`), or import it again citing what the transcript says now",
        )));
    }
    Ok(())
}

fn apply_edit(conn: &Connection, entry: &Entry, edit: &Edit, now: &str) -> Result<()> {
    let db = crate::store::err_in(conn);
    // A reviewer's words are held to what an import stores (an edit is no wider a door),
    // measured as typed, as an import measures them, before anything reads them. Only what the
    // edit sets: the rest is as its own door stored it.
    use super::import::{MAX_BODY_CHARS, MAX_TITLE_CHARS};
    for (field, text, max) in [
        ("title", &edit.title, MAX_TITLE_CHARS),
        ("body", &edit.body, MAX_BODY_CHARS),
        ("trigger", &edit.trigger, MAX_TITLE_CHARS),
    ] {
        if text
            .as_deref()
            .is_some_and(|t| t.trim().chars().nth(max).is_some())
        {
            return Err(Error::Invalid(format!(
                "recall entry {}: the {field} is longer than the {max} characters Cairn stores; shorten it",
                entry.id
            )));
        }
    }
    // A reviewer's words are stored as every other text of an entry is (`store::entry_text`):
    // printable, so no escape sequence or bidi character reaches a terminal or an agent through
    // them, and redacted (a token pasted into an edit by mistake is stored redacted).
    let source: Option<i64> = conn
        .prepare_cached("SELECT source_session_id FROM recall_entries WHERE id = ?1")
        .and_then(|mut s| s.query_row([&entry.id], |r| r.get(0)))
        .map_err(db)?;
    let root = match source {
        Some(row) => super::extract::store::session_info(conn, row)?.root,
        None => None,
    };
    let ob = crate::llm::Outbound::for_root(root.as_deref());
    let clean = |text: &str| store::entry_text(&ob, text);
    let title = crate::text::single_line(&clean(edit.title.as_deref().unwrap_or(&entry.title)));
    let body = clean(edit.body.as_deref().unwrap_or(&entry.body));
    let trigger =
        crate::text::single_line(&clean(edit.trigger.as_deref().unwrap_or(&entry.trigger)));
    if title.is_empty() {
        return Err(Error::Invalid(format!(
            "recall entry {}: the title cannot be empty",
            entry.id
        )));
    }
    // A branch scope is the entry's own branch: without one it would apply nowhere.
    if edit.scope == Some(Scope::Branch) && entry.git_branch.trim().is_empty() {
        return Err(Error::Invalid(format!(
            "recall entry {}: no branch is known for it (its session ran on none), so a branch scope would apply nowhere; keep scope project",
            entry.id
        )));
    }
    conn.prepare_cached(
        "UPDATE recall_entries SET title = ?2, body = ?3, trigger = ?4, type = ?5, scope = ?6, updated_at = ?7
         WHERE id = ?1",
    )
    .map_err(db)?
    .execute(params![
        entry.id,
        title,
        body,
        trigger,
        edit.entry_type.unwrap_or(entry.entry_type).as_str(),
        edit.scope.unwrap_or(entry.scope).as_str(),
        now
    ])
    .map_err(db)?;
    store::reindex(conn, &entry.id).map_err(db)
}

/// Take an accept back (the window's Undo): the entry is no longer vouched for by a person, its
/// review state the one it had before the accept (`previous`, what the window showed), so it
/// waits in the inbox again and agents' briefs leave it out. Any edit the accept saved is kept:
/// it was the reviewer's own text, and accepting again accepts it. No longer transferable either,
/// as everything nobody reviewed is written (the next accept makes it so again); a stale flag or
/// revoked provenance the accept cleared is not put back (it was never kept), so it waits as
/// the `previous` state says.
///
/// Only an accept is taken back: an entry not reviewed by a person, or no longer served
/// (rejected, replaced, merged), is refused, and so is `human_reviewed` as the state before an
/// accept (that would take nothing back). The text and evidence do not change, so its index row
/// and vectors stay as they are. See [`unaccept_handing_back`] for a replacement.
pub fn unaccept(conn: &Connection, id: &str, previous: ReviewState, now: &str) -> Result<Entry> {
    unaccept_handing_back(conn, id, previous, now).map(|u| u.entry)
}

/// What taking an accept back did: the entry, back in the inbox, and the entry it had replaced
/// when that one is served again in its place ([`hand_back`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Unaccepted {
    pub entry: Entry,
    pub reinstated: Option<Entry>,
}

/// Take an accept back ([`unaccept`]). A replacement that may no longer replace the entry it
/// replaced (a reviewed entry is replaced only by a reviewed one, [`may_supersede`]) hands its
/// place back to it as a rejected one does ([`hand_back`]), keeping its `supersedes_entry_id`:
/// accepting it again replaces that entry again ([`resupersede`]). One that still may (the
/// entry it replaced was not reviewed either) keeps replacing it.
pub fn unaccept_handing_back(
    conn: &Connection,
    id: &str,
    previous: ReviewState,
    now: &str,
) -> Result<Unaccepted> {
    let db = crate::store::err_in(conn);
    if previous == ReviewState::HumanReviewed {
        return Err(Error::Invalid(format!(
            "recall entry {id}: an accept is taken back to the state it had before, which cannot be \
             human_reviewed; pass unreviewed_auto, calibrated_auto or eval_raw"
        )));
    }
    let entry = load(conn, id)?;
    if entry.status != Status::Accepted {
        return Err(Error::Conflict(format!(
            "recall entry {id} is {}, not served: nothing to take back; restore it first if it was rejected",
            entry.status
        )));
    }
    if entry.review_state != ReviewState::HumanReviewed {
        return Err(Error::Conflict(format!(
            "recall entry {id} is {}, not reviewed by a person: no accept to take back; it waits in the inbox",
            entry.review_state
        )));
    }
    conn.prepare_cached(
        "UPDATE recall_entries SET review_state = ?2, transferable = 0, updated_at = ?3
         WHERE id = ?1",
    )
    .map_err(db)?
    .execute(params![id, previous.as_str(), now])
    .map_err(db)?;
    let after = load(conn, id)?;
    let mut reinstated = None;
    if !entry.supersedes_entry_id.is_empty()
        && let Some(old) = store::get(conn, &entry.supersedes_entry_id).map_err(db)?
        && old.superseded_by_entry_id == entry.id
        && may_supersede(&old, &after).is_err()
    {
        // `entry` as it was: the served leaf, which is what hands back.
        reinstated = hand_back(conn, &entry, now)?;
    }
    Ok(Unaccepted {
        entry: load(conn, id)?,
        reinstated,
    })
}

/// What a rejection did: the entry, archived, and the entry it had replaced when that one is
/// served again in its place ([`hand_back`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    pub entry: Entry,
    pub reinstated: Option<Entry>,
}

/// Reject an entry: archived, no longer served (see [`reject_handing_back`]).
pub fn reject(conn: &Connection, id: &str, now: &str) -> Result<Entry> {
    reject_handing_back(conn, id, now).map(|r| r.entry)
}

/// Reject an entry: archived, no longer served. A served replacement hands its place back to the
/// entry it replaced ([`hand_back`]): rejecting the newer word does not leave agents with none.
/// A link inside a chain (replaced itself, so not served) is spliced out of it ([`splice_out`]):
/// the entry served stays the only one, and nothing is reinstated.
pub fn reject_handing_back(conn: &Connection, id: &str, now: &str) -> Result<Rejected> {
    let db = crate::store::err_in(conn);
    let before = load(conn, id)?;
    conn.prepare_cached(
        "UPDATE recall_entries SET status = 'archived', rejected_at = ?2, updated_at = ?2 WHERE id = ?1",
    )
    .map_err(db)?
    .execute(params![id, now])
    .map_err(db)?;
    // An extracted entry waiting to be published must stay unpublished.
    super::extract::store::withdraw(conn, id).map_err(db)?;
    let reinstated = hand_back(conn, &before, now)?;
    if before.status == Status::Archived {
        splice_out(conn, &before, now)?;
    }
    Ok(Rejected {
        entry: load(conn, id)?,
        reinstated,
    })
}

/// Take a rejection back (the window's Undo): a rejected entry is where it was before, its
/// review state as it was, so one never reviewed is in the inbox again, and a staged extraction
/// is staged again (published with its generation, not served before). A replacement replaces
/// again the entry it had replaced ([`resupersede`]). Trust still needs its provenance: evidence
/// a forget took or a transcript changed meanwhile sends it to the inbox as revoked.
///
/// An entry whose replacement no longer serves in its place (rejected before a rejection
/// handed service back, retired, gone) is served again the same way. Refused: an entry still
/// replaced by a served one, one archived otherwise (its generation retired), one rejected
/// before rejections were recorded. See [`restore_replacing`], which says what it replaces.
pub fn restore(conn: &Connection, id: &str, now: &str) -> Result<Entry> {
    restore_replacing(conn, id, now).map(|r| r.entry)
}

/// What taking a rejection back did: the entry, where it was before, and the entry it replaces
/// again (archived behind it) when it was a replacement and the supersede rules allow.
#[derive(Debug, Clone, PartialEq)]
pub struct Restored {
    pub entry: Entry,
    pub replaces: Option<Entry>,
}

/// Take a rejection back ([`restore`]), saying which entry it replaces again ([`resupersede`]).
pub fn restore_replacing(conn: &Connection, id: &str, now: &str) -> Result<Restored> {
    let db = crate::store::err_in(conn);
    let entry = load(conn, id)?;
    let stranded = !entry.superseded_by_entry_id.is_empty();
    if stranded && !replacement_gone(conn, &entry)? {
        return Err(replaced(conn, &entry)?);
    }
    if entry.status != Status::Archived || (!stranded && rejected_at(conn, id)?.is_none()) {
        return Err(Error::Conflict(format!(
            "recall entry {id} is not rejected: nothing to take back"
        )));
    }
    let staged = super::extract::store::restage(conn, id).map_err(db)?;
    let status = if staged { "archived" } else { "accepted" };
    conn.prepare_cached(
        "UPDATE recall_entries SET status = ?2, rejected_at = NULL, superseded_by_entry_id = '', updated_at = ?3
         WHERE id = ?1",
    )
    .map_err(db)?
    .execute(params![id, status, now])
    .map_err(db)?;
    recheck_provenance(conn, &entry, "its evidence changed while it was rejected")?;
    let replaces = match resupersede(conn, id, now)? {
        Some(old) => Some(load(conn, &old)?),
        None => None,
    };
    Ok(Restored {
        entry: load(conn, id)?,
        replaces,
    })
}

/// Replace `old` with `new`: `old` is archived and points at `new`, `new` points back.
/// Chains stay single-leaf: an entry already superseded cannot be superseded again.
pub fn supersede(conn: &Connection, old: &str, new: &str, now: &str) -> Result<()> {
    let db = crate::store::err_in(conn);
    if old == new {
        return Err(Error::Invalid(format!(
            "recall entry {old} cannot supersede itself"
        )));
    }
    let o = load(conn, old)?;
    let n = load(conn, new)?;
    if o.status != Status::Accepted || !o.superseded_by_entry_id.is_empty() {
        return Err(Error::Conflict(format!(
            "recall entry {old} is already {}; supersede the entry that replaced it instead",
            if o.superseded_by_entry_id.is_empty() {
                "archived".to_owned()
            } else {
                format!("superseded by {}", o.superseded_by_entry_id)
            }
        )));
    }
    if n.status != Status::Accepted {
        return Err(Error::Conflict(format!(
            "recall entry {new} is {}; the replacement must be accepted",
            n.status
        )));
    }
    may_supersede(&o, &n).map_err(Error::Conflict)?;
    conn.prepare_cached(
        "UPDATE recall_entries SET supersedes_entry_id = ?2, updated_at = ?3 WHERE id = ?1",
    )
    .map_err(db)?
    .execute(params![new, old, now])
    .map_err(db)?;
    conn.prepare_cached(
        "UPDATE recall_entries SET status = 'archived', superseded_by_entry_id = ?2, updated_at = ?3 WHERE id = ?1",
    )
    .map_err(db)?
    .execute(params![old, new, now])
    .map_err(db)?;
    Ok(())
}

/// Merge a duplicate (typically a proposal from the inbox) into the entry kept: the kept entry
/// gains the duplicate's evidence (ranges it does not cite already), and the duplicate is
/// archived, superseded by the kept entry and no longer listed anywhere but its history.
///
/// Nothing becomes trusted by a merge: the kept entry keeps its review state (an unreviewed
/// one stays in the inbox), and the duplicate's evidence is checked against its transcript
/// first — a range that changed refuses the merge rather than join a reviewed entry.
pub fn merge(conn: &Connection, duplicate: &str, keep: &str, now: &str) -> Result<Entry> {
    let db = crate::store::err_in(conn);
    if duplicate == keep {
        return Err(Error::Invalid(format!(
            "recall entry {duplicate} cannot be merged into itself"
        )));
    }
    let d = load(conn, duplicate)?;
    let k = load(conn, keep)?;
    for (e, role) in [(&d, "duplicate"), (&k, "entry kept")] {
        if e.status != Status::Accepted {
            return Err(Error::Conflict(format!(
                "recall entry {} (the {role}) is {}{}; merge only entries still served",
                e.id,
                e.status,
                if e.superseded_by_entry_id.is_empty() {
                    String::new()
                } else {
                    format!(", superseded by {}", e.superseded_by_entry_id)
                }
            )));
        }
    }
    // The kept entry keeps its review state: a reviewed duplicate folded into one nobody
    // reviewed would leave what agents are served without a word.
    if d.review_state == ReviewState::HumanReviewed && k.review_state != ReviewState::HumanReviewed
    {
        return Err(Error::Conflict(format!(
            "recall entry {duplicate} was reviewed by a person and {keep} was not, so merging it there would take it out of what agents are served: merge the other way, {keep} into {duplicate}"
        )));
    }
    if let Some(changed) = super::evidence::check_entry(conn, duplicate)?
        .into_iter()
        .find_map(|s| s.changed)
    {
        return Err(Error::Conflict(format!(
            "recall entry {duplicate}: {changed}, so its evidence cannot join {keep}; reject it instead"
        )));
    }
    let added = conn
        .prepare_cached(
            "INSERT INTO recall_evidence (entry_id, session_id, ordinal_start, ordinal_end, start_record, end_record,
                content_digest, tool_use_id, snippet, files, recorded_at)
             SELECT ?2, d.session_id, d.ordinal_start, d.ordinal_end, d.start_record, d.end_record,
                d.content_digest, d.tool_use_id, d.snippet, d.files, d.recorded_at
             FROM recall_evidence d
             WHERE d.entry_id = ?1 AND NOT EXISTS (
                SELECT 1 FROM recall_evidence k WHERE k.entry_id = ?2 AND k.session_id = d.session_id
                  AND k.ordinal_start = d.ordinal_start AND k.ordinal_end = d.ordinal_end
                  AND k.tool_use_id IS d.tool_use_id)
             ORDER BY d.id",
        )
        .map_err(db)?
        .execute(params![duplicate, keep])
        .map_err(db)?;
    conn.prepare_cached(
        "UPDATE recall_entries SET status = 'archived', superseded_by_entry_id = ?2, label = 'merged', updated_at = ?3
         WHERE id = ?1",
    )
    .map_err(db)?
    .execute(params![duplicate, keep, now])
    .map_err(db)?;
    super::extract::store::withdraw(conn, duplicate).map_err(db)?;
    if added > 0 {
        conn.prepare_cached("UPDATE recall_entries SET updated_at = ?2 WHERE id = ?1")
            .map_err(db)?
            .execute(params![keep, now])
            .map_err(db)?;
        // The kept entry's evidence snippets are indexed with it.
        store::reindex(conn, keep).map_err(db)?;
    }
    load(conn, keep)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recall::store::NewEntry;

    const NOW: &str = "2026-03-01T10:00:00Z";
    const LATER: &str = "2026-03-01T10:05:00Z";

    /// A store holding one entry `id` in `state`, citing nothing (so an accept needs no
    /// transcript to check).
    fn one_entry(id: &str, state: ReviewState) -> (tempfile::TempDir, crate::store::Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::Store::open(&dir.path().join("cairn.db")).unwrap();
        let entry = NewEntry {
            id: id.to_owned(),
            entry_type: EntryType::Fact,
            scope: Scope::Project,
            status: Status::Accepted,
            review_state: state,
            title: "The hook calls tmux".to_owned(),
            body: "Session hooks need tmux installed.".to_owned(),
            trigger: String::new(),
            confidence: Some(0.7),
            uncertainty: String::new(),
            project: "cairn".to_owned(),
            cwd: String::new(),
            git_branch: String::new(),
            agent: "claude".to_owned(),
            source_session_id: None,
            source_episode_id: String::new(),
            source_run_id: String::new(),
            extractor_method: "llm".to_owned(),
            model: "qwen3:8b".to_owned(),
            label: String::new(),
            transferable: false,
            provenance_ok: true,
            supersedes_entry_id: String::new(),
            evidence: Vec::new(),
        };
        store::insert(store.conn(), &entry, NOW).unwrap();
        (dir, store)
    }

    /// The window's Undo of an accept: trusted, then back in the inbox as it was before, with the
    /// reviewer's edit kept.
    #[test]
    fn unaccept_takes_an_accept_back_to_the_state_before() {
        for before in [ReviewState::UnreviewedAuto, ReviewState::CalibratedAuto] {
            let (_dir, store) = one_entry("e1", before);
            let conn = store.conn();
            let edit = Edit {
                title: Some("Session hooks need tmux".to_owned()),
                ..Edit::default()
            };
            let accepted = accept(conn, "e1", Some(&edit), NOW).unwrap();
            assert!(accepted.is_trusted(), "{accepted:?}");
            assert_eq!(accepted.reviewed_at.as_deref(), Some(NOW));
            assert_eq!(queue_len(conn).unwrap(), 0);

            let back = unaccept(conn, "e1", before, LATER).unwrap();
            assert_eq!(back.review_state, before);
            assert!(!back.is_trusted() && !back.transferable, "{back:?}");
            // When a person last reviewed it stays: a forget keeps an entry a person touched.
            assert_eq!(back.reviewed_at.as_deref(), Some(NOW));
            assert_eq!(back.updated_at, LATER);
            assert_eq!(back.status, Status::Accepted);
            assert_eq!(back.title, "Session hooks need tmux", "the edit is kept");
            let inbox = queue(conn, 10).unwrap();
            assert_eq!(inbox.len(), 1);
            assert_eq!(inbox[0].reason, InboxReason::Unreviewed);
            // Accepted again, it is trusted again.
            assert!(accept(conn, "e1", None, LATER).unwrap().is_trusted());
        }
    }

    #[test]
    fn unaccept_refuses_what_is_not_an_accept() {
        let (_dir, store) = one_entry("e1", ReviewState::UnreviewedAuto);
        let conn = store.conn();
        // Nobody accepted it: nothing to take back.
        let err = unaccept(conn, "e1", ReviewState::UnreviewedAuto, LATER).unwrap_err();
        assert!(matches!(err, Error::Conflict(_)), "{err}");
        assert!(
            err.to_string().contains("not reviewed by a person"),
            "{err}"
        );
        // "Back" to human_reviewed would take nothing back.
        accept(conn, "e1", None, NOW).unwrap();
        let err = unaccept(conn, "e1", ReviewState::HumanReviewed, LATER).unwrap_err();
        assert!(matches!(err, Error::Invalid(_)), "{err}");
        // Rejected since: not served, so not an accept to take back (restore is its Undo).
        reject(conn, "e1", LATER).unwrap();
        let err = unaccept(conn, "e1", ReviewState::UnreviewedAuto, LATER).unwrap_err();
        assert!(matches!(err, Error::Conflict(_)), "{err}");
        assert!(err.to_string().contains("archived"), "{err}");
        let err = unaccept(conn, "nope", ReviewState::UnreviewedAuto, LATER).unwrap_err();
        assert!(matches!(err, Error::NotFound(_)), "{err}");
        // Nothing of the refusals changed it.
        let entry = load(conn, "e1").unwrap();
        assert_eq!(
            (entry.status, entry.review_state),
            (Status::Archived, ReviewState::HumanReviewed)
        );
    }

    /// The JSON `cairn recall review` has always printed: `action` plus the change's fields.
    #[test]
    fn review_changes_serialise_as_the_cli_printed_them() {
        let json = |c: ReviewChange| serde_json::to_value(c).unwrap();
        assert_eq!(
            json(ReviewChange::checked(super::super::stale::Flagged {
                trusted: 1,
                untrusted: 2
            })),
            serde_json::json!({"action": "check_stale", "flagged": 3, "trusted_returned": 1, "untrusted_marked": 2})
        );
        assert_eq!(
            json(ReviewChange::Reject {
                id: "e1".into(),
                status: Status::Archived,
                reinstated: None,
            }),
            serde_json::json!({"action": "reject", "id": "e1", "status": "archived"})
        );
        assert_eq!(
            json(ReviewChange::Merge {
                duplicate: "d".into(),
                kept: "k".into()
            }),
            serde_json::json!({"action": "merge", "duplicate": "d", "kept": "k"})
        );
        assert_eq!(
            json(ReviewChange::Supersede {
                old: "o".into(),
                new: "n".into()
            }),
            serde_json::json!({"action": "supersede", "old": "o", "new": "n"})
        );
    }
}
