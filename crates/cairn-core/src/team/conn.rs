//! One connection to the team archive whose every wait is bounded: a server that accepts the
//! TCP connection and then says nothing (a frozen process, a network that drops packets after
//! the handshake) ends the command with an error instead of holding it forever.
//!
//! tokio-postgres' `connect_timeout` covers only the TCP connect; TCP keepalives notice a
//! peer whose host is gone, but not one whose kernel still acknowledges while the server
//! process is stopped. So the login and each round trip after it (one statement, or one
//! batch of a push) are waited for at most [`Conn::wait`]: the push of many sessions is
//! bounded per statement, never as a whole. Once a wait has run out the connection is left
//! for good (an answer may still be on its way, and would be taken for the next one's): every
//! later call fails at once with the same error.
//!
//! The calls are synchronous, on a single-threaded tokio runtime this connection owns, which
//! drives the connection's messages only while a call waits (as the `postgres` crate does).

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use tokio_postgres::error::{DbError, SqlState};
use tokio_postgres::tls::{MakeTlsConnect, TlsConnect};
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config, Row, SimpleQueryMessage, Socket};

/// The messages of one connection, which must be polled for any call to make progress.
type Driver = Pin<Box<dyn Future<Output = Result<(), tokio_postgres::Error>> + Send>>;

/// Why a call to the server failed.
#[derive(Debug)]
pub enum PgError {
    /// The server (or the connection to it) answered with an error.
    Server(tokio_postgres::Error),
    /// The server said nothing for this long: the connection is left.
    Silent(Duration),
    /// No runtime could be started for the connection.
    Runtime(std::io::Error),
}

impl From<tokio_postgres::Error> for PgError {
    fn from(e: tokio_postgres::Error) -> PgError {
        PgError::Server(e)
    }
}

impl PgError {
    /// The server's error code, when it sent one.
    pub fn code(&self) -> Option<&SqlState> {
        match self {
            PgError::Server(e) => e.code(),
            _ => None,
        }
    }

    /// The server's error, when it sent one.
    pub fn as_db_error(&self) -> Option<&DbError> {
        match self {
            PgError::Server(e) => e.as_db_error(),
            _ => None,
        }
    }
}

impl std::fmt::Display for PgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PgError::Server(e) => match std::error::Error::source(e) {
                // A source error (I/O, TLS) says more than the wrapper.
                Some(src) if e.as_db_error().is_none() => write!(f, "{e}: {src}"),
                _ => match e.as_db_error() {
                    Some(db) => f.write_str(db.message()),
                    None => write!(f, "{e}"),
                },
            },
            PgError::Silent(waited) => {
                write!(f, "the server did not answer in {} s", waited.as_secs())
            }
            PgError::Runtime(e) => write!(f, "cannot start the connection's runtime: {e}"),
        }
    }
}

/// A connection; see the module's documentation.
pub struct Conn {
    /// `None` only while the connection closes (in `drop`).
    client: Option<Client>,
    link: Link,
}

/// What a call waits on: the runtime, the connection's messages, and how long a wait may be.
struct Link {
    runtime: tokio::runtime::Runtime,
    driver: Driver,
    /// The connection's messages ended (the server closed it, or it failed).
    ended: bool,
    /// A wait ran out: the connection is not used again.
    silent: Option<Duration>,
    wait: Duration,
}

impl Conn {
    /// Connect (TCP, TLS, login) within `wait`; every call after it waits at most `wait` too.
    pub fn connect<T>(config: &Config, tls: T, wait: Duration) -> Result<Conn, PgError>
    where
        T: MakeTlsConnect<Socket> + 'static,
        T::Stream: Send + 'static,
        T::TlsConnect: Send,
        <T::TlsConnect as TlsConnect<Socket>>::Future: Send,
    {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(PgError::Runtime)?;
        let connected = runtime.block_on(async {
            // Made inside the runtime: a timer needs its clock.
            tokio::time::timeout(wait, config.connect(tls)).await
        });
        let (client, connection) = connected.map_err(|_| PgError::Silent(wait))??;
        Ok(Conn {
            client: Some(client),
            link: Link {
                runtime,
                driver: Box::pin(connection),
                ended: false,
                silent: None,
                wait,
            },
        })
    }

    /// How long any one call waits for the server.
    pub fn wait(&self) -> Duration {
        self.link.wait
    }

    /// The client and the link apart, so a call can borrow one while the other waits.
    fn parts(&mut self) -> Result<(&Client, &mut Link), PgError> {
        match (&self.client, &mut self.link) {
            (Some(client), link) => Ok((client, link)),
            (None, link) => Err(PgError::Silent(link.wait)),
        }
    }

    pub fn query(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, PgError> {
        let (client, link) = self.parts()?;
        link.run(client.query(sql, params))
    }

    /// Exactly one row, else an error.
    pub fn query_one(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Row, PgError> {
        let (client, link) = self.parts()?;
        link.run(client.query_one(sql, params))
    }

    pub fn execute(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, PgError> {
        let (client, link) = self.parts()?;
        link.run(client.execute(sql, params))
    }

    /// Statements separated by `;`, without parameters, in one round trip.
    pub fn batch_execute(&mut self, sql: &str) -> Result<(), PgError> {
        let (client, link) = self.parts()?;
        link.run(client.batch_execute(sql))
    }

    pub fn simple_query(&mut self, sql: &str) -> Result<Vec<SimpleQueryMessage>, PgError> {
        let (client, link) = self.parts()?;
        link.run(client.simple_query(sql))
    }

    /// A transaction, rolled back unless [`Tx::commit`] is called.
    pub fn transaction(&mut self) -> Result<Tx<'_>, PgError> {
        self.begin("BEGIN")
    }

    /// A read-only transaction whose statements all read one snapshot.
    pub fn snapshot(&mut self) -> Result<Tx<'_>, PgError> {
        self.begin("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
    }

    fn begin(&mut self, sql: &str) -> Result<Tx<'_>, PgError> {
        self.batch_execute(sql)?;
        Ok(Tx {
            conn: self,
            open: true,
        })
    }
}

impl Drop for Conn {
    /// Say goodbye (PostgreSQL's Terminate message, sent once the client is gone) so the server
    /// does not log a lost connection; not to a server that stopped answering.
    fn drop(&mut self) {
        drop(self.client.take());
        let link = &mut self.link;
        if link.ended || link.silent.is_some() {
            return;
        }
        let wait = link.wait;
        let driver = &mut link.driver;
        let _ = link
            .runtime
            .block_on(async { tokio::time::timeout(wait, driver).await });
    }
}

impl Link {
    /// Wait for `work` while the connection's messages are driven, at most [`Link::wait`].
    fn run<T>(
        &mut self,
        work: impl Future<Output = Result<T, tokio_postgres::Error>>,
    ) -> Result<T, PgError> {
        if let Some(waited) = self.silent {
            return Err(PgError::Silent(waited));
        }
        let wait = self.wait;
        let driver = &mut self.driver;
        let ended = &mut self.ended;
        let out = self.runtime.block_on(async {
            let mut work = std::pin::pin!(tokio::time::timeout(wait, work));
            std::future::poll_fn(|cx| {
                if !*ended && let Poll::Ready(done) = driver.as_mut().poll(cx) {
                    *ended = true;
                    // The connection failed: its error says why (the request only that it
                    // was closed).
                    if let Err(e) = done {
                        return Poll::Ready(Ok(Err(e)));
                    }
                }
                work.as_mut().poll(cx)
            })
            .await
        });
        match out {
            Ok(done) => done.map_err(PgError::Server),
            Err(_) => {
                self.silent = Some(wait);
                Err(PgError::Silent(wait))
            }
        }
    }
}

/// A transaction on a [`Conn`]; its calls are the connection's. Dropped without
/// [`Tx::commit`], it is rolled back.
pub struct Tx<'a> {
    conn: &'a mut Conn,
    open: bool,
}

impl Tx<'_> {
    pub fn commit(mut self) -> Result<(), PgError> {
        self.open = false;
        self.conn.batch_execute("COMMIT")
    }
}

impl std::ops::Deref for Tx<'_> {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        self.conn
    }
}

impl std::ops::DerefMut for Tx<'_> {
    fn deref_mut(&mut self) -> &mut Conn {
        self.conn
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if self.open {
            // On a connection that failed or went silent this fails at once; the server ends
            // the transaction with the connection.
            let _ = self.conn.batch_execute("ROLLBACK");
        }
    }
}
