//! What an agent names things with: session addresses (`cairn://session/<key>?record=N`, the
//! same links the app, insights and evidence use), targets for `skim`, and page cursors.

use cairn_core::git::targets::{Target, TargetKind, pr_number_of};

/// A session, one of its turns, or a range of its records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    pub session: String,
    pub turn: Option<String>,
    /// First and last record ordinal (equal for one record).
    pub records: Option<(u32, u32)>,
}

/// Longest address accepted (a session key is 71 bytes; an agent's session id about 40).
const MAX_ADDRESS: usize = 512;

/// `<key>`, `cairn://session/<key>`, `…?record=N`, `…?record=N-M`, `…?turn=<key or index>`.
pub fn parse(text: &str) -> Result<Address, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err(
            "the address is empty; give a session key or `cairn://session/<key>?record=N`".into(),
        );
    }
    if text.len() > MAX_ADDRESS {
        return Err(format!(
            "the address is {} bytes; at most {MAX_ADDRESS} are accepted",
            text.len()
        ));
    }
    if unseen(text) {
        return Err("the address contains control or invisible characters".into());
    }
    let rest = match text.strip_prefix("cairn://") {
        Some(rest) => rest.strip_prefix("session/").ok_or_else(|| {
            format!("{text:?} is not a session address; use `cairn://session/<key>?record=N`")
        })?,
        None => text,
    };
    let (session, query) = match rest.split_once('?') {
        Some((s, q)) => (s, Some(q)),
        None => (rest, None),
    };
    let session = session.trim_end_matches('/');
    if session.is_empty() || session.contains(['/', ' ']) {
        return Err(format!(
            "{text:?} does not name a session; use `cairn://session/<key>`"
        ));
    }
    let mut out = Address {
        session: session.to_owned(),
        turn: None,
        records: None,
    };
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        match k {
            "record" => out.records = Some(record_range(v)?),
            "turn" if !v.is_empty() => out.turn = Some(v.to_owned()),
            _ => {
                return Err(format!(
                    "{text:?}: unknown address part {k:?}; expected `record=N` or `turn=<key or index>`"
                ));
            }
        }
    }
    Ok(out)
}

/// `N` or `N-M`.
pub fn record_range(v: &str) -> Result<(u32, u32), String> {
    let num = |s: &str| {
        s.trim()
            .parse::<u32>()
            .map_err(|_| format!("record {v:?} is not a record number (N or N-M)"))
    };
    let (a, b) = match v.split_once('-') {
        Some((a, b)) => (num(a)?, num(b)?),
        None => {
            let n = num(v)?;
            (n, n)
        }
    };
    if b < a {
        return Err(format!("records {a}-{b} are reversed"));
    }
    Ok((a, b))
}

/// The link to a record (what `show` takes back).
pub fn record_link(session_key: &str, ordinal: u32) -> String {
    format!("cairn://session/{session_key}?record={ordinal}")
}

pub fn session_link(session_key: &str) -> String {
    format!("cairn://session/{session_key}")
}

pub fn turn_link(session_key: &str, turn_index: u32) -> String {
    format!("cairn://session/{session_key}?turn={turn_index}")
}

/// Whether an agent's argument holds what a reader is not shown: a control character, a bidi
/// control or an invisible break ([`cairn_core::text::hidden`]). `ma\u{202e}in` reads as a
/// branch name it is not; refused rather than cleaned into another one.
pub fn unseen(text: &str) -> bool {
    text.chars().any(char::is_control) || !cairn_core::text::hidden(text).is_empty()
}

/// A skim target from what an agent wrote: a PR (`#123`, `123`, a PR URL), a change
/// (`change:<id>`), a review (`review:<id>`), or else a branch (`branch:` optional).
pub fn target(text: &str) -> Result<Target, String> {
    let t = text.trim();
    if t.len() > MAX_ADDRESS || unseen(t) {
        return Err("the target is too long or contains control or invisible characters".into());
    }
    let parsed = if pr_number_of(t).is_some() {
        Target::parse(TargetKind::Review, t)
    } else if let Some(id) = t
        .strip_prefix("change:")
        .or_else(|| t.strip_prefix("change-id:"))
    {
        Target::parse(TargetKind::Change, id)
    } else if t.starts_with("gitbutler-change:") {
        Target::parse(TargetKind::Change, t)
    } else if t.starts_with("review:")
        || t.starts_with("pull-request:")
        || t.starts_with("gitbutler-review:")
    {
        Target::parse(TargetKind::Review, t)
    } else {
        Target::parse(TargetKind::Branch, t)
    };
    parsed.map_err(|e| e.to_string())
}

/// The furthest a cursor may point into a result set.
pub const MAX_OFFSET: usize = 10_000;

/// Hex digits of a cursor's query digest: enough that two queries of one server session
/// share one by accident about once in four billion, short enough to keep a cursor short.
const QUERY_DIGITS: usize = 8;

/// One page of a paged tool's answer: where it starts in the result set, and the query that
/// result set answers.
///
/// A cursor is `<tool>.<offset>.<query>`, opaque to the agent: `query` is a short digest of
/// the call's arguments other than the cursor, as the tool read them (so the order of keys,
/// or a `null` for an argument left out, makes no difference). A cursor given with other
/// arguments is an offset into another result set: read as one into this set it would
/// silently skip results the agent never saw, so it is refused, saying how to go on.
#[derive(Debug)]
pub struct Page {
    tool: &'static str,
    query: String,
    /// Where this page starts.
    pub offset: usize,
}

impl Page {
    /// The page `cursor` names for the call of `tool` with `args` (the first page without a
    /// cursor), or why the cursor is not one this call may take back.
    pub fn of<A: serde::Serialize>(
        tool: &'static str,
        args: &A,
        cursor: Option<&str>,
    ) -> Result<Page, String> {
        let query = query_digest(args)?;
        let Some(c) = cursor.map(str::trim).filter(|c| !c.is_empty()) else {
            return Ok(Page {
                tool,
                query,
                offset: 0,
            });
        };
        let shown = cairn_core::text::one_line(c, 60);
        let (offset, digest) = c
            .strip_prefix(tool)
            .and_then(|r| r.strip_prefix('.'))
            .and_then(|r| r.split_once('.'))
            .and_then(|(n, d)| Some((n.parse::<usize>().ok()?, d)))
            .filter(|(n, d)| *n <= MAX_OFFSET && d.len() == QUERY_DIGITS)
            .ok_or_else(|| {
                format!("cursor {shown:?} is not one `{tool}` returned; pass `next_cursor` from its last answer, or none for the first page")
            })?;
        if digest != query {
            return Err(format!(
                "cursor {shown:?} came with other `{tool}` arguments: a cursor belongs to the query that returned it: repeat that query (the same arguments, with this cursor) or drop `cursor` for this query's first page"
            ));
        }
        Ok(Page {
            tool,
            query,
            offset,
        })
    }

    /// The cursor of the page after this one, which listed `listed` items.
    pub fn next(&self, listed: usize) -> String {
        format!("{}.{}.{}", self.tool, self.offset + listed, self.query)
    }
}

/// The digest of a call's arguments other than `cursor`: what defines its result set.
fn query_digest<A: serde::Serialize>(args: &A) -> Result<String, String> {
    let mut value =
        serde_json::to_value(args).map_err(|e| format!("the arguments cannot be read: {e}"))?;
    if let serde_json::Value::Object(map) = &mut value {
        map.remove("cursor");
    }
    let mut digest = cairn_core::keys::digest_hex(value.to_string().as_bytes());
    digest.truncate(QUERY_DIGITS);
    Ok(digest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        assert_eq!(
            parse("cairn://session/sha256-ab?record=12").unwrap(),
            Address {
                session: "sha256-ab".into(),
                turn: None,
                records: Some((12, 12))
            }
        );
        assert_eq!(parse("sha256-ab").unwrap().records, None);
        assert_eq!(
            parse("cairn://session/k?record=3-9").unwrap().records,
            Some((3, 9))
        );
        assert_eq!(
            parse("cairn://session/k?turn=2").unwrap().turn.as_deref(),
            Some("2")
        );
        for bad in [
            "",
            "cairn://recall?tab=x",
            "cairn://session/?record=1",
            "cairn://session/k?record=x",
            "cairn://session/k?record=9-3",
            "cairn://session/k?evil=1",
            "k\u{1b}[2J",
            &"x".repeat(600),
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn targets() {
        assert_eq!(target("#12").unwrap().kind, TargetKind::Review);
        assert_eq!(
            target("https://github.com/o/r/pull/7").unwrap().pr_number,
            Some(7)
        );
        assert_eq!(target("change:abc").unwrap().key, "gitbutler-change:abc");
        assert_eq!(target("feature/x").unwrap().key, "ref:refs/heads/feature/x");
        assert!(target("").is_err());
    }

    #[test]
    fn cursors() {
        let args = |q: &str| serde_json::json!({"query": q, "limit": 5, "cursor": "x"});
        let first = Page::of("search", &args("beads"), None).unwrap();
        assert_eq!(first.offset, 0);
        let next = first.next(40);
        assert_eq!(
            Page::of("search", &args("beads"), Some(&next))
                .unwrap()
                .offset,
            40
        );
        // The cursor is left out of the digest: the next page's cursor is the same query's.
        let after = Page::of("search", &args("beads"), Some(&next)).unwrap();
        assert_eq!(
            Page::of("search", &args("beads"), Some(&after.next(5)))
                .unwrap()
                .offset,
            45
        );
        let foreign = Page::of("search", &args("otel"), Some(&next)).unwrap_err();
        assert!(
            foreign.contains("a cursor belongs to the query that returned it"),
            "{foreign}"
        );
        let skim = Page::of("skim", &args("beads"), None).unwrap().next(40);
        for bad in [
            skim.as_str(),
            "search.40",
            "search.-1.00000000",
            "search.99999999.00000000",
        ] {
            let e = Page::of("search", &args("beads"), Some(bad)).unwrap_err();
            assert!(e.contains("is not one `search` returned"), "{bad}: {e}");
        }
    }
}
