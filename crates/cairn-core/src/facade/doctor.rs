//! The [`Cairn`] facade, health checks.

use crate::archive::retention::{self, RetentionCheck};
use crate::archive::store::DB_FILE;
use crate::doctor::{self, Check, DoctorOptions, DoctorReport, Status};
use crate::{Cairn, SyncOptions, archive};

impl Cairn {
    /// `doctor` on `data_dir`, which runs even when `config.toml` does not load (the tool a
    /// person reaches for when something is wrong): its first check then fails with the
    /// config's error (the file, the line, what is wrong there) and the rest run on the default
    /// settings, which they say.
    ///
    /// It creates nothing: a data dir that holds no archive yet is checked as an empty one and
    /// said to be so (a mistyped `--data-dir` is not left behind as a new archive).
    pub fn doctor_at(data_dir: impl Into<std::path::PathBuf>) -> crate::Result<DoctorReport> {
        Cairn::doctor_at_with(data_dir, &DoctorOptions::default())
    }

    /// [`Cairn::doctor_at`] with `options` (`cairn doctor --probe`).
    pub fn doctor_at_with(
        data_dir: impl Into<std::path::PathBuf>,
        options: &DoctorOptions,
    ) -> crate::Result<DoctorReport> {
        let (cairn, config_error, unopened) = Cairn::open_to_check(data_dir.into())?;
        let mut report = cairn.doctor_with(options);
        // A file that is no database at all: SQLite cannot recover anything from it, so the
        // way back is the error's own (move it aside, sync again), not the recovery recipe.
        if let Some(e @ crate::Error::Db { source, .. }) = &unopened
            && source.sqlite_error_code() == Some(rusqlite::ErrorCode::NotADatabase)
            && let Some(check) = report.checks.iter_mut().find(|c| c.name == "archive")
        {
            check.status = Status::Fail;
            check.detail = match e.hint() {
                Some(hint) => format!("{e}; {hint}"),
                None => e.to_string(),
            };
        }
        if let Some(e) = config_error {
            // The first check is the config's: it did not load.
            let failed = Check {
                name: "config".into(),
                status: Status::Fail,
                detail: format!(
                    "{}; the checks below use the default settings until it is fixed",
                    crate::text::one_line(&e.to_string(), 600)
                ),
            };
            match report.checks.first_mut() {
                Some(first) if first.name == "config" => *first = failed,
                _ => report.checks.insert(0, failed),
            }
        }
        Ok(report)
    }

    /// Health checks: data dir, database (its counts and `quick_check`), who can read the data
    /// dir, what a rebuild left, source dirs, model servers, Recall, retention, hooks. Contacts
    /// nothing.
    pub fn doctor(&self) -> DoctorReport {
        self.doctor_with(&DoctorOptions::default())
    }

    /// [`Cairn::doctor`] with `options`: `probe` connects to each model server configured.
    pub fn doctor_with(&self, options: &DoctorOptions) -> DoctorReport {
        let config = self.data_dir.join(crate::config::CONFIG_FILE);
        let mut checks = vec![Check {
            name: "config".into(),
            status: Status::Ok,
            // It loaded: the archive is open (`doctor_at` names one that did not).
            detail: if config.is_file() {
                doctor::shown(&config)
            } else {
                format!(
                    "{} not present: the default settings (Cairn writes it when a setting changes)",
                    doctor::shown(&config)
                )
            },
        }];
        if self.holds_no_archive() {
            checks.push(doctor::no_archive(&self.data_dir));
            // A rebuilt archive on its way into place, and what rebuilds left: with no
            // `cairn.db` is exactly when a person needs them named.
            checks.extend(doctor::set_aside::swap_pending_check(
                &self.data_dir,
                std::time::SystemTime::now(),
            ));
            self.rebuild_leftovers(&mut checks);
        } else {
            self.archive_checks(&mut checks);
        }
        // Where a sync reads Aider's and Crush's files: the repositories the archive knows.
        let repositories = if self.holds_no_archive() {
            Vec::new()
        } else {
            self.known_repositories()
        };
        checks.extend(doctor::environment_checks(
            &self.config,
            dirs::home_dir().as_deref(),
            self.data_dir_elsewhere().as_deref(),
            &repositories,
        ));
        let probe: doctor::endpoints::Probe<'_> = &doctor::endpoints::connect;
        checks.extend(doctor::endpoints::endpoint_checks(
            &self.config,
            options.probe.then_some(probe),
        ));
        checks.extend(self.recall_doctor());
        checks.extend(self.retention().iter().map(doctor::retention_check));
        #[cfg(feature = "team")]
        checks.extend(self.team_doctor());
        DoctorReport { checks }
    }

    /// The team archive set up in `config.toml`, and this archive's last push to it (read here:
    /// doctor contacts no server). None when no team archive is set up and none was pushed to.
    #[cfg(feature = "team")]
    fn team_doctor(&self) -> Option<Check> {
        let team = &self.config.team;
        let last = if self.holds_no_archive() {
            None
        } else {
            let store = self.store();
            crate::team::push::last_push(store.conn(), None)
                .ok()
                .flatten()
        };
        if team.is_empty() && last.is_none() {
            return None;
        }
        // Named as every team message names it; no variable or keyring is read (doctor asks for
        // no password).
        let place = if team.is_empty() {
            "none set up in config.toml".to_owned()
        } else {
            match crate::team::Server::from_team_config(team, &|_| None, &|_| Ok(None)) {
                Ok(server) => format!("{} (config.toml)", server.display()),
                Err(e) => {
                    return Some(Check {
                        name: "team archive".into(),
                        status: Status::Warn,
                        detail: format!("[team] in config.toml: {e}"),
                    });
                }
            }
        };
        let (status, detail) = match last {
            None => (
                Status::Ok,
                format!("{place}; never pushed to: `cairn team push` sends this archive"),
            ),
            Some(p) => {
                let when = crate::text::parse_rfc3339(&p.finished_at)
                    .map_or(p.finished_at.clone(), |t| {
                        t.strftime("%Y-%m-%d %H:%M UTC").to_string()
                    });
                let refused = if p.sessions_refused > 0 {
                    format!(
                        "; {} refused (the scanner still found a secret: `cairn team push` names them)",
                        crate::text::plural(p.sessions_refused, "session")
                    )
                } else {
                    String::new()
                };
                (
                    if p.sessions_refused > 0 {
                        Status::Warn
                    } else {
                        Status::Ok
                    },
                    format!(
                        "{place}; last push {when} as {}: {} there{refused}",
                        p.publisher,
                        crate::text::plural(p.sessions_on_server, "session")
                    ),
                )
            }
        };
        Some(Check {
            name: "team archive".into(),
            status,
            detail,
        })
    }

    /// The checks of an archive that exists: the data dir, the database, what older parsers
    /// read, the retained copies, who can read them.
    fn archive_checks(&self, checks: &mut Vec<Check>) {
        // Whether capture can write there, and has room to: a full disk and a read-only archive
        // are told apart. An archive read in memory (its database too damaged to open) is
        // read-only for that reason, not the data dir's.
        let read_only = self.read_only && !self.reads_in_memory();
        let facts = doctor::space::measure(
            &self.data_dir,
            read_only,
            self.no_room.as_ref().map(|(_, why)| *why),
        );
        checks.push(doctor::space::check(&facts));
        // Checked on a connection of its own, before the shared one is taken: reads go on.
        let damage = doctor::damage(&self.data_dir.join(DB_FILE));
        {
            let store = self.store();
            // Sessions as `cairn sessions` lists them (the agent counts sum to its list), the
            // other rows apart: a sub-agent or compaction is listed under its parent, a session
            // holding no record in no list.
            let stats = archive::store::counts(store.conn()).and_then(|counts| {
                let listed: u64 = archive::store::agent_counts(store.conn())?
                    .iter()
                    .map(|a| u64::from(a.sessions))
                    .sum();
                Ok((counts, listed))
            });
            checks.push(match (stats, damage) {
                (_, Some(problems)) => doctor::damaged(store.path(), &problems),
                (
                    Ok((
                        archive::store::Counts {
                            sessions,
                            records,
                            warnings,
                            secrets,
                        },
                        listed,
                    )),
                    None,
                ) => Check {
                    name: "archive".into(),
                    status: Status::Ok,
                    detail: format!(
                        "{} (schema {}): {} as `cairn sessions` lists them{}, {}, {}, {} redacted",
                        doctor::shown(store.path()),
                        store.schema_version().unwrap_or(0),
                        crate::text::plural(listed, "session"),
                        match u64::try_from(sessions).unwrap_or(0).saturating_sub(listed) {
                            0 => String::new(),
                            n => format!(
                                " ({n} more {}: sub-agents and compactions, listed under their parent, and sessions holding no record)",
                                if n == 1 { "row" } else { "rows" }
                            ),
                        },
                        crate::text::plural(records, "record"),
                        crate::text::plural(warnings, "parse warning"),
                        crate::text::plural(secrets, "secret"),
                    ),
                },
                (Err(e), None) => Check {
                    name: "archive".into(),
                    status: Status::Fail,
                    detail: store.err(e).to_string(),
                },
            });
            checks.push(doctor::warnings::check_unread(doctor::warnings::unread(
                store.conn(),
            )));
            checks.push(doctor::older_reads(
                archive::store::read_before(store.conn()),
                archive::sources::PARSERS_REVISION,
            ));
            checks.push(doctor::retained_copies(
                archive::capture::reindex::lacking_copies(store.conn(), &self.data_dir),
            ));
            if let Ok(left) = archive::forget::leftover_copies(store.conn(), &self.data_dir)
                && left > 0
            {
                checks.push(doctor::forgotten_copies_left(left));
            }
        }
        checks.push(doctor::permissions(&self.data_dir));
        self.rebuild_leftovers(checks);
    }

    /// What rebuilds from the copies left in the data dir, whether or not it holds `cairn.db`:
    /// the old databases a rebuild set aside (each still holds every session it held) and what
    /// a rebuild that did not finish left (a half-made copy of the archive).
    fn rebuild_leftovers(&self, checks: &mut Vec<Check>) {
        let now = std::time::SystemTime::now();
        checks.extend(doctor::set_aside::check(
            &doctor::set_aside::list(&self.data_dir),
            now,
            doctor::set_aside::archive_missing(&self.data_dir),
        ));
        checks.extend(doctor::set_aside::check_unfinished(&self.data_dir, now));
    }

    /// Recall's checks: extraction (set up? on? its last pass and the sessions it failed on)
    /// and the review inbox (stale entries apart). With no archive, only the first, from
    /// `config.toml`.
    fn recall_doctor(&self) -> Vec<Check> {
        let settings = self.config.recall.extract.resolve(&self.config_path());
        if self.holds_no_archive() {
            return vec![doctor::recall::extraction_check(&settings, None, &[])];
        }
        let store = self.store();
        let conn = store.conn();
        let last = crate::recall::extract::store::last_run(conn).ok().flatten();
        let failed: Vec<(String, String)> = settings
            .as_ref()
            .ok()
            .and_then(|s| s.fingerprint())
            .and_then(|fp| crate::recall::extract::store::failures(conn, &fp, u32::MAX).ok())
            .unwrap_or_default();
        let stats = crate::recall::stats(conn, &crate::recall::store::Filters::default());
        let (stale, trusted) = stats.as_ref().map_or((0, 0), |s| (s.stale, s.trusted));
        vec![
            doctor::recall::extraction_check(&settings, last.as_ref(), &failed),
            doctor::recall::review_check(
                stats.and_then(|_| crate::recall::review::queue_len(conn)),
                stale,
                trusted,
            ),
        ]
    }

    /// Each enabled agent that deletes its own transcripts: its rule (from its settings file,
    /// read as hostile input) and the transcript files Cairn has not captured that it deletes
    /// within seven days, with the command that captures them now.
    pub fn retention(&self) -> Vec<RetentionCheck> {
        let env = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(std::path::PathBuf::from)
        };
        let policies: Vec<_> = retention::policies(env, dirs::home_dir().as_deref())
            .into_iter()
            .filter(|p| self.config.agent_enabled(p.agent))
            .collect();
        if policies.is_empty() {
            return Vec::new();
        }
        let (files, _) = self.discover(&SyncOptions {
            agents: policies.iter().map(|p| p.agent).collect(),
        });
        let captured = match self.store().all_source_positions() {
            Ok(states) => states,
            Err(e) => {
                tracing::warn!("reading the sources' reading positions failed: {e}");
                Default::default()
            }
        };
        let forgotten = match crate::archive::forget::forgotten_file_keys(self.store().conn()) {
            Ok(keys) => keys,
            Err(e) => {
                tracing::warn!("reading the forget tombstones failed: {e}");
                Default::default()
            }
        };
        let now = std::time::SystemTime::now();
        policies
            .iter()
            .map(|p| retention::check(p, &files, &captured, &forgotten, now))
            .collect()
    }
}
