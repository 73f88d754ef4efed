//! A person's comments stay with what they annotate when Cairn adds a table to `config.toml`.
//!
//! toml_edit keeps the lines after a table's last key (`# keep it on`, then a blank line) as
//! the text before the next header, or as the file's trailing text when no header follows. A
//! header Cairn adds is laid out right after the table it belongs under (`[recall.extract]`
//! after `[recall]`), that is, between those keys and that text: written as it is, the comment
//! that closed `[recall]` would open `[recall.extract]`. [`keep_closing_comments`] moves it back.

use toml_edit::{DocumentMut, Item, Table};

/// One step from a table to a table inside it: a key, and for an array of tables the index.
type Step = (String, Option<usize>);

/// A table as the document is written: where it is, and whether the edit made its header
/// (a header parsed from the file has a position; one made since has none).
struct Laid {
    place: Vec<Step>,
    made: bool,
}

/// After an edit added headers to `doc`: each run of added headers takes back, as the text
/// before its first header, the comment lines that closed the table above it, those down to
/// the last blank line before the next header of the file (or all of the file's trailing text
/// when none follows). The comment lines right above that next header, with no blank line
/// between, are that header's and stay. Nothing moves when the text holds no comment.
pub(crate) fn keep_closing_comments(doc: &mut DocumentMut) {
    let order = laid_out(doc);
    let mut at = 0;
    while at < order.len() {
        if !order[at].made {
            at += 1;
            continue;
        }
        let first = at;
        while at < order.len() && order[at].made {
            at += 1;
        }
        let closing = match order.get(at) {
            Some(next) => table_at(doc, &next.place).and_then(|t| {
                let before = t.decor().prefix()?.as_str()?.to_owned();
                let (closing, own) = split_closing(&before)?;
                let (closing, own) = (closing.to_owned(), own.to_owned());
                // A blank line between the added table's keys and what opens the next header.
                t.decor_mut().set_prefix(format!("\n{own}"));
                Some(closing)
            }),
            None => {
                let trailing = doc.trailing().as_str().unwrap_or_default().to_owned();
                has_comment(&trailing).then(|| {
                    doc.set_trailing("");
                    if trailing.ends_with("\n\n") || trailing.trim_end_matches('\n').is_empty() {
                        trailing
                    } else {
                        format!("{}\n\n", trailing.trim_end_matches('\n'))
                    }
                })
            }
        };
        if let Some(closing) = closing
            && let Some(t) = table_at(doc, &order[first].place)
        {
            t.decor_mut().set_prefix(closing);
        }
    }
}

/// The text before a header split where the table above stops: (down to and including its
/// last blank line, the comment lines and indent after it). `None` when the first part holds
/// no comment: nothing there to keep with the table above.
fn split_closing(before: &str) -> Option<(&str, &str)> {
    let mut cut = 0;
    let mut at = 0;
    for line in before.split_inclusive('\n') {
        at += line.len();
        if line.ends_with('\n') && line.trim().is_empty() {
            cut = at;
        }
    }
    let (closing, own) = before.split_at(cut);
    has_comment(closing).then_some((closing, own))
}

fn has_comment(text: &str) -> bool {
    text.lines().any(|l| l.trim_start().starts_with('#'))
}

/// The document's tables in the order toml_edit writes them, those it writes a header for:
/// each at the position of the last table with one met before it in key order, root first.
fn laid_out(doc: &DocumentMut) -> Vec<Laid> {
    fn visit(t: &Table, place: &mut Vec<Step>, last: &mut isize, out: &mut Vec<(isize, Laid)>) {
        if !t.is_dotted() {
            if let Some(p) = t.position() {
                *last = p;
            }
            // The root has no header; an implicit table with no keys of its own is not written.
            let headless = place.is_empty() || t.is_implicit() && t.get_values().is_empty();
            if !headless {
                let laid = Laid {
                    place: place.clone(),
                    made: t.position().is_none(),
                };
                out.push((*last, laid));
            }
        }
        for (key, item) in t.iter() {
            match item {
                Item::Table(inner) => {
                    place.push((key.to_owned(), None));
                    visit(inner, place, last, out);
                    place.pop();
                }
                Item::ArrayOfTables(array) => {
                    for (n, inner) in array.iter().enumerate() {
                        place.push((key.to_owned(), Some(n)));
                        visit(inner, place, last, out);
                        place.pop();
                    }
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    visit(doc.as_table(), &mut Vec::new(), &mut 0, &mut out);
    // Stable: tables at one position keep their key order, as toml_edit writes them.
    out.sort_by_key(|(position, _)| *position);
    out.into_iter().map(|(_, laid)| laid).collect()
}

fn table_at<'d>(doc: &'d mut DocumentMut, place: &[Step]) -> Option<&'d mut Table> {
    let mut table = doc.as_table_mut();
    for (key, index) in place {
        let item = table.get_mut(key)?;
        table = match index {
            Some(n) => item.as_array_of_tables_mut()?.get_mut(*n)?,
            None => item.as_table_mut()?,
        };
    }
    Some(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_extract(text: &str) -> String {
        let mut doc: DocumentMut = text.parse().unwrap();
        let recall = doc["recall"].as_table_mut().map(|t| {
            let mut extract = Table::new();
            extract.insert("model", toml_edit::value("m"));
            t.insert("extract", Item::Table(extract));
        });
        assert!(recall.is_some(), "no [recall] in {text}");
        keep_closing_comments(&mut doc);
        doc.to_string()
    }

    /// The comment that closes a table stays under it when a header is added after it, at the
    /// end of the file and before another header; the comment right above that header stays
    /// above it.
    #[test]
    fn a_closing_comment_stays_with_the_table_it_closes() {
        assert_eq!(
            with_extract("[recall]\nenabled = true\n# keep it on\n"),
            "[recall]\nenabled = true\n# keep it on\n\n[recall.extract]\nmodel = \"m\"\n"
        );
        assert_eq!(
            with_extract(
                "[recall]\nenabled = true\n# keep it on\n\n# the report model\n[insights]\nmodel = \"x\"\n"
            ),
            "[recall]\nenabled = true\n# keep it on\n\n[recall.extract]\nmodel = \"m\"\n\n# the report model\n[insights]\nmodel = \"x\"\n"
        );
        // Nothing to move: the text is as toml_edit writes it.
        assert_eq!(
            with_extract("[recall]\nenabled = true\n\n[insights]\n"),
            "[recall]\nenabled = true\n\n[recall.extract]\nmodel = \"m\"\n\n[insights]\n"
        );
    }
}
