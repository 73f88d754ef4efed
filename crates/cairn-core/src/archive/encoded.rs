//! Looking inside base64: what a long run of base64 holds, so the redactor can judge a blob by
//! its content rather than by its look.
//!
//! In: one run of base64 (standard or URL-safe alphabet, padded or not). Out: [`Content`]:
//! text (which the redactor scans again), a DER or OpenSSH private key, a known file format
//! (images, PDFs, archives: never secrets in themselves), or other binary data. Only the first
//! 16 characters are decoded unless they decode to text, so a megabyte image costs nothing.

/// At most this many characters of a run are decoded (about 768 KiB of text).
pub const MAX_DECODE: usize = 1 << 20;

/// What a base64 run decodes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// UTF-8 text (cut at [`MAX_DECODE`]).
    Text(String),
    /// A private key: PKCS#1, PKCS#8, SEC1, PKCS#12 or DSA in DER, or an OpenSSH key.
    PrivateKey,
    /// A file format that is not a secret by itself (PNG, JPEG, PDF, ZIP, …).
    File,
    /// Anything else.
    Binary,
}

/// What `run` holds, or `None` if it is not base64 (characters of both alphabets, or one outside
/// them, or `=` before the end, in the part decoded). Only a run whose first 12 bytes are text
/// is decoded further.
pub fn inspect(run: &[u8]) -> Option<Content> {
    let body = {
        let mut z = run.len();
        while z > 0 && run[z - 1] == b'=' {
            z -= 1;
        }
        &run[..z]
    };
    let url_safe = body.iter().any(|&c| c == b'-' || c == b'_');
    let standard = body.iter().any(|&c| c == b'+' || c == b'/');
    if (url_safe && standard) || body.len() < 2 {
        return None;
    }
    let head = decode(&body[..body.len().min(16)], url_safe)?;
    if is_private_key(&head) {
        return Some(Content::PrivateKey);
    }
    if is_known_file(&head) {
        return Some(Content::File);
    }
    if !is_text(&head, true) {
        return Some(Content::Binary);
    }
    let cut = body.len() > MAX_DECODE;
    let bytes = decode(&body[..body.len().min(MAX_DECODE)], url_safe)?;
    if !is_text(&bytes, cut) {
        return Some(Content::Binary);
    }
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        // cut inside a character at MAX_DECODE
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let mut b = e.into_bytes();
            b.truncate(valid);
            String::from_utf8(b).ok()?
        }
    };
    Some(Content::Text(text))
}

fn sextet(c: u8, url_safe: bool) -> Option<u32> {
    Some(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' if !url_safe => 62,
        b'/' if !url_safe => 63,
        b'-' if url_safe => 62,
        b'_' if url_safe => 63,
        _ => return None,
    } as u32)
}

/// Decode unpadded base64. A last group of one character (6 bits, no whole byte) is ignored.
fn decode(b: &[u8], url_safe: bool) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(b.len() / 4 * 3 + 2);
    for group in b.chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in group.iter().enumerate() {
            acc |= sextet(c, url_safe)? << (18 - 6 * i);
        }
        let bytes = acc.to_be_bytes();
        match group.len() {
            4 => out.extend_from_slice(&bytes[1..4]),
            3 => out.extend_from_slice(&bytes[1..3]),
            2 => out.push(bytes[1]),
            _ => {}
        }
    }
    Some(out)
}

/// The start of a DER private key: `SEQUENCE { INTEGER 0 | 1 | 3, … }` (a version number first;
/// certificates and public keys start with a nested SEQUENCE instead), or OpenSSH's key magic.
fn is_private_key(h: &[u8]) -> bool {
    // `openssh-key-v1\0`, of which the first 16 characters decode 12 bytes.
    if h.starts_with(b"openssh-key-") {
        return true;
    }
    if h.first() != Some(&0x30) {
        return false;
    }
    let at = match h.get(1) {
        Some(&l) if l < 0x80 => 2,
        Some(0x81) => 3,
        Some(0x82) => 4,
        Some(0x83) => 5,
        _ => return false,
    };
    matches!(h.get(at..at + 3), Some([0x02, 0x01, 0x00 | 0x01 | 0x03]))
}

fn is_known_file(h: &[u8]) -> bool {
    const MAGIC: &[&[u8]] = &[
        b"\x89PNG",
        b"\xff\xd8\xff",
        b"GIF87a",
        b"GIF89a",
        b"RIFF",
        b"%PDF",
        b"PK\x03\x04",
        b"\x1f\x8b",
        b"\x28\xb5\x2f\xfd",
        b"BZh",
        b"\0asm",
        b"\0\0\x01\0",
        b"II*\0",
        b"MM\0*",
        b"wOFF",
        b"wOF2",
        b"OTTO",
        b"\0\x01\0\0",
    ];
    MAGIC.iter().any(|m| h.starts_with(m)) || h.get(4..8) == Some(b"ftyp")
}

/// UTF-8 without control characters other than tab, newline and carriage return. `cut`: the
/// bytes may end inside a character.
fn is_text(b: &[u8], cut: bool) -> bool {
    let valid = match std::str::from_utf8(b) {
        Ok(s) => s,
        Err(e) if cut && e.error_len().is_none() => {
            match std::str::from_utf8(&b[..e.valid_up_to()]) {
                Ok(s) => s,
                Err(_) => return false,
            }
        }
        Err(_) => return false,
    };
    !valid.is_empty()
        && valid
            .chars()
            .all(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(bytes: &[u8]) -> String {
        const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n = chunk.len();
            let mut acc = 0u32;
            for (i, &c) in chunk.iter().enumerate() {
                acc |= u32::from(c) << (16 - 8 * i);
            }
            for i in 0..4 {
                if i <= n {
                    out.push(A[((acc >> (18 - 6 * i)) & 63) as usize] as char);
                } else {
                    out.push('=');
                }
            }
        }
        out
    }

    #[test]
    fn text_round_trips_padded_or_not_in_both_alphabets() {
        for text in [
            "a",
            "ab",
            "abc",
            "abcd",
            "{\"type\": \"service_account\"}\n",
            "héllo ✓ wörld",
        ] {
            let enc = b64(text.as_bytes());
            assert_eq!(
                inspect(enc.as_bytes()),
                Some(Content::Text(text.into())),
                "{enc}"
            );
            let bare = enc.trim_end_matches('=');
            assert_eq!(inspect(bare.as_bytes()), Some(Content::Text(text.into())));
            let url = bare.replace('+', "-").replace('/', "_");
            assert_eq!(inspect(url.as_bytes()), Some(Content::Text(text.into())));
        }
    }

    #[test]
    fn keys_files_and_binary_are_told_apart() {
        let pkcs8 = [
            0x30, 0x82, 0x04, 0xbd, 0x02, 0x01, 0x00, 0x30, 0x0d, 0x06, 0x09, 0x2a,
        ];
        assert_eq!(inspect(b64(&pkcs8).as_bytes()), Some(Content::PrivateKey));
        let ec = [0x30, 0x77, 0x02, 0x01, 0x01, 0x04, 0x20, 0, 0, 0, 0, 0];
        assert_eq!(inspect(b64(&ec).as_bytes()), Some(Content::PrivateKey));
        assert_eq!(
            inspect(b64(b"openssh-key-v1\0\0\0\0\nnone").as_bytes()),
            Some(Content::PrivateKey)
        );
        // a certificate starts with a nested SEQUENCE
        let cert = [
            0x30, 0x82, 0x03, 0x00, 0x30, 0x82, 0x02, 0x00, 0xa0, 0x03, 0x02, 0x01,
        ];
        assert_eq!(inspect(b64(&cert).as_bytes()), Some(Content::Binary));
        assert_eq!(
            inspect(b"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"),
            Some(Content::File)
        );
        assert_eq!(
            inspect(b"JVBERi0xLjQKJcfsj6IKNSAwIG9iago8PC9MZW5ndGggNiAwIFI"),
            Some(Content::File)
        );
        assert_eq!(
            inspect(b"gAAAAABo0a1bcdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefABCDEF"),
            Some(Content::Binary)
        );
    }

    #[test]
    fn not_base64() {
        assert_eq!(inspect(b"src/archive/sources_claude"), None);
        assert_eq!(inspect(b"abc=def"), None);
        assert_eq!(inspect(b"a"), None);
        assert_eq!(inspect(b"abcd$efg"), None);
    }
}
