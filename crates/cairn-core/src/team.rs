//! The team archive: a PostgreSQL database a team shares (`cairn team …`, cairn-core's `team`
//! feature). `push` mirrors this machine's redacted archive into it, incrementally, each row
//! owned by the role that pushed it; `read` searches it, skims a branch or PR across everyone,
//! shows a teammate's session and queries the team's trusted Recall entries, read-only, every
//! row cleaned as hostile. `members` is an administrator's `grant` and `revoke` of the team's
//! role. `server` is where the connection string and its password come from,
//! the TLS rule and the address messages show; `schema` the server-side schema Cairn migrates.
//!
//! This machine keeps only where each push got to (`team_pushed_sessions`,
//! `team_pushed_entries`, keyed by the server's archive id and the role): never an address, a
//! user name or a credential.
//!
//! Only `store` is built without the `team` feature: the tables exist in every archive, and a
//! rebuild from the copies carries them over whichever build runs it.

#[cfg(feature = "team")]
pub mod conn;
#[cfg(feature = "team")]
pub mod forget;
#[cfg(feature = "team")]
pub mod keyring;
#[cfg(feature = "team")]
pub mod members;
#[cfg(feature = "team")]
pub mod push;
#[cfg(feature = "team")]
pub mod read;
#[cfg(feature = "team")]
pub mod schema;
#[cfg(feature = "team")]
pub mod server;
pub mod store;

#[cfg(feature = "team")]
pub use keyring::{KeyringState, TeamRemembered};
#[cfg(feature = "team")]
pub use members::TeamMembership;
#[cfg(feature = "team")]
pub use push::{LastPush, TeamPushReport};
#[cfg(feature = "team")]
pub use read::{TeamCheck, TeamRecallHit, TeamRepoScope, TeamSearchHit, TeamShow, TeamSkim};
#[cfg(feature = "team")]
pub use schema::TeamInit;
#[cfg(feature = "team")]
pub use server::{PasswordSource, Server};
