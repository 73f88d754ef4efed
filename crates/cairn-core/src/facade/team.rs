//! The team archive (PostgreSQL): push this archive to it, and its read-only views.

use crate::Cairn;
use crate::error::Result;
use crate::team::{self, Server};

impl Cairn {
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

    /// Records across the team matching `query`, best first.
    pub fn team_search(
        &self,
        server: &Server,
        query: &str,
        limit: u32,
    ) -> Result<Vec<team::TeamSearchHit>> {
        team::read::Reader::open(server)?.search(query, limit)
    }

    /// A branch or PR across everyone who pushed.
    pub fn team_skim(&self, server: &Server, target: &str) -> Result<team::TeamSkim> {
        team::read::Reader::open(server)?.skim(target)
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

    /// The team's trusted Recall entries matching `query`.
    pub fn team_recall(
        &self,
        server: &Server,
        query: &str,
        limit: u32,
    ) -> Result<Vec<team::TeamRecallHit>> {
        team::read::Reader::open(server)?.recall(query, limit)
    }
}
