//! `[team]` in `config.toml`: where the team archive (PostgreSQL) is, and where its password
//! comes from. Never the password itself: the table has no key for one, so a config holding a
//! password does not load. Written by Settings → Team ([`write_team_setup`]), comments kept.
//!
//! ```toml
//! [team]
//! host = "db.internal"        # or 127.0.0.1, or a Unix socket directory (/run/postgresql)
//! port = 5432
//! database = "cairn_team"
//! user = "alice"
//! password_env = "CAIRN_TEAM_PASSWORD"   # the variable holding the password (default PGPASSWORD)
//! ```

use serde::{Deserialize, Serialize};

/// `[team]` as written in `config.toml` (and as the Settings form edits it: every field is
/// always present in what the window gets).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct TeamConfig {
    /// A host name, an IP address, or a Unix socket directory (an absolute path).
    #[serde(default)]
    pub host: String,
    /// The TCP port; 5432 when unset.
    #[serde(default)]
    pub port: Option<u16>,
    #[serde(default)]
    pub database: String,
    #[serde(default)]
    pub user: String,
    /// The *name* of the environment variable holding the password; empty for `PGPASSWORD`.
    #[serde(default)]
    pub password_env: String,
}

/// The variable read when `password_env` is empty (libpq's).
pub const DEFAULT_PASSWORD_ENV: &str = "PGPASSWORD";

impl TeamConfig {
    pub fn is_empty(&self) -> bool {
        self == &TeamConfig::default()
    }

    /// The variable the password is read from.
    pub fn password_var(&self) -> &str {
        match self.password_env.trim() {
            "" => DEFAULT_PASSWORD_ENV,
            name => name,
        }
    }

    /// What is wrong with this table, in words that name the field to fix; `Ok` when a server
    /// can be made of it. An empty table is "not configured", not an error: check `is_empty`.
    pub fn check(&self) -> Result<(), String> {
        let printable = |s: &str| !s.chars().any(char::is_control);
        let host = self.host.trim();
        if host.is_empty() {
            return Err("[team] needs `host`: the database server's name or address".into());
        }
        if host.len() > 253 || !printable(host) || host.contains(char::is_whitespace) {
            return Err(
                "[team] `host` must be a host name, an IP address or a socket directory".into(),
            );
        }
        if host.contains([',', '/', '@', '?', '#']) && !host.starts_with('/') {
            return Err(
                "[team] `host` is one host name or address, without a user, a path or options"
                    .into(),
            );
        }
        if self.port == Some(0) {
            return Err("[team] `port` must be 1–65535".into());
        }
        for (key, value) in [("database", &self.database), ("user", &self.user)] {
            let v = value.trim();
            if v.is_empty() {
                return Err(format!("[team] needs `{key}`"));
            }
            if v.len() > 63 || !printable(v) {
                return Err(format!(
                    "[team] `{key}` must be a PostgreSQL name: at most 63 bytes, no control characters"
                ));
            }
        }
        let var = self.password_env.trim();
        if !var.is_empty() && !is_env_name(var) {
            // Not repeated: a password typed into this field must not show in the message.
            return Err(
                "[team] `password_env` is the *name* of an environment variable (letters, \
                 digits, _): the password itself never goes in config.toml"
                    .into(),
            );
        }
        Ok(())
    }
}

/// Does `text` (a `config.toml`) put any key but the known ones into `[team]` — a `password`,
/// a `url` with one in it? Such a file is refused with a message of Cairn's own, since toml's
/// quote the offending line.
pub(crate) fn holds_a_password(text: &str) -> bool {
    const KNOWN: [&str; 5] = ["host", "port", "database", "user", "password_env"];
    let Ok(doc) = text.parse::<toml::Table>() else {
        return false;
    };
    doc.get("team")
        .and_then(toml::Value::as_table)
        .is_some_and(|t| t.keys().any(|k| !KNOWN.contains(&k.as_str())))
}

fn is_env_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && s.len() <= 128
}

/// `text` (a `config.toml`) with `[team]` set as `setup` says (an empty setup removes the
/// table). Comments, order and every other key stay as they were.
pub fn write_team_setup(text: &str, setup: &TeamConfig) -> Result<String, String> {
    use toml_edit::{DocumentMut, Item, Table};
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| e.to_string().replace('\n', " ").trim().to_owned())?;
    if setup.is_empty() {
        doc.as_table_mut().remove("team");
        return Ok(doc.to_string());
    }
    let item = doc
        .as_table_mut()
        .entry("team")
        .or_insert_with(|| Item::Table(Table::new()));
    let team = item.as_table_mut().ok_or_else(|| {
        "`team` is not a [table] (an inline table or a value): rewrite it as [team] so Cairn can edit it"
            .to_owned()
    })?;
    team.set_implicit(false);
    for (key, v) in [
        ("host", &setup.host),
        ("database", &setup.database),
        ("user", &setup.user),
        ("password_env", &setup.password_env),
    ] {
        if v.trim().is_empty() {
            team.remove(key);
        } else {
            super::set_kept(team, key, v.trim());
        }
    }
    match setup.port {
        Some(p) => super::set_kept(team, "port", i64::from(p)),
        None => {
            team.remove("port");
        }
    }
    super::comments::keep_closing_comments(&mut doc);
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> TeamConfig {
        TeamConfig {
            host: "127.0.0.1".into(),
            port: Some(5433),
            database: "team".into(),
            user: "alice".into(),
            password_env: "TEAM_PW".into(),
        }
    }

    #[test]
    fn keeps_comments_and_other_tables_and_reads_back() {
        let before = "# mine\n[sources.claude]\ndirs = [\"/x\"] # here\n\n[team]\n# the team db\nhost = \"old\" # the lab box\n";
        let after = write_team_setup(before, &setup()).unwrap();
        for kept in [
            "# mine",
            "# here",
            "# the team db",
            "# the lab box",
            "dirs = [\"/x\"]",
        ] {
            assert!(after.contains(kept), "{kept} lost:\n{after}");
        }
        let c: crate::config::Config = toml::from_str(&after).unwrap();
        assert_eq!(c.team, setup());
        // Cleared fields go; an empty setup removes the table.
        let cleared = TeamConfig {
            port: None,
            password_env: String::new(),
            ..setup()
        };
        let again = write_team_setup(&after, &cleared).unwrap();
        assert!(
            !again.contains("port") && !again.contains("password_env"),
            "{again}"
        );
        let none = write_team_setup(&again, &TeamConfig::default()).unwrap();
        assert!(
            !none.contains("[team]") && none.contains("# here"),
            "{none}"
        );
    }

    #[test]
    fn a_password_key_does_not_load_and_hostile_fields_are_refused() {
        let with_pw =
            "[team]\nhost = \"h\"\ndatabase = \"d\"\nuser = \"u\"\npassword = \"hunter2\"\n";
        let err = crate::config::Config::parse(with_pw, std::path::Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("holds a password") && !err.contains("hunter2"),
            "{err}"
        );
        assert!(setup().check().is_ok());
        for (bad, field) in [
            (
                TeamConfig {
                    password_env: "hunter2 secret!".into(),
                    ..setup()
                },
                "password_env",
            ),
            (
                TeamConfig {
                    host: "h\u{1b}[2J".into(),
                    ..setup()
                },
                "host",
            ),
            (
                TeamConfig {
                    host: "alice:pw@db".into(),
                    ..setup()
                },
                "host",
            ),
            (
                TeamConfig {
                    user: String::new(),
                    ..setup()
                },
                "user",
            ),
            (
                TeamConfig {
                    port: Some(0),
                    ..setup()
                },
                "port",
            ),
            (
                TeamConfig {
                    database: "d".repeat(64),
                    ..setup()
                },
                "database",
            ),
        ] {
            let err = bad.check().unwrap_err();
            assert!(err.contains(field), "{field}: {err}");
            assert!(!err.contains("hunter2 secret!"), "{err}");
        }
        let socket = TeamConfig {
            host: "/run/postgresql".into(),
            ..setup()
        };
        assert!(socket.check().is_ok());
    }

    #[test]
    fn an_inline_table_is_refused_with_the_place() {
        let err = write_team_setup("team = { host = \"h\" }\n", &setup()).unwrap_err();
        assert!(err.contains("`team` is not a [table]"), "{err}");
        assert!(write_team_setup("[team\n", &setup()).is_err());
    }

    /// `[team]` added at the end of a file whose last table ends in a comment: the comment
    /// stays under that table, not under `[team]`.
    #[test]
    fn a_comment_closing_the_last_table_stays_there_when_team_is_added() {
        let before = "[recall]\nsession_start_tokens = 2000\n# recall: keep it short\n";
        let after = write_team_setup(before, &setup()).unwrap();
        assert!(
            after.starts_with(
                "[recall]\nsession_start_tokens = 2000\n# recall: keep it short\n\n[team]\n"
            ),
            "{after}"
        );
        assert!(
            after.ends_with("password_env = \"TEAM_PW\"\nport = 5433\n"),
            "{after}"
        );
    }
}
