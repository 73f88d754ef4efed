//! The [`Cairn`] facade, health checks.

use crate::archive::store::DB_FILE;
use crate::doctor::{self, Check, DoctorReport, Status};
use crate::{Cairn, archive};

impl Cairn {
    /// Health checks: data dir, database (its counts and `quick_check`), who can read the data
    /// dir, source dirs, retention, hooks.
    pub fn doctor(&self) -> DoctorReport {
        let mut checks = vec![Check {
            name: "data dir".into(),
            status: if self.read_only {
                Status::Warn
            } else {
                Status::Ok
            },
            detail: if self.read_only {
                format!(
                    "{} (read-only: reading works, capture does not)",
                    self.data_dir.display()
                )
            } else {
                self.data_dir.display().to_string()
            },
        }];
        // Checked on a connection of its own, before the shared one is taken: reads go on.
        let damage = doctor::damage(&self.data_dir.join(DB_FILE));
        {
            let store = self.store();
            let stats = archive::store::counts(store.conn());
            checks.push(match (stats, damage) {
                (_, Some(problems)) => doctor::damaged(store.path(), &problems),
                (Ok(archive::store::Counts { sessions, records, warnings, secrets }), None) => Check {
                    name: "archive".into(),
                    status: Status::Ok,
                    detail: format!(
                        "{} (schema {}): {sessions} sessions, {records} records, {warnings} parse warnings, {secrets} secrets redacted",
                        store.path().display(),
                        store.schema_version().unwrap_or(0)
                    ),
                },
                (Err(e), None) => Check { name: "archive".into(), status: Status::Fail, detail: store.err(e).to_string() },
            });
        }
        checks.push(doctor::permissions(&self.data_dir));
        checks.extend(doctor::environment_checks(
            &self.config,
            dirs::home_dir().as_deref(),
        ));
        DoctorReport { checks }
    }
}
