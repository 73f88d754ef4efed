//! Layer 2, key names: a value under a name that says it is secret (`password`, `api_key`,
//! `*_token`, `DB_PASS`, `Authorization`), in JSON keys and in text assignments, flags, headers
//! and quoted pairs; values that read as code, types or placeholders are kept.

use super::MARKER_OPEN;
use super::entropy::word_like;
use crate::archive::secrets::{escape_letter_before, is_template_placeholder};

/// How a sensitive name's value is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NameKind {
    Plain,
    /// `Authorization`: the credential follows an optional scheme word.
    Authorization,
    /// `Cookie` / `Set-Cookie`: a header value of `name=value` pairs.
    Cookie,
    /// A key of a secret kind (`ENCRYPTION_KEY`): read as `Plain`, but a path names where the
    /// key is kept (`SSH_KEY=~/.ssh/id_ed25519`), not the key.
    Key,
    /// A `*_KEY` variable of no known kind (`STRIPE_KEY`): as `Key`, and since code names its
    /// storage and cache keys the same way (`TOKEN_KEY = 'auth_token'`), a value made of words
    /// is not a secret either.
    EnvKey,
}

/// Whether a key or variable name marks its value as a secret (see [`classify_name`]).
pub fn is_sensitive_key(name: &str) -> bool {
    classify_name(name).is_some()
}

/// Classify a key name: lowercased with `-`/`_` removed, it must be or end with a secret word
/// (`password`, `pass`, `pwd`, `token`, `apikey`, `keybase`, …), or name a key of a secret kind
/// (see [`is_secret_key_name`]). A trailing encoding (`…_BASE64`, `…_JSON`) is looked through.
/// Paths, ids, branches, token *counts* and the shell's `PWD` are not secrets.
pub(super) fn classify_name(name: &str) -> Option<NameKind> {
    let name = name.trim_start_matches(['-', '$', '@']);
    // Only the tail matters for suffix tests; keep the last 48 normalised bytes on the stack.
    let mut buf = [0u8; 48];
    let mut n = 0;
    let mut complete = true;
    for &c in name.as_bytes().iter().rev() {
        if c == b'-' || c == b'_' {
            continue;
        }
        if n == buf.len() {
            complete = false;
            break;
        }
        buf[buf.len() - 1 - n] = c.to_ascii_lowercase();
        n += 1;
    }
    let mut norm = &buf[buf.len() - n..];
    // GOOGLE_CREDENTIALS_BASE64, SERVICE_ACCOUNT_KEY_JSON: the secret, encoded.
    for encoding in [&b"base64"[..], b"b64", b"json"] {
        if norm.len() > encoding.len() && norm.ends_with(encoding) {
            norm = &norm[..norm.len() - encoding.len()];
            break;
        }
    }
    if norm.ends_with(b"authorization") {
        return Some(NameKind::Authorization);
    }
    if norm.ends_with(b"cookie") || norm.ends_with(b"cookies") {
        return Some(NameKind::Cookie);
    }
    const SUFFIXES: &[&[u8]] = &[
        b"password",
        b"passwd",
        b"passphrase",
        b"secret",
        b"secretkey",
        b"token",
        b"apikey",
        b"accesskey",
        b"privatekey",
        b"credential",
        b"credentials",
        b"keybase",
        b"clientkeydata",
    ];
    if SUFFIXES.iter().any(|s| norm.ends_with(s)) {
        if norm.ends_with(b"token") && complete && is_token_counter_or_cursor(norm) {
            return None;
        }
        return Some(NameKind::Plain);
    }
    // DB_PASS, smtpPass; not bypass, compass or a render pass.
    const NOT_PASS: &[&[u8]] = &[
        b"bypass",
        b"compass",
        b"surpass",
        b"trespass",
        b"overpass",
        b"underpass",
        b"renderpass",
        b"subpass",
        b"firstpass",
        b"secondpass",
        b"multipass",
    ];
    if norm.ends_with(b"pass") && !NOT_PASS.iter().any(|w| norm.ends_with(w)) {
        return Some(NameKind::Plain);
    }
    // MYSQL_PWD, DB_PWD; not the shell's working directory.
    if norm.ends_with(b"pwd") && !(complete && matches!(norm, b"pwd" | b"oldpwd")) {
        return Some(NameKind::Plain);
    }
    if norm.ends_with(b"key")
        && let Some(kind) = secret_key_name(name)
    {
        return Some(kind);
    }
    let auth = (complete && norm == b"auth")
        || name.ends_with("_auth")
        || name.ends_with("-auth")
        || (name.len() > 4
            && name.ends_with("Auth")
            && name.as_bytes()[name.len() - 5].is_ascii_lowercase());
    auth.then_some(NameKind::Plain)
}

/// A name ending in `key` that names a secret: the word before `key` says what kind of key it
/// is (`RAILS_MASTER_KEY`, `encryptionKey`, `signing-key`: [`NameKind::Key`]), or the name is
/// an environment variable (`STRIPE_KEY`, `APP_KEY`: [`NameKind::EnvKey`]) whose word before
/// `KEY` is not one of a public or database key (`PUBLIC_KEY`, `PRIMARY_KEY`, `CACHE_KEY`).
/// Code's `session_key`, `cacheKey` and a bare `key` are not secrets.
pub(super) fn secret_key_name(name: &str) -> Option<NameKind> {
    const SECRET_KINDS: &[&str] = &[
        "master",
        "encryption",
        "encrypt",
        "decryption",
        "decrypt",
        "signing",
        "sign",
        "secret",
        "private",
        "hmac",
        "cipher",
        "crypt",
        "crypto",
        "jwt",
        "license",
        "licence",
        "account",
        "subscription",
        "shared",
        "symmetric",
        "aes",
        "nonce",
        "root",
    ];
    const NOT_SECRET: &[&str] = &[
        "public",
        "publishable",
        "pub",
        "site",
        "anon",
        "primary",
        "foreign",
        "partition",
        "sort",
        "cache",
        "routing",
        "hash",
        "range",
        "row",
        "object",
        "lookup",
        "idempotency",
        "dedup",
        "unique",
        "composite",
        "group",
        "map",
        "sequence",
        "message",
        "event",
        "translation",
        "i18n",
        "shortcut",
        "hot",
        "menu",
        "list",
        "item",
        "sentry",
        "storage",
    ];
    let mut words = name_words(name);
    if words.len() > 1
        && words.last().is_some_and(|w| {
            ["base64", "b64", "json"]
                .iter()
                .any(|e| e.eq_ignore_ascii_case(w))
        })
    {
        words.pop();
    }
    let (last, before) = words.split_last()?;
    // The kind is the word before `key`, or what a glued `masterkey` has before it.
    let kind = if last.eq_ignore_ascii_case("key") {
        *before.last()?
    } else {
        last.get(..last.len().checked_sub(3)?)
            .filter(|w| !w.is_empty())?
    };
    if SECRET_KINDS.iter().any(|k| k.eq_ignore_ascii_case(kind)) {
        return Some(NameKind::Key);
    }
    let screaming = name.contains('_')
        && name
            .bytes()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_');
    (screaming
        && last.eq_ignore_ascii_case("key")
        && !NOT_SECRET.iter().any(|k| k.eq_ignore_ascii_case(kind)))
    .then_some(NameKind::EnvKey)
}

/// The words of an identifier: split at `_`, `-`, `.` and camel-case humps (`encryptionKey` →
/// `encryption`, `Key`).
pub(super) fn name_words(name: &str) -> Vec<&str> {
    let mut words = Vec::new();
    for piece in name.split(['_', '-', '.']).filter(|p| !p.is_empty()) {
        let b = piece.as_bytes();
        let mut start = 0;
        for i in 1..b.len() {
            if b[i - 1].is_ascii_lowercase() && b[i].is_ascii_uppercase() {
                words.push(&piece[start..i]);
                start = i;
            }
        }
        words.push(&piece[start..]);
    }
    words
}

/// `max_token`, `input_token`, `next_page_token`: counts and pagination cursors, not secrets.
pub(super) fn is_token_counter_or_cursor(norm: &[u8]) -> bool {
    const COUNTERS: &[&[u8]] = &[
        b"max",
        b"min",
        b"num",
        b"total",
        b"count",
        b"input",
        b"output",
        b"prompt",
        b"completion",
        b"cached",
        b"reasoning",
    ];
    const CURSORS: &[&[u8]] = &[
        b"pagetoken",
        b"nextpagetoken",
        b"nexttoken",
        b"continuationtoken",
        b"cancellationtoken",
        b"canceltoken",
    ];
    COUNTERS.iter().any(|p| norm.starts_with(p)) || CURSORS.contains(&norm)
}

/// How a name was bound to its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sep {
    /// `=`, `:=`, `=>`
    Eq,
    /// `:`
    Colon,
    /// `--password value`
    Flag,
}

pub(super) fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.')
}

pub(super) const MAX_VALUE: usize = 4096;

/// Layer 2 in text: given an anchor hit (`token` in `GITHUB_TOKEN=…`), read the whole name, the
/// assignment and the value; return the credential's range if the name is sensitive and the
/// value plausible. `seen_to` skips further anchors inside a name already read.
pub(super) fn named_secret(
    s: &str,
    hit_start: usize,
    hit_end: usize,
    seen_to: &mut usize,
    mut found: impl FnMut(usize, usize),
) {
    let b = s.as_bytes();
    let mut is = hit_start;
    while is > 0 && is_ident_byte(b[is - 1]) && !escape_letter_before(b, is) {
        is -= 1;
    }
    let mut ie = hit_end;
    while ie < b.len() && is_ident_byte(b[ie]) {
        ie += 1;
    }
    if ie <= *seen_to {
        return;
    }
    *seen_to = ie;
    while ie > hit_end && matches!(b[ie - 1], b'.' | b'-') {
        ie -= 1;
    }
    // The rule name inside a marker (`[REDACTED:npm-token]`) is not a key name.
    if s[..is].ends_with(MARKER_OPEN) {
        return;
    }
    let name = &s[is..ie];
    let Some(kind) = classify_name(name.rsplit('.').next().unwrap_or(name)) else {
        return;
    };
    let mut p = ie;
    if b.get(p) == Some(&b'?') {
        p += 1; // TypeScript `password?: string`
    }
    p = skip_quote(b, p);
    if b.get(p) == Some(&b']') {
        p += 1; // env["TOKEN"] = …
    }
    let ws_before = skip_ws(b, &mut p);
    let sep = match (b.get(p), b.get(p + 1)) {
        (Some(b'='), Some(b'=' | b'~')) | (Some(b':'), Some(b':')) => return,
        (Some(b'='), Some(b'>')) | (Some(b':'), Some(b'=')) => {
            p += 2;
            Sep::Eq
        }
        (Some(b'='), _) => {
            p += 1;
            Sep::Eq
        }
        (Some(b':'), _) => {
            p += 1;
            Sep::Colon
        }
        // `--password value`, only as a real command-line flag
        _ if name.starts_with("--")
            && ws_before
            && (is == 0
                || b[is - 1].is_ascii_whitespace()
                || matches!(b[is - 1], b'"' | b'\'')
                || escape_letter_before(b, is)) =>
        {
            Sep::Flag
        }
        _ => return,
    };
    let ws_after = skip_ws(b, &mut p);
    let spaced = sep == Sep::Eq && (ws_before || ws_after);
    if b.get(p) == Some(&b'[') {
        // `"credentials": ["…", "…"]`: every quoted element, as the JSON walk does.
        array_values(b, p, |vs, ve| {
            if let Some((a, z, _)) = credential_range(s, vs, ve, kind, false)
                && plausible(&s[a..z], kind, true, sep, spaced)
            {
                found(a, z);
            }
        });
        return;
    }
    let (vs, ve, quoted) = match quoted_value(b, p) {
        Some((a, z)) => (a, z, true),
        None if quote_at(b, p).is_some() => return,
        None => {
            let to_eol = sep == Sep::Colon && kind != NameKind::Plain;
            let mut end = unquoted_end(s, p, to_eol);
            // A full stop ending a sentence is not part of the value.
            if end > p
                && b[end - 1] == b'.'
                && b.get(end).is_none_or(|c| !c.is_ascii_alphanumeric())
            {
                end -= 1;
            }
            (p, end, false)
        }
    };
    if let Some((a, z, header)) = credential_range(s, vs, ve, kind, !quoted)
        && plausible(&s[a..z], kind, quoted || header, sep, spaced)
    {
        found(a, z);
    }
}

/// The quoted strings of the array at `p`, nested arrays included. Objects inside are skipped:
/// their members have keys of their own.
pub(super) fn array_values(b: &[u8], p: usize, mut each: impl FnMut(usize, usize)) {
    let mut depth = 0usize;
    let mut j = p;
    while j < b.len() && j - p <= MAX_VALUE {
        match b[j] {
            b'[' => depth += 1,
            b']' => {
                depth -= 1;
                if depth == 0 {
                    return;
                }
            }
            b'{' => match skip_object(b, j) {
                Some(end) => {
                    j = end;
                    continue;
                }
                None => return,
            },
            b'\n' => return,
            _ if quote_at(b, j).is_some() => match quoted_value(b, j) {
                Some((a, z)) => {
                    each(a, z);
                    j = after_quote(b, z);
                    continue;
                }
                None => return,
            },
            _ => {}
        }
        j += 1;
    }
}

/// The index just after the `}` closing the object at `p`, skipping quoted strings.
pub(super) fn skip_object(b: &[u8], p: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut j = p;
    while j < b.len() && j - p <= MAX_VALUE {
        match b[j] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(j + 1);
                }
            }
            b'\n' => return None,
            _ if quote_at(b, j).is_some() => {
                let (_, z) = quoted_value(b, j)?;
                j = after_quote(b, z);
                continue;
            }
            _ => {}
        }
        j += 1;
    }
    None
}

/// Past the closing quote that starts at `z` (with its escaping backslashes).
pub(super) fn after_quote(b: &[u8], z: usize) -> usize {
    quote_at(b, z).map_or(z + 1, |(n, _)| z + n + 1)
}

/// Skip a quote as written in code or raw JSON (`"`, `'`, `` ` ``, `\"`, `\\\"`).
pub(super) fn skip_quote(b: &[u8], p: usize) -> usize {
    quote_at(b, p).map_or(p, |(n, _)| p + n + 1)
}

/// At `p`: `n` backslashes then a quote character? Returns `(n, quote)`.
pub(super) fn quote_at(b: &[u8], p: usize) -> Option<(usize, u8)> {
    let n = b
        .get(p..)?
        .iter()
        .take(8)
        .take_while(|&&c| c == b'\\')
        .count();
    match b.get(p + n) {
        Some(&q @ (b'"' | b'\'' | b'`')) => Some((n, q)),
        _ => None,
    }
}

/// Skip spaces and tabs (also escaped tabs); true if any were skipped.
pub(super) fn skip_ws(b: &[u8], p: &mut usize) -> bool {
    let start = *p;
    loop {
        match b.get(*p) {
            Some(b' ' | b'\t') => *p += 1,
            Some(b'\\') => {
                // `\t`, `\\t`, …: a tab however deeply escaped (raw and decoded text agree).
                let k = b[*p..].iter().take_while(|&&c| c == b'\\').count();
                if b.get(*p + k) != Some(&b't') {
                    return *p > start;
                }
                *p += k + 1;
            }
            _ => return *p > start,
        }
    }
}

/// A quoted value starting at `p`: its content range. The closing quote is the same character
/// with the same level of escaping: after `n` backslashes, a quote preceded by `k` backslashes
/// closes iff `k mod 2(n+1) == n` (so `\"` inside `"…"` and `\\\"` inside `\"…\"` do not).
pub(super) fn quoted_value(b: &[u8], p: usize) -> Option<(usize, usize)> {
    let (n0, q) = quote_at(b, p)?;
    let start = p + n0 + 1;
    let modulus = 2 * (n0 + 1);
    let mut j = start;
    while j < b.len() && j - start <= MAX_VALUE {
        let c = b[j];
        if c == b'\n' {
            return None;
        }
        if c == q {
            let k = b[start..j]
                .iter()
                .rev()
                .take_while(|&&c| c == b'\\')
                .count();
            if k % modulus == n0 {
                return Some((start, j - n0));
            }
        }
        j += 1;
    }
    None
}

/// End of an unquoted value starting at `p`: the end of the line for header values, else the
/// first space or delimiter.
///
/// Backslashes are read the same way in raw JSON and in decoded text, so the gate and the
/// structural path agree: before an escape letter (`\n`, …) or an escaped quote, every
/// backslash is left out and the value ends; before a real quote (an even run, as in raw `\\"`)
/// the backslashes are literal and stay in.
pub(super) fn unquoted_end(s: &str, p: usize, to_eol: bool) -> usize {
    let b = s.as_bytes();
    let mut j = p;
    while j < b.len() && j - p < MAX_VALUE {
        let c = b[j];
        if c == b'\\' {
            let k = b[j..].iter().take_while(|&&c| c == b'\\').count();
            match b.get(j + k) {
                Some(b'"' | b'\'') if k % 2 == 0 => {
                    j += k;
                    break;
                }
                Some(b'"' | b'\'' | b'n' | b'r') => break,
                Some(b't' | b'f') if !to_eol => break,
                _ => {
                    j += k;
                    continue;
                }
            }
        }
        let stop = if to_eol {
            matches!(c, b'\n' | b'\r' | b'"' | b'\'')
        } else {
            c.is_ascii_whitespace()
                || matches!(
                    c,
                    b',' | b';' | b'"' | b'\'' | b'`' | b')' | b'}' | b']' | b'>' | b'&' | b'|'
                )
        };
        if stop {
            break;
        }
        j += 1;
    }
    let mut j = j.min(b.len());
    while j > p && !s.is_char_boundary(j) {
        j -= 1;
    }
    j
}

/// The credential inside a value: after the scheme of an `Authorization` value (`Bearer …`), a
/// cookie header only when it has `name=value` pairs, trimmed. The flag says the value is
/// clearly a header credential (a scheme word or cookie pairs), so code checks do not apply.
pub(super) fn credential_range(
    s: &str,
    vs: usize,
    ve: usize,
    kind: NameKind,
    header_line: bool,
) -> Option<(usize, usize, bool)> {
    let b = s.as_bytes();
    let (mut a, mut z) = trim_ws(b, vs, ve);
    if a >= z {
        return None;
    }
    let mut header = false;
    match kind {
        NameKind::Plain | NameKind::Key | NameKind::EnvKey => {}
        NameKind::Authorization => {
            if let Some(sp) = find_ws(b, a, z)
                && is_auth_scheme(&s[a..sp])
            {
                a = trim_ws(b, sp, z).0;
                header = true;
            }
            if let Some(sp) = find_ws(b, a, z) {
                if !header {
                    return None; // words without a scheme: a description, not a credential
                }
                z = sp;
            }
        }
        NameKind::Cookie => {
            header = s[a..z].contains('=');
            if header_line && !header {
                return None;
            }
        }
    }
    (a < z && s.is_char_boundary(a) && s.is_char_boundary(z)).then_some((a, z, header))
}

/// Length of the whitespace at `i`: a space, tab or newline, or its escape (`\n`, `\\t`, …), as
/// raw JSON and decoded text spell it. 0 if none.
pub(super) fn ws_len_at(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(c) if c.is_ascii_whitespace() => 1,
        Some(b'\\') => {
            let k = b[i..].iter().take_while(|&&c| c == b'\\').count();
            if matches!(b.get(i + k), Some(b'n' | b'r' | b't' | b'f')) {
                k + 1
            } else {
                0
            }
        }
        _ => 0,
    }
}

/// The first whitespace (or escaped whitespace) in `b[a..z]`.
pub(super) fn find_ws(b: &[u8], a: usize, z: usize) -> Option<usize> {
    (a..z).find(|&i| ws_len_at(b, i) > 0)
}

/// `b[a..z]` without (escaped) whitespace at either end.
pub(super) fn trim_ws(b: &[u8], mut a: usize, mut z: usize) -> (usize, usize) {
    while a < z {
        let n = ws_len_at(b, a);
        if n == 0 || a + n > z {
            break;
        }
        a += n;
    }
    while z > a {
        if b[z - 1].is_ascii_whitespace() {
            z -= 1;
        } else if matches!(b[z - 1], b'n' | b'r' | b't' | b'f') && z >= 2 && b[z - 2] == b'\\' {
            z -= 1;
            while z > a && b[z - 1] == b'\\' {
                z -= 1;
            }
        } else {
            break;
        }
    }
    (a, z)
}

pub(super) fn is_auth_scheme(word: &str) -> bool {
    const SCHEMES: &[&str] = &[
        "bearer",
        "basic",
        "token",
        "bot",
        "digest",
        "apikey",
        "api-key",
        "hmac",
        "negotiate",
        "ntlm",
        "key",
    ];
    SCHEMES.iter().any(|s| s.eq_ignore_ascii_case(word)) || word.starts_with("AWS4-")
}

/// Could `v` be a real secret value? Rejects short values, placeholders, (when unquoted) code:
/// calls, member paths, bare identifiers and type annotations, and for a key name what
/// [`NameKind::Key`] and [`NameKind::EnvKey`] say is not a key.
pub(super) fn plausible(v: &str, kind: NameKind, quoted: bool, sep: Sep, spaced: bool) -> bool {
    let v = v.trim();
    if v.len() < 6 || is_template_placeholder(v) || is_word_placeholder(v) {
        return false;
    }
    let key = matches!(kind, NameKind::Key | NameKind::EnvKey);
    if key && (v.starts_with('/') || v.starts_with("~/") || v.starts_with("./")) {
        return false;
    }
    if kind == NameKind::EnvKey && (v.contains(' ') || word_like(v.as_bytes())) {
        return false;
    }
    quoted || !looks_like_code(v, sep, spaced)
}

/// Words that stand in for a value in docs, schemas and logs.
pub(super) fn is_word_placeholder(v: &str) -> bool {
    const WORDS: &[&str] = &[
        "null",
        "none",
        "nil",
        "undefined",
        "true",
        "false",
        "redacted",
        "hidden",
        "masked",
        "placeholder",
        "string",
        "bearer",
        "basic",
        "token",
        "secret",
        "password",
        "passwd",
        "optional",
        "required",
    ];
    WORDS.iter().any(|w| w.eq_ignore_ascii_case(v))
        || v.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("your"))
        || v.contains("xxxx")
        || v.contains("XXXX")
}

pub(super) fn looks_like_code(v: &str, sep: Sep, spaced: bool) -> bool {
    let b = v.as_bytes();
    if b.iter().any(|c| matches!(c, b'(' | b'[' | b'{' | b'<'))
        || matches!(b[0], b'&' | b'*' | b'@' | b'!')
    {
        return true;
    }
    if b.iter().all(u8::is_ascii_digit) {
        return true; // counts, ports, ids
    }
    let is_ident = |p: &str| {
        p.bytes()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_' || c == b'$')
            && p.bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'$')
    };
    // os.environ, self.token, process.env.API_KEY
    if v.contains('.') && v.split('.').all(is_ident) {
        return true;
    }
    if is_ident(v) && !b.iter().any(u8::is_ascii_digit) {
        let camel = b
            .windows(2)
            .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
        // request_password, GITHUB_TOKEN, tokenValue, `token: String`, `password = changeme`
        return v.contains('_') || camel || sep == Sep::Colon || spaced;
    }
    false
}
