//! The framing driven as a client drives the server: lines in, answers out, through pipes, with
//! the whole server behind it where the answer is the server's.

use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::*;

mod listings;
mod malformed_call;

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

fn pipes() -> (Framed<tokio::io::DuplexStream>, Pipes) {
    pipes_holding(1024 * 1024)
}

/// [`pipes`] whose output holds `out` bytes the client has not read.
fn pipes_holding(out: usize) -> (Framed<tokio::io::DuplexStream>, Pipes) {
    let (client, server_in) = tokio::io::duplex(64 * 1024);
    let (server_out, answers) = tokio::io::duplex(out);
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

/// Answer `initialize` (id 0) as rmcp does when it succeeds: what completes the handshake.
async fn initialize_answered(framed: &mut Framed<tokio::io::DuplexStream>) {
    let result = rmcp::model::ServerResult::InitializeResult(Default::default());
    let answer = rmcp::model::ServerJsonRpcMessage::response(result, RequestId::Number(0));
    framed.send(answer).await.unwrap();
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
    initialize_answered(&mut framed).await;
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
    assert_eq!(p.answer().await["id"], 0);
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
    initialize_answered(&mut framed).await;
    assert!(p.answer().await.get("result").is_some());
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

/// Write `lines` on a task of its own, counting those written, until all are.
fn write_counting(
    mut client: tokio::io::DuplexStream,
    lines: Vec<String>,
) -> (
    Arc<std::sync::atomic::AtomicUsize>,
    tokio::task::JoinHandle<tokio::io::DuplexStream>,
) {
    let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = count.clone();
    let task = tokio::spawn(async move {
        for line in lines {
            client.write_all(line.as_bytes()).await.unwrap();
            client.write_all(b"\n").await.unwrap();
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        client
    });
    (count, task)
}

/// Read `n` answers, checking each with `check`; `n` when all came in time.
async fn answers_read(
    mut answers: tokio::io::Lines<BufReader<tokio::io::DuplexStream>>,
    n: usize,
    check: impl Fn(&Value),
) -> usize {
    let read = async {
        for _ in 0..n {
            let line = answers.next_line().await.unwrap().unwrap();
            check(&serde_json::from_str(&line).unwrap());
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(60), read)
        .await
        .expect("not every answer came in time");
    n
}

#[tokio::test]
async fn a_client_that_never_reads_stops_being_read_and_is_answered_in_full_when_it_does() {
    let (mut framed, p) = pipes_holding(1024);
    tokio::spawn(async move { while framed.receive().await.is_some() {} });
    // Each line is answered here, with a parse error of about 150 bytes.
    let (taken, writer) = write_counting(p.client, vec!["not json".to_owned(); 30_000]);
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    // The input's 64 KiB hold about 7,000 of those lines: the server stopped reading soon
    // after the client stopped reading, rather than keeping an answer for every line.
    let taken = taken.load(std::sync::atomic::Ordering::SeqCst);
    assert!(taken < 10_000, "{taken} lines taken");
    // Once the client reads, the rest is taken and every line answered.
    let read = answers_read(p.answers, 30_000, |a| {
        assert_eq!(a["error"]["code"], PARSE_ERROR, "{a}");
    });
    assert_eq!(read.await, 30_000);
    writer.await.unwrap();
}

/// The whole server over the framing: `data` its data dir, `cwd` where it runs.
fn serve(data: &std::path::Path, cwd: &std::path::Path) -> Pipes {
    serve_holding(data, cwd, 1024 * 1024)
}

/// [`serve`] with an output that holds `out` bytes the client has not read.
fn serve_holding(data: &std::path::Path, cwd: &std::path::Path, out: usize) -> Pipes {
    let (cairn, unopened) = cairn_core::Cairn::open_for_agents_despite(data).unwrap();
    let mut session = crate::Session::new(cairn, cwd);
    session.unopened = unopened;
    let session = Arc::new(session);
    let (framed, p) = pipes_holding(out);
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

/// A failed `initialize` is no handshake: rmcp still waits for one, so a call is told to send
/// it (not answered by rmcp about request metadata) and a notification does not end the
/// session; a good `initialize` after it is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_initialize_leaves_the_handshake_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let mut p = serve(&tmp.path().join("data"), tmp.path());
    p.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#)
        .await;
    let failed = p.answer().await;
    assert_eq!(failed["id"], 0, "{failed}");
    assert!(failed.get("error").is_some(), "{failed}");
    p.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .await;
    let early = p.answer().await;
    assert_eq!(
        (early["id"].clone(), early["error"]["code"].clone()),
        (json!(1), json!(NOT_INITIALIZED)),
        "{early}"
    );
    p.send(INITIALIZED).await;
    p.send(INIT).await;
    let init = p.answer().await;
    assert_eq!(init["id"], 0, "{init}");
    assert!(init.get("result").is_some(), "{init}");
    p.send(INITIALIZED).await;
    p.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#)
        .await;
    let tools = p.answer().await;
    assert!(tools["result"]["tools"].is_array(), "{tools}");
}

/// rmcp's answers wait for the client as ours do: a client sending calls and reading none
/// stops being read, and is answered every call once it reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_reads_the_server_s_answers_stops_being_read() {
    let tmp = tempfile::tempdir().unwrap();
    let mut p = serve_holding(&tmp.path().join("data"), tmp.path(), 1024);
    p.send(INIT).await;
    assert_eq!(p.answer().await["id"], 0);
    p.send(INITIALIZED).await;
    let pings: Vec<String> = (1..=30_000)
        .map(|id| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#))
        .collect();
    let (taken, writer) = write_counting(p.client, pings);
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    // The input holds about 1,800 of those lines.
    let taken = taken.load(std::sync::atomic::Ordering::SeqCst);
    assert!(taken < 10_000, "{taken} lines taken");
    let ids = std::sync::Mutex::new(std::collections::HashSet::new());
    let read = answers_read(p.answers, 30_000, |a| {
        assert!(a.get("result").is_some(), "{a}");
        ids.lock().unwrap().insert(a["id"].as_u64().unwrap());
    });
    assert_eq!(read.await, 30_000);
    assert_eq!(ids.lock().unwrap().len(), 30_000);
    writer.await.unwrap();
}
