//! `recall_query` gives each entry's body whole: the entry is the knowledge the agent asked
//! for, where the rule cuts any other long string to its head and tail. The answer stays within
//! its byte cap by holding fewer entries a page (`next_cursor` for the rest); only a body
//! longer than an answer is cut, keeping its head and tail and saying how much went between.
//! A brief, which takes no cursor, offers none.

use super::*;

/// Reviewed procedures of the fixture's session `x1`, one for each body, titled
/// `Procedure <i> of the worker`.
fn entries_with(f: &Fixture, bodies: &[String]) {
    let lines: String = bodies
        .iter()
        .enumerate()
        .map(|(i, body)| {
            format!(
                "{}\n",
                json!({"candidate_id": format!("w{i}"), "session_id": "x1", "type": "procedure",
                    "scope": "project", "title": format!("Procedure {i} of the worker"),
                    "body": body, "transferable": true, "provenance_ok": true, "label": "correct",
                    "evidence": {"ordinal_start": 0, "ordinal_end": 0}})
            )
        })
        .collect();
    let report = Cairn::open(f._tmp.path().join("data"))
        .unwrap()
        .recall_import(&lines, false)
        .unwrap();
    assert_eq!(report.imported as usize, bodies.len(), "{report:?}");
}

/// A body of about `chars` characters: numbered steps between a first and a last line, the
/// steps naming a folder outside the repository (which every answer hides).
fn steps(i: usize, chars: usize) -> String {
    let mut body = format!("First line of procedure {i}.\n");
    let mut n = 0;
    while body.len() < chars {
        body.push_str(&format!(
            "Step {n}: drain the queue in /srv/ops-private-{i}/queue, then restart the worker.\n"
        ));
        n += 1;
    }
    body.push_str(&format!("Last line of procedure {i}."));
    body
}

/// The answer's text as it left, and the answer parsed.
fn query_answer(f: &Fixture, v: Value) -> (String, Value) {
    let res = f.server.recall_query(args(v).unwrap()).unwrap();
    let text: String = res
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    let parsed = serde_json::from_str(&text).unwrap();
    (text, parsed)
}

#[test]
fn an_entry_body_arrives_whole_and_still_outbound() {
    let f = fixture();
    let body = format!(
        "{}\nThe key \u{1b}[31mAKIA{}\u{1b}[0m is not needed.",
        steps(0, 12_000),
        hidden_key_tail()
    );
    entries_with(&f, &[body]);
    let (sent, q) = query_answer(&f, json!({"query": "procedure worker"}));
    assert!(sent.len() <= bound::MAX_BYTES, "{} bytes", sent.len());
    let entry = q["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["title"] == "Procedure 0 of the worker")
        .unwrap_or_else(|| panic!("{q}"));
    let got = entry["body"].as_str().unwrap();
    // Whole: far past the longest string of any other answer, every step in it, in order.
    assert!(got.chars().count() > 5 * bound::MAX_STRING, "{}", got.len());
    assert!(!got.contains("characters cut"), "{got}");
    assert!(got.starts_with("First line of procedure 0."), "{got}");
    let last = got.matches("Step ").count();
    assert!(last > 100, "{last}");
    for n in 0..last {
        assert!(got.contains(&format!("Step {n}: drain")), "step {n}");
    }
    assert!(got.contains("Last line of procedure 0."), "{got}");
    // Still cleaned and redacted: no escape sequence, no key, no folder outside the repository.
    assert!(!got.contains('\u{1b}'), "{got}");
    assert!(!got.contains(&hidden_key_tail()), "{got}");
    assert!(!got.contains("ops-private"), "{got}");
    assert!(got.contains("[REDACTED:path]"), "{got}");
    assert!(q.get("next_cursor").is_some_and(Value::is_null), "{q}");
}

/// Bodies too long to share one answer come on fewer entries a page: each whole, the rest at
/// `next_cursor`, every answer within the cap, every entry once.
#[test]
fn a_page_holds_fewer_entries_rather_than_cut_bodies() {
    let f = fixture();
    let bodies: Vec<String> = (0..6).map(|i| steps(i, 18_000)).collect();
    entries_with(&f, &bodies);
    let mut seen = Vec::new();
    let mut cursor = Value::Null;
    let mut pages = 0;
    loop {
        let (sent, q) = query_answer(
            &f,
            json!({"query": "", "limit": 10, "cursor": cursor.clone()}),
        );
        assert!(sent.len() <= bound::MAX_BYTES, "{} bytes", sent.len());
        pages += 1;
        let entries = q["entries"].as_array().unwrap();
        assert!(!entries.is_empty(), "{q}");
        for e in entries {
            let body = e["body"].as_str().unwrap();
            assert!(!body.contains("characters cut"), "{body}");
            if let Some(i) = (0..6).find(|i| e["title"] == format!("Procedure {i} of the worker")) {
                assert!(body.starts_with(&format!("First line of procedure {i}.")));
                assert!(body.ends_with(&format!("Last line of procedure {i}.")));
            }
            seen.push(e["id"].as_str().unwrap().to_owned());
        }
        cursor = q["next_cursor"].clone();
        if cursor.is_null() {
            break;
        }
        assert!(pages < 10, "{q}");
    }
    // Fewer than the ten asked for a page: the bodies, not the limit, ended each page.
    assert!(pages >= 3, "{pages} pages");
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), seen.len(), "{seen:?}");
    assert_eq!(seen.len(), 7, "the six and the fixture's own: {seen:?}");
}

/// A body no answer holds (the store allows 20,000 characters; in a script of three bytes a
/// character that is 60 KB) keeps its head and its tail within the cap, saying how many
/// characters went between.
#[test]
fn a_body_longer_than_an_answer_keeps_its_head_and_tail() {
    let f = fixture();
    let body = format!(
        "Begin with the ledger.\n{}\nFinish with the check.",
        "手順を守ってから次へ進む。".repeat(1_500)
    );
    let chars = body.chars().count();
    assert!(chars <= 20_000 && body.len() > bound::MAX_BYTES, "{chars}");
    entries_with(&f, &[body]);
    let (sent, q) = query_answer(&f, json!({"query": "ledger"}));
    assert!(sent.len() <= bound::MAX_BYTES, "{} bytes", sent.len());
    let got = q["entries"][0]["body"].as_str().unwrap();
    assert!(got.starts_with("Begin with the ledger.\n手順"), "{got}");
    assert!(got.ends_with("次へ進む。\nFinish with the check."), "{got}");
    let (head, rest) = got.split_once("\n[… ").unwrap();
    let (cut, tail) = rest.split_once(" characters cut …]\n").unwrap();
    let cut: usize = cut.parse().unwrap();
    assert_eq!(head.chars().count() + cut + tail.chars().count(), chars);
    // Most of the answer is the body: it was cut to the room there was, no shorter.
    assert!(got.len() > bound::MAX_BYTES * 3 / 4, "{} bytes", got.len());
    // Head and tail in the proportions of every cut string.
    let (h, t) = (head.len() as f64, tail.len() as f64);
    assert!((2.0..3.0).contains(&(h / t)), "{h} {t}");
}

/// A brief takes no cursor (its schema has none: what it packed is all it gives, `omitted`
/// counts the rest and `recall_query` pages through it), so no brief offers one; a list cut for
/// the answer's budget is counted in `lists_cut` instead.
#[test]
fn a_brief_offers_no_cursor() {
    let f = fixture();
    entries_with(&f, &(0..30).map(|i| steps(i, 2_000)).collect::<Vec<_>>());
    for v in [
        json!({}),
        json!({"max_tokens": BRIEF_TOKENS.1}),
        json!({"max_tokens": BRIEF_TOKENS.1, "all_repos": true}),
    ] {
        let res = f.server.recall_brief(args(v.clone()).unwrap());
        let b = body(res);
        assert!(b.get("next_cursor").is_none(), "{v}: {b}");
        assert!(
            b["entries"].as_array().is_some_and(|e| !e.is_empty()),
            "{b}"
        );
    }
    // The list the brief gives beside its text, too long for the room left: cut and counted.
    let entries: Vec<Value> = (0..400)
        .map(|i| json!({"id": format!("entry-{i:04}"), "evidence": ["x".repeat(300)]}))
        .collect();
    let list = List {
        key: "entries",
        items: entries,
        whole: None,
    };
    let b = body(f.server.answer_cleaned(
        json!({"text": "packed"}),
        list,
        Rest::Counted { of: 400 },
    ));
    assert!(b.get("next_cursor").is_none(), "{b}");
    let listed = b["entries"].as_array().unwrap().len();
    assert!((1..400).contains(&listed), "{listed}");
    assert_eq!(b["lists_cut"]["/entries"], 400 - listed as u64, "{b}");
}
