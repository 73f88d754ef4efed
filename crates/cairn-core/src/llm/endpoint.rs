//! Endpoints and the transport policy.
//!
//! An endpoint is an OpenAI-compatible base URL (`http://127.0.0.1:30000/v1`). Plain HTTP is
//! allowed only to loopback hosts (`localhost`, `127.0.0.0/8`, `::1`) unless the server sets
//! `allow_http`; credentials never live in the URL (no `user:pass@`, no fragment), so the API
//! key can only come from the environment variable named by `api_key_env`. Endpoints are shown
//! redacted everywhere ([`Endpoint::redacted`]).

use std::net::IpAddr;
use std::path::Path;
use std::time::Duration;

use crate::error::{Error, Result};

pub use crate::config::ServerConfig;

/// Default per-request timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// The longest a configuration may have Cairn wait for one answer: a day. Anything longer is a
/// typo (or `u64::MAX`), and a wait long enough overflows the clock it is added to (a panic,
/// found by the hostile-testing run with `timeout_secs = 9223372036854775807`).
pub const MAX_TIMEOUT: Duration = Duration::from_secs(86_400);

/// A validated server: what [`super::Client::new`] takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Server {
    pub endpoint: Endpoint,
    /// The variable to read the key from at client construction (empty = no key).
    pub api_key_env: String,
    pub timeout: Duration,
    /// Where a person raises `timeout`, said whole for a message (``"`timeout` under
    /// [recall.extract.servers.local] (a duration, e.g. timeout = \"10m\")"``); `None` when no
    /// key of the config sets it.
    pub timeout_setting: Option<String>,
}

/// What is wrong with `env` as the name of the variable that holds an API key (`api_key_env`),
/// in words that never repeat it when it looks like a key itself (a `ghp_…` token passed the
/// name check once and came back as "$ghp_… is not set"); `None` when it is a name, or empty.
pub(crate) fn key_variable_problem(env: &str) -> Option<String> {
    let env = env.trim();
    let looks_like_a_key = {
        let mut found = Vec::new();
        let _ = crate::archive::redact::Redactor::global().redact_text(env, "", &mut found);
        // A hex key (Azure's are 32 digits) is a valid name by its characters alone.
        let hex_run = env.len() >= 20 && env.chars().all(|c| c.is_ascii_hexdigit());
        !found.is_empty() || env.len() > 64 || hex_run || env.split('_').any(is_key_shaped)
    };
    let name_chars = env.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if env.is_empty() || (!looks_like_a_key && name_chars) {
        return None;
    }
    let what = if looks_like_a_key {
        "looks like a key, not the name of an environment variable".to_owned()
    } else {
        format!(
            "{:?} is not an environment variable name",
            crate::text::one_line(env, 40)
        )
    };
    Some(format!(
        "{what}; give the variable's name (e.g. \"OPENAI_API_KEY\") and export the key in it, never the key itself"
    ))
}

/// Whether one `_`-separated part of a variable's name reads as a key's random run rather than
/// a word: long, with digits among the letters and, under 24 characters, both cases mixed
/// (`abcdEFGH1234ijklMNOP5678qrst`). A variable's name is made of words (`OPENAI_API_KEY`,
/// `MY_KEY_2`, `openaiKey`), which the redactor's entropy layer leaves alone when they are this
/// short; the key itself, pasted where its name goes, would then be written to config.toml.
fn is_key_shaped(part: &str) -> bool {
    let has = |f: fn(&char) -> bool| part.chars().any(|c| f(&c));
    let digits = has(char::is_ascii_digit);
    let letters = has(char::is_ascii_alphabetic);
    let mixed_case = has(char::is_ascii_lowercase) && has(char::is_ascii_uppercase);
    let len = part.chars().count();
    digits && letters && (len >= 24 || (len >= 16 && mixed_case))
}

/// How a person allows plain HTTP for the table `key` names: the setup command that writes it,
/// where there is one, else the key itself (`[embeddings]` has no setup command).
fn allow_http_how(key: &str) -> String {
    let command = if key.starts_with("recall.extract.") {
        Some("cairn recall extract setup")
    } else if key == "insights" {
        Some("cairn insights setup")
    } else {
        None
    };
    if let Some(command) = command {
        format!("run `{command}` again with --allow-http (it sets {key}.allow_http)")
    } else {
        format!("set {key}.allow_http = true")
    }
}

impl ServerConfig {
    /// Validate under `key` (e.g. `recall.extract.servers.local`); errors name `config_path`
    /// and the key to fix.
    pub fn resolve(&self, config_path: &Path, key: &str) -> Result<Server> {
        let bad = |field: &str, msg: String| Error::Config {
            path: config_path.to_owned(),
            message: format!("{key}.{field}: {msg}"),
        };
        if self.endpoint.trim().is_empty() {
            return Err(bad(
                "endpoint",
                "is missing; set it to the server's OpenAI-compatible base URL, e.g. \"http://127.0.0.1:8080/v1\"".into(),
            ));
        }
        let endpoint = Endpoint::parse(self.endpoint.trim()).map_err(|m| bad("endpoint", m))?;
        if endpoint.is_plain_http_off_this_machine() && !self.allow_http {
            return Err(bad(
                "endpoint",
                format!(
                    "{} is plain HTTP to a host that is not loopback, which would send transcript text unencrypted; use https://, or, if that network is yours, {}",
                    endpoint.redacted(),
                    allow_http_how(key)
                ),
            ));
        }
        let env = self.api_key_env.trim();
        if let Some(why) = key_variable_problem(env) {
            return Err(bad("api_key_env", why));
        }
        let timeout = match self.timeout.as_deref() {
            None => DEFAULT_TIMEOUT,
            Some(t) => match parse_duration(t) {
                Ok(d) if d > 0 && Duration::from_millis(d as u64) <= MAX_TIMEOUT => {
                    Duration::from_millis(d as u64)
                }
                Ok(d) if d > 0 => {
                    return Err(bad(
                        "timeout",
                        format!(
                            "{t:?} is longer than a day (\"1d\"), the most Cairn waits for one answer"
                        ),
                    ));
                }
                Ok(_) => return Err(bad("timeout", format!("{t:?} must be more than zero"))),
                Err(m) => return Err(bad("timeout", m)),
            },
        };
        // Only a `[….servers.<name>]` table is written as a `ServerConfig`, `timeout` and all;
        // a feature that builds one from keys of its own table (`[insights]`, `[embeddings]`)
        // names its own timeout key, or has none.
        let timeout_setting = key
            .contains(".servers.")
            .then(|| format!("`timeout` under [{key}] (a duration, e.g. timeout = \"10m\")"));
        Ok(Server {
            endpoint,
            api_key_env: env.to_owned(),
            timeout,
            timeout_setting,
        })
    }
}

/// Parse `"500ms"`, `"30s"`, `"30m"`, `"1h"`, `"1h30m"`, `"2d"`, `"0"`, `"-1h"` into signed
/// milliseconds.
pub fn parse_duration(text: &str) -> std::result::Result<i64, String> {
    let t = text.trim();
    let (neg, body) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    if body == "0" {
        return Ok(0);
    }
    let err =
        || format!("{text:?} is not a duration; write e.g. \"90s\", \"30m\", \"1h\" or \"1h30m\"");
    let mut total: i64 = 0;
    let mut rest = body;
    if rest.is_empty() {
        return Err(err());
    }
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(err());
        }
        let n: i64 = rest[..digits].parse().map_err(|_| err())?;
        rest = &rest[digits..];
        let unit_len = rest.bytes().take_while(|b| b.is_ascii_alphabetic()).count();
        let ms = match &rest[..unit_len] {
            "ms" => 1,
            "s" => 1_000,
            "m" => 60_000,
            "h" => 3_600_000,
            "d" => 86_400_000,
            _ => return Err(err()),
        };
        rest = &rest[unit_len..];
        total = n
            .checked_mul(ms)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(err)?;
    }
    Ok(if neg { -total } else { total })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Http,
    Https,
}

/// A parsed base URL: scheme, host, optional port, path (no trailing slash) and raw query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub scheme: Scheme,
    /// Lower-cased; IPv6 without brackets.
    pub host: String,
    pub port: Option<u16>,
    /// `""` or `/v1`-like, never ending in `/`.
    pub path: String,
    /// Without the `?`.
    pub query: String,
}

/// Path segments that say nothing about the account using them.
const PLAIN_SEGMENTS: &[&str] = &["v1", "v1beta", "api", "openai"];

impl Endpoint {
    /// Parse an `http://` or `https://` base URL. The message of an error says what to change.
    pub fn parse(url: &str) -> std::result::Result<Endpoint, String> {
        let (scheme, rest) = if let Some(r) = strip_prefix_ci(url, "https://") {
            (Scheme::Https, r)
        } else if let Some(r) = strip_prefix_ci(url, "http://") {
            (Scheme::Http, r)
        } else {
            return Err("must start with http:// or https://".into());
        };
        if rest.contains('#') {
            return Err("must not have a #fragment".into());
        }
        if rest.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err("must not contain spaces or control characters".into());
        }
        let (before_query, query) = match rest.split_once('?') {
            Some((a, q)) => (a, q.to_owned()),
            None => (rest, String::new()),
        };
        let (authority, path) = match before_query.find('/') {
            Some(i) => (&before_query[..i], &before_query[i..]),
            None => (before_query, ""),
        };
        if authority.contains('@') {
            return Err("must not carry credentials (user:password@); name the variable holding the key in api_key_env instead".into());
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (h, after) = v6
                .split_once(']')
                .ok_or("has an unclosed [ in its IPv6 host")?;
            let port = match after {
                "" => None,
                p => Some(p.strip_prefix(':').ok_or("has junk after its IPv6 host")?),
            };
            if h.parse::<std::net::Ipv6Addr>().is_err() {
                return Err(format!("has an invalid IPv6 host [{h}]"));
            }
            (h.to_ascii_lowercase(), port)
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h.to_ascii_lowercase(), Some(p)),
                None => (authority.to_ascii_lowercase(), None),
            }
        };
        if host.is_empty() {
            return Err("has no host".into());
        }
        if !host.contains(':')
            && !host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_')
        {
            return Err(format!("has an invalid host {host:?}"));
        }
        let port = match port {
            None => None,
            Some(p) => Some(
                p.parse::<u16>()
                    .ok()
                    .filter(|&p| p != 0)
                    .ok_or_else(|| format!("has an invalid port {p:?}"))?,
            ),
        };
        let path = path.trim_end_matches('/').to_owned();
        Ok(Endpoint {
            scheme,
            host,
            port,
            path,
            query,
        })
    }

    /// Plain HTTP to a host that is not this machine: what reaches it crosses a network
    /// unencrypted, so a server table allows it only with `allow_http` (and a setup command only
    /// with `--allow-http`: [`Self::plain_http_refusal`]).
    pub fn is_plain_http_off_this_machine(&self) -> bool {
        self.scheme == Scheme::Http && !self.is_loopback()
    }

    /// Why a setup (`cairn recall extract setup`, `cairn insights setup`) may not save `url`
    /// without `--allow-http`: it is plain HTTP to a host that is not this machine and plain HTTP
    /// was not allowed. In the words of the flag that allows it, so a person is never sent to
    /// edit the file by hand; `None` when it may be saved (or does not parse: saving says why).
    pub fn plain_http_refusal(url: &str, allow_http: bool) -> Option<String> {
        let e = Self::parse(url.trim()).ok()?;
        (e.is_plain_http_off_this_machine() && !allow_http).then(|| {
            format!(
                "{} is plain HTTP to a host that is not this machine, so transcript text would cross the network unencrypted: use https://, or pass --allow-http if that network is yours",
                e.redacted()
            )
        })
    }

    /// `localhost` or a loopback IP address.
    pub fn is_loopback(&self) -> bool {
        self.host == "localhost" || self.host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
    }

    /// The host as a URL writes it: an IPv6 address in brackets.
    fn url_host(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        }
    }

    fn authority(&self) -> String {
        let host = self.url_host();
        match self.port {
            Some(p) => format!("{host}:{p}"),
            None => host,
        }
    }

    /// `host:port` as a connection is made to it (the scheme's port when none is written),
    /// for a message about that connection.
    pub fn host_port(&self) -> String {
        let port = self.port.unwrap_or(match self.scheme {
            Scheme::Http => 80,
            Scheme::Https => 443,
        });
        format!("{}:{port}", self.url_host())
    }

    fn scheme_str(&self) -> &'static str {
        match self.scheme {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }

    /// The URL of an API route (`/chat/completions`) under this base.
    pub fn url(&self, route: &str) -> String {
        let mut u = format!(
            "{}://{}{}{}",
            self.scheme_str(),
            self.authority(),
            self.path,
            route
        );
        if !self.query.is_empty() {
            u.push('?');
            u.push_str(&self.query);
        }
        u
    }

    /// A typed base URL as it may be shown: [`Self::redacted`] when it parses, else the text
    /// with its secrets redacted (a URL Cairn cannot read still may hold a key).
    pub fn shown(url: &str) -> String {
        Self::parse(url.trim()).map_or_else(
            |_| {
                crate::archive::redact::Redactor::global().redact_printable(
                    url,
                    "endpoint",
                    &mut Vec::new(),
                )
            },
            |e| e.redacted(),
        )
    }

    /// Safe to show: path replaced by `/REDACTED` unless made only of plain segments (`v1`,
    /// `api`, …), query values masked except `api-version`.
    pub fn redacted(&self) -> String {
        let path = if self.path_is_plain() {
            self.path.clone()
        } else {
            "/REDACTED".to_owned()
        };
        let mut u = format!("{}://{}{path}", self.scheme_str(), self.authority());
        if !self.query.is_empty() {
            let masked: Vec<String> = self
                .query
                .split('&')
                .map(|kv| match kv.split_once('=') {
                    Some((k, v)) if k.eq_ignore_ascii_case("api-version") => format!("{k}={v}"),
                    Some((k, _)) => format!("{k}=REDACTED"),
                    None => "REDACTED".to_owned(),
                })
                .collect();
            u.push('?');
            u.push_str(&masked.join("&"));
        }
        u
    }

    fn path_is_plain(&self) -> bool {
        self.path
            .split('/')
            .filter(|s| !s.is_empty())
            .all(|s| PLAIN_SEGMENTS.iter().any(|p| p.eq_ignore_ascii_case(s)))
    }

    /// The URL may carry account material (a path or query that is not plain): server error
    /// texts, which could echo the URL, are then withheld.
    pub fn carries_credentials(&self) -> bool {
        !self.path_is_plain()
            || self.query.split('&').filter(|kv| !kv.is_empty()).any(|kv| {
                !kv.split('=')
                    .next()
                    .is_some_and(|k| k.eq_ignore_ascii_case("api-version"))
            })
    }
}

fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    (s.len() >= prefix.len() && s[..prefix.len()].eq_ignore_ascii_case(prefix))
        .then(|| &s[prefix.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(endpoint: &str, allow_http: bool) -> Result<Server> {
        ServerConfig {
            endpoint: endpoint.into(),
            allow_http,
            ..Default::default()
        }
        .resolve(Path::new("/d/config.toml"), "recall.extract.servers.main")
    }

    /// A timeout's message names the key of the table the server is written in: a server
    /// table's `timeout`; none for a feature that builds the server from keys of its own.
    #[test]
    fn the_timeout_is_named_where_the_config_sets_it() {
        let setting = server("http://127.0.0.1:1/v1", false)
            .unwrap()
            .timeout_setting
            .unwrap_or_default();
        assert!(
            setting.starts_with("`timeout` under [recall.extract.servers.main]"),
            "{setting}"
        );
        let embeddings = ServerConfig {
            endpoint: "http://127.0.0.1:1/v1".into(),
            ..Default::default()
        }
        .resolve(Path::new("/d/config.toml"), "embeddings")
        .unwrap();
        assert_eq!(embeddings.timeout_setting, None);
    }

    /// A key pasted where its variable's name goes is refused and never repeated.
    #[test]
    fn a_key_given_as_api_key_env_is_refused_without_being_shown() {
        let with_env = |env: &str| {
            ServerConfig {
                endpoint: "http://127.0.0.1:1/v1".into(),
                api_key_env: env.into(),
                ..Default::default()
            }
            .resolve(Path::new("/d/config.toml"), "recall.extract.servers.main")
        };
        let token = format!("ghp_{}", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8");
        let project = format!("sk-proj-{}", "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa");
        for key in [token.as_str(), project.as_str()] {
            let err = with_env(key).unwrap_err().to_string();
            assert!(
                err.contains("looks like a key") && err.contains("api_key_env"),
                "{err}"
            );
            assert!(!err.contains(&key[8..]), "{err}");
        }
        assert!(with_env("OPENAI_API_KEY").is_ok());
        assert!(
            with_env("MY KEY")
                .unwrap_err()
                .to_string()
                .contains("not an environment variable name")
        );
    }

    #[test]
    fn parses_and_builds_routes() {
        let e = Endpoint::parse("http://127.0.0.1:30000/v1/").unwrap();
        assert_eq!(
            e.url("/chat/completions"),
            "http://127.0.0.1:30000/v1/chat/completions"
        );
        let e = Endpoint::parse(
            "https://x.openai.azure.com/openai/deployments/gpt?api-version=2024-06-01",
        )
        .unwrap();
        assert_eq!(
            e.url("/chat/completions"),
            "https://x.openai.azure.com/openai/deployments/gpt/chat/completions?api-version=2024-06-01"
        );
        let e = Endpoint::parse("http://[::1]:8080").unwrap();
        assert!(e.is_loopback());
        assert_eq!(e.url("/models"), "http://[::1]:8080/models");
        for bad in [
            "ftp://x",
            "http://user:pw@host/v1",
            "http://host/v1#k",
            "http://:80",
            "http://host:99999",
            "http://ho st",
        ] {
            assert!(Endpoint::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn transport_policy_allows_loopback_http_only() {
        assert!(server("http://localhost:8080/v1", false).is_ok());
        assert!(server("http://127.0.0.5/v1", false).is_ok());
        assert!(server("https://api.example.com/v1", false).is_ok());
        let err = server("http://api.example.com/v1", false)
            .unwrap_err()
            .to_string();
        // The command that writes the key, not a hand edit, where a setup command exists.
        assert!(
            err.contains("/d/config.toml")
                && err.contains("recall.extract.servers.main.endpoint")
                && err.contains("`cairn recall extract setup` again with --allow-http")
                && !err.contains("allow_http = true"),
            "{err}"
        );
        let far = |key: &str| {
            ServerConfig {
                endpoint: "http://api.example.com/v1".into(),
                ..Default::default()
            }
            .resolve(Path::new("/d/config.toml"), key)
            .unwrap_err()
            .to_string()
        };
        assert!(far("insights").contains("`cairn insights setup` again with --allow-http"));
        assert!(far("embeddings").contains("embeddings.allow_http = true"));
        assert!(server("http://api.example.com/v1", true).is_ok());
        // A name that merely starts like loopback is not loopback.
        assert!(server("http://127.0.0.1.example.com/v1", false).is_err());
        let err = ServerConfig {
            endpoint: "http://localhost/v1".into(),
            api_key_env: "sk-live-abc".into(),
            ..Default::default()
        }
        .resolve(Path::new("c.toml"), "k")
        .unwrap_err()
        .to_string();
        assert!(err.contains("k.api_key_env"), "{err}");
    }

    /// A key pasted where its variable's name goes is refused without being repeated, even a
    /// key too short or too plain for the redactor's rules; a real variable's name is not.
    #[test]
    fn a_key_shaped_variable_name_is_refused_and_a_real_name_is_not() {
        for name in [
            "OPENAI_API_KEY",
            "MY_KEY_2",
            "AZURE_OPENAI_API_KEY",
            "GOOGLE_GENERATIVE_AI_API_KEY",
            "CAIRN_TEST_LLM_KEY",
            "HF_TOKEN",
            "openaiKey",
            "DeepSeekApiKey2",
            "OPENROUTER_KEY_2024_06",
            "KEY_FOR_GPT4O_AND_CLAUDE35",
        ] {
            assert_eq!(key_variable_problem(name), None, "{name}");
        }
        for key in [
            "abcdEFGH1234ijklMNOP5678qrst",
            "MY_abcdEFGH1234ijklMNOP",
            "a1b2c3d4e5f6g7h8i9j0k1l2m3",
        ] {
            let why = key_variable_problem(key).unwrap_or_default();
            assert!(why.contains("looks like a key"), "{key}: {why}");
            assert!(!why.contains(&key[key.len() - 8..]), "{why}");
        }
    }

    #[test]
    fn a_timeout_past_a_day_is_refused() {
        let with = |t: &str| {
            ServerConfig {
                endpoint: "http://localhost/v1".into(),
                timeout: Some(t.into()),
                ..Default::default()
            }
            .resolve(Path::new("c.toml"), "k")
        };
        assert_eq!(with("1d").unwrap().timeout, MAX_TIMEOUT);
        for long in ["1d1ms", "106751991167d"] {
            let err = with(long).unwrap_err().to_string();
            assert!(err.contains("k.timeout") && err.contains("a day"), "{err}");
        }
    }

    #[test]
    fn redaction_hides_paths_and_query_values() {
        let e =
            Endpoint::parse("https://gw.example.com/acct-123/v1?key=abc&api-version=1").unwrap();
        assert_eq!(
            e.redacted(),
            "https://gw.example.com/REDACTED?key=REDACTED&api-version=1"
        );
        assert!(e.carries_credentials());
        let e = Endpoint::parse("http://127.0.0.1:1234/v1?api-version=2").unwrap();
        assert_eq!(e.redacted(), "http://127.0.0.1:1234/v1?api-version=2");
        assert!(!e.carries_credentials());
    }

    /// What a person typed is shown redacted whether or not it reads as a URL: a typo'd
    /// scheme or a space must not let a key through.
    #[test]
    fn a_typed_url_is_shown_redacted_whether_or_not_it_parses() {
        let token = "ghp_0123456789abcdefghijklmnopqrstuvwxyz";
        assert_eq!(
            Endpoint::shown("https://gw.example.com/acct-123/v1"),
            "https://gw.example.com/REDACTED"
        );
        for typed in [
            format!("htp:/ gw {token}"),
            format!("http://[gw?key={token}"),
        ] {
            let shown = Endpoint::shown(&typed);
            assert!(Endpoint::parse(&typed).is_err(), "{typed}");
            assert!(!shown.contains(token), "{shown}");
            assert!(shown.contains("REDACTED"), "{shown}");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30m"), Ok(1_800_000));
        assert_eq!(parse_duration("1h30m"), Ok(5_400_000));
        assert_eq!(parse_duration("-1h"), Ok(-3_600_000));
        assert_eq!(parse_duration("500ms"), Ok(500));
        assert_eq!(parse_duration("0"), Ok(0));
        assert!(parse_duration("10").is_err());
        assert!(parse_duration("1 hour").is_err());
        assert!(parse_duration("").is_err());
    }
}
