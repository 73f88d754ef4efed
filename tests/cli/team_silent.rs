//! A team archive that accepts the connection and then says nothing (a frozen server, a
//! network that drops everything after the handshake): every `cairn team` command ends with an
//! error naming the server and the setting that bounds the wait, instead of waiting forever.
//! No PostgreSQL needed: the silent server is a loopback listener of the test's own.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::Env;

/// How the listener behaves once a client connects.
#[derive(Clone, Copy)]
enum Silence {
    /// Says nothing at all: the login never ends.
    FromTheStart,
    /// Lets the client log in (no password asked), then answers nothing.
    AfterLogin,
}

/// A loopback listener that holds every connection open and answers as `how` says; its
/// address is `127.0.0.1:port`.
struct SilentServer {
    port: u16,
    /// The connections, kept open until the test ends.
    held: Arc<Mutex<Vec<TcpStream>>>,
}

impl SilentServer {
    fn start(how: Silence) -> SilentServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let held = Arc::new(Mutex::new(Vec::new()));
        let keep = Arc::clone(&held);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                if let Silence::AfterLogin = how {
                    // The startup message: its length, then the rest of it.
                    let mut len = [0u8; 4];
                    if stream.read_exact(&mut len).is_err() {
                        continue;
                    }
                    let mut rest = vec![0u8; (u32::from_be_bytes(len) as usize).saturating_sub(4)];
                    if stream.read_exact(&mut rest).is_err() {
                        continue;
                    }
                    // AuthenticationOk, then ReadyForQuery (idle).
                    let _ =
                        stream.write_all(&[b'R', 0, 0, 0, 8, 0, 0, 0, 0, b'Z', 0, 0, 0, 5, b'I']);
                }
                keep.lock().unwrap().push(stream);
            }
        });
        SilentServer { port, held }
    }

    fn url(&self) -> String {
        format!("postgres://ann@127.0.0.1:{}/team", self.port)
    }
}

impl Drop for SilentServer {
    fn drop(&mut self) {
        for s in self.held.lock().unwrap().drain(..) {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }
}

/// Run `cairn args` with each wait bounded to 2 s; fail the test if it is still running after
/// the test's own generous watchdog (no timing is asserted beyond "it ended").
fn run_bounded(env: &Env, args: &[&str]) -> Output {
    let mut child = env
        .command()
        .env("PGPASSWORD", "pw-unused")
        .env("CAIRN_TEAM_TIMEOUT", "2")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let watchdog = Instant::now() + Duration::from_secs(120);
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if Instant::now() > watchdog {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "cairn {args:?} was still waiting on a silent server after 120 s; stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_team_archive_that_never_answers_ends_each_command_with_an_error_naming_it() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    for how in [Silence::FromTheStart, Silence::AfterLogin] {
        let server = SilentServer::start(how);
        let url = server.url();
        let at = format!("127.0.0.1:{}", server.port);
        for args in [
            vec!["team", "push", "--to", &url],
            vec!["team", "search", "phoenix", "--from", &url],
            vec!["team", "show", "sha256-0123456789", "--from", &url],
        ] {
            let out = run_bounded(&env, &args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
            assert!(err.contains("did not answer in 2 s"), "{args:?}: {err}");
            assert!(
                err.contains(&format!("check that the server at {at} is running")),
                "{args:?}: {err}"
            );
            assert!(err.contains("CAIRN_TEAM_TIMEOUT"), "{args:?}: {err}");
        }
    }
}

#[test]
fn a_timeout_that_is_not_a_number_of_seconds_is_refused_with_what_to_set() {
    let env = Env::new();
    let out = env
        .command()
        .env("CAIRN_TEAM_TIMEOUT", "soon")
        .args([
            "team",
            "search",
            "x",
            "--from",
            "postgres://ann@127.0.0.1:1/team",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("CAIRN_TEAM_TIMEOUT is \"soon\""), "{err}");
    assert!(err.contains("whole seconds"), "{err}");
}
