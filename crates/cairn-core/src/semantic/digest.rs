//! The digest of a turn that the `sessions` vector store embeds: what was asked, what came of it,
//! the files it touched and the commands it ran, in a few hundred characters.
//!
//! Deterministic (the same turn gives the same bytes, so its vector is reused until the turn
//! grows), redacted (it is made only of columns the capture redacted: previews, `file_paths`, the
//! exec calls' input) and cheap (one pass over rows the archive already has; no model). Short on
//! purpose: the encoder's cost grows with every token, and the previews alone already say what
//! the turn was about; the paths and commands add the identifiers a `why` question names.

use crate::archive::store::TurnText;
use crate::text::excerpt;

/// Characters kept of the request and of the outcome.
const REQUEST_CHARS: usize = 200;
const OUTCOME_CHARS: usize = 200;
/// Files and commands named, at most.
const MAX_FILES: usize = 6;
const MAX_COMMANDS: usize = 3;
const COMMAND_CHARS: usize = 80;
/// The whole digest, at most (≈ 150 word pieces of English; the model reads 256).
pub const DIGEST_CHARS: usize = 640;

/// The text embedded for a turn (`session-turn-v2`).
pub fn turn_digest(t: &TurnText) -> String {
    let mut parts: Vec<String> = Vec::new();
    for (text, max) in [
        (t.preview.as_deref(), REQUEST_CHARS),
        (t.answer_preview.as_deref(), OUTCOME_CHARS),
    ] {
        if let Some(text) = text.map(str::trim).filter(|s| !s.is_empty()) {
            parts.push(excerpt(text, max));
        }
    }
    let mut files: Vec<String> = Vec::new();
    for f in &t.files {
        let short = short_path(f);
        if !short.is_empty() && !files.contains(&short) {
            files.push(short);
        }
        if files.len() == MAX_FILES {
            break;
        }
    }
    if !files.is_empty() {
        parts.push(format!("files: {}", files.join(", ")));
    }
    let mut commands: Vec<String> = Vec::new();
    for c in &t.commands {
        let line = command_line(c);
        if !line.is_empty() && !commands.contains(&line) {
            commands.push(line);
        }
        if commands.len() == MAX_COMMANDS {
            break;
        }
    }
    if !commands.is_empty() {
        parts.push(format!("ran: {}", commands.join("; ")));
    }
    let digest = parts.join("\n");
    match digest.char_indices().nth(DIGEST_CHARS) {
        Some((cut, _)) => digest[..cut].to_owned(),
        None => digest,
    }
}

/// The last two components of a path (`src/login.rs`): what a person names, without the
/// machine's home folder, which every path of a project shares.
fn short_path(path: &str) -> String {
    let parts: Vec<&str> = path
        .split(['/', '\\'])
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    let tail = &parts[parts.len().saturating_sub(2)..];
    excerpt(&tail.join("/"), 60)
}

/// A command's first line, whitespace collapsed: the string itself, or the script of an argv
/// array (`["bash", "-lc", "cargo test"]`), or the argv joined.
fn command_line(command: &str) -> String {
    let text = if command.trim_start().starts_with('[') {
        match serde_json::from_str::<Vec<serde_json::Value>>(command) {
            Ok(argv) => {
                let words: Vec<&str> = argv.iter().filter_map(|v| v.as_str()).collect();
                match words.as_slice() {
                    [shell, flag, script, ..]
                        if shell.ends_with("sh")
                            && flag.starts_with('-')
                            && flag.ends_with('c') =>
                    {
                        (*script).to_owned()
                    }
                    _ => words.join(" "),
                }
            }
            Err(_) => command.to_owned(),
        }
    } else {
        command.to_owned()
    };
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    excerpt(first, COMMAND_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(
        preview: Option<&str>,
        answer: Option<&str>,
        files: &[&str],
        commands: &[&str],
    ) -> TurnText {
        TurnText {
            id: 1,
            last_ordinal: 9,
            preview: preview.map(str::to_owned),
            answer_preview: answer.map(str::to_owned),
            files: files.iter().map(|s| (*s).to_owned()).collect(),
            commands: commands.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    #[test]
    fn a_digest_names_the_request_outcome_files_and_commands() {
        let t = turn(
            Some("Make login accept any known user"),
            Some("Implemented: login accepts known users."),
            &[
                "/home/dev/shop/src/login.js",
                "/home/dev/shop/src/login.js",
                "README.md",
            ],
            &[
                "npm test -- login\necho done",
                r#"["bash", "-lc", "git commit -m 'Login accepts known users'"]"#,
                r#"["git", "status"]"#,
                "npm test -- login",
            ],
        );
        assert_eq!(
            turn_digest(&t),
            "Make login accept any known user\nImplemented: login accepts known users.\n\
             files: src/login.js, README.md\n\
             ran: npm test -- login; git commit -m 'Login accepts known users'; git status"
        );
    }

    #[test]
    fn empty_parts_are_left_out_and_an_empty_turn_is_empty() {
        assert_eq!(
            turn_digest(&turn(Some(" "), Some("said"), &[], &[])),
            "said"
        );
        assert_eq!(
            turn_digest(&turn(None, None, &["", "/"], &["", "[]", "[1, 2]"])),
            ""
        );
        assert_eq!(
            turn_digest(&turn(None, None, &[], &["[\"unterminated"])),
            "ran: [\"unterminated"
        );
    }

    #[test]
    fn a_digest_is_short_whatever_the_turn_holds() {
        let long = "word ".repeat(10_000);
        let many: Vec<String> = (0..1000).map(|i| format!("/p/dir{i}/file{i}.rs")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let t = turn(Some(&long), Some(&long), &many, &many);
        let d = turn_digest(&t);
        assert!(d.chars().count() <= DIGEST_CHARS, "{}", d.len());
        assert!(d.starts_with("word word"));
        // Multi-byte text is cut on a character boundary.
        let wide = "é".repeat(5_000);
        let d = turn_digest(&turn(Some(&wide), Some(&wide), &many, &[]));
        assert!(d.chars().count() <= DIGEST_CHARS);
        // The same turn, the same bytes.
        assert_eq!(turn_digest(&t), turn_digest(&t.clone()));
    }
}
