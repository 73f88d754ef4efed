//! The published-session document: what `cairn publish` writes as `session.json` under
//! `refs/cairn/sessions/<session_key>`, and what `cairn pull` accepts from a teammate.
//!
//! The types here are both the allowlist of what leaves (nothing of a session that is not a
//! field here is ever written) and the strict schema of what arrives: unknown fields refused,
//! sizes capped ([`limits`]), keys, commits and target keys of the right shape, timestamps
//! RFC 3339, labels from Cairn's own vocabulary. A document that fails any check is refused
//! whole ([`PublishedSession::check`]); one that passes becomes a skim session marked
//! `untrusted`, its `status` set here (never read from the document) and every text cleaned
//! ([`crate::text::printable`]).

use serde::{Deserialize, Serialize};

use crate::archive::Agent;
use crate::git::associate::Evidence;
use crate::text::{excerpt, is_bidi_control, printable};

/// Every label skim gives a turn (`views::skim`), in its order: a published document may hold
/// no other.
pub const LABELS: [&str; 8] = [
    "implemented",
    "decided",
    "reviewed",
    "tested",
    "renamed",
    "installed",
    "committed",
    "next",
];

/// Schema of a published document.
pub const DOCUMENT_SCHEMA: &str = "cairn.published-session.v1";

/// What a document may hold. Publishing keeps within them (texts are cut, the oldest turns
/// left out); importing refuses a document that does not.
pub mod limits {
    /// Bytes of one `session.json`.
    pub const DOCUMENT_BYTES: u64 = 2 * 1024 * 1024;
    /// New or changed documents one pull imports (the rest wait for the next pull).
    pub const DOCUMENTS_PER_PULL: usize = 2000;
    /// Bytes of all the documents one pull reads.
    pub const PULL_BYTES: u64 = 64 * 1024 * 1024;
    /// Turns of one session.
    pub const TURNS: usize = 1000;
    /// Characters of a title, project, preview or reason.
    pub const TEXT_CHARS: usize = 1000;
    /// Previews of a session or of a turn (`user: …`, `assistant: …`).
    pub const PREVIEWS: usize = 4;
    /// Reasons a session is related (skim keeps the strongest 8).
    pub const WHY_RELATED: usize = 8;
    /// Tool names of a turn, and characters of each.
    pub const TOOL_NAMES: usize = 64;
    pub const TOOL_NAME_CHARS: usize = 128;
    /// Target keys of a document, and characters of each.
    pub const TARGET_KEYS: usize = 64;
    pub const TARGET_KEY_CHARS: usize = 512;
}

/// A published document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct PublishedSession {
    pub schema: String,
    pub published_at: String,
    /// Target keys this session was related to when published.
    pub target_keys: Vec<String>,
    pub session: DocSession,
}

/// The agent a published document names: one this build knows, or the plain name of one it
/// does not (a teammate's newer Cairn reads more agents), kept so the session is shown by that
/// name ([`crate::agent::stored`]) rather than refused. A name that is not plain (control or
/// bidi characters, markup, over [`crate::agent::MAX_RAN_BY_CHARS`]) still refuses the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocAgent {
    Known(Agent),
    Named(String),
}

impl DocAgent {
    /// The agent the session is read as: `atif` for a name this build does not know.
    pub fn agent(&self) -> Agent {
        match self {
            DocAgent::Known(agent) => *agent,
            DocAgent::Named(_) => Agent::Atif,
        }
    }

    /// The name the document gives it.
    pub fn as_str(&self) -> &str {
        match self {
            DocAgent::Known(agent) => agent.as_str(),
            DocAgent::Named(name) => name,
        }
    }

    /// The name it is shown by when that is not [`DocAgent::agent`]'s.
    pub fn ran_by(&self) -> Option<String> {
        match self {
            DocAgent::Known(_) => None,
            DocAgent::Named(name) => Some(name.clone()),
        }
    }
}

impl Serialize for DocAgent {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for DocAgent {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<DocAgent, D::Error> {
        let name = String::deserialize(d)?;
        // Exactly an agent's own name: aliases are the agents' spellings, not Cairn's.
        if let Some(agent) = Agent::EVERY.into_iter().find(|a| a.as_str() == name) {
            return Ok(DocAgent::Known(agent));
        }
        match crate::agent::stored(&name, None) {
            (_, Some(shown)) if shown == name => Ok(DocAgent::Named(shown)),
            _ => Err(serde::de::Error::custom(
                "agent is not a plain lower-case name",
            )),
        }
    }
}

/// A session as published: the fields of a skim session that may leave the machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct DocSession {
    pub session_key: String,
    /// Always `published` when written, for readers of the first schema; never read: an
    /// imported session's status is set on import.
    #[serde(default)]
    pub status: String,
    #[cfg_attr(feature = "specta", specta(type = String))]
    pub agent: DocAgent,
    pub title: Option<String>,
    pub project: Option<String>,
    pub started_at: Option<String>,
    pub updated_at: Option<String>,
    pub turn_count: u32,
    pub record_count: u32,
    pub related_turn_count: u32,
    pub weak: bool,
    pub why_related: Vec<DocWhy>,
    pub previews: Vec<String>,
    pub turns: Vec<DocTurn>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct DocWhy {
    pub evidence: Evidence,
    pub confidence: f64,
    pub target_key: String,
    pub turn_key: Option<String>,
    pub turn_index: Option<u32>,
    pub ordinal: Option<u32>,
    pub commit: Option<String>,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct DocTurn {
    pub turn_key: String,
    pub turn_index: u32,
    pub started_at: Option<String>,
    pub related: bool,
    pub record_count: u32,
    pub tool_call_count: u32,
    pub tool_names: Vec<String>,
    pub labels: Vec<String>,
    pub previews: Vec<String>,
}

/// `sha256-` and 32 lowercase hex digits: a session or turn key ([`crate::keys`]).
pub fn is_key(s: &str) -> bool {
    s.strip_prefix("sha256-")
        .is_some_and(|h| h.len() == 32 && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
}

/// A commit id: 7 to 64 lowercase hex digits.
fn is_commit(s: &str) -> bool {
    (7..=64).contains(&s.len()) && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A target key as Cairn writes them ([`crate::git::targets`]): a known prefix, bounded, and
/// no control or bidi character.
fn is_target_key(s: &str) -> bool {
    [
        "ref:",
        "pull-request:",
        "gitbutler-review:",
        "gitbutler-change:",
    ]
    .iter()
    .any(|p| s.len() > p.len() && s.starts_with(p))
        && s.chars().count() <= limits::TARGET_KEY_CHARS
        && !s.chars().any(|c| c.is_control() || is_bidi_control(c))
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

/// Why a document was refused: one line, no text of the document in it but what was checked
/// to be harmless (keys, counts).
type Refusal = String;

fn check_time(field: &str, t: Option<&str>) -> Result<(), Refusal> {
    match t {
        Some(t) if crate::text::parse_rfc3339(t).is_none() => {
            Err(format!("{field} is not an RFC 3339 timestamp"))
        }
        _ => Ok(()),
    }
}

fn check_text(field: &str, t: &str) -> Result<(), Refusal> {
    if chars(t) > limits::TEXT_CHARS {
        return Err(format!(
            "{field} is longer than {} characters",
            limits::TEXT_CHARS
        ));
    }
    Ok(())
}

fn check_count(field: &str, n: usize, max: usize) -> Result<(), Refusal> {
    if n > max {
        return Err(format!("{n} {field}, more than {max}"));
    }
    Ok(())
}

impl PublishedSession {
    /// Every check a teammate's document must pass, for the ref named by `ref_key` (the last
    /// component of its ref name). Sizes in bytes are checked before parsing.
    pub fn check(&self, ref_key: &str) -> Result<(), Refusal> {
        if self.schema != DOCUMENT_SCHEMA {
            return Err(format!(
                "schema is not {DOCUMENT_SCHEMA} (a newer Cairn? update to read it)"
            ));
        }
        let s = &self.session;
        if !is_key(&s.session_key) {
            return Err("session_key is not sha256- and 32 hex digits".to_owned());
        }
        if s.session_key != ref_key {
            return Err(format!(
                "session_key {} is not the ref's own key",
                s.session_key
            ));
        }
        if crate::text::parse_rfc3339(&self.published_at).is_none() {
            return Err("published_at is not an RFC 3339 timestamp".to_owned());
        }
        check_count("target keys", self.target_keys.len(), limits::TARGET_KEYS)?;
        if !self.target_keys.iter().all(|k| is_target_key(k)) {
            return Err("a target key is not ref:, pull-request:, gitbutler-review: or gitbutler-change: followed by printable text".to_owned());
        }
        check_time("started_at", s.started_at.as_deref())?;
        check_time("updated_at", s.updated_at.as_deref())?;
        for (field, t) in [("title", &s.title), ("project", &s.project)] {
            if let Some(t) = t {
                check_text(field, t)?;
            }
        }
        check_count("previews", s.previews.len(), limits::PREVIEWS)?;
        for p in &s.previews {
            check_text("a preview", p)?;
        }
        check_count("reasons", s.why_related.len(), limits::WHY_RELATED)?;
        for w in &s.why_related {
            if !(w.confidence.is_finite() && (0.0..=1.0).contains(&w.confidence)) {
                return Err("a confidence is not between 0 and 1".to_owned());
            }
            if !is_target_key(&w.target_key) {
                return Err("a reason's target key is malformed".to_owned());
            }
            if w.turn_key.as_deref().is_some_and(|k| !is_key(k)) {
                return Err("a reason's turn_key is not sha256- and 32 hex digits".to_owned());
            }
            if w.commit.as_deref().is_some_and(|c| !is_commit(c)) {
                return Err("a reason's commit is not 7 to 64 hex digits".to_owned());
            }
            check_text("a reason", &w.reason)?;
        }
        check_count("turns", s.turns.len(), limits::TURNS)?;
        for t in &s.turns {
            if !is_key(&t.turn_key) {
                return Err("a turn_key is not sha256- and 32 hex digits".to_owned());
            }
            check_time("a turn's started_at", t.started_at.as_deref())?;
            check_count("tool names", t.tool_names.len(), limits::TOOL_NAMES)?;
            if t.tool_names
                .iter()
                .any(|n| chars(n) > limits::TOOL_NAME_CHARS)
            {
                return Err(format!(
                    "a tool name is longer than {} characters",
                    limits::TOOL_NAME_CHARS
                ));
            }
            check_count("labels", t.labels.len(), LABELS.len())?;
            if !t.labels.iter().all(|l| LABELS.contains(&l.as_str())) {
                return Err(format!("a label is not one of {}", LABELS.join(", ")));
            }
            check_count("previews of a turn", t.previews.len(), limits::PREVIEWS)?;
            for p in &t.previews {
                check_text("a turn's preview", p)?;
            }
        }
        Ok(())
    }

    /// The document as stored after [`check`](Self::check): times in the form Cairn stores
    /// ([`crate::text::rfc3339`]), every text cleaned and redacted (a teammate's Cairn redacted
    /// what it published, but what arrives is anyone's text: no secret is stored or shown
    /// here), `status` as Cairn writes it.
    pub fn normalised(mut self) -> PublishedSession {
        let time = |t: &mut Option<String>| {
            *t = t
                .as_deref()
                .and_then(crate::text::rfc3339)
                .map(|t| t.into_owned());
        };
        self.published_at = crate::text::rfc3339(&self.published_at)
            .map(|t| t.into_owned())
            .unwrap_or_default();
        let s = &mut self.session;
        s.status = "published".to_owned();
        time(&mut s.started_at);
        time(&mut s.updated_at);
        let clean = |t: &mut String| {
            *t =
                crate::archive::redact::Redactor::global().redact_printable(t, "", &mut Vec::new());
        };
        for t in [&mut s.title, &mut s.project].into_iter().flatten() {
            clean(t);
        }
        s.previews.iter_mut().for_each(clean);
        for w in &mut s.why_related {
            clean(&mut w.reason);
        }
        for t in &mut s.turns {
            time(&mut t.started_at);
            t.tool_names.iter_mut().for_each(clean);
            t.previews.iter_mut().for_each(clean);
        }
        self
    }

    /// A document for `publish` to write from a session's allowlisted fields (already through
    /// the outbound redactor): texts cleaned and cut to [`limits::TEXT_CHARS`], at most
    /// [`limits::TURNS`] turns (the latest), and no target key or reason a teammate's check
    /// would refuse (a branch name holding a control character, say).
    pub fn new(
        s: DocSession,
        mut target_keys: Vec<String>,
        published_at: &str,
    ) -> PublishedSession {
        let cut = |t: String| {
            let t = printable(&t);
            if chars(&t) > limits::TEXT_CHARS {
                excerpt(&t, limits::TEXT_CHARS - 1)
            } else {
                t
            }
        };
        target_keys.retain(|k| is_target_key(k));
        target_keys.truncate(limits::TARGET_KEYS);
        let skip = s.turns.len().saturating_sub(limits::TURNS);
        PublishedSession {
            schema: DOCUMENT_SCHEMA.to_owned(),
            published_at: published_at.to_owned(),
            target_keys,
            session: DocSession {
                session_key: s.session_key,
                status: "published".to_owned(),
                agent: s.agent,
                title: s.title.map(cut),
                project: s.project.map(cut),
                started_at: s.started_at,
                updated_at: s.updated_at,
                turn_count: s.turn_count,
                record_count: s.record_count,
                related_turn_count: s.related_turn_count,
                weak: s.weak,
                why_related: s
                    .why_related
                    .into_iter()
                    .filter(|w| {
                        is_target_key(&w.target_key)
                            && w.turn_key.as_deref().is_none_or(is_key)
                            && w.commit.as_deref().is_none_or(is_commit)
                    })
                    .take(limits::WHY_RELATED)
                    .map(|w| DocWhy {
                        evidence: w.evidence,
                        confidence: w.confidence,
                        target_key: w.target_key,
                        turn_key: w.turn_key,
                        turn_index: w.turn_index,
                        ordinal: w.ordinal,
                        commit: w.commit,
                        reason: cut(w.reason),
                    })
                    .collect(),
                previews: s
                    .previews
                    .into_iter()
                    .take(limits::PREVIEWS)
                    .map(cut)
                    .collect(),
                turns: s
                    .turns
                    .into_iter()
                    .skip(skip)
                    .map(|t| DocTurn {
                        turn_key: t.turn_key,
                        turn_index: t.turn_index,
                        started_at: t.started_at,
                        related: t.related,
                        record_count: t.record_count,
                        tool_call_count: t.tool_call_count,
                        tool_names: t
                            .tool_names
                            .into_iter()
                            .take(limits::TOOL_NAMES)
                            .map(|n| excerpt(&printable(&n), limits::TOOL_NAME_CHARS - 1))
                            .collect(),
                        labels: t.labels,
                        previews: t
                            .previews
                            .into_iter()
                            .take(limits::PREVIEWS)
                            .map(cut)
                            .collect(),
                    })
                    .collect(),
            },
        }
    }
}

/// Parse and check the bytes of a teammate's `session.json` for the ref keyed `ref_key`:
/// UTF-8, the strict schema, [`PublishedSession::check`]; normalised when it passes.
pub fn read(bytes: &[u8], ref_key: &str) -> Result<PublishedSession, Refusal> {
    if bytes.len() as u64 > limits::DOCUMENT_BYTES {
        return Err(format!(
            "{} bytes, more than the {} a document may have",
            bytes.len(),
            limits::DOCUMENT_BYTES
        ));
    }
    let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8".to_owned())?;
    let doc: PublishedSession = serde_json::from_str(text).map_err(|e| {
        // serde names the offending field: the teammate's text, so cleaned and bounded.
        format!(
            "not a Cairn session document: {}",
            crate::text::one_line(&e.to_string(), 160)
        )
    })?;
    doc.check(ref_key)?;
    Ok(doc.normalised())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::views::skim::SkimSession;
    use serde_json::{Value, json};

    const KEY: &str = "sha256-0123456789abcdef0123456789abcdef";
    const TURN: &str = "sha256-fedcba9876543210fedcba9876543210";

    fn doc() -> Value {
        json!({
            "schema": DOCUMENT_SCHEMA, "published_at": "2026-03-01T10:00:00.000Z",
            "target_keys": ["ref:refs/heads/feat"],
            "session": {
                "session_key": KEY, "status": "published", "agent": "claude", "title": "Add login",
                "project": "app", "started_at": "2026-03-01T09:00:00Z", "updated_at": "2026-03-01T09:30:00Z",
                "turn_count": 1, "record_count": 4, "related_turn_count": 1, "weak": false,
                "why_related": [{"evidence": "commit_by_session", "confidence": 0.95, "target_key": "ref:refs/heads/feat",
                    "turn_key": TURN, "turn_index": 0, "ordinal": 3, "commit": "1a2b3c4", "reason": "committed 1a2b3c4"}],
                "previews": ["user: add login", "assistant: done"],
                "turns": [{"turn_key": TURN, "turn_index": 0, "started_at": "2026-03-01T09:00:00Z", "related": true,
                    "record_count": 4, "tool_call_count": 1, "tool_names": ["Edit"], "labels": ["implemented", "committed"],
                    "previews": ["user: add login"]}]
            }
        })
    }

    fn read_value(v: &Value) -> Result<PublishedSession, Refusal> {
        read(v.to_string().as_bytes(), KEY)
    }

    #[test]
    fn a_document_publish_writes_is_read_back() {
        let d = read_value(&doc()).unwrap();
        let view = SkimSession::from_published(d, "origin");
        assert_eq!(view.status, "published");
        assert!(view.untrusted);
        assert_eq!(view.pulled_from.as_deref(), Some("origin"));
        assert_eq!(view.turns[0].labels, ["implemented", "committed"]);
    }

    #[test]
    fn status_is_set_on_import_never_read() {
        let mut v = doc();
        v["session"]["status"] = json!("local-only \u{1b}]52;c;ZXZpbA==\u{7}");
        let d = read_value(&v).unwrap();
        assert_eq!(d.session.status, "published");
        assert_eq!(SkimSession::from_published(d, "origin").status, "published");
        // A document without one is read the same.
        v["session"].as_object_mut().unwrap().remove("status");
        assert_eq!(read_value(&v).unwrap().session.status, "published");
    }

    #[test]
    fn texts_are_cleaned_and_times_normalised() {
        let mut v = doc();
        v["session"]["title"] = json!("t\u{1b}]0;pwned\u{7}itle\u{202e}");
        v["session"]["previews"] = json!(["user: \u{9b}31mhi"]);
        v["session"]["turns"][0]["tool_names"] = json!(["Ba\u{1b}[8msh"]);
        v["session"]["updated_at"] = json!("2026-03-01T11:30:00+02:00");
        let d = read_value(&v).unwrap();
        assert_eq!(d.session.title.as_deref(), Some("title"));
        assert_eq!(d.session.previews, ["user: hi"]);
        assert_eq!(d.session.turns[0].tool_names, ["Bash"]);
        assert_eq!(
            d.session.updated_at.as_deref(),
            Some("2026-03-01T09:30:00Z")
        );
    }

    /// A teammate's newer build reads an agent this one does not: the document is read, the
    /// session shown by that agent's name as a trajectory is (never as Claude's or refused), and
    /// a document written again names it as it was.
    #[test]
    fn a_document_naming_an_agent_this_build_does_not_know_is_read_by_its_name() {
        let mut v = doc();
        v["session"]["agent"] = json!("zed");
        let read = read_value(&v).expect("read");
        assert_eq!(read.session.agent, DocAgent::Named("zed".to_owned()));
        assert_eq!(
            serde_json::to_value(&read.session).unwrap()["agent"],
            json!("zed")
        );
        let shown = SkimSession::from_published(read, "origin");
        assert_eq!(shown.agent, Agent::Atif);
        assert_eq!(shown.ran_by.as_deref(), Some("zed"));
        // An agent this build knows is read as itself, with no other name.
        let shown = SkimSession::from_published(read_value(&doc()).expect("read"), "origin");
        assert_eq!((shown.agent, shown.ran_by), (Agent::Claude, None));
        v["session"]["agent"] = json!("atif");
        assert_eq!(
            read_value(&v).expect("read").session.agent,
            DocAgent::Known(Agent::Atif)
        );
    }

    /// Each hostile change is refused whole, with a reason that holds none of its text.
    #[test]
    fn hostile_documents_are_refused_whole() {
        let long = "x".repeat(limits::TEXT_CHARS + 1);
        type Change = Box<dyn Fn(&mut Value)>;
        let cases: Vec<(&str, &str, Change)> = vec![
            (
                "unknown top-level field",
                "unknown field `extra`",
                Box::new(|v| v["extra"] = json!(1)),
            ),
            (
                "unknown session field",
                "unknown field `cwd`",
                Box::new(|v| v["session"]["cwd"] = json!("/home/x")),
            ),
            (
                "unknown turn field",
                "unknown field `x`",
                Box::new(|v| v["session"]["turns"][0]["x\u{1b}[2J"] = json!(1)),
            ),
            (
                "other schema",
                "schema is not",
                Box::new(|v| v["schema"] = json!("cairn.published-session.v9")),
            ),
            (
                "short key",
                "session_key is not",
                Box::new(|v| v["session"]["session_key"] = json!("sha256-0123")),
            ),
            (
                "upper-case key",
                "session_key is not",
                Box::new(|v| v["session"]["session_key"] = json!(KEY.to_uppercase())),
            ),
            (
                "key with a path",
                "session_key is not",
                Box::new(|v| v["session"]["session_key"] = json!("../../refs/heads/main")),
            ),
            (
                "another ref's key",
                "not the ref's own key",
                Box::new(|v| v["session"]["session_key"] = json!(TURN)),
            ),
            (
                "bad turn key",
                "a turn_key is not",
                Box::new(|v| v["session"]["turns"][0]["turn_key"] = json!("t1")),
            ),
            (
                "non-ASCII timestamp",
                "updated_at is not an RFC 3339",
                Box::new(|v| v["session"]["updated_at"] = json!("2099-01-01é000000")),
            ),
            (
                "escape in timestamp",
                "started_at is not an RFC 3339",
                Box::new(|v| {
                    v["session"]["started_at"] = json!("2026-03-01T09:00:00Z\u{1b}]0;x\u{7}")
                }),
            ),
            (
                "turn timestamp",
                "a turn's started_at",
                Box::new(|v| v["session"]["turns"][0]["started_at"] = json!("yesterday")),
            ),
            (
                "published_at",
                "published_at is not",
                Box::new(|v| v["published_at"] = json!("2026-03-01")),
            ),
            (
                "unknown label",
                "a label is not one of",
                Box::new(|v| {
                    v["session"]["turns"][0]["labels"] = json!(["\u{1b}]52;c;ZXZpbA==\u{7}"])
                }),
            ),
            (
                "too many labels",
                "9 labels",
                Box::new(|v| v["session"]["turns"][0]["labels"] = json!(vec!["next"; 9])),
            ),
            (
                "long title",
                "title is longer",
                Box::new(move |v| v["session"]["title"] = json!(long.clone())),
            ),
            (
                "too many previews",
                "5 previews",
                Box::new(|v| v["session"]["previews"] = json!(["a", "b", "c", "d", "e"])),
            ),
            (
                "too many target keys",
                "65 target keys",
                Box::new(|v| v["target_keys"] = json!(vec!["ref:refs/heads/x"; 65])),
            ),
            (
                "target key with ESC",
                "a target key is not",
                Box::new(|v| v["target_keys"] = json!(["ref:refs/heads/\u{1b}[2J"])),
            ),
            (
                "target key of no known kind",
                "a target key is not",
                Box::new(|v| v["target_keys"] = json!(["file:/etc/passwd"])),
            ),
            (
                "bidi target key",
                "a reason's target key",
                Box::new(|v| {
                    v["session"]["why_related"][0]["target_key"] =
                        json!("ref:refs/heads/\u{202e}niam")
                }),
            ),
            (
                "confidence",
                "confidence is not",
                Box::new(|v| v["session"]["why_related"][0]["confidence"] = json!(7.5)),
            ),
            (
                "commit",
                "commit is not",
                Box::new(|v| v["session"]["why_related"][0]["commit"] = json!("HEAD~1")),
            ),
            (
                "evidence",
                "unknown variant `trust_me`",
                Box::new(|v| v["session"]["why_related"][0]["evidence"] = json!("trust_me")),
            ),
            (
                "agent with escapes",
                "agent is not a plain lower-case name",
                Box::new(|v| v["session"]["agent"] = json!("vim\u{1b}]52;c;eA==\u{7}")),
            ),
            (
                "agent with bidi",
                "agent is not a plain lower-case name",
                Box::new(|v| v["session"]["agent"] = json!("vim\u{202e}edoc")),
            ),
            (
                "agent as markup",
                "agent is not a plain lower-case name",
                Box::new(|v| v["session"]["agent"] = json!("<b>vim</b>")),
            ),
            (
                "agent too long",
                "agent is not a plain lower-case name",
                Box::new(|v| {
                    v["session"]["agent"] = json!("v".repeat(crate::agent::MAX_RAN_BY_CHARS + 1))
                }),
            ),
            (
                "agent by an alias",
                "agent is not a plain lower-case name",
                Box::new(|v| v["session"]["agent"] = json!("claude-code")),
            ),
            (
                "agent type",
                "expected a string",
                Box::new(|v| v["session"]["agent"] = json!(7)),
            ),
            (
                "count type",
                "expected u32",
                Box::new(|v| v["session"]["turn_count"] = json!(-1)),
            ),
            (
                "too many turns",
                "1001 turns",
                Box::new(|v| {
                    let t = v["session"]["turns"][0].clone();
                    v["session"]["turns"] = json!(vec![t; limits::TURNS + 1]);
                }),
            ),
            (
                "too many tool names",
                "65 tool names",
                Box::new(|v| v["session"]["turns"][0]["tool_names"] = json!(vec!["Bash"; 65])),
            ),
        ];
        for (what, why, change) in cases {
            let mut v = doc();
            change(&mut v);
            let err = read_value(&v).expect_err(what);
            assert!(err.contains(why), "{what}: {err}");
            assert!(
                !err.chars().any(|c| c.is_control() || is_bidi_control(c)),
                "{what}: {err:?}"
            );
            assert!(
                !err.contains("/etc/passwd") && !err.contains("niam"),
                "{what}: {err}"
            );
        }
    }

    #[test]
    fn oversized_and_non_utf8_bytes_are_refused_before_parsing() {
        let mut big = doc().to_string().into_bytes();
        big.resize(limits::DOCUMENT_BYTES as usize + 1, b' ');
        assert!(read(&big, KEY).unwrap_err().contains("bytes"));
        let mut bad = doc().to_string().into_bytes();
        bad.insert(1, 0xff);
        assert_eq!(read(&bad, KEY).unwrap_err(), "not UTF-8");
    }

    #[test]
    fn what_publish_writes_passes_the_checks() {
        let view = SkimSession::from_published(read_value(&doc()).unwrap(), "o");
        let mut long = view.clone();
        long.title = Some("é".repeat(5000));
        let t = long.turns[0].clone();
        long.turns = vec![t; limits::TURNS + 10];
        let d = PublishedSession::new(
            long.into_doc(),
            vec!["ref:refs/heads/feat".into()],
            "2026-03-01T10:00:00.000Z",
        );
        assert_eq!(d.session.turns.len(), limits::TURNS);
        d.check(KEY).unwrap();
        let json = serde_json::to_string(&d).unwrap();
        assert!(
            !json.contains("untrusted") && !json.contains("pulled_from"),
            "view-only fields leave: {json}"
        );
    }
}
