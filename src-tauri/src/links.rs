//! `cairn://` links from outside: the command line the app starts with, and the command line of
//! a second launch, which the single-instance plugin hands to the running window ([`hand_off`]).
//!
//! Any local program can start `cairn-desktop <link>` (the `.desktop` entry registers the
//! `cairn` scheme, so a browser page can too) or call the running app's D-Bus hand-off with any
//! arguments, so a link is hostile input. The shell lets through only a link that is short,
//! `cairn://<place>` with a place the window has, and plain printable ASCII (no spaces, control
//! or bidi characters: anything else must be %-escaped); the window's router then validates every
//! parameter (`ui/src/lib/links.ts`) and shows an error for anything else.

use tauri::{AppHandle, Manager as _, Runtime};
use tauri_specta::Event as _;

use crate::backend::Backend;
use crate::events::OpenLink;

/// The longest link accepted; real ones are under 200 bytes.
const MAX_LEN: usize = 2048;
const SCHEME: &str = "cairn://";
/// The places of the window's router (`parseLink` in `ui/src/lib/links.ts`; a test holds the two
/// lists equal).
const PLACES: [&str; 7] = [
    "session", "branches", "sessions", "search", "recall", "settings", "team",
];

/// Why an argument is not a link the window may open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    TooLong,
    NotCairn,
    /// A space, control, non-ASCII (bidi override, look-alike) character.
    Character,
    UnknownPlace,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Refusal::TooLong => "longer than 2048 bytes",
            Refusal::NotCairn => "not a cairn:// link",
            Refusal::Character => "holds a character other than printable ASCII",
            Refusal::UnknownPlace => "names no place in Cairn",
        })
    }
}

/// `arg` as a link the window may open.
pub fn validate(arg: &str) -> Result<&str, Refusal> {
    if arg.len() > MAX_LEN {
        return Err(Refusal::TooLong);
    }
    let Some(rest) = arg.strip_prefix(SCHEME) else {
        return Err(Refusal::NotCairn);
    };
    if !arg.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(Refusal::Character);
    }
    let place = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if !PLACES.contains(&place) {
        return Err(Refusal::UnknownPlace);
    }
    Ok(arg)
}

/// The first argument that is a valid link (others are ignored: tauri-driver passes flags).
pub fn from_args(args: impl IntoIterator<Item = String>) -> Option<String> {
    args.into_iter().find(|arg| validate(arg).is_ok())
}

/// A second launch's command line (`argv[0]` first), handed over by the single-instance plugin:
/// bring the window to the front and, when it carries a valid link, tell the window to open it
/// (the `open-link` event) and keep it as the link to open first, for a window still starting.
pub fn hand_off<R: Runtime>(app: &AppHandle<R>, argv: Vec<String>) {
    let given = argv.len().saturating_sub(1);
    let link = from_args(argv.into_iter().skip(1));
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.unminimize();
        let _ = window.show();
        let _ = window.set_focus();
    }
    match link {
        Some(link) => {
            if let Some(backend) = app.try_state::<Backend>() {
                backend.set_launch_link(Some(link.clone()));
            }
            // A window that is gone cannot navigate; the app goes on.
            let _ = OpenLink { link }.emit(app);
        }
        None if given > 0 => {
            eprintln!(
                "cairn-desktop: a second launch passed {}, none a cairn:// link it may open",
                cairn_core::text::plural(given, "argument")
            );
        }
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sha256-00112233445566778899aabbccddeeff";

    #[test]
    fn picks_the_cairn_link_out_of_the_arguments() {
        let link = format!("cairn://session/{KEY}?record=3");
        let args = ["--verbose".to_owned(), link.clone(), "x".to_owned()];
        assert_eq!(from_args(args), Some(link));
        // The first valid one wins; an invalid one before it is skipped.
        let args = ["cairn://nowhere".to_owned(), "cairn://settings".to_owned()];
        assert_eq!(from_args(args).as_deref(), Some("cairn://settings"));
        assert_eq!(from_args(["https://x".to_owned()]), None);
    }

    #[test]
    fn hostile_links_are_refused_with_the_reason() {
        let long = format!("cairn://search?q={}", "a".repeat(3000));
        for (arg, why) in [
            (long.as_str(), Refusal::TooLong),
            ("https://evil.example/", Refusal::NotCairn),
            ("CAIRN://settings", Refusal::NotCairn),
            ("cairn:settings", Refusal::NotCairn),
            ("javascript:alert(1)//cairn://settings", Refusal::NotCairn),
            ("cairn://search?q=a b", Refusal::Character),
            ("cairn://search?q=a\nb", Refusal::Character),
            ("cairn://search?q=\u{1b}]0;x\u{7}", Refusal::Character),
            ("cairn://search?q=\u{202e}gnp.exe", Refusal::Character),
            ("cairn://séssion/x", Refusal::Character),
            ("cairn://search\0", Refusal::Character),
            ("cairn://", Refusal::UnknownPlace),
            ("cairn://evil.example/session", Refusal::UnknownPlace),
            ("cairn://session.evil/x", Refusal::UnknownPlace),
            ("cairn://@session/x", Refusal::UnknownPlace),
        ] {
            assert_eq!(validate(arg), Err(why), "{arg:?}");
        }
        for ok in [
            "cairn://settings",
            "cairn://sessions",
            "cairn://recall?tab=generated&insight=4",
            "cairn://branches?branch=ref%3Arefs%2Fheads%2Fmain&repo=%2Fhome%2Fme%2Fr",
            "cairn://search?q=%C3%A9t%C3%A9#x",
            "cairn://team?session=sha256-00112233445566778899aabbccddeeff&publisher=mate",
        ] {
            assert_eq!(validate(ok), Ok(ok));
        }
        let evidence = format!("cairn://session/{KEY}?record=12");
        assert_eq!(validate(&evidence), Ok(evidence.as_str()));
    }

    /// A place the router opens but the shell does not list is a link no one outside can open
    /// (`cairn://team` was one): the shell's list is the router's `parseLink` cases.
    #[test]
    fn the_shell_lets_through_every_place_the_router_opens() {
        let router = include_str!("../../ui/src/lib/links.ts");
        let parse = router
            .split("export function parseLink")
            .nth(1)
            .and_then(|rest| rest.split("\nexport function").next())
            .expect("ui/src/lib/links.ts has parseLink");
        let mut cases: Vec<&str> = parse
            .lines()
            .filter_map(|l| l.trim().strip_prefix("case '"))
            .filter_map(|l| l.split('\'').next())
            .collect();
        cases.sort_unstable();
        let mut places = PLACES.to_vec();
        places.sort_unstable();
        assert_eq!(cases, places);
    }
}
