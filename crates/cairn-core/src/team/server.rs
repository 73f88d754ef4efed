//! The team archive's address: where the connection string comes from (the `--to`/`--from`
//! value without a password, or `CAIRN_TEAM_URL`; the password from the URL in the environment
//! or `PGPASSWORD`), the TLS rule (required for any host that is not loopback or a Unix socket;
//! verified against the Mozilla roots), the address as every message shows it (no password,
//! no query), and `scrub`, which every message from the server passes through.

use std::net::IpAddr;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use postgres::config::{Host, SslMode};
use postgres::{Client, Config, NoTls};

use crate::config::TeamConfig;
use crate::error::{Error, ErrorKind, Result};

/// The environment variable holding the team archive's connection string.
pub const URL_VAR: &str = "CAIRN_TEAM_URL";
/// libpq's password variable, honoured when the connection string has none.
pub const PASSWORD_VAR: &str = "PGPASSWORD";

/// A team archive to connect to.
pub struct Server {
    config: Config,
    display: String,
    /// Texts that must never appear in a message: the password and the raw connection string.
    secrets: Vec<String>,
    tls: bool,
    /// Where the password comes from, as a hint names it.
    password_from: String,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("at", &self.display).finish()
    }
}

impl Server {
    /// The server named by `given` (a command-line value: it may not hold a password, which
    /// would show in the process list and the shell's history), else by `CAIRN_TEAM_URL`.
    pub fn from_env(given: Option<&str>) -> Result<Server> {
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        Server::resolve(given, env(URL_VAR), env(PASSWORD_VAR))
    }

    /// [`Server::from_env`] with the environment given (for tests).
    pub fn resolve(
        given: Option<&str>,
        env_url: Option<String>,
        env_password: Option<String>,
    ) -> Result<Server> {
        let (url, from_flag) = match (given, env_url) {
            (Some(g), _) => (g.to_owned(), true),
            (None, Some(u)) => (u, false),
            (None, None) => {
                return Err(invalid(
                    "no team archive given",
                    format!(
                        "pass --to postgres://USER@HOST/DB or set {URL_VAR}; the password goes in {PASSWORD_VAR}"
                    ),
                ));
            }
        };
        let mut config = Config::from_str(&url).map_err(|e| {
            invalid(
                &format!(
                    "the connection string is not one PostgreSQL reads ({})",
                    scrub_text(&e.to_string(), std::slice::from_ref(&url))
                ),
                "write it as postgres://USER@HOST:PORT/DATABASE".into(),
            )
        })?;
        let mut secrets = vec![url.clone()];
        if let Some(p) = config.get_password() {
            let p = String::from_utf8_lossy(p).into_owned();
            if from_flag {
                return Err(Error::Refused(format!(
                    "refusing a password on the command line: it would show in the process list and shell history ({})",
                    display_of(&config)
                )));
            }
            secrets.push(p);
        } else if let Some(p) = env_password {
            secrets.push(p.clone());
            config.password(p);
        }
        let password_from = format!("{PASSWORD_VAR} or {URL_VAR}");
        Server::finish(config, secrets, password_from)
    }

    /// The server `[team]` in `config.toml` names (Settings → Team), its password from the
    /// variable `password_env` names, read through `env`.
    pub fn from_team_config(
        team: &TeamConfig,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Server> {
        team.check().map_err(|m| {
            invalid(
                &m,
                "set it in Settings → Team, or in [team] of config.toml".into(),
            )
        })?;
        let mut config = Config::new();
        let host = team.host.trim();
        if host.starts_with('/') {
            config.host_path(host);
        } else {
            config.host(host);
        }
        if let Some(port) = team.port {
            config.port(port);
        }
        config.dbname(team.database.trim()).user(team.user.trim());
        let var = team.password_var();
        let mut secrets = Vec::new();
        if let Some(p) = env(var).filter(|p| !p.is_empty()) {
            secrets.push(p.clone());
            config.password(p);
        }
        Server::finish(config, secrets, format!("the variable {var}"))
    }

    fn finish(
        mut config: Config,
        mut secrets: Vec<String>,
        password_from: String,
    ) -> Result<Server> {
        if config.get_user().is_none() {
            let user = std::env::var("PGUSER")
                .ok()
                .or_else(|| std::env::var("USER").ok())
                .filter(|u| !u.is_empty())
                .ok_or_else(|| {
                    invalid(
                        "the connection string names no user",
                        "write it as postgres://USER@HOST/DATABASE".into(),
                    )
                })?;
            config.user(&user);
        }
        if config.get_hosts().is_empty() {
            return Err(invalid(
                "the connection string names no host",
                "write it as postgres://USER@HOST/DATABASE".into(),
            ));
        }
        let remote = !all_local(&config);
        let tls = match config.get_ssl_mode() {
            SslMode::Disable if remote => {
                return Err(Error::Refused(format!(
                    "refusing sslmode=disable for {}: TLS is required for a host that is not loopback",
                    display_of(&config)
                )));
            }
            SslMode::Disable => false,
            SslMode::Prefer if !remote => false,
            _ => true,
        };
        if tls {
            config.ssl_mode(SslMode::Require);
        }
        config.application_name("cairn");
        config.connect_timeout(Duration::from_secs(15));
        secrets.retain(|s| !s.is_empty());
        Ok(Server {
            display: display_of(&config),
            config,
            secrets,
            tls,
            password_from,
        })
    }

    /// The address every message shows: `postgres://USER@HOST:PORT/DB`, never a password.
    pub fn display(&self) -> &str {
        &self.display
    }

    /// Whether connections use TLS (always for a host that is not loopback).
    pub fn tls(&self) -> bool {
        self.tls
    }

    /// `text` with the password and the raw connection string cut out.
    pub fn scrub(&self, text: &str) -> String {
        scrub_text(text, &self.secrets)
    }

    /// Connect. `read_only` makes every transaction of the session read-only.
    pub fn connect(&self, read_only: bool) -> Result<Client> {
        let mut client = if self.tls {
            self.config.connect(tls_connector())
        } else {
            self.config.connect(NoTls)
        }
        .map_err(|e| self.error(e, "cannot connect"))?;
        if read_only {
            client
                .batch_execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
                .map_err(|e| self.error(e, "cannot open read-only"))?;
        }
        Ok(client)
    }

    /// A PostgreSQL error as Cairn's, its text scrubbed, with a kind and a hint.
    pub fn error(&self, e: postgres::Error, doing: &str) -> Error {
        let (kind, hint) = classify(&e, &self.password_from);
        let detail = match e.as_db_error() {
            Some(db) => db.message().to_owned(),
            None => e.to_string(),
        };
        // A source error (I/O, TLS) says more than the wrapper.
        let detail = match std::error::Error::source(&e) {
            Some(src) if e.as_db_error().is_none() => format!("{detail}: {src}"),
            _ => detail,
        };
        Error::Team {
            server: self.display.clone(),
            message: crate::text::one_line(&self.scrub(&format!("{doing}: {detail}")), 500),
            kind,
            hint,
        }
    }

    /// An error of Cairn's own about this server.
    pub fn fail(&self, kind: ErrorKind, message: String, hint: Option<String>) -> Error {
        Error::Team {
            server: self.display.clone(),
            message: self.scrub(&message),
            kind,
            hint,
        }
    }
}

fn invalid(message: &str, hint: String) -> Error {
    Error::Team {
        server: "(none)".into(),
        message: message.to_owned(),
        kind: ErrorKind::Invalid,
        hint: Some(hint),
    }
}

fn classify(e: &postgres::Error, password_from: &str) -> (ErrorKind, Option<String>) {
    use postgres::error::SqlState;
    let Some(code) = e.code() else {
        // The server asked for a password and none was given (tokio-postgres' own error).
        let source = std::error::Error::source(e).map(ToString::to_string);
        if source.as_deref() == Some("password missing") {
            return (
                ErrorKind::Refused,
                Some(format!(
                    "the server asks for a password: set {password_from}"
                )),
            );
        }
        return (
            ErrorKind::Unavailable,
            Some("check that the server is running and reachable, and its address".into()),
        );
    };
    if *code == SqlState::INVALID_PASSWORD || *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
    {
        (
            ErrorKind::Refused,
            Some(format!(
                "check the user, and the password in {password_from}"
            )),
        )
    } else if *code == SqlState::INSUFFICIENT_PRIVILEGE {
        (
            ErrorKind::Refused,
            Some("ask the database's owner to grant you the team's privileges (docs/SECURITY.md, \"The team archive\")".into()),
        )
    } else if *code == SqlState::INVALID_CATALOG_NAME {
        (ErrorKind::NotFound, Some("check the database name".into()))
    } else if *code == SqlState::T_R_SERIALIZATION_FAILURE
        || *code == SqlState::T_R_DEADLOCK_DETECTED
    {
        (ErrorKind::Busy, Some("try again".into()))
    } else {
        (ErrorKind::External, None)
    }
}

fn all_local(config: &Config) -> bool {
    let hosts_local = config.get_hosts().iter().all(|h| match h {
        Host::Unix(_) => true,
        Host::Tcp(name) => is_loopback_name(name),
    });
    let addrs_local = config.get_hostaddrs().iter().all(IpAddr::is_loopback);
    hosts_local && addrs_local
}

fn is_loopback_name(name: &str) -> bool {
    let n = name.trim_start_matches('[').trim_end_matches(']');
    n.eq_ignore_ascii_case("localhost") || n.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn display_of(config: &Config) -> String {
    let user = config.get_user().unwrap_or("");
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .map(|h| match h {
            Host::Tcp(name) => name.clone(),
            Host::Unix(path) => path.display().to_string(),
        })
        .collect();
    let port = config
        .get_ports()
        .first()
        .map(|p| format!(":{p}"))
        .unwrap_or_default();
    let db = config.get_dbname().unwrap_or(user);
    crate::text::one_line(
        &format!("postgres://{user}@{}{port}/{db}", hosts.join(",")),
        300,
    )
}

fn scrub_text(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_owned();
    for s in secrets {
        if !s.is_empty() {
            out = out.replace(s.as_str(), "[REDACTED]");
        }
    }
    out
}

fn tls_connector() -> tokio_postgres_rustls::MakeRustlsConnect {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map(|b| b.with_root_certificates(roots).with_no_client_auth())
        .unwrap_or_else(|_| {
            // ring supports the default versions; this branch is never taken.
            rustls::ClientConfig::builder()
                .with_root_certificates(rustls::RootCertStore::empty())
                .with_no_client_auth()
        });
    tokio_postgres_rustls::MakeRustlsConnect::new(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_on_the_command_line_is_refused_and_not_repeated() {
        let err = Server::resolve(
            Some("postgres://alice:hunter2-secret@db.example/team"),
            None,
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("refusing a password"), "{err}");
        assert!(!err.contains("hunter2-secret"), "{err}");
        assert!(
            err.contains("postgres://alice@db.example:5432/team"),
            "{err}"
        );
    }

    #[test]
    fn the_password_comes_from_the_environment_and_never_shows() {
        let s = Server::resolve(
            None,
            Some("postgres://alice:pw-in-env@127.0.0.1:5999/team".into()),
            None,
        )
        .unwrap();
        assert_eq!(s.display(), "postgres://alice@127.0.0.1:5999/team");
        assert_eq!(s.scrub("bad pw-in-env here"), "bad [REDACTED] here");
        let s = Server::resolve(
            Some("postgres://bob@localhost/team"),
            None,
            Some("pgpass-xyz".into()),
        )
        .unwrap();
        assert_eq!(s.scrub("pgpass-xyz"), "[REDACTED]");
        assert!(!format!("{s:?}").contains("pgpass-xyz"));
    }

    #[test]
    fn tls_is_required_off_loopback() {
        let remote = Server::resolve(Some("postgres://a@db.example/team"), None, None).unwrap();
        assert!(remote.tls());
        let refused = Server::resolve(
            Some("postgres://a@db.example/team?sslmode=disable"),
            None,
            None,
        )
        .unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::Refused);
        let via_addr = Server::resolve(
            Some("postgres://a@localhost/team?hostaddr=10.1.2.3&sslmode=disable"),
            None,
            None,
        );
        assert!(
            via_addr.is_err(),
            "a loopback name with a remote hostaddr is remote"
        );
        for local in [
            "postgres://a@127.0.0.1/team",
            "postgres://a@[::1]:5432/team",
            "postgres://a@localhost/team",
            "postgres://a@%2Ftmp%2Fsock/team",
        ] {
            assert!(
                !Server::resolve(Some(local), None, None).unwrap().tls(),
                "{local}"
            );
        }
        let asked = Server::resolve(
            Some("postgres://a@127.0.0.1/team?sslmode=require"),
            None,
            None,
        )
        .unwrap();
        assert!(asked.tls());
    }

    #[test]
    fn nothing_given_says_where_to_put_it() {
        let err = Server::resolve(None, None, None).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Invalid);
        assert!(err.hint().unwrap().contains(URL_VAR));
    }

    #[test]
    fn the_config_names_the_server_and_the_variable_holding_its_password() {
        let team = TeamConfig {
            host: "127.0.0.1".into(),
            port: Some(5999),
            database: "team".into(),
            user: "alice".into(),
            password_env: "TEAM_PW".into(),
        };
        let env = |name: &str| (name == "TEAM_PW").then(|| "pw-from-var".to_owned());
        let s = Server::from_team_config(&team, &env).unwrap();
        assert_eq!(s.display(), "postgres://alice@127.0.0.1:5999/team");
        assert!(!s.tls());
        assert_eq!(s.scrub("x pw-from-var y"), "x [REDACTED] y");
        assert_eq!(s.config.get_password(), Some(&b"pw-from-var"[..]));
        // PGPASSWORD is not read when another variable is named.
        let only_pg = |name: &str| (name == PASSWORD_VAR).then(|| "pg".to_owned());
        let s = Server::from_team_config(&team, &only_pg).unwrap();
        assert_eq!(s.config.get_password(), None);
        assert_eq!(s.password_from, "the variable TEAM_PW");
        // Off loopback, TLS; a socket directory is local.
        let remote = TeamConfig {
            host: "db.example".into(),
            ..team.clone()
        };
        assert!(Server::from_team_config(&remote, &env).unwrap().tls());
        let socket = TeamConfig {
            host: "/run/postgresql".into(),
            port: None,
            ..team.clone()
        };
        let s = Server::from_team_config(&socket, &env).unwrap();
        assert!(!s.tls());
        assert_eq!(s.display(), "postgres://alice@/run/postgresql/team");
        // A half-filled table says which field is missing.
        let half = TeamConfig {
            database: String::new(),
            ..team
        };
        let err = Server::from_team_config(&half, &env).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Invalid);
        assert!(err.to_string().contains("database"), "{err}");
    }
}
