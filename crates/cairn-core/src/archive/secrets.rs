//! The table of secret patterns, as data, and the matcher compiled from it.
//!
//! In: any text (a raw JSONL line or one decoded JSON string). Out: [`RuleHit`]s — which rule
//! matched and the byte range of the *secret part* of the match (a password inside a URL, the
//! value after `aws_secret_access_key =`), never the text itself.
//!
//! Each [`SecretRule`] row has literal `anchors`, a regex `pattern` and a `test_value`. The
//! [`Matcher`] finds every anchor of every rule (plus extra anchors the caller asks for, such as
//! key names) in one Aho-Corasick pass, and the few 3-byte anchors with memmem; only rules with an
//! anchor hit run their regex, so text without anchors costs just those SIMD scans. Every regex
//! therefore has to contain one of its anchors literally — the unit tests check that on each test
//! value. Several rows may share a name (two shapes of one kind of key).
//!
//! Patterns are written to match the same secret in decoded text and in raw JSON: whitespace may
//! also be a `\n`/`\t`/`\r` escape and quotes may be `\"`, so a raw line can be checked without
//! decoding it first (see `archive::redact`, which uses this table; this module uses nothing
//! of the redactor).

use std::cell::RefCell;
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, Input, MatchKind};
use memchr::memmem;
use regex::Regex;
use serde::{Deserialize, Serialize};

/// How sure a rule is that it found a secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    Definite,
    Candidate,
}

impl Confidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Definite => "definite",
            Confidence::Candidate => "candidate",
        }
    }
}

/// Which bytes may not touch a secret's edge, so `xAKIA…` or `…EXAMPLEX` are not taken for keys.
/// Only letters and digits block: a token glued to `-` or `_` (`ghp_…-old`) is still a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    /// Anything may touch it.
    Any,
    /// No ASCII letter or digit.
    Alnum,
    /// No letter, digit, `+`, `/` or `=` (standard base64).
    Base64,
}

impl Edge {
    fn blocks(self, b: u8) -> bool {
        match self {
            Edge::Any => false,
            Edge::Alnum => b.is_ascii_alphanumeric(),
            Edge::Base64 => b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='),
        }
    }
}

/// What a rule's `check` sees of a match: the whole match and its secret part.
#[derive(Debug, Clone, Copy)]
pub struct RuleMatch<'a> {
    pub whole: &'a str,
    pub secret: &'a str,
}

/// One row of the table.
#[derive(Debug)]
pub struct SecretRule {
    /// Kebab-case name; the marker is `[REDACTED:<name>]`. Several rows may share a name.
    pub name: &'static str,
    pub confidence: Confidence,
    /// Literal prefilter strings; the rule's regex runs only when one occurs in the text.
    pub anchors: &'static [&'static str],
    /// Whether anchors (and so the key names in `pattern`) match in any ASCII case.
    pub anchors_ignore_case: bool,
    /// The regex. A named group `secret` marks the part to redact; without it, the whole match.
    pub pattern: &'static str,
    /// Bytes that may not precede the match.
    pub left: Edge,
    /// Bytes that may not follow the secret.
    pub right: Edge,
    /// Extra validation: `None` rejects the match, otherwise it gives the confidence.
    pub check: Option<fn(&RuleMatch<'_>) -> Option<Confidence>>,
    /// A fake but well-formed example the rule must detect (obviously synthetic).
    pub test_value: &'static str,
}

/// Whitespace, or its escape as found in raw JSON or escaped source text (`\n`, `\t`, `\r`,
/// with any number of backslashes: `\\n` in raw JSON is `\n` in the decoded text).
macro_rules! ws {
    () => {
        r"(?:[ \t\r\n]|\\+[nrt])"
    };
}

/// An optional quote as written in code or in raw JSON (`"`, `'`, `` ` ``, `\"`).
macro_rules! quote {
    () => {
        r#"(?:\\{0,3}["'`])?"#
    };
}

/// An assignment between a key name and its value: `=`, `:`, `:=`, `=>`, with optional quotes,
/// a closing `]` (`env["X"] = …`) and whitespace around it.
macro_rules! assign {
    () => {
        concat!(
            quote!(),
            r"\]?",
            ws!(),
            r"*(?::=|=>|[:=])",
            ws!(),
            "*",
            quote!()
        )
    };
}

/// The first segment of a Discord bot token: the bot's numeric id (17–20 digits), base64
/// encoded. Base64 of ASCII digits only uses these letters in each position of a 4-char group.
macro_rules! discord_id {
    () => {
        r"(?:[MNO][DTjz][AEIMQUYcgk][w-z0-5]){5,6}(?:[MNO][DTjz][AEIMQUYcgk]|[MNO][AQgw])?"
    };
}

/// The characters of a PEM body: base64, line breaks (real or escaped) and `Proc-Type:` headers.
macro_rules! pem_body {
    () => {
        r"[A-Za-z0-9+/=\\\s:,._-]"
    };
}

/// URL schemes of databases and brokers whose URLs carry credentials.
macro_rules! db_schemes {
    () => {
        r"(?i:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?|mssql|sqlserver)"
    };
}

static RULES: &[SecretRule] = &[
    SecretRule {
        name: "aws-access-key",
        confidence: Confidence::Definite,
        anchors: &["AKIA", "ASIA"],
        anchors_ignore_case: false,
        pattern: r"(?:AKIA|ASIA)[A-Z0-9]{16}",
        left: Edge::Alnum,
        right: Edge::Alnum,
        check: None,
        test_value: "AKIAIOSFODNN7EXAMPLE",
    },
    SecretRule {
        name: "aws-secret-key",
        confidence: Confidence::Definite,
        anchors: &["secret"],
        anchors_ignore_case: true,
        pattern: concat!(
            r"(?i:secret[_-]?access[_-]?key|aws[_-]?secret[_-]?key)",
            assign!(),
            r"(?P<secret>[A-Za-z0-9/+]{40})"
        ),
        left: Edge::Any,
        right: Edge::Base64,
        check: None,
        test_value: "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    },
    SecretRule {
        name: "anthropic-key",
        confidence: Confidence::Definite,
        anchors: &["sk-ant-"],
        anchors_ignore_case: false,
        pattern: r"sk-ant-[A-Za-z0-9_-]{32,}",
        left: Edge::Alnum,
        right: Edge::Alnum,
        check: None,
        test_value: "sk-ant-api03-EXAMPLEEXAMPLEEXAMPLE-000000000000000000000000000000000000000000000000000000000000000000000000AA",
    },
    SecretRule {
        name: "openai-key",
        confidence: Confidence::Definite,
        anchors: &["sk-proj-", "sk-svcacct-", "sk-admin-"],
        anchors_ignore_case: false,
        pattern: r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}",
        left: Edge::Alnum,
        right: Edge::Alnum,
        check: None,
        test_value: "sk-proj-EXAMPLEEXAMPLEEXAMPLE000000000000000000000000000000000000",
    },
    SecretRule {
        // The legacy shape: `sk-` and 48 letters and digits with `T3BlbkFJ` (base64 of
        // "OpenAI") in the middle. Other `sk-` strings are too common to call definite.
        name: "openai-key",
        confidence: Confidence::Definite,
        anchors: &["T3BlbkFJ"],
        anchors_ignore_case: false,
        pattern: r"sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}",
        left: Edge::Alnum,
        right: Edge::Alnum,
        check: None,
        test_value: "sk-EXAMPLE0000000000000T3BlbkFJEXAMPLE0000000000000",
    },
    SecretRule {
        name: "github-pat",
        confidence: Confidence::Definite,
        anchors: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        anchors_ignore_case: false,
        pattern: r"gh[pousr]_[A-Za-z0-9]{36}",
        left: Edge::Alnum,
        right: Edge::Alnum,
        check: None,
        test_value: "ghp_EXAMPLE00000000000000000000000000000",
    },
    SecretRule {
        name: "github-pat",
        confidence: Confidence::Definite,
        anchors: &["hub_pat_"],
        anchors_ignore_case: false,
        pattern: r"github_pat_[A-Za-z0-9_]{50,}",
        left: Edge::Alnum,
        right: Edge::Alnum,
        check: Some(check_has_digit),
        test_value: "github_pat_11EXAMPLE0000000000000000_EXAMPLE0000000000000000000000000000000000000000000000000000",
    },
    SecretRule {
        name: "gitlab-pat",
        confidence: Confidence::Definite,
        anchors: &["glpat-"],
        anchors_ignore_case: false,
        pattern: r"glpat-[A-Za-z0-9_-]{20,}",
        left: Edge::Alnum,
        right: Edge::Alnum,
        check: None,
        test_value: "glpat-EXAMPLE0000000000000",
    },
    SecretRule {
        name: "slack-token",
        confidence: Confidence::Definite,
        anchors: &["xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-"],
        anchors_ignore_case: false,
        pattern: r"xox[baprs]-[A-Za-z0-9-]{10,}",
        left: Edge::Alnum,
        right: Edge::Alnum,
        check: Some(check_has_digit),
        test_value: "xoxb-000000000000-0000000000000-EXAMPLEEXAMPLEEXAMPLE00",
    },
    SecretRule {
        // The whole URL is the credential.
        name: "slack-webhook",
        confidence: Confidence::Definite,
        anchors: &["slack.com/"],
        anchors_ignore_case: false,
        pattern: r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{20,}",
        left: Edge::Any,
        right: Edge::Any,
        check: None,
        test_value: "https://hooks.slack.com/services/T00000000/B00000000/EXAMPLEEXAMPLEEXAMPLE00",
    },
    SecretRule {
        name: "stripe-secret",
        confidence: Confidence::Definite,
        anchors: &["sk_live_", "rk_live_"],
        anchors_ignore_case: false,
        pattern: r"[sr]k_live_[A-Za-z0-9]{20,}",
        left: Edge::Alnum,
        right: Edge::Alnum,
        check: None,
        test_value: "sk_live_EXAMPLE0000000000000000000",
    },
    SecretRule {
        name: "google-api-key",
        confidence: Confidence::Definite,
        anchors: &["AIza"],
        anchors_ignore_case: false,
        pattern: r"AIza[0-9A-Za-z_-]{35}",
        left: Edge::Alnum,
        right: Edge::Alnum,
        check: None,
        test_value: "AIzaSyEXAMPLE00000000000000000000000000",
    },
    SecretRule {
        name: "npm-token",
        confidence: Confidence::Definite,
        anchors: &["npm_"],
        anchors_ignore_case: false,
        pattern: r"npm_[A-Za-z0-9]{36}",
        left: Edge::Alnum,
        right: Edge::Alnum,
        check: Some(check_has_digit),
        test_value: "npm_EXAMPLE00000000000000000000000000000",
    },
    SecretRule {
        // A PyPI macaroon: the prefix is base64 of its location, pypi.org or test.pypi.org.
        name: "pypi-token",
        confidence: Confidence::Definite,
        anchors: &["pypi-AgE"],
        anchors_ignore_case: false,
        pattern: r"pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50,}",
        left: Edge::Alnum,
        right: Edge::Alnum,
        check: None,
        test_value: "pypi-AgEIcHlwaS5vcmcEXAMPLE000000000000000000000000000000000000000000000000000000000000",
    },
    SecretRule {
        name: "huggingface-token",
        confidence: Confidence::Definite,
        anchors: &["hf_"],
        anchors_ignore_case: false,
        pattern: r"hf_[A-Za-z0-9]{30,}",
        left: Edge::Alnum,
        right: Edge::Alnum,
        check: Some(check_has_digit),
        test_value: "hf_EXAMPLE000000000000000000000000000",
    },
    SecretRule {
        name: "sendgrid-key",
        confidence: Confidence::Definite,
        anchors: &["SG."],
        anchors_ignore_case: false,
        pattern: r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}",
        left: Edge::Alnum,
        right: Edge::Alnum,
        check: None,
        test_value: "SG.EXAMPLE000000000000000.EXAMPLE000000000000000000000000000000000000",
    },
    SecretRule {
        // Twilio keys and auth tokens have no prefix of their own: only with a twilio-named key.
        name: "twilio-key",
        confidence: Confidence::Definite,
        anchors: &["twilio"],
        anchors_ignore_case: true,
        pattern: concat!(
            r"(?i:twilio)[A-Za-z0-9_.-]*",
            assign!(),
            r"(?P<secret>(?:SK|AC)?[0-9a-fA-F]{32})"
        ),
        left: Edge::Any,
        right: Edge::Alnum,
        check: None,
        test_value: "TWILIO_API_KEY=SK00000000000000000000000000000000",
    },
    SecretRule {
        // A Twilio API key SID on its own: `SK` and exactly 32 lowercase hex digits.
        name: "twilio-key",
        confidence: Confidence::Definite,
        anchors: &["SK"],
        anchors_ignore_case: false,
        pattern: r"SK[0-9a-f]{32}",
        left: Edge::Alnum,
        right: Edge::Alnum,
        check: None,
        test_value: "SK0000000000000000000000000000000e",
    },
    SecretRule {
        // `<base64 bot id>.<6>.<27+>`, with a discord-named key or after `Bot ` (its auth scheme).
        // Repetitions that the token alphabet could continue have no upper bound: a longer run
        // is redacted whole rather than rejected at the edge check.
        name: "discord-token",
        confidence: Confidence::Definite,
        anchors: &["discord", "Bot "],
        anchors_ignore_case: true,
        pattern: concat!(
            r"(?:(?i:discord)[A-Za-z0-9_.-]*",
            assign!(),
            r"|Bot",
            ws!(),
            r"+)(?P<secret>",
            discord_id!(),
            r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,})"
        ),
        left: Edge::Any,
        right: Edge::Alnum,
        check: None,
        test_value: "DISCORD_BOT_TOKEN=MTAwMDAwMDAwMDAwMDAwMDAw.EXAMPL.EXAMPLEEXAMPLEEXAMPLEEXAMPLE00",
    },
    SecretRule {
        // The body of a PEM private key, up to its END line, or to the end of a cut-off body.
        // The body stops at `-----END` alone, so a damaged END line never lengthens it.
        name: "private-key-block",
        confidence: Confidence::Definite,
        anchors: &["-----BEGIN"],
        anchors_ignore_case: false,
        pattern: concat!(
            r"-----BEGIN[ A-Z0-9]*PRIVATE KEY-----(?P<secret>",
            pem_body!(),
            r"+?)(?:-----END|[^A-Za-z0-9+/=\\\s:,._-]|$)"
        ),
        left: Edge::Any,
        right: Edge::Any,
        check: Some(check_pem_body),
        test_value: "-----BEGIN PRIVATE KEY-----\nMIIEvEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLE00000000\nEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLE0000000\n-----END PRIVATE KEY-----",
    },
    SecretRule {
        // An armored OpenPGP secret key: its armor line ends in `BLOCK-----`, and it may have
        // header lines (`Version: …`) and a checksum line (`=…`) inside the body.
        name: "private-key-block",
        confidence: Confidence::Definite,
        anchors: &["-----BEGIN"],
        anchors_ignore_case: false,
        pattern: concat!(
            r"-----BEGIN PGP PRIVATE KEY BLOCK-----(?P<secret>",
            pem_body!(),
            r"+?)(?:-----END|[^A-Za-z0-9+/=\\\s:,._-]|$)"
        ),
        left: Edge::Any,
        right: Edge::Any,
        check: Some(check_pem_body),
        test_value: "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: Example\n\nlQOYBEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLE00000000\nEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLE0000000\n=EXAM\n-----END PGP PRIVATE KEY BLOCK-----",
    },
    SecretRule {
        name: "jwt",
        confidence: Confidence::Candidate,
        anchors: &["eyJ"],
        anchors_ignore_case: false,
        pattern: r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        left: Edge::Alnum,
        right: Edge::Alnum,
        check: None,
        test_value: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJFWEFNUExFIn0.EXAMPLEsignatureEXAMPLEsignature00",
    },
    SecretRule {
        // A database or broker URL with a password: only the password is redacted.
        name: "connection-string",
        confidence: Confidence::Definite,
        anchors: &["://"],
        anchors_ignore_case: false,
        pattern: concat!(
            db_schemes!(),
            r#"://[^\s:@/?#"'<>\\]*:(?P<secret>[^\s@/?#"'<>\\]+)@"#
        ),
        left: Edge::Any,
        right: Edge::Any,
        check: Some(check_password),
        test_value: "postgres://app:EXAMPLE-pass-0000@db.example.com:5432/app",
    },
    SecretRule {
        // ADO.NET / ODBC style: `…;Password=…;`.
        name: "connection-string",
        confidence: Confidence::Definite,
        anchors: &["password", "pwd=", "pwd ="],
        anchors_ignore_case: true,
        pattern: concat!(
            r";",
            ws!(),
            r"*(?i:password|pwd)",
            ws!(),
            r"*=",
            ws!(),
            r"*(?P<secret>[^;\s\x22'\\]+)"
        ),
        left: Edge::Any,
        right: Edge::Any,
        check: Some(check_password),
        test_value: "Server=db.example.com;Database=app;User Id=app;Password=EXAMPLE-pass-0000;",
    },
    SecretRule {
        // `scheme://user:password@host`: only the password is redacted.
        name: "basic-auth-url",
        confidence: Confidence::Definite,
        anchors: &["://"],
        anchors_ignore_case: false,
        pattern: r#"[A-Za-z][A-Za-z0-9+.-]{0,20}://[^\s:@/?#"'<>\\]*:(?P<secret>[^\s@/?#"'<>\\]+)@[A-Za-z0-9\[]"#,
        left: Edge::Any,
        right: Edge::Any,
        check: Some(check_url_password),
        test_value: "https://admin:EXAMPLE-passw0rd@example.com/path",
    },
    SecretRule {
        name: "bearer-token",
        confidence: Confidence::Definite,
        anchors: &["bearer"],
        anchors_ignore_case: true,
        pattern: concat!(
            r"(?i:bearer)",
            ws!(),
            r"+(?P<secret>[A-Za-z0-9._~+/_-]{20,}=*)"
        ),
        left: Edge::Alnum,
        right: Edge::Any,
        check: Some(check_bearer),
        test_value: "Authorization: Bearer EXAMPLEtoken000000000000000000",
    },
    SecretRule {
        // DigitalOcean personal access, OAuth and refresh tokens.
        name: "digitalocean-token",
        confidence: Confidence::Definite,
        anchors: &["_v1_"],
        anchors_ignore_case: false,
        pattern: r"do[opr]_v1_[a-f0-9]{64}",
        left: Edge::Alnum,
        right: Edge::Alnum,
        check: None,
        test_value: "dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    },
    SecretRule {
        // Shopify admin API, custom app, partner and shared-secret tokens.
        name: "shopify-token",
        confidence: Confidence::Definite,
        anchors: &["shp"],
        anchors_ignore_case: false,
        pattern: r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
        left: Edge::Alnum,
        right: Edge::Alnum,
        check: None,
        test_value: "shpat_0123456789abcdef0123456789abcdef",
    },
    SecretRule {
        // An age identity: bech32, upper case.
        name: "age-secret-key",
        confidence: Confidence::Definite,
        anchors: &["SECRET"],
        anchors_ignore_case: false,
        pattern: r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        left: Edge::Alnum,
        right: Edge::Alnum,
        check: None,
        test_value: "AGE-SECRET-KEY-1QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQQQQQQQQQQQQQQQQQQQQQQQQQQ",
    },
    SecretRule {
        // Mailgun's private API key: `key-` and 32 lowercase hex digits.
        name: "mailgun-key",
        confidence: Confidence::Definite,
        anchors: &["key-"],
        anchors_ignore_case: false,
        pattern: r"key-[0-9a-f]{32}",
        left: Edge::Alnum,
        right: Edge::Alnum,
        check: None,
        test_value: "key-0123456789abcdef0123456789abcdef",
    },
    SecretRule {
        // The signature of a signed URL (an Azure SAS `sig=`, a presigned S3 or GCS URL, a
        // CloudFront `Signature=`): the URL is a credential until it expires. Percent escapes
        // (`%2B`, `%2F`, `%3D`) are part of the value.
        name: "url-signature",
        confidence: Confidence::Definite,
        anchors: &["sig=", "nature="],
        anchors_ignore_case: true,
        pattern: r"[?&](?i:sig|signature|x-amz-signature|x-goog-signature)=(?P<secret>(?:[A-Za-z0-9+/=_~.-]|%[0-9A-Fa-f]{2}){16,})",
        left: Edge::Any,
        right: Edge::Any,
        check: Some(check_has_digit),
        test_value: "https://example.blob.core.windows.net/c/b.txt?sv=2022-11-02&sp=r&se=2026-12-31T00:00:00Z&sig=EXAMPLE0000000000000000000000000000000%2B%3D",
    },
    SecretRule {
        // `curl -u user:password` (also `--user`, attached or after `=`): only the password.
        name: "cli-password",
        confidence: Confidence::Definite,
        anchors: &["curl"],
        anchors_ignore_case: false,
        pattern: concat!(
            r"curl(?-u:\b)[^\n|;&]*?",
            ws!(),
            r"(?:-u|--user)(?:",
            ws!(),
            r"+|=)?",
            quote!(),
            r#"[^\s:'"\\]*:(?P<secret>[^\s'"\\,;()\[\]{}<>]+)"#
        ),
        left: Edge::Alnum,
        right: Edge::Any,
        check: Some(check_cli_password),
        test_value: "curl -s -u admin:EXAMPLE-pass-0000 https://example.com/api",
    },
    SecretRule {
        // `mysql -pPASSWORD` (and `mysqldump`, `mysqladmin`…): the password is glued to `-p`;
        // `-p` alone (or followed by a space) prompts for it.
        name: "cli-password",
        confidence: Confidence::Definite,
        anchors: &["mysql"],
        anchors_ignore_case: false,
        pattern: concat!(
            r"mysql[a-z]*(?-u:\b)[^\n|;&]*?",
            ws!(),
            r"-p",
            quote!(),
            r#"(?P<secret>[^\s'"\\,;()\[\]{}<>]+)"#
        ),
        left: Edge::Alnum,
        right: Edge::Any,
        check: Some(check_cli_password),
        test_value: "mysql -u root -pEXAMPLE-pass-0000 -h db.example.com app",
    },
    SecretRule {
        // `sshpass -p PASSWORD ssh …`: among sshpass's own options, before the command.
        name: "cli-password",
        confidence: Confidence::Definite,
        anchors: &["sshpass"],
        anchors_ignore_case: false,
        pattern: concat!(
            r"sshpass(?:",
            ws!(),
            r"+-(?:[fdP]",
            ws!(),
            r#"*[^\s'"\\]+|[evhV]))*"#,
            ws!(),
            r"+-p",
            ws!(),
            r"*",
            quote!(),
            r#"(?P<secret>[^\s'"\\,;()\[\]{}<>]+)"#
        ),
        left: Edge::Alnum,
        right: Edge::Any,
        check: Some(check_password),
        test_value: "sshpass -p EXAMPLE-pass-0000 ssh deploy@example.com",
    },
    SecretRule {
        // A `.netrc` entry: `machine HOST login USER password PASSWORD` (or `default login …`).
        name: "netrc-password",
        confidence: Confidence::Definite,
        anchors: &["password"],
        anchors_ignore_case: false,
        pattern: concat!(
            r"(?:machine",
            ws!(),
            r"+[^\s\\]+|default)",
            ws!(),
            r"+login",
            ws!(),
            r"+[^\s\\]+(?:",
            ws!(),
            r"+account",
            ws!(),
            r"+[^\s\\]+)?",
            ws!(),
            r"+password",
            ws!(),
            r#"+(?P<secret>[^\s'"\\,;()\[\]{}<>]+)"#
        ),
        left: Edge::Alnum,
        right: Edge::Any,
        check: Some(check_password),
        test_value: "machine api.example.com login deploy password EXAMPLE-pass-0000",
    },
];

// The matcher keeps the rules that hit in a u64 bit set.
const _: () = assert!(RULES.len() <= 64);

/// The rule table.
pub fn rules() -> &'static [SecretRule] {
    RULES
}

fn check_has_digit(m: &RuleMatch<'_>) -> Option<Confidence> {
    m.secret
        .bytes()
        .any(|b| b.is_ascii_digit())
        .then_some(Confidence::Definite)
}

/// A real key body is long; a lone `BEGIN … PRIVATE KEY` line in an explanation is not a key.
fn check_pem_body(m: &RuleMatch<'_>) -> Option<Confidence> {
    let alnum = m.secret.bytes().filter(u8::is_ascii_alphanumeric).count();
    (alnum >= 40).then_some(Confidence::Definite)
}

/// Tokens have digits and letters. (Checks must stay false on every prefix of a rejected match,
/// or a second pass over the redacted text could accept what the first rejected.)
fn check_bearer(m: &RuleMatch<'_>) -> Option<Confidence> {
    let s = m.secret;
    let ok = s.bytes().any(|b| b.is_ascii_digit()) && s.bytes().any(|b| b.is_ascii_alphabetic());
    ok.then_some(Confidence::Definite)
}

/// True for template syntax and masks that stand in for a password in docs and configs.
pub fn is_template_placeholder(v: &str) -> bool {
    let v = v.trim();
    let b = v.as_bytes();
    let Some(&first) = b.first() else { return true };
    matches!(first, b'$' | b'%' | b'<' | b'{' | b'[')
        || v.contains("{{")
        || v.contains("${")
        || v.contains("***")
        || v.contains("...")
        || v.contains('\u{2026}')
        || v.contains("[REDACTED")
        || v.chars()
            .all(|c| matches!(c, '*' | 'x' | 'X' | '.' | '#' | '-' | '_' | '\u{2022}'))
}

/// Passwords that are ordinary words of docs and dev setups: kept as candidates, not definite.
fn is_weak_password(v: &str) -> bool {
    const WEAK: &[&str] = &[
        "password", "passwd", "pass", "secret", "changeme", "admin", "root", "postgres", "mysql",
        "user", "test", "example", "guest", "pw", "pwd",
    ];
    let lower = v.to_ascii_lowercase();
    v.len() < 6 || WEAK.contains(&lower.as_str())
}

fn check_password(m: &RuleMatch<'_>) -> Option<Confidence> {
    if is_template_placeholder(m.secret) {
        return None;
    }
    Some(if is_weak_password(m.secret) {
        Confidence::Candidate
    } else {
        Confidence::Definite
    })
}

/// The longest command `cli-password` reads a password from.
const MAX_COMMAND: usize = 300;

/// A command's password flag belongs to it only within one short command line (the pattern
/// stops at a newline, `|`, `;` or `&`; a bound in the pattern itself makes its automaton
/// large).
fn check_cli_password(m: &RuleMatch<'_>) -> Option<Confidence> {
    if m.whole.len() > MAX_COMMAND {
        return None;
    }
    check_password(m)
}

fn check_url_password(m: &RuleMatch<'_>) -> Option<Confidence> {
    const WEB: &[&str] = &[
        "http",
        "https",
        "ftp",
        "ftps",
        "sftp",
        "smtp",
        "smtps",
        "imap",
        "imaps",
        "pop3",
        "ldap",
        "ldaps",
        "ssh",
        "git",
        "git+https",
        "git+ssh",
        "svn",
        "ws",
        "wss",
        "socks5",
        "postgres",
        "postgresql",
        "mysql",
        "mariadb",
        "mongodb",
        "mongodb+srv",
        "redis",
        "rediss",
        "amqp",
        "amqps",
        "mssql",
        "sqlserver",
    ];
    let secret = m.secret;
    // `host:8080@…` is a port, not a password.
    if secret.len() <= 5 && secret.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let confidence = check_password(m)?;
    let scheme = m
        .whole
        .split("://")
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    if WEB.contains(&scheme.as_str()) {
        Some(confidence)
    } else {
        Some(Confidence::Candidate)
    }
}

/// True when the byte just before `i` is the letter of a `\n`-style escape (`\n`, `\r`, `\t`,
/// `\b`, `\f`). In raw JSON that letter is really a control character, so it is a boundary.
pub(crate) fn escape_letter_before(b: &[u8], i: usize) -> bool {
    i >= 2 && b[i - 2] == b'\\' && matches!(b[i - 1], b'n' | b'r' | b't' | b'b' | b'f')
}

/// Whether byte `i` is inside the rule name of a `[REDACTED:<rule>]` marker.
fn inside_marker(b: &[u8], i: usize) -> bool {
    let name = b[..i]
        .iter()
        .rev()
        .take_while(|&&c| c.is_ascii_lowercase() || c == b'-')
        .count();
    b[..i - name].ends_with(b"[REDACTED:")
}

/// One match of a rule: the byte range of its secret part in the scanned text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleHit {
    /// Index into [`rules`].
    pub rule: usize,
    pub name: &'static str,
    pub confidence: Confidence,
    pub start: usize,
    pub end: usize,
}

#[derive(Debug, Clone, Copy)]
enum Target {
    Rule(usize),
    Extra(usize),
}

#[derive(Debug, Clone, Copy)]
struct AnchorTarget {
    target: Target,
    /// For case-sensitive anchors: the exact bytes (the automaton runs on lowercased text).
    exact: Option<&'static [u8]>,
}

/// Anchors shorter than this are searched in a separate case-sensitive pass: Teddy, the
/// automaton's SIMD prefilter, is much faster when every pattern gives a 4-byte fingerprint.
const SHORT_ANCHOR: usize = 4;

/// The rule table compiled: one Aho-Corasick automaton over every anchor, and the regexes
/// (each compiled the first time its anchor is seen: compiling all of them took half of a
/// `cairn hook` process's instructions, and most hooks meet no anchor at all).
///
/// The automaton holds the lowercased anchors of 4+ bytes and runs over a lowercased copy of
/// the text (kept in a reused per-thread buffer), so one pass serves case-sensitive and
/// case-insensitive anchors alike; case-sensitive hits are checked against the original bytes.
/// The few 2- and 3-byte anchors (`://`, `eyJ`, `hf_`, `SG.`, `shp`, …) each get a memmem pass on
/// the original. Teddy handles at most 64 automaton patterns; past that the automaton runs
/// without it, several times slower (a unit test of the redactor keeps the count in bounds).
#[derive(Debug)]
pub struct Matcher {
    /// `None` only if the automaton could not be built; then every rule runs on every text.
    ac: Option<AhoCorasick>,
    /// Per automaton pattern: everything it stands for (also anchors it contains, which a
    /// leftmost-longest search would not report at the same position).
    targets: Vec<Vec<AnchorTarget>>,
    /// Short anchors, searched case-sensitively in the original text, and the rules each fires.
    short: Vec<(memmem::Finder<'static>, Vec<usize>)>,
    /// `None` for a pattern that does not compile (a unit test makes sure none does).
    regexes: Vec<OnceLock<Option<Regex>>>,
}

thread_local! {
    static LOWER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

impl Matcher {
    /// Compile the table. `extra` anchors (4+ bytes, matched in any case) are reported to the
    /// caller of [`Matcher::find`] with their index in `extra`, in the same pass.
    pub fn new(extra: &[&'static str]) -> Matcher {
        let mut anchors: Vec<(&'static str, AnchorTarget)> = Vec::new();
        let mut short_text: Vec<&'static str> = Vec::new();
        let mut short_rules: Vec<Vec<usize>> = Vec::new();
        for (i, rule) in RULES.iter().enumerate() {
            for &a in rule.anchors {
                if a.len() < SHORT_ANCHOR {
                    match short_text.iter().position(|&t| t == a) {
                        Some(k) => short_rules[k].push(i),
                        None => {
                            short_text.push(a);
                            short_rules.push(vec![i]);
                        }
                    }
                    continue;
                }
                let exact = (!rule.anchors_ignore_case).then_some(a.as_bytes());
                anchors.push((
                    a,
                    AnchorTarget {
                        target: Target::Rule(i),
                        exact,
                    },
                ));
            }
        }
        for (j, &a) in extra.iter().enumerate() {
            anchors.push((
                a,
                AnchorTarget {
                    target: Target::Extra(j),
                    exact: None,
                },
            ));
        }
        let mut patterns: Vec<String> = anchors
            .iter()
            .map(|(a, _)| a.to_ascii_lowercase())
            .collect();
        patterns.sort();
        patterns.dedup();
        let targets = patterns
            .iter()
            .map(|p| {
                anchors
                    .iter()
                    .filter(|(a, _)| p.contains(&a.to_ascii_lowercase()))
                    .map(|&(_, t)| t)
                    .collect()
            })
            .collect();
        let ac = AhoCorasickBuilder::new()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&patterns)
            .ok();
        let short = short_text
            .iter()
            .zip(short_rules)
            .map(|(t, r)| (memmem::Finder::new(t.as_bytes()), r))
            .collect();
        let regexes = RULES.iter().map(|_| OnceLock::new()).collect();
        Matcher {
            ac,
            targets,
            short,
            regexes,
        }
    }

    /// How many patterns the automaton holds (anchors of 4+ bytes, lowercased, deduplicated).
    pub fn automaton_patterns(&self) -> usize {
        self.targets.len()
    }

    /// Find every rule match in `s` (pushed to `hits`) and report every extra anchor occurrence
    /// to `extra` as `(index, start, end)`, in order of position.
    pub fn find(
        &self,
        s: &str,
        hits: &mut Vec<RuleHit>,
        extra: &mut dyn FnMut(usize, usize, usize),
    ) {
        let b = s.as_bytes();
        let mut fired: u64 = 0;
        for (finder, rules) in &self.short {
            if finder.find(b).is_some() {
                for &i in rules {
                    fired |= 1 << i;
                }
            }
        }
        match &self.ac {
            Some(ac) => {
                let mut scan = |lower: &[u8]| {
                    let mut at = 0;
                    while let Some(m) = ac.find(Input::new(lower).span(at..lower.len())) {
                        // Restart just after the hit's start, so anchors overlapping it are seen.
                        at = m.start() + 1;
                        let Some(targets) = self.targets.get(m.pattern().as_usize()) else {
                            continue;
                        };
                        for t in targets {
                            if let Some(e) = t.exact {
                                let found = b[m.start()..m.end()].windows(e.len()).any(|w| w == e);
                                if !found {
                                    continue;
                                }
                            }
                            match t.target {
                                Target::Rule(i) => fired |= 1 << i,
                                Target::Extra(j) => extra(j, m.start(), m.end()),
                            }
                        }
                    }
                };
                // The per-thread buffer avoids an allocation per line; fall back to a fresh one
                // if it is somehow in use.
                LOWER.with(|cell| match cell.try_borrow_mut() {
                    Ok(mut buf) => {
                        buf.clear();
                        buf.extend(b.iter().map(u8::to_ascii_lowercase));
                        scan(&buf);
                        // Do not keep a huge line's buffer for the life of the thread.
                        if buf.capacity() > 1 << 20 {
                            *buf = Vec::new();
                        }
                    }
                    Err(_) => scan(&s.to_ascii_lowercase().into_bytes()),
                });
            }
            None => fired = u64::MAX,
        }
        let mut bits = fired;
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            self.run_rule(i, s, hits);
        }
    }

    fn run_rule(&self, i: usize, s: &str, hits: &mut Vec<RuleHit>) {
        let (Some(rule), Some(slot)) = (RULES.get(i), self.regexes.get(i)) else {
            return;
        };
        let Some(re) = slot.get_or_init(|| Regex::new(rule.pattern).ok()) else {
            return;
        };
        let b = s.as_bytes();
        let mut at = 0;
        // `find_at` does not allocate; captures are read only for actual matches.
        while let Some(found) = re.find_at(s, at) {
            // A rejected match may hide a good one starting inside it (`…AAeyJ…` then `.eyJ…`),
            // so the search resumes just after its start, not after its end.
            let retry = s[found.start()..]
                .chars()
                .next()
                .map_or(s.len(), |c| found.start() + c.len_utf8());
            at = retry;
            let Some(caps) = re.captures_at(s, found.start()) else {
                continue;
            };
            let Some(whole) = caps.get(0) else { continue };
            let secret = caps.name("secret").unwrap_or(whole);
            if secret.is_empty() {
                continue;
            }
            let start = whole.start();
            if start > 0 && rule.left.blocks(b[start - 1]) && !escape_letter_before(b, start) {
                continue;
            }
            // The rule name in a marker (`[REDACTED:discord-token]=…`) is no context for a key.
            if inside_marker(b, start) {
                continue;
            }
            if b.get(secret.end()).is_some_and(|&c| rule.right.blocks(c)) {
                continue;
            }
            let m = RuleMatch {
                whole: whole.as_str(),
                secret: secret.as_str(),
            };
            let confidence = match rule.check {
                Some(check) => check(&m),
                None => Some(rule.confidence),
            };
            if let Some(confidence) = confidence {
                hits.push(RuleHit {
                    rule: i,
                    name: rule.name,
                    confidence,
                    start: secret.start(),
                    end: secret.end(),
                });
                if rule.name == "cli-password" {
                    more_in_command(
                        re,
                        i,
                        s,
                        (whole.start(), secret.start(), secret.end()),
                        hits,
                    );
                }
                at = whole.end().max(retry);
            }
        }
    }
}

/// The passwords after the first in one command (`mysql -u u -pA -pB`, found by the `redact`
/// fuzz target): the search resumes after a match, where the command's name no longer precedes
/// the next one, so each took a round of `Redactor::close` and a sixth stayed in the clear. Each
/// password found is blanked out in a copy of the command (at most its 300 bytes) and the command
/// matched again from its start.
fn more_in_command(
    re: &Regex,
    i: usize,
    s: &str,
    (start, mut a, mut z): (usize, usize, usize),
    hits: &mut Vec<RuleHit>,
) {
    let Some(rule) = RULES.get(i) else { return };
    let mut command =
        s[start..super::sources::floor_char_boundary(s, start + MAX_COMMAND)].to_owned();
    // Each round blanks one more password, so the command's passwords bound the rounds.
    while z - start <= command.len() {
        // `(` is in no password, and no command's options stop at it (a space would let
        // `sshpass -p  ssh host` take `ssh` for the password).
        command.replace_range(a - start..z - start, &"(".repeat(z - a));
        let Some(caps) = re.captures(&command) else {
            return;
        };
        let (Some(whole), Some(secret)) = (caps.get(0), caps.name("secret")) else {
            return;
        };
        // A password the copy cuts is no password of a command this short.
        let cut = secret.end() == command.len() && start + command.len() < s.len();
        if whole.start() != 0
            || cut
            || s.as_bytes()
                .get(start + secret.end())
                .is_some_and(|&c| rule.right.blocks(c))
        {
            return;
        }
        let m = RuleMatch {
            whole: &s[start..start + whole.end()],
            secret: &s[start + secret.start()..start + secret.end()],
        };
        let Some(confidence) = rule.check.map_or(Some(rule.confidence), |check| check(&m)) else {
            return;
        };
        (a, z) = (start + secret.start(), start + secret.end());
        hits.push(RuleHit {
            rule: i,
            name: rule.name,
            confidence,
            start: a,
            end: z,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(s: &str) -> Vec<RuleHit> {
        let m = Matcher::new(&[]);
        let mut hits = Vec::new();
        m.find(s, &mut hits, &mut |_, _, _| {});
        hits
    }

    #[test]
    fn every_pattern_compiles() {
        for r in rules() {
            assert!(Regex::new(r.pattern).is_ok(), "{}: {}", r.name, r.pattern);
        }
    }

    #[test]
    fn names_are_kebab_case_and_rows_have_anchors() {
        for r in rules() {
            assert!(!r.anchors.is_empty(), "{}", r.name);
            // short anchors are searched case-sensitively
            assert!(
                r.anchors
                    .iter()
                    .all(|a| a.len() >= SHORT_ANCHOR || !r.anchors_ignore_case),
                "{}",
                r.name
            );
            assert!(
                r.name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'),
                "{}",
                r.name
            );
        }
    }

    #[test]
    fn every_test_value_is_found_by_its_own_row_and_contains_an_anchor() {
        for (i, r) in rules().iter().enumerate() {
            let hits = find(r.test_value);
            assert!(
                hits.iter().any(|h| h.rule == i),
                "{} not found in its test value",
                r.name
            );
            let lower = r.test_value.to_ascii_lowercase();
            let anchored = r.anchors.iter().any(|a| {
                if r.anchors_ignore_case {
                    lower.contains(&a.to_ascii_lowercase())
                } else {
                    r.test_value.contains(a)
                }
            });
            assert!(anchored, "{}: test value has none of its anchors", r.name);
        }
    }

    #[test]
    fn secret_part_is_only_the_value() {
        let s = "postgres://app:EXAMPLE-pass-0000@db.example.com:5432/app";
        let hits = find(s);
        let h = hits.iter().find(|h| h.name == "connection-string").unwrap();
        assert_eq!(&s[h.start..h.end], "EXAMPLE-pass-0000");
        let s = "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
        let h = find(s)
            .into_iter()
            .find(|h| h.name == "aws-secret-key")
            .unwrap();
        assert_eq!(
            &s[h.start..h.end],
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
        );
    }

    #[test]
    fn boundaries_reject_embedded_look_alikes() {
        assert!(find("xAKIAIOSFODNN7EXAMPLE").is_empty());
        assert!(find("AKIAIOSFODNN7EXAMPLEX").is_empty());
        assert!(find("the task-runner and disk-usage").is_empty());
        // but a `\n` escape in raw JSON is a boundary
        assert_eq!(find(r"line\nAKIAIOSFODNN7EXAMPLE").len(), 1);
    }

    #[test]
    fn legacy_openai_key_needs_exact_shape() {
        let good = "sk-EXAMPLE0000000000000T3BlbkFJEXAMPLE0000000000000";
        assert_eq!(find(good).len(), 1);
        assert!(find(&format!("{good}0")).is_empty());
        assert!(find("sk-abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuv").is_empty());
        assert!(find("sk-aBcdefghijklmnopqrst4vwxyzabcdefghijklmnopqrstuv").is_empty());
    }

    #[test]
    fn pem_key_with_escaped_newlines_and_cut_off_bodies() {
        let escaped = r"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLE\nEXAMPLEEXAMPLE0000\n-----END RSA PRIVATE KEY-----\n";
        let hits = find(escaped);
        assert_eq!(hits.len(), 1);
        assert!(escaped[hits[0].end..].starts_with("-----END"));
        let cut = "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\"";
        let hits = find(cut);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].end, cut.len() - 1);
        // an explanation that mentions the header is not a key
        assert!(find("files start with -----BEGIN PRIVATE KEY----- and end with -----END PRIVATE KEY-----").is_empty());
    }

    #[test]
    fn url_passwords_grade_by_scheme_and_strength() {
        let conf = |s: &str| find(s).first().map(|h| h.confidence);
        assert_eq!(
            conf("https://bob:Str0ng-Pa55@example.com"),
            Some(Confidence::Definite)
        );
        assert_eq!(
            conf("postgres://postgres:postgres@localhost/db"),
            Some(Confidence::Candidate)
        );
        assert_eq!(
            conf("custom://bob:Str0ng-Pa55@example.com"),
            Some(Confidence::Candidate)
        );
        assert_eq!(conf("postgres://user:${DB_PASSWORD}@localhost/db"), None);
        assert_eq!(conf("http://example.com:8080@x"), None);
        assert_eq!(conf("see https://example.com/a:b@c"), None);
    }

    #[test]
    fn command_line_passwords_belong_to_their_command() {
        let secret = |s: &str| {
            find(s)
                .iter()
                .find(|h| h.name == "cli-password")
                .map(|h| s[h.start..h.end].to_owned())
        };
        assert_eq!(
            secret("curl --user=ops:S3cret-pw https://x").as_deref(),
            Some("S3cret-pw")
        );
        assert_eq!(
            secret("curl -uops:S3cret-pw https://x").as_deref(),
            Some("S3cret-pw")
        );
        assert_eq!(
            secret("mysqldump -uroot -p'S3cret-pw' app").as_deref(),
            Some("S3cret-pw")
        );
        assert_eq!(
            secret("sshpass -f ~/.pw -p S3cret-pw ssh host").as_deref(),
            Some("S3cret-pw")
        );
        for clean in [
            "curl -u ops https://x",             // prompts for the password
            "curl -u \"$USER:$PASS\" https://x", // placeholders
            "mysql -u root -p app",              // prompts
            "mysql -u root -P3306 app",          // a port
            "curl https://x | grep -u a:b",      // another command
            "sshpass -e ssh -p 2222 host",       // ssh's port, not sshpass's password
        ] {
            assert_eq!(secret(clean), None, "{clean}");
        }
        let far = format!("curl https://x {} -u ops:S3cret-pw", "a".repeat(400));
        assert_eq!(secret(&far), None);
    }

    #[test]
    fn discord_token_needs_context_and_shape() {
        let t = "MTAwMDAwMDAwMDAwMDAwMDAw.EXAMPL.EXAMPLEEXAMPLEEXAMPLEEXAMPLE00";
        assert_eq!(find(&format!("Authorization: Bot {t}")).len(), 1);
        assert!(find(&format!("token {t}")).is_empty());
        assert!(
            find(
                "discord_token = QWxhZGRpbjpvcGVuIHNlc2FtZQ.abcdef.EXAMPLEEXAMPLEEXAMPLEEXAMPLE00"
            )
            .is_empty()
        );
    }
}
