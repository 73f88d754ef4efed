//! Every integration test of cairn-core, in one test binary: each file beside this one is a module
//! of it, sharing `support` (fixtures, dumps, the agents' databases) and the fake OpenAI-compatible
//! server. One binary links the dependency graph once instead of once per file, which was most of
//! a cold `cargo test`'s link and codegen time (Cargo.toml sets `autotests = false` for that).
//! Run one file's tests with `cargo test -p cairn-core --test integration <file>::`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../tests/support/fake_llm.rs"]
mod fake_llm;
mod support;

mod agent_cli;
mod archive_aider;
mod archive_bad_input;
mod archive_cline;
mod archive_concurrency;
mod archive_corpus;
mod archive_crush;
mod archive_cursor;
mod archive_cursor_ide;
mod archive_gemini;
mod archive_golden;
mod archive_golden_agents;
mod archive_hermes;
mod archive_hostile;
mod archive_incremental;
mod archive_kimi;
mod archive_kiro;
mod archive_opencode;
mod archive_qwenpaw;
mod archive_rekey;
mod archive_secrets;
mod archive_titles;
mod archive_vscopilot;
mod association_incremental;
mod association_untimed;
mod atif_roundtrip;
mod atif_step_metrics;
mod detect;
mod embed_endpoint;
mod embed_golden;
mod extract;
mod extract_answer_props;
mod extract_echoed_secrets;
mod extract_generators;
mod extract_setup;
mod extract_standing;
mod floors;
mod forget;
mod forget_plan;
mod insights;
mod insights_search;
mod manifest_privacy;
mod private;
mod rebuild;
mod rebuild_live;
mod recall;
mod recall_embed_once;
mod recall_questions;
mod recall_same_name;
mod recall_semantic;
mod recall_session_start;
mod recall_stale_sync;
mod redaction;
mod redaction_formats;
mod redaction_props;
mod reindex;
mod search_cjk;
mod search_common_words;
mod search_escaped_words;
mod search_hybrid;
mod search_meaning;
mod settings_props;
mod turn_digest;
mod views_branches;
mod why;
