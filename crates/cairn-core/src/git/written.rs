//! What an edit wrote, and whether a commit's change contains it: the one matcher `why` (a
//! commit's added lines back to the edits that wrote them) and association (`edit_committed`
//! only when the commit carries the session's text) share.
//!
//! Lines compare whitespace-normalised ([`normalise`]); only a line with enough to it to be
//! told apart ([`distinctive`]) counts as evidence, so `}` or `end` written by a session says
//! nothing about which commit holds its work. Association keeps the lines as [`key`]s (a stable
//! 64-bit hash per line) beside each edited path, so a relink compares them without reading the
//! session's records again.

use crate::archive::tool_input::{self, Sign, ToolInput};

/// Whitespace runs as one space, ends trimmed: how an edit's text and a file's line compare.
pub fn normalise(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A line plain enough to appear anywhere (`}`, `end`, `*/`) says nothing about who wrote it.
pub fn distinctive(normalised: &str) -> bool {
    normalised.chars().filter(|c| c.is_alphanumeric()).count() >= 5 && normalised.len() >= 6
}

/// The lines an edit adds (its new text, or the written file's content), normalised, per path
/// as the agent wrote it (`None`: the record's own path). Reads the edit as exports show it
/// ([`tool_input::read_parts`]): `tool_input` is the record's JSON text.
pub fn added_by_edit(
    tool_input: Option<&str>,
    tool_kind: Option<&str>,
    file_paths: &[String],
) -> Vec<(Option<String>, Vec<String>)> {
    let ToolInput::Diff { path, lines } = tool_input::read_parts(tool_input, tool_kind, file_paths)
    else {
        return Vec::new();
    };
    let mut out: Vec<(Option<String>, Vec<String>)> = vec![(path, Vec::new())];
    for (sign, text) in lines {
        match sign {
            Sign::Add => {
                if let Some((_, added)) = out.last_mut() {
                    added.push(normalise(&text));
                }
            }
            Sign::Hunk | Sign::Context => {
                let header = ["*** Add File: ", "*** Update File: ", "+++ b/", "+++ "]
                    .iter()
                    .find_map(|p| text.strip_prefix(p));
                if let Some(p) = header.filter(|p| *p != "/dev/null") {
                    out.push((Some(p.trim().to_owned()), Vec::new()));
                }
            }
            Sign::Remove => {}
        }
    }
    out.retain(|(_, lines)| !lines.is_empty());
    out
}

/// The distinctive lines an edit wrote to `file` (one of the record's `file_paths`): those of
/// the entry [`added_by_edit`] names it by (or, for a patch that names its files relative to
/// the working directory, by a path `file` ends with), and those of the record's own entry when
/// the record names one file.
pub fn written_to(
    file: &str,
    file_paths: &[String],
    added: &[(Option<String>, Vec<String>)],
) -> Vec<String> {
    let names = |p: &str| {
        p == file
            || file
                .strip_suffix(p)
                .is_some_and(|head| head.ends_with('/') || head.ends_with('\\'))
    };
    let mut lines: Vec<String> = Vec::new();
    for (path, added) in added {
        let mine = match path {
            Some(p) => names(p),
            None => file_paths.len() == 1,
        } || (file_paths.len() == 1 && added.len() == 1);
        if mine {
            lines.extend(added.iter().filter(|l| distinctive(l)).cloned());
        }
    }
    lines
}

/// A stable key for a normalised line (FNV-1a, 64 bits): what association stores of the text an
/// edit wrote, the same on every build and platform.
pub fn key(normalised: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in normalised.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_writes_its_new_text_and_a_patch_each_file_its_own() {
        let paths = vec!["/r/src/a.rs".to_owned()];
        let edit = r#"{"file_path":"/r/src/a.rs","old_string":"old line here","new_string":"fn  added_here() {\n}\n"}"#;
        let added = added_by_edit(Some(edit), Some("file_edit"), &paths);
        assert_eq!(
            written_to("/r/src/a.rs", &paths, &added),
            vec!["fn added_here() {"]
        );

        let write = r#"{"file_path":"/r/notes.md","content":"A whole new file\nwith two lines\n"}"#;
        let paths = vec!["/r/notes.md".to_owned()];
        let added = added_by_edit(Some(write), Some("file_edit"), &paths);
        assert_eq!(
            written_to("/r/notes.md", &paths, &added),
            vec!["A whole new file", "with two lines"]
        );

        let patch = "*** Begin Patch\n*** Update File: src/one.rs\n@@\n-gone\n+first file line\n*** Add File: src/two.rs\n+second file line\n*** End Patch\n";
        let input = serde_json::json!({"input": patch}).to_string();
        let paths = vec!["/r/src/one.rs".to_owned(), "/r/src/two.rs".to_owned()];
        let added = added_by_edit(Some(&input), Some("file_edit"), &paths);
        assert_eq!(
            written_to("/r/src/one.rs", &paths, &added),
            vec!["first file line"]
        );
        assert_eq!(
            written_to("/r/src/two.rs", &paths, &added),
            vec!["second file line"]
        );
        // A path that merely ends with the same letters is another file.
        assert!(written_to("/r/src/xone.rs", &paths, &added).is_empty());
    }

    #[test]
    fn keys_are_stable() {
        assert_eq!(key(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(key("a"), 0xaf63_dc4c_8601_ec8c);
        assert_ne!(key("let a = 1;"), key("let a = 2;"));
    }
}
