//! A ranked query naming a project is answered twice over (the project's own entries, then the
//! trusted global entries of every other project, `recall::memory::global`): its words are
//! embedded once for both, whatever the embedder's own cache holds.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use cairn_core::recall::model::Surface;
use cairn_core::recall::store::Filters;
use cairn_core::recall::{Mode, QueryRequest};
use cairn_core::semantic::embed::{Embedder, InputKind};
use cairn_core::semantic::vectors::VectorStore;

/// A small deterministic embedder that counts the queries it is asked to embed.
struct Counting {
    queries: Arc<AtomicU32>,
}

impl Embedder for Counting {
    fn fingerprint(&self) -> &str {
        "counting/test"
    }
    fn dims(&self) -> usize {
        4
    }
    fn embed(&self, texts: &[&str], kind: InputKind) -> cairn_core::Result<Vec<f32>> {
        if kind == InputKind::Query {
            self.queries.fetch_add(1, Ordering::SeqCst);
        }
        Ok(texts
            .iter()
            .flat_map(|t| {
                let n = t.len() as f32;
                let mut v = vec![1.0, n, n.sqrt(), 0.5];
                cairn_core::semantic::embed::normalize(&mut v);
                v
            })
            .collect())
    }
    fn refresh_on_write(&self) -> bool {
        false
    }
    fn describe(&self) -> String {
        "counting test model".into()
    }
}

#[test]
fn a_query_naming_a_project_embeds_its_words_once() {
    let (_d, cairn) = support::recall_archive();
    let queries = Arc::new(AtomicU32::new(0));
    cairn.set_embedder(Arc::new(Counting {
        queries: Arc::clone(&queries),
    }));
    cairn
        .embeddings_build(VectorStore::Recall, false, &|_, _| {})
        .unwrap();
    for (i, mode) in [Mode::Vector, Mode::Hybrid].into_iter().enumerate() {
        // Each question new to the embedder's cache, as a person's next question is.
        cairn.clear_query_cache();
        let before = queries.load(Ordering::SeqCst);
        let req = QueryRequest {
            text: format!("where is tracing documented {i}"),
            mode,
            filters: Filters {
                project: Some("spotter".into()),
                ..Filters::default()
            },
            ..Default::default()
        };
        let resp = cairn.recall_query(&req, Surface::Query).unwrap();
        assert!(!resp.results.is_empty(), "{mode:?}");
        assert_eq!(queries.load(Ordering::SeqCst) - before, 1, "{mode:?}");
    }
}
