//! An archive the server cannot read whole (a damaged `cairn.db`, a file that fails to read, a
//! full disk) is the tool's answer, not a JSON-RPC error: the agent reads it and tells the
//! person, and the answer names the data dir in full, as the person's MCP config names it.

use super::*;

#[test]
fn a_damaged_archive_is_the_tools_answer_naming_its_data_dir() {
    let f = fixture();
    let db = f.server.session.cairn.data_dir().join("cairn.db");
    let shown = db.display().to_string();
    let damaged = cairn_core::Error::Corrupt {
        path: db.clone(),
        what: "database disk image is malformed".into(),
    };
    let unreadable = cairn_core::Error::Read {
        path: db.clone(),
        source: std::io::Error::from_raw_os_error(5),
    };
    for e in [damaged, unreadable] {
        let (is_error, text) = settled(Err(f.server.fail(e)))
            .unwrap_or_else(|e| panic!("a JSON-RPC error ({:?}): {}", e.code, e.message));
        assert!(is_error, "{text}");
        assert!(text.contains(&shown), "the data dir is not named: {text}");
        assert!(!text.contains("REDACTED"), "{text}");
    }
    // A path outside the data dir in the same message stays hidden, as in every answer.
    let elsewhere = cairn_core::Error::Read {
        path: "/srv/other/secret-folder/file.json".into(),
        source: std::io::Error::from_raw_os_error(5),
    };
    let (_, text) = settled(Err(f.server.fail(elsewhere))).unwrap();
    assert!(!text.contains("secret-folder"), "{text}");
}
