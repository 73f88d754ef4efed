//! `cairn://` links on the command line.
//!
//! Evidence links (`cairn://session/<key>?record=<ordinal>`) are opened by the window's router,
//! which validates every parameter; the shell only picks the link out of the arguments so a
//! desktop entry with `Exec=cairn-desktop %u` (or a person in a terminal) can start the app at
//! that record. OS-level scheme registration is left to the package (see docs/ARCHITECTURE.md).

/// The longest link accepted; real ones are under 200 bytes.
const MAX_LEN: usize = 2048;

/// The first `cairn://` argument, if any (others are ignored: tauri-driver passes none).
pub fn from_args(args: impl IntoIterator<Item = String>) -> Option<String> {
    args.into_iter().find(|arg| {
        arg.len() <= MAX_LEN && arg.starts_with("cairn://") && !arg.chars().any(char::is_control)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_cairn_link_out_of_the_arguments() {
        let args = ["--verbose", "cairn://session/sha256-00?record=3", "x"].map(String::from);
        assert_eq!(
            from_args(args).as_deref(),
            Some("cairn://session/sha256-00?record=3")
        );
        assert_eq!(from_args(["https://x".to_owned()]), None);
        assert_eq!(from_args(["cairn://a\nb".to_owned()]), None);
        assert_eq!(from_args([format!("cairn://{}", "a".repeat(3000))]), None);
    }
}
