//! What generators are at hand, found without sending anything: agent CLIs on `PATH` (and the
//! version each reports), OpenAI-compatible servers listening on their usual loopback ports (and
//! the models they list), and API-key variables that are set (by name: a value is never read).
//!
//! Only loopback is contacted: a TCP connect to each port, then `GET /v1/models` where one
//! answers. Everything the search looks at comes in a [`Probe`], so tests point it at a temp
//! `PATH`, an ephemeral port and a made-up environment.

use std::ffi::OsString;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::{Client, Endpoint, Server};
use crate::config::{GENERATOR_AGENTS, GeneratorChoice};

/// A local server kind and the port it listens on by default.
pub const SERVERS: [(&str, &str, u16); 4] = [
    ("ollama", "Ollama", 11434),
    ("lmstudio", "LM Studio", 1234),
    ("llamacpp", "llama.cpp server", 8080),
    ("vllm", "vLLM", 8000),
];

/// API-key variables Cairn knows the OpenAI-compatible endpoint of: (variable, provider,
/// endpoint). All are paid APIs.
pub const KEY_VARIABLES: [(&str, &str, &str); 8] = [
    ("OPENAI_API_KEY", "OpenAI", "https://api.openai.com/v1"),
    (
        "ANTHROPIC_API_KEY",
        "Anthropic",
        "https://api.anthropic.com/v1",
    ),
    (
        "GEMINI_API_KEY",
        "Google Gemini",
        "https://generativelanguage.googleapis.com/v1beta/openai",
    ),
    (
        "OPENROUTER_API_KEY",
        "OpenRouter",
        "https://openrouter.ai/api/v1",
    ),
    ("GROQ_API_KEY", "Groq", "https://api.groq.com/openai/v1"),
    ("MISTRAL_API_KEY", "Mistral", "https://api.mistral.ai/v1"),
    (
        "DEEPSEEK_API_KEY",
        "DeepSeek",
        "https://api.deepseek.com/v1",
    ),
    (
        "TOGETHER_API_KEY",
        "Together AI",
        "https://api.together.xyz/v1",
    ),
];

/// How long an agent's `--version` may take, and a port's connect and `/models`.
const VERSION_TIMEOUT: Duration = Duration::from_secs(5);
const CONNECT_TIMEOUT: Duration = Duration::from_millis(300);
const MODELS_TIMEOUT: Duration = Duration::from_secs(3);
/// At most this many listed models are kept (a server may list thousands).
const MAX_MODELS: usize = 200;

/// Where to look.
#[derive(Debug, Clone)]
pub struct Probe {
    /// The `PATH` to search for agent CLIs.
    pub path: OsString,
    /// The servers to knock on: (kind, label, port) on 127.0.0.1.
    pub servers: Vec<(String, String, u16)>,
    /// The names of the set environment variables (values are never looked at).
    pub set_variables: Vec<String>,
}

impl Probe {
    /// This process's `PATH` and environment, and the usual ports (Ollama's where
    /// `OLLAMA_HOST` moves it on this machine).
    pub fn from_env() -> Probe {
        let ollama = std::env::var("OLLAMA_HOST")
            .ok()
            .and_then(|v| loopback_port(&v));
        Probe {
            path: std::env::var_os("PATH").unwrap_or_default(),
            servers: SERVERS
                .iter()
                .map(|(k, l, p)| {
                    let port = ollama.filter(|_| *k == "ollama").unwrap_or(*p);
                    ((*k).to_owned(), (*l).to_owned(), port)
                })
                .collect(),
            set_variables: KEY_VARIABLES
                .iter()
                .filter(|(v, _, _)| std::env::var_os(v).is_some_and(|x| !x.is_empty()))
                .map(|(v, _, _)| (*v).to_owned())
                .collect(),
        }
    }
}

/// The port `OLLAMA_HOST` (Ollama's own setting: `host:port`, `:port`, `http://host:port`)
/// puts the server on, when that host is this machine; `None` for another host (nothing
/// leaves loopback), another scheme or no port.
fn loopback_port(value: &str) -> Option<u16> {
    let v = value.trim();
    let v = v.strip_prefix("http://").unwrap_or(v);
    let v = v.split('/').next().unwrap_or_default();
    let (host, port) = v.rsplit_once(':')?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let here = matches!(host, "" | "localhost" | "::1" | "0.0.0.0" | "::")
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback());
    here.then(|| port.parse::<u16>().ok())
        .flatten()
        .filter(|p| *p != 0)
}

/// What a found generator is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum DetectedKind {
    /// An agent CLI on `PATH`.
    Agent,
    /// A server answering on a loopback port.
    Server,
    /// An API-key variable that is set.
    Key,
}

/// One generator that could be picked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct DetectedGenerator {
    pub kind: DetectedKind,
    /// `claude`; `ollama`; `OPENAI_API_KEY`.
    pub name: String,
    /// For a person: `claude 2.1.3 (Claude Code)`, `Ollama on port 11434`, `OpenAI`.
    pub label: String,
    /// An agent's binary.
    pub path: Option<String>,
    pub version: Option<String>,
    /// A server's or a key's OpenAI-compatible base URL.
    pub endpoint: Option<String>,
    /// What a server lists (at most 200).
    pub models: Vec<String>,
    /// The variable holding the key (its name only).
    pub api_key_env: Option<String>,
    /// Calls cost money (a hosted API).
    pub paid: bool,
    /// Why it may not work as found (a `--version` that failed, a server that lists nothing).
    pub problem: Option<String>,
    /// The generator a pick of it sets up: an agent by its name, a server with the first model
    /// it lists, a key's provider with its variable. `cairn recall extract setup` and the
    /// desktop's list apply it as it is ([`crate::config::ExtractSetup::with_generator`]).
    #[serde(default)]
    pub setup: GeneratorChoice,
}

impl DetectedGenerator {
    fn new(kind: DetectedKind, name: &str, label: String) -> Self {
        DetectedGenerator {
            kind,
            name: name.to_owned(),
            label,
            path: None,
            version: None,
            endpoint: None,
            models: Vec::new(),
            api_key_env: None,
            paid: false,
            problem: None,
            setup: GeneratorChoice::default(),
        }
    }

    /// What picking it sets up: an agent CLI by its name (its default model), a local server
    /// with the first model it lists, a hosted API by its key variable with the model left for
    /// the person to name.
    fn stands_for(&self) -> GeneratorChoice {
        let endpoint = self.endpoint.as_deref().unwrap_or_default();
        match self.kind {
            DetectedKind::Agent => GeneratorChoice::agent(&self.name),
            DetectedKind::Server => GeneratorChoice {
                model: self.models.first().cloned().unwrap_or_default(),
                ..GeneratorChoice::endpoint(endpoint)
            },
            DetectedKind::Key => GeneratorChoice {
                api_key_env: self.api_key_env.clone().unwrap_or_default(),
                ..GeneratorChoice::endpoint(endpoint)
            },
        }
    }
}

/// Everything `probe` finds: agents, then servers, then keys. Agents and servers are looked at
/// in parallel (each bounded by a timeout).
pub fn detect(probe: &Probe) -> Vec<DetectedGenerator> {
    let (agents, servers) = std::thread::scope(|s| {
        let agents: Vec<_> = GENERATOR_AGENTS
            .iter()
            .map(|name| s.spawn(move || agent(name, &probe.path)))
            .collect();
        let servers: Vec<_> = probe
            .servers
            .iter()
            .map(|(kind, label, port)| s.spawn(move || server(kind, label, *port)))
            .collect();
        let join = |hs: Vec<std::thread::ScopedJoinHandle<'_, Option<DetectedGenerator>>>| {
            hs.into_iter()
                .filter_map(|h| h.join().ok().flatten())
                .collect::<Vec<_>>()
        };
        (join(agents), join(servers))
    });
    let keys = KEY_VARIABLES
        .iter()
        .filter(|(v, _, _)| probe.set_variables.iter().any(|s| s == v))
        .map(|(var, provider, endpoint)| {
            let mut g = DetectedGenerator::new(
                DetectedKind::Key,
                var,
                format!("{provider} (key in {var})"),
            );
            g.endpoint = Some((*endpoint).to_owned());
            g.api_key_env = Some((*var).to_owned());
            g.paid = true;
            g
        });
    agents
        .into_iter()
        .chain(servers)
        .chain(keys)
        .map(|mut g| {
            g.setup = g.stands_for();
            g
        })
        .collect()
}

/// The first executable `name` in `path`.
pub fn which(name: &str, path: &OsString) -> Option<PathBuf> {
    std::env::split_paths(path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(p) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

fn agent(name: &str, path: &OsString) -> Option<DetectedGenerator> {
    let bin = which(name, path)?;
    let mut g = DetectedGenerator::new(DetectedKind::Agent, name, name.to_owned());
    g.path = Some(crate::text::printable(&bin.to_string_lossy()));
    match version(&bin, path) {
        Ok(v) => {
            g.label = format!("{name} {v}");
            g.version = Some(v);
        }
        Err(e) => g.problem = Some(e),
    }
    if name == "gemini" {
        g.problem.get_or_insert_with(|| {
            "runs only in a sandbox: set `[agent.gemini] sandbox = \"docker\"` in config.toml"
                .into()
        });
    }
    Some(g)
}

/// `bin --version`'s first line, printable and short. The agent gets no input, a minimal
/// environment and a few seconds.
fn version(bin: &Path, path: &OsString) -> Result<String, String> {
    let mut cmd = Command::new(bin);
    cmd.arg("--version")
        .env_clear()
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .env("TERM", "dumb")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(home) = dirs::home_dir() {
        cmd.env("HOME", home);
    }
    let mut child = cmd.spawn().map_err(|e| format!("cannot start: {e}"))?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() >= VERSION_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "`--version` gave no answer within {} s",
                    VERSION_TIMEOUT.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("waiting for `--version` failed: {e}")),
        }
    }
    let mut out = Vec::new();
    if let Some(pipe) = child.stdout.take() {
        use std::io::Read as _;
        let _ = pipe.take(4096).read_to_end(&mut out);
    }
    let text = String::from_utf8_lossy(&out);
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let line = super::told(first, 80);
    if line.is_empty() {
        Err("`--version` printed nothing".into())
    } else {
        Ok(line)
    }
}

fn server(kind: &str, label: &str, port: u16) -> Option<DetectedGenerator> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT).ok()?;
    let url = format!("http://127.0.0.1:{port}/v1");
    let mut g = DetectedGenerator::new(
        DetectedKind::Server,
        kind,
        format!("{label} on port {port}"),
    );
    g.endpoint = Some(url.clone());
    let listed = Endpoint::parse(&url)
        .map_err(|e| e.to_string())
        .and_then(|endpoint| {
            let mut client = Client::new(&Server {
                endpoint,
                api_key_env: String::new(),
                timeout: MODELS_TIMEOUT,
                timeout_setting: None,
            })
            .map_err(|e| e.to_string())?;
            client.retry.max_attempts = 1;
            client.models().map_err(|e| e.to_string())
        });
    match listed {
        Ok(models) if models.is_empty() => {
            g.problem = Some("answers but lists no model: load one, then look again".into());
        }
        Ok(models) => {
            g.models = models
                .iter()
                .take(MAX_MODELS)
                .map(|m| crate::text::one_line(m, 120))
                .filter(|m| !m.is_empty())
                .collect();
        }
        Err(e) => {
            g.problem = Some(format!(
                "something listens on port {port} but `/v1/models` failed: {}",
                crate::text::one_line(&e, 200)
            ));
        }
    }
    Some(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ollama_host_moves_the_port_only_on_this_machine() {
        for (v, port) in [
            ("127.0.0.1:11500", Some(11500)),
            (":11501", Some(11501)),
            ("http://localhost:11502", Some(11502)),
            ("0.0.0.0:11503", Some(11503)),
            ("[::1]:11504/", Some(11504)),
            ("0.0.0.0", None),
            ("10.0.0.5:11434", None),
            ("ollama.example.com:11434", None),
            ("https://127.0.0.1:443", None),
            ("127.0.0.1:99999", None),
        ] {
            assert_eq!(loopback_port(v), port, "{v}");
        }
    }

    /// What a pick sets up: an agent by its name alone, a server with the first model it
    /// lists, a key's provider with its variable and no model.
    #[test]
    fn a_detected_generator_stands_for_its_setup() {
        let mut server = DetectedGenerator::new(DetectedKind::Server, "ollama", "Ollama".into());
        server.endpoint = Some("http://127.0.0.1:11434/v1".into());
        server.models = vec!["qwen3:8b".into(), "llama3.2".into()];
        assert_eq!(
            server.stands_for(),
            GeneratorChoice {
                model: "qwen3:8b".into(),
                ..GeneratorChoice::endpoint("http://127.0.0.1:11434/v1")
            }
        );
        let mut key = DetectedGenerator::new(DetectedKind::Key, "OPENAI_API_KEY", "OpenAI".into());
        key.endpoint = Some("https://api.openai.com/v1".into());
        key.api_key_env = Some("OPENAI_API_KEY".into());
        assert_eq!(
            key.stands_for(),
            GeneratorChoice {
                api_key_env: "OPENAI_API_KEY".into(),
                ..GeneratorChoice::endpoint("https://api.openai.com/v1")
            }
        );
        let agent = DetectedGenerator::new(DetectedKind::Agent, "codex", "codex".into());
        assert_eq!(agent.stands_for(), GeneratorChoice::agent("codex"));
        // What detection hands out carries it.
        let probe = Probe {
            path: OsString::new(),
            servers: Vec::new(),
            set_variables: vec!["OPENAI_API_KEY".into()],
        };
        let found = detect(&probe);
        assert!(
            !found.is_empty()
                && found
                    .iter()
                    .all(|g| g.setup == g.stands_for() && !g.setup.generator.is_empty()),
            "{found:?}"
        );
    }

    #[test]
    fn which_skips_relative_dirs_and_non_executables() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("claude");
        std::fs::write(&plain, "").unwrap();
        let path = std::env::join_paths([Path::new("relative"), dir.path()]).unwrap();
        assert_eq!(which("claude", &path), None);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o755)).unwrap();
            assert_eq!(which("claude", &path), Some(plain));
        }
    }
}
