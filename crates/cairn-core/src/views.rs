//! Read-only projections of the store. Their serde types are the API: the CLI's `--json`,
//! the desktop commands and the generated TypeScript bindings all use them as they are.

pub mod branches;
pub mod export;
pub mod resume;
pub mod search;
pub mod session;
pub mod sessions;
pub mod show;
pub mod skim;
pub mod why;
