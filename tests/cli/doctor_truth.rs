//! `cairn doctor` tells the whole truth: sessions counted as `cairn sessions` lists them, what a
//! rebuild left named even when `cairn.db` is gone, the lines syncs could not read, Recall
//! (extraction, the review inbox), and the model servers, contacted only with `--probe`.

use serde_json::{Value, json};

use crate::support::{Env, check};

fn detail(doctor: &Value, name: &str) -> String {
    check(doctor, name)["detail"].as_str().unwrap().to_owned()
}

/// The archive line counts the sessions `cairn sessions` lists, and says how many rows more the
/// database holds and what they are: here a transcript holding no record Cairn reads.
#[test]
fn doctor_counts_sessions_as_the_list_does() {
    let env = Env::new().with_fixtures();
    let empty = env
        .claude()
        .join("-home-USER-projects-spotter/0b6d2f1e-0000-4000-8000-000000000001.jsonl");
    std::fs::write(&empty, "{}\n").unwrap();
    env.ok(&["sync"]);
    let listed = env.json(&["sessions"]).as_array().unwrap().len();
    let rows: i64 = env
        .whole_db()
        .query_row("SELECT COUNT(*) FROM sessions", [], |r| r.get(0))
        .unwrap();
    let more = usize::try_from(rows).unwrap() - listed;
    assert!(more > 0, "no row apart from the listed ones");
    let doctor = env.json(&["doctor"]);
    let archive = detail(&doctor, "archive");
    assert!(
        archive.contains(&format!(
            ": {listed} sessions as `cairn sessions` lists them ({more} more row"
        )),
        "{archive}"
    );
}

/// With `cairn.db` gone, what rebuilds left is named all the same, without the `rm` of a
/// database that may now hold the only copy of what the archive kept; a half-made one still
/// gets its `rm`. Doctor creates nothing.
#[test]
fn doctor_names_what_rebuilds_left_when_the_archive_is_gone() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    env.ok(&["reindex", "--from-copies", "--force"]);
    let data = env.data();
    for file in ["cairn.db", "cairn.db-wal", "cairn.db-shm"] {
        let _ = std::fs::remove_file(data.join(file));
    }
    let building = data.join("cairn.db.rebuilding");
    std::fs::write(&building, b"half a database").unwrap();
    let doctor = env.json(&["doctor"]);
    assert!(detail(&doctor, "archive").contains("holds no archive"));
    let aside = detail(&doctor, "set-aside databases");
    assert!(
        aside.contains("cairn.db.damaged-")
            && aside.contains("no cairn.db beside them")
            && aside.contains("keep them")
            && aside.contains("then `cairn reindex --from-copies`")
            && !aside.contains("rm "),
        "{aside}"
    );
    let unfinished = detail(&doctor, "unfinished rebuild");
    assert!(
        unfinished.contains(&format!("rm -f '{}'", building.display())),
        "{unfinished}"
    );
    assert!(!data.join("cairn.db").exists(), "doctor made an archive");
}

/// The lines a sync could not read are kept with their sessions: doctor counts them, names the
/// file with its first problem and the session to show, and says that files a sync could not
/// open at all are kept nowhere.
#[test]
fn doctor_names_the_lines_syncs_could_not_read() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let before = check(&env.json(&["doctor"]), "unread lines").clone();
    assert!(
        before["detail"]
            .as_str()
            .unwrap()
            .contains("nothing keeps it"),
        "{before}"
    );
    let warnings = |c: &Value| -> u64 {
        let d = c["detail"].as_str().unwrap();
        d.split(' ').next().unwrap().parse().unwrap_or(0)
    };

    let env = Env::new().with_fixtures();
    let file = env
        .claude()
        .join("-home-USER-projects-spotter/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(1, "{\"type\":\"user\",\"message\":");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    env.ok(&["sync"]);
    let doctor = env.json(&["doctor"]);
    let unread = check(&doctor, "unread lines");
    assert_eq!(unread["status"], "warn", "{unread}");
    assert_eq!(warnings(unread), warnings(&before) + 1, "{unread}");
    let said = unread["detail"].as_str().unwrap();
    assert!(
        said.contains(&format!("{} (1 warning, first line 2: ", file.display()))
            && said.contains("`cairn show 1af7fc5e-8455-4414-9ccd-011d40f70b2a`"),
        "{said}"
    );
    let human = env.ok(&["doctor"]);
    assert!(
        human
            .lines()
            .any(|l| l.starts_with("warn  unread lines") && l.contains(" parse warnings in ")),
        "{human}"
    );
}

/// Recall in doctor: extraction not set up, then set up and on (its server named, no pass yet),
/// and the entries waiting in the review inbox.
#[test]
fn doctor_says_where_recall_stands() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let doctor = env.json(&["doctor"]);
    assert!(detail(&doctor, "recall extraction").starts_with("not set up"));
    assert_eq!(
        detail(&doctor, "recall review"),
        "the review inbox is empty; 0 trusted entries serve agents"
    );
    std::fs::write(
        env.data().join("config.toml"),
        "[recall.extract]\nenabled = true\nmodel = \"qwen3\"\n\
         [recall.extract.servers.local]\nendpoint = \"http://127.0.0.1:9/v1\"\n",
    )
    .unwrap();
    let entry = |id: &str, title: &str| {
        json!({"candidate_id": id, "session_id": "55604662-cf2a-4331-851a-ec234028f8ca",
            "type": "procedure", "scope": "project", "title": title, "body": "Run mix phx.server",
            "transferable": true, "provenance_ok": true, "label": "correct",
            "evidence": {"ordinal_start": 0, "ordinal_end": 3, "snippets": ["Run mix phx.server"]}})
    };
    let file = env.root.path().join("e.jsonl");
    std::fs::write(
        &file,
        format!(
            "{}\n{}\n",
            entry("p1", "Start Phoenix"),
            entry("p2", "Free port 4000")
        ),
    )
    .unwrap();
    env.ok(&["recall", "import", file.to_str().unwrap(), "--yes"]);
    // As extraction leaves one (nobody reviewed it), and as a stale check leaves the other.
    let conn = rusqlite::Connection::open(env.data().join("cairn.db")).unwrap();
    conn.execute_batch(
        "UPDATE recall_entries SET review_state = 'unreviewed_auto', reviewed_at = NULL WHERE id = 'p1';
         UPDATE recall_entries SET stale = 1 WHERE id = 'p2';",
    )
    .unwrap();
    drop(conn);
    let doctor = env.json(&["doctor"]);
    let extraction = check(&doctor, "recall extraction");
    assert_eq!(extraction["status"], "ok", "{extraction}");
    assert_eq!(
        extraction["detail"],
        "on: model qwen3 on [recall.extract.servers.local]; no pass has run yet (`cairn recall extract run`)"
    );
    let review = check(&doctor, "recall review");
    assert_eq!(review["status"], "warn", "{review}");
    assert_eq!(
        review["detail"],
        "2 entries wait in the review inbox, 1 of them stale (a file it cites changed since: out of service until reviewed again): `cairn recall review` (the desktop app's Inbox); 0 trusted entries serve agents"
    );
    let server = detail(&doctor, "endpoint recall.extract.servers.local");
    assert!(
        server.contains("Recall extraction's server; on this machine"),
        "{server}"
    );
}

/// A model server is contacted only with `--probe`: then a listening port answers, and one
/// nothing listens on is a warning naming the address.
#[test]
fn doctor_probes_model_servers_only_when_asked() {
    let env = Env::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::fs::write(
        env.data().join("config.toml"),
        format!("[insights]\nendpoint = \"http://127.0.0.1:{port}/v1\"\nmodel = \"m\"\n"),
    )
    .unwrap();
    let quiet = detail(&env.json(&["doctor"]), "endpoint insights");
    assert!(
        quiet.contains("not contacted (`cairn doctor --probe` tries to connect)"),
        "{quiet}"
    );
    let probed = check(&env.json(&["doctor", "--probe"]), "endpoint insights").clone();
    assert_eq!(probed["status"], "ok", "{probed}");
    assert!(
        probed["detail"]
            .as_str()
            .unwrap()
            .contains(&format!("a server answers at 127.0.0.1:{port}")),
        "{probed}"
    );
    drop(listener);
    let down = check(&env.json(&["doctor", "--probe"]), "endpoint insights").clone();
    assert_eq!(down["status"], "warn", "{down}");
    assert!(
        down["detail"]
            .as_str()
            .unwrap()
            .contains(&format!("nothing answered at 127.0.0.1:{port}")),
        "{down}"
    );
}
