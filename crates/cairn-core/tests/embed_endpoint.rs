//! `[embeddings] provider = "endpoint"` against an OpenAI-compatible server on loopback, started
//! by the test: nothing is sent until a build is asked for, every text leaves redacted, the
//! vectors it returns serve vector search, and a failing server is named in the error.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use cairn_core::Error;
use cairn_core::recall::model::Surface;
use cairn_core::recall::review::Edit;
use cairn_core::recall::{Mode, QueryRequest};
use cairn_core::semantic::vectors::VectorStore;

const DIMS: usize = 64;

/// A bag of words hashed into `DIMS` buckets: texts sharing words are near each other.
fn toy_vector(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; DIMS];
    for w in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 2)
    {
        let h = w
            .to_lowercase()
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
            });
        v[(h % DIMS as u64) as usize] += 1.0;
    }
    v
}

/// One request as the server saw it.
#[derive(Clone, Debug)]
struct Seen {
    path: String,
    authorization: Option<String>,
    body: serde_json::Value,
}

/// Serve `/embeddings` on 127.0.0.1 until the test ends; `fail` makes it answer 500.
fn serve(fail: Arc<Mutex<bool>>) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let path = line.split(' ').nth(1).unwrap_or("").to_owned();
            let (mut len, mut authorization) = (0usize, None);
            loop {
                let mut h = String::new();
                reader.read_line(&mut h).unwrap();
                let h = h.trim_end();
                if h.is_empty() {
                    break;
                }
                let (k, v) = h.split_once(':').unwrap();
                match k.to_ascii_lowercase().as_str() {
                    "content-length" => len = v.trim().parse().unwrap(),
                    "authorization" => authorization = Some(v.trim().to_owned()),
                    _ => {}
                }
            }
            let mut body = vec![0; len];
            reader.read_exact(&mut body).unwrap();
            let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
            let reply = if *fail.lock().unwrap() {
                (
                    500,
                    r#"{"error":{"message":"model not loaded"}}"#.to_owned(),
                )
            } else {
                let data: Vec<serde_json::Value> = body["input"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .enumerate()
                    .map(|(i, t)| serde_json::json!({"index": i, "embedding": toy_vector(t.as_str().unwrap())}))
                    .collect();
                (
                    200,
                    serde_json::json!({"object": "list", "data": data}).to_string(),
                )
            };
            log.lock().unwrap().push(Seen {
                path,
                authorization,
                body,
            });
            let _ = write!(
                stream,
                "HTTP/1.1 {} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                reply.0,
                reply.1.len(),
                reply.1
            );
        }
    });
    (base, seen)
}

#[test]
fn endpoint_embeddings_are_built_on_request_redacted_and_searchable() {
    let fail = Arc::new(Mutex::new(false));
    let (base, seen) = serve(Arc::clone(&fail));
    // The key comes from the variable `api_key_env` names; cargo sets CARGO_PKG_NAME for every
    // test process (the workspace forbids the unsafe `set_var`).
    let (_d, cairn) = support::recall_archive_with_config(&format!(
        "[embeddings]\nprovider = \"endpoint\"\nendpoint = \"{base}\"\nmodel = \"toy\"\napi_key_env = \"CARGO_PKG_NAME\"\n"
    ));
    // The import did not call the server: an endpoint is only used when asked to.
    assert!(seen.lock().unwrap().is_empty());
    let status = cairn.embeddings_status().unwrap();
    assert_eq!(status.provider, "endpoint");
    assert!(!status.refresh_on_write);
    assert!(!status.stores[0].fresh);

    let ask = |text: &str| {
        cairn.recall_query(
            &QueryRequest {
                text: text.into(),
                mode: Mode::Vector,
                ..Default::default()
            },
            Surface::Query,
        )
    };
    let err = ask("opentelemetry propagators").unwrap_err();
    assert!(matches!(err, Error::VectorsStale { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("cairn embeddings build --store recall"),
        "{err}"
    );

    // A secret and a home path in an entry never reach the server.
    let token = format!("ghp_{}", "Zq7xW2vN9kLm4pR8tY1uB6cD3fG5hJ0aS2eQ");
    cairn
        .recall_accept(
            "otel-readme",
            Some(&Edit {
                body: Some(format!(
                    "The README documents tracing. Token {token} sits in /home/alice/work/notes.txt."
                )),
                ..Edit::default()
            }),
        )
        .unwrap();
    let report = cairn
        .embeddings_build(VectorStore::Recall, false, &|_, _| {})
        .unwrap();
    assert_eq!(report.vectors, 26);
    assert!(cairn.embeddings_status().unwrap().stores[0].fresh);

    let hits = ask("configure opentelemetry propagators in application config").unwrap();
    assert_eq!(hits.results[0].entry.id, "otel-propagators");
    assert_eq!(hits.results[0].match_reasons, vec!["semantic".to_owned()]);

    let requests = seen.lock().unwrap().clone();
    assert!(requests.len() >= 2, "{requests:?}");
    let mut saw_readme = false;
    for r in &requests {
        assert_eq!(r.path, "/v1/embeddings");
        assert_eq!(r.authorization.as_deref(), Some("Bearer cairn-core"));
        assert_eq!(r.body["model"], "toy");
        let text = r.body["input"].to_string();
        assert!(
            !text.contains(&token) && !text.contains("/home/alice"),
            "{text}"
        );
        saw_readme |= text.contains("The README documents tracing") && text.contains("[REDACTED");
    }
    assert!(saw_readme, "the edited entry was sent, redacted");

    // A failing server: the error names the endpoint and the status; lexical still answers.
    *fail.lock().unwrap() = true;
    let err = ask("where is tracing documented").unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains(&base) && msg.contains("HTTP 500") && msg.contains("model not loaded"),
        "{msg}"
    );
    let lexical = cairn
        .recall_query(
            &QueryRequest {
                text: "where is tracing documented".into(),
                ..Default::default()
            },
            Surface::Query,
        )
        .unwrap();
    assert_eq!(lexical.results[0].entry.id, "otel-readme");
}

#[test]
fn plain_http_to_a_remote_host_is_refused_before_anything_is_sent() {
    let (_d, cairn) = support::recall_archive_with_config(
        "[embeddings]\nprovider = \"endpoint\"\nendpoint = \"http://192.0.2.1:8080/v1\"\nmodel = \"m\"\n",
    );
    let err = cairn
        .embeddings_build(VectorStore::Recall, false, &|_, _| {})
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("allow_http") && msg.contains("192.0.2.1"),
        "{msg}"
    );
}
