//! `cairn://` links from outside: the command line the app starts with, and the command line of
//! a second launch, which the single-instance plugin hands to the running window ([`hand_off`]).
//!
//! Any local program can start `cairn-desktop <link>` (the `.desktop` entry registers the
//! `cairn` scheme, so a browser page can too) or call the running app's D-Bus hand-off with any
//! arguments, so a link is hostile input. The shell lets through only a link that is short,
//! `cairn://<place>` with a place the window has, and plain printable ASCII (no spaces, control
//! or bidi characters: anything else must be %-escaped); the window's router then validates every
//! parameter (`ui/src/lib/links.ts`) and shows an error for anything else.
//!
//! A refused link is refused with a word: the window says what was wrong with it (the
//! `link-refused` event, or `launch_refused` in the app info for the first launch), never the
//! link itself, which may hold anything.

use tauri::{AppHandle, Manager as _, Runtime};
use tauri_specta::Event as _;

use crate::backend::Backend;
use crate::events::{LinkRefused, OpenLink};

/// The longest link accepted; real ones are under 200 bytes.
const MAX_LEN: usize = 2048;
const SCHEME: &str = "cairn://";
/// The places of the window's router (`parseLink` in `ui/src/lib/links.ts`; a test holds the two
/// lists equal).
const PLACES: [&str; 7] = [
    "session", "branches", "sessions", "search", "recall", "settings", "team",
];

/// Why an argument is not a link the window may open; shown as "it …", after "was not opened:".
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
            Refusal::TooLong => "it is longer than 2048 bytes",
            Refusal::NotCairn => "it is not a cairn:// link",
            Refusal::Character => {
                "it holds a space, a control or a non-ASCII character (those must be %-escaped)"
            }
            Refusal::UnknownPlace => "it names no place in Cairn",
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

/// What a command line (without `argv[0]`) says about a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    /// No argument tried to be a link: none given, or only flags.
    Nothing,
    /// The first argument that is a valid link.
    Link(String),
    /// Arguments tried to be links and none may be opened: why the first was refused.
    Refused(Refusal),
}

impl Launch {
    pub fn link(&self) -> Option<&str> {
        match self {
            Launch::Link(link) => Some(link),
            _ => None,
        }
    }

    pub fn refusal(&self) -> Option<Refusal> {
        match self {
            Launch::Refused(why) => Some(*why),
            _ => None,
        }
    }
}

/// The first argument that is a valid link, else why the first that tried was refused.
/// Arguments starting with `-` are flags (tauri-driver passes some), never a link attempt.
pub fn from_args(args: impl IntoIterator<Item = String>) -> Launch {
    let mut refused = None;
    for arg in args.into_iter().filter(|arg| !arg.starts_with('-')) {
        match validate(&arg) {
            Ok(_) => return Launch::Link(arg),
            Err(why) => refused = refused.or(Some(why)),
        }
    }
    refused.map_or(Launch::Nothing, Launch::Refused)
}

/// A second launch's command line (`argv[0]` first), handed over by the single-instance plugin:
/// bring the window to the front and, when it carries a valid link, tell the window to open it
/// (the `open-link` event); when its link was refused, tell the window why (`link-refused`,
/// the reason only, never the link). Either is also kept for a window still starting, which
/// reads it from the app info.
pub fn hand_off<R: Runtime>(app: &AppHandle<R>, argv: Vec<String>) {
    let launch = from_args(argv.into_iter().skip(1));
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.unminimize();
        let _ = window.show();
        let _ = window.set_focus();
    }
    if let Some(backend) = app.try_state::<Backend>() {
        backend.set_launch(launch.clone());
    }
    // A window that is gone cannot navigate or say anything; the app goes on.
    match launch {
        Launch::Link(link) => {
            let _ = OpenLink { link }.emit(app);
        }
        Launch::Refused(why) => {
            eprintln!("cairn-desktop: a second launch passed a link that was not opened: {why}");
            let _ = LinkRefused {
                reason: why.to_string(),
            }
            .emit(app);
        }
        Launch::Nothing => {}
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
        assert_eq!(from_args(args), Launch::Link(link));
        // The first valid one wins; an invalid one before it is skipped.
        let args = ["cairn://nowhere".to_owned(), "cairn://settings".to_owned()];
        assert_eq!(from_args(args).link(), Some("cairn://settings"));
    }

    /// A command line whose link is refused says why (the first attempt's reason); flags are
    /// no link attempt, so a launch with only flags is a plain start.
    #[test]
    fn a_refused_link_keeps_its_reason_and_flags_are_no_link() {
        let args = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            from_args(args(&["https://x"])),
            Launch::Refused(Refusal::NotCairn)
        );
        assert_eq!(
            from_args(args(&["--port=4444", "cairn://nowhere", "https://x"])),
            Launch::Refused(Refusal::UnknownPlace)
        );
        assert_eq!(from_args(args(&[])), Launch::Nothing);
        assert_eq!(
            from_args(args(&["--automation", "-v", "-cairn://x"])),
            Launch::Nothing
        );
        // The reason is said in words that never repeat the link.
        let hostile = "cairn://search?q=\u{202e}gnp.exe";
        let why = from_args(args(&[hostile])).refusal().unwrap();
        assert_eq!(why, Refusal::Character);
        assert!(!why.to_string().contains("gnp"), "{why}");
        assert_eq!(
            Refusal::UnknownPlace.to_string(),
            "it names no place in Cairn"
        );
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
