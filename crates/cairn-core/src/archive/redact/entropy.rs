//! Layer 3, entropy: random-looking runs of token characters, base64 looked inside first, hex a
//! secret only at lengths no digest has; ids, hashes, paths and identifiers made of words pass.

use std::sync::OnceLock;

use super::{BLOB_KEYS_RAW, HIGH_ENTROPY, Hit, PRIVATE_KEY, RANK_ENTROPY, Redactor, resolve};
use crate::archive::encoded::{self, Content};
use crate::archive::secrets::{Confidence, escape_letter_before};

pub(super) const MIN_RUN: usize = 20;
pub(super) const MAX_RUN: usize = 200;
pub(super) const ENTROPY_THRESHOLD: f64 = 4.0;

/// `[A-Za-z0-9_\-+/=]`: the bytes of tokens, base64 and paths.
pub(super) static RUN_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+' | b'/' | b'=');
        c += 1;
    }
    t
};

/// Well-known provider id prefixes: random, but ids, not secrets.
pub(super) const ID_PREFIXES: &[&str] = &[
    "toolu_",
    "srvtoolu_",
    // Amazon Bedrock's tool-use ids (kiro-cli's `toolUseId`).
    "tooluse_",
    "msg_",
    "req_",
    "call_",
    "resp_",
    "rs_",
    "fc_",
    "ctc_",
    "chatcmpl-",
    "asst_",
    "thread_",
    "run_",
    "batch_",
    "file-",
    "file_",
    "ws_",
    "item_",
    "sha1-",
    "sha256-",
    "sha384-",
    "sha512-",
];

/// A provider id: a known prefix, possibly after lowercase words (`agent_msg_01…`).
pub(super) fn is_provider_id(text: &str) -> bool {
    let mut rest = text;
    loop {
        if ID_PREFIXES.iter().any(|pre| rest.starts_with(pre)) {
            return true;
        }
        let word = rest.bytes().take_while(u8::is_ascii_lowercase).count();
        match rest.as_bytes().get(word) {
            Some(b'_') if word > 0 => rest = &rest[word + 1..],
            _ => return false,
        }
    }
}

/// Labels after which a run is a digest or inline data, not a secret.
pub(super) const DIGEST_LABELS: &[&str] = &[
    "base64,", "h1:", "sha1:", "sha256:", "sha384:", "sha512:", "md5:",
];

impl Redactor {
    /// Layer 3. `taken` (sorted, disjoint) ranges, already found by the other layers, split runs
    /// the way their markers will on a second pass, so the rest of a run is judged on its own.
    /// `depth` counts the base64 layers already decoded around `s`.
    pub(super) fn entropy_hits(
        &self,
        s: &str,
        taken: &[(usize, usize)],
        hits: &mut Vec<Hit>,
        depth: u8,
    ) {
        self.entropy_runs(s, taken, hits, depth, None);
    }

    /// [`Redactor::entropy_hits`]; with `blobs` (the gate's pass), a whole run that is the raw
    /// JSON value of a blob-named key (`"signature":"…"`) is set aside there instead of being
    /// judged, and the pass stops at the first hit: the gate asks only whether there is one,
    /// and a line with one is scanned again in full by the structural path.
    pub(super) fn entropy_runs(
        &self,
        s: &str,
        taken: &[(usize, usize)],
        hits: &mut Vec<Hit>,
        depth: u8,
        mut blobs: Option<&mut Vec<(usize, usize)>>,
    ) {
        let b = s.as_bytes();
        let is_run = |i: usize| RUN_BYTE[usize::from(b[i])];
        // Skip ahead: a run of MIN_RUN bytes starting anywhere in [i, i + MIN_RUN) covers the
        // byte at i + MIN_RUN - 1, so when that byte is not a run byte the whole window is
        // skipped. Invariant: `i` is 0 or follows a byte that is not a run byte.
        let mut i = 0;
        while i + MIN_RUN <= b.len() {
            let probe = i + MIN_RUN - 1;
            if !is_run(probe) {
                i = probe + 1;
                continue;
            }
            let mut a = probe;
            while a > i && is_run(a - 1) {
                a -= 1;
            }
            let mut z = probe + 1;
            while z < b.len() && is_run(z) {
                z += 1;
            }
            // In raw JSON the `n` of `\n` is a newline, not part of the run.
            if escape_letter_before(b, a + 1) {
                a += 1;
            }
            if let Some(blobs) = blobs.as_deref_mut()
                && b.get(z) == Some(&b'"')
                && BLOB_KEYS_RAW.iter().any(|k| b[..a].ends_with(k))
            {
                blobs.push((a, z));
                i = z;
                continue;
            }
            let mut p = a;
            for &(da, dz) in taken.iter().filter(|&&(da, dz)| da < z && a < dz) {
                self.entropy_run(s, taken, p, da.max(p), hits, depth);
                p = p.max(dz);
            }
            self.entropy_run(s, taken, p, z, hits, depth);
            if blobs.is_some() && !hits.is_empty() {
                return;
            }
            i = z;
        }
    }

    /// Check one maximal run; `KEY=value` inside a run is judged part by part.
    pub(super) fn entropy_run(
        &self,
        s: &str,
        taken: &[(usize, usize)],
        a: usize,
        z: usize,
        hits: &mut Vec<Hit>,
        depth: u8,
    ) {
        if z < a + MIN_RUN {
            return;
        }
        let b = s.as_bytes();
        let mut p = a;
        for k in memchr::memchr_iter(b'=', &b[a..z]).map(|k| a + k) {
            if k + 1 < z && b[k + 1] != b'=' {
                self.entropy_part(s, taken, p, k, hits, depth);
                p = k + 1;
            }
        }
        self.entropy_part(s, taken, p, z, hits, depth);
    }

    /// Judge one part of a run. Context that excuses it (a `base64,` label before, a `.ext`
    /// after) only counts when it is not itself being redacted: on a second pass it would be a
    /// marker.
    ///
    /// A run of base64 longer than [`MAX_RUN`] is first looked inside ([`encoded::inspect`]):
    /// text is scanned again and holds a secret if something is found in it; a private key is
    /// one; a known file format (an image) is not a secret. Other runs, of any length, are
    /// random-looking tokens when they mix digits and both letter cases with enough entropy,
    /// and are not made of words. An all-hex run is a secret only when its length is no
    /// digest's (see [`hex_is_secret`]).
    pub(super) fn entropy_part(
        &self,
        s: &str,
        taken: &[(usize, usize)],
        p: usize,
        z: usize,
        hits: &mut Vec<Hit>,
        depth: u8,
    ) {
        let kept = |a: usize, z: usize| !taken.iter().any(|&(ta, tz)| ta < z && a < tz);
        let b = s.as_bytes();
        let mut q = z;
        while q > p && b[q - 1] == b'=' {
            q -= 1;
        }
        let part = &b[p..q];
        if part.len() < MIN_RUN
            || DIGEST_LABELS
                .iter()
                .any(|l| s[..p].ends_with(l) && kept(p - l.len(), p))
        {
            return;
        }
        let mut hit = |rule: &'static str, confidence: Confidence| {
            hits.push(Hit {
                start: p,
                end: z,
                rule,
                confidence,
                rank: RANK_ENTROPY,
            })
        };
        // A run up to MAX_RUN that is base64 of anything is random-looking and judged below;
        // longer ones are judged by what they hold.
        if part.len() > MAX_RUN {
            match encoded::inspect(&b[p..z]) {
                Some(Content::PrivateKey) => return hit(PRIVATE_KEY, Confidence::Definite),
                Some(Content::File) => return,
                Some(Content::Text(text)) => {
                    if let Some((rule, confidence)) = self.decoded_finding(&text, depth) {
                        return hit(rule, confidence);
                    }
                    return; // readable data, judged by what it says
                }
                Some(Content::Binary) | None => {}
            }
        }
        let text = &s[p..q];
        if is_provider_id(text) || followed_by_extension(b, z).is_some_and(|end| kept(z, end)) {
            return;
        }
        if part.iter().all(u8::is_ascii_hexdigit) {
            if hex_is_secret(part) {
                hit(HIGH_ENTROPY, Confidence::Candidate);
            }
            return;
        }
        let has = |f: fn(&u8) -> bool| part.iter().any(f);
        if !(has(u8::is_ascii_digit) && has(u8::is_ascii_lowercase) && has(u8::is_ascii_uppercase))
            || part.iter().all(|&c| c.is_ascii_hexdigit() || c == b'-')
            || (part.len() <= MAX_RUN && contains_uuid(part))
            || shannon(part) <= ENTROPY_THRESHOLD
            || word_like(part)
        {
            return;
        }
        hit(HIGH_ENTROPY, Confidence::Candidate);
    }

    /// What the redactor finds in text decoded from base64: the rule of the first definite
    /// finding (else of the first one) and its confidence. Only the rule table, key names and
    /// secrets in base64 inside (decoded again, up to [`MAX_DEPTH`] layers) count, not entropy
    /// alone: decoded certificates, source maps and data files are full of random-looking runs.
    pub(super) fn decoded_finding(
        &self,
        text: &str,
        depth: u8,
    ) -> Option<(&'static str, Confidence)> {
        if depth >= MAX_DEPTH {
            return None;
        }
        let mut found = resolve(text, self.rule_and_key_hits(text));
        if found.is_empty() {
            self.entropy_hits(text, &[], &mut found, depth + 1);
            found.retain(|h| h.rule != HIGH_ENTROPY);
        }
        found
            .iter()
            .find(|h| h.confidence == Confidence::Definite)
            .or(found.first())
            .map(|h| (h.rule, h.confidence))
    }
}

/// How many base64 layers are decoded (base64 of a JSON file holding a base64 key is two).
pub(super) const MAX_DEPTH: u8 = 2;

/// An all-hex run: a SHA or MD5 digest (32, 40, 56, 64, 96 or 128 digits) or shorter than 32
/// digits (short ids, object ids) is kept; other lengths of random-looking hex are keys. Hex
/// under a secret's name is found by its name (layer 2) whatever its length.
pub(super) fn hex_is_secret(part: &[u8]) -> bool {
    const DIGEST_LENGTHS: [usize; 6] = [32, 40, 56, 64, 96, 128];
    let n = part.len();
    n >= 32
        && !DIGEST_LENGTHS.contains(&n)
        && part.iter().any(u8::is_ascii_digit)
        && part.iter().any(u8::is_ascii_alphabetic)
        && shannon(part) > HEX_THRESHOLD
}

/// Random hex has close to 4 bits per digit; counters and padding (`000…001`) far less.
pub(super) const HEX_THRESHOLD: f64 = 3.0;

/// Shannon entropy in bits per byte: `log2 n - Σ c·log2 c / n` over the byte counts `c`.
pub(super) fn shannon(b: &[u8]) -> f64 {
    // `c·log2 c` for the counts of runs up to MAX_RUN, computed once.
    static C_LOG_C: OnceLock<[f64; MAX_RUN + 1]> = OnceLock::new();
    let table = C_LOG_C.get_or_init(|| {
        let mut t = [0.0; MAX_RUN + 1];
        for (c, v) in t.iter_mut().enumerate().skip(1) {
            let c = c as f64;
            *v = c * c.log2();
        }
        t
    });
    let mut counts = [0u32; 128];
    for &c in b {
        counts[usize::from(c & 0x7f)] += 1;
    }
    let n = b.len() as f64;
    let sum: f64 = counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| match table.get(c as usize) {
            Some(v) => *v,
            None => f64::from(c) * f64::from(c).log2(),
        })
        .sum();
    n.log2() - sum / n
}

/// Any 36-byte window shaped `8-4-4-4-12` hex.
pub(super) fn contains_uuid(b: &[u8]) -> bool {
    b.len() >= 36
        && b.windows(36).any(|w| {
            w.iter().enumerate().all(|(i, &c)| match i {
                8 | 13 | 18 | 23 => c == b'-',
                _ => c.is_ascii_hexdigit(),
            })
        })
}

/// The run is a file name: `.ext` follows (1–10 letters or digits, then not a token byte).
/// Returns the end of the extension.
pub(super) fn followed_by_extension(b: &[u8], z: usize) -> Option<usize> {
    if b.get(z) != Some(&b'.') {
        return None;
    }
    let ext = b[z + 1..]
        .iter()
        .take(11)
        .take_while(|c| c.is_ascii_alphanumeric())
        .count();
    let end = z + 1 + ext;
    ((1..=10).contains(&ext)
        && b.get(end)
            .is_none_or(|&c| !RUN_BYTE[usize::from(c)] && c != b'.'))
    .then_some(end)
}

/// Made of words: split on separators (`/`, `-`, `_`, …), camel humps and digit groups, the
/// letter humps are long enough and pronounceable. Paths, identifiers and slugs pass; random
/// base62/base64 has many one- and two-letter humps and fails.
pub(super) fn word_like(b: &[u8]) -> bool {
    let (mut alpha, mut letters, mut short, mut digits) = (0usize, 0usize, 0usize, 0usize);
    for piece in b.split(|c| matches!(c, b'-' | b'_' | b'+' | b'=' | b'/')) {
        if piece.len() >= 7 && piece.iter().all(u8::is_ascii_hexdigit) {
            continue; // a hash or id segment of a path
        }
        for hump in humps(piece) {
            if hump[0].is_ascii_digit() {
                digits += 1;
                continue;
            }
            alpha += 1;
            letters += hump.len();
            if hump.len() <= 2 {
                short += 1;
            }
            if hump.len() >= 5 && !hump.iter().any(|c| b"aeiouyAEIOUY".contains(c)) {
                return false;
            }
        }
    }
    alpha > 0 && 2 * letters >= 7 * alpha && 3 * short <= alpha && digits <= alpha.div_ceil(2)
}

/// Split an alphanumeric piece into camel humps and digit groups: `HTTPServer2Config` →
/// `HTTP`, `Server`, `2`, `Config`.
pub(super) fn humps(piece: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut start = 0;
    let mut i = 1;
    std::iter::from_fn(move || {
        if start >= piece.len() {
            return None;
        }
        while i < piece.len() {
            let (prev, cur) = (piece[i - 1], piece[i]);
            let next_lower = piece.get(i + 1).is_some_and(u8::is_ascii_lowercase);
            let split = prev.is_ascii_digit() != cur.is_ascii_digit()
                || (prev.is_ascii_lowercase() && cur.is_ascii_uppercase())
                || (prev.is_ascii_uppercase() && cur.is_ascii_uppercase() && next_lower);
            i += 1;
            if split {
                let hump = &piece[start..i - 1];
                start = i - 1;
                return Some(hump);
            }
        }
        let hump = &piece[start..];
        start = piece.len();
        Some(hump)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn humps_split_camel_acronyms_and_digits() {
        let h: Vec<&[u8]> = humps(b"HTTPServer2Config").collect();
        assert_eq!(h, [&b"HTTP"[..], b"Server", b"2", b"Config"]);
    }
}
