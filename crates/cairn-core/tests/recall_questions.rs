//! Natural-language questions as a person types them, against entries distilled from the real
//! fixture sessions (tests/fixtures/recall). Reports top-1 and top-3 accuracy of lexical
//! retrieval and holds it above a floor, so a ranking change that hurts real questions fails.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::archive::capture::Quiet;
use cairn_core::archive::discover::{self, DirOrigin, SourceDir};
use cairn_core::recall::QueryRequest;

#[derive(serde::Deserialize)]
struct Question {
    question: String,
    expected: Vec<String>,
}

#[test]
fn natural_language_questions_find_their_entries() {
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let sd = SourceDir {
        agent: Agent::Claude,
        path: support::fixtures().join("claude"),
        origin: DirOrigin::Env,
    };
    let files = discover::walk(&sd, &mut Vec::new());
    cairn.capture_paths(&files, &Quiet).unwrap();
    let entries =
        std::fs::read_to_string(support::fixtures().join("recall/entries.jsonl")).unwrap();
    let report = cairn.recall_import(&entries, false).unwrap();
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let questions: Vec<Question> = serde_json::from_str(
        &std::fs::read_to_string(support::fixtures().join("recall/questions.json")).unwrap(),
    )
    .unwrap();
    let (mut top1, mut top3) = (0, 0);
    let mut misses = Vec::new();
    for q in &questions {
        let req = QueryRequest {
            text: q.question.clone(),
            ..Default::default()
        };
        let ids: Vec<String> = cairn
            .recall_rank(&req)
            .unwrap()
            .into_iter()
            .map(|r| r.entry.id)
            .collect();
        if ids.first().is_some_and(|id| q.expected.contains(id)) {
            top1 += 1;
        }
        if ids.iter().take(3).any(|id| q.expected.contains(id)) {
            top3 += 1;
        } else {
            misses.push(format!(
                "{:?} -> {:?}",
                q.question,
                ids.iter().take(3).collect::<Vec<_>>()
            ));
        }
    }
    let n = questions.len();
    println!(
        "recall questions: {n}, top-1 {top1}/{n} ({:.0}%), top-3 {top3}/{n} ({:.0}%)",
        100.0 * top1 as f64 / n as f64,
        100.0 * top3 as f64 / n as f64
    );
    for m in &misses {
        println!("  miss: {m}");
    }
    assert!(
        top3 * 100 >= n * 80,
        "top-3 accuracy fell below 80%: {top3}/{n}\n{}",
        misses.join("\n")
    );
}
