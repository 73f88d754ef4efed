//! `cairn show`: a session's turns, one turn's records, or the records a `cairn://session/…`
//! link cites, in the turn that holds them. A link is read by the one parser of such links
//! ([`cairn_mcp::address::parse`], what the MCP `show` tool reads): links come from reports,
//! exports and model output, and are refused rather than guessed at when malformed.

use std::io::Write;

use anyhow::Result;
use cairn_core::Cairn;
use cairn_core::views::show::{RecordCoverage, TurnRecords};
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

/// The records `cited` (first and last ordinal) in the turn holding the first: a window of
/// `limit` records of that turn around them (more when they are more), the cited ones marked.
/// Those past the turn's end are left to the turns that hold them.
fn records(
    cairn: &Cairn,
    session: &str,
    cited: (u32, u32),
    limit: u32,
    json: bool,
    keys: bool,
    out: &mut impl Write,
) -> Result<()> {
    let (from, to) = cited;
    let Some(index) = cairn.turn_of_record(session, from)? else {
        return Err(cairn_core::Error::NotFound(format!(
            "record {from} in session {session:?}; list its turns with `cairn show {}`",
            clean(session)
        ))
        .into());
    };
    let head = cairn.show_session(session, 0)?;
    let from_turn = head.coverage.total_turns.saturating_sub(index);
    let timeline = cairn.show_session(session, from_turn)?;
    let turn = timeline
        .turns
        .iter()
        .find(|t| t.turn_index == index)
        .ok_or_else(|| {
            cairn_core::Error::NotFound(format!("turn {index} of session {session:?}"))
        })?;
    let (start, end) = window((turn.first_ordinal, turn.last_ordinal), (from, to), limit);
    let records = cairn.records(session, start, end)?;
    let view = TurnRecords {
        coverage: RecordCoverage {
            showing_records: records.len() as u32,
            total_records: turn.record_count,
            has_more_before: start > turn.first_ordinal,
        },
        records,
        // Its key, index and status as `--turn` gives them.
        ..cairn.show_turn(session, &index.to_string(), 1)?
    };
    let cited_here = (from, to.min(turn.last_ordinal));
    if json {
        let mut value = serde_json::to_value(&view)?;
        if let serde_json::Value::Object(fields) = &mut value {
            fields.insert(
                "cited_records".into(),
                serde_json::json!({"first": cited_here.0, "last": cited_here.1}),
            );
            fields.insert(
                "has_more_after".into(),
                serde_json::Value::Bool(end < turn.last_ordinal),
            );
        }
        return render::json(out, &value);
    }
    render::turn_records(out, &timeline, &view, Some(cited_here), keys)?;
    if end < turn.last_ordinal {
        writeln!(
            out,
            "(and {} after these: --turn {index} --limit {} shows the whole turn)",
            render::plural(turn.last_ordinal - end, "record"),
            turn.record_count
        )?;
    }
    if to > turn.last_ordinal {
        writeln!(
            out,
            "(records {}-{to} are in the turns after this one: --turn {} shows the next)",
            turn.last_ordinal + 1,
            index + 1
        )?;
    }
    Ok(())
}

/// The ordinals to show of a turn spanning `turn` (first, last) for the records `cited`: at
/// least `limit` of them when the turn has as many, every cited one the turn holds, the rest
/// split before and after the cited ones (what led to them, what came of them).
fn window(turn: (u32, u32), cited: (u32, u32), limit: u32) -> (u32, u32) {
    let (first, last) = turn;
    let from = cited.0.clamp(first, last);
    let to = cited.1.clamp(from, last);
    let size = limit.max(to - from + 1);
    let spare = size - (to - from + 1);
    let mut start = from.saturating_sub(spare / 2).max(first);
    let end = start.saturating_add(size - 1).min(last).max(to);
    // A window cut short by the turn's end takes the rest before.
    start = end.saturating_sub(size - 1).max(first).min(start);
    (start, end)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_window_holds_the_cited_records_inside_their_turn() {
        // Centred when the turn allows.
        assert_eq!(window((0, 99), (50, 50), 5), (48, 52));
        // Near the turn's start or end: pushed inside it, still `limit` long.
        assert_eq!(window((10, 99), (11, 11), 5), (10, 14));
        assert_eq!(window((0, 99), (99, 99), 5), (95, 99));
        // A turn shorter than the limit: all of it.
        assert_eq!(window((3, 6), (4, 4), 20), (3, 6));
        // More cited than the limit: all the cited ones this turn holds.
        assert_eq!(window((0, 99), (10, 40), 5), (10, 40));
        assert_eq!(window((0, 20), (10, 40), 5), (10, 20));
    }

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
