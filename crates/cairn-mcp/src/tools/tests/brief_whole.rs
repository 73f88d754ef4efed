//! `recall_brief` packs its entries to the agent's own budget (`max_tokens`), and the brief it
//! packed is what arrives: whole (not cut in the middle as a long string of any other answer
//! is), still cleaned and redacted, its `estimated_tokens` the size of the text sent, and the
//! answer within its byte cap at the largest budget.

use super::*;

/// `n` reviewed procedures of the fixture's session `x1`, each with a body of about `chars`
/// characters holding a folder outside the repository, which every answer hides.
fn long_entries(f: &Fixture, n: usize, chars: usize) {
    let lines: String = (0..n)
        .map(|i| {
            let step = format!("Step {i}: restart the worker after the queue drains. ");
            let body = format!(
                "Logs are in /srv/ops-private-{i}/worker.log. {}",
                step.repeat(chars / step.len())
            );
            format!(
                "{}\n",
                json!({"candidate_id": format!("p{i}"), "session_id": "x1", "type": "procedure",
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
    assert_eq!(report.imported as usize, n, "{report:?}");
}

/// The answer's text as it left, and the answer parsed.
fn brief_answer(f: &Fixture, v: Value) -> (String, Value) {
    let res = f.server.recall_brief(args(v).unwrap()).unwrap();
    let text: String = res
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    let parsed = serde_json::from_str(&text).unwrap();
    (text, parsed)
}

#[test]
fn a_brief_arrives_whole_within_its_own_budget() {
    let f = fixture();
    long_entries(&f, 5, 700);
    let (_, b) = brief_answer(&f, json!({"max_tokens": 4000}));
    let text = b["text"].as_str().unwrap();
    // Every entry the brief lists is in its text, whole: nothing cut between them.
    let listed = b["entries"].as_array().unwrap().len();
    assert_eq!(listed, 6, "the five and the fixture's own: {b}");
    assert_eq!(text.matches("   id=").count(), listed, "{text}");
    assert!(!text.contains("characters cut"), "{text}");
    for i in 0..5 {
        assert!(
            text.contains(&format!("Procedure {i} of the worker")),
            "{text}"
        );
    }
    assert!(text.contains("End of Cairn recall"), "{text}");
    assert!(text.chars().count() > bound::MAX_STRING, "{}", text.len());
    // Still made outbound: the folders outside the repository hidden.
    assert!(!text.contains("ops-private"), "{text}");
    assert!(text.contains("[REDACTED:path]"), "{text}");
    // Its size is the size of the text sent, within the budget asked for.
    let tokens = b["estimated_tokens"].as_u64().unwrap() as usize;
    assert_eq!(tokens, text.len().div_ceil(4), "{b}");
    assert!(tokens <= 4000, "{tokens}");
    assert_eq!(b["omitted"], 0, "{b}");
}

/// At the largest budget the brief is packed to half the answer's bytes, and the answer with
/// its list stays within the most an answer carries; what did not fit is counted and said.
#[test]
fn the_largest_brief_fits_the_answer_and_says_what_did_not_fit() {
    let f = fixture();
    long_entries(&f, 30, 2_000);
    let (sent, b) = brief_answer(&f, json!({"max_tokens": BRIEF_TOKENS.1}));
    assert!(sent.len() <= bound::MAX_BYTES, "{} bytes", sent.len());
    let text = b["text"].as_str().unwrap();
    assert!(!text.contains("characters cut"), "{text}");
    assert!(text.len() <= bound::PACK_BYTES, "{} bytes", text.len());
    assert!(text.len() > bound::PACK_BYTES / 2, "{} bytes", text.len());
    assert_eq!(
        b["estimated_tokens"].as_u64().unwrap() as usize,
        text.len().div_ceil(4)
    );
    let listed = b["entries"].as_array().unwrap().len();
    assert_eq!(text.matches("   id=").count(), listed, "{text}");
    assert!(b["next_cursor"].is_null(), "{b}");
    let omitted = b["omitted"].as_u64().unwrap();
    assert!(omitted > 0, "{b}");
    assert!(
        text.ends_with(&format!(
            "{omitted} more notes that apply did not fit: `recall_query` (Cairn's MCP tools) or `cairn recall list --project repo --trusted-only` gives them."
        )),
        "{text}"
    );
}

/// The rule still bounds a packed text no packer bounded: its whole lines up to the most an
/// answer gives it, in bytes of JSON (a quote or a newline is two), then how much was cut.
#[test]
fn a_packed_text_past_its_bound_keeps_whole_lines_and_says_so() {
    let o = bound::Outbound::default();
    let line = format!("{}\n", "\"quoted\" ".repeat(20));
    let long = line.repeat(bound::MAX_PACKED / line.len() + 10);
    let kept = o.packed(&long);
    let size = serde_json::to_string(&kept).unwrap().len();
    assert!(size <= bound::MAX_PACKED, "{size}");
    let (head, note) = kept.rsplit_once('\n').unwrap();
    assert!(
        note.starts_with("[… ") && note.ends_with(" characters cut …]"),
        "{note}"
    );
    assert!(head.lines().all(|l| l == line.trim_end_matches('\n')));
    let cut: usize = note
        .trim_start_matches("[… ")
        .trim_end_matches(" characters cut …]")
        .parse()
        .unwrap();
    assert_eq!(head.chars().count() + cut, long.chars().count());
    // Within the bound it is whole, cleaned and redacted as every string.
    let short = format!("ok \u{1b}[31mred\u{1b}[0m {}", "word ".repeat(1_000));
    let out = o.packed(&short);
    assert!(
        !out.contains('\u{1b}') && out.contains("ok red word"),
        "{out}"
    );
    assert!(out.chars().count() > bound::MAX_STRING && !out.contains("characters cut"));
}
