//! The agents Cairn reads: a closed set every floor names (keys, config, the archive's
//! sources), so it sits on the bottom floor. `archive::Agent` re-exports it.

use serde::{Deserialize, Serialize};

/// The agents Cairn reads. The string form is part of every key (see [`crate::keys`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum Agent {
    Claude,
    Codex,
    Copilot,
    Qwen,
    Droid,
    Kimi,
    Gemini,
    Cursor,
    Aider,
    Crush,
    Opencode,
    Cline,
    Roo,
    Kilo,
    Kiro,
    Pi,
    Openclaw,
    Grok,
    Hermes,
    Antigravity,
    Vibe,
    Iflow,
    Traex,
    Gptme,
    Posit,
    Qwenpaw,
    /// GitHub Copilot in Visual Studio (its OpenTelemetry trace files).
    Vscopilot,
    /// A trajectory in the Agent Trajectory Interchange Format brought in with `cairn import`
    /// (a teammate's export, another tool's run): never discovered, so not in [`Agent::ALL`].
    Atif,
}

impl Agent {
    /// The agents whose transcripts Cairn discovers in source dirs.
    pub const ALL: [Agent; 27] = [
        Agent::Claude,
        Agent::Codex,
        Agent::Copilot,
        Agent::Qwen,
        Agent::Droid,
        Agent::Kimi,
        Agent::Gemini,
        Agent::Cursor,
        Agent::Aider,
        Agent::Crush,
        Agent::Opencode,
        Agent::Cline,
        Agent::Roo,
        Agent::Kilo,
        Agent::Kiro,
        Agent::Pi,
        Agent::Openclaw,
        Agent::Grok,
        Agent::Hermes,
        Agent::Antigravity,
        Agent::Vibe,
        Agent::Iflow,
        Agent::Traex,
        Agent::Gptme,
        Agent::Posit,
        Agent::Qwenpaw,
        Agent::Vscopilot,
    ];

    /// Every agent a session in the archive may name: the discovered ones and [`Agent::Atif`].
    /// What an agent filter accepts.
    pub const EVERY: [Agent; Agent::ALL.len() + 1] = {
        let mut every = [Agent::Atif; Agent::ALL.len() + 1];
        let mut i = 0;
        while i < Agent::ALL.len() {
            every[i] = Agent::ALL[i];
            i += 1;
        }
        every
    };

    pub fn as_str(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Copilot => "copilot",
            Agent::Qwen => "qwen",
            Agent::Droid => "droid",
            Agent::Kimi => "kimi",
            Agent::Gemini => "gemini",
            Agent::Cursor => "cursor",
            Agent::Aider => "aider",
            Agent::Crush => "crush",
            Agent::Opencode => "opencode",
            Agent::Cline => "cline",
            Agent::Roo => "roo",
            Agent::Kilo => "kilo",
            Agent::Kiro => "kiro",
            Agent::Pi => "pi",
            Agent::Openclaw => "openclaw",
            Agent::Grok => "grok",
            Agent::Hermes => "hermes",
            Agent::Antigravity => "antigravity",
            Agent::Vibe => "vibe",
            Agent::Iflow => "iflow",
            Agent::Traex => "traex",
            Agent::Gptme => "gptme",
            Agent::Posit => "posit",
            Agent::Qwenpaw => "qwenpaw",
            Agent::Vscopilot => "vscopilot",
            Agent::Atif => "atif",
        }
    }

    pub fn parse(s: &str) -> Option<Agent> {
        match s.trim().to_ascii_lowercase().as_str() {
            "claude" | "claude-code" | "claude_code" => Some(Agent::Claude),
            "codex" => Some(Agent::Codex),
            "copilot" | "copilot-cli" | "github-copilot" => Some(Agent::Copilot),
            "qwen" | "qwen-code" | "qwen_code" => Some(Agent::Qwen),
            "droid" | "factory" | "factory-droid" => Some(Agent::Droid),
            "kimi" | "kimi-cli" | "kimi-code" => Some(Agent::Kimi),
            "gemini" | "gemini-cli" | "gemini_cli" => Some(Agent::Gemini),
            "cursor" | "cursor-agent" | "cursor-cli" => Some(Agent::Cursor),
            "aider" | "aider-chat" => Some(Agent::Aider),
            "crush" | "charm-crush" => Some(Agent::Crush),
            "opencode" | "open-code" | "sst-opencode" => Some(Agent::Opencode),
            "cline" | "claude-dev" => Some(Agent::Cline),
            "roo" | "roo-code" | "roocode" | "roo-cline" => Some(Agent::Roo),
            "kilo" | "kilo-code" | "kilocode" => Some(Agent::Kilo),
            "kiro" | "kiro-cli" => Some(Agent::Kiro),
            "pi" | "pi-coding-agent" | "pi-agent" => Some(Agent::Pi),
            "openclaw" | "clawdbot" | "moltbot" => Some(Agent::Openclaw),
            "grok" | "grok-build" | "grok-cli" => Some(Agent::Grok),
            "hermes" | "hermes-agent" => Some(Agent::Hermes),
            "antigravity" | "antigravity-cli" | "agy" => Some(Agent::Antigravity),
            "vibe" | "mistral-vibe" => Some(Agent::Vibe),
            "iflow" | "iflow-cli" => Some(Agent::Iflow),
            "traex" | "trae-cli" => Some(Agent::Traex),
            "gptme" => Some(Agent::Gptme),
            "posit" | "posit-assistant" => Some(Agent::Posit),
            "qwenpaw" | "copaw" => Some(Agent::Qwenpaw),
            "vscopilot" | "vs-copilot" | "visualstudio-copilot" | "visual-studio-copilot" => {
                Some(Agent::Vscopilot)
            }
            "atif" => Some(Agent::Atif),
            _ => None,
        }
    }
}

/// The longest name of a foreign agent Cairn shows as the one that ran a session.
pub const MAX_RAN_BY_CHARS: usize = 40;

/// The agent that ran a session Cairn did not capture itself (an ATIF trajectory brought in by
/// `cairn import`, or a teammate's transcript pulled with `cairn pull`), from the name the
/// trajectory gives it (ATIF's `agent.name`): one of Cairn's agents under its own name
/// (`claude-code` is `claude`), else the name itself, lower-cased, when it is a plain name (at
/// most [`MAX_RAN_BY_CHARS`] ASCII letters, digits, spaces, `-`, `_`, `.` or `/`). Anything else
/// (control or bidi characters, markup, a blank or long value) names no agent: `None`, and the
/// session shows as `atif`. So does `atif` itself (an export of an import).
pub fn ran_by(name: &str) -> Option<String> {
    let name = name.trim();
    if let Some(agent) = Agent::parse(name) {
        return (agent != Agent::Atif).then(|| agent.as_str().to_owned());
    }
    let plain = !name.is_empty()
        && name.len() <= MAX_RAN_BY_CHARS
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '-' | '_' | '.' | '/'));
    plain.then(|| name.to_ascii_lowercase())
}

/// The agent a session stored as `agent` is filtered by and badged as: for an `atif` session
/// whose trajectory names one of Cairn's agents ([`ran_by`] of its `provider`), that agent;
/// otherwise `agent` itself. A foreign name (`openhands`) stays `atif` here: no filter names it.
pub fn ran_as(agent: Agent, provider: Option<&str>) -> Agent {
    if agent != Agent::Atif {
        return agent;
    }
    provider
        .and_then(ran_by)
        .and_then(|name| Agent::parse(&name))
        .unwrap_or(agent)
}

/// A session's agent as the archive or a document names it, and the agent that ran it when that
/// is not the agent itself ([`ran_by`]). A name this build does not know was written by a newer
/// Cairn (the desktop app and the CLI built at different times share a data dir; a teammate's
/// build reads more agents): it is read as [`Agent::Atif`], a session Cairn cannot resume or
/// read again, shown by its own name when that is a plain one. Never as another agent, whose
/// badge, filter and resume command would be wrong. For an `atif` session, `provider` is the name
/// its trajectory gives the agent that ran it.
pub fn stored(name: &str, provider: Option<&str>) -> (Agent, Option<String>) {
    match Agent::parse(name) {
        Some(Agent::Atif) => (Agent::Atif, provider.and_then(ran_by)),
        Some(agent) => (agent, None),
        None => (Agent::Atif, ran_by(name)),
    }
}

impl std::fmt::Display for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_is_each_discovered_agent_then_atif_once_and_each_name_parses_back() {
        assert_eq!(&Agent::EVERY[..Agent::ALL.len()], &Agent::ALL[..]);
        assert_eq!(Agent::EVERY.last(), Some(&Agent::Atif));
        let names: std::collections::BTreeSet<&str> =
            Agent::EVERY.iter().map(|a| a.as_str()).collect();
        assert_eq!(names.len(), Agent::EVERY.len(), "a name twice");
        for agent in Agent::EVERY {
            assert_eq!(Agent::parse(agent.as_str()), Some(agent));
        }
    }

    #[test]
    fn ran_as_is_the_named_agent_only_for_atif_and_only_when_cairn_knows_it() {
        assert_eq!(ran_as(Agent::Atif, Some("claude-code")), Agent::Claude);
        assert_eq!(ran_as(Agent::Atif, Some("Codex")), Agent::Codex);
        assert_eq!(ran_as(Agent::Atif, Some("openhands")), Agent::Atif);
        assert_eq!(ran_as(Agent::Atif, Some("atif")), Agent::Atif);
        assert_eq!(ran_as(Agent::Atif, None), Agent::Atif);
        assert_eq!(ran_as(Agent::Codex, Some("claude-code")), Agent::Codex);
    }

    #[test]
    fn a_stored_name_this_build_does_not_know_is_shown_by_its_name_never_as_another_agent() {
        assert_eq!(stored("codex", Some("claude-code")), (Agent::Codex, None));
        assert_eq!(
            stored("atif", Some("claude-code")),
            (Agent::Atif, Some("claude".to_owned()))
        );
        assert_eq!(
            stored("atif", Some("OpenHands")),
            (Agent::Atif, Some("openhands".to_owned()))
        );
        assert_eq!(stored("atif", None), (Agent::Atif, None));
        // A newer build's agent: its own name, whatever provider the row holds.
        assert_eq!(
            stored("zed", Some("claude-code")),
            (Agent::Atif, Some("zed".to_owned()))
        );
        assert_eq!(
            stored("Zed-Agent", None),
            (Agent::Atif, Some("zed-agent".to_owned()))
        );
        for hostile in ["", "zed\u{1b}[2J", "evil\u{202e}edoc", "<b>x</b>"] {
            assert_eq!(
                stored(hostile, Some("claude")),
                (Agent::Atif, None),
                "{hostile:?}"
            );
        }
    }

    #[test]
    fn ran_by_maps_known_agents_keeps_plain_names_and_refuses_the_rest() {
        assert_eq!(ran_by("claude-code").as_deref(), Some("claude"));
        assert_eq!(ran_by(" Codex ").as_deref(), Some("codex"));
        assert_eq!(ran_by("gemini-cli").as_deref(), Some("gemini"));
        assert_eq!(ran_by("OpenHands").as_deref(), Some("openhands"));
        assert_eq!(ran_by("terminus-2").as_deref(), Some("terminus-2"));
        assert_eq!(ran_by("atif"), None);
        for hostile in [
            "",
            "   ",
            "claude\u{1b}[2J",
            "\u{1b}]52;c;eA==\u{7}",
            "evil\u{202e}edoc",
            "<script>",
            "-rf",
            "a\nb",
            &"x".repeat(MAX_RAN_BY_CHARS + 1),
        ] {
            assert_eq!(ran_by(hostile), None, "{hostile:?}");
        }
    }
}
