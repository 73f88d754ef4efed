//! The team archive: a PostgreSQL database a team shares (`cairn team …`, cairn-core's `team`
//! feature). `push` mirrors this machine's redacted archive into it, incrementally, each row
//! owned by the role that pushed it; `read` searches it, skims a branch or PR across everyone,
//! shows a teammate's session and queries the team's trusted Recall entries, read-only, every
//! row cleaned as hostile. `server` is where the connection string and its password come from,
//! the TLS rule and the address messages show; `schema` the server-side schema Cairn migrates.
//!
//! This machine keeps only where each push got to (`team_pushed_sessions`,
//! `team_pushed_entries`, keyed by the server's archive id and the role): never an address, a
//! user name or a credential.

pub mod conn;
pub mod forget;
pub mod keyring;
pub mod push;
pub mod read;
pub mod schema;
pub mod server;

pub use keyring::{KeyringState, TeamRemembered};
pub use push::{LastPush, TeamPushReport};
pub use read::{TeamCheck, TeamRecallHit, TeamRepoScope, TeamSearchHit, TeamShow, TeamSkim};
pub use schema::TeamInit;
pub use server::{PasswordSource, Server};
