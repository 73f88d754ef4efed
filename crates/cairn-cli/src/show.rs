//! `cairn show`: a session's turns, one turn's records, or the records a `cairn://session/…`
//! link cites, in the turn that holds them. A link is read by the one parser of such links
//! ([`cairn_mcp::address::parse`], what the MCP `show` tool reads): links come from reports,
//! exports and model output, and are refused rather than guessed at when malformed.

use std::io::Write;

use anyhow::Result;
use cairn_core::Cairn;
use clap::Args;

use crate::Usage;
use crate::render::{self, clean};

#[derive(Args)]
pub struct ShowArgs {
    /// A session: its key (`sha256-…`, or a prefix of it with at least 5 hex digits that no
    /// other key shares), the agent's own session id, or a link reports, exports and Recall
    /// evidence cite: `cairn://session/<key>`, with `?turn=<turn>` for that turn, or
    /// `?record=N` (or `N-M`) for the turn holding that record, the record marked.
    pub session: String,
    /// A turn key or turn index: show that turn's records.
    #[arg(long)]
    pub turn: Option<String>,
    /// How many turns or records (the most recent; around the cited ones for `?record=`).
    #[arg(long, default_value_t = cairn_core::views::show::DEFAULT_LIMIT, value_parser = clap::value_parser!(u32).range(1..))]
    pub limit: u32,
}

/// What was asked for: a session, with a turn or a range of records of it.
struct Asked {
    session: String,
    turn: Option<String>,
    records: Option<(u32, u32)>,
}

/// The session, turn and records `args` name. A `cairn://` link is parsed; anything else is a
/// key or an agent's id, as before links were taken. A turn named twice is refused.
fn asked(args: &ShowArgs) -> Result<Asked, Usage> {
    if !args.session.trim_start().starts_with("cairn://") {
        return Ok(Asked {
            session: args.session.clone(),
            turn: args.turn.clone(),
            records: None,
        });
    }
    let link = cairn_mcp::address::parse(&args.session).map_err(|why| Usage(clean(&why)))?;
    if args.turn.is_some() && (link.turn.is_some() || link.records.is_some()) {
        return Err(Usage(
            "the link names its turn (or record) already: drop --turn, or give the session alone (`cairn://session/<key>`)".into(),
        ));
    }
    Ok(Asked {
        session: link.session,
        turn: args.turn.clone().or(link.turn),
        records: link.records,
    })
}

pub fn run(
    args: ShowArgs,
    cairn: &Cairn,
    json: bool,
    keys: bool,
    out: &mut impl Write,
) -> Result<()> {
    let asked = asked(&args)?;
    if let Some(cited) = asked.records {
        return records(cairn, &asked.session, cited, args.limit, json, keys, out);
    }
    match asked.turn {
        None => {
            let view = cairn.show_session(&asked.session, args.limit)?;
            if json {
                render::json(out, &view)?;
            } else {
                render::timeline(out, &view, keys)?;
                // What the parsers could not read, kept past the sync that said so.
                render::parse_warnings(out, &cairn.session_warnings(&asked.session)?)?;
            }
        }
        Some(turn) => {
            let view = cairn.show_turn(&asked.session, &turn, args.limit)?;
            if json {
                render::json(out, &view)?;
            } else {
                let timeline = cairn.show_session(&asked.session, 0)?;
                render::turn_records(out, &timeline, &view, None, keys)?;
            }
        }
    }
    Ok(())
}

/// The records `cited` (first and last ordinal) in the turn holding the first: the core's window
/// of `limit` records of that turn around them ([`Cairn::show_records`], what the MCP `show`
/// tool gives for the same link), the cited ones marked. Those past the turn's end are left to
/// the turns that hold them.
fn records(
    cairn: &Cairn,
    session: &str,
    cited: (u32, u32),
    limit: u32,
    json: bool,
    keys: bool,
    out: &mut impl Write,
) -> Result<()> {
    let view = cairn.show_records(session, cited.0, cited.1, limit)?;
    if json {
        return render::json(out, &view);
    }
    let index = view.turn.turn_index;
    // The session's name and agent head the turn.
    let head = cairn.show_session(session, 0)?;
    let marked = (view.cited_records.first, view.cited_records.last);
    render::turn_records(out, &head, &view.turn, Some(marked), keys)?;
    if view.has_more_after {
        writeln!(
            out,
            "(and {} after these: --turn {index} --limit {} shows the whole turn)",
            render::plural(view.records_after(), "record"),
            view.turn.coverage.total_records
        )?;
    }
    if let Some(after) = view.cited_after_turn {
        writeln!(
            out,
            "(records {}-{} are in the turns after this one: --turn {} shows the next)",
            after.first,
            after.last,
            index + 1
        )?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn args(session: &str, turn: Option<&str>) -> ShowArgs {
        ShowArgs {
            session: session.to_owned(),
            turn: turn.map(str::to_owned),
            limit: 20,
        }
    }

    #[test]
    fn a_link_names_the_session_and_its_turn_or_records_once() {
        let a = asked(&args("cairn://session/sha256-ab?record=3-5", None)).unwrap();
        assert_eq!((a.session.as_str(), a.records), ("sha256-ab", Some((3, 5))));
        let a = asked(&args("cairn://session/sha256-ab?turn=2", None)).unwrap();
        assert_eq!(a.turn.as_deref(), Some("2"));
        let a = asked(&args("cairn://session/sha256-ab", Some("1"))).unwrap();
        assert_eq!(a.turn.as_deref(), Some("1"));
        // A key or an agent's id is taken as it is.
        let a = asked(&args("7f0c a/b", None)).unwrap();
        assert_eq!((a.session.as_str(), a.records), ("7f0c a/b", None));
        for bad in [
            "cairn://session/sha256-ab?record=9-3",
            "cairn://session/sha256-ab?evil=1",
            "cairn://recall?tab=inbox",
            "cairn://session/sha256-ab?record=1\u{1b}[2J",
        ] {
            assert!(asked(&args(bad, None)).is_err(), "{bad:?}");
        }
        assert!(asked(&args("cairn://session/sha256-ab?turn=2", Some("1"))).is_err());
    }
}
