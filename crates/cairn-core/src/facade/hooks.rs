//! The [`Cairn`] facade, agents' hooks: the capture a hook runs, and installing hooks and skills.

use std::path::Path;

use crate::archive::Agent;
use crate::archive::capture::{self, SyncReport, Trigger};
use crate::hooks;
use crate::{Cairn, Result};

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
        let Some(transcript) = input.transcript(base_dir) else {
            return Ok(None);
        };
        self.writable()?;
        let (agent, path) = hooks::accept_transcript(&self.config, &transcript, agent)?;
        let files = hooks::files_to_capture(&self.config, agent, &path);
        let mut store = self.store();
        let (report, touched) =
            capture::capture_files(&mut store, &self.data_dir, &files, Trigger::Hook)?;
        self.link(
            &mut store,
            &touched,
            input.prefetch,
            crate::git::HOOK_BACKLOG,
        );
        Ok(Some(report))
    }

    /// The capture hook's command line for the `cairn` binary at `cli`
    /// ([`hooks::hook_command`]): with this archive's folder when it is not at the platform's
    /// default place, so the agent's hook captures into it whatever the agent's environment
    /// holds (`CAIRN_DATA_DIR` set in one shell is not set in the agent's).
    pub fn hook_command(&self, cli: &std::path::Path, agent: Agent) -> String {
        hooks::hook_command(cli, agent, self.data_dir_elsewhere().as_deref())
    }

    /// This archive's data dir (its real path) when it is not the platform's default: a hook
    /// or MCP server an agent starts, without this process's flags and environment, must be
    /// told where it is.
    pub(crate) fn data_dir_elsewhere(&self) -> Option<std::path::PathBuf> {
        let real =
            |p: &std::path::Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let here = real(self.data_dir());
        let default = dirs::data_dir().map(|d| real(&d.join("cairn")));
        (default.as_ref() != Some(&here)).then_some(here)
    }

    /// Add Cairn's capture hook (running `command`) to an agent's settings, and its
    /// session-start hook when `memory` (taken off when not): see [`hooks::install`].
    pub fn install_hooks(
        &self,
        agent: Agent,
        command: &str,
        memory: bool,
        dry_run: bool,
    ) -> Result<hooks::HookInstall> {
        let home = super::home()?;
        hooks::install(agent, &home, command, memory, dry_run)
    }

    /// Take Cairn's hooks out of an agent's settings: see [`hooks::uninstall`].
    pub fn uninstall_hooks(&self, agent: Agent, dry_run: bool) -> Result<hooks::HookInstall> {
        let home = super::home()?;
        hooks::uninstall(agent, &home, dry_run)
    }

    /// Install Cairn's skill (how to catch up: skim, then show) for an agent, its commands
    /// naming this archive when it is not at the default place ([`hooks::skill_text`]).
    pub fn install_skill(&self, agent: Agent, dry_run: bool) -> Result<hooks::SkillInstall> {
        let home = super::home()?;
        let archive = self.data_dir_elsewhere();
        hooks::install_skill(agent, &home, archive.as_deref(), dry_run)
    }

    /// Take Cairn's skill away from an agent: see [`hooks::uninstall_skill`].
    pub fn uninstall_skill(&self, agent: Agent, dry_run: bool) -> Result<hooks::SkillInstall> {
        let home = super::home()?;
        hooks::uninstall_skill(agent, &home, dry_run)
    }

    /// Whether each agent's settings run Cairn's hook, and into this archive.
    pub fn hook_status(&self) -> Vec<hooks::HookStatus> {
        let archive = self.data_dir_elsewhere();
        dirs::home_dir()
            .map(|home| {
                hooks::HOOKED
                    .iter()
                    .map(|a| hooks::status(*a, &home, archive.as_deref()))
                    .collect()
            })
            .unwrap_or_default()
    }
}
