//! The team archive (PostgreSQL): push this archive to it, and its read-only views.

use std::path::Path;

use crate::Cairn;
use crate::config::{Config, TeamConfig};
use crate::error::{Error, Result};
use crate::team::{self, Server};

impl Cairn {
    /// Create or update the team archive's schema at `server`, as the role connected (the
    /// database's owner: see [`team::schema::init`]).
    pub fn team_init(&self, server: &Server) -> Result<team::TeamInit> {
        team::schema::init(server)
    }

    /// Make `role` a member of the team's role at `server`, as an administrator
    /// ([`team::members::grant`]).
    pub fn team_grant(&self, server: &Server, role: &str) -> Result<team::TeamMembership> {
        team::members::grant(server, role)
    }

    /// Make `role` a login role with `password` and a member of the team's role at `server`,
    /// in one transaction ([`team::members::create`]): the server is sent the password's
    /// SCRAM-SHA-256 verifier, never the password.
    pub fn team_grant_new(
        &self,
        server: &Server,
        role: &str,
        password: &str,
    ) -> Result<team::TeamMembership> {
        team::members::create(server, role, password)
    }

    /// Take `role` out of the team's role at `server` ([`team::members::revoke`]); what it
    /// pushed stays.
    pub fn team_revoke(&self, server: &Server, role: &str) -> Result<team::TeamMembership> {
        team::members::revoke(server, role)
    }

    /// Mirror this archive into the team archive at `server` (only what changed since the last
    /// push there); `progress` gets the sessions done and to do.
    pub fn team_push(
        &self,
        server: &Server,
        progress: team::push::Progress<'_>,
    ) -> Result<team::TeamPushReport> {
        self.writable()?;
        let home = dirs::home_dir().map(|h| h.to_string_lossy().into_owned());
        let store = self.store();
        team::push::push(
            store.conn(),
            server,
            home.as_deref(),
            &crate::clock::now(),
            progress,
        )
    }

    /// What the team archive at `server` holds and who may reach it, read as the role
    /// connected (`cairn team status`).
    pub fn team_status(&self, server: &Server) -> Result<team::read::TeamStatus> {
        team::read::status(server)
    }

    /// Records across the team matching `query`, best first, and what to say of the archive
    /// itself ([`team::read::Reader::warnings`]).
    pub fn team_search(
        &self,
        server: &Server,
        query: &str,
        limit: u32,
    ) -> Result<team::read::Warned<Vec<team::TeamSearchHit>>> {
        let mut reader = team::read::Reader::open(server)?;
        let rows = reader.search(query, limit)?;
        Ok(team::read::Warned {
            rows,
            warnings: reader.warnings().to_vec(),
        })
    }

    /// A branch or PR across everyone who pushed: the most recent `limit` sessions (at most
    /// [`team::read::MAX_LIMIT`]) after the `skip` most recent, oldest first, and how many earlier
    /// ones were left out. With `repo` (a folder in a repository), only the sessions pushed from
    /// that repository (any clone of it) or from none known; a folder outside any repository, or
    /// a clone with no identity (shallow), reads every repository's, and
    /// [`team::TeamSkim::repo_scope`] says which was read.
    pub fn team_skim(
        &self,
        server: &Server,
        target: &str,
        limit: u32,
        skip: u32,
        repo: Option<&Path>,
    ) -> Result<team::TeamSkim> {
        let repo = repo.and_then(|dir| crate::git::repo::Repo::discover(dir).ok());
        let identity = repo.as_ref().and_then(|r| r.identity());
        let mut skim =
            team::read::Reader::open(server)?.skim(target, limit, skip, identity.as_deref())?;
        if repo.is_some() && identity.is_none() {
            skim.repo_scope = team::TeamRepoScope::Unnamed;
        }
        Ok(skim)
    }

    /// A teammate's session.
    pub fn team_show(
        &self,
        server: &Server,
        session: &str,
        publisher: Option<&str>,
    ) -> Result<team::TeamShow> {
        team::read::Reader::open(server)?.show(session, publisher)
    }

    /// The team's trusted Recall entries matching `query`, and what to say of the archive
    /// itself ([`team::read::Reader::warnings`]).
    pub fn team_recall(
        &self,
        server: &Server,
        query: &str,
        limit: u32,
    ) -> Result<team::read::Warned<Vec<team::TeamRecallHit>>> {
        let mut reader = team::read::Reader::open(server)?;
        let rows = reader.recall(query, limit)?;
        Ok(team::read::Warned {
            rows,
            warnings: reader.warnings().to_vec(),
        })
    }
}

/// Where the team archive is, as the front doors resolve it.
impl Cairn {
    /// The team archive to use: `given` (`--to`/`--from`), else `CAIRN_TEAM_URL`, else `[team]`
    /// in `config.toml` (Settings → Team) with its password from the variable it names.
    pub fn team_server(&self, given: Option<&str>) -> Result<Server> {
        let env_url = std::env::var(team::server::URL_VAR).is_ok_and(|v| !v.is_empty());
        if given.is_some() || env_url {
            return Server::from_env(given);
        }
        let config = self.team_setup()?;
        if config.is_empty() {
            return Err(Error::Team {
                server: "(not set up)".into(),
                message: "nothing names the server".into(),
                kind: crate::error::ErrorKind::Invalid,
                sql: None,
                hint: Some(format!(
                    "set it up in the desktop's Settings → Team (or [team] in {}), set {}, or pass --to postgres://USER@HOST/DB",
                    self.config_path().display(),
                    team::server::URL_VAR
                )),
            });
        }
        Server::from_team_config(
            &config,
            &|name| std::env::var(name).ok(),
            &team::keyring::get,
        )
    }

    /// The server the Settings form names (nothing saved), its password looked for as usual.
    pub fn team_server_of(&self, setup: &TeamConfig) -> Result<Server> {
        Server::from_team_config(setup, &|name| std::env::var(name).ok(), &team::keyring::get)
    }

    /// `[team]` as it is on disk (empty when not set up).
    pub fn team_setup(&self) -> Result<TeamConfig> {
        Ok(Config::load(&self.data_dir)?.team)
    }

    /// Write `setup` as `[team]` into `config.toml`, atomically, comments and every other key
    /// kept. A setup that does not name a server is refused and the file left as it was; an
    /// empty one removes the table.
    pub fn save_team_setup(&self, setup: &TeamConfig) -> Result<TeamConfig> {
        self.writable()?;
        if !setup.is_empty() {
            setup.check().map_err(Error::Invalid)?;
        }
        let config = self.edit_config(
            |text| crate::config::write_team_setup(text, setup),
            |_| Ok(()),
        )?;
        Ok(config.team)
    }

    /// "Test connection": connect to the server `setup` names (nothing saved), read-only.
    pub fn team_check(&self, setup: &TeamConfig) -> Result<team::TeamCheck> {
        team::read::check(&self.team_server_of(setup)?)
    }

    /// The last finished push from this archive (to `archive` when given).
    pub fn team_last_push(&self, archive: Option<&str>) -> Result<Option<team::LastPush>> {
        let store = self.store();
        team::push::last_push(store.conn(), archive).map_err(|e| store.err(e))
    }
}

/// The team archive's password in the OS keyring (`cairn team login`/`logout`, Settings → Team's
/// "Remember in the keyring").
impl Cairn {
    /// Keep `password` in the OS keyring for `server`, replacing the one there. With `check`,
    /// it is tried first (a read-only connection) and a password the server refuses is not kept.
    pub fn team_remember(
        &self,
        server: &Server,
        password: &str,
        check: bool,
    ) -> Result<team::TeamRemembered> {
        if password.is_empty() {
            return Err(Error::Invalid(
                "the password is empty: nothing to remember".into(),
            ));
        }
        if password.len() > 4096 || password.contains(['\0', '\n', '\r']) {
            // Not repeated: the message must not show it.
            return Err(Error::Invalid(
                "the password holds a line break or NUL, or is longer than 4096 bytes: give it alone on one line".into(),
            ));
        }
        if check {
            team::read::check(&server.with_password(password))?;
        }
        let replaced =
            team::keyring::set(server.account(), password).map_err(|u| keyring_error(server, u))?;
        Ok(team::TeamRemembered {
            server: server.display().to_owned(),
            account: server.account().to_owned(),
            store: team::keyring::store_name().to_owned(),
            replaced,
            checked: check,
        })
    }

    /// Forget the password the OS keyring keeps for `server`; whether there was one.
    pub fn team_forget(&self, server: &Server) -> Result<bool> {
        team::keyring::delete(server.account()).map_err(|u| keyring_error(server, u))
    }

    /// What the OS keyring holds for `server` (whether a password, or why it cannot be asked).
    pub fn team_keyring(&self, server: &Server) -> team::KeyringState {
        team::keyring::state(server.account())
    }
}

fn keyring_error(server: &Server, u: team::keyring::Unreachable) -> Error {
    server.fail(
        crate::error::ErrorKind::Unavailable,
        u.message,
        Some(u.hint),
    )
}
