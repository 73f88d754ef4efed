//! Capture is incremental and idempotent: re-syncing adds nothing, appending in any number of
//! pieces (even cutting lines in half) ends exactly where a one-shot capture ends, and a
//! rewritten file is reconciled without duplicates or losses.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::io::Write;
use std::path::Path;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::archive::discover::FoundFile;
use proptest::prelude::*;

const FILES: [(Agent, &str); 20] = [
    (
        Agent::Aider,
        "aider/Aquaticat-Monochromatic/.aider.chat.history.md",
    ),
    (
        Agent::Claude,
        "claude/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
    ),
    (Agent::Claude, "claude/small.jsonl"),
    (Agent::Claude, "claude/subagent.jsonl"),
    (Agent::Codex, "codex/small.jsonl"),
    (
        Agent::Gptme,
        "gptme/2026-06-13-write-hello-world/conversation.jsonl",
    ),
    (Agent::Posit, "posit/a1b2c3d4/11111111/lm-messages.jsonl"),
    (
        Agent::Traex,
        "traex/sessions/2026/08/01/rollout-2026-08-01T18-07-03-019fbcca-9fd4-7d20-83dc-0762b2f839b3.jsonl",
    ),
    (Agent::Copilot, "copilot/small.jsonl"),
    (
        Agent::Qwen,
        "qwen/019f0000-0000-7000-8000-000000000001.jsonl",
    ),
    (Agent::Droid, "droid/session_store_large.jsonl"),
    (Agent::Pi, "pi/small.jsonl"),
    (Agent::Openclaw, "openclaw/large.jsonl"),
    (Agent::Vibe, "vibe/session_with_tools/messages.jsonl"),
    (
        Agent::Iflow,
        "iflow/C--exp-docker-image-retagger/session-5de701fc-7454-4858-a249-95cac4fd3b51.jsonl",
    ),
    (
        Agent::Antigravity,
        "antigravity/cli-small/.system_generated/logs/transcript.jsonl",
    ),
    (
        Agent::Grok,
        "grok/%2Ftmp%2Fas-agent-lab%2Fgrok%2Fproject/019f6851-7ec4-7ef0-97d3-03f3eee38755/chat_history.jsonl",
    ),
    (
        Agent::Kimi,
        "kimi/sessions/wd_project_ac3bb318f98e/session_1bcbe023-4f7e-4971-9dc9-43b8756045b0/agents/main/wire.jsonl",
    ),
    (
        Agent::Gemini,
        "gemini/stage0/chats/session-2026-04-29T21-39-gemini_s.jsonl",
    ),
    (
        Agent::Cursor,
        "cursor/-tmp-repo/agent-transcripts/large.jsonl",
    ),
];

/// Capture `content` written to `<src>/t.jsonl` in one go; return the normalised dump.
fn one_shot(agent: Agent, content: &[u8]) -> String {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = src.path().join("t.jsonl");
    std::fs::write(&path, content).unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    support::capture(&cairn, &[found(agent, &path)]);
    normalised(data.path(), src.path())
}

/// The file as discovery hands it over. Kimi, Cursor, Aider, Grok and gptme (among others) name a
/// session only by its path (`session_<id>/agents/main/wire.jsonl`, `agent-transcripts/<id>.jsonl`,
/// the history's own path, `<id>/chat_history.jsonl`, `<id>/conversation.jsonl`), which a file written
/// to a temporary path lacks, so the test names it; the others name their sessions inside the
/// file.
fn found(agent: Agent, path: &Path) -> FoundFile {
    FoundFile {
        parent_hint: matches!(
            agent,
            Agent::Kimi
                | Agent::Cursor
                | Agent::Aider
                | Agent::Grok
                | Agent::Antigravity
                | Agent::Vibe
                | Agent::Gptme
                | Agent::Posit
        )
        .then(|| "path-named".to_owned()),
        ..support::main_file(agent, path)
    }
}

fn normalised(data: &Path, src: &Path) -> String {
    let canonical = std::fs::canonicalize(src).unwrap();
    support::dump(data).replace(&canonical.display().to_string(), "<src>")
}

#[test]
fn resync_adds_nothing() {
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let files: Vec<_> = FILES
        .iter()
        .map(|(a, f)| found(*a, &support::fixtures().join(f)))
        .collect();
    let first = support::capture(&cairn, &files);
    assert!(first.records_added > 0);
    let before = support::dump(data.path());
    let second = support::capture(&cairn, &files);
    assert_eq!(
        (
            second.records_added,
            second.sessions_added,
            second.sessions_updated
        ),
        (0, 0, 0)
    );
    assert_eq!(support::dump(data.path()), before);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::proptest_cases(24), ..ProptestConfig::default() })]

    /// Writing a transcript in random pieces (cut anywhere, mid-line included) and capturing
    /// after each piece gives the same archive as capturing the whole file once.
    #[test]
    fn appends_in_any_pieces_equal_one_shot(which in 0usize..FILES.len(), cuts in proptest::collection::vec(0.0f64..1.0, 1..6)) {
        let (agent, rel) = FILES[which];
        let content = std::fs::read(support::fixtures().join(rel)).unwrap();
        let expected = one_shot(agent, &content);

        let src = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let path = src.path().join("t.jsonl");
        let cairn = Cairn::open(data.path()).unwrap();
        let mut points: Vec<usize> = cuts.iter().map(|c| (c * content.len() as f64) as usize).collect();
        points.push(content.len());
        points.sort_unstable();
        let mut written = 0;
        let mut total_added = 0;
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&path).unwrap();
        for p in points {
            file.write_all(&content[written..p]).unwrap();
            file.flush().unwrap();
            written = p;
            total_added += support::capture(&cairn, &[found(agent, &path)]).records_added;
        }
        let got = normalised(data.path(), src.path());
        prop_assert_eq!(&got, &expected);
        // Record lines name the file (a session's cwd may be the source dir itself: Aider's).
        let records = got.lines().filter(|l| l.contains("<src>/t.jsonl")).count() as u32;
        prop_assert_eq!(total_added, records);
        support::assert_ordinals_dense(data.path());
    }
}

/// A copy of the small Claude fixture and an archive that read it once.
struct Copied {
    _src: tempfile::TempDir,
    data: tempfile::TempDir,
    path: std::path::PathBuf,
    content: String,
    cairn: Cairn,
    file: FoundFile,
}

fn small_claude_read() -> (Copied, cairn_core::archive::capture::SyncReport) {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = src.path().join("t.jsonl");
    let content = std::fs::read_to_string(support::fixtures().join("claude/small.jsonl")).unwrap();
    std::fs::write(&path, &content).unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let file = support::main_file(Agent::Claude, &path);
    let first = support::capture(&cairn, std::slice::from_ref(&file));
    let copied = Copied {
        _src: src,
        data,
        path,
        content,
        cairn,
        file,
    };
    (copied, first)
}

#[test]
fn a_rewritten_file_is_reconciled_without_duplicates_or_losses() {
    let (
        Copied {
            _src,
            data,
            path,
            content,
            cairn,
            file,
        },
        first,
    ) = small_claude_read();

    // The agent rewrites the file: drops the first ten lines and changes nothing else.
    let rewritten: String = content.lines().skip(10).map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, rewritten).unwrap();
    let second = support::capture(&cairn, std::slice::from_ref(&file));
    assert_eq!(second.records_added, 0, "every line was already stored");
    let conn = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
    let (records, generation): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT COUNT(*) FROM records), (SELECT generation FROM sources)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(records as u32, first.records_added, "nothing dropped");
    assert_eq!(generation, 1);

    // New lines after the rewrite are appended as usual.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    writeln!(f, r#"{{"type":"user","sessionId":"ses_stage0_small","timestamp":"2026-04-17T00:00:00.000Z","message":{{"role":"user","content":"one more thing"}}}}"#).unwrap();
    let third = support::capture(&cairn, std::slice::from_ref(&file));
    assert_eq!(third.records_added, 1);
    // The retained copies hold both generations.
    let retained: Vec<_> = support::files_under(&data.path().join("retained"));
    assert_eq!(retained.len(), 2, "{retained:?}");
}

/// A line changed in place, the file no longer or shorter than before (what an edit or a tool
/// rewriting it gives), is read: the first and last lines alone would not show it.
#[test]
fn a_line_changed_in_place_at_the_same_size_is_read() {
    // Bound, not `..`: the temporary folders live as long as the test.
    let (
        Copied {
            _src,
            data: _data,
            path,
            content,
            cairn,
            file,
        },
        _,
    ) = small_claude_read();
    let lines: Vec<&str> = content.lines().collect();
    let middle = lines.len() / 2;
    let (at, word) = lines
        .iter()
        .enumerate()
        .skip(middle)
        .find_map(|(i, l)| l.contains("the").then_some((i, "the")))
        .expect("a middle line with a word to change");
    let changed: String = lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            if i == at {
                format!("{}\n", l.replacen(word, "xyz", 1))
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    assert_eq!(changed.len(), content.len());
    std::fs::write(&path, changed).unwrap();
    // A clock of whole seconds would not move the mtime within the test.
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .unwrap();
    let again = support::capture(&cairn, std::slice::from_ref(&file));
    assert_eq!(again.records_added, 1, "{again:?}");
    // Read once: the next sync finds nothing new.
    let still = support::capture(&cairn, std::slice::from_ref(&file));
    assert_eq!(
        (still.records_added, still.sessions_updated),
        (0, 0),
        "{still:?}"
    );
}

#[test]
fn a_truncated_file_is_read_again_and_keeps_what_was_stored() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = src.path().join("t.jsonl");
    let content = std::fs::read(support::fixtures().join("codex/small.jsonl")).unwrap();
    std::fs::write(&path, &content).unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let file = support::main_file(Agent::Codex, &path);
    let first = support::capture(&cairn, std::slice::from_ref(&file));
    std::fs::write(&path, &content[..content.len() / 3]).unwrap();
    let again = support::capture(&cairn, std::slice::from_ref(&file));
    assert_eq!(again.records_added, 0);
    std::fs::write(&path, &content).unwrap();
    let restored = support::capture(&cairn, std::slice::from_ref(&file));
    assert_eq!(restored.records_added, 0);
    let conn = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
    let records: i64 = conn
        .query_row("SELECT COUNT(*) FROM records", [], |r| r.get(0))
        .unwrap();
    assert_eq!(records as u32, first.records_added);
}

/// A file whose first lines do not name its session is keyed by its path until a later append
/// names it; a second file naming a session another file already holds joins that session
/// instead of leaving an empty placeholder behind.
#[test]
fn a_session_named_only_after_the_first_capture_joins_its_holder() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let content = std::fs::read(support::fixtures().join("claude/subagent.jsonl")).unwrap();
    // The fixture's first line (a file-history snapshot) names no session.
    let head = content.iter().position(|&b| b == b'\n').unwrap() + 1;
    let whole = src.path().join("a.jsonl");
    std::fs::write(&whole, &content).unwrap();
    let pieces = src.path().join("b.jsonl");
    std::fs::write(&pieces, &content[..head]).unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let files = [
        support::main_file(Agent::Claude, &whole),
        support::main_file(Agent::Claude, &pieces),
    ];
    support::capture(&cairn, &files);
    let sessions = |cairn: &Cairn| {
        let conn = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
        let _ = cairn;
        conn.query_row("SELECT COUNT(*) FROM sessions", [], |r| r.get::<_, i64>(0))
            .unwrap()
    };
    assert_eq!(
        sessions(&cairn),
        2,
        "the unnamed head is a session of its own for now"
    );
    std::fs::OpenOptions::new()
        .append(true)
        .open(&pieces)
        .unwrap()
        .write_all(&content[head..])
        .unwrap();
    let second = support::capture(&cairn, &files);
    assert_eq!(
        second.records_added, 0,
        "every record was already stored from a.jsonl"
    );
    assert_eq!(sessions(&cairn), 1);
    let conn = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
    let sources_of_one: i64 = conn
        .query_row("SELECT COUNT(DISTINCT session_id) FROM sources", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(sources_of_one, 1);
}
