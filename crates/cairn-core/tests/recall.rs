//! Recall acceptance cases (AgentsView's where they apply, plus the inbox, staleness and
//! ranking): entries anchored to real fixture sessions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::recall::model::{ReviewState, Status, Surface};
use cairn_core::recall::review::Edit;
use cairn_core::recall::store::Filters;
use cairn_core::recall::{QueryRequest, brief};
use serde_json::json;

/// A small session of the fixtures (11 records) and the big one (658 records).
const SMALL: &str = "55604662-cf2a-4331-851a-ec234028f8ca";
const BIG: &str = "ae4a77f8-aedd-4bc1-888f-c94edc91af04";

fn archive() -> (tempfile::TempDir, Cairn) {
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let files: Vec<_> = [
        "claude/short.jsonl",
        "claude/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl",
    ]
    .iter()
    .map(|f| support::main_file(Agent::Claude, &support::fixtures().join(f)))
    .collect();
    support::capture(&cairn, &files);
    (data, cairn)
}

fn line(id: &str, session: &str, start: u32, end: u32, title: &str, body: &str) -> String {
    json!({
        "candidate_id": id, "session_id": session, "type": "fact", "scope": "project",
        "title": title, "body": body, "transferable": true, "provenance_ok": true, "label": "correct",
        "evidence": {"ordinal_start": start, "ordinal_end": end, "snippets": [body]}
    })
    .to_string()
}

fn query(cairn: &Cairn, text: &str, filters: Filters) -> Vec<String> {
    let req = QueryRequest {
        text: text.into(),
        filters,
        ..Default::default()
    };
    cairn
        .recall_query(&req, Surface::Query)
        .unwrap()
        .results
        .into_iter()
        .map(|r| r.entry.id)
        .collect()
}

#[test]
fn import_binds_evidence_and_makes_trusted_entries() {
    let (_d, cairn) = archive();
    let text = [
        line(
            "e1",
            SMALL,
            0,
            3,
            "Phoenix server start check",
            "Run mix phx.server and read its first 80 lines of output.",
        ),
        line(
            "e2",
            BIG,
            10,
            20,
            "Beads workflow",
            "Use bd show and bd ready to pick the next bead.",
        ),
    ]
    .join("\n");
    let report = cairn.recall_import(&text, false).unwrap();
    assert_eq!((report.imported, report.errors.len()), (2, 0), "{report:?}");
    let e1 = cairn.recall_get("e1").unwrap();
    assert_eq!(e1.review_state, ReviewState::HumanReviewed);
    assert!(e1.is_trusted());
    let ev = &e1.evidence[0];
    assert_eq!((ev.ordinal_start, ev.ordinal_end), (0, 3));
    assert!(ev.content_digest.starts_with("sha256:") && ev.start_record.starts_with("sha256:"));
    assert_eq!(
        e1.source_session_key
            .as_deref()
            .map(|k| k.starts_with("sha256-")),
        Some(true)
    );
    // Idempotent by candidate id.
    let again = cairn.recall_import(&text, false).unwrap();
    assert_eq!(again.imported, 0);
    assert!(again.skipped.iter().all(|s| s.reason == "duplicate"));
    // session_id may be the session key.
    let key = e1.source_session_key.clone().unwrap();
    let by_key = cairn
        .recall_import(
            &line("e3", &key, 4, 5, "By key", "Bound by session key."),
            false,
        )
        .unwrap();
    assert_eq!(by_key.imported, 1);
}

#[test]
fn import_is_atomic_and_names_the_bad_line() {
    let (_d, cairn) = archive();
    let text = [
        line("a1", SMALL, 0, 2, "Good one", "fine"),
        line("a2", SMALL, 0, 999, "Out of range", "no such records"),
        line("a3", SMALL, 1, 2, "Good two", "fine"),
    ]
    .join("\n");
    let report = cairn.recall_import(&text, false).unwrap();
    assert_eq!(report.errors.len(), 1);
    assert_eq!(report.errors[0].line, 2);
    assert!(
        report.errors[0].message.contains("0-999"),
        "{}",
        report.errors[0].message
    );
    assert!(
        cairn.recall_get("a1").is_err(),
        "nothing is written when a line fails"
    );
    // A dry run reports what a real run would do, and writes nothing.
    let ok = [
        line("a1", SMALL, 0, 2, "Good one", "fine"),
        line("a3", SMALL, 1, 2, "Good two", "fine"),
    ]
    .join("\n");
    let dry = cairn.recall_import(&ok, true).unwrap();
    assert_eq!((dry.imported, dry.dry_run), (2, true));
    assert!(cairn.recall_get("a1").is_err());
}

#[test]
fn import_rejects_host_fields_and_skips_non_keepers() {
    let (_d, cairn) = archive();
    let mut v: serde_json::Value =
        serde_json::from_str(&line("h1", SMALL, 0, 1, "T", "B")).unwrap();
    v["review_state"] = json!("human_reviewed");
    let r = cairn.recall_import(&v.to_string(), false).unwrap();
    assert!(r.errors[0].message.contains("review_state"), "{r:?}");
    let mut v: serde_json::Value =
        serde_json::from_str(&line("h2", SMALL, 0, 1, "T", "B")).unwrap();
    v["evidence"]["content_digest"] = json!("sha256:00");
    assert!(
        cairn.recall_import(&v.to_string(), false).unwrap().errors[0]
            .message
            .contains("content_digest")
    );
    let skip = |field: &str, value: serde_json::Value| {
        let mut v: serde_json::Value =
            serde_json::from_str(&line("s", SMALL, 0, 1, "T", "B")).unwrap();
        v[field] = value;
        cairn.recall_import(&v.to_string(), true).unwrap().skipped[0]
            .reason
            .clone()
    };
    assert_eq!(skip("transferable", json!(false)), "not_transferable");
    assert_eq!(skip("provenance_ok", json!(false)), "provenance_not_ok");
    assert_eq!(skip("label", json!("wrong")), "label_not_keeper");
    let bad = |field: &str, value: serde_json::Value| {
        let mut v: serde_json::Value =
            serde_json::from_str(&line("b", SMALL, 0, 1, "T", "B")).unwrap();
        v[field] = value;
        cairn.recall_import(&v.to_string(), true).unwrap().errors[0]
            .message
            .clone()
    };
    assert!(bad("type", json!("rumour")).contains("unknown entry type"));
    assert!(bad("scope", json!("galaxy")).contains("unknown scope"));
    assert!(bad("confidence", json!(1.5)).contains("between 0 and 1"));
    assert!(bad("session_id", json!("no-such-session")).contains("not in the archive"));
    assert!(bad("candidate_id", json!("x\u{7}y")).contains("`candidate_id` may hold only"));
}

/// Every text of the database, one string: what `cairn.db` holds of Recall.
fn recall_tables(data: &std::path::Path) -> String {
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let mut all = String::new();
    for sql in [
        "SELECT title || '|' || body || '|' || trigger || '|' || uncertainty || '|' || project \
         || '|' || cwd || '|' || git_branch || '|' || agent || '|' || model FROM recall_entries",
        "SELECT snippet FROM recall_evidence",
        "SELECT title || '|' || body || '|' || trigger || '|' || evidence FROM recall_terms",
    ] {
        let mut stmt = conn.prepare(sql).unwrap();
        let rows = stmt.query_map([], |r| r.get::<_, String>(0)).unwrap();
        for row in rows {
            all.push_str(&row.unwrap());
            all.push('\n');
        }
    }
    all
}

#[test]
fn an_import_is_redacted_before_it_is_stored_or_shown() {
    let (data, cairn) = archive();
    let home = std::env::var("HOME").unwrap_or_else(|_| "/home/someone".into());
    let aws = "AKIAIOSFODNN7EXAMPLE";
    let ghp = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5";
    let mut v: serde_json::Value = serde_json::from_str(&line(
        "sec1",
        SMALL,
        0,
        3,
        &format!("key {aws}"),
        &format!("token {ghp} home {home}/.ssh/id_rsa"),
    ))
    .unwrap();
    v["trigger"] = json!(format!("when {ghp}"));
    v["uncertainty"] = json!(format!("maybe {aws}"));
    v["model"] = json!(format!("m-{ghp}"));
    v["evidence"]["snippets"] = json!([format!("snip {aws}"), format!("{home}/.aws/credentials")]);
    let report = cairn.recall_import(&v.to_string(), false).unwrap();
    assert_eq!((report.imported, report.errors.len()), (1, 0), "{report:?}");
    let shown = format!(
        "{report:?}{:?}{:?}",
        cairn.recall_get("sec1").unwrap(),
        cairn.recall_list(&Filters::default()).unwrap()
    );
    let stored = recall_tables(data.path());
    for leak in [aws, ghp, &format!("{home}/")] {
        assert!(!shown.contains(leak), "{leak} shown: {shown}");
        assert!(!stored.contains(leak), "{leak} stored: {stored}");
    }
    let e = cairn.recall_get("sec1").unwrap();
    assert_eq!(e.title, "key [REDACTED:aws-access-key]");
    assert!(e.evidence[0].snippet.contains("[REDACTED:"), "{e:?}");
    assert!(query(&cairn, aws, Filters::default()).is_empty());
}

/// A reviewer's edit is stored as every other text is: a token pasted into it is redacted
/// before it reaches the entry or Recall's index.
#[test]
fn a_reviewers_edit_is_redacted_before_it_is_stored() {
    let (data, cairn) = archive();
    auto_entry(data.path(), "e1", "Deploys", "how deploys work");
    let aws = "AKIAIOSFODNN7EXAMPLE";
    let edit = Edit {
        title: Some(format!("Deploy with {aws}")),
        body: Some(format!("the key is {aws}")),
        trigger: Some(format!("when {aws} is asked for")),
        ..Default::default()
    };
    let e = cairn.recall_accept("e1", Some(&edit)).unwrap();
    assert_eq!(e.title, "Deploy with [REDACTED:aws-access-key]");
    assert_eq!(e.body, "the key is [REDACTED:aws-access-key]");
    let stored = recall_tables(data.path());
    assert!(!stored.contains(aws), "{stored}");
    assert!(
        !stored.to_lowercase().contains(&aws.to_lowercase()),
        "{stored}"
    );
    assert!(query(&cairn, aws, Filters::default()).is_empty());
}

#[test]
fn an_import_refuses_ids_a_reader_cannot_type_back_and_oversized_fields() {
    let (_d, cairn) = archive();
    let with = |id: &str, field: &str, value: serde_json::Value| {
        let mut v: serde_json::Value =
            serde_json::from_str(&line(id, SMALL, 0, 1, "T", "B")).unwrap();
        if !field.is_empty() {
            v[field] = value;
        }
        v.to_string()
    };
    let text = [
        with("abc\u{202e}evil", "", json!(null)),
        with("abc\u{200b}def", "", json!(null)),
        with(&"C".repeat(100_000), "", json!(null)),
        with("big", "body", json!("word ".repeat(5_000))),
        with("blank", "title", json!("\u{200b}\u{200b} \u{ad}")),
        with("ok-1", "", json!(null)),
        with("sup", "supersedes_entry_id", json!("old\u{202e}x")),
    ]
    .join("\n");
    let report = cairn.recall_import(&text, false).unwrap();
    let errors: Vec<(u32, &str)> = report
        .errors
        .iter()
        .map(|e| (e.line, e.message.as_str()))
        .collect();
    assert_eq!(
        errors.iter().map(|e| e.0).collect::<Vec<_>>(),
        vec![1, 2, 3, 4, 5, 7],
        "{errors:?}"
    );
    assert!(
        errors[0].1.contains("`candidate_id` may hold only"),
        "{errors:?}"
    );
    assert!(
        errors[1].1.contains("`candidate_id` may hold only"),
        "{errors:?}"
    );
    assert!(
        errors[2]
            .1
            .contains("`candidate_id` is longer than the 200"),
        "{errors:?}"
    );
    assert!(errors[3].1.contains("`body` is longer"), "{errors:?}");
    assert!(errors[4].1.contains("`title` is required"), "{errors:?}");
    assert!(
        errors[5].1.contains("`supersedes_entry_id` may hold only"),
        "{errors:?}"
    );
    assert!(cairn.recall_list(&Filters::default()).unwrap().is_empty());
}

#[test]
fn trusted_only_serves_reviewed_entries_and_rejects_archived_status() {
    let (_d, cairn) = archive();
    cairn
        .recall_import(
            &line(
                "t1",
                SMALL,
                0,
                3,
                "Phoenix server restart",
                "restart the phoenix server",
            ),
            false,
        )
        .unwrap();
    let trusted = Filters {
        trusted_only: true,
        ..Default::default()
    };
    assert_eq!(query(&cairn, "phoenix server", trusted.clone()), vec!["t1"]);
    cairn.recall_reject("t1").unwrap();
    assert!(query(&cairn, "phoenix server", trusted).is_empty());
    let bad = Filters {
        trusted_only: true,
        status: Some(Status::Archived),
        ..Default::default()
    };
    let err = cairn.recall_query(
        &QueryRequest {
            text: "phoenix".into(),
            filters: bad,
            ..Default::default()
        },
        Surface::Query,
    );
    assert!(err.unwrap_err().to_string().contains("--trusted-only"));
    let archived = Filters {
        status: Some(Status::Archived),
        ..Default::default()
    };
    assert_eq!(query(&cairn, "phoenix server", archived), vec!["t1"]);
}

#[test]
fn a_changed_anchor_revokes_provenance_and_it_stays_revoked() {
    let (data, cairn) = archive();
    cairn
        .recall_import(
            &line("r1", SMALL, 0, 3, "Start check", "mix phx.server output"),
            false,
        )
        .unwrap();
    let conn = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
    let session: i64 = conn
        .query_row(
            "SELECT id FROM sessions WHERE session_id = ?1",
            [SMALL],
            |r| r.get(0),
        )
        .unwrap();
    let original: String = conn
        .query_row(
            "SELECT text FROM records WHERE session_id = ?1 AND ordinal = 2",
            [session],
            |r| r.get(0),
        )
        .unwrap();
    conn.execute(
        "UPDATE records SET text = 'tampered' WHERE session_id = ?1 AND ordinal = 2",
        [session],
    )
    .unwrap();
    let now = "2026-12-01T00:00:00.000Z";
    assert_eq!(
        cairn_core::recall::evidence::verify_session(&conn, session, now).unwrap(),
        1
    );
    let e = cairn.recall_get("r1").unwrap();
    assert!(!e.provenance_ok && !e.is_trusted());
    assert!(e.provenance_note.unwrap().contains("changed"));
    // Sticky: restoring the record does not restore trust.
    conn.execute(
        "UPDATE records SET text = ?2 WHERE session_id = ?1 AND ordinal = 2",
        rusqlite::params![session, original],
    )
    .unwrap();
    cairn_core::recall::evidence::verify_session(&conn, session, now).unwrap();
    assert!(!cairn.recall_get("r1").unwrap().provenance_ok);
    // It shows in the inbox for a person to look at again.
    let inbox = cairn.recall_inbox(50).unwrap();
    assert!(inbox.iter().any(|i| i.entry.id == "r1"));
}

#[test]
fn accepting_a_revoked_entry_checks_its_evidence_again_clearing_or_refusing() {
    let (data, cairn) = archive();
    cairn
        .recall_import(
            &line("r1", SMALL, 0, 3, "Start check", "mix phx.server output"),
            false,
        )
        .unwrap();
    let conn = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
    let session: i64 = conn
        .query_row(
            "SELECT id FROM sessions WHERE session_id = ?1",
            [SMALL],
            |r| r.get(0),
        )
        .unwrap();
    let original: String = conn
        .query_row(
            "SELECT text FROM records WHERE session_id = ?1 AND ordinal = 2",
            [session],
            |r| r.get(0),
        )
        .unwrap();
    let set = |text: &str| {
        conn.execute(
            "UPDATE records SET text = ?2 WHERE session_id = ?1 AND ordinal = 2",
            rusqlite::params![session, text],
        )
        .unwrap();
    };
    set("tampered");
    cairn_core::recall::evidence::verify_session(&conn, session, "2026-12-01T00:00:00.000Z")
        .unwrap();
    let in_inbox = |cairn: &Cairn| {
        cairn
            .recall_inbox(50)
            .unwrap()
            .iter()
            .any(|i| i.entry.id == "r1")
    };
    assert!(in_inbox(&cairn));

    // The evidence still differs: the accept is refused, says why and what to do, and changes
    // nothing (not even the reviewer's edit).
    let edit = Edit {
        title: Some("Edited".into()),
        ..Default::default()
    };
    let err = cairn.recall_accept("r1", Some(&edit)).unwrap_err();
    assert_eq!(err.kind(), cairn_core::ErrorKind::Conflict, "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("cannot be accepted") && msg.contains("records 0-3 of its evidence changed"),
        "{msg}"
    );
    assert!(msg.contains("--reject r1"), "{msg}");
    let e = cairn.recall_get("r1").unwrap();
    assert!(!e.provenance_ok && !e.is_trusted() && e.title == "Start check");
    assert!(in_inbox(&cairn));

    // The transcript says again what it said when cited: accepting clears the revocation and
    // the entry is trusted, out of the inbox.
    set(&original);
    let e = cairn.recall_accept("r1", None).unwrap();
    assert!(
        e.provenance_ok && e.provenance_note.is_none() && e.is_trusted(),
        "{e:?}"
    );
    assert!(!in_inbox(&cairn));
}

#[test]
fn a_forgotten_session_s_snippet_no_longer_finds_the_entry() {
    let (data, cairn) = archive();
    let mut v: serde_json::Value = serde_json::from_str(&line(
        "fs1",
        SMALL,
        0,
        3,
        "Deploy secrets live in vault",
        "Read them from vault",
    ))
    .unwrap();
    v["evidence"]["snippets"] = json!(["the deploy password is kept in vault path qqsnipword"]);
    cairn.recall_import(&v.to_string(), false).unwrap();
    assert_eq!(query(&cairn, "qqsnipword", Filters::default()), vec!["fs1"]);
    cairn
        .forget(&cairn_core::ForgetRequest {
            session: Some(SMALL.into()),
            ..Default::default()
        })
        .unwrap();
    assert!(query(&cairn, "qqsnipword", Filters::default()).is_empty());
    let stored = recall_tables(data.path());
    assert!(!stored.contains("qqsnipword"), "{stored}");
    // The entry's own words still find it.
    assert_eq!(query(&cairn, "vault", Filters::default()), vec!["fs1"]);
}

/// An entry no person accepted, drawn from forgotten sessions alone (an agent's proposal, an
/// extraction), goes with them: its words may quote them and nothing else vouches for it. One
/// that also cites a session kept stays, with that evidence; one a person accepted goes back
/// to the inbox (`an_entry_whose_evidence_was_forgotten_cannot_be_accepted_into_trust`).
#[test]
fn an_unreviewed_entry_drawn_only_from_forgotten_sessions_goes_with_them() {
    use cairn_core::recall::agents::{EvidenceRef, Proposal, Speaker};
    let (data, cairn) = archive();
    let other = cairn
        .sessions(&Default::default())
        .unwrap()
        .into_iter()
        .find(|s| s.session_id.as_deref() != Some(SMALL))
        .unwrap()
        .session_key;
    let mut writer = cairn.agent_writer().unwrap();
    let who = Speaker {
        agent: "claude".into(),
        ..Default::default()
    };
    let propose = |writer: &mut cairn_core::AgentWriter, title: &str, sessions: &[&str]| {
        let proposal = Proposal {
            entry_type: cairn_core::recall::model::EntryType::Fact,
            scope: None,
            title: title.into(),
            body: format!("{title}, as the session said"),
            trigger: String::new(),
            evidence: sessions
                .iter()
                .map(|s| EvidenceRef {
                    session: (*s).into(),
                    from: 0,
                    to: 1,
                })
                .collect(),
        };
        cairn
            .agent_propose(writer, &proposal, &who)
            .unwrap()
            .entry_id
    };
    let alone = propose(&mut writer, "Qqalonefact about the cart", &[SMALL]);
    let shared = propose(&mut writer, "Qqsharedfact about the cart", &[SMALL, &other]);
    // Accepted with an edit, then the accept taken back: a person's words, kept.
    let touched = propose(&mut writer, "Qqtouchedfact about the cart", &[SMALL]);
    drop(writer);
    let edit = cairn_core::recall::review::Edit {
        title: Some("Qqtouchedfact, as the reviewer put it".into()),
        ..Default::default()
    };
    cairn.recall_accept(&touched, Some(&edit)).unwrap();
    cairn
        .recall_unaccept(&touched, ReviewState::UnreviewedAuto)
        .unwrap();
    let request = cairn_core::ForgetRequest {
        session: Some(SMALL.into()),
        ..Default::default()
    };
    let plan = cairn.forget_preview(&request).unwrap();
    let fate = |id: &str| {
        plan.recall_entries
            .iter()
            .find(|e| e.id == id)
            .map(|e| (e.deleted, e.back_to_inbox))
    };
    assert_eq!(fate(&alone), Some((true, false)), "{plan:?}");
    assert_eq!(fate(&shared), Some((false, false)), "{plan:?}");
    assert_eq!(fate(&touched), Some((false, true)), "{plan:?}");
    cairn.forget(&request).unwrap();
    let gone = cairn.recall_get(&alone).unwrap_err();
    assert_eq!(gone.kind(), cairn_core::ErrorKind::NotFound, "{gone}");
    let stored = recall_tables(data.path());
    assert!(!stored.to_lowercase().contains("qqalonefact"), "{stored}");
    assert!(query(&cairn, "qqalonefact", Filters::default()).is_empty());
    let kept = cairn.recall_get(&shared).unwrap();
    assert_eq!(kept.evidence.len(), 1, "{kept:?}");
    assert_eq!(
        query(&cairn, "qqsharedfact", Filters::default()),
        vec![shared.clone()]
    );
    let kept = cairn.recall_get(&touched).unwrap();
    assert!(kept.evidence.is_empty() && !kept.is_trusted(), "{kept:?}");
}

#[test]
fn an_entry_whose_evidence_was_forgotten_cannot_be_accepted_into_trust() {
    let (_data, cairn) = archive();
    cairn
        .recall_import(
            &line("f1", SMALL, 0, 3, "Start check", "mix phx.server output"),
            false,
        )
        .unwrap();
    cairn
        .forget(&cairn_core::ForgetRequest {
            session: Some(SMALL.into()),
            ..Default::default()
        })
        .unwrap();
    let e = cairn.recall_get("f1").unwrap();
    assert!(!e.provenance_ok && e.evidence.is_empty());
    assert!(
        cairn
            .recall_inbox(50)
            .unwrap()
            .iter()
            .any(|i| i.entry.id == "f1")
    );
    // The inbox says why it is back and that accepting will not do.
    let why = cairn.recall_proposal("f1").unwrap().why.join(" ");
    // It was imported reviewed: the inbox does not call it never reviewed.
    assert!(
        !why.contains("not reviewed by a person yet") && why.contains("its review no longer holds"),
        "{why}"
    );
    assert!(
        why.contains("the sessions it cited were forgotten")
            && why.contains("cannot be trusted again"),
        "{why}"
    );

    let err = cairn.recall_accept("f1", None).unwrap_err();
    assert_eq!(err.kind(), cairn_core::ErrorKind::Conflict, "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("the sessions it cited were forgotten"),
        "{msg}"
    );
    assert!(msg.contains("no evidence is left"), "{msg}");
    assert!(!cairn.recall_get("f1").unwrap().is_trusted());
    // Rejecting is the way out of the inbox.
    cairn.recall_reject("f1").unwrap();
    assert!(
        !cairn
            .recall_inbox(50)
            .unwrap()
            .iter()
            .any(|i| i.entry.id == "f1")
    );
}

#[test]
fn a_vanished_anchor_revokes_and_a_moved_one_is_remapped() {
    let (data, cairn) = archive();
    cairn
        .recall_import(&line("m1", SMALL, 4, 5, "Moved", "moved records"), false)
        .unwrap();
    cairn
        .recall_import(&line("m2", SMALL, 0, 1, "Gone", "gone records"), false)
        .unwrap();
    let conn = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
    let session: i64 = conn
        .query_row(
            "SELECT id FROM sessions WHERE session_id = ?1",
            [SMALL],
            |r| r.get(0),
        )
        .unwrap();
    // Renumber every record by +100 (a reindex that shifted ordinals), and drop record 0.
    conn.execute(
        "DELETE FROM records WHERE session_id = ?1 AND ordinal = 0",
        [session],
    )
    .unwrap();
    conn.execute(
        "UPDATE records SET ordinal = ordinal + 100 WHERE session_id = ?1",
        [session],
    )
    .unwrap();
    cairn_core::recall::evidence::verify_session(&conn, session, "2026-12-01T00:00:00.000Z")
        .unwrap();
    let moved = cairn.recall_get("m1").unwrap();
    assert!(moved.provenance_ok);
    assert_eq!(
        (
            moved.evidence[0].ordinal_start,
            moved.evidence[0].ordinal_end
        ),
        (104, 105)
    );
    assert!(!cairn.recall_get("m2").unwrap().provenance_ok);
}

#[test]
fn supersession_keeps_single_leaf_chains() {
    let (_d, cairn) = archive();
    let text = [
        line("old", SMALL, 0, 1, "Old advice", "a"),
        line("new", SMALL, 2, 3, "New advice", "b"),
        line("newer", SMALL, 4, 5, "Newer advice", "c"),
    ]
    .join("\n");
    cairn.recall_import(&text, false).unwrap();
    cairn.recall_supersede("old", "new").unwrap();
    let old = cairn.recall_get("old").unwrap();
    assert_eq!(
        (old.status, old.superseded_by_entry_id.as_str()),
        (Status::Archived, "new")
    );
    assert_eq!(cairn.recall_get("new").unwrap().supersedes_entry_id, "old");
    assert_eq!(old.lifecycle(), "superseded");
    // `old` is already superseded: no branching.
    assert!(
        cairn
            .recall_supersede("old", "newer")
            .unwrap_err()
            .to_string()
            .contains("already")
    );
    // The chain continues from its leaf.
    cairn.recall_supersede("new", "newer").unwrap();
    assert_eq!(
        cairn.recall_get("new").unwrap().lifecycle(),
        "replacement_superseded"
    );
    // A rejected entry cannot replace anything.
    cairn
        .recall_import(&line("rej", SMALL, 6, 7, "Rejected", "d"), false)
        .unwrap();
    cairn.recall_reject("rej").unwrap();
    assert!(
        cairn
            .recall_supersede("newer", "rej")
            .unwrap_err()
            .to_string()
            .contains("must be accepted")
    );
    assert!(cairn.recall_supersede("newer", "newer").is_err());
    // Import can supersede too (one transaction with the insert).
    let mut v: serde_json::Value =
        serde_json::from_str(&line("imp", SMALL, 8, 8, "Imported replacement", "e")).unwrap();
    v["supersedes_entry_id"] = json!("newer");
    assert_eq!(
        cairn.recall_import(&v.to_string(), false).unwrap().imported,
        1
    );
    assert_eq!(
        cairn.recall_get("newer").unwrap().superseded_by_entry_id,
        "imp"
    );
}

/// Write an unreviewed entry the way extraction does.
fn auto_entry(data: &std::path::Path, id: &str, title: &str, body: &str) {
    auto_entry_at(data, id, title, body, 0, 1);
}

/// An unreviewed extracted entry citing records `start..=end` of the small session.
fn auto_entry_at(data: &std::path::Path, id: &str, title: &str, body: &str, start: u32, end: u32) {
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let session: i64 = conn
        .query_row(
            "SELECT id FROM sessions WHERE session_id = ?1",
            [SMALL],
            |r| r.get(0),
        )
        .unwrap();
    let evidence =
        cairn_core::recall::evidence::bind(&conn, session, SMALL, start, end, &[], "").unwrap();
    let e = cairn_core::recall::store::NewEntry {
        id: id.into(),
        entry_type: cairn_core::recall::model::EntryType::Warning,
        scope: cairn_core::recall::model::Scope::Project,
        status: Status::Accepted,
        review_state: ReviewState::UnreviewedAuto,
        title: title.into(),
        body: body.into(),
        trigger: String::new(),
        confidence: Some(0.7),
        uncertainty: String::new(),
        project: "spotter".into(),
        cwd: String::new(),
        git_branch: String::new(),
        agent: "claude".into(),
        source_session_id: Some(session),
        source_episode_id: String::new(),
        source_run_id: "gen-1".into(),
        extractor_method: "turns-v1".into(),
        model: "test".into(),
        label: String::new(),
        transferable: false,
        provenance_ok: true,
        supersedes_entry_id: String::new(),
        evidence,
    };
    cairn_core::recall::store::insert(&conn, &e, "2026-11-01T00:00:00.000Z").unwrap();
}

#[test]
fn the_inbox_is_the_path_to_trust() {
    let (data, cairn) = archive();
    auto_entry(
        data.path(),
        "auto1",
        "Server refuses to start",
        "Check the port before starting phoenix",
    );
    auto_entry(
        data.path(),
        "auto2",
        "Ports conflict",
        "Another process holds port 4000",
    );
    auto_entry(
        data.path(),
        "auto3",
        "Duplicate of ports conflict",
        "Port 4000 is taken by another process",
    );
    let inbox: Vec<String> = cairn
        .recall_inbox(50)
        .unwrap()
        .into_iter()
        .map(|i| i.entry.id)
        .collect();
    assert_eq!(inbox.len(), 3);
    let trusted = Filters {
        trusted_only: true,
        ..Default::default()
    };
    assert!(query(&cairn, "phoenix port", trusted.clone()).is_empty());
    // Edit then accept: the new title is searchable and the entry is trusted.
    let edit = Edit {
        title: Some("Free port 4000 before starting Phoenix".into()),
        ..Default::default()
    };
    let accepted = cairn.recall_accept("auto1", Some(&edit)).unwrap();
    assert!(accepted.is_trusted() && accepted.reviewed_at.is_some());
    assert_eq!(query(&cairn, "free port", trusted.clone()), vec!["auto1"]);
    // Merge the duplicate into the one kept: gone from the inbox; the kept one still waits.
    cairn.recall_merge("auto3", "auto2").unwrap();
    assert_eq!(cairn.recall_get("auto3").unwrap().status, Status::Archived);
    assert!(!cairn.recall_get("auto2").unwrap().is_trusted());
    let left: Vec<String> = cairn
        .recall_inbox(50)
        .unwrap()
        .into_iter()
        .map(|i| i.entry.id)
        .collect();
    assert_eq!(left, vec!["auto2"]);
    cairn.recall_accept("auto2", None).unwrap();
    assert!(cairn.recall_inbox(50).unwrap().is_empty());
    // A rejection is undone only by a person's accept, which reviews it (a mis-click taken
    // back); until then it is archived and served nowhere.
    auto_entry(data.path(), "auto4", "Wrong", "nonsense");
    cairn.recall_reject("auto4").unwrap();
    assert_eq!(cairn.recall_get("auto4").unwrap().status, Status::Archived);
    assert!(cairn.recall_inbox(50).unwrap().is_empty());
    let back = cairn.recall_accept("auto4", None).unwrap();
    assert_eq!(back.status, Status::Accepted);
    assert!(back.is_trusted());
}

#[test]
fn ranking_prefers_rare_terms_title_matches_and_reports_its_breakdown() {
    let (_d, cairn) = archive();
    let text = [
        line(
            "common",
            SMALL,
            0,
            1,
            "CLI notes",
            "The cli prints help. The cli has flags.",
        ),
        line(
            "rare",
            SMALL,
            2,
            3,
            "Vector index",
            "The cli loads sqlite_vec for vectors.",
        ),
        line(
            "title",
            SMALL,
            4,
            5,
            "Flaky login test fix",
            "Retry was removed.",
        ),
        line(
            "body",
            SMALL,
            6,
            7,
            "Retry notes",
            "The flaky login test was fixed by waiting for the session cookie.",
        ),
    ]
    .join("\n");
    cairn.recall_import(&text, false).unwrap();
    assert_eq!(
        query(&cairn, "cli sqlite_vec", Filters::default())[0],
        "rare"
    );
    // Natural language, different word forms: stemming and stop words do the work.
    assert_eq!(
        query(
            &cairn,
            "how did we fix the flaky login tests?",
            Filters::default()
        )[..2],
        ["title", "body"]
    );
    let req = QueryRequest {
        text: "flaky login".into(),
        ..Default::default()
    };
    let resp = cairn.recall_query(&req, Surface::Query).unwrap();
    let b = &resp.results[0].breakdown;
    let sum = b.bm25f + b.phrase + b.recency + b.confidence + b.review + b.penalty;
    assert!((sum - resp.results[0].score).abs() < 1e-9);
    assert!((b.title + b.body + b.trigger + b.evidence - b.bm25f).abs() < 1e-9);
    assert_eq!(b.matched_terms, vec!["flaki", "login"]);
    assert!(
        b.phrase > 0.0,
        "adjacent query terms in order earn the phrase boost"
    );
    assert!(
        resp.query_id.is_some(),
        "queries are recorded in the ledger"
    );
}

/// A query holding a secret (an agent asking through MCP about what it read) is recorded in the
/// ledger redacted.
#[test]
fn the_ledger_records_a_query_redacted() {
    let (data, cairn) = archive();
    let aws = "AKIAIOSFODNN7EXAMPLE";
    let req = QueryRequest {
        text: format!("what is {aws} for"),
        ..Default::default()
    };
    let id = cairn
        .recall_query(&req, Surface::Query)
        .unwrap()
        .query_id
        .unwrap();
    let stored: String = rusqlite::Connection::open(data.path().join("cairn.db"))
        .unwrap()
        .query_row(
            "SELECT query_text FROM recall_query_events WHERE id = ?1",
            [&id],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(stored, "what is [REDACTED:aws-access-key] for");
}

#[test]
fn briefs_pack_within_budget_and_skip_what_does_not_fit() {
    let (_d, cairn) = archive();
    let long = "word ".repeat(2000);
    let text = [
        line("big", SMALL, 0, 1, "Phoenix big note", &long),
        line(
            "small1",
            SMALL,
            2,
            3,
            "Phoenix small note",
            "Restart phoenix after config changes.",
        ),
        line(
            "small2",
            SMALL,
            4,
            5,
            "Phoenix port",
            "Phoenix listens on 4000.",
        ),
    ]
    .join("\n");
    cairn.recall_import(&text, false).unwrap();
    let req = QueryRequest {
        text: "phoenix".into(),
        context: true,
        max_bytes: Some(700),
        filters: Filters {
            trusted_only: true,
            ..Default::default()
        },
        ..Default::default()
    };
    let resp = cairn.recall_query(&req, Surface::Brief).unwrap();
    let packed = resp.context.unwrap();
    assert!(packed.bytes <= 700, "{}", packed.bytes);
    assert!(packed.text.starts_with(brief::HEADER) && packed.text.ends_with(brief::FOOTER));
    assert!(packed.entry_ids.len() >= 2, "{packed:?}");
    // The big entry is shortened or skipped, never allowed to crowd out the small ones.
    assert!(
        packed.entry_ids.contains(&"small1".to_owned())
            && packed.entry_ids.contains(&"small2".to_owned())
    );
    // A token budget is honoured too.
    let req = QueryRequest {
        max_tokens: Some(60),
        max_bytes: Some(10_000),
        ..req
    };
    let packed = cairn
        .recall_query(&req, Surface::Brief)
        .unwrap()
        .context
        .unwrap();
    assert!(packed.estimated_tokens <= 60 && !packed.entry_ids.is_empty());
    // Nothing fits: a miss that says so.
    let req = QueryRequest {
        max_bytes: Some(10),
        ..req
    };
    assert_eq!(
        cairn
            .recall_query(&req, Surface::Brief)
            .unwrap()
            .miss_reason,
        "context_empty"
    );
}

/// The ranker checks the filters on its best candidates first and widens while too few pass.
/// With a filter that rejects nine entries in ten, it must still return exactly the entries the
/// unfiltered ranking would, in the same order, with the rejected ones left out.
#[test]
fn a_selective_filter_keeps_the_unfiltered_order_of_what_passes() {
    let (_d, cairn) = archive();
    // 200 entries of one session (so diversification keeps score order), each naming the
    // widget a different number of times in a body of a different length; every tenth is a
    // warning.
    let text: Vec<String> = (0..200)
        .map(|i| {
            let mut v: serde_json::Value = serde_json::from_str(&line(
                &format!("w{i:03}"),
                BIG,
                10,
                20,
                &format!("Note {i}"),
                &format!(
                    "{} {}",
                    "widget ".repeat(1 + i % 7),
                    "filler words about other things ".repeat(i % 13)
                ),
            ))
            .unwrap();
            if i % 10 == 3 {
                v["type"] = json!("warning");
            }
            v.to_string()
        })
        .collect();
    let report = cairn.recall_import(&text.join("\n"), false).unwrap();
    assert_eq!(
        (report.imported, report.errors.len()),
        (200, 0),
        "{report:?}"
    );

    let all = query(
        &cairn,
        "widget",
        Filters {
            limit: Some(500),
            ..Filters::default()
        },
    );
    assert_eq!(all.len(), 200);
    let warnings: Vec<String> = all
        .iter()
        .filter(|id| id[1..].parse::<u32>().unwrap() % 10 == 3)
        .cloned()
        .collect();
    for limit in [5, 10, 20] {
        let filtered = query(
            &cairn,
            "widget",
            Filters {
                entry_type: Some(cairn_core::recall::model::EntryType::Warning),
                limit: Some(limit),
                ..Filters::default()
            },
        );
        assert_eq!(filtered, warnings[..limit as usize], "limit {limit}");
    }
}

/// One trust predicate: the `trusted` every read entry carries (what the UI shows) is
/// `Entry::is_trusted`, and the entries `--trusted-only` serves (`TRUSTED_SQL`) are exactly
/// those (an import skips what is not transferable or has bad provenance, so what varies here
/// is the status).
#[test]
fn the_trusted_flag_and_the_trusted_only_filter_agree() {
    let (_d, cairn) = archive();
    let mut lines = Vec::new();
    for id in ["tt", "rejected"] {
        lines.push(line(id, SMALL, 0, 3, id, "a body"));
    }
    let report = cairn.recall_import(&lines.join("\n"), false).unwrap();
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    cairn.recall_reject("rejected").unwrap();
    let every: Vec<_> = [Status::Accepted, Status::Archived]
        .into_iter()
        .flat_map(|status| {
            cairn
                .recall_list(&Filters {
                    status: Some(status),
                    ..Default::default()
                })
                .unwrap()
        })
        .collect();
    assert_eq!(every.len(), 2);
    for e in &every {
        assert_eq!(e.trusted, e.is_trusted(), "{}", e.id);
        let json = serde_json::to_value(e).unwrap();
        assert_eq!(json["trusted"], e.trusted, "{}", e.id);
    }
    let mut flagged: Vec<_> = every
        .iter()
        .filter(|e| e.trusted)
        .map(|e| e.id.clone())
        .collect();
    let mut served: Vec<_> = cairn
        .recall_list(&Filters {
            trusted_only: true,
            ..Default::default()
        })
        .unwrap()
        .into_iter()
        .map(|e| e.id)
        .collect();
    flagged.sort();
    served.sort();
    assert_eq!(flagged, vec!["tt"]);
    assert_eq!(served, flagged);
}

fn records_of_small(data: &std::path::Path) -> Vec<(u32, String)> {
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let mut st = conn
        .prepare(
            "SELECT r.ordinal, COALESCE(r.text, r.tool_input, '') FROM records r JOIN sessions s ON s.id = r.session_id
             WHERE s.session_id = ?1 ORDER BY r.ordinal",
        )
        .unwrap();
    st.query_map([SMALL], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

#[test]
fn a_proposal_quotes_its_evidence_says_why_and_names_near_duplicates() {
    let (data, cairn) = archive();
    auto_entry_at(
        data.path(),
        "kept",
        "Ports conflict",
        "Another process holds port 4000",
        0,
        1,
    );
    cairn.recall_accept("kept", None).unwrap();
    auto_entry_at(
        data.path(),
        "dup",
        "Ports conflict again",
        "Port 4000 is held by another process",
        2,
        4,
    );
    auto_entry_at(
        data.path(),
        "other",
        "Beads workflow",
        "Use bd ready to pick the next bead",
        5,
        5,
    );
    let p = cairn.recall_proposal("dup").unwrap();
    assert_eq!(
        p.reason,
        Some(cairn_core::recall::review::InboxReason::Unreviewed)
    );
    // Why: new, and extracted by which model with what confidence.
    assert!(
        p.why
            .iter()
            .any(|w| w.starts_with("New: nobody has reviewed it")),
        "{:?}",
        p.why
    );
    assert!(
        p.why.iter().any(|w| w.starts_with(
            "Extracted by test (turns-v1 segmenter) from “mix phx.server doesnt seem to start”"
        ) && w.contains("confidence 0.70")),
        "{:?}",
        p.why
    );
    // The cited records, quoted as the archive holds them.
    assert_eq!(p.evidence.len(), 1);
    let ev = &p.evidence[0];
    assert_eq!(
        (ev.ordinal_start, ev.ordinal_end, ev.more_records),
        (2, 4, 0)
    );
    assert_eq!(ev.changed, None);
    // The untitled session is headed by its first request, as every view heads it.
    assert_eq!(ev.session_title, "mix phx.server doesnt seem to start");
    let records = records_of_small(data.path());
    let quoted: Vec<(u32, String)> = ev
        .records
        .iter()
        .map(|r| (r.ordinal, r.text.clone()))
        .collect();
    let expected: Vec<(u32, String)> = records[2..=4]
        .iter()
        .map(|(o, t)| {
            let t = cairn_core::text::printable(t).trim().to_owned();
            let cut = t.chars().count() > cairn_core::recall::proposal::MAX_QUOTE_CHARS;
            (
                *o,
                if cut {
                    quoted.iter().find(|q| q.0 == *o).unwrap().1.clone()
                } else {
                    t
                },
            )
        })
        .collect();
    assert_eq!(quoted, expected);
    assert!(
        ev.records
            .iter()
            .all(|r| r.text.chars().count() <= cairn_core::recall::proposal::MAX_QUOTE_CHARS + 1)
    );
    // The accepted entry saying the same is flagged; the unrelated one is not.
    let dups: Vec<&str> = p.duplicates.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(dups, vec!["kept"], "{:?}", p.duplicates);
    let d = &p.duplicates[0];
    assert!(
        d.trusted && d.lexical >= cairn_core::recall::similar::LEXICAL_MIN,
        "{d:?}"
    );
    assert!(
        p.duplicate_basis
            .contains("by their words only (similarity ≥ 0.5)"),
        "{}",
        p.duplicate_basis
    );
    assert!(
        cairn
            .recall_proposal("other")
            .unwrap()
            .duplicates
            .is_empty()
    );
    assert!(cairn.recall_proposal("nope").is_err());
}

#[test]
fn a_quoted_record_is_cleaned_and_a_changed_one_is_said_and_refuses_a_merge() {
    let (data, cairn) = archive();
    auto_entry_at(
        data.path(),
        "kept",
        "Ports conflict",
        "Another process holds port 4000",
        0,
        1,
    );
    auto_entry_at(
        data.path(),
        "dup",
        "Ports conflict again",
        "Port 4000 is held by another process",
        2,
        3,
    );
    let conn = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
    conn.execute(
        "UPDATE records SET text = ?1 WHERE ordinal = 2 AND session_id = (SELECT id FROM sessions WHERE session_id = ?2)",
        rusqlite::params!["evil \u{1b}[2J\u{1b}]0;title\u{7}text \u{202e}flip", SMALL],
    )
    .unwrap();
    let p = cairn.recall_proposal("dup").unwrap();
    let ev = &p.evidence[0];
    assert_eq!(ev.records[0].text, "evil text flip");
    let changed = ev.changed.as_deref().unwrap_or_default();
    assert!(changed.contains("changed"), "{changed}");
    // Its evidence no longer holds, so it cannot join another entry: nothing is written.
    let err = cairn.recall_merge("dup", "kept").unwrap_err().to_string();
    assert!(err.contains("reject it instead"), "{err}");
    assert_eq!(cairn.recall_get("dup").unwrap().status, Status::Accepted);
    assert_eq!(cairn.recall_get("kept").unwrap().evidence.len(), 1);
}

#[test]
fn merging_unions_the_evidence_removes_the_proposal_and_trusts_nothing_new() {
    let (data, cairn) = archive();
    auto_entry_at(
        data.path(),
        "kept",
        "Ports conflict",
        "Another process holds port 4000",
        0,
        1,
    );
    auto_entry_at(
        data.path(),
        "dup",
        "Ports conflict again",
        "Port 4000 is held by another process",
        2,
        3,
    );
    auto_entry_at(
        data.path(),
        "same",
        "Ports conflict once more",
        "Port 4000 is busy",
        0,
        1,
    );
    // Into an unreviewed entry: the union waits for review, trusted by nobody.
    let kept = cairn.recall_merge("dup", "kept").unwrap();
    let ranges: Vec<(u32, u32)> = kept
        .evidence
        .iter()
        .map(|e| (e.ordinal_start, e.ordinal_end))
        .collect();
    assert_eq!(ranges, vec![(0, 1), (2, 3)]);
    assert!(!kept.is_trusted());
    assert_eq!(kept.review_state, ReviewState::UnreviewedAuto);
    let dup = cairn.recall_get("dup").unwrap();
    assert_eq!(
        (dup.status, dup.superseded_by_entry_id.as_str()),
        (Status::Archived, "kept")
    );
    let inbox: Vec<String> = cairn
        .recall_inbox(50)
        .unwrap()
        .into_iter()
        .map(|i| i.entry.id)
        .collect();
    assert!(
        !inbox.contains(&"dup".to_owned()) && inbox.contains(&"kept".to_owned()),
        "{inbox:?}"
    );
    // Into a reviewed entry: it stays trusted, and a range it cites already is not doubled.
    cairn.recall_accept("kept", None).unwrap();
    let kept = cairn.recall_merge("same", "kept").unwrap();
    assert!(kept.is_trusted());
    assert_eq!(kept.evidence.len(), 2);
    // An archived entry cannot be merged again, nor an entry into itself.
    assert!(
        cairn
            .recall_merge("dup", "kept")
            .unwrap_err()
            .to_string()
            .contains("archived")
    );
    assert!(cairn.recall_merge("kept", "kept").is_err());
    // A reviewed entry is not folded into one nobody reviewed, nor replaced by one: agents
    // would stop being served it without a word. The other way round is what it says.
    auto_entry_at(
        data.path(),
        "fresh",
        "Ports conflict, said again",
        "Port 4000 is taken",
        4,
        5,
    );
    let err = cairn.recall_merge("kept", "fresh").unwrap_err().to_string();
    assert!(
        err.contains("merge the other way, fresh into kept"),
        "{err}"
    );
    let err = cairn
        .recall_supersede("kept", "fresh")
        .unwrap_err()
        .to_string();
    assert!(err.contains("accept fresh first"), "{err}");
    assert!(cairn.recall_get("kept").unwrap().is_trusted());
    assert!(cairn.recall_merge("fresh", "kept").unwrap().is_trusted());
}

/// Every text that mentions a port lands on one vector, every other on another: "same topic" by
/// vectors while the words differ.
struct Topic;

impl cairn_core::semantic::embed::Embedder for Topic {
    fn fingerprint(&self) -> &str {
        "topic/test"
    }
    fn dims(&self) -> usize {
        2
    }
    fn embed(
        &self,
        texts: &[&str],
        _kind: cairn_core::semantic::embed::InputKind,
    ) -> cairn_core::Result<Vec<f32>> {
        Ok(texts
            .iter()
            .flat_map(|t| {
                if t.to_lowercase().contains("port") {
                    [1.0, 0.0]
                } else {
                    [0.0, 1.0]
                }
            })
            .collect())
    }
    fn refresh_on_write(&self) -> bool {
        false
    }
    fn describe(&self) -> String {
        "topic".into()
    }
}

#[test]
fn near_duplicates_by_vectors_use_only_vectors_of_the_present_text() {
    use cairn_core::semantic::vectors::VectorStore;
    let (data, cairn) = archive();
    cairn.set_embedder(std::sync::Arc::new(Topic));
    auto_entry_at(
        data.path(),
        "dev",
        "Dev server listens on 4173",
        "Use the port 4173 locally",
        0,
        1,
    );
    auto_entry_at(
        data.path(),
        "gw",
        "Gateway collision",
        "The gateway owns port 3000",
        2,
        3,
    );
    auto_entry_at(
        data.path(),
        "beads",
        "Beads workflow",
        "Use bd ready to pick the next bead",
        4,
        5,
    );
    cairn
        .embeddings_build(VectorStore::Recall, false, &|_, _| {})
        .unwrap();
    let p = cairn.recall_proposal("dev").unwrap();
    let gw = p
        .duplicates
        .iter()
        .find(|d| d.id == "gw")
        .unwrap_or_else(|| panic!("{p:?}"));
    // Found by meaning, not by words.
    assert!(
        gw.lexical < cairn_core::recall::similar::LEXICAL_MIN,
        "{gw:?}"
    );
    assert_eq!(gw.semantic, Some(1.0));
    assert!(
        p.duplicates.iter().all(|d| d.id != "beads"),
        "{:?}",
        p.duplicates
    );
    assert!(
        p.duplicate_basis.contains("or their meaning (≥ 0.85)"),
        "{}",
        p.duplicate_basis
    );
    // Its text changes: its vector is dropped with the old text (this embedder does not refresh
    // on write), so it is no longer compared by vectors at all.
    cairn
        .recall_accept(
            "gw",
            Some(&Edit {
                body: Some("The gateway owns port 3000 and 3001".into()),
                ..Edit::default()
            }),
        )
        .unwrap();
    let p = cairn.recall_proposal("dev").unwrap();
    assert!(
        p.duplicates.iter().all(|d| d.id != "gw"),
        "{:?}",
        p.duplicates
    );
}

/// An agent naming its session by its own id (a proposal, a brief) means the session, not a
/// sub-agent or a compaction that carries the same id and was active later.
#[test]
fn a_session_named_by_its_agents_id_is_the_session_not_a_later_subagent() {
    let tmp = tempfile::tempdir().unwrap();
    let projects = tmp.path().join("projects");
    let fixture = support::fixtures().join("claude");
    for rel in [
        format!("{BIG}.jsonl"),
        format!("{BIG}/subagents/agent-aac57f5.jsonl"),
        format!("{BIG}/subagents/agent-acompact-946d2b.jsonl"),
    ] {
        support::copy_into(&fixture.join(&rel), &projects.join("-p"), &rel);
    }
    let data = tmp.path().join("data");
    support::read_from(&data, Agent::Claude, &projects);
    Cairn::open(&data)
        .unwrap()
        .sync(
            &cairn_core::SyncOptions::default(),
            &cairn_core::archive::capture::Quiet,
        )
        .unwrap();
    let db = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let sharing: i64 = db
        .query_row(
            "SELECT count(*) FROM sessions WHERE session_id = ?1",
            [BIG],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(sharing, 3, "the session, its sub-agent and its compaction");
    db.execute(
        "UPDATE sessions SET updated_at = '2099-01-01T00:00:00Z' WHERE session_id = ?1 AND relation IS NOT NULL",
        [BIG],
    )
    .unwrap();
    let main: String = db
        .query_row(
            "SELECT session_key FROM sessions WHERE session_id = ?1 AND relation IS NULL",
            [BIG],
            |r| r.get(0),
        )
        .unwrap();
    let facts = cairn_core::archive::store::session_facts(&db, BIG)
        .unwrap()
        .unwrap();
    assert_eq!(facts.key, main);
}

/// The window's Undo of a reject: the entry is where it was, one never reviewed in the inbox
/// again, a reviewed one trusted again only while its evidence holds.
#[test]
fn a_rejection_taken_back_puts_the_entry_where_it_was() {
    let (data, cairn) = archive();
    auto_entry(
        data.path(),
        "auto-r",
        "Ports conflict",
        "Another process holds port 4000",
    );
    cairn.recall_reject("auto-r").unwrap();
    assert!(cairn.recall_inbox(50).unwrap().is_empty());
    let back = cairn.recall_restore("auto-r").unwrap();
    assert_eq!(back.status, Status::Accepted);
    assert!(!back.is_trusted(), "an Undo is no review");
    let inbox: Vec<String> = cairn
        .recall_inbox(50)
        .unwrap()
        .into_iter()
        .map(|i| i.entry.id)
        .collect();
    assert_eq!(inbox, ["auto-r"]);

    // A reviewed entry is trusted again; nothing else can be taken back.
    cairn
        .recall_import(
            &line("t-r", SMALL, 0, 3, "Phoenix restart", "restart phoenix"),
            false,
        )
        .unwrap();
    cairn.recall_reject("t-r").unwrap();
    assert!(cairn.recall_restore("t-r").unwrap().is_trusted());
    let err = cairn.recall_restore("t-r").unwrap_err().to_string();
    assert!(err.contains("is not rejected"), "{err}");
    cairn
        .recall_import(
            &line("t-new", SMALL, 0, 3, "Phoenix restart, newer", "restart it"),
            false,
        )
        .unwrap();
    cairn.recall_supersede("t-r", "t-new").unwrap();
    let err = cairn.recall_restore("t-r").unwrap_err().to_string();
    assert!(err.contains("was replaced by t-new"), "{err}");
    // Archived otherwise (a retired generation's entry): not a rejection to take back.
    auto_entry(
        data.path(),
        "retired",
        "Old advice",
        "from a retired generation",
    );
    let conn = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
    conn.execute(
        "UPDATE recall_entries SET status = 'archived' WHERE id = 'retired'",
        [],
    )
    .unwrap();
    let err = cairn.recall_restore("retired").unwrap_err().to_string();
    assert!(err.contains("is not rejected"), "{err}");

    // Its evidence changed while it was rejected (no check reads archived entries): back, its
    // provenance revoked.
    cairn
        .recall_import(
            &line("t-ch", SMALL, 0, 3, "Phoenix port", "port 4000"),
            false,
        )
        .unwrap();
    cairn.recall_reject("t-ch").unwrap();
    conn.execute(
        "UPDATE records SET text = 'rewritten' WHERE ordinal = 1
         AND session_id = (SELECT id FROM sessions WHERE session_id = ?1)",
        [SMALL],
    )
    .unwrap();
    let back = cairn.recall_restore("t-ch").unwrap();
    assert!(!back.is_trusted() && !back.provenance_ok, "{back:?}");

    // Its sessions forgotten while it was rejected: back, but not trusted on nothing.
    cairn.recall_reject("t-new").unwrap();
    cairn
        .forget(&cairn_core::ForgetRequest {
            session: Some(SMALL.into()),
            ..Default::default()
        })
        .unwrap();
    let back = cairn.recall_restore("t-new").unwrap();
    assert!(!back.is_trusted() && !back.provenance_ok, "{back:?}");
    assert!(
        cairn
            .recall_inbox(50)
            .unwrap()
            .iter()
            .any(|i| i.entry.id == "t-new")
    );
}

/// Rejecting a replacement hands its place back to the entry it replaced (trusted as before,
/// its evidence checked again); taking the rejection back replaces it again.
#[test]
fn rejecting_a_replacement_hands_service_back_and_restoring_it_replaces_again() {
    let (_d, cairn) = archive();
    let mut v: serde_json::Value =
        serde_json::from_str(&line("new", SMALL, 2, 3, "New advice", "b")).unwrap();
    v["supersedes_entry_id"] = json!("old");
    let text = [line("old", SMALL, 0, 1, "Old advice", "a"), v.to_string()].join("\n");
    cairn.recall_import(&text, false).unwrap();
    let served = |c: &Cairn| {
        let f = Filters {
            trusted_only: true,
            ..Default::default()
        };
        query(c, "advice", f)
    };
    assert_eq!(served(&cairn), ["new"]);

    let r = cairn.recall_reject_handing_back("new").unwrap();
    assert_eq!(r.reinstated.as_ref().map(|e| e.id.as_str()), Some("old"));
    let old = cairn.recall_get("old").unwrap();
    assert!(
        old.is_trusted() && old.superseded_by_entry_id.is_empty(),
        "{old:?}"
    );
    assert_eq!(old.lifecycle(), "active");
    assert_eq!(served(&cairn), ["old"]);
    // The rejected replacement still says what it replaced, for its Undo.
    assert_eq!(cairn.recall_get("new").unwrap().supersedes_entry_id, "old");

    let back = cairn.recall_restore_replacing("new").unwrap();
    assert!(back.entry.is_trusted(), "{back:?}");
    // The core says what it replaces again (the CLI and the window print that).
    assert_eq!(back.replaces.as_ref().map(|e| e.id.as_str()), Some("old"));
    assert_eq!(back.replaces.map(|e| e.status), Some(Status::Archived));
    let old = cairn.recall_get("old").unwrap();
    assert_eq!(
        (old.status, old.superseded_by_entry_id.as_str()),
        (Status::Archived, "new")
    );
    assert_eq!(served(&cairn), ["new"]);

    // Rejected again, then the old one rejected too: restoring the replacement serves it
    // alone, and it no longer claims to replace a rejected entry.
    cairn.recall_reject("new").unwrap();
    cairn.recall_reject("old").unwrap();
    assert!(served(&cairn).is_empty());
    let back = cairn.recall_restore_replacing("new").unwrap();
    assert_eq!(back.replaces, None, "it replaces a rejected entry no more");
    assert_eq!(served(&cairn), ["new"]);
    assert_eq!(cairn.recall_get("new").unwrap().supersedes_entry_id, "");
    // And the old rejection can be taken back on its own.
    assert!(cairn.recall_restore("old").unwrap().is_trusted());
}

/// `old` ← `mid` ← `new` (each supersedes the one before), all reviewed, by import.
fn import_chain(cairn: &Cairn) {
    let mut mid: serde_json::Value =
        serde_json::from_str(&line("mid", SMALL, 2, 3, "Mid advice", "b")).unwrap();
    mid["supersedes_entry_id"] = json!("old");
    let mut new: serde_json::Value =
        serde_json::from_str(&line("new", SMALL, 4, 5, "New advice", "c")).unwrap();
    new["supersedes_entry_id"] = json!("mid");
    let text = [
        line("old", SMALL, 0, 1, "Old advice", "a"),
        mid.to_string(),
        new.to_string(),
    ]
    .join("\n");
    cairn.recall_import(&text, false).unwrap();
}

/// The entries agents are served for "advice" (trusted only).
fn served_advice(cairn: &Cairn) -> Vec<String> {
    let f = Filters {
        trusted_only: true,
        ..Default::default()
    };
    let mut ids = query(cairn, "advice", f);
    ids.sort();
    ids
}

/// Rejecting the middle of a chain serves nothing new: the leaf still serves alone, and the
/// chain closes over the rejected link, so rejecting the leaf later hands service to the entry
/// nobody rejected. The rejected link cannot be taken back while the leaf serves; once it does
/// not, it is taken back and replaces the entry it had replaced again.
#[test]
fn rejecting_the_middle_of_a_chain_keeps_one_entry_served() {
    let (_d, cairn) = archive();
    import_chain(&cairn);
    assert_eq!(served_advice(&cairn), ["new"]);

    let r = cairn.recall_reject_handing_back("mid").unwrap();
    assert_eq!(r.reinstated, None, "{r:?}");
    assert_eq!(r.entry.status, Status::Archived);
    assert_eq!(served_advice(&cairn), ["new"], "the root is not served too");
    let old = cairn.recall_get("old").unwrap();
    assert_eq!(
        (old.status, old.superseded_by_entry_id.as_str()),
        (Status::Archived, "new")
    );
    assert_eq!(cairn.recall_get("new").unwrap().supersedes_entry_id, "old");
    // The rejected link keeps its history.
    let mid = cairn.recall_get("mid").unwrap();
    assert_eq!(
        (
            mid.supersedes_entry_id.as_str(),
            mid.superseded_by_entry_id.as_str()
        ),
        ("old", "new")
    );
    let err = cairn.recall_restore("mid").unwrap_err().to_string();
    assert!(
        err.contains("left that chain when it was rejected"),
        "{err}"
    );
    let err = cairn.recall_restore("old").unwrap_err().to_string();
    assert!(
        err.contains("rejecting new hands its place back to old"),
        "{err}"
    );

    // The leaf rejected: the root serves, not the rejected link.
    let r = cairn.recall_reject_handing_back("new").unwrap();
    assert_eq!(r.reinstated.map(|e| e.id).as_deref(), Some("old"));
    assert_eq!(served_advice(&cairn), ["old"]);

    // The rejected link taken back: it serves, replacing the root again.
    let back = cairn.recall_restore_replacing("mid").unwrap();
    assert!(back.entry.is_trusted(), "{back:?}");
    assert_eq!(back.replaces.map(|e| e.id).as_deref(), Some("old"));
    assert_eq!(served_advice(&cairn), ["mid"]);
}

/// Rejecting the root of a chain changes nothing served, and the chain no longer claims it:
/// the middle entry is what the leaf hands back to.
#[test]
fn rejecting_the_root_of_a_chain_unlinks_it() {
    let (_d, cairn) = archive();
    import_chain(&cairn);
    let r = cairn.recall_reject_handing_back("old").unwrap();
    assert_eq!(r.reinstated, None);
    assert_eq!(served_advice(&cairn), ["new"]);
    assert_eq!(cairn.recall_get("mid").unwrap().supersedes_entry_id, "");
    let r = cairn.recall_reject_handing_back("new").unwrap();
    assert_eq!(r.reinstated.map(|e| e.id).as_deref(), Some("mid"));
    assert_eq!(served_advice(&cairn), ["mid"]);
}

/// Taking back the accept of a replacement of a reviewed entry hands that entry its place back
/// (a reviewed entry is replaced only by a reviewed one): agents are still served the reviewed
/// word. Accepting the replacement again replaces it again.
#[test]
fn taking_back_a_replacements_accept_hands_service_back() {
    let (data, cairn) = archive();
    let mut v: serde_json::Value =
        serde_json::from_str(&line("new", SMALL, 2, 3, "New advice", "b")).unwrap();
    v["supersedes_entry_id"] = json!("old");
    let text = [line("old", SMALL, 0, 1, "Old advice", "a"), v.to_string()].join("\n");
    cairn.recall_import(&text, false).unwrap();
    assert_eq!(served_advice(&cairn), ["new"]);

    let u = cairn
        .recall_unaccept_handing_back("new", ReviewState::UnreviewedAuto)
        .unwrap();
    assert_eq!(u.entry.review_state, ReviewState::UnreviewedAuto);
    assert_eq!(u.reinstated.map(|e| e.id).as_deref(), Some("old"));
    assert_eq!(served_advice(&cairn), ["old"]);
    let new = cairn.recall_get("new").unwrap();
    assert_eq!(new.supersedes_entry_id, "old", "kept for the next accept");
    assert!(
        cairn
            .recall_inbox(50)
            .unwrap()
            .iter()
            .any(|i| i.entry.id == "new")
    );

    cairn.recall_accept("new", None).unwrap();
    assert_eq!(served_advice(&cairn), ["new"]);
    let old = cairn.recall_get("old").unwrap();
    assert_eq!(
        (old.status, old.superseded_by_entry_id.as_str()),
        (Status::Archived, "new")
    );

    // A replacement of an entry nobody reviewed may still replace it unreviewed: it keeps
    // replacing it (nothing trusted was served through it).
    auto_entry(data.path(), "auto-old", "Auto advice", "unreviewed advice");
    cairn
        .recall_import(&line("rev", SMALL, 4, 5, "Reviewed advice", "d"), false)
        .unwrap();
    cairn.recall_supersede("auto-old", "rev").unwrap();
    let u = cairn
        .recall_unaccept_handing_back("rev", ReviewState::UnreviewedAuto)
        .unwrap();
    assert_eq!(u.reinstated, None);
    let old = cairn.recall_get("auto-old").unwrap();
    assert_eq!(
        (old.status, old.superseded_by_entry_id.as_str()),
        (Status::Archived, "rev")
    );
}

/// A chain stranded before rejections handed service back (the replacement rejected, the old
/// entry still archived as replaced) can be taken back by a person; while the replacement is
/// served, reviewing the old one is refused, saying what to do.
#[test]
fn an_entry_whose_replacement_is_no_longer_served_can_be_taken_back() {
    let (data, cairn) = archive();
    let mut v: serde_json::Value =
        serde_json::from_str(&line("new", SMALL, 2, 3, "New advice", "b")).unwrap();
    v["supersedes_entry_id"] = json!("old");
    let text = [line("old", SMALL, 0, 1, "Old advice", "a"), v.to_string()].join("\n");
    cairn.recall_import(&text, false).unwrap();
    let err = cairn.recall_restore("old").unwrap_err();
    assert!(
        err.to_string()
            .contains("rejecting new hands its place back to old"),
        "{err}"
    );
    // As an older Cairn left it: `new` rejected, `old` still pointing at it.
    let conn = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
    conn.execute(
        "UPDATE recall_entries SET status = 'archived', rejected_at = '2026-01-01T00:00:00Z' WHERE id = 'new'",
        [],
    )
    .unwrap();
    drop(conn);
    let old = cairn.recall_restore("old").unwrap();
    assert!(
        old.is_trusted() && old.superseded_by_entry_id.is_empty(),
        "{old:?}"
    );
}

/// A forget that takes every piece of a replacement's evidence hands its place back too: the
/// replacement waits in the inbox, the entry it replaced is served again.
#[test]
fn a_replacement_whose_evidence_is_forgotten_hands_service_back() {
    let (_d, cairn) = archive();
    let mut v: serde_json::Value =
        serde_json::from_str(&line("new", BIG, 2, 3, "New advice", "b")).unwrap();
    v["supersedes_entry_id"] = json!("old");
    let text = [line("old", SMALL, 0, 1, "Old advice", "a"), v.to_string()].join("\n");
    cairn.recall_import(&text, false).unwrap();
    let plan = cairn
        .forget_preview(&cairn_core::ForgetRequest {
            session: Some(BIG.into()),
            ..Default::default()
        })
        .unwrap();
    assert!(
        plan.recall_entries
            .iter()
            .any(|e| e.id == "new" && e.back_to_inbox && e.hands_back_to.as_deref() == Some("old")),
        "the plan says which entry is served again: {:?}",
        plan.recall_entries
    );
    cairn
        .forget(&cairn_core::ForgetRequest {
            session: Some(BIG.into()),
            ..Default::default()
        })
        .unwrap();
    let old = cairn.recall_get("old").unwrap();
    assert!(old.is_trusted(), "{old:?}");
    let new = cairn.recall_get("new").unwrap();
    assert!(
        !new.is_trusted() && new.supersedes_entry_id.is_empty(),
        "{new:?}"
    );
}

/// A reviewer's edit is cleaned as every other text of an entry is: no terminal escape or bidi
/// control reaches the database.
#[test]
fn a_reviewers_edit_is_made_printable() {
    let (data, cairn) = archive();
    auto_entry(data.path(), "e1", "Deploys", "how deploys work");
    let edit = Edit {
        title: Some("X \u{202e}evil\u{202c} \u{1b}]0;pwned\u{7}".to_owned()),
        body: Some("line \u{1b}[31mred\u{1b}[0m\u{2066}".to_owned()),
        ..Default::default()
    };
    let e = cairn.recall_accept("e1", Some(&edit)).unwrap();
    assert_eq!(e.title, "X evil");
    assert_eq!(e.body, "line red");
    let stored = recall_tables(data.path());
    for bad in ['\u{1b}', '\u{202e}', '\u{2066}', '\u{7}'] {
        assert!(!stored.contains(bad), "{bad:?} in {stored}");
    }
}

/// What the ledger says an agent was answered over MCP is what applied where it asked: an entry
/// scoped to another branch, read and then left out by the session-start rule, is not logged as
/// shown to it.
#[test]
fn the_ledger_holds_the_entries_that_applied_where_the_agent_asked() {
    let (data, cairn) = archive();
    let mut other: serde_json::Value =
        serde_json::from_str(&line("on-feat", SMALL, 2, 3, "Feature advice", "b")).unwrap();
    other["scope"] = json!("branch");
    other["git_branch"] = json!("feat/x");
    let text = [
        line("wide", SMALL, 0, 1, "Project advice", "a"),
        other.to_string(),
    ]
    .join("\n");
    cairn.recall_import(&text, false).unwrap();
    let project = cairn.recall_get("wide").unwrap().project;
    assert_eq!(cairn.recall_get("on-feat").unwrap().project, project);
    let mut writer = cairn.agent_writer().unwrap();
    let req = QueryRequest {
        text: String::new(),
        filters: Filters {
            trusted_only: true,
            ..Filters::default()
        },
        context: true,
        ..QueryRequest::default()
    };
    let reach = cairn_core::recall::memory::Reach {
        project: Some(project),
        branch: Some("main".into()),
        root: None,
    };
    let resp = cairn
        .agent_recall_applying(&req, &reach, Surface::Brief, Some(&mut writer))
        .unwrap()
        .response;
    let shown: Vec<&str> = resp.results.iter().map(|r| r.entry.id.as_str()).collect();
    assert_eq!(shown, ["wide"]);
    let id = resp.query_id.expect("logged");
    let conn = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
    let logged: Vec<(String, bool)> = conn
        .prepare(
            "SELECT entry_id, packed FROM recall_query_exposures WHERE query_id = ?1 ORDER BY rank",
        )
        .unwrap()
        .query_map([&id], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(logged, [("wide".to_owned(), true)]);
    let counted: (i64, i64) = conn
        .query_row(
            "SELECT result_count, packed_count FROM recall_query_events WHERE id = ?1",
            [&id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(counted, (1, 1));
}

/// git in `repo` with a fixed identity, its author and commit time `when` (so a commit is "later"
/// than the evidence without waiting for the clock).
fn git_at(repo: &std::path::Path, args: &[&str], when: &str) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .env("GIT_AUTHOR_NAME", "T")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "T")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .env("GIT_AUTHOR_DATE", when)
        .env("GIT_COMMITTER_DATE", when)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A real repository, a session that edited `alpha.txt` and `beta.txt` in it on 1 March, and an
/// accepted entry (imported as reviewed: trusted) citing both: (its folder, the repository,
/// the archive, the entry's id).
fn two_file_case() -> (tempfile::TempDir, std::path::PathBuf, Cairn, String) {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let repo = std::fs::canonicalize(&repo).unwrap();
    git_at(&repo, &["init", "-q", "-b", "main"], "2026-02-01T00:00:00Z");
    std::fs::write(repo.join("alpha.txt"), "port = 3000\n").unwrap();
    std::fs::write(repo.join("beta.txt"), "port = 3000\n").unwrap();
    git_at(&repo, &["add", "-A"], "2026-02-01T00:00:00Z");
    git_at(
        &repo,
        &["commit", "-q", "-m", "init"],
        "2026-02-01T00:00:00Z",
    );

    // The session edits both files (Claude Code's Edit tool), on 1 March.
    let sid = "stale-two-files";
    let mut lines = Vec::new();
    let mut n = 0;
    let mut push = |v: serde_json::Value| {
        n += 1;
        let mut v = v;
        v.as_object_mut().unwrap().extend(
            json!({"sessionId": sid, "cwd": repo, "gitBranch": "main", "version": "2.1.39",
                "uuid": format!("{sid}-{n}"), "timestamp": format!("2026-03-01T10:00:{n:02}.000Z")})
            .as_object()
            .unwrap()
            .clone(),
        );
        lines.push(v.to_string());
    };
    push(
        json!({"type": "user", "message": {"role": "user", "content": "Move the dev server to port 4173 in both configs"}}),
    );
    for (i, file) in ["alpha.txt", "beta.txt"].iter().enumerate() {
        let path = repo.join(file);
        let id = format!("toolu_{i}");
        push(
            json!({"type": "assistant", "message": {"id": format!("msg_{i}"), "role": "assistant", "model": "m",
            "content": [{"type": "tool_use", "id": id, "name": "Edit",
                "input": {"file_path": path, "old_string": "port = 3000", "new_string": "port = 4173"}}]}}),
        );
        push(
            json!({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": "The file has been updated."}]}}),
        );
    }
    push(
        json!({"type": "assistant", "message": {"id": "msg_done", "role": "assistant", "model": "m",
        "content": [{"type": "text", "text": "Both configs now use port 4173."}]}}),
    );
    let file = tmp.path().join("claude/p").join(format!("{sid}.jsonl"));
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();

    let cairn = Cairn::open(tmp.path().join("data")).unwrap();
    support::capture(&cairn, &[support::main_file(Agent::Claude, &file)]);
    let text = line(
        "stale-e",
        sid,
        0,
        5,
        "Dev server port",
        "The dev server listens on 4173.",
    );
    let report = cairn.recall_import(&text, false).unwrap();
    assert_eq!((report.imported, report.errors.len()), (1, 0), "{report:?}");
    let listed = cairn.recall_list(&Filters::default()).unwrap();
    assert_eq!(listed.len(), 1);
    let id = listed[0].id.clone();
    let entry = cairn.recall_get(&id).unwrap();
    assert!(entry.is_trusted());
    let files: Vec<&str> = entry
        .evidence
        .iter()
        .flat_map(|v| v.files.iter().map(String::as_str))
        .collect();
    assert_eq!(files, ["alpha.txt", "beta.txt"], "the evidence cites both");
    (tmp, repo, cairn, id)
}

/// An accepted entry cites two files its session edited in a real repository; a later commit
/// changes one of them. The entry is flagged stale, and its note names that file only, not
/// every file the evidence cites.
#[test]
fn a_stale_note_names_only_the_files_the_later_commit_changed() {
    let (_tmp, repo, cairn, id) = two_file_case();

    // Nothing was committed since.
    assert_eq!(cairn.recall_check_stale().unwrap().total(), 0);
    std::fs::write(repo.join("alpha.txt"), "port = 5173\n").unwrap();
    git_at(
        &repo,
        &["commit", "-q", "-am", "alpha moves on"],
        "2026-04-01T09:00:00Z",
    );
    let commit = git_at(
        &repo,
        &["rev-parse", "--short=7", "HEAD"],
        "2026-04-01T09:00:00Z",
    );
    assert_eq!(cairn.recall_check_stale().unwrap().total(), 1);
    let entry = cairn.recall_get(&id).unwrap();
    assert!(entry.stale);
    assert_eq!(
        entry.stale_note.as_deref(),
        Some(
            format!(
                "alpha.txt changed in {} (\"alpha moves on\") after this was recorded",
                commit.trim()
            )
            .as_str()
        )
    );
}

/// A trusted entry whose cited file changes is back in the review inbox (PRODUCT.md §3): no
/// reader serves it as trusted until a person accepts it again. The session-start brief, the
/// trusted-only list, query and stats, and the entry itself all say so through one predicate;
/// the check counts it apart from an unreviewed entry it only marks.
#[test]
fn a_stale_entry_is_served_as_trusted_nowhere_until_accepted_again() {
    let (tmp, repo, cairn, id) = two_file_case();
    // A second entry on the same evidence, its accept taken back: unreviewed, flagged too,
    // never served.
    let text = line(
        "stale-u",
        "stale-two-files",
        0,
        5,
        "Both configs share a port",
        "alpha and beta use the same port.",
    );
    let report = cairn.recall_import(&text, false).unwrap();
    assert_eq!((report.imported, report.errors.len()), (1, 0), "{report:?}");
    cairn
        .recall_unaccept("stale-u", ReviewState::UnreviewedAuto)
        .unwrap();
    let data = tmp.path().join("data");
    let hook = json!({"hook_event_name": "SessionStart", "cwd": repo}).to_string();
    let brief = || {
        Cairn::session_start_brief(&data, &hook, &repo)
            .unwrap()
            .map(|b| b.entry_ids)
            .unwrap_or_default()
    };
    let trusted = Filters {
        trusted_only: true,
        ..Default::default()
    };
    let served = |cairn: &Cairn| {
        (
            cairn
                .recall_list(&trusted)
                .unwrap()
                .into_iter()
                .map(|e| e.id)
                .collect::<Vec<_>>(),
            query(cairn, "dev server port", trusted.clone()),
            cairn.recall_stats(&Filters::default()).unwrap().trusted,
            brief(),
        )
    };
    // Served everywhere while its files stand.
    let one = vec![id.clone()];
    assert_eq!(served(&cairn), (one.clone(), one.clone(), 1, one.clone()));

    std::fs::write(repo.join("alpha.txt"), "port = 5173\n").unwrap();
    git_at(
        &repo,
        &["commit", "-q", "-am", "alpha moves on"],
        "2026-04-01T09:00:00Z",
    );
    let flagged = cairn.recall_check_stale().unwrap();
    assert_eq!((flagged.trusted, flagged.untrusted), (1, 1), "{flagged:?}");
    let entry = cairn.recall_get(&id).unwrap();
    assert!(
        entry.stale && !entry.trusted && !entry.is_trusted(),
        "{entry:?}"
    );
    assert_eq!(served(&cairn), (vec![], vec![], 0, vec![]));
    let inbox = cairn.recall_inbox(50).unwrap();
    let item = inbox
        .iter()
        .find(|i| i.entry.id == id)
        .expect("in the inbox");
    assert_eq!(item.reason, cairn_core::recall::review::InboxReason::Stale);

    // A person accepts it again: trusted and served again, the stale mark cleared.
    let back = cairn.recall_accept(&id, None).unwrap();
    assert!(back.trusted && !back.stale, "{back:?}");
    assert_eq!(served(&cairn), (one.clone(), one.clone(), 1, one));
}
