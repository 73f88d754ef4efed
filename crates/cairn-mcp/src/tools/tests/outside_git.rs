//! A server started outside any git repository says so naming the folder it was started in:
//! the agent's client started it there (no secret from the agent), and which folder it is is
//! what the person checks. Named as the data dir is: whole, unless the outbound redactor
//! finds a secret in it; any other folder stays hidden.

use super::*;

/// A server on the fixture's archive, started in `folder` (made here, outside the repository).
fn started_in(f: &Fixture, folder: &Path) -> Server {
    std::fs::create_dir_all(folder).unwrap();
    let cairn = Cairn::open_for_agents(f._tmp.path().join("data")).unwrap();
    Server::new(Arc::new(crate::Session::new(cairn, folder)))
}

#[test]
fn a_server_outside_any_repository_names_the_folder_it_was_started_in() {
    let f = fixture();
    let outside = std::fs::canonicalize(f._tmp.path())
        .unwrap()
        .join("elsewhere");
    let server = started_in(&f, &outside);
    let shown = outside.display().to_string();
    for (tool, res) in [
        ("skim", skim(&server, json!({}))),
        (
            "why",
            args(json!({"target": "HEAD"})).and_then(|a| server.why(a)),
        ),
    ] {
        let (is_error, text) = settled(res).unwrap();
        assert!(is_error, "{tool}: {text}");
        assert!(
            text.starts_with(&format!("{shown}: no git repository found here"))
                || text.starts_with(&format!("{shown} is not in a git repository")),
            "{tool}: {text}"
        );
        assert!(!text.contains("REDACTED"), "{tool}: {text}");
        assert!(text.contains("cairn mcp -C <dir>"), "{tool}: {text}");
    }
    // A folder whose name holds a secret is not named but hidden whole, as the rule hides
    // every folder: a token, and secrets a `/` splits, which no part alone shows.
    let token = format!("ghp_{}", "R4nd0mT0k3nV4lu3F0rT3st1ngXyZ9Q8w7E6");
    for (secret, tail) in [
        (token.as_str(), token.as_str()),
        ("password=Xk9#mQ2/vL8pR4zT", "vL8pR4zT"),
        (
            "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "bPxRfiCYEXAMPLEKEY",
        ),
    ] {
        let (_, text) = settled(skim(&started_in(&f, &outside.join(secret)), json!({}))).unwrap();
        assert!(!text.contains(tail), "{text}");
        assert!(
            text.starts_with("[REDACTED:path]") && text.contains("no git repository"),
            "{text}"
        );
    }
}
