//! Doctor's check of each model server `config.toml` names (extraction's servers, insights',
//! an embeddings endpoint): where it is written, what uses it, where it is (this machine or
//! another, plain HTTP or not), whether the variable its key is read from is set here, and,
//! only when asked (`cairn doctor --probe`), whether anything answers at its address.
//!
//! By default doctor contacts nothing: it reads the file. The probe is a TCP connection to the
//! host and port the URL names, nothing sent over it, bounded by [`PROBE_TIMEOUT`] (the name
//! looked up within the same bound); it reaches only servers the person configured, and as the
//! model clients do, directly (they use no proxy). It says that something listens there, not
//! that the model answers: `cairn recall extract doctor` makes real calls.

use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use super::{Check, Status, check};
use crate::config::{Config, EmbeddingsProvider};
use crate::llm::Endpoint;
use crate::llm::endpoint::Scheme;

/// How long the probe of one server may take, its name's lookup included.
pub(crate) const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// What the probe of an endpoint found: the address that took the connection, or what went
/// wrong, in words.
pub(crate) type Probe<'a> = &'a dyn Fn(&Endpoint) -> Result<String, String>;

/// One model server as `config.toml` names it.
struct Named<'a> {
    /// The table it is written in (`insights`, `recall.extract.servers.local`).
    section: String,
    /// What uses it, in words.
    role: String,
    url: &'a str,
    key_var: &'a str,
    allow_http: bool,
}

/// The server extraction sends to, by its name among `[recall.extract.servers]`, as the
/// settings choose it (`server`, else the only one); `None` when an agent CLI answers instead or
/// the choice is not made (resolving the settings says why, in the Recall check).
fn extraction_server(config: &Config) -> Option<&str> {
    let extract = &config.recall.extract;
    if !matches!(extract.generator.as_str(), "" | "endpoint") {
        return None;
    }
    if !extract.server.is_empty() {
        return Some(extract.server.as_str());
    }
    match extract.servers.len() {
        1 => extract.servers.keys().next().map(String::as_str),
        _ => None,
    }
}

/// Every model server `config` names, extraction's first.
fn named(config: &Config) -> Vec<Named<'_>> {
    let chosen = extraction_server(config);
    let mut named: Vec<Named<'_>> = config
        .recall
        .extract
        .servers
        .iter()
        .map(|(name, s)| Named {
            section: format!("recall.extract.servers.{name}"),
            role: if chosen == Some(name.as_str()) {
                if config.recall.extract.enabled {
                    "Recall extraction's server".to_owned()
                } else {
                    "Recall extraction's server (extraction is off)".to_owned()
                }
            } else {
                "not the server Recall extraction uses".to_owned()
            },
            url: s.endpoint.as_str(),
            key_var: s.api_key_env.as_str(),
            allow_http: s.allow_http,
        })
        .collect();
    if let Some(url) = &config.insights.endpoint {
        named.push(Named {
            section: "insights".into(),
            role: "insights reports".into(),
            url,
            key_var: config.insights.api_key_env.as_deref().unwrap_or_default(),
            allow_http: config.insights.allow_http,
        });
    }
    if config.embeddings.provider == EmbeddingsProvider::Endpoint
        && let Some(url) = &config.embeddings.endpoint
    {
        named.push(Named {
            section: "embeddings".into(),
            role: "embeddings (`cairn embeddings build`)".into(),
            url,
            key_var: config.embeddings.api_key_env.as_deref().unwrap_or_default(),
            allow_http: config.embeddings.allow_http,
        });
    }
    named
}

/// The model servers `config.toml` names, one check each; none when none is set. `probe`, when
/// given (`cairn doctor --probe`), is asked whether each one's address answers; without it
/// nothing is contacted and each line says so.
pub(crate) fn endpoint_checks(config: &Config, probe: Option<Probe<'_>>) -> Vec<Check> {
    named(config)
        .into_iter()
        .map(|n| endpoint_check(&n, probe))
        .collect()
}

fn endpoint_check(n: &Named<'_>, probe: Option<Probe<'_>>) -> Check {
    let section = &n.section;
    let name = format!("endpoint {section}");
    let endpoint = match Endpoint::parse(n.url) {
        Ok(e) => e,
        Err(why) => {
            return check(
                name,
                Status::Fail,
                format!("[{section}] endpoint is not usable: {why}; correct it in config.toml"),
            );
        }
    };
    if let Some(why) = crate::llm::endpoint::key_variable_problem(n.key_var) {
        return check(
            name,
            Status::Fail,
            format!("[{section}] api_key_env {why}; correct it in config.toml"),
        );
    }
    let shown = endpoint.redacted();
    if endpoint.is_plain_http_off_this_machine() && !n.allow_http {
        return check(
            name,
            Status::Fail,
            format!(
                "{shown} ({}): plain HTTP to a host that is not this machine, which Cairn refuses, as it would send transcript text unencrypted; use https://, or set allow_http = true in [{section}] if that network is yours",
                n.role
            ),
        );
    }
    let mut status = Status::Ok;
    let mut said = vec![format!(
        "{shown} ({}; {})",
        n.role,
        if endpoint.is_loopback() {
            "on this machine"
        } else {
            "another machine: redacted text is sent there"
        }
    )];
    if endpoint.is_plain_http_off_this_machine() {
        status = Status::Warn;
        said.push(
            "plain HTTP (allow_http = true): what is sent crosses the network unencrypted".into(),
        );
    }
    match n.key_var {
        "" => said.push("no API key".into()),
        var if std::env::var_os(var).is_some_and(|v| !v.is_empty()) => {
            said.push(format!("the API key from ${var}"));
        }
        var => {
            status = Status::Warn;
            said.push(format!(
                "the API key variable ${var} is not set here; export it in the environment that runs Cairn"
            ));
        }
    }
    match probe {
        None => said.push("not contacted (`cairn doctor --probe` tries to connect)".into()),
        Some(probe) => match probe(&endpoint) {
            Ok(at) => said.push(format!(
                "a server answers at {at} (`cairn recall extract doctor` tries the model itself)"
            )),
            Err(why) => {
                status = Status::Warn;
                said.push(format!(
                    "nothing answered at {}: {why}; start the server, or correct the endpoint",
                    host_port(&endpoint)
                ));
            }
        },
    }
    check(name, status, said.join("; "))
}

/// The port a connection to `endpoint` goes to: the one it names, else its scheme's.
fn port(endpoint: &Endpoint) -> u16 {
    endpoint.port.unwrap_or(match endpoint.scheme {
        Scheme::Http => 80,
        Scheme::Https => 443,
    })
}

/// `host:port` as a person writes it (an IPv6 host in brackets).
fn host_port(endpoint: &Endpoint) -> String {
    if endpoint.host.contains(':') {
        format!("[{}]:{}", endpoint.host, port(endpoint))
    } else {
        format!("{}:{}", endpoint.host, port(endpoint))
    }
}

/// The probe: a TCP connection to `endpoint`'s host and port, nothing sent, within
/// [`PROBE_TIMEOUT`] all told. The name is looked up on a thread of its own, as the system's
/// lookup takes no timeout; one that has not answered in time is left to finish alone.
pub(crate) fn connect(endpoint: &Endpoint) -> Result<String, String> {
    let started = Instant::now();
    let target = (endpoint.host.clone(), port(endpoint));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let found: std::io::Result<Vec<SocketAddr>> =
            target.to_socket_addrs().map(Iterator::collect);
        let _ = tx.send(found);
    });
    let addrs = match rx.recv_timeout(PROBE_TIMEOUT) {
        Ok(Ok(addrs)) if !addrs.is_empty() => addrs,
        Ok(Ok(_)) => return Err(format!("{} has no address", endpoint.host)),
        Ok(Err(e)) => return Err(format!("{} was not found ({e})", endpoint.host)),
        Err(_) => {
            return Err(format!(
                "looking {} up took over {} s",
                endpoint.host,
                PROBE_TIMEOUT.as_secs()
            ));
        }
    };
    let mut last = String::new();
    for addr in addrs {
        let left = PROBE_TIMEOUT.saturating_sub(started.elapsed());
        if left.is_zero() {
            break;
        }
        match TcpStream::connect_timeout(&addr, left) {
            Ok(_) => return Ok(addr.to_string()),
            Err(e) => last = e.to_string(),
        }
    }
    Err(if last.is_empty() {
        format!("no answer within {} s", PROBE_TIMEOUT.as_secs())
    } else {
        last
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> Config {
        toml::from_str(text).unwrap()
    }

    /// Which server extraction uses, whether plain HTTP leaves this machine (refused without
    /// `allow_http`, a warning with it), and that nothing is contacted unless asked.
    #[test]
    fn each_server_says_what_uses_it_and_how_it_is_reached() {
        let c = config(
            "[recall.extract]\nenabled = true\nmodel = \"m\"\nserver = \"b\"\n\
             [recall.extract.servers.a]\nendpoint = \"http://10.1.2.3:8080/v1\"\n\
             [recall.extract.servers.b]\nendpoint = \"http://10.1.2.4:8080/v1\"\nallow_http = true\n\
             [insights]\nendpoint = \"http://127.0.0.1:9/v1\"\n",
        );
        let checks = endpoint_checks(&c, None);
        let by = |name: &str| {
            checks
                .iter()
                .find(|c| c.name == name)
                .unwrap_or_else(|| panic!("no {name} in {checks:?}"))
        };
        let a = by("endpoint recall.extract.servers.a");
        assert_eq!(a.status, Status::Fail, "{a:?}");
        assert!(
            a.detail.contains("not the server Recall extraction uses")
                && a.detail
                    .contains("plain HTTP to a host that is not this machine"),
            "{a:?}"
        );
        let b = by("endpoint recall.extract.servers.b");
        assert_eq!(b.status, Status::Warn, "{b:?}");
        assert!(
            b.detail.contains("Recall extraction's server;")
                && b.detail.contains("crosses the network unencrypted")
                && b.detail.contains("not contacted (`cairn doctor --probe`"),
            "{b:?}"
        );
        let local = by("endpoint insights");
        assert_eq!(local.status, Status::Ok, "{local:?}");
        assert!(local.detail.contains("insights reports; on this machine"));
    }

    /// With `--probe`, what the probe says is the line's: an answer is named, none is a warning
    /// with the address tried.
    #[test]
    fn a_probe_names_what_answered_or_what_did_not() {
        let c = config("[insights]\nendpoint = \"http://127.0.0.1:9/v1\"\n");
        let answered = |_: &Endpoint| Ok::<_, String>("127.0.0.1:9".to_owned());
        let [up] = endpoint_checks(&c, Some(&answered)).try_into().unwrap();
        assert_eq!(up.status, Status::Ok, "{up:?}");
        assert!(
            up.detail.contains("a server answers at 127.0.0.1:9"),
            "{up:?}"
        );
        let refused = |_: &Endpoint| Err::<String, _>("Connection refused".to_owned());
        let [down] = endpoint_checks(&c, Some(&refused)).try_into().unwrap();
        assert_eq!(down.status, Status::Warn, "{down:?}");
        assert!(
            down.detail
                .contains("nothing answered at 127.0.0.1:9: Connection refused"),
            "{down:?}"
        );
    }

    /// The probe itself, on this machine: a port listening answers, a closed one does not.
    #[test]
    fn the_probe_connects_and_says_when_nothing_listens() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let at = listener.local_addr().unwrap();
        let up = Endpoint::parse(&format!("http://127.0.0.1:{}/v1", at.port())).unwrap();
        assert_eq!(connect(&up), Ok(at.to_string()));
        drop(listener);
        assert!(connect(&up).is_err());
    }
}
