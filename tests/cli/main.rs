//! The `cairn` binary, run as a person or an agent would run it. Each test is one
//! user-visible behaviour; outputs are pinned with snapshots where their layout matters.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agents;
mod archive;
mod branch;
mod errors;
mod export;
mod extract;
mod extract_setup;
#[path = "../support/fake_llm.rs"]
mod fake_llm;
mod first_run;
mod forget;
mod harden;
mod hooks;
mod import;
mod insights;
mod insights_setup;
mod link;
mod lock_holder;
mod mcp;
mod mcp_install;
mod memory;
mod memory_same_name;
mod private;
mod publish_full;
mod reading;
mod rebuild;
mod recall;
mod recall_names;
mod reindex;
mod resume;
mod search;
mod share_reports;
mod shared_db;
mod show_lines;
mod skim_unplaced;
mod snippets;
mod sources;
mod stale_sync;
mod support;
mod sync_counts;
mod sync_first_records;
mod team;
mod team_silent;
mod trust;
