//! The framing driven as a client drives the server: lines in, answers out, through pipes, with
//! the whole server behind it where the answer is the server's.

use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::*;

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

fn call(id: u32, tool: &str, args: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": args}})
    .to_string()
}

fn scan(parts: &[&[u8]]) -> Option<Value> {
    let mut s = IdScan::default();
    for p in parts {
        s.feed(p);
    }
    s.id()
}

#[test]
fn the_top_level_id_is_found_wherever_it_is_and_however_the_bytes_arrive() {
    let big = "x".repeat(5000);
    let id_first =
        format!(r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"q":"{big}"}}}}"#);
    let id_last = format!(
        r#"{{ "params" : {{"id": 1, "q": "{big} \"id\": 2 {{ ["}}, "method":"x", "id" : "req-7" }}"#
    );
    let no_id = format!(r#"{{"method":"x","params":{{"id":3,"q":"{big}"}}}}"#);
    let null_id = r#"{"id":null,"method":"x"}"#.to_owned();
    let escaped = r#"{"id":"a\"b","method":"x"}"#.to_owned();
    for (text, want) in [
        (id_first, Some(json!(9))),
        (id_last, Some(json!("req-7"))),
        (no_id, None),
        (null_id, None),
        (escaped, None),
        (r#"{"id":-12.5e3}"#.to_owned(), Some(json!(-12500.0))),
        (format!(r#"{{"idx":1,"id":{}}}"#, "9".repeat(200)), None),
    ] {
        let bytes = text.as_bytes();
        assert_eq!(scan(&[bytes]), want, "{}", &text[..text.len().min(80)]);
        // A byte at a time, and cut at every place near the id, read the same.
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(scan(&singles), want);
        for cut in 0..bytes.len().min(40) {
            assert_eq!(scan(&[&bytes[..cut], &bytes[cut..]]), want, "cut at {cut}");
        }
    }
}

/// A framing over pipes: what the client writes, and a reader of what the server answers.
struct Pipes {
    client: tokio::io::DuplexStream,
    answers: tokio::io::Lines<BufReader<tokio::io::DuplexStream>>,
}

fn pipes() -> (
    Framed<tokio::io::DuplexStream, tokio::io::DuplexStream>,
    Pipes,
) {
    let (client, server_in) = tokio::io::duplex(64 * 1024);
    let (server_out, answers) = tokio::io::duplex(1024 * 1024);
    let framed = Framed::new(server_in, server_out, |s: &str| s.to_owned());
    (
        framed,
        Pipes {
            client,
            answers: BufReader::new(answers).lines(),
        },
    )
}

impl Pipes {
    async fn send(&mut self, line: &str) {
        self.client.write_all(line.as_bytes()).await.unwrap();
        self.client.write_all(b"\n").await.unwrap();
    }

    async fn answer(&mut self) -> Value {
        let line =
            tokio::time::timeout(std::time::Duration::from_secs(20), self.answers.next_line())
                .await
                .expect("no answer in time")
                .unwrap()
                .expect("the server closed its output");
        serde_json::from_str(&line).unwrap()
    }
}

fn method(message: &RxJsonRpcMessage<RoleServer>) -> String {
    serde_json::to_value(message).unwrap()["method"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn a_message_too_long_is_answered_with_the_limit_and_never_held() {
    let (mut framed, mut p) = pipes();
    let huge = call(9, "search", json!({"query": "x".repeat(3 * MAX_LINE)}));
    let writer = tokio::spawn(async move {
        p.send(INIT).await;
        p.send(&huge).await;
        p.send(&call(10, "search", json!({"query": "phoenix"})))
            .await;
        p
    });
    assert_eq!(method(&framed.receive().await.unwrap()), "initialize");
    // The long line is passed over; the next message is the one after it.
    let next = framed.receive().await.unwrap();
    assert_eq!(serde_json::to_value(&next).unwrap()["id"], 10);
    // At no point was more than the limit (and one read's worth) kept.
    assert!(
        framed.line.capacity() <= MAX_LINE + 64 * 1024,
        "{}",
        framed.line.capacity()
    );
    framed.replies_written().await;
    let mut p = writer.await.unwrap();
    let answer = p.answer().await;
    assert_eq!(answer["id"], 9, "{answer}");
    assert_eq!(answer["error"]["code"], INVALID_REQUEST);
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("1048576 bytes"), "{message}");
}

#[tokio::test]
async fn a_message_too_long_whose_id_is_unreadable_is_answered_to_null() {
    let (mut framed, mut p) = pipes();
    let huge = format!(
        r#"{{"jsonrpc":"2.0","method":"x","params":{{"q":"{}"}}}}"#,
        "y".repeat(MAX_LINE)
    );
    let writer = tokio::spawn(async move {
        p.send(&huge).await;
        drop(p.client);
        p.answers
    });
    // The input ends: the answer is written before that is reported.
    assert!(framed.receive().await.is_none());
    let mut answers = writer.await.unwrap();
    let answer: Value = serde_json::from_str(&answers.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(answer["id"], Value::Null, "{answer}");
    assert_eq!(answer["error"]["code"], INVALID_REQUEST);
}

#[tokio::test]
async fn a_line_that_is_not_json_gets_a_parse_error_and_the_next_is_read() {
    let (mut framed, mut p) = pipes();
    p.send("this is not json").await;
    p.send("").await;
    p.send(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":7}"#)
        .await;
    p.send(INIT).await;
    assert_eq!(method(&framed.receive().await.unwrap()), "initialize");
    framed.replies_written().await;
    let parse = p.answer().await;
    assert_eq!(parse["id"], Value::Null);
    assert_eq!(parse["error"]["code"], PARSE_ERROR, "{parse}");
    // Before the handshake, a call is told to send `initialize` first.
    let early = p.answer().await;
    assert_eq!(early["id"], 4);
    assert_eq!(early["error"]["code"], NOT_INITIALIZED, "{early}");
    assert!(
        early["error"]["message"]
            .as_str()
            .unwrap()
            .contains("send `initialize` first")
    );
    // After it, a known method with wrong parameters says which.
    p.send(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":7}"#)
        .await;
    p.send(r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#).await;
    assert_eq!(method(&framed.receive().await.unwrap()), "ping");
    framed.replies_written().await;
    let wrong = p.answer().await;
    assert_eq!(
        (wrong["id"].clone(), wrong["error"]["code"].clone()),
        (json!(5), json!(INVALID_PARAMS)),
        "{wrong}"
    );
    assert!(
        wrong["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`tools/call`")
    );
}

/// The whole server over the framing: `data` its data dir, `cwd` where it runs.
fn serve(data: &std::path::Path, cwd: &std::path::Path) -> Pipes {
    let (cairn, unopened) = cairn_core::Cairn::open_for_agents_despite(data).unwrap();
    let mut session = crate::Session::new(cairn, cwd);
    session.unopened = unopened;
    let session = Arc::new(session);
    let (framed, p) = pipes();
    tokio::spawn(async move {
        if let Ok(service) = crate::Server::new(session).serve(framed).await {
            let _ = service.waiting().await;
        }
    });
    p
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misuse_is_answered_and_the_server_keeps_serving() {
    let tmp = tempfile::tempdir().unwrap();
    let mut p = serve(&tmp.path().join("data"), tmp.path());
    p.send(&call(1, "search", json!({"query": "x"}))).await;
    let early = p.answer().await;
    assert_eq!(
        (early["id"].clone(), early["error"]["code"].clone()),
        (json!(1), json!(NOT_INITIALIZED)),
        "{early}"
    );
    p.send(INITIALIZED).await;
    p.send(INIT).await;
    assert_eq!(p.answer().await["id"], 0);
    p.send(INITIALIZED).await;
    p.send(r#"{"jsonrpc":"2.0","id":5,"method":"foo/bar"}"#)
        .await;
    let unknown = p.answer().await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let message = unknown["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("foo/bar") && message.contains("tools/call"),
        "{message}"
    );
    p.send(&call(6, "search", json!({"query": "x"}))).await;
    let served = p.answer().await;
    assert_eq!(served["id"], 6, "{served}");
    assert!(served.get("result").is_some(), "{served}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_archive_is_served_and_every_tool_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("cairn.db"), "garbage\n").unwrap();
    let mut p = serve(&data, tmp.path());
    p.send(INIT).await;
    assert_eq!(p.answer().await["id"], 0);
    p.send(INITIALIZED).await;
    for (id, tool) in [(1, "search"), (2, "recall_brief"), (3, "skim")] {
        let args = if tool == "search" {
            json!({"query": "x"})
        } else {
            json!({})
        };
        p.send(&call(id, tool, args)).await;
        let answer = p.answer().await;
        assert_eq!(answer["result"]["isError"], true, "{answer}");
        let text = answer["result"]["content"][0]["text"].as_str().unwrap();
        assert!(
            text.contains("cannot be read") && text.contains("cairn doctor"),
            "{text}"
        );
    }
}
