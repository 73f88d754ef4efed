//! The agent CLIs Cairn can run as generators (reports, Recall extraction): which program each
//! one runs, and Settings' way to name it (`[agent.<name>] binary` in `config.toml`), so an agent
//! installed off the `PATH` a desktop app sees needs no hand edit of the file.

use std::path::Path;

use cairn_core::config::GENERATOR_AGENTS;
use cairn_core::{Cairn, ErrorReport};
use serde::Serialize;
use tauri::State;

use crate::backend::Backend;
use crate::commands::with_cairn;

/// One agent CLI as Settings shows it.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct AgentProgram {
    /// `claude`, `codex`, `gemini` or `copilot`.
    pub agent: String,
    /// The program `config.toml` names for it (`[agent.<name>] binary`), if any.
    pub configured: Option<String>,
    /// The program that runs: the one named, when it is there; else the agent's name found on
    /// this app's `PATH`. Null when neither is.
    pub runs: Option<String>,
}

fn programs(cairn: &Cairn) -> Vec<AgentProgram> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    GENERATOR_AGENTS
        .iter()
        .map(|name| {
            let configured = cairn
                .config()
                .agent
                .get(*name)
                .and_then(|a| a.binary.clone());
            let runs = match &configured {
                Some(binary) => Path::new(binary).is_file().then(|| binary.clone()),
                None => cairn_core::llm::detect::which(name, &path)
                    .map(|found| found.display().to_string()),
            };
            AgentProgram {
                agent: (*name).to_owned(),
                configured,
                runs,
            }
        })
        .collect()
}

/// Which program each agent CLI runs as a generator.
#[tauri::command]
#[specta::specta]
pub async fn agent_programs(backend: State<'_, Backend>) -> Result<Vec<AgentProgram>, ErrorReport> {
    with_cairn(&backend, |c| Ok(programs(c))).await
}

/// Name the program `agent` runs (an absolute path to an executable; empty: its name on `PATH`
/// again), written into `config.toml`; the archive is opened again so reports use it at once.
#[tauri::command]
#[specta::specta]
pub async fn set_agent_program(
    backend: State<'_, Backend>,
    agent: String,
    binary: String,
) -> Result<Vec<AgentProgram>, ErrorReport> {
    with_cairn(&backend, move |c| c.set_agent_binary(&agent, &binary)).await?;
    let cairn = backend.reopen()?;
    Ok(programs(&cairn))
}
