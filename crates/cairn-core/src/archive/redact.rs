//! Redaction at ingest (and, for text leaving the machine, outbound).
//!
//! In: a raw transcript line ([`Redactor::redact_line`]), a parsed JSON value
//! ([`Redactor::redact_json`]) or a piece of text ([`Redactor::redact_text`]). Out: the same with
//! every secret value replaced by `[REDACTED:<rule>]` (key names, URL schemes and users stay), plus
//! [`Finding`]s that say which rule fired and where — never the secret itself.
//!
//! Three layers find secrets:
//! 1. **The rule table** ([`super::secrets`]): token formats that are definitely secrets (cloud,
//!    GitHub, Slack, OpenAI, Anthropic, DigitalOcean, Shopify, Mailgun keys, age and PEM/PGP
//!    private keys, passwords in URLs, `curl -u`, `mysql -p`, `sshpass -p`, `.netrc`, signed
//!    URLs' signatures…) and a few candidate shapes (JWTs).
//! 2. **Key names**: in JSON, a string under a key such as `password`, `api_key`, `*_token`,
//!    `DB_PASS`, `MYSQL_PWD`, `ENCRYPTION_KEY`, `SECRET_KEY_BASE`, `…_CREDENTIALS_BASE64`
//!    (`sensitive-key`); in text, assignments such as `DB_PASSWORD=…`, `"token": "…"`,
//!    `--password …`, `Authorization: …` (`named-secret`). Values that look like code
//!    (`password = getpass()`), types (`token: str`) or placeholders (`${TOKEN}`) are kept.
//! 3. **Entropy** (`high-entropy`): random-looking runs of 20 or more token characters with
//!    digits and both letter cases, however long. A run of base64 longer than 200 characters is
//!    looked inside first ([`super::encoded`]): decoded text is scanned again (layers 1 and 2,
//!    and base64 within) and a finding there redacts the whole run under its rule, text without
//!    one is kept; a DER private key is one; an image or other known file is not a secret.
//!    Hex is a secret only at lengths no digest has. UUIDs, provider ids (`toolu_…`, `msg_…`),
//!    SRI hashes, paths and identifiers made of words are not flagged.
//!
//! Providers' opaque blobs are skipped at their own JSON paths only (a thinking block's
//! `signature`, an inline image's `data`, Codex's `encrypted_content`); the same keys anywhere
//! else are scanned. Terminal control sequences hide nothing: text with colours or cursor moves
//! is scanned as a terminal shows it too (`ESC[1mghp_…`), and [`Redactor::outbound_text`]
//! removes every escape sequence before it looks for paths. Nor do JSON escapes left in text
//! quoted twice (`\u0026`, `\/`): such text is scanned with them decoded too.
//!
//! A candidate overlapping a definite finding is dropped, as is a finding inside a longer one.
//! Redacting is idempotent: markers are never flagged again.
//!
//! [`Redactor::redact_line`] is the hot path. A clean line costs one Aho-Corasick pass and one
//! byte loop over the raw text and is returned borrowed. A line with a hit is parsed and redacted
//! string by string, so JSON stays valid and findings carry the JSON pointer of their string.
//!
//! This file walks what is scanned (lines, JSON values, text) and resolves the hits; the layers
//! after the rule table are `names` and `entropy`, and `paths` finds the paths outbound text
//! shortens or hides.

mod entropy;
mod names;
mod paths;

use std::borrow::Cow;
use std::sync::OnceLock;

use memchr::memmem;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use super::secrets::Confidence;
use super::secrets::Matcher;
pub use names::is_sensitive_key;
use names::{NameKind, Sep, classify_name, credential_range, named_secret, plausible};
use paths::{absolute_paths, glued_paths, is_under};

/// One detected secret. Never holds the secret itself: only where it was and which rule saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub rule: &'static str,
    pub confidence: Confidence,
    /// JSON pointer of the string that held it (`""` for plain text lines). For an object key,
    /// the pointer of its object.
    pub field: String,
    /// Byte range of the secret within that string (before redaction).
    pub start: usize,
    pub end: usize,
}

/// Rule name of layer 2 for JSON string values under a sensitive key.
pub const SENSITIVE_KEY: &str = "sensitive-key";
/// Rule name of layer 2 for `name = value` assignments in text.
pub const NAMED_SECRET: &str = "named-secret";
/// Rule name of layer 3.
pub const HIGH_ENTROPY: &str = "high-entropy";
/// Rule name of absolute paths replaced by [`Redactor::outbound_text`].
pub const PATH: &str = "path";
/// Rule name of private keys, armored (the rule table) or base64 DER (layer 3).
const PRIVATE_KEY: &str = "private-key-block";

/// The marker that replaces a secret found by `rule`.
pub fn marker(rule: &str) -> String {
    format!("[REDACTED:{rule}]")
}

const MARKER_OPEN: &str = "[REDACTED:";

/// Key-name fragments that make the AC pass report a possible `name = value` (any case). The
/// whole name is read around a hit, so these are short pieces that cover many names at once
/// (`pass`: password, passwd, passphrase, DB_PASS; `_key`: api_key, access_key, ENCRYPTION_KEY).
/// The automaton keeps its SIMD prefilter (Teddy) only up to 64 patterns, rule anchors
/// included: a new name belongs under an existing piece where it can.
const KEY_ANCHORS: &[&str] = &[
    "pass",       // password, passwd, passphrase, DB_PASS, dbPass
    "secret",     // secret, client_secret, secret_key
    "token",      // token, access_token, GITHUB_TOKEN
    "apikey",     // apikey, x-apikey
    "sskey",      // accesskey
    "vatekey",    // privatekey
    "okie",       // cookie, set-cookie
    "edential",   // credential(s)
    "auth",       // auth, basic_auth, authorization
    "_pwd",       // MYSQL_PWD
    "_key",       // api_key, private_key, ENCRYPTION_KEY, SECRET_KEY_BASE
    "-key",       // x-api-key, client-key-data
    "masterkey",  // masterKey
    "ionkey",     // encryptionKey
    "accountkey", // AccountKey= (Azure)
];

/// Ranks order equal-range hits: table rows first (by index), then named secrets, then entropy.
const RANK_NAMED: u16 = 1000;
const RANK_ENTROPY: u16 = 1002;

/// The compiled redaction rules.
#[derive(Debug)]
pub struct Redactor {
    matcher: Matcher,
    unicode_escape: memmem::Finder<'static>,
    slash_escape: memmem::Finder<'static>,
}

impl Default for Redactor {
    fn default() -> Self {
        Redactor::new()
    }
}

/// Whether raw text (a JSON line as written, or plain text) holds something a reader is not
/// shown (see [`crate::text::unseen`]) that could split a secret for the rules while the
/// reader sees it whole: a C1 or bidi control, an invisible break (a zero-width space, a
/// word joiner, a byte-order mark) or a character of [`crate::text::is_ignorable`] (a joiner,
/// a soft hyphen, a variation selector, …) written raw, anywhere (rare in any text), or a
/// control character before a word, written raw or as a JSON one-letter escape (`\r`, `\b`,
/// `\f`): a reader is not shown it, so what stands before it joins the word (inside a word it
/// splits a secret; after `Authorization: ` it hides where the value starts from rules that
/// read the text as written). A `\r\n` is followed by no word, so CRLF text stays on the fast
/// path; ESC and `\u` escapes the gate finds itself.
fn hides_text(b: &[u8]) -> bool {
    let control = |c: u8| (c < 0x20 && c != b'\n' && c != b'\t') || c == 0x7f;
    let word = |c: Option<&u8>| c.is_some_and(|c| !c.is_ascii_whitespace());
    // Raw C0 and DEL are rare (JSON escapes C0): one pass that vectorises decides whether to
    // look for them.
    if b.iter().fold(false, |any, &c| any | control(c)) {
        let mut i = 0;
        while i < b.len() {
            if !control(b[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < b.len() && control(b[i]) {
                i += 1;
            }
            if start > 0 && word(b.get(i)) {
                return true;
            }
        }
    }
    let raw_hidden = memchr::memchr3_iter(0xc2, 0xe2, 0xef, b).any(|at| {
        matches!(
            (b[at], b.get(at + 1), b.get(at + 2)),
            (0xc2, Some(0x80..=0x9f), _)
                | (0xe2, Some(0x80), Some(0x8b | 0xaa..=0xae))
                | (0xe2, Some(0x81), Some(0xa0..=0xa4 | 0xa6..=0xa9))
                | (0xef, Some(0xbb), Some(0xbf))
        )
    });
    if raw_hidden || raw_ignorable(b) {
        return true;
    }
    [&b"\\r"[..], b"\\b", b"\\f"].iter().any(|escape| {
        memmem::find_iter(b, escape).any(|at| {
            let before = at.checked_sub(1).map(|k| b[k]);
            let after = b.get(at + 2);
            // After an escaped backslash, `r` is a letter, not a carriage return.
            before.is_some_and(|c| c != b'\\') && word(after) && after != Some(&b'\\')
        })
    })
}

/// Whether UTF-8 bytes hold a character of [`crate::text::is_ignorable`], found by its
/// encoding (ASCII text, most of it, is passed over in one vectorised check).
fn raw_ignorable(b: &[u8]) -> bool {
    if b.is_ascii() {
        return false;
    }
    b.iter().enumerate().any(|(at, &c)| {
        c >= 0xc2 && {
            let next = |k: usize| b.get(at + k).copied();
            matches!(
                (c, next(1), next(2), next(3)),
                (0xc2, Some(0xad), _, _) // U+00AD
                    | (0xcd, Some(0x8f), _, _) // U+034F
                    | (0xd8, Some(0x9c), _, _) // U+061C
                    | (0xe1, Some(0x85), Some(0x9f | 0xa0), _) // U+115F, U+1160
                    | (0xe1, Some(0x9e), Some(0xb4 | 0xb5), _) // U+17B4, U+17B5
                    | (0xe1, Some(0xa0), Some(0x8b..=0x8f), _) // U+180B–U+180F
                    | (0xe2, Some(0x80), Some(0x8c..=0x8f), _) // U+200C–U+200F
                    | (0xe3, Some(0x85), Some(0xa4), _) // U+3164
                    | (0xef, Some(0xb8), Some(0x80..=0x8f), _) // U+FE00–U+FE0F
                    | (0xef, Some(0xbe), Some(0xa0), _) // U+FFA0
                    | (0xf0, Some(0x9b), Some(0xb2), Some(0xa0..=0xa3)) // U+1BCA0–U+1BCA3
                    | (0xf3, Some(0xa0), _, _) // U+E0000–U+E0FFF
            )
        }
    })
}

/// How a blob key's value starts in compact raw JSON (see [`is_provider_blob`]).
const BLOB_KEYS_RAW: [&[u8]; 3] = [
    b"\"signature\":\"",
    b"\"data\":\"",
    b"\"encrypted_content\":\"",
];

/// What the raw-line gate saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gate {
    /// Nothing any layer could find.
    Clean,
    /// Only random runs that, if the line is JSON, are providers' blobs at their own paths.
    ProviderBlobsOnly,
    /// Something to look at structurally.
    Dirty,
}

fn is_json(raw: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(raw).is_ok()
}

/// One detection before overlaps are resolved.
#[derive(Debug, Clone, Copy)]
struct Hit {
    start: usize,
    end: usize,
    rule: &'static str,
    confidence: Confidence,
    rank: u16,
}

impl Hit {
    fn finding(&self, field: &str) -> Finding {
        Finding {
            rule: self.rule,
            confidence: self.confidence,
            field: field.to_owned(),
            start: self.start,
            end: self.end,
        }
    }
}

/// What the key above a JSON string says about it.
#[derive(Debug, Clone, Copy)]
enum Ctx<'k> {
    Plain,
    /// Opaque provider blobs (thinking signatures, encrypted reasoning, inline images).
    Skip,
    Sensitive(&'k str, NameKind),
}

impl Redactor {
    /// Compile the rules. Prefer [`Redactor::global`], which does this once per process.
    pub fn new() -> Redactor {
        Redactor {
            matcher: Matcher::new(KEY_ANCHORS),
            unicode_escape: memmem::Finder::new(b"\\u"),
            slash_escape: memmem::Finder::new(b"\\/"),
        }
    }

    /// The compiled rule set, built on first use.
    pub fn global() -> &'static Redactor {
        static R: OnceLock<Redactor> = OnceLock::new();
        R.get_or_init(Redactor::new)
    }

    /// Detection only: the findings in `s` (field `""`), overlaps resolved.
    pub fn scan_text(&self, s: &str) -> Vec<Finding> {
        self.resolved_hits(s)
            .iter()
            .map(|h| h.finding(""))
            .collect()
    }

    /// Redact the secrets in `s`, appending their findings (with `field`) to `out`. Borrowed
    /// when nothing was found.
    pub fn redact_text<'a>(&self, s: &'a str, field: &str, out: &mut Vec<Finding>) -> Cow<'a, str> {
        let hits = self.resolved_hits(s);
        if hits.is_empty() {
            return Cow::Borrowed(s);
        }
        out.extend(hits.iter().map(|h| h.finding(field)));
        Cow::Owned(apply(s, &hits))
    }

    /// Redact what the rules find definite in `s` (a secret's shape: a token's prefix, a key
    /// block, credentials in a URL), leaving what only reads as random: for the names of folders
    /// and files, which are full of ids, hashes and dates. Borrowed when nothing was found.
    pub fn redact_definite<'a>(&self, s: &'a str) -> Cow<'a, str> {
        let hits: Vec<Hit> = self
            .resolved_hits(s)
            .into_iter()
            .filter(|h| h.confidence == Confidence::Definite)
            .collect();
        if hits.is_empty() {
            return Cow::Borrowed(s);
        }
        Cow::Owned(apply(s, &hits))
    }

    /// `s` as a reader is shown it ([`crate::text::printable`]), its secrets redacted: read as
    /// written first, since a control character a reader is not shown can end a key that the
    /// cleaned text glues to the next word (`AKIA…\0abc` shows as `AKIA…abc`, which no rule
    /// reads as a key). Every text that is cleaned and redacted goes through here.
    pub fn redact_printable(&self, s: &str, field: &str, out: &mut Vec<Finding>) -> String {
        crate::text::printable(&self.redact_text(s, field, out))
    }

    /// Redact every string (and object key) in `v` in place. Findings carry the JSON pointer of
    /// their string. Returns whether anything changed.
    pub fn redact_json(&self, v: &mut Value, out: &mut Vec<Finding>) -> bool {
        let mut ptr = String::new();
        self.walk(v, &mut ptr, Ctx::Plain, out)
    }

    /// Redact one raw transcript line (without its newline). A clean line comes back borrowed,
    /// without allocating. A line with a hit that parses as JSON is redacted structurally and
    /// re-serialised on one line (key order kept); any other line is redacted as text.
    pub fn redact_line<'a>(&self, raw: &'a str, out: &mut Vec<Finding>) -> Cow<'a, str> {
        let gate = self.gate(raw);
        if matches!(gate, Gate::Clean) {
            return Cow::Borrowed(raw);
        }
        // JSON with a lone surrogate's escape (a JavaScript writer's cut string) or after a
        // byte-order mark is walked as the parsers read it, not handed to the text rules alone.
        let readable = super::json_text::readable_str(raw);
        // The structural walk would skip exactly those blobs: no need to build the value, only
        // to know the line is JSON (else it is redacted as text).
        if matches!(gate, Gate::ProviderBlobsOnly) && is_json(&readable) {
            return Cow::Borrowed(raw);
        }
        match serde_json::from_str::<Value>(&readable) {
            Ok(mut v) => {
                let mut found = Vec::new();
                if !self.redact_json(&mut v, &mut found) {
                    return Cow::Borrowed(raw);
                }
                match serde_json::to_string(&v) {
                    Ok(s) => {
                        out.append(&mut found);
                        Cow::Owned(s)
                    }
                    Err(_) => self.redact_text(raw, "", out),
                }
            }
            Err(_) => self.redact_text(raw, "", out),
        }
    }

    /// The cheap gate of [`Redactor::redact_line`], on raw bytes: false only when no layer can
    /// find anything in the line once decoded. `\u` and `\/` escapes could hide or split a
    /// secret in the raw form, so lines with them always go to the structural path; so do lines
    /// with a raw ESC or anything else a reader is not shown inside a word ([`hides_text`]:
    /// detection also runs on what a reader is shown).
    pub fn might_contain_secret(&self, raw: &str) -> bool {
        match self.gate(raw) {
            Gate::Clean => false,
            Gate::ProviderBlobsOnly => !is_json(raw),
            Gate::Dirty => true,
        }
    }

    fn gate(&self, raw: &str) -> Gate {
        let b = raw.as_bytes();
        if self.unicode_escape.find(b).is_some()
            || self.slash_escape.find(b).is_some()
            || memchr::memchr(0x1b, b).is_some()
            || hides_text(b)
            || !self.rule_and_key_hits(raw).is_empty()
        {
            return Gate::Dirty;
        }
        // Without layer 1–2 hits the structural path splits no runs either. A thinking
        // signature or encrypted reasoning is a long random run on nearly every line that has
        // one: judging it, then parsing the line only to skip it, would cost more than all the
        // rest. So runs that are a blob key's raw value are set aside, then checked to be at a
        // provider's own path.
        let mut hits = Vec::new();
        let mut set_aside = Vec::new();
        self.entropy_runs(raw, &[], &mut hits, 0, Some(&mut set_aside));
        if !hits.is_empty() {
            return Gate::Dirty;
        }
        if set_aside.is_empty() {
            return Gate::Clean;
        }
        let blobs = provider_blobs(b);
        if set_aside.iter().all(|&(a, z)| blobs.contains(&(a, z))) {
            Gate::ProviderBlobsOnly
        } else {
            Gate::Dirty
        }
    }

    /// Text about to leave the machine: terminal escape sequences and control characters
    /// removed ([`crate::text::printable`]: a model or a reader of an export gets what a
    /// terminal would show, and no sequence hides a path's start), secrets redacted as
    /// [`Redactor::redact_text`] does, absolute paths under `repo_root` made repo-relative, and
    /// every other absolute path (and anything under `home` or `~`) replaced by
    /// `[REDACTED:path]`. Findings' ranges refer to the cleaned text (those a marker brought
    /// to light, to the text with the first markers in).
    pub fn outbound_text(
        &self,
        s: &str,
        repo_root: Option<&str>,
        home: Option<&str>,
        out: &mut Vec<Finding>,
    ) -> String {
        self.outbound_text_within(s, repo_root.as_slice(), home, out)
    }

    /// [`Redactor::outbound_text`] with several roots a path may be inside (a repository's
    /// worktrees): a path under one is made relative to it.
    pub fn outbound_text_within(
        &self,
        s: &str,
        roots: &[&str],
        home: Option<&str>,
        out: &mut Vec<Finding>,
    ) -> String {
        let cleaned = self.redact_printable(s, "", out);
        let s = cleaned.as_str();
        let roots: Vec<&str> = roots
            .iter()
            .map(|r| r.trim_end_matches('/'))
            .filter(|r| !r.is_empty())
            .collect();
        // The deepest root a path is under (a worktree kept inside the repository's folder);
        // a path that climbs out again (`<root>/../x`) is under none.
        let root_of = |tok: &str| {
            roots
                .iter()
                .copied()
                .filter(|r| is_under(tok, r))
                .filter(|r| !tok[r.len()..].split(['/', '\\']).any(|part| part == ".."))
                .max_by_key(|r| r.len())
        };
        let home = home
            .map(|h| h.trim_end_matches('/'))
            .filter(|h| !h.is_empty());
        let mut edits: Vec<(usize, usize, Cow<'static, str>)> = Vec::new();
        for h in self.resolved_hits(s) {
            out.push(h.finding(""));
            edits.push((h.start, h.end, Cow::Owned(marker(h.rule))));
        }
        // A secret written for its reader to decode (every character URL-escaped, or in
        // fullwidth forms) leaves as one all the same: it is found with those decoded.
        let folded = View::folded(s);
        if let Some(view) = &folded {
            for h in view.map_hits(self.resolved_hits(&view.text)) {
                out.push(h.finding(""));
                edits.push((h.start, h.end, Cow::Owned(marker(h.rule))));
            }
        }
        // A path token `tok` at `a..z` of `s`; `at(k)` is where byte `k` of it starts in `s`
        // (`a + k`, unless the token was read with escapes decoded).
        let mut path_edit =
            |tok: &str, a: usize, z: usize, at: &dyn Fn(usize) -> usize, edits: &mut Vec<_>| {
                if let Some(root) = root_of(tok) {
                    let (cut, rest) = match root.len() + 1 {
                        k if k >= tok.len() => (z, "."),
                        k => (at(k), ""),
                    };
                    edits.push((a, cut, Cow::Borrowed(rest)));
                    return;
                }
                let personal = tok.starts_with('~') || home.is_some_and(|h| is_under(tok, h));
                // A separator ending the token makes it no deeper: where a marker took what
                // followed `/x\`, the `/x\` left must read as `/x` did (found by the outbound
                // property test: `\/\u0026…` came back as `\/\[REDACTED:…]`).
                let deep = tok
                    .get(1..)
                    .is_some_and(|t| t.trim_end_matches(['/', '\\']).contains(['/', '\\']));
                if personal || deep || tok.as_bytes().get(1) == Some(&b':') {
                    out.push(Finding {
                        rule: PATH,
                        confidence: Confidence::Candidate,
                        field: String::new(),
                        start: a,
                        end: z,
                    });
                    edits.push((a, z, Cow::Owned(marker(PATH))));
                }
            };
        // The home folder glued to what comes before it starts no path token
        // (`-I/home/ann/include`, `@/home/ann/body.json`, `file:///home/ann/x`), but names the
        // person all the same (found by the `redact` fuzz target).
        let found_paths = |t: &str| {
            let mut paths = absolute_paths(t);
            paths.extend(home.map(|h| glued_paths(t, h, &paths)).unwrap_or_default());
            paths
        };
        let paths = found_paths(s);
        for &(a, z) in &paths {
            path_edit(&s[a..z], a, z, &|k| a + k, &mut edits);
        }
        // Text quoted twice writes `/` as `\/` (`\/home\/ann\/x`), and a URL as `%2F`: their
        // paths are found with the escapes decoded, and replaced as written.
        let views = [
            s.contains("\\/").then(|| View::unescaped(s)).flatten(),
            folded,
        ];
        for view in views.iter().flatten() {
            for (a, z) in found_paths(&view.text) {
                let (oa, oz) = (view.start_of(a), view.end_of(z - 1));
                // Found as written already (a wider path found here wins, as below).
                if paths.iter().any(|&(x, y)| x <= oa && oz <= y) {
                    continue;
                }
                let at = |k: usize| view.start_of(a + k);
                path_edit(&view.text[a..z], oa, oz, &at, &mut edits);
            }
        }
        // A path edit may contain a secret edit: keep the wider one. One that starts inside
        // another and ends past it goes with it (a random run can swallow a path's start:
        // found by the outbound property test).
        edits.sort_by(|x, y| x.0.cmp(&y.0).then(y.1.cmp(&x.1)));
        let mut text = String::with_capacity(s.len());
        let mut pos = 0;
        for (a, z, rep) in edits {
            if a < pos {
                pos = pos.max(z);
                continue;
            }
            text.push_str(&s[pos..a]);
            text.push_str(&rep);
            pos = z;
        }
        text.push_str(&s[pos..]);
        // A path's marker can complete a secret's context that the path itself hid
        // (`machine C:\Users\host login x password y` is a netrc line once the path is a
        // marker), so the result is scanned once more; those findings refer to it.
        match self.redact_text(&text, "", out) {
            Cow::Owned(closed) => closed,
            Cow::Borrowed(_) => text,
        }
    }

    // ---- detection ------------------------------------------------------------------------

    /// Hits of layers 1 and 2 (the rule table and key names) in `s`, overlaps not resolved.
    fn rule_and_key_hits(&self, s: &str) -> Vec<Hit> {
        let mut hits = Vec::new();
        let mut rule_hits = Vec::new();
        let mut seen_to = 0;
        self.matcher.find(s, &mut rule_hits, &mut |_, start, end| {
            named_secret(s, start, end, &mut seen_to, |a, z| {
                hits.push(Hit {
                    start: a,
                    end: z,
                    rule: NAMED_SECRET,
                    confidence: Confidence::Candidate,
                    rank: RANK_NAMED,
                });
            });
        });
        hits.extend(rule_hits.iter().map(|h| Hit {
            start: h.start,
            end: h.end,
            rule: h.name,
            confidence: h.confidence,
            rank: u16::try_from(h.rule).unwrap_or(u16::MAX),
        }));
        hits
    }

    /// The final findings in `s`: sorted, disjoint, on char boundaries, and closed under
    /// redaction (see [`Redactor::close`]).
    fn resolved_hits(&self, s: &str) -> Vec<Hit> {
        let hits = self.one_pass(s);
        if hits.is_empty() {
            hits
        } else {
            self.close(s, hits)
        }
    }

    /// One detection pass over `s`, over what a terminal shows of it when it has control
    /// sequences, and over its JSON escapes decoded when it has `\u` or `\/` ones (see
    /// [`View::unescaped`]). Hits in a view map back to ranges of `s` that cover whole
    /// sequences and escapes.
    fn one_pass(&self, s: &str) -> Vec<Hit> {
        let hits = self.one_pass_shown(s);
        let b = s.as_bytes();
        if self.unicode_escape.find(b).is_none() && self.slash_escape.find(b).is_none() {
            return hits;
        }
        let Some(view) = View::unescaped(s) else {
            return hits;
        };
        let mut all = hits;
        all.extend(view.map_hits(self.one_pass_shown(&view.text)));
        resolve(s, all)
    }

    /// One detection pass over `s` and, when it has what a reader is never shown (escape
    /// sequences, other control characters, bidi controls: [`crate::text::hidden`]), over what
    /// they are shown of it too: `ESC[90m/home/…` hides a path's start, `ESC[1mghp_…` a token's
    /// edge, and a bidi override or a carriage return inside a key splits it for the rules
    /// while a reader sees it whole (what is hidden inside a hit is redacted with it). The pass
    /// over `s` itself still reads the text of a control string (a hyperlink's URL).
    fn one_pass_shown(&self, s: &str) -> Vec<Hit> {
        let hits = self.one_pass_plain(s);
        let seqs = crate::text::unseen(s);
        if seqs.is_empty() {
            return hits;
        }
        let shown = View::shown(s, &seqs);
        let mut all = hits;
        all.extend(shown.map_hits(self.one_pass_plain(&shown.text)));
        // A sequence between two letters or digits ends a word for its reader (`ESC[1mghp_…
        // ESC[0mxyz` shows a coloured token, then `xyz`) but joins the two in the shown text
        // and sits inside a word of its own in `s` (a CSI ends with a letter): read once more
        // with each such sequence as a space.
        if seqs.iter().any(|&(a, z)| between_words(s, a, z)) {
            let separated = View::separated(s, &seqs);
            all.extend(separated.map_hits(self.one_pass_plain(&separated.text)));
        }
        resolve(s, all)
    }

    /// One detection pass. Layers 1 and 2 are resolved first; their ranges then split entropy
    /// runs exactly as their markers will on a second pass.
    fn one_pass_plain(&self, s: &str) -> Vec<Hit> {
        let mut hits = resolve(s, self.rule_and_key_hits(s));
        let taken: Vec<(usize, usize)> = hits.iter().map(|h| (h.start, h.end)).collect();
        let before = hits.len();
        self.entropy_hits(s, &taken, &mut hits, 0);
        if hits.len() > before {
            hits.sort_by_key(|h| h.start);
        }
        hits
    }

    /// Make `hits` (sorted, disjoint) idempotent: apply them and scan the result again; hits
    /// found only then (a match an overlap rule had hidden, context a marker changed) never touch
    /// a marker, so they map back to ranges of `s` and join the set. Repeats until nothing new
    /// turns up; each round covers more of `s`, and a few rounds are enough in practice.
    fn close(&self, s: &str, mut hits: Vec<Hit>) -> Vec<Hit> {
        const MAX_ROUNDS: usize = 4;
        for _ in 0..MAX_ROUNDS {
            let redacted = apply(s, &hits);
            let more = self.one_pass(&redacted);
            if more.is_empty() {
                break;
            }
            let mapped = map_back(&hits, &more);
            if mapped.is_empty() {
                break;
            }
            hits.extend(mapped);
            hits.sort_by_key(|h| h.start);
        }
        hits
    }

    // ---- JSON -----------------------------------------------------------------------------

    fn walk(&self, v: &mut Value, ptr: &mut String, ctx: Ctx<'_>, out: &mut Vec<Finding>) -> bool {
        match v {
            Value::String(s) => match ctx {
                Ctx::Skip => false,
                Ctx::Plain => match self.redact_quoted_json(s, ptr, out) {
                    Some(changed) => changed,
                    None => self.redact_string(s, ptr, out),
                },
                Ctx::Sensitive(key, kind) => self.redact_sensitive(s, key, kind, ptr, out),
            },
            Value::Array(items) => {
                let len = ptr.len();
                let mut changed = false;
                for (i, item) in items.iter_mut().enumerate() {
                    ptr.push('/');
                    ptr.push_str(&i.to_string());
                    changed |= self.walk(item, ptr, ctx, out);
                    ptr.truncate(len);
                }
                changed
            }
            Value::Object(map) => self.walk_object(map, ptr, out),
            _ => false,
        }
    }

    fn walk_object(
        &self,
        map: &mut Map<String, Value>,
        ptr: &mut String,
        out: &mut Vec<Finding>,
    ) -> bool {
        let kind = map.get("type").and_then(Value::as_str);
        let blobs = ["signature", "data", "encrypted_content"].map(|k| is_provider_blob(kind, k));
        // Keys can hold secrets too (a map keyed by token); their findings point at the object.
        let mut renamed: Vec<(usize, String)> = Vec::new();
        for (i, k) in map.keys().enumerate() {
            if let Cow::Owned(new) = self.redact_text(k, ptr, out) {
                renamed.push((i, new));
            }
        }
        let len = ptr.len();
        let mut changed = !renamed.is_empty();
        let mut next_rename = renamed.iter().peekable();
        for (i, (k, v)) in map.iter_mut().enumerate() {
            // Child pointers use the redacted key, so a finding's field never holds a secret.
            let shown = match next_rename.next_if(|(j, _)| *j == i) {
                Some((_, new)) => new.as_str(),
                None => k.as_str(),
            };
            ptr.push('/');
            push_pointer_token(ptr, shown);
            let blob = match k.as_str() {
                "signature" => blobs[0],
                "data" => blobs[1],
                "encrypted_content" => blobs[2],
                _ => false,
            };
            let ctx = if blob && v.as_str().is_some_and(|t| blob_text(t.as_bytes())) {
                Ctx::Skip
            } else {
                // A marker before the name is not a key name (as in text).
                classify_name(k)
                    .filter(|_| !k.contains(MARKER_OPEN))
                    .map_or(Ctx::Plain, |kind| Ctx::Sensitive(k, kind))
            };
            changed |= self.walk(v, ptr, ctx, out);
            ptr.truncate(len);
        }
        if !renamed.is_empty() {
            rename_keys(map, renamed);
        }
        changed
    }

    /// A string that is a JSON object, array or string written with `\u` or `\/` escapes, as a Go
    /// agent quotes a tool's input (Crush writes `<`, `>` and `&` as `\u003c`, `\u003e`,
    /// `\u0026`): as written, an escape glues itself to a secret's edge (`\u003csk-ant-…` hides
    /// the token behind a `c`), yet the parser decodes it. So its text is scanned as serde_json
    /// writes the same document (those characters as themselves), which is how JSON quoted by
    /// any other agent is scanned, and the string becomes that redacted text only when something
    /// was found. `None` when the string is no such document (escaped text that does not parse,
    /// such as a cut-off tool output, is redacted where it stands; [`View::unescaped`]).
    fn redact_quoted_json(
        &self,
        s: &mut String,
        ptr: &str,
        out: &mut Vec<Finding>,
    ) -> Option<bool> {
        if !s.trim_start().starts_with(['{', '[', '"']) {
            return None;
        }
        let b = s.as_bytes();
        if self.unicode_escape.find(b).is_none() && self.slash_escape.find(b).is_none() {
            return None;
        }
        let plain = serde_json::from_str::<Value>(s).ok()?.to_string();
        match self.redact_text(&plain, ptr, out) {
            Cow::Owned(redacted) => {
                *s = redacted;
                Some(true)
            }
            Cow::Borrowed(_) => Some(false),
        }
    }

    fn redact_string(&self, s: &mut String, ptr: &str, out: &mut Vec<Finding>) -> bool {
        match self.redact_text(s, ptr, out) {
            Cow::Owned(new) => {
                *s = new;
                true
            }
            Cow::Borrowed(_) => false,
        }
    }

    /// A string under a sensitive key: the whole credential goes when it is plausible (named after
    /// a definite rule that recognises it, else `sensitive-key`), and the rest of the string is
    /// redacted as text; an implausible value is ordinary text.
    fn redact_sensitive(
        &self,
        s: &mut String,
        key: &str,
        kind: NameKind,
        ptr: &str,
        out: &mut Vec<Finding>,
    ) -> bool {
        let Some((mut a, mut z, _)) = credential_range(s, 0, s.len(), kind, false)
            .filter(|&(a, z, _)| plausible(&s[a..z], kind, true, Sep::Eq, false))
        else {
            return self.redact_string(s, ptr, out);
        };
        let text_hits = self.resolved_hits(s);
        let mut definite = text_hits
            .iter()
            .find(|h| h.confidence == Confidence::Definite && h.start < z && a < h.end)
            .map(|h| h.rule);
        if definite.is_none() {
            // Rules that need the key as context (`aws_secret_access_key`, `TWILIO_…`).
            let synth = format!("{key}={s}");
            let mut rule_hits = Vec::new();
            self.matcher.find(&synth, &mut rule_hits, &mut |_, _, _| {});
            definite = rule_hits
                .iter()
                .find(|h| h.confidence == Confidence::Definite && h.start > key.len())
                .map(|h| h.name);
        }
        let (rule, confidence) = match definite {
            Some(rule) => (rule, Confidence::Definite),
            None => (SENSITIVE_KEY, Confidence::Candidate),
        };
        // Text hits touching the credential merge into it; the others stay (sorted, disjoint).
        let mut hits: Vec<Hit> = Vec::with_capacity(text_hits.len() + 1);
        for h in text_hits {
            if h.start < z && a < h.end {
                a = a.min(h.start);
                z = z.max(h.end);
            } else {
                hits.push(h);
            }
        }
        hits.push(Hit {
            start: a,
            end: z,
            rule,
            confidence,
            rank: 0,
        });
        hits.sort_by_key(|h| h.start);
        let hits = self.close(s, hits);
        out.extend(hits.iter().map(|h| h.finding(ptr)));
        *s = apply(s, &hits);
        true
    }
}

/// Opaque blobs the providers write at their own paths, never scanned: Claude's thinking
/// signature and redacted thinking, inline base64 images and documents, Codex's encrypted
/// reasoning. `kind` is the `type` of the object holding `key`; the same key anywhere else (a
/// webhook's `signature` in a tool result, say) is scanned like any other value.
fn is_provider_blob(kind: Option<&str>, key: &str) -> bool {
    match key {
        "signature" => kind == Some("thinking"),
        "data" => matches!(kind, Some("base64" | "redacted_thinking")),
        "encrypted_content" => matches!(
            kind,
            Some("reasoning" | "compaction" | "encrypted_content" | "message")
        ),
        _ => false,
    }
}

/// Whether a provider's blob key holds what such blobs are: base64 (standard or URL-safe), `=`
/// only as the final padding. Anything else at that key (text with spaces, a `=` inside) is
/// scanned like any value: a blob key does not make arbitrary text opaque.
fn blob_text(b: &[u8]) -> bool {
    let body = b
        .strip_suffix(b"==")
        .or_else(|| b.strip_suffix(b"="))
        .unwrap_or(b);
    !body.is_empty()
        && body
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'-' | b'_'))
}

/// Another form of a text that detection also runs on, and where each piece of it came from.
struct View {
    text: String,
    pieces: Vec<Piece>,
}

/// Whether `s[a..z]` stands between two letters or digits.
fn between_words(s: &str, a: usize, z: usize) -> bool {
    s[..a]
        .chars()
        .next_back()
        .is_some_and(char::is_alphanumeric)
        && s[z..].chars().next().is_some_and(char::is_alphanumeric)
}

/// A piece of a [`View`]'s text: `orig..orig_end` of the original, copied as it is or replaced
/// by what it stands for (an escape by its character).
#[derive(Debug, Clone, Copy)]
struct Piece {
    /// Where the piece starts in the view's text.
    at: usize,
    orig: usize,
    orig_end: usize,
    copied: bool,
}

impl View {
    fn new(capacity: usize) -> View {
        View {
            text: String::with_capacity(capacity),
            pieces: Vec::new(),
        }
    }

    fn copy(&mut self, s: &str, a: usize, z: usize) {
        if a < z {
            self.pieces.push(Piece {
                at: self.text.len(),
                orig: a,
                orig_end: z,
                copied: true,
            });
            self.text.push_str(&s[a..z]);
        }
    }

    /// The view, with the rest of `s` from `copied_to` copied, when anything was `decoded`.
    fn finish(mut self, s: &str, copied_to: usize, decoded: bool) -> Option<View> {
        if !decoded {
            return None;
        }
        self.copy(s, copied_to, s.len());
        Some(self)
    }

    fn replace(&mut self, a: usize, z: usize, c: char) {
        self.pieces.push(Piece {
            at: self.text.len(),
            orig: a,
            orig_end: z,
            copied: false,
        });
        self.text.push(c);
    }

    /// `s` without the ranges at `seqs` (what a reader is shown, see [`crate::text::hidden`]).
    fn shown(s: &str, seqs: &[(usize, usize)]) -> View {
        View::standing_in(s, seqs, None)
    }

    /// `s` with each range at `seqs` read as one space: where the reader sees a word end.
    fn separated(s: &str, seqs: &[(usize, usize)]) -> View {
        View::standing_in(s, seqs, Some(' '))
    }

    /// `s` with each range at `seqs` left out, or replaced by `with`.
    fn standing_in(s: &str, seqs: &[(usize, usize)], with: Option<char>) -> View {
        let mut view = View::new(s.len());
        let mut at = 0;
        for &(a, z) in seqs {
            view.copy(s, at, a.max(at));
            if let Some(c) = with.filter(|_| z > at) {
                view.replace(a.max(at), z, c);
            }
            at = at.max(z);
        }
        view.copy(s, at, s.len());
        view
    }

    /// `s` as its reader decodes it, `None` when nothing in it is written another way: URL
    /// escapes of printable ASCII (`%2F`, `%67%68%70`, either case) and the fullwidth forms of
    /// ASCII (`ｇｈｐ＿`, U+FF01–U+FF5E) read as the characters they stand for. A path written
    /// into a URL (`?path=%2Fhome%2Fann%2Fx`) is a path, and a token spelled so a model or a
    /// browser restores it is a token.
    fn folded(s: &str) -> Option<View> {
        if !s.contains('%') && s.is_ascii() {
            return None;
        }
        let b = s.as_bytes();
        let hex = |c: u8| (c as char).to_digit(16);
        let mut view = View::new(s.len());
        let mut copied_to = 0;
        let mut decoded = false;
        for (at, c) in s.char_indices() {
            let (end, with) = match c {
                '%' => {
                    let byte = match (b.get(at + 1), b.get(at + 2)) {
                        (Some(&h), Some(&l)) => hex(h).zip(hex(l)).map(|(h, l)| h * 16 + l),
                        _ => None,
                    };
                    match byte.and_then(char::from_u32) {
                        Some(c @ '!'..='~') => (at + 3, c),
                        _ => continue,
                    }
                }
                '\u{ff01}'..='\u{ff5e}' => (
                    at + c.len_utf8(),
                    char::from_u32(c as u32 - 0xfee0).unwrap_or(c),
                ),
                _ => continue,
            };
            if at < copied_to {
                continue;
            }
            view.copy(s, copied_to, at);
            view.replace(at, end, with);
            copied_to = end;
            decoded = true;
        }
        view.finish(s, copied_to, decoded)
    }

    /// `s` with its JSON `\uXXXX` and `\/` escapes decoded, `None` when it has none. Text quoted
    /// twice keeps them after the parser decoded one level: a Go agent writes `<`, `>`, `&` as
    /// `\u003c`, `\u003e`, `\u0026` in a tool input it quotes, and as written such an escape
    /// glues itself to what follows (`\u0026\u0026mysql -pX` shows the password rule
    /// `0026mysql`). Text quoted once more doubles the backslash (`\\u0026`, `\\/`, then
    /// `\\\\u0026`), so a run of backslashes before such an escape is read as its level and
    /// decoded with it. Other escapes stay as written: the one-letter ones, which the rules
    /// already read as the whitespace or quote they are, `\\` before anything else, and a lone
    /// surrogate.
    fn unescaped(s: &str) -> Option<View> {
        let b = s.as_bytes();
        let mut view = View::new(s.len());
        let mut copied_to = 0;
        let mut i = 0;
        let mut decoded = false;
        while let Some(k) = memchr::memchr(b'\\', &b[i..]) {
            let a = i + k;
            // The escape's own backslash is the run's last.
            let last = a + b[a..].iter().take_while(|&&c| c == b'\\').count() - 1;
            let (end, c) = match b.get(last + 1) {
                Some(b'/') => (last + 2, Some('/')),
                Some(b'u') => match super::json_text::unicode_escape(b, last) {
                    Some((c, end)) => (end, Some(c)),
                    None => (last + 2, None),
                },
                Some(_) => (last + 2, None),
                None => (last + 1, None),
            };
            if let Some(c) = c {
                view.copy(s, copied_to, a);
                view.replace(a, end, c);
                copied_to = end;
                decoded = true;
            }
            i = end;
        }
        view.finish(s, copied_to, decoded)
    }

    /// Hits found in the view's text as ranges of the original: a hit that starts or ends in a
    /// replaced piece takes all of it.
    fn map_hits(&self, hits: Vec<Hit>) -> impl Iterator<Item = Hit> + '_ {
        hits.into_iter().filter(|h| h.start < h.end).map(|h| Hit {
            start: self.start_of(h.start),
            end: self.end_of(h.end - 1),
            ..h
        })
    }

    fn piece_of(&self, i: usize) -> Option<&Piece> {
        let k = self.pieces.partition_point(|p| p.at <= i);
        k.checked_sub(1).and_then(|k| self.pieces.get(k))
    }

    /// The original offset where byte `i` of the view's text starts.
    fn start_of(&self, i: usize) -> usize {
        match self.piece_of(i) {
            Some(p) if p.copied => p.orig + (i - p.at),
            Some(p) => p.orig,
            None => i,
        }
    }

    /// The original offset just past byte `i` of the view's text.
    fn end_of(&self, i: usize) -> usize {
        match self.piece_of(i) {
            Some(p) if p.copied => p.orig + (i - p.at) + 1,
            Some(p) => p.orig_end,
            None => i + 1,
        }
    }
}

/// The byte ranges (inside the quotes) of the string values of raw JSON text that the
/// structural walk skips as providers' blobs ([`is_provider_blob`]), found by one pass over the
/// bytes without building anything. Conservative: an object counts only with exactly one
/// `"type"` key, a string written without escapes, and the blob's key once; text that is not
/// balanced gives nothing. The caller still checks the text is JSON.
fn provider_blobs(b: &[u8]) -> Vec<(usize, usize)> {
    #[derive(Default)]
    struct Object {
        /// A key was read and its value not yet.
        key: Option<(usize, usize)>,
        types: u8,
        kind: Option<(usize, usize)>,
        /// (key, value) of string members named like a blob, and how often each name came.
        blobs: Vec<(usize, usize, usize, usize)>,
        seen: [u8; 3],
    }
    const BLOB_KEYS: [&[u8]; 3] = [b"signature", b"data", b"encrypted_content"];
    enum Frame {
        Object(Object),
        Array,
    }
    let mut stack: Vec<Frame> = Vec::new();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'"' => {
                let start = i + 1;
                let mut j = start;
                loop {
                    match memchr::memchr2(b'"', b'\\', b.get(j..).unwrap_or_default()) {
                        None => return Vec::new(),
                        Some(k) if b[j + k] == b'"' => {
                            j += k;
                            break;
                        }
                        Some(k) => j += k + 2,
                    }
                }
                if let Some(Frame::Object(o)) = stack.last_mut() {
                    match o.key.take() {
                        None => {
                            let name = &b[start..j];
                            if name == b"type" {
                                o.types = o.types.saturating_add(1);
                            }
                            if let Some(k) = BLOB_KEYS.iter().position(|k| *k == name) {
                                o.seen[k] = o.seen[k].saturating_add(1);
                            }
                            o.key = Some((start, j));
                        }
                        Some((ka, kz)) => {
                            let name = &b[ka..kz];
                            if name == b"type" {
                                o.kind = Some((start, j));
                            } else if BLOB_KEYS.contains(&name) {
                                o.blobs.push((ka, kz, start, j));
                            }
                        }
                    }
                }
                i = j + 1;
                continue;
            }
            b'{' | b'[' => {
                if let Some(Frame::Object(o)) = stack.last_mut() {
                    o.key = None;
                }
                stack.push(if c == b'{' {
                    Frame::Object(Object::default())
                } else {
                    Frame::Array
                });
            }
            b'}' => {
                let Some(Frame::Object(o)) = stack.pop() else {
                    return Vec::new();
                };
                let kind = o
                    .kind
                    .filter(|_| o.types == 1)
                    .and_then(|(a, z)| std::str::from_utf8(&b[a..z]).ok())
                    .filter(|k| !k.contains('\\'));
                for (ka, kz, a, z) in o.blobs {
                    let name = &b[ka..kz];
                    let once = BLOB_KEYS
                        .iter()
                        .position(|k| *k == name)
                        .is_some_and(|k| o.seen[k] == 1);
                    if once
                        && std::str::from_utf8(name).is_ok_and(|name| is_provider_blob(kind, name))
                        && blob_text(&b[a..z])
                    {
                        out.push((a, z));
                    }
                }
            }
            b']' => {
                if !matches!(stack.pop(), Some(Frame::Array)) {
                    return Vec::new();
                }
            }
            b',' | b':' => {}
            c if c.is_ascii_whitespace() => {}
            // A number, `true`, `false` or `null`: the pending key's value.
            _ => {
                if let Some(Frame::Object(o)) = stack.last_mut() {
                    o.key = None;
                }
            }
        }
        i += 1;
    }
    if stack.is_empty() { out } else { Vec::new() }
}

/// Map hits found in `apply(s, applied)` back to ranges of `s`. Hits that touch a marker (none
/// should) are dropped.
fn map_back(applied: &[Hit], found: &[Hit]) -> Vec<Hit> {
    // Each marker's range in the redacted text, and the offset (redacted minus original) of the
    // text after it.
    let mut markers = Vec::with_capacity(applied.len());
    let mut offset: isize = 0;
    for h in applied {
        let len = MARKER_OPEN.len() + h.rule.len() + 1;
        let start = h.start.saturating_add_signed(offset);
        offset += len as isize - (h.end - h.start) as isize;
        markers.push((start, start + len, offset));
    }
    found
        .iter()
        .filter(|f| !markers.iter().any(|&(a, z, _)| f.start < z && a < f.end))
        .filter_map(|f| {
            let offset = markers
                .iter()
                .rev()
                .find(|&&(_, z, _)| z <= f.start)
                .map_or(0, |m| m.2);
            let start = f.start.checked_add_signed(-offset)?;
            let end = f.end.checked_add_signed(-offset)?;
            Some(Hit { start, end, ..*f })
        })
        .collect()
}

/// Re-insert the members of `map` in order, with the redacted keys. Two keys that redact to the
/// same marker both survive (`#2` suffix), so no member is lost.
fn rename_keys(map: &mut Map<String, Value>, renamed: Vec<(usize, String)>) {
    let old = std::mem::take(map);
    let mut renames = renamed.into_iter().peekable();
    for (i, (k, v)) in old.into_iter().enumerate() {
        let mut key = match renames.next_if(|(j, _)| *j == i) {
            Some((_, new)) => new,
            None => k,
        };
        if map.contains_key(&key) {
            let base = key.clone();
            let mut n = 2;
            while map.contains_key(&key) {
                key = format!("{base}#{n}");
                n += 1;
            }
        }
        map.insert(key, v);
    }
}

/// Append `token` to a JSON pointer, escaped per RFC 6901.
fn push_pointer_token(ptr: &mut String, token: &str) {
    for c in token.chars() {
        match c {
            '~' => ptr.push_str("~0"),
            '/' => ptr.push_str("~1"),
            c => ptr.push(c),
        }
    }
}

/// Drop hits on existing markers, candidates overlapping a definite hit and hits inside longer
/// ones; merge partial overlaps. The result is sorted and disjoint, on char boundaries.
fn resolve(s: &str, mut hits: Vec<Hit>) -> Vec<Hit> {
    if hits.is_empty() {
        return hits;
    }
    for h in &mut hits {
        while h.start > 0 && !s.is_char_boundary(h.start) {
            h.start -= 1;
        }
        while h.end < s.len() && !s.is_char_boundary(h.end) {
            h.end += 1;
        }
    }
    let markers = marker_ranges(s);
    let overlaps = |h: &Hit, a: usize, z: usize| h.start < z && a < h.end;
    hits.retain(|h| h.start < h.end && !markers.iter().any(|&(a, z)| overlaps(h, a, z)));
    let definite: Vec<(usize, usize)> = hits
        .iter()
        .filter(|h| h.confidence == Confidence::Definite)
        .map(|h| (h.start, h.end))
        .collect();
    hits.retain(|h| {
        h.confidence == Confidence::Definite || !definite.iter().any(|&(a, z)| overlaps(h, a, z))
    });
    hits.sort_by(|x, y| {
        x.start
            .cmp(&y.start)
            .then(y.end.cmp(&x.end))
            .then(x.rank.cmp(&y.rank))
    });
    let mut kept: Vec<Hit> = Vec::with_capacity(hits.len());
    for h in hits {
        if let Some(last) = kept.last_mut()
            && h.start < last.end
        {
            last.end = last.end.max(h.end);
            continue;
        }
        kept.push(h);
    }
    kept
}

/// Whether `s` holds a `[REDACTED:<rule>]` marker.
pub(crate) fn has_marker(s: &str) -> bool {
    !marker_ranges(s).is_empty()
}

/// Byte ranges of `[REDACTED:…]` markers already in `s`.
fn marker_ranges(s: &str) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let b = s.as_bytes();
    for a in memmem::find_iter(b, MARKER_OPEN.as_bytes()) {
        // Only a real marker (a kebab-case rule name) counts, so `[REDACTED: <secret>]` in the
        // input cannot hide a secret.
        let name_start = a + MARKER_OPEN.len();
        let name_len = b[name_start..]
            .iter()
            .take_while(|&&c| c.is_ascii_lowercase() || c == b'-')
            .count();
        if name_len > 0 && b.get(name_start + name_len) == Some(&b']') {
            ranges.push((a, name_start + name_len + 1));
        }
    }
    ranges
}

fn apply(s: &str, hits: &[Hit]) -> String {
    let mut out = String::with_capacity(s.len() + 16 * hits.len());
    let mut pos = 0;
    for h in hits {
        out.push_str(&s[pos..h.start]);
        out.push_str(MARKER_OPEN);
        out.push_str(h.rule);
        out.push(']');
        pos = h.end;
    }
    out.push_str(&s[pos..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r() -> &'static Redactor {
        Redactor::global()
    }

    fn redact(s: &str) -> String {
        r().redact_text(s, "", &mut Vec::new()).into_owned()
    }

    fn rules_in(s: &str) -> Vec<&'static str> {
        r().scan_text(s).iter().map(|f| f.rule).collect()
    }

    /// A control character a reader is not shown ends a key where it stands; cleaned first, the
    /// key would run into the next word and no rule would read it.
    #[test]
    fn a_key_a_hidden_control_ends_is_redacted_before_the_text_is_cleaned() {
        for raw in [
            "trig AKIAIOSFODNN7EXAMPLE\u{0}nul",
            "trig AKIAIOSFODNN7EXAMPLE\u{7}nul",
            "trig AKIAIOSFODNN7EXAMPLE\u{1b}[0mnul",
            // IND: a C1 control cut with nothing in its place (NEL would be a space).
            "t ghp_0123456789abcdefghijklmnopqrstuvwxyz\u{84}xyz",
        ] {
            let shown = crate::text::printable(raw);
            let mut found = Vec::new();
            let out = r().redact_printable(raw, "f", &mut found);
            assert!(out.contains("[REDACTED:"), "{raw:?} -> {out:?}");
            assert!(!found.is_empty());
            assert!(!out.contains("AKIAIOSFODNN7EXAMPLE") && !out.contains("ghp_0123"));
            assert_eq!(out, crate::text::printable(&out), "cleaned");
            // Cleaned first, the rules miss it: the case this order is for.
            assert!(!redact(&shown).contains("[REDACTED:"), "{shown:?}");
            let mut found = Vec::new();
            let leaving = r().outbound_text(raw, None, None, &mut found);
            assert!(
                leaving.contains("[REDACTED:"),
                "outbound {raw:?} -> {leaving:?}"
            );
        }
    }

    /// A coloured key glued to the word after its colour ends: the reader sees the key end
    /// where the colour does, so it is redacted, and nothing of a sequence is left over.
    #[test]
    fn a_coloured_key_followed_by_a_word_is_redacted() {
        for raw in [
            "config:\u{1b}[01;31m\u{1b}[KAKIAIOSFODNN7EXAMPLE\u{1b}[m\u{1b}[Kabc",
            "token=\u{1b}[1mghp_0123456789abcdefghijklmnopqrstuvwxyz\u{1b}[0mxyz",
        ] {
            let out = r().redact_printable(raw, "", &mut Vec::new());
            assert!(out.contains("[REDACTED:"), "{raw:?} -> {out:?}");
            assert!(
                !out.contains("IOSFODNN7") && !out.contains("ghp_0123"),
                "{raw:?} -> {out:?}"
            );
            assert!(
                !out.contains("]]") && !out.contains('\u{1b}'),
                "{raw:?} -> {out:?}"
            );
        }
    }

    /// `outbound_text` for Ann (repo `/home/ann/repo`, home `/home/ann`), checked idempotent.
    fn outbound_as_ann(s: &str, found: &mut Vec<Finding>) -> String {
        let (repo, home) = (Some("/home/ann/repo"), Some("/home/ann"));
        let text = r().outbound_text(s, repo, home, found);
        let again = r().outbound_text(&text, repo, home, &mut Vec::new());
        assert_eq!(again, text, "not idempotent: {s}");
        text
    }

    #[test]
    fn entropy_worked_values() {
        assert_eq!(rules_in("Nf9K2pLm8QwEr7TyUi4OzXa3Bv6Cn0Md"), [HIGH_ENTROPY]);
        for clean in [
            "abcdefghijklmnopqrst",
            "function_call_output",
            "docs/quarterly-notes/agent-trail-review",
            "2026-05-07T09-30-00Z",
            "0123456789abcdef0123456789abcdef01234567",
            "019fc8be-3658-7ca3-9e29-000000000000",
            "src/archive/sources/claude.rs",
            "toolu_01ABCdefGHIjklMNOpqrST",
            "tooluse_lLf5zWFfiILD4WdhBzm6GE",
            "msg_01XFDUDYJgAACzvnptvVoYEL",
            "sha512-Kq5sNclPz7QV2+lfQIuDuRb6rmE0FoLd0rChUAhsmN5E6RMbYPcmCmOS91sYg7R7kbk3A1jBzrKjYqjdJcVyQ==",
            "MyComponent2Props",
            "convertUtf8ToUtf16StringFast",
            "test_sha256_hashing_Function",
        ] {
            assert!(rules_in(clean).is_empty(), "{clean}: {:?}", rules_in(clean));
        }
    }

    #[test]
    fn entropy_catches_random_base62() {
        // A small LCG: random 32-char base62 strings must nearly all be flagged.
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        let mut x: u64 = 0x2545F4914F6CDD1D;
        let mut flagged = 0;
        for _ in 0..2000 {
            let s: String = (0..32)
                .map(|_| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    alphabet[((x >> 33) % 62) as usize] as char
                })
                .collect();
            if !rules_in(&s).is_empty() {
                flagged += 1;
            }
        }
        assert!(flagged >= 1900, "only {flagged}/2000 flagged");
    }

    #[test]
    fn key_value_inside_one_run_redacts_only_the_value() {
        assert_eq!(
            redact("id=Nf9K2pLm8QwEr7TyUi4OzXa3Bv6Cn0Md"),
            "id=[REDACTED:high-entropy]"
        );
        assert_eq!(
            redact("tool_use_id=toolu_01ABCdefGHIjklMNOpqrST"),
            "tool_use_id=toolu_01ABCdefGHIjklMNOpqrST"
        );
    }

    #[test]
    fn sensitive_names() {
        for yes in [
            "password",
            "DB_PASSWORD",
            "passwd",
            "api_key",
            "apiKey",
            "X-Api-Key",
            "client_secret",
            "AWS_SECRET_ACCESS_KEY",
            "sessionToken",
            "GITHUB_TOKEN",
            "auth",
            "basic_auth",
            "private_key",
            "Authorization",
            "Set-Cookie",
            "credentials",
            "secret_key",
            "DB_PASS",
            "smtpPass",
            "MYSQL_PWD",
            "SECRET_KEY_BASE",
            "RAILS_MASTER_KEY",
            "ENCRYPTION_KEY",
            "encryptionKey",
            "signing-key",
            "STRIPE_KEY",
            "AccountKey",
            "client-key-data",
            "GOOGLE_CREDENTIALS_BASE64",
            "SERVICE_ACCOUNT_KEY_JSON",
        ] {
            assert!(is_sensitive_key(yes), "{yes}");
        }
        for no in [
            "path",
            "cwd",
            "id",
            "uuid",
            "branch",
            "worktree",
            "session_id",
            "tokens",
            "max_tokens",
            "input_tokens",
            "cache_creation_input_tokens",
            "max_token",
            "next_page_token",
            "author",
            "authority",
            "key",
            "session_key",
            "token_count",
            "password_hint",
            "PWD",
            "OLDPWD",
            "bypass",
            "compass",
            "renderPass",
            "cacheKey",
            "primary_key",
            "PUBLIC_KEY",
            "STRIPE_PUBLISHABLE_KEY",
            "KEY",
            "monkey",
            "base64",
        ] {
            assert!(!is_sensitive_key(no), "{no}");
        }
    }

    #[test]
    fn named_secret_forms() {
        for (input, want) in [
            (
                "export GITHUB_TOKEN=hunter2hunter2",
                "export GITHUB_TOKEN=[REDACTED:named-secret]",
            ),
            (
                "DB_PASSWORD=changeme",
                "DB_PASSWORD=[REDACTED:named-secret]",
            ),
            (
                "mysql --password s3cr3t-pw -h db",
                "mysql --password [REDACTED:named-secret] -h db",
            ),
            (
                "tool --token=abc123def456",
                "tool --token=[REDACTED:named-secret]",
            ),
            (
                r#"{"password": "correct horse"}"#,
                r#"{"password": "[REDACTED:named-secret]"}"#,
            ),
            ("password: hunter22", "password: [REDACTED:named-secret]"),
            (
                "Cookie: session=abc123; theme=dark",
                "Cookie: [REDACTED:named-secret]",
            ),
            (
                "Authorization: Basic dXNlcjpwYXNz",
                "Authorization: Basic [REDACTED:named-secret]",
            ),
            (
                r#"os.environ["API_KEY"] = "k-123456""#,
                r#"os.environ["API_KEY"] = "[REDACTED:named-secret]""#,
            ),
            (
                r#"cfg = {\"token\": \"abc\\\"defgh\"}"#,
                r#"cfg = {\"token\": \"[REDACTED:named-secret]\"}"#,
            ),
        ] {
            assert_eq!(redact(input), want, "{input}");
        }
    }

    #[test]
    fn named_secret_ignores_code_types_and_prose() {
        for clean in [
            "password = getpass()",
            "let token = tokens.next();",
            "password = request_password",
            "token: str",
            "def login(password: str, token: Optional[str] = None):",
            "api_key = os.environ.get('API_KEY')",
            "const token = await getToken();",
            "token: process.env.GITHUB_TOKEN",
            "password: String,",
            "if token == expected_token_value:",
            "PASSWORD=${DB_PASSWORD}",
            "TOKEN=$(cat ~/.token)",
            "Authorization: Bearer $TOKEN",
            "Token: the one you created earlier",
            "the password is required",
            "\"max_tokens\": 4096",
            "\"input_tokens\": 12, \"cache_creation_input_tokens\": 1234567",
            "password: <your password>",
            "const TOKEN_KEY = 'auth_token';",
            "export const STORAGE_KEY = \"app-settings\"",
            "SSH_KEY=~/.ssh/id_ed25519",
            "PRIMARY_KEY=user_id",
            "api_key: \"your-api-key\"",
            "password=[REDACTED:named-secret]",
            "Cookie: chocolate chip",
        ] {
            assert!(rules_in(clean).is_empty(), "{clean}: {:?}", rules_in(clean));
        }
    }

    #[test]
    fn overlaps_prefer_definite_then_longest() {
        let s = "GITHUB_TOKEN=ghp_EXAMPLE00000000000000000000000000000";
        let f = r().scan_text(s);
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].rule, f[0].confidence),
            ("github-pat", Confidence::Definite)
        );
        assert_eq!(redact(s), "GITHUB_TOKEN=[REDACTED:github-pat]");
    }

    #[test]
    fn json_structural_redaction() {
        let mut v: Value = serde_json::json!({
            "env": {"API_TOKEN": "abc123secret", "PATH": "/usr/bin", "max_tokens": 4096},
            "message": {"content": [{"type": "text", "text": "key AKIAIOSFODNN7EXAMPLE here"}]},
            "signature": "Nf9K2pLm8QwEr7TyUi4OzXa3Bv6Cn0Md",
            "thinking": {"type": "thinking", "thinking": "hm", "signature": "Nf9K2pLm8QwEr7TyUi4OzXa3Bv6Cn0Md"},
            "aws_secret_access_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "headers": {"Authorization": "Bearer abc.def-ghi_123"},
            "ghp_EXAMPLE00000000000000000000000000000": 1,
        });
        let mut out = Vec::new();
        assert!(r().redact_json(&mut v, &mut out));
        assert_eq!(v["env"]["API_TOKEN"], "[REDACTED:sensitive-key]");
        assert_eq!(v["env"]["PATH"], "/usr/bin");
        assert_eq!(
            v["message"]["content"][0]["text"],
            "key [REDACTED:aws-access-key] here"
        );
        // A provider's opaque blob is kept at its own path only.
        assert_eq!(v["signature"], "[REDACTED:high-entropy]");
        assert_eq!(
            v["thinking"]["signature"],
            "Nf9K2pLm8QwEr7TyUi4OzXa3Bv6Cn0Md"
        );
        assert_eq!(v["aws_secret_access_key"], "[REDACTED:aws-secret-key]");
        assert_eq!(
            v["headers"]["Authorization"],
            "Bearer [REDACTED:sensitive-key]"
        );
        assert_eq!(v["[REDACTED:github-pat]"], 1);
        let fields: Vec<&str> = out.iter().map(|f| f.field.as_str()).collect();
        assert!(fields.contains(&"/env/API_TOKEN"));
        assert!(fields.contains(&"/message/content/0/text"));
        assert!(
            fields.contains(&""),
            "the key finding points at the root object"
        );
    }

    #[test]
    fn redact_line_borrows_clean_lines_and_keeps_json_valid() {
        let clean = r#"{"type":"assistant","message":{"usage":{"input_tokens":12,"output_tokens":3}},"uuid":"019fc8be-3658-7ca3-9e29-000000000000"}"#;
        assert!(matches!(
            r().redact_line(clean, &mut Vec::new()),
            Cow::Borrowed(_)
        ));
        let dirty = r#"{"a":"token=ghp_EXAMPLE00000000000000000000000000000\nnext","b":1}"#;
        let mut out = Vec::new();
        let red = r().redact_line(dirty, &mut out);
        assert_eq!(red, r#"{"a":"token=[REDACTED:github-pat]\nnext","b":1}"#);
        assert_eq!(out[0].field, "/a");
        // \u escapes go straight to the structural path
        let escaped = r#"{"a":"\u0041KIAIOSFODNN7EXAMPLE"}"#;
        assert_eq!(
            r().redact_line(escaped, &mut Vec::new()),
            r#"{"a":"[REDACTED:aws-access-key]"}"#
        );
        // not JSON: redacted as text
        assert_eq!(
            r().redact_line("plain AKIAIOSFODNN7EXAMPLE", &mut Vec::new()),
            "plain [REDACTED:aws-access-key]"
        );
    }

    /// The first line of a file can carry a byte-order mark; the line is JSON to its readers, so
    /// it is walked (a secret-named key's value found as such), not read as text.
    #[test]
    fn redact_line_walks_json_after_a_byte_order_mark() {
        let line = r#"{"type":"user","env":{"DB_PASSWORD":"hunter2hunter2"}}"#;
        let mut plain = Vec::new();
        let want = r().redact_line(line, &mut plain).into_owned();
        let mut marked = Vec::new();
        let marked_line = format!("\u{feff}{line}");
        let got = r().redact_line(&marked_line, &mut marked);
        assert_eq!(got, want);
        assert_eq!(marked, plain);
        assert_eq!(plain[0].field, "/env/DB_PASSWORD");
    }

    #[test]
    fn redact_line_keeps_key_order() {
        // Needs serde_json's `preserve_order` feature (workspace Cargo.toml).
        let dirty = r#"{"b":1,"a":"AKIAIOSFODNN7EXAMPLE"}"#;
        assert_eq!(
            r().redact_line(dirty, &mut Vec::new()),
            r#"{"b":1,"a":"[REDACTED:aws-access-key]"}"#
        );
    }

    #[test]
    fn closing_finds_matches_an_overlap_hid() {
        // The JWT regex first matches inside the GitHub token (dropped: it overlaps a definite
        // hit), which hides the JWT that starts after it until the text is scanned again.
        let s = "ghp_eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJFWEFNUExFIn0.EXAMPLEsignature00.EXAMPLEthird000 x";
        let once = redact(s);
        assert_eq!(once, "[REDACTED:github-pat].[REDACTED:jwt] x");
        assert_eq!(redact(&once), once);
        let f = r().scan_text(s);
        assert_eq!(f.len(), 2);
        assert!(
            s[f[1].start..f[1].end].starts_with("eyJzdWIi"),
            "ranges point into the original"
        );
    }

    #[test]
    fn the_gate_finds_providers_blobs_as_the_walk_skips_them() {
        let blob = "EqoBCkYIBxgCKkCzZ0aQ9pX7mR2wT5vL8nK3jH6gF1dS4aP0oI9uY2tR5eW8qZ3xC6vB1nM4lK7jH0gF3dS6aP9o";
        let found = |line: String| -> Vec<&str> {
            provider_blobs(line.as_bytes())
                .into_iter()
                .map(|(a, z)| if &line[a..z] == blob { "blob" } else { "other" })
                .collect()
        };
        let exempt = [
            format!(
                r#"{{"type":"assistant","message":{{"content":[{{"type":"thinking","thinking":"a \"quoted\" {{x}}","signature":"{blob}"}}]}}}}"#
            ),
            format!(
                r#"{{"payload":{{"summary":[],"encrypted_content":"{blob}","type":"reasoning"}}}}"#
            ),
            format!(
                r#"{{"message":{{"content":[{{"type":"image","source":{{"type":"base64","media_type":"image/png","data":"{blob}"}}}}]}}}}"#
            ),
        ];
        for line in exempt {
            assert_eq!(found(line.clone()), ["blob"], "{line}");
        }
        let scanned = [
            // another path, a second `type`, a second blob key, an escaped type, not balanced
            format!(r#"{{"toolUseResult":{{"signature":"{blob}"}}}}"#),
            format!(r#"{{"type":"thinking","type":"text","signature":"{blob}"}}"#),
            format!(r#"{{"type":"thinking","signature":"{blob}","signature":"x"}}"#),
            format!(r#"{{"type":"thinkin\u0067","signature":"{blob}"}}"#),
            format!(r#"{{"type":"thinking","signature":"{blob}""#),
            format!(r#"{{"type":{{"a":"thinking"}},"signature":"{blob}"}}"#),
        ];
        for line in scanned {
            assert!(found(line.clone()).is_empty(), "{line}");
        }
        // The gate: a blob at its path costs no parse, anywhere else it is looked at.
        let at_path = format!(
            r#"{{"content":[{{"type":"thinking","thinking":"hm","signature":"{blob}"}}]}}"#
        );
        assert_eq!(r().gate(&at_path), Gate::ProviderBlobsOnly);
        assert!(!r().might_contain_secret(&at_path));
        let elsewhere = format!(r#"{{"content":[{{"type":"text","signature":"{blob}"}}]}}"#);
        assert_eq!(r().gate(&elsewhere), Gate::Dirty);
        // Not JSON after all: redacted as text.
        let broken =
            format!(r#"{{"content":[{{"type":"thinking","signature":"{blob}"}}]}} trailing"#);
        assert!(r().might_contain_secret(&broken));
        assert!(!r().redact_line(&broken, &mut Vec::new()).contains(blob));
    }

    #[test]
    fn the_automaton_keeps_its_simd_prefilter() {
        // aho-corasick drops Teddy above 64 patterns (`packed::teddy::builder`).
        let n = r().matcher.automaton_patterns();
        assert!(n <= 64, "{n} automaton patterns");
    }

    /// A repository's worktrees are inside it: a path under any of them reads relative to the
    /// deepest that holds it; one under none is still hidden.
    #[test]
    fn outbound_paths_within_worktrees() {
        let roots = [
            "/home/ann/repo",
            "/home/ann/repo-wt/fix",
            "/home/ann/repo/.wt/b",
        ];
        let text = r().outbound_text_within(
            "/home/ann/repo/a.rs /home/ann/repo-wt/fix/lib/b.ex /home/ann/repo/.wt/b/c.py /home/ann/repo-wt/other/d.rs",
            &roots,
            Some("/home/ann"),
            &mut Vec::new(),
        );
        assert_eq!(text, "a.rs lib/b.ex c.py [REDACTED:path]");
        // A path that climbs out of a root again is outside it.
        let text = r().outbound_text_within(
            "/home/ann/repo-wt/fix/../../private/key.pem /home/ann/repo/src/../a.rs",
            &roots,
            Some("/home/ann"),
            &mut Vec::new(),
        );
        assert_eq!(text, "[REDACTED:path] [REDACTED:path]");
        // One root: as outbound_text reads it.
        assert_eq!(
            r().outbound_text_within("/r/x.rs", &["/r"], None, &mut Vec::new()),
            r().outbound_text("/r/x.rs", Some("/r"), None, &mut Vec::new())
        );
    }

    #[test]
    fn outbound_paths() {
        let mut out = Vec::new();
        let s = "edit /home/ann/repo/src/main.rs and /home/ann/.ssh/config, /etc/hosts/x, /tmp, ~/notes.md, C:\\Users\\ann\\x.txt, https://example.com/a/b";
        let text = r().outbound_text(s, Some("/home/ann/repo/"), Some("/home/ann"), &mut out);
        assert_eq!(
            text,
            "edit src/main.rs and [REDACTED:path], [REDACTED:path], /tmp, [REDACTED:path], [REDACTED:path], https://example.com/a/b"
        );
        assert_eq!(out.iter().filter(|f| f.rule == PATH).count(), 4);
        let text = r().outbound_text(
            "cd /home/ann/repo && ghp_EXAMPLE00000000000000000000000000000",
            Some("/home/ann/repo"),
            None,
            &mut out,
        );
        assert_eq!(text, "cd . && [REDACTED:github-pat]");
    }

    /// A quoted path with a space in it goes whole: it left its tail (`Drive/clients/acme.md`)
    /// after the marker. A quote that only opens with a path keeps its words, and a quote
    /// escaped for JSON stays escaped.
    #[test]
    fn outbound_text_takes_a_quoted_path_with_spaces_whole() {
        let mut found = Vec::new();
        let s = "open \"/home/ann/My Drive/clients/acme plan.md\" and '/home/ann/Library/Application Support/x' \
                 then \"/usr/bin is where it lives\" and {\"cmd\": \"cat \\\"/home/ann/My Drive/a.md\\\"\"}";
        let text = outbound_as_ann(s, &mut found);
        assert_eq!(
            text,
            "open \"[REDACTED:path]\" and '[REDACTED:path]' \
                 then \"[REDACTED:path] is where it lives\" and {\"cmd\": \"cat \\\"[REDACTED:path]\\\"\"}"
        );
        // In a repository, a quoted path with a space becomes repo-relative whole.
        let text = r().outbound_text(
            "edit \"/home/ann/repo/docs/release notes/v2.md\"",
            Some("/home/ann/repo"),
            Some("/home/ann"),
            &mut Vec::new(),
        );
        assert_eq!(text, "edit \"docs/release notes/v2.md\"");
        // Unclosed on its line, or closed past a line break: the token ends at the space.
        let text = outbound_as_ann("\"/home/ann/My Drive/a\nb/c\"", &mut Vec::new());
        assert_eq!(text, "\"[REDACTED:path] Drive/a\nb/c\"");
    }

    /// A JSON line holding a lone surrogate's escape is redacted by the same structural walk as
    /// one without (it went to the text rules alone, which found less by key name).
    #[test]
    fn a_line_with_a_lone_surrogate_is_walked_as_json() {
        let line = |text: &str| {
            format!(
                r#"{{"type":"assistant","message":{{"content":[{{"type":"text","text":"{text}"}},{{"type":"tool_use","input":{{"db_password":"Tr0ub4dor&3xyzzy"}}}}]}}}}"#
            )
        };
        let rules = |text: &str| {
            let mut found = Vec::new();
            let out = r().redact_line(&line(text), &mut found).into_owned();
            assert!(!out.contains("Tr0ub4dor"), "{out}");
            found.iter().map(|f| f.rule).collect::<Vec<_>>()
        };
        assert_eq!(rules("cut \\ud83d here"), rules("cut here"));
    }

    /// A carriage return between a header's name and its value is not shown, so a reader sees
    /// `Authorization: <token>`; the gate read the escape where the value starts and cleared the
    /// line the walk redacts (found by `gate_never_misses_a_structural_finding`). CRLF text,
    /// whose `\r` no word follows, stays on the fast path.
    #[test]
    fn a_carriage_return_before_a_value_does_not_clear_the_line() {
        let line = r#"{"type":"tool_result","content":"Authorization: \rZx9_Qw3-Lp7+Rt5"}"#;
        assert!(r().might_contain_secret(line));
        let mut found = Vec::new();
        let out = r().redact_line(line, &mut found);
        assert!(!out.contains("Zx9_Qw3-Lp7+Rt5"), "{out}");
        assert!(found.iter().any(|f| f.rule == NAMED_SECRET), "{found:?}");
        let crlf = r#"{"type":"tool_result","content":"build ok\r\nall 12 tests passed\r\n"}"#;
        assert!(!r().might_contain_secret(crlf));
    }

    /// Every password of one command in one pass (found by the `redact` fuzz target): the rule's
    /// search resumed after its first match, so each later `-p` took a round of `close`, and the
    /// sixth of six stayed in the clear.
    #[test]
    fn every_password_of_one_command_is_redacted_at_once() {
        let pw = [
            "A1b2C3d4", "B2c3D4e5", "C3d4E5f6", "D4e5F6g7", "E5f6G7h8", "F6g7H8i9",
        ];
        let s = format!("mysql -u root -p{} -h db.example.com app", pw.join(" -p"));
        let mut found = Vec::new();
        let once = redact(&s);
        assert!(pw.iter().all(|p| !once.contains(p)), "{once}");
        r().redact_text(&s, "", &mut found);
        assert_eq!(found.len(), 6, "{found:?}");
        assert_eq!(redact(&once), once);
        let curl = "curl -u a:EXAMPLE-pw-1 -u b:EXAMPLE-pw-2 https://example.com";
        assert_eq!(
            redact(curl),
            "curl -u a:[REDACTED:cli-password] -u b:[REDACTED:cli-password] https://example.com"
        );
        // The command after sshpass's password is no second password.
        assert_eq!(
            redact("sshpass -p EXAMPLE-pass-0000 ssh deploy@example.com"),
            "sshpass -p [REDACTED:cli-password] ssh deploy@example.com"
        );
    }

    /// A home folder glued to a flag, a URL or a word starts no path token, yet names the person
    /// (found by the `redact` fuzz target: `"sandbox_pol/home/dev/e"` kept `/home/dev/`).
    #[test]
    fn outbound_text_removes_a_home_folder_glued_to_what_precedes_it() {
        let s = "cc -I/home/ann/include -L/home/ann/repo/lib curl -d @/home/ann/body.json \
                 open file:///home/ann/notes.md key_pol/home/ann/e /home/annex/x -I/home/ann";
        let mut found = Vec::new();
        let text = outbound_as_ann(s, &mut found);
        assert_eq!(
            text,
            "cc -I[REDACTED:path] -Llib curl -d @[REDACTED:path] \
                 open file://[REDACTED:path] key_pol[REDACTED:path] [REDACTED:path] -I[REDACTED:path]"
        );
        assert!(!text.contains("/home/ann"), "{text}");
        assert_eq!(found.iter().filter(|f| f.rule == PATH).count(), 6);
        // Not a home folder: `/home/annex` starts a token of its own (deep, so redacted as any
        // such path), and a folder whose name only begins with the home's is left alone.
        let text = r().outbound_text("x/home/annex", None, Some("/home/ann"), &mut Vec::new());
        assert_eq!(text, "x/home/annex");
    }

    /// Text quoted twice (JSON written with `\/`) hides no path: each is found with the escapes
    /// decoded and replaced where it is written; a repo path still becomes repo-relative.
    #[test]
    fn outbound_text_finds_paths_written_with_escaped_slashes() {
        let s = r#"{"cwd":"\/home\/ann\/repo\/src\/main.rs","log":"\/home\/ann\/notes.txt","cc":"-I\/home\/ann\/inc","tmp":"\/tmp","root":"\/home\/ann\/repo"}"#;
        let mut found = Vec::new();
        let text = outbound_as_ann(s, &mut found);
        assert_eq!(
            text,
            r#"{"cwd":"src\/main.rs","log":"[REDACTED:path]","cc":"-I[REDACTED:path]","tmp":"\/tmp","root":"."}"#
        );
        assert_eq!(found.iter().filter(|f| f.rule == PATH).count(), 2);
    }

    /// A text cut short before a path (a snippet, a preview) starts the path at its ellipsis.
    #[test]
    fn outbound_text_finds_a_path_right_after_an_ellipsis() {
        let text = outbound_as_ann(
            "…/srv/ledger/plan.md and …/home/ann/repo/src/a.rs",
            &mut Vec::new(),
        );
        assert_eq!(text, "…[REDACTED:path] and …src/a.rs");
    }

    /// A path written into a URL (`%2F` for `/`, either case) is a path too; other escapes
    /// and a lone `%` stay as written.
    #[test]
    fn outbound_text_finds_paths_written_in_a_url() {
        let s = "open http://x.invalid/?p=%2Fhome%2Fann%2Fnotes.txt then %2fhome%2fann%2frepo%2Fsrc%2Fa.rs q=a%20b 100% sure";
        let text = outbound_as_ann(s, &mut Vec::new());
        assert_eq!(
            text,
            "open http://x.invalid/?p=[REDACTED:path] then src%2Fa.rs q=a%20b 100% sure"
        );
    }

    /// A token spelled for its reader to decode, and another person's home, leave as nothing
    /// (found by a hostile run against a model endpoint: each reached the model whole).
    #[test]
    fn outbound_text_finds_secrets_written_encoded_and_other_homes() {
        let token = format!("ghp_{}", "R4nd0mT0k3nV4lu3F0rT3st1ngXyZ9Q8w7E6");
        let aws = format!("AKIA{}", "Q3EGRTJ5XW7PLM2N");
        let escaped = |t: &str| t.bytes().map(|c| format!("%{c:02X}")).collect::<String>();
        let fullwidth = |t: &str| {
            t.chars()
                .map(|c| char::from_u32(c as u32 + 0xfee0).unwrap())
                .collect::<String>()
        };
        for (written, key) in [
            (escaped(&token), &token),
            (escaped(&token).to_lowercase(), &token),
            (escaped(&aws), &aws),
            (fullwidth(&token), &token),
        ] {
            let s = format!("the token is {written} now");
            let text = outbound_as_ann(&s, &mut Vec::new());
            assert!(text.contains("[REDACTED:"), "{s} -> {text}");
            let decoded = View::folded(&text).map_or(text.clone(), |v| v.text);
            assert!(!decoded.contains(key.as_str()), "{s} -> {text}");
            assert!(
                text.starts_with("the token is ") && text.ends_with(" now"),
                "{text}"
            );
        }
        for s in [
            "see ~alice/notes/plan.md",
            "open file:///home/alice/projects/shop/a.rs",
        ] {
            let text = outbound_as_ann(s, &mut Vec::new());
            assert!(!text.contains("alice"), "{s} -> {text}");
        }
        // Escapes of nothing printable, and plain percentages, stay as written.
        let plain = "q=a%20b 100% sure %zz %";
        assert_eq!(outbound_as_ann(plain, &mut Vec::new()), plain);
    }

    /// A random run that swallows a path's start takes the rest of the path with it (found by
    /// the outbound property test): edits that overlap in part merge.
    #[test]
    fn outbound_edits_that_overlap_in_part_merge() {
        for s in [
            r"0a0aaaaaa00a0a00a011b102162214bc300b0facsk-EXAMPLE0000000000000T3BlbkFJEXAMPLE0000000000000\/home\/dev\/noteshttps://\/home\/dev\/notes",
            "0a0aaaaaa00a0a00a011b102162214bc300b0facsk-EXAMPLE0000000000000T3BlbkFJEXAMPLE0000000000000/home/dev/noteshttps:///home/dev/notes",
        ] {
            let text = r().outbound_text(s, None, Some("/home/dev"), &mut Vec::new());
            assert!(
                !text.replace(r"\/", "/").contains("/home/dev"),
                "{s} -> {text}"
            );
        }
    }

    /// What a marker leaves of a path is read as the path was: `\/\u0026<secret>` keeps its
    /// `\/\` (a root followed by an escape, no folder), and so does the second pass, which sees
    /// `\/\[REDACTED:…]` (found by the outbound property test on CI). A separator ending a token
    /// never makes it deep; one inside it still does.
    #[test]
    fn a_separator_left_before_a_marker_is_no_deeper_path() {
        let secret = "1a0aaaa0a8aa010cbbdf1fceb25e3ba44c70db30DISCORD_BOT_TOKEN=\
                      MTAwMDAwMDAwMDAwMDAwMDAw.EXAMPL.EXAMPLEEXAMPLEEXAMPLEEXAMPLE00";
        for (s, want) in [
            (
                format!(r"\/\u0026{secret}"),
                r"\/\[REDACTED:high-entropy][REDACTED:discord-token]".to_owned(),
            ),
            (
                format!(r"\/x\u0026{secret}"),
                r"\/x\[REDACTED:high-entropy][REDACTED:discord-token]".to_owned(),
            ),
            ("/tmp/ and /x\\".to_owned(), "/tmp/ and /x\\".to_owned()),
            (
                "/tmp/a/ and /x\\y".to_owned(),
                "[REDACTED:path] and [REDACTED:path]".to_owned(),
            ),
        ] {
            assert_eq!(outbound_as_ann(&s, &mut Vec::new()), want, "{s}");
        }
    }

    /// A secret whose context only a path's marker completes (found by the `redact` fuzz
    /// target): a Windows path where a netrc line names its machine.
    #[test]
    fn outbound_text_is_closed_over_its_path_markers() {
        let s = "machine C:\\Users\\api.example.com login deploy password EXAMPLE-pass-0000";
        let mut found = Vec::new();
        let text = r().outbound_text(s, None, None, &mut found);
        assert!(!text.contains("EXAMPLE-pass"), "{text}");
        assert!(r().scan_text(&text).iter().all(|f| f.rule == PATH));
        assert_eq!(r().outbound_text(&text, None, None, &mut Vec::new()), text);
    }

    /// Text still holding JSON escapes that is no whole JSON document (a cut-off tool input or
    /// output quoted twice): an escape glued to a secret's context hides nothing.
    #[test]
    fn json_escapes_left_in_text_hide_no_secret() {
        for (text, secret) in [
            (
                r"cd app\u0026\u0026mysql -u root -pHunter2Hunter2 \u0026\u0026 ls",
                "Hunter2Hunter2",
            ),
            (
                r#"{"command":"curl https:\/\/ann:Hunter2Hunter2@example.com\/v1"#,
                "Hunter2Hunter2",
            ),
            (
                r"out\u003e\u001b[1mghp_EXAMPLEexample0000EXAMPLEexample0000",
                "ghp_EXAMPLE",
            ),
        ] {
            let red = redact(text);
            assert!(!red.contains(secret), "{text} -> {red}");
            assert_eq!(redact(&red), red, "not idempotent: {red}");
        }
        // The escapes outside a finding are kept as they were written.
        let red = redact(r"cd app\u0026\u0026mysql -u root -pHunter2Hunter2");
        assert_eq!(
            red,
            r"cd app\u0026\u0026mysql -u root -p[REDACTED:cli-password]"
        );
    }

    /// Keys split by what a reader is never shown: a bidi override, a carriage return, a BEL,
    /// DEL, a C1 control, an escape sequence. Each line as an agent writes it (JSON, which
    /// writes C0 as escapes and the rest raw) and as plain text: once redacted, what the one
    /// cleaning function shows of it holds no key.
    fn split_keys() -> Vec<String> {
        vec![
            "AKIAIOSFODNN7EXAMPLE".to_owned(),
            format!("ghp_{}", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"),
            format!(
                "sk-ant-api03-{}",
                "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa-_ZyXwVuTs"
            ),
        ]
    }

    const SPLITTERS: [&str; 21] = [
        // Kept by the cleaning function, seen by no reader (found by a hostile run: each of
        // these inside an AWS key left it whole in the archive, exports and MCP answers).
        "\u{200c}",
        "\u{200d}",
        "\u{ad}",
        "\u{34f}",
        "\u{3164}",
        "\u{e0020}",
        "\u{180e}",
        "\u{200f}",
        "\u{fe0f}",
        "\u{200b}",
        "\u{2060}",
        "\u{feff}",
        "\u{202d}",
        "\u{202e}\u{202c}",
        "\u{2066}",
        "\r",
        "\u{7}",
        "\u{7f}",
        "\u{85}",
        "\u{1b}[0m",
        "\u{1b}]0;title\u{7}",
    ];

    /// What a reader sees of a redacted line (its `text` when it is JSON): without what
    /// [`crate::text::unseen`] finds.
    fn shown_of(line: &str) -> String {
        let text = match serde_json::from_str::<Value>(line) {
            Ok(v) => v["text"].as_str().unwrap_or_default().to_owned(),
            Err(_) => line.to_owned(),
        };
        let mut seen = String::new();
        let mut at = 0;
        for (a, z) in crate::text::unseen(&text) {
            seen.push_str(&text[at..a]);
            at = z;
        }
        seen + &text[at..]
    }

    #[test]
    fn a_key_split_by_what_a_reader_is_not_shown_is_redacted() {
        for key in split_keys() {
            for splitter in SPLITTERS {
                for at in [4, key.len() / 2, key.len() - 3] {
                    let split = format!("{}{splitter}{}", &key[..at], &key[at..]);
                    let text = format!("the release key {split} is set");
                    let json = serde_json::json!({"type": "user", "text": text}).to_string();
                    for line in [json.as_str(), text.as_str()] {
                        let out = r().redact_line(line, &mut Vec::new());
                        let shown = shown_of(&out);
                        assert!(!shown.contains(&key), "{line:?} -> {out:?} shows {shown:?}");
                        assert!(shown.contains("the release key"), "{shown:?}");
                        assert_eq!(
                            r().redact_line(&out, &mut Vec::new()),
                            out,
                            "not idempotent"
                        );
                    }
                }
            }
        }
    }

    proptest::proptest! {
        /// The same over any split, splitter and surrounding words.
        #[test]
        fn no_split_key_is_shown_whole(
            pick in 0usize..3,
            splitter in 0usize..SPLITTERS.len(),
            at in 1usize..20,
            before in "[a-z ]{0,12}",
            after in "[a-z ]{0,12}",
        ) {
            let key = &split_keys()[pick];
            let at = at.min(key.len() - 1);
            let text = format!("{before} {}{}{} {after}", &key[..at], SPLITTERS[splitter], &key[at..]);
            let json = serde_json::json!({"type": "user", "text": text}).to_string();
            for line in [json.as_str(), text.as_str()] {
                let out = r().redact_line(line, &mut Vec::new());
                proptest::prop_assert!(!shown_of(&out).contains(key.as_str()), "{:?} -> {:?}", line, out);
            }
        }
    }

    /// Pieces of the strings the gate's property is tried on: words, what escapes and hides
    /// (Go's HTML escapes, controls, a zero-width space, quotes, backslashes), secrets whole and
    /// in halves (an escape may fall between them), a blob at no provider's path.
    const GATE_PIECES: [&str; 24] = [
        "plain words ",
        " ",
        "a && b",
        "<file>",
        "->",
        "é",
        "\u{200b}",
        "\u{7}",
        "\u{1b}[0m",
        "\n",
        "\"",
        "\\",
        "/",
        "AKIAZ7QW3RT5YU8IOP2L",
        "AKIAZ7QW3",
        "RT5YU8IOP2L",
        "ghp_R7sT2vX9kL4mN8qP1wZ5yB3cD6fH0jK2aE4gQ",
        "ghp_R7sT2vX9kL4mN8q",
        "P1wZ5yB3cD6fH0jK2aE4gQ",
        "password=hunter2-but-longer",
        "mysql -pTr0ub4dor3xyzzy",
        "export DB_PASS=",
        "x9Qm2Lr7Tz4Kp8Wn3Vb6Yc1Hd5Jf0GsAq",
        "EqoBCkYIBxgCKkCzZ0aQ9pX7mR2wT5vL8nK3jH6gF1dS4aP0oI9uY2tR5eW8qZ3xC6",
    ];

    /// Keys of the property's objects: plain, secret-named, and named only once decoded.
    const GATE_KEYS: [&str; 5] = ["text", "input", "password", "api_key", "content"];

    /// `s` as a JSON string, written as the writers Cairn reads write it: each character
    /// `\uXXXX` where `escape` says so (a Go writer's `<>&`, a Python writer's non-ASCII, or a
    /// hostile one's anything), `/` as `\/` where `slash` does.
    fn json_string_escaped(s: &str, escape: &[bool], slash: bool) -> String {
        let mut out = String::from("\"");
        for (i, c) in s.chars().enumerate() {
            let mut units = [0u16; 2];
            if escape
                .get(i % escape.len().max(1))
                .copied()
                .unwrap_or(false)
                || matches!(c, '<' | '>' | '&')
            {
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
                continue;
            }
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '/' if slash => out.push_str("\\/"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    proptest::proptest! {
        /// The gate never clears a JSON line the structural walk would change, whatever its
        /// escapes: a secret behind `\u` escapes at any level of quoting (a tool input quoted
        /// as a string inside the row, as Crush writes it), split by an escape, or named by a
        /// key that is escaped.
        #[test]
        fn the_gate_clears_no_line_the_walk_changes(
            fields in proptest::collection::vec(
                (
                    0usize..GATE_KEYS.len(),
                    proptest::collection::vec(0usize..GATE_PIECES.len(), 0..6),
                    proptest::option::of(0usize..GATE_KEYS.len()),
                ),
                1..4,
            ),
            escape in proptest::collection::vec(proptest::bool::weighted(0.15), 1..9),
            slash in proptest::bool::ANY,
            key_escape in proptest::collection::vec(proptest::bool::weighted(0.2), 1..5),
        ) {
            let mut members = Vec::new();
            for (key, pieces, quoted) in &fields {
                let text: String = pieces.iter().map(|&p| GATE_PIECES[p]).collect();
                // A quoted document: the text under a key as a JSON document written by the
                // same writer, then quoted as a string (its escapes doubled).
                let value = match quoted {
                    Some(inner_key) => {
                        let inner = format!(
                            "{{{}:{}}}",
                            json_string_escaped(GATE_KEYS[*inner_key], &key_escape, false),
                            json_string_escaped(&text, &escape, slash)
                        );
                        json_string_escaped(&inner, &[false], slash)
                    }
                    None => json_string_escaped(&text, &escape, slash),
                };
                members.push(format!("{}:{value}", json_string_escaped(GATE_KEYS[*key], &key_escape, false)));
            }
            let line = format!("{{{}}}", members.join(","));
            let Ok(mut v) = serde_json::from_str::<Value>(&line) else {
                return Err(proptest::test_runner::TestCaseError::fail(format!("not JSON: {line}")));
            };
            let walked = r().redact_json(&mut v, &mut Vec::new());
            if walked {
                proptest::prop_assert_eq!(r().gate(&line), Gate::Dirty, "{} -> {}", line, v);
                proptest::prop_assert!(matches!(r().redact_line(&line, &mut Vec::new()), Cow::Owned(_)));
            }
        }
    }

    #[test]
    fn unescaped_views_map_back_to_whole_escapes() {
        let s = r"a\u0026b\/c\\u0026\n\ud83d\ude00\ud800x\u12\\\\/\\n";
        let view = View::unescaped(s).expect("has escapes");
        // `\\u0026` and `\\\\/` are the same escapes a level or two deeper; `\n`, a lone surrogate,
        // a cut-off escape and `\\n` stay as written.
        assert_eq!(view.text, "a&b/c&\\n\u{1f600}\\ud800x\\u12/\\\\n");
        let amp = view.text.find('&').unwrap();
        assert_eq!((view.start_of(amp), view.end_of(amp)), (1, 7));
        let b = view.text.find('b').unwrap();
        assert_eq!((view.start_of(b), view.end_of(b)), (7, 8));
        let deeper = view.text.rfind('&').unwrap();
        let written = s.find(r"\\u0026").unwrap();
        assert_eq!(
            (view.start_of(deeper), view.end_of(deeper)),
            (written, written + 7)
        );
        let slash = view.text.rfind('/').unwrap();
        let written = s.find(r"\\\\/").unwrap();
        assert_eq!(
            (view.start_of(slash), view.end_of(slash)),
            (written, written + 5)
        );
        let emoji = view.text.find('\u{1f600}').unwrap();
        let pair = s.find(r"\ud83d").unwrap();
        for i in emoji..emoji + 4 {
            assert_eq!((view.start_of(i), view.end_of(i)), (pair, pair + 12));
        }
        for plain in [
            "no escapes",
            r"only \n and \\ and \uZZZZ and \ud800",
            "trailing \\",
        ] {
            assert!(View::unescaped(plain).is_none(), "{plain}");
        }
    }
}
