//! A tiny OpenAI-compatible server on 127.0.0.1 for tests: std::net only, one connection at a
//! time, `Connection: close` on every reply. It records every request, checks the shape of
//! chat requests (model, system + user messages, strict `json_schema` response format, bearer
//! key) and answers per the schema with one entry per unit, citing the unit's first ordinal.
//! Tests can queue scripted replies (429, 5xx, redirects…) and cap the user message size to
//! simulate a context overflow.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use serde_json::{Value, json};

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Captured {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Captured {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
    /// The user message of a chat request.
    pub fn user(&self) -> String {
        self.json()["messages"][1]["content"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
    pub fn is_chat(&self) -> bool {
        self.path.ends_with("/chat/completions")
    }
}

/// A reply to send.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    pub fn json(status: u16, v: Value) -> Reply {
        Reply {
            status,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: v.to_string(),
        }
    }
    pub fn with_header(mut self, k: &str, v: &str) -> Reply {
        self.headers.push((k.into(), v.into()));
        self
    }
    /// A chat completion whose content is `content`.
    pub fn chat(content: &str, finish: &str) -> Reply {
        Reply::json(
            200,
            json!({"id": "x", "object": "chat.completion", "choices": [{"index": 0,
                "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
                "usage": {"prompt_tokens": 11, "completion_tokens": 7}}),
        )
    }
}

#[derive(Default)]
pub struct Behaviour {
    /// Replies served before the default behaviour, in order.
    pub script: VecDeque<Reply>,
    /// Answer a chat request whose user message is longer than this with a context overflow.
    pub max_user_chars: Option<usize>,
    /// The bearer key every request must carry (None: no Authorization header allowed).
    pub key: Option<String>,
    /// What the server found wrong with requests (tests assert this stays empty).
    pub violations: Vec<String>,
    /// After this many chat requests, answer every further one with the reply.
    pub fail_after: Option<(usize, Reply)>,
    /// After this many chat requests, hold every further one unanswered until released (a
    /// pass caught mid-way, for kill tests).
    pub hold_after: Option<usize>,
    chats: usize,
}

pub struct FakeLlm {
    pub port: u16,
    pub requests: Arc<Mutex<Vec<Captured>>>,
    pub behaviour: Arc<Mutex<Behaviour>>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl FakeLlm {
    pub fn start(key: Option<&str>) -> FakeLlm {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let behaviour = Arc::new(Mutex::new(Behaviour {
            key: key.map(str::to_owned),
            ..Default::default()
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let (r, b, s) = (requests.clone(), behaviour.clone(), stop.clone());
        let handle = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(stream) = conn {
                    serve(stream, &r, &b);
                }
            }
        });
        FakeLlm {
            port,
            requests,
            behaviour,
            stop,
            handle: Some(handle),
        }
    }

    /// The base URL (`http://127.0.0.1:<port>/v1`).
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    pub fn push(&self, reply: Reply) {
        self.behaviour.lock().unwrap().script.push_back(reply);
    }

    /// Answer chat requests normally `n` times, then always with `reply` (None: stop failing).
    pub fn fail_after(&self, n: usize, reply: Option<Reply>) {
        let mut b = self.behaviour.lock().unwrap();
        b.chats = 0;
        b.fail_after = reply.map(|r| (n, r));
    }

    /// Answer `n` chat requests, then hold the next ones until [`FakeLlm::release`]. Counts
    /// from the chat requests served so far.
    pub fn hold_after(&self, n: usize) {
        let mut b = self.behaviour.lock().unwrap();
        b.hold_after = Some(b.chats + n);
    }

    /// Answer held and further requests again.
    pub fn release(&self) {
        self.behaviour.lock().unwrap().hold_after = None;
    }

    pub fn set_max_user_chars(&self, n: Option<usize>) {
        self.behaviour.lock().unwrap().max_user_chars = n;
    }

    pub fn requests(&self) -> Vec<Captured> {
        self.requests.lock().unwrap().clone()
    }

    pub fn chats(&self) -> Vec<Captured> {
        self.requests()
            .into_iter()
            .filter(Captured::is_chat)
            .collect()
    }

    pub fn clear(&self) {
        self.requests.lock().unwrap().clear();
    }

    pub fn violations(&self) -> Vec<String> {
        self.behaviour.lock().unwrap().violations.clone()
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        self.release();
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn serve(stream: TcpStream, requests: &Mutex<Vec<Captured>>, behaviour: &Mutex<Behaviour>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
            break;
        }
        if let Some((k, v)) = h.trim_end().split_once(':') {
            headers.push((k.trim().to_owned(), v.trim().to_owned()));
        }
    }
    let len: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    // A client killed mid-request (the extraction kill test) leaves a short body: drop it and
    // keep serving, as a real server would.
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let req = Captured {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    requests.lock().unwrap().push(req.clone());
    let (reply, held) = {
        let mut b = behaviour.lock().unwrap();
        let reply = respond(&req, &mut b);
        (
            reply,
            req.is_chat() && b.hold_after.is_some_and(|n| b.chats > n),
        )
    };
    while held && behaviour.lock().unwrap().hold_after.is_some() {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let mut out = stream;
    let mut head = format!(
        "HTTP/1.1 {} X\r\nContent-Length: {}\r\nConnection: close\r\n",
        reply.status,
        reply.body.len()
    );
    for (k, v) in &reply.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = out.write_all(head.as_bytes());
    let _ = out.write_all(reply.body.as_bytes());
    let _ = out.flush();
}

fn respond(req: &Captured, b: &mut Behaviour) -> Reply {
    let auth = req.header("authorization").map(str::to_owned);
    let want = b.key.as_ref().map(|k| format!("Bearer {k}"));
    if auth != want {
        b.violations.push(format!(
            "{} {}: authorization {auth:?}, want {want:?}",
            req.method, req.path
        ));
    }
    if let Some(r) = b.script.pop_front() {
        return r;
    }
    if req.is_chat() {
        b.chats += 1;
        if let Some((n, r)) = &b.fail_after
            && b.chats > *n
        {
            return r.clone();
        }
    }
    if req.path.ends_with("/models") {
        return Reply::json(
            200,
            json!({"object": "list", "data": [{"id": "test-model"}]}),
        );
    }
    if req.path.ends_with("/embeddings") {
        let n = req.json()["input"].as_array().map_or(0, Vec::len);
        let data: Vec<Value> = (0..n)
            .map(|i| json!({"index": i, "embedding": [i as f64, 1.0, 0.5]}))
            .collect();
        return Reply::json(200, json!({"data": data}));
    }
    if !req.is_chat() || req.method != "POST" {
        return Reply::json(404, json!({"error": {"message": "no such route"}}));
    }
    let v = req.json();
    for problem in chat_problems(&v) {
        b.violations.push(problem);
    }
    let user = req.user();
    if b.max_user_chars.is_some_and(|m| user.chars().count() > m) {
        return Reply::json(
            400,
            json!({"error": {"message": "This model's maximum context length is 128 tokens", "code": "context_length_exceeded"}}),
        );
    }
    Reply::chat(&answer(&user).to_string(), "stop")
}

/// What is wrong with a chat request's shape.
pub fn chat_problems(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if v["model"].as_str().is_none_or(str::is_empty) {
        out.push("no model".into());
    }
    let msgs = v["messages"].as_array().cloned().unwrap_or_default();
    if msgs.len() != 2 || msgs[0]["role"] != "system" || msgs[1]["role"] != "user" {
        out.push(format!("messages are not [system, user]: {msgs:?}"));
    }
    if msgs
        .iter()
        .any(|m| m["content"].as_str().is_none_or(str::is_empty))
    {
        out.push("a message has no content".into());
    }
    let rf = &v["response_format"];
    if rf["type"] != "json_schema" || rf["json_schema"]["strict"] != true {
        out.push(format!("response_format is not a strict json_schema: {rf}"));
    }
    let items = &rf["json_schema"]["schema"]["properties"]["entries"]["items"];
    if items["additionalProperties"] != false
        || items["required"].as_array().is_none_or(Vec::is_empty)
    {
        out.push("the schema does not pin the entry keys".into());
    }
    out
}

/// Ordinals cited in a unit text: `(ordinal N)` and `[N]` block labels, in order.
pub fn ordinals(text: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for line in text.lines() {
        let n = if let Some(rest) = line.strip_prefix("USER MESSAGE (ordinal ") {
            rest.split(')').next()
        } else if let Some(rest) = line.strip_prefix('[') {
            rest.split(']').next()
        } else {
            None
        };
        if let Some(n) = n.and_then(|n| n.parse().ok()) {
            out.push(n);
        }
    }
    out
}

/// The default answer: one entry for the segment, citing its first ordinal only.
pub fn answer(user: &str) -> Value {
    let segment = user.split_once("SEGMENT:\n").map_or(user, |(_, s)| s);
    let ords = ordinals(segment);
    let Some(&first) = ords.first() else {
        return json!({"entries": []});
    };
    let last = *ords.last().unwrap();
    let intent = segment.starts_with("USER MESSAGE");
    let gist: String = segment
        .lines()
        .nth(1)
        .unwrap_or_default()
        .chars()
        .take(60)
        .collect();
    json!({"entries": [{
        "type": if intent { "fact" } else { "procedure" },
        "title": format!("Records {first}-{last}: {gist}"),
        "body": format!("What happened in records {first} to {last}."),
        "trigger": format!("when revisiting record {first}"),
        "confidence": 0.75,
        "entities": [format!("record-{first}")],
        "evidence": {"first": first, "last": first}
    }]})
}
