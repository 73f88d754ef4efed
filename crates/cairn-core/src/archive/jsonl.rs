//! Reading a JSONL transcript from a byte offset, one complete line at a time.
//!
//! Transcripts are appended to while we read them, so the reader distinguishes three kinds of
//! line: complete lines (ending in `\n`), a final line without `\n` that is nevertheless a whole
//! JSON value (consumed), and a truncated final line (left for the next read: the offset stops
//! before it). Lines longer than [`MAX_LINE_BYTES`] are skipped in bounded memory and reported.

use std::io::{BufRead, BufReader, Read};

/// Longest line we hold in memory. Claude Code writes multi-megabyte tool outputs and base64
/// images on one line; anything beyond this is skipped with a warning (the source file keeps it).
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// One line read from a transcript.
#[derive(Debug)]
pub enum Line<'a> {
    /// A complete line: its bytes without the trailing newline, and where it started.
    Complete { bytes: &'a [u8], start: u64 },
    /// A line longer than [`MAX_LINE_BYTES`], skipped; `len` is its length in bytes.
    Oversized { start: u64, len: u64 },
}

/// Streams the lines of a reader that starts at `offset` in the file.
pub struct LineReader<R> {
    inner: BufReader<R>,
    buf: Vec<u8>,
    /// Offset just after the last line handed out (the resume point).
    offset: u64,
    eof: bool,
    /// Whether a final fragment that parses as JSON is a whole line (not for Markdown, where
    /// `42` may be the start of `42 files changed`).
    json_tail: bool,
}

impl<R: Read> LineReader<R> {
    pub fn new(reader: R, offset: u64) -> Self {
        LineReader {
            inner: BufReader::with_capacity(256 * 1024, reader),
            buf: Vec::new(),
            offset,
            eof: false,
            json_tail: true,
        }
    }

    /// Only lines ending in `\n` are whole: for line files that are not JSON.
    pub fn whole_lines_only(mut self) -> Self {
        self.json_tail = false;
        self
    }

    /// Offset just after the last line returned: where the next read must start.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The next line, or `None` at the end. A final fragment without a newline is returned
    /// only if it parses as JSON (and the reader takes JSON tails); otherwise it is left
    /// unconsumed (a partial write).
    pub fn next_line(&mut self) -> std::io::Result<Option<Line<'_>>> {
        if self.eof {
            return Ok(None);
        }
        self.buf.clear();
        let start = self.offset;
        let mut oversized: u64 = 0;
        loop {
            let available = match self.inner.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                self.eof = true;
                break;
            }
            let (chunk, found_newline) = match memchr::memchr(b'\n', available) {
                Some(i) => (&available[..=i], true),
                None => (available, false),
            };
            let n = chunk.len();
            if oversized > 0 || self.buf.len() + n > MAX_LINE_BYTES {
                oversized += (self.buf.len() + n) as u64;
                self.buf.clear();
            } else {
                self.buf.extend_from_slice(chunk);
            }
            self.inner.consume(n);
            if found_newline {
                if oversized > 0 {
                    self.offset = start + oversized;
                    return Ok(Some(Line::Oversized {
                        start,
                        len: oversized,
                    }));
                }
                self.offset = start + self.buf.len() as u64;
                let bytes = trim_newline(&self.buf);
                return Ok(Some(Line::Complete { bytes, start }));
            }
        }
        // End of input without a newline.
        if oversized > 0 {
            // Cannot tell whether it is complete; leave it for a later read.
            return Ok(None);
        }
        if self.buf.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        let bytes = trim_newline(&self.buf);
        if self.json_tail && serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok() {
            self.offset = start + self.buf.len() as u64;
            Ok(Some(Line::Complete { bytes, start }))
        } else {
            Ok(None)
        }
    }
}

fn trim_newline(buf: &[u8]) -> &[u8] {
    let mut end = buf.len();
    while end > 0 && (buf[end - 1] == b'\n' || buf[end - 1] == b'\r') {
        end -= 1;
    }
    &buf[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(input: &[u8], offset: u64) -> (Vec<(String, u64)>, u64) {
        let mut reader = LineReader::new(input, offset);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().unwrap() {
            match line {
                Line::Complete { bytes, start } => {
                    out.push((String::from_utf8_lossy(bytes).into_owned(), start))
                }
                Line::Oversized { start, .. } => out.push(("<oversized>".into(), start)),
            }
        }
        (out, reader.offset())
    }

    #[test]
    fn complete_lines_and_offsets() {
        let (lines, end) = collect(b"{\"a\":1}\n{\"b\":2}\n", 0);
        assert_eq!(
            lines,
            vec![("{\"a\":1}".into(), 0), ("{\"b\":2}".into(), 8)]
        );
        assert_eq!(end, 16);
    }

    #[test]
    fn truncated_last_line_is_left_for_later() {
        let (lines, end) = collect(b"{\"a\":1}\n{\"b\":", 0);
        assert_eq!(lines.len(), 1);
        assert_eq!(end, 8);
    }

    #[test]
    fn complete_json_without_newline_is_consumed() {
        let (lines, end) = collect(b"{\"a\":1}\n{\"b\":2}", 0);
        assert_eq!(lines.len(), 2);
        assert_eq!(end, 15);
    }

    #[test]
    fn a_json_looking_fragment_is_partial_for_non_json_lines() {
        let mut r = LineReader::new(&b"#### hi\n42"[..], 0).whole_lines_only();
        assert!(matches!(
            r.next_line().unwrap(),
            Some(Line::Complete { .. })
        ));
        assert!(r.next_line().unwrap().is_none());
        assert_eq!(r.offset(), 8);
    }

    #[test]
    fn crlf_and_offset_base() {
        let (lines, end) = collect(b"{\"a\":1}\r\n", 100);
        assert_eq!(lines, vec![("{\"a\":1}".into(), 100)]);
        assert_eq!(end, 109);
    }
}
