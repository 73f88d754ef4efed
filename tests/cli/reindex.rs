//! `cairn reindex`: what the branch views say survives a reindex after the transcripts are
//! gone, the command says what it did (and what it would do), and a reindex killed at any
//! point leaves every session as it was or rebuilt whole.

use std::path::Path;

use crate::branch::{edit_then_commit, key_of, repo, skim};
use crate::harden::{kill_after, quiet};
use crate::support::Env;

/// Links from records and from the snapshots taken at each capture, and a person's link, are
/// what they were; the transcript itself is gone.
#[test]
fn links_survive_a_reindex_from_the_copies_alone() {
    let env = Env::new();
    edit_then_commit(&env, &repo(env.root.path()), "s-reindex");
    let key = key_of(&env, "s-reindex");
    env.ok(&["link", &key, "--to", "main", "--reason", "started there"]);
    let feature = skim(&env, &["branch", "feature"]);
    let main = skim(&env, &["branch", "main"]);
    assert!(!feature["sessions"].as_array().unwrap().is_empty());
    assert!(!main["sessions"].as_array().unwrap().is_empty());
    std::fs::remove_file(env.claude().join("-repo/s-reindex.jsonl")).unwrap();

    let r = env.json(&["reindex"]);
    for field in [
        "sessions",
        "sessions_changed",
        "records_before",
        "records_after",
        "records_changed",
        "turns_before",
        "turns_after",
        "evidence_revoked",
        "skipped",
        "dry_run",
    ] {
        assert!(r.get(field).is_some(), "no {field} in {r}");
    }
    assert_eq!(r["sessions"], 1, "{r}");
    assert_eq!(r["records_changed"], 0, "{r}");
    assert_eq!(r["records_before"], r["records_after"], "{r}");
    assert_eq!(skim(&env, &["branch", "feature"]), feature);
    assert_eq!(skim(&env, &["branch", "main"]), main);
}

#[test]
fn it_says_what_it_did_and_what_it_would_do() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let dry = env.ok(&["reindex", "--dry-run", "--agent", "codex"]);
    assert!(dry.starts_with("Would read 2 sessions again"), "{dry}");
    assert!(dry.contains("Nothing was changed (--dry-run)."), "{dry}");
    let done = env.ok(&["reindex", "55604662-cf2a-4331-851a-ec234028f8ca"]);
    assert!(done.starts_with("Read 1 session again"), "{done}");
    assert!(done.contains("0 read differently now"), "{done}");
    assert!(!done.contains("Read differently:"), "{done}");

    // A session an older build misread is listed by the name a person types, with its title.
    rusqlite::Connection::open(env.data().join("cairn.db"))
        .unwrap()
        .execute(
            "UPDATE records SET prompt_source = 'system_injected' WHERE prompt_source = 'human'",
            [],
        )
        .unwrap();
    let dry = env.ok(&[
        "reindex",
        "--dry-run",
        "55604662-cf2a-4331-851a-ec234028f8ca",
    ]);
    let listed: Vec<&str> = dry
        .lines()
        .skip_while(|l| *l != "Would read differently:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect();
    assert_eq!(listed.len(), 1, "{dry}");
    assert!(
        listed[0].starts_with("  55604662-cf2a-4331-851a-ec234028f8ca"),
        "{dry}"
    );
    assert!(
        listed[0].ends_with(" record") || listed[0].ends_with(" records"),
        "{dry}"
    );

    // An unknown session: one line on stderr naming it, exit 1, nothing read.
    let out = env.run(&["reindex", "no-such-\u{1b}[31msession"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("no-such-"), "{err}");
    assert!(!err.contains('\u{1b}'), "{err}");
}

/// The lines of the only retained copy under `data`, decoded.
fn copy_text(data: &Path) -> (std::path::PathBuf, String) {
    let dir = data.join("retained/claude");
    let path = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".g0.jsonl.zst"))
        .unwrap();
    let text = zstd::stream::decode_all(std::fs::File::open(&path).unwrap()).unwrap();
    (path, String::from_utf8(text).unwrap())
}

/// A secret in a retained copy that an older build's rules let through: the dry run counts the
/// lines, the reindex writes them again redacted and says so, and a second finds none.
#[test]
fn it_says_which_copy_lines_it_redacted() {
    const KEY: &str = "AKIAZ7QW3RT5YU8IOP2L";
    let env = Env::new();
    let dir = env.claude().join("-proj");
    std::fs::create_dir_all(&dir).unwrap();
    let line = |uuid: &str, role: &str, text: &str| {
        serde_json::json!({"type": role, "uuid": uuid, "sessionId": "s-secret",
            "timestamp": "2026-03-01T10:00:00Z", "cwd": "/tmp/proj",
            "message": {"role": role, "content": text}})
        .to_string()
    };
    std::fs::write(
        dir.join("s-secret.jsonl"),
        format!(
            "{}\n{}\n",
            line("u1", "user", &format!("deploy with {KEY}")),
            line("a1", "assistant", "done")
        ),
    )
    .unwrap();
    env.ok(&["sync"]);
    // As a build without the rule wrote it: the key raw in the copy.
    let (copy, text) = copy_text(&env.data());
    let at = text.find("[REDACTED:").unwrap();
    let end = at + text[at..].find(']').unwrap() + 1;
    let aged = format!("{}{KEY}{}", &text[..at], &text[end..]);
    let bytes = zstd::stream::encode_all(aged.as_bytes(), 1).unwrap();
    std::fs::write(&copy, &bytes).unwrap();
    let db = rusqlite::Connection::open(env.data().join("cairn.db")).unwrap();
    db.execute("UPDATE sources SET retained_len = ?1", [bytes.len() as i64])
        .unwrap();
    // And a report an older build stored with it.
    db.execute(
        "INSERT INTO insights (title, template_id, template_version, slice, generator, cache_key,
             material_hash, sessions_total, sessions_included, prompt_chars, content, created_at, elapsed_ms)
         VALUES ('Deploys', 't', '1', '{}', 'claude', 'c', 'm', 1, 1, 10, ?1, '2026-03-01T10:00:00Z', 5)",
        [format!("They deploy with {KEY}.")],
    )
    .unwrap();
    drop(db);

    let dry = env.ok(&["reindex", "--dry-run"]);
    assert!(
        dry.contains(
            "Secrets: 1 generated report holds what today's redaction rules remove \
             (a reindex redacts them)."
        ),
        "{dry}"
    );
    assert!(
        dry.contains(
            "Secrets: 1 line of the retained copies holds what today's redaction rules remove \
             (a reindex writes them again redacted)."
        ),
        "{dry}"
    );
    assert!(copy_text(&env.data()).1.contains(KEY), "a dry run wrote");
    let done = env.json(&["reindex"]);
    assert_eq!(done["copy_lines_redacted"], 1, "{done}");
    assert_eq!(done["changed"][0]["handle"], "s-secret", "{done}");
    assert_eq!(done["changed"][0]["copy_lines_redacted"], 1, "{done}");
    assert_eq!(
        (&done["reports_redacted"], &done["recall_entries_redacted"]),
        (&serde_json::json!(1), &serde_json::json!(0)),
        "{done}"
    );
    let (_, now) = copy_text(&env.data());
    assert!(!now.contains(KEY) && now.contains("[REDACTED:"), "{now}");
    let again = env.ok(&["reindex"]);
    assert!(!again.contains("Secrets:"), "{again}");
}

/// The records' words as an older build stored them: every other prompt taken for text the
/// agent injected (which also merged its turn into the one before).
fn age(data: &Path) {
    let db = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    db.execute(
        "UPDATE records SET prompt_source = 'system_injected'
         WHERE prompt_source = 'human' AND ordinal % 2 = 1",
        [],
    )
    .unwrap();
}

/// Per session, how many of its records an older build misread, with the index's agreement.
fn misread(env: &Env) -> Vec<(String, i64)> {
    let db = env.whole_db();
    db.prepare(
        "SELECT s.session_key, (SELECT COUNT(*) FROM records r WHERE r.session_id = s.id
             AND r.prompt_source = 'system_injected' AND r.ordinal % 2 = 1)
         FROM sessions s ORDER BY s.session_key",
    )
    .unwrap()
    .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// A reindex killed at random points: each session is as the older build left it or rebuilt
/// whole, never half; the index agrees with the records; a rerun ends where a clean run does.
#[test]
fn a_reindex_killed_at_random_points_leaves_each_session_whole() {
    let env = Env::new();
    env.with_big_sessions(4);
    env.ok(&["sync"]);
    let clean = misread(&env);
    age(&env.data());
    let aged = misread(&env);
    assert_ne!(aged, clean);
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut kills = 0;
    for _ in 0..10 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let at = std::time::Duration::from_millis(seed % 600);
        kills += usize::from(kill_after(quiet(&env, &["reindex"]), at));
        let now = misread(&env);
        for ((key, n), ((_, was), (_, fresh))) in now.iter().zip(aged.iter().zip(&clean)) {
            assert!(
                n == was || n == fresh,
                "{key}: {n} (aged {was}, clean {fresh})"
            );
        }
        age(&env.data());
    }
    assert!(kills > 0, "no run was killed mid-way");
    env.ok(&["reindex"]);
    assert_eq!(misread(&env), clean);
}

/// `cairn doctor` says whether the archive can be rebuilt from its copies, and names a
/// session's copy that went missing.
#[test]
fn doctor_says_which_copy_cannot_be_read_again() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let check = |doctor: &serde_json::Value| {
        doctor["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "retained copies")
            .cloned()
            .unwrap_or_else(|| panic!("no retained copies check in {doctor}"))
    };
    let ok = check(&env.json(&["doctor"]));
    assert_eq!(ok["status"], "ok", "{ok}");
    // Every session read from a transcript, sub-agents' too (the session list shows those
    // under their parents).
    let listed = env.json(&["sessions"]).as_array().unwrap().len();
    let detail = ok["detail"].as_str().unwrap();
    let sessions: usize = detail.split(' ').next().unwrap().parse().unwrap();
    assert!(sessions >= listed, "{detail}");
    assert!(
        detail.ends_with("sessions can be read again from their copies (`cairn reindex`)"),
        "{detail}"
    );
    let copy = walk(&env.data().join("retained"))
        .into_iter()
        .find(|p| p.to_string_lossy().ends_with(".g0.jsonl.zst"))
        .unwrap();
    std::fs::remove_file(&copy).unwrap();
    let warn = check(&env.json(&["doctor"]));
    assert_eq!(warn["status"], "warn", "{warn}");
    let detail = warn["detail"].as_str().unwrap();
    assert!(
        detail.starts_with(&format!("1 of {sessions} sessions cannot be read again")),
        "{detail}"
    );
    assert!(detail.contains(copy.to_str().unwrap()), "{detail}");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// After an upgrade whose parsers read transcripts differently, `cairn doctor` says which
/// sessions an older Cairn read and what to run; once read again, it says they are current.
#[test]
fn doctor_offers_a_reindex_for_sessions_an_older_cairn_read() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let parsers = || {
        env.json(&["doctor"])["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "parsers")
            .cloned()
            .unwrap()
    };
    let now = parsers();
    assert_eq!(now["status"], "ok", "{now}");
    assert!(
        now["detail"]
            .as_str()
            .unwrap()
            .contains("read as this build's parsers"),
        "{now}"
    );
    let db = rusqlite::Connection::open(env.data().join("cairn.db")).unwrap();
    let older = db
        .execute("UPDATE sessions SET read_by = 0 WHERE agent = 'codex'", [])
        .unwrap();
    assert!(older > 0);
    let then = parsers();
    assert_eq!(then["status"], "warn", "{then}");
    let detail = then["detail"].as_str().unwrap();
    assert!(detail.starts_with(&format!("{older} of ")), "{detail}");
    // Whose sessions they are.
    assert!(detail.contains(&format!("(codex {older})")), "{detail}");
    assert!(
        detail.contains("cairn reindex --outdated --dry-run"),
        "{detail}"
    );
    // `--outdated` reads those sessions alone.
    let done = env.json(&["reindex", "--outdated"]);
    assert_eq!(done["sessions"], older, "{done}");
    assert_eq!(parsers()["status"], "ok");
    // Then none is outdated, and it says so rather than "Read 0 sessions again".
    let again = env.ok(&["reindex", "--outdated"]);
    assert!(
        again.starts_with("No session was read before its agent's transcripts last changed"),
        "{again}"
    );
}

const PLANTED: &str = "AKIAZ7QW3RT5YU8IOP2L";

/// One source's copy as the store knows it.
struct Source {
    id: i64,
    session_key: String,
    copy: std::path::PathBuf,
    retained_len: u64,
}

fn sources(env: &Env) -> Vec<Source> {
    let db = rusqlite::Connection::open(env.data().join("cairn.db")).unwrap();
    let retained = cairn_core::archive::retain::Retained::new(&env.data());
    db.prepare(
        "SELECT src.id, s.session_key, src.source_key, src.generation, src.retained_len
         FROM sources src JOIN sessions s ON s.id = src.session_id ORDER BY src.id",
    )
    .unwrap()
    .query_map([], |r| {
        let key: String = r.get(2)?;
        let generation: u32 = r.get(3)?;
        Ok(Source {
            id: r.get(0)?,
            session_key: r.get(1)?,
            copy: retained.path(cairn_core::archive::Agent::Claude, &key, generation),
            retained_len: r.get::<_, i64>(4)? as u64,
        })
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// Each copy line's key: the one its frame lists, else its own hash.
fn keys_of(lines: &[cairn_core::archive::retain::RetainedLine]) -> Vec<String> {
    lines
        .iter()
        .map(|l| {
            l.record_hash
                .clone()
                .unwrap_or_else(|| cairn_core::keys::record_hash(&l.text))
        })
        .collect()
}

/// What a build whose rules missed the key left: in some lines of every copy (those `pick`
/// chooses among the lines redaction did not change), a field the parser does not read holds
/// the key raw; those lines' records, the turns they open and the source's line keys are keyed
/// by the lines' raw hashes, as capture keys a clean line. Returns how many lines.
fn plant(env: &Env, pick: u64) -> usize {
    use cairn_core::archive::retain::Retained;
    let db = rusqlite::Connection::open(env.data().join("cairn.db")).unwrap();
    let mut planted = 0;
    for source in sources(env) {
        let mut lines = Retained::new(&env.data()).read(&source.copy, 0).unwrap();
        let keys = keys_of(&lines);
        for (line, old) in lines.iter_mut().zip(&keys) {
            if line.record_hash.is_some() || line.line_no % 61 != pick {
                continue;
            }
            let Ok(serde_json::Value::Object(mut obj)) = serde_json::from_slice(&line.text) else {
                continue;
            };
            obj.insert("deployKey".into(), PLANTED.into());
            line.text = serde_json::to_vec(&obj).unwrap();
            let new = cairn_core::keys::record_hash(&line.text);
            let turns: Vec<i64> = db
                .prepare(
                    "SELECT t.id FROM turns t JOIN records r
                     ON r.session_id = t.session_id AND r.ordinal = t.opening_ordinal
                     WHERE r.source_id = ?1 AND r.record_hash = ?2",
                )
                .unwrap()
                .query_map(rusqlite::params![source.id, old], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            for turn in turns {
                db.execute(
                    "UPDATE turns SET turn_key = ?2 WHERE id = ?1",
                    rusqlite::params![turn, cairn_core::keys::turn_key(&source.session_key, &new)],
                )
                .unwrap();
            }
            db.execute(
                "UPDATE records SET record_hash = ?3 WHERE source_id = ?1 AND record_hash = ?2",
                rusqlite::params![source.id, old, new],
            )
            .unwrap();
            for column in ["first_line_hash", "last_line_hash"] {
                db.execute(
                    &format!("UPDATE sources SET {column} = ?3 WHERE id = ?1 AND {column} = ?2"),
                    rusqlite::params![source.id, old, new],
                )
                .unwrap();
            }
            planted += 1;
        }
        let mut text = Vec::new();
        let mut frame = Vec::new();
        for l in &lines {
            text.extend_from_slice(&l.text);
            text.push(b'\n');
            if let Some(k) = &l.record_hash {
                frame.push((l.line_no, k.clone()));
            }
        }
        let bytes = Retained::encode(&text, &frame).unwrap();
        std::fs::write(&source.copy, &bytes).unwrap();
        db.execute(
            "UPDATE sources SET retained_len = ?2 WHERE id = ?1",
            rusqlite::params![source.id, bytes.len() as i64],
        )
        .unwrap();
    }
    planted
}

/// After any open (which finishes a rewrite a killed reindex committed): the database is whole,
/// no committed rewrite waits, and each copy is what its store says: its recorded length, and
/// a line for every record key. Returns, per source, how many of its copy's lines hold the key.
fn copies_agree(env: &Env) -> Vec<usize> {
    use cairn_core::archive::retain::Retained;
    let out = env.run(&["doctor"]);
    assert!(out.status.code().is_some(), "doctor died");
    let db = env.whole_db();
    let waiting: i64 = db
        .query_row(
            "SELECT COUNT(*) FROM retained_swaps WHERE ready = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(waiting, 0, "a committed rewrite left waiting after an open");
    sources(env)
        .into_iter()
        .map(|source| {
            let len = std::fs::metadata(&source.copy).unwrap().len();
            assert_eq!(len, source.retained_len, "{}", source.copy.display());
            let lines = Retained::new(&env.data()).read(&source.copy, 0).unwrap();
            let keys: std::collections::HashSet<String> = keys_of(&lines).into_iter().collect();
            let stored: Vec<String> = db
                .prepare("SELECT DISTINCT record_hash FROM records WHERE source_id = ?1")
                .unwrap()
                .query_map([source.id], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            for key in &stored {
                assert!(
                    keys.contains(key),
                    "{}: record key {key} is no line's",
                    source.session_key
                );
            }
            lines.iter().filter(|l| memchr_in(&l.text, PLANTED)).count()
        })
        .collect()
}

fn memchr_in(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// A reindex that writes copies again, killed at random points: after the next open each copy
/// is the one its store describes (length and keys), each session's copy holds all of the
/// secrets an older build let through or none, and a last reindex leaves none anywhere.
#[test]
fn a_reindex_rewriting_copies_killed_at_random_points_leaves_each_copy_whole() {
    let env = Env::new();
    env.with_big_sessions(3);
    env.ok(&["sync"]);
    // Kills land anywhere in a whole run: before, inside and after each session's rewrite.
    plant(&env, 60);
    let started = std::time::Instant::now();
    env.ok(&["reindex"]);
    let whole = started.elapsed().as_millis().max(1) as u64;
    let mut planted = vec![0; 3];
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut kills = 0;
    for round in 0..10u64 {
        assert!(plant(&env, round) > 0, "nothing planted");
        let before = copies_agree(&env);
        for (p, b) in planted.iter_mut().zip(&before) {
            *p = *b;
        }
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let at = std::time::Duration::from_millis(seed % (whole + whole / 4));
        kills += usize::from(kill_after(quiet(&env, &["reindex"]), at));
        for (now, was) in copies_agree(&env).iter().zip(&planted) {
            assert!(
                *now == 0 || now == was,
                "{now} of {was} lines still hold the key"
            );
        }
    }
    assert!(kills > 0, "no run was killed mid-way");
    env.ok(&["reindex"]);
    assert!(copies_agree(&env).iter().all(|n| *n == 0));
    // Nothing of a stopped run's rewrites is left either.
    let swaps: i64 = rusqlite::Connection::open(env.data().join("cairn.db"))
        .unwrap()
        .query_row("SELECT COUNT(*) FROM retained_swaps", [], |r| r.get(0))
        .unwrap();
    assert_eq!(swaps, 0);
    for file in walk(&env.data()) {
        assert!(
            !file.to_string_lossy().ends_with(".scrub"),
            "{} left",
            file.display()
        );
        let raw = std::fs::read(&file).unwrap();
        let bytes = if file.to_string_lossy().ends_with(".zst") {
            zstd::stream::decode_all(&raw[..]).unwrap()
        } else {
            raw
        };
        assert!(
            !memchr_in(&bytes.to_ascii_lowercase(), &PLANTED.to_ascii_lowercase()),
            "{} still holds the key",
            file.display()
        );
    }
}
