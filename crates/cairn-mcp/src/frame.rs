//! The stdio framing in front of rmcp: one JSON-RPC message a line, each line read within
//! [`MAX_LINE`] bytes, and every line the service cannot take answered here rather than dropped.
//!
//! rmcp's own stdio transport drops what it cannot use without a word: a line past its 16 MiB
//! cap, a line that is not JSON (on purpose, against echo storms between two broken peers), and
//! before the handshake it refuses a call with a message about request metadata and ends the
//! session on a notification. A client then waits forever for an answer. Here:
//!
//! - a line longer than [`MAX_LINE`] is read on without being kept (its top-level `id` picked
//!   out by [`IdScan`] as the bytes pass) and answered with an error naming the limit;
//! - a line that is not JSON is answered with a parse error (`-32700`, id null), as JSON-RPC 2.0
//!   asks; JSON that is no message, or a known method with wrong parameters, with `-32600` or
//!   `-32602` and the reason;
//! - before `initialize`, a request other than `initialize`, `ping` or `server/discover` (and
//!   one carrying its protocol version inline, which rmcp serves without a handshake) is
//!   answered "send `initialize` first", and a notification is dropped; the server keeps
//!   serving. The handshake counts as done only once rmcp's answer to it goes out as a result
//!   (an `initialize` that failed, or an inline request it refused, leaves the gate shut).
//!
//! Every message it writes passes the `clean` function it is given (the outbound redactor):
//! what it quotes came from the client.
//!
//! Memory stays bounded against a client that writes and never reads: one writer task takes
//! the answers from a queue of [`MAX_QUEUED`], and a line is read only while fewer than
//! [`MAX_IN_FLIGHT`] requests handed to rmcp wait for their answer to be queued and our own
//! answers fit in the queue. When the client stops reading, the server stops reading too.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{JsonRpcMessage, RequestId, ServerResult};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot};

/// The longest line (one JSON-RPC message) the server reads: ample for any tool call (a query
/// is at most 1,000 bytes, a proposal a few KB), and the most memory one message takes.
pub const MAX_LINE: usize = 1024 * 1024;

/// JSON-RPC 2.0's error codes, and the one LSP gives a call before the handshake.
const PARSE_ERROR: i32 = -32700;
const INVALID_REQUEST: i32 = -32600;
const INVALID_PARAMS: i32 = -32602;
const NOT_INITIALIZED: i32 = -32002;

/// The longest message text an error here carries, in characters.
const MAX_MESSAGE: usize = 600;

/// Methods rmcp answers before the handshake.
const BEFORE_INITIALIZE: [&str; 3] = ["initialize", "ping", "server/discover"];

/// The key under `params._meta` that names the protocol version inline (MCP 2026-07-28: a
/// request carrying it needs no handshake, and rmcp serves it).
const INLINE_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// Answers queued for the writer at most: past this, sending waits (and so does reading).
/// An answer is at most [`crate::bound::MAX_BYTES`] of text, so the queue holds about a MiB.
pub const MAX_QUEUED: usize = 16;

/// Requests handed to rmcp whose answer is not queued yet, at most: past this, no line is read
/// until one is answered. Each holds at most one [`MAX_LINE`] and, later, its answer.
pub const MAX_IN_FLIGHT: usize = 32;

type Clean = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// What the writer task is handed.
enum Out {
    /// One message, its newline included.
    Line(Vec<u8>),
    /// Everything queued before has been written (or the output failed).
    Written(oneshot::Sender<()>),
}

/// The requests handed to rmcp that wait for their answer, each holding its room.
type Answering = Arc<std::sync::Mutex<HashMap<RequestId, OwnedSemaphorePermit>>>;

/// What answer to a request opens the handshake gate.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Opening {
    /// `initialize`: its result (not an error).
    Initialize,
    /// A request carrying its protocol version inline: any result (rmcp refuses one it will
    /// not serve that way with an error, and keeps waiting for a handshake).
    Inline,
}

/// rmcp's [`rmcp::transport::Transport`] over a reader and a writer (stdin and stdout).
pub struct Framed<R: AsyncRead> {
    read: BufReader<R>,
    /// The line being read; never more than [`MAX_LINE`] bytes. It lives here, not in
    /// `receive`, because rmcp polls `receive` in a `select!` and may drop it mid-line.
    line: Vec<u8>,
    /// Reading past the end of a line too long to keep: its bytes so far and its id.
    overlong: Option<(usize, IdScan)>,
    /// The writer task's queue ([`MAX_QUEUED`]); it alone writes the output.
    out: mpsc::Sender<Out>,
    clean: Clean,
    /// Answers of our own not queued yet (queued before the next read).
    replies: VecDeque<Vec<u8>>,
    /// Room for [`MAX_IN_FLIGHT`] requests rmcp has not answered yet.
    in_flight: Arc<Semaphore>,
    /// The room taken for the next line read (given to it when it is a request for rmcp).
    room: Option<OwnedSemaphorePermit>,
    answering: Answering,
    /// Requests handed to rmcp whose answer may complete the handshake.
    opening: HashMap<RequestId, Opening>,
    initialized: bool,
}

impl<R> Framed<R>
where
    R: AsyncRead + Unpin + Send,
{
    /// The framing over `read` and `write`; its writer task is spawned on the current tokio
    /// runtime.
    pub fn new<W>(read: R, write: W, clean: impl Fn(&str) -> String + Send + Sync + 'static) -> Self
    where
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (out, queue) = mpsc::channel(MAX_QUEUED);
        tokio::spawn(write_out(write, queue));
        Framed {
            read: BufReader::new(read),
            line: Vec::new(),
            overlong: None,
            out,
            clean: Arc::new(clean),
            replies: VecDeque::new(),
            in_flight: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
            room: None,
            answering: Arc::default(),
            opening: HashMap::new(),
            initialized: false,
        }
    }

    /// Queue an error answer to `id` (null when the line named none).
    fn reply(&mut self, id: Option<Value>, code: i32, message: &str) {
        let message = cairn_core::text::one_line(&(self.clean)(message), MAX_MESSAGE);
        let body = json!({
            "jsonrpc": "2.0",
            "id": id.unwrap_or(Value::Null),
            "error": { "code": code, "message": message },
        });
        let mut bytes = body.to_string().into_bytes();
        bytes.push(b'\n');
        self.replies.push_back(bytes);
    }

    /// Hand our answers to the writer, waiting while its queue is full. Cancel-safe (rmcp
    /// polls `receive` in a `select!`): an answer leaves `replies` only once it has room.
    async fn flush_replies(&mut self) {
        while !self.replies.is_empty() {
            let Ok(room) = self.out.reserve().await else {
                // The output is gone: nobody will read these.
                self.replies.clear();
                return;
            };
            if let Some(bytes) = self.replies.pop_front() {
                room.send(Out::Line(bytes));
            }
        }
    }

    /// Every answer queued so far (ours and rmcp's) written, or the output failed.
    async fn replies_written(&mut self) {
        self.flush_replies().await;
        let (done, written) = oneshot::channel();
        if self.out.send(Out::Written(done)).await.is_ok() {
            let _ = written.await;
        }
    }

    /// Read up to the end of the next line. `Some(true)`: a line is in `self.line`;
    /// `Some(false)`: a line too long was passed over (and answered); `None`: the input ended.
    async fn next_line(&mut self) -> Option<bool> {
        loop {
            let (used, done) = {
                let chunk = match self.read.fill_buf().await {
                    Ok(chunk) => chunk,
                    Err(e) => {
                        tracing::warn!("reading the MCP client: {e}");
                        return None;
                    }
                };
                if chunk.is_empty() {
                    return None;
                }
                let end = chunk.iter().position(|b| *b == b'\n');
                let take = end.map_or(chunk.len(), |i| i + 1);
                let part = &chunk[..take];
                match &mut self.overlong {
                    Some((seen, scan)) => {
                        *seen = seen.saturating_add(take);
                        scan.feed(part);
                    }
                    None if self.line.len() + take > MAX_LINE => {
                        let mut scan = IdScan::default();
                        scan.feed(&self.line);
                        scan.feed(part);
                        self.overlong = Some((self.line.len() + take, scan));
                        self.line = Vec::new();
                    }
                    None => self.line.extend_from_slice(part),
                }
                (take, end.is_some())
            };
            self.read.consume(used);
            if done {
                return Some(match self.overlong.take() {
                    Some((seen, scan)) => {
                        self.reply(
                            scan.id(),
                            INVALID_REQUEST,
                            &format!(
                                "the message of {} bytes is longer than the {} bytes (1 MiB) a message to this server may be; nothing of it was read. Send shorter arguments (a query is at most 1000 bytes)",
                                seen.saturating_sub(1),
                                MAX_LINE
                            ),
                        );
                        false
                    }
                    None => true,
                });
            }
        }
    }

    /// The message on the line just read, or `None` when it was answered here (or dropped).
    fn take(&mut self, line: &[u8]) -> Option<RxJsonRpcMessage<RoleServer>> {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let value: Value = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(e) => {
                self.reply(
                    None,
                    PARSE_ERROR,
                    &format!(
                        "Parse error: the line is not JSON ({e}); send one JSON-RPC message a line"
                    ),
                );
                return None;
            }
        };
        let id = value
            .get("id")
            .filter(|id| id.is_string() || id.is_number())
            .cloned();
        let method = value
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned);
        // rmcp drops the answer to a request the client cancelled: its room is free now.
        if method.as_deref() == Some("notifications/cancelled")
            && let Some(Ok(cancelled)) = value
                .pointer("/params/requestId")
                .map(|id| serde_json::from_value::<RequestId>(id.clone()))
        {
            answered(&self.answering, &cancelled);
        }
        let mut opening = None;
        if !self.initialized
            && let Some(method) = &method
        {
            let inline = value
                .pointer("/params/_meta")
                .and_then(|m| m.get(INLINE_VERSION))
                .is_some();
            if method == "initialize" {
                opening = Some(Opening::Initialize);
            } else if inline {
                opening = Some(Opening::Inline);
            } else if !BEFORE_INITIALIZE.contains(&method.as_str()) {
                // A notification gets no answer (JSON-RPC); rmcp would end the session on one.
                if id.is_some() {
                    self.reply(
                        id,
                        NOT_INITIALIZED,
                        &format!(
                            "send `initialize` first: this server answers `{}` only after the MCP handshake (an `initialize` request, then the `notifications/initialized` notification)",
                            cairn_core::text::one_line(method, 80)
                        ),
                    );
                }
                return None;
            }
        }
        match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value) {
            Ok(message) => {
                if let (Some(opening), JsonRpcMessage::Request(request)) = (opening, &message) {
                    self.opening.insert(request.id.clone(), opening);
                }
                Some(message)
            }
            // A notification rmcp cannot read (one of another protocol's, say) is no concern of
            // the client's: rmcp skips those too.
            Err(_) if id.is_none() && method.is_some() => None,
            Err(e) => {
                let (code, what) = match &method {
                    Some(m) => (
                        INVALID_PARAMS,
                        format!(
                            "Invalid params for `{}`: {e}",
                            cairn_core::text::one_line(m, 80)
                        ),
                    ),
                    None => (
                        INVALID_REQUEST,
                        format!("Invalid request: not a JSON-RPC 2.0 message ({e})"),
                    ),
                };
                self.reply(id, code, &what);
                None
            }
        }
    }
}

/// The request `id` no longer waits for rmcp's answer: its room is free.
fn answered(answering: &Answering, id: &RequestId) {
    answering
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .remove(id);
}

/// The one writer of the output: each message whole, in the order queued. After a failed
/// write it stops, and sending fails from then on.
async fn write_out<W: AsyncWrite + Unpin>(mut write: W, mut queue: mpsc::Receiver<Out>) {
    while let Some(out) = queue.recv().await {
        match out {
            Out::Line(bytes) => {
                if let Err(e) = async {
                    write.write_all(&bytes).await?;
                    write.flush().await
                }
                .await
                {
                    tracing::debug!("writing to the MCP client: {e}");
                    return;
                }
            }
            Out::Written(done) => {
                let _ = done.send(());
            }
        }
    }
}

impl<R> rmcp::transport::Transport<RoleServer> for Framed<R>
where
    R: AsyncRead + Unpin + Send,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let id = match &item {
            JsonRpcMessage::Response(response) => Some(response.id.clone()),
            JsonRpcMessage::Error(error) => error.id.clone(),
            _ => None,
        };
        // The handshake is done when rmcp answers it with a result, not when it is asked:
        // after a failed `initialize` rmcp still waits for one (and would end the session on
        // a notification).
        if let Some(opening) = id.as_ref().and_then(|id| self.opening.remove(id)) {
            let opened = match &item {
                JsonRpcMessage::Response(response) => {
                    opening == Opening::Inline
                        || matches!(response.result, ServerResult::InitializeResult(_))
                }
                _ => false,
            };
            self.initialized |= opened;
        }
        let out = self.out.clone();
        let answering = self.answering.clone();
        async move {
            let mut bytes = serde_json::to_vec(&item)?;
            bytes.push(b'\n');
            drop(item);
            let queued = out.send(Out::Line(bytes)).await;
            // Its room is freed once the answer is queued, not when it was made: a client that
            // does not read keeps the answers, and so the requests, from piling up.
            if let Some(id) = &id {
                answered(&answering, id);
            }
            queued.map_err(|_| {
                std::io::Error::new(
                    std::io::ErrorKind::BrokenPipe,
                    "the MCP client's output is closed",
                )
            })
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            // Nothing is read while our answers wait for room, or while MAX_IN_FLIGHT requests
            // wait for theirs.
            self.flush_replies().await;
            if self.room.is_none() {
                self.room = self.in_flight.clone().acquire_owned().await.ok();
            }
            let Some(whole) = self.next_line().await else {
                self.replies_written().await;
                return None;
            };
            if !whole {
                continue;
            }
            let line = std::mem::take(&mut self.line);
            let message = self.take(&line);
            // The buffer's room is kept for the next line.
            self.line = line;
            self.line.clear();
            if let Some(message) = message {
                // No await from here on: a message taken is returned, whatever rmcp's
                // `select!` does next (our answers go out at the next call).
                if let JsonRpcMessage::Request(request) = &message
                    && let Some(room) = self.room.take()
                {
                    self.answering
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .insert(request.id.clone(), room);
                }
                return Some(message);
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.replies_written().await;
        Ok(())
    }
}

/// The top-level `"id"` of a JSON object read a piece at a time, without keeping the object:
/// how a line too long to read still gets its answer. Only a number or a plain string (no
/// escapes, at most 128 bytes) is taken; anything else reads as no id.
#[derive(Debug, Default)]
pub struct IdScan {
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// The string just closed at depth 1 (a key, if a `:` follows), while it is short.
    string: Vec<u8>,
    string_long: bool,
    state: Scan,
    id: Option<Value>,
}

#[derive(Debug, Default, PartialEq)]
enum Scan {
    /// Nothing of note.
    #[default]
    Idle,
    /// After a depth-1 string: is it a key named `id`?
    AfterString,
    /// After `"id":`, before its value.
    Value,
    /// In the id's value (a number, or a string when `.0`).
    InId(bool, Vec<u8>),
    /// The id was read (or could not be): nothing more to do.
    Done,
}

impl IdScan {
    pub fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.state == Scan::Done {
                return;
            }
            self.step(b);
        }
    }

    /// The id, as a JSON value, when one was read.
    pub fn id(&self) -> Option<Value> {
        self.id.clone()
    }

    fn step(&mut self, b: u8) {
        // The id's value itself.
        if let Scan::InId(quoted, text) = &mut self.state {
            let ends = if *quoted {
                b == b'"' || b == b'\\'
            } else {
                !(b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
            };
            if !ends && text.len() < 128 {
                text.push(b);
                return;
            }
            let (quoted, text) = (*quoted, std::mem::take(text));
            self.id = match (quoted, b) {
                (true, b'"') => String::from_utf8(text).ok().map(Value::String),
                (false, _) if !ends => None,
                (false, _) => serde_json::from_slice::<serde_json::Number>(&text)
                    .ok()
                    .map(Value::Number),
                _ => None,
            };
            self.state = Scan::Done;
            return;
        }
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                if self.depth == 1 {
                    self.state = Scan::AfterString;
                }
                return;
            }
            if self.depth == 1 {
                if self.string.len() < 8 {
                    self.string.push(b);
                } else {
                    self.string_long = true;
                }
            }
            return;
        }
        if b.is_ascii_whitespace() {
            return;
        }
        match (&self.state, b) {
            (Scan::AfterString, b':') => {
                let is_id = !self.string_long && self.string == b"id";
                self.state = if is_id { Scan::Value } else { Scan::Idle };
                return;
            }
            (Scan::Value, b'"') => {
                self.state = Scan::InId(true, Vec::new());
                return;
            }
            (Scan::Value, b'-' | b'0'..=b'9') => {
                self.state = Scan::InId(false, vec![b]);
                return;
            }
            (Scan::Value, _) => {
                // `null`, an object, an array: no id to answer to.
                self.state = Scan::Done;
                return;
            }
            _ => self.state = Scan::Idle,
        }
        match b {
            b'"' => {
                self.in_string = true;
                self.string.clear();
                self.string_long = false;
            }
            b'{' | b'[' => self.depth = self.depth.saturating_add(1),
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests;
