//! `[sources.<agent>]`: the folders an agent's transcripts are read from, written into
//! `config.toml` as a text edit (Settings → Folders' "Change…"), so a person's comments, order
//! and every other key stay.

use toml_edit::{Array, DocumentMut, Item, Table};

use crate::agent::Agent;

/// `text` (a `config.toml`) with `agent`'s folders set to `dirs` (an empty list takes the
/// setting out, so the agent's default folders apply again; a table left with nothing in it
/// goes too). The agent's table is the one already there under any of its names
/// (`[sources.claude-code]`), else `[sources.<agent>]`. Errors say which part of the file is in
/// the way.
pub fn write_source_dirs(text: &str, agent: Agent, dirs: &[String]) -> Result<String, String> {
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| e.to_string().replace('\n', " ").trim().to_owned())?;
    let sources = doc
        .as_table_mut()
        .entry("sources")
        .or_insert_with(|| {
            let mut t = Table::new();
            t.set_implicit(true);
            Item::Table(t)
        })
        .as_table_mut()
        .ok_or("`sources` is not a [table] (an inline table or a value): rewrite it as [sources.<agent>] tables so Cairn can edit it")?;
    let key = sources
        .iter()
        .map(|(k, _)| k.to_owned())
        .find(|k| Agent::parse(k) == Some(agent))
        .unwrap_or_else(|| agent.as_str().to_owned());
    if dirs.is_empty() && !sources.contains_key(&key) {
        return Ok(doc.to_string());
    }
    let entry = sources
        .entry(&key)
        .or_insert_with(|| Item::Table(Table::new()))
        .as_table_like_mut()
        .ok_or_else(|| {
            format!(
                "`sources.{key}` is not a table: rewrite it as [sources.{key}] so Cairn can edit it"
            )
        })?;
    if dirs.is_empty() {
        entry.remove("dirs");
    } else {
        super::set_kept(entry, "dirs", dirs.iter().collect::<Array>());
    }
    if entry.is_empty() {
        sources.remove(&key);
    }
    super::comments::keep_closing_comments(&mut doc);
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use std::path::Path;

    fn dirs(list: &[&str]) -> Vec<String> {
        list.iter().map(|d| (*d).to_owned()).collect()
    }

    fn loaded(text: &str) -> Config {
        Config::parse(text, Path::new("config.toml")).unwrap()
    }

    #[test]
    fn keeps_comments_order_and_every_other_table() {
        let before = "# my setup\n[recall]\nsession_start_tokens = 200 # short\n\n[sources.codex]\nenabled = false\n\n[recall.extract]\nmodel = \"m\"\n[recall.extract.servers.a]\nendpoint = \"http://127.0.0.1:1/v1\"\n";
        let after = write_source_dirs(before, Agent::Claude, &dirs(&["/x", "~/y"])).unwrap();
        for kept in [
            "# my setup",
            "session_start_tokens = 200 # short",
            "enabled = false",
            "model = \"m\"",
        ] {
            assert!(after.contains(kept), "{kept} lost:\n{after}");
        }
        let c = loaded(&after);
        assert_eq!(c.sources["claude"].dirs, dirs(&["/x", "~/y"]));
        assert!(!c.agent_enabled(Agent::Codex));
        assert_eq!(
            c.recall.extract.servers["a"].endpoint,
            "http://127.0.0.1:1/v1"
        );
        assert_eq!(c.recall.session_start_tokens, Some(200));
    }

    #[test]
    fn the_agents_own_table_is_edited_under_whichever_name_it_has() {
        let before =
            "[sources.claude-code] # the work laptop\n# mounted\ndirs = [\"/old\"] # for now\n";
        let after = write_source_dirs(before, Agent::Claude, &dirs(&["/new"])).unwrap();
        for kept in ["# the work laptop", "# mounted", "# for now"] {
            assert!(after.contains(kept), "{kept} lost:\n{after}");
        }
        let c = loaded(&after);
        assert_eq!(c.sources.len(), 1, "{after}");
        assert_eq!(c.source_dirs(Agent::Claude), [Path::new("/new")]);
        // Inline tables are tables too.
        let inline = "sources = { codex = { dirs = [\"/a\"], enabled = true } }\n";
        let err = write_source_dirs(inline, Agent::Codex, &dirs(&["/b"])).unwrap_err();
        assert!(err.contains("[sources.<agent>]"), "{err}");
        let inner = "[sources]\ncodex = { dirs = [\"/a\"] }\n";
        let after = write_source_dirs(inner, Agent::Codex, &dirs(&["/b"])).unwrap();
        assert_eq!(loaded(&after).source_dirs(Agent::Codex), [Path::new("/b")]);
        // Dotted keys at the top level are the same table.
        let dotted = "# laptop\nsources.codex.dirs = [\"/a\"]\nsources.codex.enabled = true\n";
        let after = write_source_dirs(dotted, Agent::Codex, &dirs(&["/b"])).unwrap();
        assert!(after.starts_with("# laptop"), "{after}");
        let c = loaded(&after);
        assert_eq!(c.source_dirs(Agent::Codex), [Path::new("/b")]);
        assert!(c.agent_enabled(Agent::Codex));
    }

    #[test]
    fn an_empty_list_restores_the_default_and_keeps_what_else_the_table_says() {
        let before = "[sources.claude]\ndirs = [\"/x\"]\nenabled = false\n\n[sources.codex]\ndirs = [\"/c\"]\n";
        let after = write_source_dirs(before, Agent::Claude, &[]).unwrap();
        let c = loaded(&after);
        assert!(c.source_dirs(Agent::Claude).is_empty());
        assert!(!c.agent_enabled(Agent::Claude), "{after}");
        // A table left empty goes; an agent with no table stays without one.
        let after = write_source_dirs(&after, Agent::Codex, &[]).unwrap();
        assert!(!after.contains("codex"), "{after}");
        assert_eq!(write_source_dirs("", Agent::Gemini, &[]).unwrap(), "");
    }

    #[test]
    fn a_file_cairn_cannot_edit_is_named_not_overwritten() {
        for (text, why) in [
            ("sources = 3\n", "`sources` is not a [table]"),
            (
                "[sources]\nclaude = \"/x\"\n",
                "`sources.claude` is not a table",
            ),
            ("[sources\n", "unclosed"),
        ] {
            let err = write_source_dirs(text, Agent::Claude, &dirs(&["/x"])).unwrap_err();
            assert!(err.contains(why), "{text:?}: {err}");
            assert!(!err.contains('\n'), "{err:?}");
        }
    }

    /// A new `[sources.<agent>]` after a table that ends in a comment: the comment stays under
    /// the table it closes; one right above a later header stays with that header.
    #[test]
    fn a_comment_closing_a_table_stays_there_when_an_agents_folders_are_added() {
        let before = "[sources.claude]\ndirs = [\"/x\"]\n# claude: the work laptop's copy\n";
        let after = write_source_dirs(before, Agent::Codex, &dirs(&["/c"])).unwrap();
        assert_eq!(
            after,
            "[sources.claude]\ndirs = [\"/x\"]\n# claude: the work laptop's copy\n\n[sources.codex]\ndirs = [\"/c\"]\n"
        );
    }
}
