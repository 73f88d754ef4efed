//! A forget of a plan (`Cairn::forget_as_planned`, the desktop's; `forget_planned`, the CLI's)
//! acts on the other databases the plan listed and on no other: a database a rebuild set aside
//! after the list was made is not written, and a rebuild's leftover the list did not name is not
//! deleted; each is named in the answer instead. The plan travels as JSON (the desktop sends it
//! back from the window), so its files are found again by the names it shows.

use cairn_core::archive::Agent;
use cairn_core::archive::capture::Quiet;
use cairn_core::{Cairn, ForgetPlan, ForgetRequest, SetAsideFate};

use crate::reindex::copy_tree;
use crate::support;

/// The databases a rebuild set aside in `data`, by name.
fn set_aside(data: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found: Vec<_> = std::fs::read_dir(data)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with("cairn.db.damaged-")
                && !name.ends_with("-wal")
                && !name.ends_with("-shm")
        })
        .collect();
    found.sort();
    found
}

#[test]
fn a_planned_forget_touches_only_the_databases_its_plan_listed() {
    let src = tempfile::tempdir().unwrap();
    copy_tree(&support::fixtures().join("claude"), src.path());
    let files = support::found(Agent::Claude, src.path());
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    cairn.capture_paths(&files, &Quiet).unwrap();
    drop(cairn);
    Cairn::rebuild_from_copies(data.path(), &Quiet).unwrap();
    let [listed] = set_aside(data.path()).try_into().unwrap();

    let req = ForgetRequest {
        session: Some("1af7fc5e-8455-4414-9ccd-011d40f70b2a".to_owned()),
        ..Default::default()
    };
    let plan = Cairn::open(data.path())
        .unwrap()
        .forget_preview(&req)
        .unwrap();
    assert_eq!(plan.set_aside.len(), 1, "{:?}", plan.set_aside);
    assert_eq!(plan.set_aside[0].fate, SetAsideFate::Removed);
    // As the window sends it back.
    let plan: ForgetPlan = serde_json::from_str(&serde_json::to_string(&plan).unwrap()).unwrap();

    // After the list was shown: another rebuild sets the archive (holding the session) aside,
    // and a rebuild stopped while making its database.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    Cairn::rebuild_from_copies(data.path(), &Quiet).unwrap();
    let later = set_aside(data.path())
        .into_iter()
        .find(|p| *p != listed)
        .expect("a second database set aside");
    let building = data.path().join("cairn.db.rebuilding");
    std::fs::write(&building, b"half a database").unwrap();

    let cairn = Cairn::open(data.path()).unwrap();
    let done = cairn.forget_as_planned(&req, &plan).unwrap();
    assert_eq!(done.removed.sessions.len(), 1, "{done:?}");
    let fate = |path: &std::path::Path| {
        done.set_aside
            .iter()
            .find(|a| a.path == path.to_str().unwrap())
            .unwrap_or_else(|| panic!("{} not in {:?}", path.display(), done.set_aside))
    };
    assert_eq!(fate(&listed).fate, SetAsideFate::Removed);
    let untouched = fate(&later);
    assert_eq!(untouched.fate, SetAsideFate::Holds, "{untouched:?}");
    assert!(
        untouched
            .why
            .as_deref()
            .is_some_and(|w| w.contains("not in the list the forget showed")),
        "{untouched:?}"
    );
    assert!(untouched.rm.starts_with("rm -f '"), "{untouched:?}");
    let in_file = |db: &std::path::Path| {
        rusqlite::Connection::open(db)
            .unwrap()
            .query_row(
                "SELECT COUNT(*) FROM sessions WHERE session_id = '1af7fc5e-8455-4414-9ccd-011d40f70b2a'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .unwrap()
    };
    assert_eq!(in_file(&listed), 0);
    assert_eq!(
        in_file(&later),
        1,
        "a database no one was asked about was written"
    );
    assert!(
        building.exists(),
        "a leftover the list did not name was deleted"
    );
    assert_eq!(fate(&building).fate, SetAsideFate::MayHold);
}
