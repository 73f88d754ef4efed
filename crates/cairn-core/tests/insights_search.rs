//! `insights list --search` matches what a person reads in a report: its title and its text,
//! a link's text included, never a link's address (every report cites sessions as
//! `cairn://session/<key>?record=<n>`, which held the words `cairn`, `session` and `record` and
//! the session keys).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::insights::{
    Automation, GenerateRequest, Generator, GeneratorIdentity, SliceRequest,
};
use cairn_core::llm::{Answer, Ask, LlmError, Outbound};

/// A generator that writes `body`, with `{link}` replaced by the first session address of the
/// material it was given (a link the report keeps: it cites a session it read).
struct Writes(&'static str);

impl Generator for Writes {
    fn identity(&self) -> GeneratorIdentity {
        GeneratorIdentity {
            backend: "test".into(),
            model: Some("writes".into()),
            endpoint_hash: None,
        }
    }
    fn ask(&self, ask: &Ask<'_>, _: &Outbound) -> Result<Answer, LlmError> {
        // The material names each session on a line of its own: `link: cairn://session/<key>`.
        let at = ask.user.find("link: cairn://session/").unwrap() + "link: ".len();
        let link: String = ask.user[at..]
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != ')')
            .collect();
        Ok(Answer {
            content: self.0.replace("{link}", &link),
            ..Default::default()
        })
    }
}

fn request(focus: &str) -> GenerateRequest {
    GenerateRequest {
        slice: SliceRequest {
            since: Some("2020-01-01".into()),
            until: Some("2030-01-01".into()),
            automation: Automation::Include,
            ..SliceRequest::default()
        },
        template: "weekly-summary".into(),
        focus: Some(focus.into()),
        ..GenerateRequest::default()
    }
}

/// The ids of the reports `search` finds, newest first.
fn found(cairn: &Cairn, search: &str, limit: u32) -> Vec<i64> {
    cairn
        .insight_list(Some(search), false, limit)
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect()
}

#[test]
fn a_search_matches_the_words_a_report_shows_not_its_links_addresses() {
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let files = [support::main_file(
        Agent::Claude,
        &support::fixtures().join("claude/tool_heavy.jsonl"),
    )];
    support::capture(&cairn, &files);
    // Oldest first: the one that shows the word, then two that hold it only in addresses.
    let mut ids = Vec::new();
    for (focus, body) in [
        (
            "a",
            "# Shown\n\nThe zebra release went out ([the run]({link})).\n",
        ),
        (
            "b",
            "# Linked\n\nThe release went out ([the run]({link}), [notes](https://example.org/zebra)).\n",
        ),
        (
            "c",
            "# Referenced\n\nThe release went out ([the run]({link}), [notes][r]).\n\n[r]: https://example.org/zebra\n",
        ),
    ] {
        let generated = cairn
            .insight_generate_with(&request(focus), &Writes(body), &|_| {})
            .unwrap();
        assert!(
            generated.insight.content.contains("cairn://session/"),
            "{}",
            generated.insight.content
        );
        ids.push(generated.insight.id);
    }
    let all = found(&cairn, "release", 10);
    assert_eq!(all.len(), 3, "{all:?}");
    // Words only of the addresses find nothing.
    for word in ["cairn", "record", "example.org", "sha256"] {
        assert_eq!(found(&cairn, word, 10), Vec::<i64>::new(), "{word}");
    }
    // A word in a link's text is read.
    assert_eq!(found(&cairn, "run", 10).len(), 3);
    // `zebra` shows in one report; the limit counts the reports found, not those read.
    assert_eq!(found(&cairn, "zebra", 10), [ids[0]]);
    assert_eq!(found(&cairn, "zebra", 1), [ids[0]]);
    assert_eq!(found(&cairn, "ZEBRA release", 1), [ids[0]]);
}
