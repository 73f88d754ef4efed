//! A throwaway environment for running `cairn`: its own data dir, home and source dirs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub struct Env {
    pub root: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Env {
        let env = Env {
            root: tempfile::tempdir().unwrap(),
        };
        for dir in ["data", "home", "claude", "codex"] {
            std::fs::create_dir_all(env.root.path().join(dir)).unwrap();
        }
        env
    }

    pub fn data(&self) -> PathBuf {
        self.root.path().join("data")
    }
    /// The archive's database, checked whole first: SQLite's integrity check and the
    /// full-text index's agreement with the records it indexes.
    pub fn whole_db(&self) -> rusqlite::Connection {
        let conn = rusqlite::Connection::open(self.data().join("cairn.db")).unwrap();
        let ok: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(ok, "ok");
        conn.execute(
            "INSERT INTO records_fts (records_fts) VALUES ('integrity-check')",
            [],
        )
        .unwrap();
        conn
    }
    pub fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }
    pub fn claude(&self) -> PathBuf {
        self.root.path().join("claude")
    }
    pub fn codex(&self) -> PathBuf {
        self.root.path().join("codex")
    }

    /// Copy the repository's fixture transcripts into this environment's source dirs.
    pub fn with_fixtures(self) -> Env {
        copy_tree(
            &fixtures().join("claude"),
            &self.claude().join("-home-USER-projects-spotter"),
        );
        copy_tree(&fixtures().join("codex"), &self.codex().join("2026/08/03"));
        self
    }

    /// `n` copies of the big Claude fixture session under new ids, each in a project folder
    /// of its own (what the kill tests run their commands over).
    pub fn with_big_sessions(&self, n: usize) {
        let id = "ae4a77f8-aedd-4bc1-888f-c94edc91af04";
        let big = std::fs::read_to_string(fixtures().join(format!("claude/{id}.jsonl"))).unwrap();
        for i in 0..n {
            let dir = self.claude().join(format!("-p{i}"));
            std::fs::create_dir_all(&dir).unwrap();
            let copy = format!("ae4a77f8-aedd-4bc1-888f-{i:012}");
            std::fs::write(dir.join(format!("{copy}.jsonl")), big.replace(id, &copy)).unwrap();
        }
    }

    pub fn command(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
        // Run outside any repository: `-C .` must not be this checkout (a skim would be
        // scoped to it).
        cmd.current_dir(self.root.path())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home())
            // Times are printed on the person's clock: the tests' is UTC, wherever they run.
            .env("TZ", "UTC")
            .env("CAIRN_DATA_DIR", self.data())
            .env("CLAUDE_PROJECTS_DIR", self.claude())
            .env("CODEX_SESSIONS_DIR", self.codex())
            .stdin(Stdio::null());
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output().unwrap()
    }

    /// [`Env::run`] with `input` on stdin (an agent's hook payload).
    pub fn run_with_stdin(&self, args: &[&str], input: &[u8]) -> Output {
        let mut cmd = self.command();
        cmd.args(args);
        fed(cmd, input)
    }

    /// Run and expect success; return stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        succeeded(self.run(args), &format!("cairn {args:?}"))
    }

    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        serde_json::from_str(&self.ok(&all)).unwrap()
    }
}

/// `cairn args…` run while this test holds the archive's capture lock, as another process's
/// rebuild holds it: see [`run_holding`].
pub fn run_while_locked(env: &Env, args: &[&str]) -> (String, Output) {
    let lock = cairn_core::archive::capture::CaptureLock::open(&env.data()).unwrap();
    run_holding(env, lock.lock().unwrap(), args)
}

/// `cairn args…` started while `held` (whatever holds the capture lock: this process's guard,
/// another process) is alive: the first line it writes to stderr (empty when it wrote none
/// within a minute), then, `held` dropped, its output and the rest of its stderr. The lock
/// runners above and below share it, so a command that says it waits is read the same way.
fn run_holding<H>(env: &Env, held: H, args: &[&str]) -> (String, Output) {
    use std::io::{BufRead as _, Read as _};
    let mut child = env
        .command()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut first = String::new();
        let _ = stderr.read_line(&mut first);
        let _ = tx.send(first);
        let mut rest = Vec::new();
        let _ = stderr.read_to_end(&mut rest);
        rest
    });
    // A command that never says it waits would wait for ever: the lock is let go after a
    // minute either way, and the empty line fails the test's assertion.
    let first = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .unwrap_or_default();
    drop(held);
    let mut out = child.wait_with_output().unwrap();
    out.stderr = reader.join().unwrap();
    (first, out)
}

/// Run `cmd` with `input` on its stdin, closed after it, as an agent runs its hook.
pub fn fed(mut cmd: Command, input: &[u8]) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, input).unwrap();
    drop(stdin);
    child.wait_with_output().unwrap()
}

/// The check named `name` of a `doctor --json` report.
pub fn check<'a>(doctor: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no {name} check in {doctor}"))
}

/// The stdout of a command that must have succeeded (`what` names it when it did not, with its
/// stderr).
pub fn succeeded(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Run `git -C dir args…` with a test identity (and `input` on stdin); panic with git's message
/// when it fails; return stdout.
pub fn git_with(dir: &Path, args: &[&str], input: Option<&[u8]>) -> String {
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.invalid");
    let out = fed(cmd, input.unwrap_or_default());
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// [`git_with`] without input.
pub fn git(dir: &Path, args: &[&str]) -> String {
    git_with(dir, args, None)
}

/// A bare repository on `main` at `<root>/remote.git`: a team's remote.
pub fn bare_remote(root: &Path) -> PathBuf {
    let remote = root.join("remote.git");
    git(
        root,
        &[
            "init",
            "-q",
            "--bare",
            "-b",
            "main",
            remote.to_str().unwrap(),
        ],
    );
    remote
}

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

pub fn copy_tree(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let to = dst.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &to);
        } else if entry.path().extension().is_some_and(|e| e == "jsonl") {
            std::fs::copy(entry.path(), to).unwrap();
        }
    }
}

/// Copy every file of `src` (its SOURCES.md aside) into `dst`: an agent's fixtures as it
/// keeps them, documents and the files beside its transcripts included.
pub fn copy_all(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let to = dst.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_all(&entry.path(), &to);
        } else if entry.file_name() != "SOURCES.md" {
            std::fs::copy(entry.path(), to).unwrap();
        }
    }
}

/// Make sure the built-in embedding model is installed (scripts/fetch-model.sh, once).
pub fn ensure_model() {
    static FETCH: std::sync::Once = std::sync::Once::new();
    FETCH.call_once(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let status = Command::new("bash")
            .arg(root.join("scripts/fetch-model.sh"))
            .status()
            .unwrap();
        assert!(status.success(), "scripts/fetch-model.sh failed");
    });
}

/// A FIFO at `path` (`mkfifo`): what a reader must never wait on.
pub fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

/// A Gemini session rewound (its document written again without its last messages), synced:
/// the environment and the session's id.
pub fn rewound_gemini() -> (Env, &'static str) {
    let env = Env::new();
    let rel = "m-gemini/chats/session-2025-12-24T06-40-c330aea9.json";
    let path = env.home().join(".gemini/tmp").join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let fixtures = fixtures();
    std::fs::copy(fixtures.join("gemini").join(rel), &path).unwrap();
    env.ok(&["sync"]);
    std::fs::copy(fixtures.join("gemini-rewound").join(rel), &path).unwrap();
    // A later mtime, as the agent's rewrite has.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(later)
        .unwrap();
    env.ok(&["sync"]);
    (env, "c330aea9-39d8-4bf1-ac29-5fdb4baaad16")
}

/// The archive's capture lock held by a process of its own (`flock(1)`, its command line
/// `flock -o capture.lock sh -c … <args>`), not by the test: what `/proc/locks` names when a
/// sync or the app holds it. Dropped, it is continued if stopped and ended, so a failing test
/// never leaves a stopped process behind.
#[cfg(target_os = "linux")]
pub struct HeldLock {
    child: std::process::Child,
}

#[cfg(target_os = "linux")]
impl HeldLock {
    /// Take `env`'s capture lock in a new process whose command line ends with `args`; back
    /// once it holds the lock.
    pub fn take(env: &Env, args: &[&str]) -> HeldLock {
        use std::io::BufRead as _;
        // Relative to the data dir: the command line stays short enough to be shown whole.
        let mut child = Command::new("flock")
            .current_dir(env.data())
            .args(["-o", "capture.lock", "sh", "-c", "echo held; read _"])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("flock(1), from util-linux");
        let mut said = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut said)
            .unwrap();
        assert_eq!(said, "held\n", "flock did not take the lock");
        HeldLock { child }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Stop the holder (`SIGSTOP`, as Ctrl-Z does); back once the system says it is stopped.
    pub fn stop(&self) {
        signal(self.pid(), "STOP");
        let stat = format!("/proc/{}/stat", self.pid());
        for _ in 0..500 {
            let state = std::fs::read_to_string(&stat).unwrap_or_default();
            if state
                .rsplit_once(')')
                .is_some_and(|(_, s)| s.trim_start().starts_with('T'))
            {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("process {} did not stop", self.pid());
    }
}

#[cfg(target_os = "linux")]
impl Drop for HeldLock {
    fn drop(&mut self) {
        signal(self.pid(), "CONT");
        // Its shell reads stdin: closed, it ends, and so does flock, letting go of the lock.
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Send the signal `name` (`STOP`, `CONT`) to `pid`.
#[cfg(target_os = "linux")]
fn signal(pid: u32, name: &str) {
    let _ = Command::new("sh")
        .args(["-c", "kill -s \"$0\" \"$1\"", name, &pid.to_string()])
        .status();
}

/// `cairn args…` run while another process (`held`) holds the capture lock: see
/// [`run_holding`].
#[cfg(target_os = "linux")]
pub fn run_while_held(env: &Env, held: HeldLock, args: &[&str]) -> (String, Output) {
    run_holding(env, held, args)
}

/// The MCP server's answer to one call of `tool` with `arguments`, as an agent reads it:
/// `cairn mcp` over stdio on this environment's archive, started in `dir` (`env.root` is where
/// [`Env::command`] starts every other command).
pub fn mcp_call(
    env: &Env,
    dir: &Path,
    tool: &str,
    arguments: &serde_json::Value,
) -> serde_json::Value {
    use std::io::{BufRead, BufReader, Write};
    let messages = [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": tool, "arguments": arguments}}),
    ];
    let mut server = env
        .command()
        .arg("mcp")
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    for m in &messages {
        writeln!(stdin, "{m}").unwrap();
    }
    // Read until the call is answered; a server that never answers fails rather than hangs.
    let stdout = server.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(m) = serde_json::from_str::<serde_json::Value>(&line)
                && m["id"] == 2
            {
                let _ = tx.send(m);
                return;
            }
        }
    });
    let answer = rx.recv_timeout(std::time::Duration::from_secs(120));
    drop(stdin);
    let _ = server.kill();
    let _ = server.wait();
    let answer = answer.unwrap_or_else(|_| panic!("no answer to `{tool}` from the MCP server"));
    answer["result"]["content"][0]["text"]
        .as_str()
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or_else(|| panic!("{answer}"))
}
