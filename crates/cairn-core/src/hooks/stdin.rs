//! Reading a hook's payload from stdin without keeping the agent waiting.
//!
//! An agent writes one JSON object to its hook's stdin, and most close the pipe after it; one
//! that keeps it open must not hold the hook (and so the agent's start, for the session-start
//! hook) until its own hook timeout. So reading stops as soon as a complete JSON value has
//! arrived, and gives up when none has after [`HOOK_INPUT_WAIT`] or within
//! [`MAX_HOOK_INPUT`] bytes. The pipe is read on a thread of its own, since a read from a pipe
//! cannot be given a deadline; the thread is left blocked when the hook is done, and ends with
//! the process.

use std::io::{self, Read};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// The most a hook reads from stdin. A payload is a few hundred bytes (Claude Code's largest,
/// with a prompt in it, some kilobytes); more is no agent's payload.
pub const MAX_HOOK_INPUT: usize = 1 << 20;

/// How long a hook waits for its payload to be complete. Agents write it as they start the
/// hook, so this is only ever reached by a writer that stalled mid-payload or wrote nothing
/// and kept the pipe open.
pub const HOOK_INPUT_WAIT: Duration = Duration::from_secs(5);

/// Bytes asked of the pipe at a time.
const CHUNK: usize = 64 * 1024;

/// What a hook read from stdin.
#[derive(Debug, PartialEq, Eq)]
pub enum HookStdin {
    /// One complete JSON value (what follows it is not waited for), or, when stdin ended first
    /// or does not hold JSON, everything read: the payload's parser says what is wrong with it.
    Read(String),
    /// More than the bound without a complete JSON value.
    TooLong { max: usize },
    /// The wait ran out with no complete JSON value and stdin still open.
    Stalled { waited: Duration },
}

impl HookStdin {
    /// Why nothing is done with the input, in words for the hook's stderr, when it was not
    /// read whole.
    pub fn why_not_read(&self) -> Option<String> {
        match self {
            HookStdin::Read(_) => None,
            HookStdin::TooLong { max } => Some(format!(
                "the hook input on stdin is over {} KB without ending its JSON, more than any agent's payload, so this hook does nothing and the agent goes on; `cairn doctor` checks the installed hooks",
                max / 1024
            )),
            HookStdin::Stalled { waited } => Some(format!(
                "no complete JSON payload arrived on stdin within {} s and stdin stayed open, so this hook does nothing and the agent goes on; `cairn doctor` checks the installed hooks",
                waited.as_secs()
            )),
        }
    }
}

/// Read a hook's payload from `reader` (stdin): up to the end of its first JSON value, the
/// end of input, `max` bytes or `wait`, whichever comes first (see [`HookStdin`]). An error only
/// when reading fails, or the bytes read are no UTF-8.
pub fn read_hook_input<R: Read + Send + 'static>(
    reader: R,
    max: usize,
    wait: Duration,
) -> io::Result<HookStdin> {
    let mut arriving = Arriving {
        chunks: spawn_reader(reader),
        chunk: Vec::new(),
        at: 0,
        got: Vec::new(),
        max,
        until: Instant::now() + wait,
        ended: false,
        stop: None,
    };
    let mut values =
        serde_json::Deserializer::from_reader(&mut arriving).into_iter::<serde::de::IgnoredAny>();
    let first = values.next();
    let end = values.byte_offset();
    drop(values);
    match (first, arriving.stop.take()) {
        (_, Some(Stop::TooLong)) => return Ok(HookStdin::TooLong { max }),
        (_, Some(Stop::Stalled)) => return Ok(HookStdin::Stalled { waited: wait }),
        (_, Some(Stop::Failed(e))) => return Err(e),
        // A whole value: what came after it in the same read is not the payload's.
        (Some(Ok(_)), None) => arriving.got.truncate(end),
        // Not JSON, cut short, or nothing: the payload's parser says which.
        _ => {}
    }
    String::from_utf8(arriving.got)
        .map(HookStdin::Read)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "stdin is not UTF-8"))
}

/// Why reading stopped before the input ended.
enum Stop {
    TooLong,
    Stalled,
    Failed(io::Error),
}

/// A thread reading `reader` to its end, each read sent as it arrives (an empty one at the
/// end). It stops at the end, at an error, or at its next read once nobody listens.
fn spawn_reader<R: Read + Send + 'static>(mut reader: R) -> Receiver<io::Result<Vec<u8>>> {
    let (tx, rx) = mpsc::sync_channel(4);
    std::thread::spawn(move || {
        let mut buf = vec![0u8; CHUNK];
        loop {
            let read = match reader.read(&mut buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => Err(e),
                Ok(n) => Ok(buf[..n].to_vec()),
            };
            let last = !matches!(&read, Ok(bytes) if !bytes.is_empty());
            if tx.send(read).is_err() || last {
                return;
            }
        }
    });
    rx
}

/// The bytes the reader thread sends, as a [`Read`] the JSON parser pulls from, each kept in
/// `got`; a read past the bound or the deadline ends the input, noting why in `stop`.
struct Arriving {
    chunks: Receiver<io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    at: usize,
    got: Vec<u8>,
    max: usize,
    until: Instant,
    ended: bool,
    stop: Option<Stop>,
}

impl Arriving {
    /// Stop reading for `why`: the parser sees an error and ends.
    fn stopped(&mut self, why: Stop) -> io::Error {
        self.stop = Some(why);
        self.ended = true;
        io::Error::other("the hook input was not read to its end")
    }
}

impl Read for Arriving {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at == self.chunk.len() {
            if self.ended {
                return Ok(0);
            }
            let left = self.until.saturating_duration_since(Instant::now());
            match self.chunks.recv_timeout(left) {
                Ok(Ok(bytes)) if bytes.is_empty() => self.ended = true,
                Ok(Ok(bytes)) => {
                    if self.got.len() + bytes.len() > self.max {
                        return Err(self.stopped(Stop::TooLong));
                    }
                    self.got.extend_from_slice(&bytes);
                    self.chunk = bytes;
                    self.at = 0;
                }
                Ok(Err(e)) => return Err(self.stopped(Stop::Failed(e))),
                Err(RecvTimeoutError::Timeout) => return Err(self.stopped(Stop::Stalled)),
                Err(RecvTimeoutError::Disconnected) => self.ended = true,
            }
        }
        let n = buf.len().min(self.chunk.len() - self.at);
        buf[..n].copy_from_slice(&self.chunk[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::{Receiver, Sender};

    /// A pipe as an agent holds it: `parts` arrive one read each, then reads block until the
    /// test drops its end (the agent closing stdin), which ends the input.
    struct HeldOpen {
        parts: std::collections::VecDeque<Vec<u8>>,
        closed: Receiver<()>,
    }

    impl Read for HeldOpen {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match self.parts.pop_front() {
                Some(part) => {
                    buf[..part.len()].copy_from_slice(&part);
                    Ok(part.len())
                }
                None => {
                    let _ = self.closed.recv();
                    Ok(0)
                }
            }
        }
    }

    fn held_open(parts: &[&[u8]]) -> (HeldOpen, Sender<()>) {
        let (close, closed) = mpsc::channel();
        let parts = parts.iter().map(|p| p.to_vec()).collect();
        (HeldOpen { parts, closed }, close)
    }

    const PAYLOAD: &str =
        r#"{"hook_event_name":"SessionStart","cwd":"/tmp/r","note":"caf\u00e9 ✓"}"#;

    /// A whole payload is read while the pipe stays open: the wait is an hour, and reading
    /// stopped well before, or the answer would be `Stalled`.
    #[test]
    fn a_complete_payload_is_read_while_stdin_stays_open() {
        let hour = Duration::from_secs(3600);
        let (pipe, close) = held_open(&[PAYLOAD.as_bytes(), b"\n"]);
        assert_eq!(
            read_hook_input(pipe, MAX_HOOK_INPUT, hour).unwrap(),
            HookStdin::Read(PAYLOAD.to_owned())
        );
        // Arriving a byte at a time, a multi-byte character split between reads.
        let bytes: Vec<&[u8]> = PAYLOAD.as_bytes().chunks(1).collect();
        let (pipe, close_too) = held_open(&bytes);
        assert_eq!(
            read_hook_input(pipe, MAX_HOOK_INPUT, hour).unwrap(),
            HookStdin::Read(PAYLOAD.to_owned())
        );
        drop((close, close_too));
    }

    /// Input that ends, whole or not, is read to its end, as before: the payload's parser
    /// says what is wrong with it.
    #[test]
    fn input_that_ends_is_read_to_its_end() {
        let hour = Duration::from_secs(3600);
        for text in [
            "",
            "  \n",
            r#"{"hook_event_name":"Sess"#,
            "not json",
            PAYLOAD,
        ] {
            let (pipe, close) = held_open(&[text.as_bytes()]);
            drop(close);
            assert_eq!(
                read_hook_input(pipe, MAX_HOOK_INPUT, hour).unwrap(),
                HookStdin::Read(text.to_owned()),
                "{text:?}"
            );
        }
    }

    /// A payload cut short on a pipe that stays open is given up on at the deadline, and a
    /// flood without an end at the bound; neither is waited out to the pipe's end.
    #[test]
    fn a_stalled_or_endless_input_is_given_up_on() {
        let (pipe, close) = held_open(&[br#"{"hook_event_name":"#]);
        let wait = Duration::from_millis(50);
        let got = read_hook_input(pipe, MAX_HOOK_INPUT, wait).unwrap();
        assert_eq!(got, HookStdin::Stalled { waited: wait });
        assert!(got.why_not_read().unwrap().contains("the agent goes on"));
        let (pipe, close_too) = held_open(&[br#"{"a":""#, &[b'x'; 600], &[b'x'; 600]]);
        let got = read_hook_input(pipe, 1000, Duration::from_secs(3600)).unwrap();
        assert_eq!(got, HookStdin::TooLong { max: 1000 });
        let why = HookStdin::TooLong {
            max: MAX_HOOK_INPUT,
        }
        .why_not_read()
        .unwrap();
        assert!(why.contains("over 1024 KB"), "{why}");
        drop((close, close_too));
    }
}
