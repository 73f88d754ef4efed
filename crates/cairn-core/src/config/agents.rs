//! `[agent.<name>] binary`: the program Cairn runs for an agent CLI used as a generator (reports,
//! extraction), written into `config.toml` as a text edit (Settings' "Agent programs"), so a
//! person's comments, order and every other key stay. Without it the agent's name is looked up
//! on `PATH`, which a desktop app started from the menu may not share with the person's shell.

use toml_edit::{DocumentMut, Item, Table};

/// `text` (a `config.toml`) with `[agent.<agent>] binary` set to `binary`, or taken out when
/// `binary` is empty (the name on `PATH` applies again; a table left with nothing in it goes
/// too). Errors say which part of the file is in the way.
pub fn write_agent_binary(text: &str, agent: &str, binary: &str) -> Result<String, String> {
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| e.to_string().replace('\n', " ").trim().to_owned())?;
    let binary = binary.trim();
    let agents = doc
        .as_table_mut()
        .entry("agent")
        .or_insert_with(|| {
            let mut t = Table::new();
            t.set_implicit(true);
            Item::Table(t)
        })
        .as_table_mut()
        .ok_or("`agent` is not a [table] (an inline table or a value): rewrite it as [agent.<name>] tables so Cairn can edit it")?;
    if binary.is_empty() && !agents.contains_key(agent) {
        return Ok(doc.to_string());
    }
    let entry = agents
        .entry(agent)
        .or_insert_with(|| Item::Table(Table::new()))
        .as_table_like_mut()
        .ok_or_else(|| {
            format!(
                "`agent.{agent}` is not a table: rewrite it as [agent.{agent}] so Cairn can edit it"
            )
        })?;
    if binary.is_empty() {
        entry.remove("binary");
    } else {
        super::set_kept(entry, "binary", binary);
    }
    if entry.is_empty() {
        agents.remove(agent);
    }
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use std::path::Path;

    fn loaded(text: &str) -> Config {
        Config::parse(text, Path::new("config.toml")).unwrap()
    }

    #[test]
    fn sets_the_binary_keeping_the_rest_and_takes_it_out_again() {
        let before = "# mine\n[agent.claude]\ntimeout_secs = 600 # long reports\n\n[sources.codex]\nenabled = false\n";
        let after = write_agent_binary(before, "claude", " /opt/claude/bin/claude ").unwrap();
        for kept in [
            "# mine",
            "timeout_secs = 600 # long reports",
            "enabled = false",
        ] {
            assert!(after.contains(kept), "{kept} lost:\n{after}");
        }
        let config = loaded(&after);
        let claude = &config.agent["claude"];
        assert_eq!(claude.binary.as_deref(), Some("/opt/claude/bin/claude"));
        assert_eq!(claude.timeout_secs, Some(600));

        let back = write_agent_binary(&after, "claude", "").unwrap();
        let config = loaded(&back);
        assert_eq!(config.agent["claude"].binary, None);
        assert_eq!(config.agent["claude"].timeout_secs, Some(600));

        // A table holding only the binary goes with it; nothing to take out changes nothing.
        let codex = write_agent_binary("", "codex", "/usr/local/bin/codex").unwrap();
        assert_eq!(
            loaded(&codex).agent["codex"].binary.as_deref(),
            Some("/usr/local/bin/codex")
        );
        assert!(
            loaded(&write_agent_binary(&codex, "codex", "").unwrap())
                .agent
                .is_empty()
        );
        assert_eq!(write_agent_binary("# x\n", "gemini", "").unwrap(), "# x\n");
    }

    #[test]
    fn says_which_part_of_the_file_is_in_the_way() {
        let err = write_agent_binary("agent = 3\n", "claude", "/x").unwrap_err();
        assert!(err.contains("`agent` is not a [table]"), "{err}");
        let err = write_agent_binary("[agent]\nclaude = 1\n", "claude", "/x").unwrap_err();
        assert!(err.contains("`agent.claude` is not a table"), "{err}");
        assert!(write_agent_binary("[agent\n", "claude", "/x").is_err());
    }
}
