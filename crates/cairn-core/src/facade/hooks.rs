//! The [`Cairn`] facade, agents' hooks: the capture a hook runs, and installing hooks and skills.

use std::path::{Path, PathBuf};

use crate::archive::Agent;
use crate::archive::capture::{self, SyncReport, Trigger};
use crate::archive::discover::{self, FoundFile};
use crate::{Cairn, Error, Result};
use crate::{archive, hooks};

impl Cairn {
    /// The agent hook: `input` is the hook JSON the agent wrote on stdin. Relative transcript
    /// paths resolve against the payload's `cwd`, else `base_dir`. Returns `None` when the
    /// payload names no transcript (nothing to do).
    pub fn hook(
        &self,
        input: &str,
        agent: Option<Agent>,
        base_dir: &Path,
    ) -> Result<Option<SyncReport>> {
        self.hook_parsed(hooks::HookInput::parse(input)?, agent, base_dir)
    }

    /// [`Cairn::hook`] with the payload parsed beforehand: a front door parses it before
    /// opening the archive so that the git reads it starts overlap the opening too.
    pub fn hook_parsed(
        &self,
        input: hooks::HookInput,
        agent: Option<Agent>,
        base_dir: &Path,
    ) -> Result<Option<SyncReport>> {
        let hooks::HookInput { payload, prefetch } = input;
        let Some(transcript) = payload
            .get("transcript_path")
            .and_then(|v| v.as_str())
            .filter(|s| !s.is_empty())
        else {
            return Ok(None);
        };
        self.writable()?;
        let base = payload
            .get("cwd")
            .and_then(|v| v.as_str())
            .filter(|s| !s.is_empty())
            .map_or_else(|| base_dir.to_owned(), PathBuf::from);
        let (agent, path) = hooks::accept_transcript(&self.config, &base.join(transcript), agent)?;
        let mut files: Vec<FoundFile> = discover::classify(agent, &path).into_iter().collect();
        if files.is_empty() {
            files.push(FoundFile {
                agent,
                role: archive::sources::FileRole::Main,
                path: path.clone(),
                parent_hint: None,
                agent_id: None,
            });
        }
        if agent == Agent::Claude && files[0].role == archive::sources::FileRole::Main {
            // Its sub-agents' files, held to the same rule (`subagents/` could be a symlink).
            let dirs = discover::source_dirs(&self.config, agent);
            files.extend(
                discover::claude_subagent_files(&path)
                    .into_iter()
                    .filter(|f| dirs.iter().any(|d| discover::holds(&d.path, &f.path))),
            );
        }
        let mut store = self.store();
        let (report, touched) =
            capture::capture_files(&mut store, &self.data_dir, &files, Trigger::Hook)?;
        self.link(&mut store, &touched, prefetch);
        Ok(Some(report))
    }

    /// Add Cairn's capture hook (running `command`) to an agent's settings.
    pub fn install_hook(
        &self,
        agent: Agent,
        command: &str,
        dry_run: bool,
    ) -> Result<hooks::HookInstall> {
        let home = dirs::home_dir().ok_or(Error::NoHome)?;
        hooks::install(agent, &home, command, dry_run)
    }

    /// Install Cairn's skill (how to catch up: skim, then show) for an agent.
    pub fn install_skill(&self, agent: Agent, dry_run: bool) -> Result<hooks::SkillInstall> {
        let home = dirs::home_dir().ok_or(Error::NoHome)?;
        hooks::install_skill(agent, &home, dry_run)
    }

    /// Whether each agent's settings run Cairn's hook.
    pub fn hook_status(&self) -> Vec<hooks::HookStatus> {
        dirs::home_dir()
            .map(|home| {
                Agent::ALL
                    .iter()
                    .map(|a| hooks::status(*a, &home))
                    .collect()
            })
            .unwrap_or_default()
    }
}
