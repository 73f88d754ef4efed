//! The team archive's address: where the connection string comes from (the `--to`/`--from`
//! value without a password, or `CAIRN_TEAM_URL`, or `[team]` in `config.toml`), where its
//! password comes from, the TLS rule (required for any host that is not loopback or a Unix
//! socket; verified against the Mozilla roots), the address as every message shows it (no
//! password, no query), and `scrub`, which every message from the server passes through.
//!
//! How long anything waits for the server: the login and each statement (one batch of a push)
//! at most [`TIMEOUT_VAR`] seconds, [`DEFAULT_TIMEOUT`] unless set ([`super::conn`] bounds
//! the wait on this side; the server is asked to cancel a statement, or end a transaction left
//! idle, after as long); the TCP connect at most 15 s, or the connection string's
//! `connect_timeout`; TCP keepalives after 30 s of quiet, so a peer whose host is gone is
//! noticed between calls too.
//!
//! The password, first found wins: the connection string in `CAIRN_TEAM_URL`; then the variable
//! (`PGPASSWORD`, or the one `[team]`'s `password_env` names); then the OS keyring's item for the
//! server ([`super::keyring`], stored by `cairn team login` or Settings → Team). Never the
//! command line, never `config.toml`, never the data dir.

use std::net::IpAddr;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use tokio_postgres::config::{Host, SslMode};
use tokio_postgres::{Config, NoTls};

use crate::config::TeamConfig;
use crate::error::{Error, ErrorKind, Result};
use crate::team::conn::{Conn, PgError};
use crate::team::keyring;

/// The environment variable holding the team archive's connection string.
pub const URL_VAR: &str = "CAIRN_TEAM_URL";
/// libpq's password variable, honoured when the connection string has none.
pub const PASSWORD_VAR: &str = "PGPASSWORD";
/// The environment variable bounding each wait for the server, in seconds.
pub const TIMEOUT_VAR: &str = "CAIRN_TEAM_TIMEOUT";
/// The bound when [`TIMEOUT_VAR`] is not set: far above what a batch of a push takes on a
/// working server, short enough that a silent one is given up on.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// The TCP connect's bound, unless the connection string sets `connect_timeout`.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// Longest [`TIMEOUT_VAR`] taken: a day.
const MAX_TIMEOUT_SECS: u64 = 86_400;

/// A team archive to connect to.
pub struct Server {
    config: Config,
    display: String,
    /// Texts that must never appear in a message: the password and the raw connection string.
    secrets: Vec<String>,
    tls: bool,
    /// Where the password comes from, as a hint names it.
    password_from: String,
    /// Where it comes from before the keyring: `PGPASSWORD or CAIRN_TEAM_URL`, or the variable
    /// `[team]` names (what `cairn team logout` says is read next).
    password_vars: String,
    /// Where the password was found.
    password_source: PasswordSource,
    /// The password tried, as a hint names it when the server refuses it ("the one in
    /// PGPASSWORD"): only that source, not every place one may come from.
    password_used: Option<String>,
    /// The OS keyring's name for this server (`USER@HOST:PORT/DB`).
    account: String,
    /// `HOST:PORT`, as a hint names the server.
    endpoint: String,
    /// How long the login and each statement may wait for the server.
    wait: Duration,
}

/// Where a server's password was found (Settings → Team shows it; never the password).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case", tag = "from", content = "name")]
pub enum PasswordSource {
    /// In the connection string of `CAIRN_TEAM_URL`.
    Url,
    /// In this environment variable.
    Variable(String),
    /// In the OS keyring.
    Keyring,
    /// Nowhere: the server must not ask for one (trust, peer or certificate authentication).
    None,
}

/// How the keyring is asked for a server's password (the real one, or a test's).
pub type KeyringLookup<'a> =
    &'a dyn Fn(&str) -> std::result::Result<Option<String>, keyring::Unreachable>;

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
        Server::resolve(given, env(URL_VAR), env(PASSWORD_VAR), &keyring::get)
    }

    /// [`Server::from_env`] with the environment and the keyring given (for tests).
    pub fn resolve(
        given: Option<&str>,
        env_url: Option<String>,
        env_password: Option<String>,
        keyring: KeyringLookup<'_>,
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
        let mut source = PasswordSource::None;
        if let Some(p) = config.get_password() {
            let p = String::from_utf8_lossy(p).into_owned();
            if from_flag {
                return Err(Error::Refused(format!(
                    "refusing a password on the command line: it would show in the process list and shell history ({}); drop it from the URL and keep it in the OS keyring (`cairn team login`), or set {PASSWORD_VAR}",
                    display_of(&config)
                )));
            }
            secrets.push(p);
            source = PasswordSource::Url;
        } else if let Some(p) = env_password {
            secrets.push(p.clone());
            config.password(p);
            source = PasswordSource::Variable(PASSWORD_VAR.into());
        }
        let password_from = format!("{PASSWORD_VAR} or {URL_VAR}");
        Server::finish(config, secrets, password_from, source, keyring)
    }

    /// The server `[team]` in `config.toml` names (Settings → Team), its password from the
    /// variable `password_env` names, read through `env`, else from the keyring.
    pub fn from_team_config(
        team: &TeamConfig,
        env: &dyn Fn(&str) -> Option<String>,
        keyring: KeyringLookup<'_>,
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
        let mut source = PasswordSource::None;
        if let Some(p) = env(var).filter(|p| !p.is_empty()) {
            secrets.push(p.clone());
            config.password(p);
            source = PasswordSource::Variable(var.to_owned());
        }
        Server::finish(
            config,
            secrets,
            format!("the variable {var}"),
            source,
            keyring,
        )
    }

    fn finish(
        mut config: Config,
        mut secrets: Vec<String>,
        password_from: String,
        mut source: PasswordSource,
        keyring: KeyringLookup<'_>,
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
        let wait = timeout_from(std::env::var(TIMEOUT_VAR).ok().as_deref())?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT.min(wait));
        }
        // A host that is gone answers no keepalive: noticed within about a minute (30 s of
        // quiet, then 3 probes 10 s apart), and data left unacknowledged as long as a call may
        // wait fails the connection (Linux).
        config
            .keepalives(true)
            .keepalives_idle(Duration::from_secs(30))
            .keepalives_interval(Duration::from_secs(10))
            .keepalives_retries(3)
            .tcp_user_timeout(wait);
        // Last, the keyring (only asked when nothing above gave a password). A keyring that
        // cannot be asked is no error here: the server may not want a password; if it does,
        // the hint says why the keyring had none.
        let account = account_of(&config);
        let password_vars = password_from.clone();
        let mut password_from = format!(
            "{password_from}, or the OS keyring (`cairn team login`, or Settings → Team's \"Remember in the keyring\")"
        );
        if source == PasswordSource::None {
            match keyring(&account) {
                Ok(Some(p)) => {
                    secrets.push(p.clone());
                    config.password(p);
                    source = PasswordSource::Keyring;
                }
                Ok(None) => {}
                Err(u) => {
                    password_from.push_str(&format!(", which could not be read: {}", u.message));
                }
            }
        }
        secrets.retain(|s| !s.is_empty());
        let password_used = match &source {
            PasswordSource::Url => Some(format!("the one in {URL_VAR}'s connection string")),
            PasswordSource::Variable(name) => Some(format!("the one in {name}")),
            PasswordSource::Keyring => Some(format!(
                "the one the OS keyring keeps for {account}; `cairn team login` replaces it"
            )),
            PasswordSource::None => None,
        };
        Ok(Server {
            password_used,
            display: display_of(&config),
            endpoint: endpoint_of(&config),
            wait,
            config,
            secrets,
            tls,
            password_from,
            password_vars,
            password_source: source,
            account,
        })
    }

    /// This server with `password` instead of the one found (to try it before the keyring
    /// keeps it).
    pub fn with_password(&self, password: &str) -> Server {
        let mut config = self.config.clone();
        config.password(password);
        let mut secrets = self.secrets.clone();
        secrets.push(password.to_owned());
        Server {
            config,
            display: self.display.clone(),
            secrets,
            tls: self.tls,
            password_from: "the one you typed".into(),
            password_vars: self.password_vars.clone(),
            password_source: PasswordSource::Keyring,
            password_used: Some("the one you typed".into()),
            account: self.account.clone(),
            endpoint: self.endpoint.clone(),
            wait: self.wait,
        }
    }

    /// How long the login and each statement may wait for the server.
    pub fn wait(&self) -> Duration {
        self.wait
    }

    /// Where a password is looked for before the OS keyring: `PGPASSWORD or CAIRN_TEAM_URL`,
    /// or `the variable NAME` that `[team]` names.
    pub fn password_variables(&self) -> &str {
        &self.password_vars
    }

    /// Where the password was found.
    pub fn password_source(&self) -> &PasswordSource {
        &self.password_source
    }

    /// The OS keyring's name for this server: `USER@HOST:PORT/DB` (the port always written).
    pub fn account(&self) -> &str {
        &self.account
    }

    /// The address every message shows: `postgres://USER@HOST:PORT/DB`, never a password.
    pub fn display(&self) -> &str {
        &self.display
    }

    /// The connection string `user` connects to this team archive with: this server's hosts,
    /// ports and database (the database as this connection resolved it, so a URL that named
    /// none still names the same one for them), `user` in place of this connection's user, no
    /// password and no query (the TLS rule applies to theirs as to this one). Each part is
    /// percent-encoded where PostgreSQL's URL syntax would read it otherwise (`@`, `:`, `/`,
    /// `%`, `,`, `?`, spaces, non-ASCII), a socket directory as the host too, an IPv6 address
    /// in brackets, so the string parses back to the same user, hosts and database. Passed
    /// through [`Server::scrub`] and the redactor's definite rules last: whatever this
    /// connection's password is, the text never shows it.
    pub fn url_as(&self, user: &str) -> String {
        let ports = self.config.get_ports();
        let hosts: Vec<String> = self
            .config
            .get_hosts()
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let host = match h {
                    Host::Tcp(name) => match name.parse::<std::net::Ipv6Addr>() {
                        Ok(v6) => format!("[{v6}]"),
                        Err(_) => percent_encode(name),
                    },
                    Host::Unix(path) => percent_encode(&path.to_string_lossy()),
                };
                let port = match ports {
                    [one] => *one,
                    many => many.get(i).copied().unwrap_or(5432),
                };
                format!("{host}:{port}")
            })
            .collect();
        let own = self.config.get_user().unwrap_or("");
        let db = self.config.get_dbname().unwrap_or(own);
        let url = format!(
            "postgres://{}@{}/{}",
            percent_encode(user),
            hosts.join(","),
            percent_encode(db)
        );
        let url = self.scrub(&url);
        crate::archive::redact::Redactor::global()
            .redact_definite(&url)
            .into_owned()
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
    pub fn connect(&self, read_only: bool) -> Result<Conn> {
        let mut client = if self.tls {
            Conn::connect(&self.config, tls_connector(), self.wait)
        } else {
            Conn::connect(&self.config, NoTls, self.wait)
        }
        .map_err(|e| self.error(e, "cannot connect"))?;
        // Names resolve in the system catalog only: a teammate who may create a schema named
        // after another's role (first on PostgreSQL's default `"$user", public` path) would
        // otherwise have their own `hashtext` or `websearch_to_tsquery` run as that role. Set
        // as the first statement (a startup option is refused or dropped by some connection
        // poolers), after the role's own settings, and read back: a pooler that hands the
        // next statement to another server connection would lose it.
        // With it, the server's own bounds, set the same way (so a pooler keeps them too):
        // a statement running longer than a call waits is cancelled, and a transaction left
        // idle (its client gone silent) is ended, with its locks.
        let ms = self.wait.as_millis();
        let path: String = client
            .simple_query(&format!(
                "SET search_path TO pg_catalog, pg_temp; \
                 SET statement_timeout = {ms}; SET idle_in_transaction_session_timeout = {ms}; \
                 SELECT pg_catalog.current_setting('search_path')"
            ))
            .map_err(|e| self.error(e, "cannot set the search path"))?
            .into_iter()
            .find_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_owned),
                _ => None,
            })
            .unwrap_or_default();
        if path != "pg_catalog, pg_temp" {
            return Err(self.fail(
                ErrorKind::Refused,
                format!(
                    "the connection does not keep its search path (it reads {:?})",
                    crate::text::one_line(&path, 80)
                ),
                Some(
                    "connect to the server directly, or through a pooler in session mode (docs/SECURITY.md, \"The team archive\")"
                        .into(),
                ),
            ));
        }
        if read_only {
            client
                .batch_execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
                .map_err(|e| self.error(e, "cannot open read-only"))?;
        }
        Ok(client)
    }

    /// A PostgreSQL error as Cairn's, its text scrubbed, with a kind and a hint.
    pub fn error(&self, e: impl Into<PgError>, doing: &str) -> Error {
        let e = e.into();
        let (kind, hint) = self.classify(&e);
        let detail = e.to_string();
        Error::Team {
            server: self.display.clone(),
            message: crate::text::one_line(&self.scrub(&format!("{doing}: {detail}")), 500),
            kind,
            hint,
            sql: None,
        }
    }

    /// An error of Cairn's own about this server.
    pub fn fail(&self, kind: ErrorKind, message: String, hint: Option<String>) -> Error {
        Error::Team {
            server: self.display.clone(),
            message: self.scrub(&message),
            kind,
            hint,
            sql: None,
        }
    }

    /// [`Server::fail`] for a refusal someone clears by running `sql` (the hint says who): the
    /// statement travels as its own field, so the desktop offers it to copy without reading
    /// the hint's wording. It names roles and Cairn's tables, never a password.
    pub fn fail_with_sql(
        &self,
        kind: ErrorKind,
        message: String,
        hint: String,
        sql: String,
    ) -> Error {
        Error::Team {
            server: self.display.clone(),
            message: self.scrub(&message),
            kind,
            hint: Some(hint),
            sql: Some(self.scrub(&sql)),
        }
    }

    /// The hint for a role the database or the team's tables refuse: what an administrator
    /// grants it (the team's role, [`super::schema::team_role_for`], is named after the
    /// database: a role that cannot connect cannot read which it is).
    fn not_in_the_team(&self) -> String {
        use super::schema::{sql_name, team_role_for};
        let user = self.config.get_user().unwrap_or("");
        let db = self.config.get_dbname().unwrap_or(user);
        self.scrub(&format!(
            "this role is not in the team: an administrator adds it with GRANT {} TO {}; (docs/SECURITY.md, \"The team archive\")",
            crate::text::one_line(&sql_name(&team_role_for(db)), 80),
            crate::text::one_line(&sql_name(user), 80)
        ))
    }

    /// What kind of failure `e` is, and what to do about it.
    fn classify(&self, e: &PgError) -> (ErrorKind, Option<String>) {
        use tokio_postgres::error::SqlState;
        let (endpoint, password_from) = (&self.endpoint, &self.password_from);
        let secs = self.wait.as_secs();
        let e = match e {
            PgError::Silent(_) => {
                return (
                    ErrorKind::Unavailable,
                    Some(format!(
                        "check that the server at {endpoint} is running and reachable; each step waits at most {secs} s for it ({TIMEOUT_VAR}, in seconds)"
                    )),
                );
            }
            PgError::Runtime(_) => return (ErrorKind::Io, None),
            PgError::Server(e) => e,
        };
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
                Some(format!(
                    "check that the server at {endpoint} is running and reachable, and its address"
                )),
            );
        };
        if *code == SqlState::QUERY_CANCELED
            || *code == SqlState::IDLE_IN_TRANSACTION_SESSION_TIMEOUT
        {
            return (
                ErrorKind::Unavailable,
                Some(format!(
                    "the server at {endpoint} took longer than the {secs} s a step may take ({TIMEOUT_VAR}, in seconds): try again, or set it higher for a slow server"
                )),
            );
        }
        // Refused the database or a table: the role is not in the team. (A write a row-level
        // policy refuses has the same code and says so; it keeps the general hint.)
        if *code == SqlState::INSUFFICIENT_PRIVILEGE
            && e.as_db_error()
                .is_some_and(|d| d.message().starts_with("permission denied"))
        {
            return (ErrorKind::Refused, Some(self.not_in_the_team()));
        }
        if *code == SqlState::INVALID_PASSWORD
            || *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
        {
            let used = match &self.password_used {
                Some(used) => format!("{used} was used"),
                None => format!("none was given: set {password_from}"),
            };
            return (
                ErrorKind::Refused,
                Some(format!("check the user, and the password ({used})")),
            );
        }
        classify(code)
    }
}

fn invalid(message: &str, hint: String) -> Error {
    Error::Team {
        server: "(none)".into(),
        message: message.to_owned(),
        kind: ErrorKind::Invalid,
        hint: Some(hint),
        sql: None,
    }
}

/// What kind of failure a server's error `code` is, and what to do about it.
fn classify(code: &tokio_postgres::error::SqlState) -> (ErrorKind, Option<String>) {
    use tokio_postgres::error::SqlState;
    if *code == SqlState::INSUFFICIENT_PRIVILEGE {
        (
            ErrorKind::Refused,
            Some("ask the database's owner to grant you the team's privileges (docs/SECURITY.md, \"The team archive\")".into()),
        )
    } else if *code == SqlState::READ_ONLY_SQL_TRANSACTION {
        (
            ErrorKind::Refused,
            Some("this role may only read the team archive: push as a member who may write (docs/SECURITY.md, \"The team archive\")".into()),
        )
    } else if *code == SqlState::ADMIN_SHUTDOWN
        || *code == SqlState::CRASH_SHUTDOWN
        || *code == SqlState::CANNOT_CONNECT_NOW
    {
        (
            ErrorKind::Unavailable,
            Some("the server ended the connection (stopped, restarted, or an administrator ended it)".into()),
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

/// The keyring's item name: [`display_of`] without the scheme, the port always written, so a URL
/// without a port and a form with 5432 name the same item.
fn account_of(config: &Config) -> String {
    let user = config.get_user().unwrap_or("");
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .map(|h| match h {
            Host::Tcp(name) => name.to_ascii_lowercase(),
            Host::Unix(path) => path.display().to_string(),
        })
        .collect();
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let db = config.get_dbname().unwrap_or(user);
    crate::text::one_line(&format!("{user}@{}:{port}/{db}", hosts.join(",")), 300)
}

/// `HOST:PORT` (the first host, or the socket directory), as a hint names where to look.
fn endpoint_of(config: &Config) -> String {
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(name)) => name.clone(),
        Some(Host::Unix(path)) => path.display().to_string(),
        None => String::new(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    crate::text::one_line(&format!("{host}:{port}"), 300)
}

/// How long a call may wait for the server: [`TIMEOUT_VAR`]'s value (whole seconds, 1 to a
/// day), else [`DEFAULT_TIMEOUT`].
fn timeout_from(value: Option<&str>) -> Result<Duration> {
    let Some(v) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(DEFAULT_TIMEOUT);
    };
    match v.parse::<u64>() {
        Ok(secs) if (1..=MAX_TIMEOUT_SECS).contains(&secs) => Ok(Duration::from_secs(secs)),
        _ => Err(invalid(
            &format!(
                "{TIMEOUT_VAR} is {:?}, not a number of seconds",
                crate::text::one_line(v, 40)
            ),
            format!(
                "set it to whole seconds from 1 to {MAX_TIMEOUT_SECS} (unset: {})",
                DEFAULT_TIMEOUT.as_secs()
            ),
        )),
    }
}

/// `text` as one part of a connection string: every byte that is not an ASCII letter, digit or
/// one of `-._~` written `%XX`, so no part can end early or be read as another.
fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
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

    fn no_keyring(_: &str) -> std::result::Result<Option<String>, keyring::Unreachable> {
        Ok(None)
    }

    fn resolve(
        given: Option<&str>,
        env_url: Option<String>,
        env_password: Option<String>,
    ) -> Result<Server> {
        Server::resolve(given, env_url, env_password, &no_keyring)
    }

    fn from_config(team: &TeamConfig, env: &dyn Fn(&str) -> Option<String>) -> Result<Server> {
        Server::from_team_config(team, env, &no_keyring)
    }

    #[test]
    fn a_password_on_the_command_line_is_refused_and_not_repeated() {
        let err = resolve(
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
        let s = resolve(
            None,
            Some("postgres://alice:pw-in-env@127.0.0.1:5999/team".into()),
            None,
        )
        .unwrap();
        assert_eq!(s.display(), "postgres://alice@127.0.0.1:5999/team");
        assert_eq!(s.scrub("bad pw-in-env here"), "bad [REDACTED] here");
        let s = resolve(
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
        let remote = resolve(Some("postgres://a@db.example/team"), None, None).unwrap();
        assert!(remote.tls());
        let refused = resolve(
            Some("postgres://a@db.example/team?sslmode=disable"),
            None,
            None,
        )
        .unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::Refused);
        let via_addr = resolve(
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
            assert!(!resolve(Some(local), None, None).unwrap().tls(), "{local}");
        }
        let asked = resolve(
            Some("postgres://a@127.0.0.1/team?sslmode=require"),
            None,
            None,
        )
        .unwrap();
        assert!(asked.tls());
    }

    /// The wait is whole seconds, from 1 to a day; unset or empty, the default.
    #[test]
    fn the_wait_is_whole_seconds_within_a_day() {
        assert_eq!(timeout_from(None).unwrap(), DEFAULT_TIMEOUT);
        assert_eq!(timeout_from(Some(" ")).unwrap(), DEFAULT_TIMEOUT);
        assert_eq!(timeout_from(Some(" 5 ")).unwrap(), Duration::from_secs(5));
        assert_eq!(
            timeout_from(Some("86400")).unwrap(),
            Duration::from_secs(86_400)
        );
        for bad in ["0", "86401", "-3", "1.5", "5s", "soon"] {
            let err = timeout_from(Some(bad)).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Invalid, "{bad}");
            assert!(err.to_string().contains(TIMEOUT_VAR), "{bad}: {err}");
        }
    }

    #[test]
    fn nothing_given_says_where_to_put_it() {
        let err = resolve(None, None, None).unwrap_err();
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
        let s = from_config(&team, &env).unwrap();
        assert_eq!(s.display(), "postgres://alice@127.0.0.1:5999/team");
        assert!(!s.tls());
        assert_eq!(s.scrub("x pw-from-var y"), "x [REDACTED] y");
        assert_eq!(s.config.get_password(), Some(&b"pw-from-var"[..]));
        // PGPASSWORD is not read when another variable is named.
        let only_pg = |name: &str| (name == PASSWORD_VAR).then(|| "pg".to_owned());
        let s = from_config(&team, &only_pg).unwrap();
        assert_eq!(s.config.get_password(), None);
        assert!(
            s.password_from
                .starts_with("the variable TEAM_PW, or the OS keyring (`cairn team login`"),
            "{}",
            s.password_from
        );
        // Off loopback, TLS; a socket directory is local.
        let remote = TeamConfig {
            host: "db.example".into(),
            ..team.clone()
        };
        assert!(from_config(&remote, &env).unwrap().tls());
        let socket = TeamConfig {
            host: "/run/postgresql".into(),
            port: None,
            ..team.clone()
        };
        let s = from_config(&socket, &env).unwrap();
        assert!(!s.tls());
        assert_eq!(s.display(), "postgres://alice@/run/postgresql/team");
        // A half-filled table says which field is missing.
        let half = TeamConfig {
            database: String::new(),
            ..team
        };
        let err = from_config(&half, &env).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Invalid);
        assert!(err.to_string().contains("database"), "{err}");
    }

    /// The order a password is looked for: the URL in the environment, the variable, the
    /// keyring (asked only when nothing before gave one, under the server's account).
    #[test]
    fn the_keyring_comes_last_and_a_missing_one_is_no_error() {
        use std::cell::RefCell;
        let asked = RefCell::new(Vec::<String>::new());
        let holds = |account: &str| {
            asked.borrow_mut().push(account.to_owned());
            Ok(Some("from-the-keyring".to_owned()))
        };
        let s = Server::resolve(
            None,
            Some("postgres://alice:in-url@127.0.0.1/team".into()),
            Some("in-var".into()),
            &holds,
        )
        .unwrap();
        assert_eq!(s.password_source(), &PasswordSource::Url);
        let s = Server::resolve(
            Some("postgres://alice@127.0.0.1/team"),
            None,
            Some("in-var".into()),
            &holds,
        )
        .unwrap();
        assert_eq!(
            s.password_source(),
            &PasswordSource::Variable(PASSWORD_VAR.into())
        );
        assert!(asked.borrow().is_empty(), "asked: {:?}", asked.borrow());
        let s =
            Server::resolve(Some("postgres://alice@127.0.0.1/team"), None, None, &holds).unwrap();
        assert_eq!(s.password_source(), &PasswordSource::Keyring);
        assert_eq!(s.config.get_password(), Some(&b"from-the-keyring"[..]));
        assert_eq!(s.scrub("x from-the-keyring"), "x [REDACTED]");
        assert_eq!(s.account(), "alice@127.0.0.1:5432/team");
        // The form names the same item as the URL: the port is always written.
        let team = TeamConfig {
            host: "127.0.0.1".into(),
            port: None,
            database: "team".into(),
            user: "alice".into(),
            password_env: String::new(),
        };
        let s = Server::from_team_config(&team, &|_| None, &holds).unwrap();
        assert_eq!(s.password_source(), &PasswordSource::Keyring);
        assert_eq!(
            asked.borrow().as_slice(),
            ["alice@127.0.0.1:5432/team", "alice@127.0.0.1:5432/team"]
        );
        // A keyring that cannot be asked: no error, the hint says why it gave nothing.
        let broken = |_: &str| {
            Err(keyring::Unreachable {
                message: "no D-Bus session bus".into(),
                hint: "h".into(),
            })
        };
        let s = Server::from_team_config(&team, &|_| None, &broken).unwrap();
        assert_eq!(s.password_source(), &PasswordSource::None);
        assert!(
            s.password_from.contains("cairn team login"),
            "{}",
            s.password_from
        );
        assert!(
            s.password_from.contains("no D-Bus session bus"),
            "{}",
            s.password_from
        );
    }

    /// The connection string a new teammate is told to push with: their user in place of the
    /// administrator's, every part that URL syntax would read otherwise percent-encoded, so it
    /// parses back to the same user, hosts, ports and database; never the administrator's
    /// password, wherever it came from; through the redactor's definite rules.
    #[test]
    fn the_teammates_url_keeps_every_part_whole_and_no_password() {
        let admin = |url: &str| resolve(Some(url), None, None).unwrap();
        let tcp = admin("postgres://admin@db.example:6543/team");
        for (user, written) in [
            ("ana", "ana"),
            ("a@b", "a%40b"),
            ("a:b", "a%3Ab"),
            ("a/b", "a%2Fb"),
            ("50%", "50%25"),
            ("a b", "a%20b"),
            ("émile", "%C3%A9mile"),
            ("a,b?c#d", "a%2Cb%3Fc%23d"),
            ("o'brien\"", "o%27brien%22"),
        ] {
            let url = tcp.url_as(user);
            assert_eq!(
                url,
                format!("postgres://{written}@db.example:6543/team"),
                "{user:?}"
            );
            let back = Config::from_str(&url).unwrap();
            assert_eq!(back.get_user(), Some(user), "{url}");
            assert_eq!(back.get_dbname(), Some("team"), "{url}");
            assert_eq!(back.get_ports(), [6543], "{url}");
            assert!(back.get_password().is_none(), "{url}");
        }
        // Hosts and databases as hostile: a socket directory, IPv6, two hosts, a database
        // name holding what ends a URL's path.
        for (given, hosts, ports, db, written) in [
            (
                "postgres://admin@%2Fvar%2Frun%2Fpostgresql/team",
                vec![Host::Unix("/var/run/postgresql".into())],
                vec![5432],
                "team",
                "postgres://ana@%2Fvar%2Frun%2Fpostgresql:5432/team",
            ),
            (
                "postgres://admin@[::1]:5433/team",
                vec![Host::Tcp("::1".into())],
                vec![5433],
                "team",
                "postgres://ana@[::1]:5433/team",
            ),
            (
                "postgres://admin@h1:1,h2:2/team",
                vec![Host::Tcp("h1".into()), Host::Tcp("h2".into())],
                vec![1, 2],
                "team",
                "postgres://ana@h1:1,h2:2/team",
            ),
            (
                "postgres://admin@localhost/my%20db%3F%40x",
                vec![Host::Tcp("localhost".into())],
                vec![5432],
                "my db?@x",
                "postgres://ana@localhost:5432/my%20db%3F%40x",
            ),
            // No database named: the administrator's resolved one (their user), not the
            // teammate's name, which PostgreSQL would take instead.
            (
                "postgres://admin@localhost",
                vec![Host::Tcp("localhost".into())],
                vec![5432],
                "admin",
                "postgres://ana@localhost:5432/admin",
            ),
        ] {
            let url = admin(given).url_as("ana");
            assert_eq!(url, written, "{given}");
            let back = Config::from_str(&url).unwrap();
            assert_eq!(back.get_hosts(), hosts.as_slice(), "{url}");
            assert_eq!(back.get_ports(), ports.as_slice(), "{url}");
            assert_eq!(back.get_dbname(), Some(db), "{url}");
        }
        // The administrator's password in CAIRN_TEAM_URL, or PGPASSWORD: in no teammate's URL,
        // not even when the name asked for is the password itself.
        let secret = "S3cret-pw-4f9a";
        for server in [
            resolve(
                None,
                Some(format!("postgres://admin:{secret}@db.example/team")),
                None,
            )
            .unwrap(),
            resolve(
                Some("postgres://admin@db.example/team"),
                None,
                Some(secret.into()),
            )
            .unwrap(),
        ] {
            for user in ["ana", secret] {
                let url = server.url_as(user);
                assert!(!url.contains(secret), "{url}");
            }
        }
        // A name shaped as a token is a token to the redactor, here as in any message.
        let token = "ghp_0123456789abcdefghijklmnopqrstuvwxyz";
        let url = tcp.url_as(token);
        assert!(!url.contains("ghp_0123"), "{url}");
        assert!(url.contains("[REDACTED"), "{url}");
    }
}
