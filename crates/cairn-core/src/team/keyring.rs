//! The team archive's password in the OS keyring: the Secret Service on Linux (GNOME Keyring,
//! KWallet, KeePassXC… over the D-Bus session bus), the login keychain on macOS, the Credential
//! Manager on Windows. One item per server, keyed by its [`account`] (`USER@HOST:PORT/DB`, the
//! port always written, so `--to postgres://alice@db/team` and Settings → Team's form name the same
//! item). Stored only when a person asks (`cairn team login`, Settings → Team's "Remember in the
//! keyring"); read when neither the connection string nor a variable gives a password
//! ([`crate::team::Server`] says the order).
//!
//! Never a hang: with no session bus the answer is immediate, connecting to it (and opening a
//! session with the Secret Service) gives up after 2 s, so does every D-Bus call, and an unlock
//! prompt is dismissed after [`PROMPT_SECONDS`]. Never a leak: the password is
//! not logged, not put in an error, and on the bus it travels encrypted (the Secret Service's
//! DH session).

use serde::{Deserialize, Serialize};

/// The service every Cairn item is filed under (the Secret Service attribute `service`, the
/// keychain's service name).
pub const SERVICE: &str = "cairn-team";

/// How long an unlock prompt of a locked keyring may wait for its answer before Cairn dismisses
/// it and says so.
pub const PROMPT_SECONDS: u64 = 30;

/// Why the keyring could not be used, in words a person can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreachable {
    pub message: String,
    pub hint: String,
}

impl std::fmt::Display for Unreachable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// What the keyring holds for one server, as Settings → Team shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct KeyringState {
    /// The keyring's name on this platform ("the Secret Service", "the macOS keychain", …).
    pub store: String,
    /// The item the password is filed under (`USER@HOST:PORT/DB`).
    pub account: String,
    /// Whether a password is stored for it.
    pub stored: bool,
    /// Why the keyring cannot be asked, when it cannot (then `stored` is false).
    pub problem: Option<String>,
    /// What to do about `problem`.
    pub hint: Option<String>,
}

/// What `cairn team login` (Settings → Team's "Remember") did.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TeamRemembered {
    /// The server, without credentials.
    pub server: String,
    /// The keyring item's name (`USER@HOST:PORT/DB`).
    pub account: String,
    /// The keyring ("the Secret Service", "the macOS keychain", …).
    pub store: String,
    /// A password was stored for it before, and is replaced.
    pub replaced: bool,
    /// The server accepted the password before it was kept.
    pub checked: bool,
}

/// The keyring's name on this platform, as messages show it.
pub fn store_name() -> &'static str {
    imp::NAME
}

/// The password stored for `account`, if any.
pub fn get(account: &str) -> Result<Option<String>, Unreachable> {
    imp::get(account)
}

/// Store `password` for `account`, replacing what was there; whether it replaced one.
pub fn set(account: &str, password: &str) -> Result<bool, Unreachable> {
    imp::set(account, password)
}

/// Forget the password stored for `account`; whether there was one.
pub fn delete(account: &str) -> Result<bool, Unreachable> {
    imp::delete(account)
}

/// What the keyring holds for `account`.
pub fn state(account: &str) -> KeyringState {
    let (stored, problem, hint) = match get(account) {
        Ok(p) => (p.is_some(), None, None),
        Err(u) => (false, Some(u.message), Some(u.hint)),
    };
    KeyringState {
        store: store_name().to_owned(),
        account: account.to_owned(),
        stored,
        problem,
        hint,
    }
}

/// The hint every "cannot reach the keyring" message ends with: the other places a password
/// may come from.
const OTHERWISE: &str =
    "or give the password in PGPASSWORD (or the variable Settings → Team names) instead";

#[cfg(target_os = "linux")]
mod imp {
    use std::collections::HashMap;
    use std::sync::Mutex;

    use dbus_secret_service::{EncryptionType, Error as SsError, SecretService};

    use super::{OTHERWISE, PROMPT_SECONDS, SERVICE, Unreachable};

    pub const NAME: &str = "the Secret Service";

    /// How long connecting to the session bus and opening a session with the Secret Service may
    /// take (the calls after have the same bound, set by `dbus-secret-service`).
    const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

    /// The label a keyring manager (Passwords and Keys) shows for the item.
    fn label(account: &str) -> String {
        format!("Cairn team archive ({account})")
    }

    fn attributes(account: &str) -> HashMap<&str, &str> {
        HashMap::from([
            ("application", "cairn"),
            ("service", SERVICE),
            ("account", account),
        ])
    }

    fn connect() -> Result<SecretService, Unreachable> {
        // Without an address libdbus would try to autolaunch a bus (X11 only): ask nothing.
        if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none_or(|v| v.is_empty()) {
            return Err(Unreachable {
                message: "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set), so no Secret Service to keep the password".into(),
                hint: format!("run Cairn in a desktop session that has a keyring (GNOME Keyring, KWallet, KeePassXC), {OTHERWISE}"),
            });
        }
        // libdbus waits 25 s for the bus to answer its first message, a wait no option shortens:
        // a bus that never answers would hold Settings or `cairn team login` that long. So the
        // connection is made on a thread of its own, left to finish alone after 2 s; while it
        // waits, no other is started (the answer would be the same, and threads would pile up).
        if *lock(&STUCK) {
            return Err(no_answer());
        }
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("keyring-connect".into())
            .spawn(move || {
                let connected = SecretService::connect_with_max_prompt_timeout(
                    EncryptionType::Dh,
                    PROMPT_SECONDS,
                );
                // Under the lock, so the caller sees either this answer or a thread still waiting.
                let mut stuck = lock(&STUCK);
                *stuck = false;
                let _ = tx.send(connected);
            })
            .map_err(|e| Unreachable {
                message: format!("the Secret Service could not be asked: {e}"),
                hint: OTHERWISE.trim_start_matches("or ").to_owned(),
            })?;
        let connected = match rx.recv_timeout(CONNECT_TIMEOUT) {
            Ok(connected) => connected,
            Err(_) => {
                let mut stuck = lock(&STUCK);
                match rx.try_recv() {
                    Ok(connected) => connected,
                    Err(_) => {
                        *stuck = true;
                        return Err(no_answer());
                    }
                }
            }
        };
        connected.map_err(describe)
    }

    /// A connection still waiting for the bus's first answer, past [`CONNECT_TIMEOUT`].
    static STUCK: Mutex<bool> = Mutex::new(false);

    fn lock(m: &Mutex<bool>) -> std::sync::MutexGuard<'_, bool> {
        m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn no_answer() -> Unreachable {
        Unreachable {
            message: format!(
                "neither the D-Bus session bus nor a Secret Service on it answered within {} s",
                CONNECT_TIMEOUT.as_secs()
            ),
            hint: format!(
                "check that the session bus and the keyring daemon are not stuck (log in again, or restart the keyring daemon), {OTHERWISE}"
            ),
        }
    }

    fn describe(e: SsError) -> Unreachable {
        let dbus_name = match &e {
            SsError::Dbus(d) => d.name().map(str::to_owned),
            _ => None,
        };
        match (e, dbus_name.as_deref()) {
            (
                SsError::Unavailable,
                _,
            )
            | (
                _,
                Some(
                    "org.freedesktop.DBus.Error.ServiceUnknown"
                    | "org.freedesktop.DBus.Error.NameHasNoOwner"
                    | "org.freedesktop.DBus.Error.Spawn.ChildExited"
                    | "org.freedesktop.DBus.Error.Spawn.ExecFailed",
                ),
            ) => Unreachable {
                message: "no Secret Service answers on the D-Bus session bus".into(),
                hint: format!("install and start one (on Debian: apt install gnome-keyring, then log in again), {OTHERWISE}"),
            },
            (
                _,
                Some(
                    "org.freedesktop.DBus.Error.NoServer"
                    | "org.freedesktop.DBus.Error.FileNotFound"
                    | "org.freedesktop.DBus.Error.Disconnected"
                    | "org.freedesktop.DBus.Error.BadAddress"
                    | "org.freedesktop.DBus.Error.AccessDenied",
                ),
            ) => Unreachable {
                message: "the D-Bus session bus (DBUS_SESSION_BUS_ADDRESS) cannot be reached, so no Secret Service to ask".into(),
                hint: format!("run Cairn in the desktop session it belongs to, {OTHERWISE}"),
            },
            (_, Some("org.freedesktop.DBus.Error.NoReply" | "org.freedesktop.DBus.Error.Timeout")) => {
                Unreachable {
                    message: "the Secret Service did not answer within 2 s".into(),
                    hint: format!("check that the keyring daemon is not stuck (restart it), {OTHERWISE}"),
                }
            }
            (SsError::Prompt, _) | (SsError::Locked, _) => Unreachable {
                message: format!(
                    "the keyring is locked, and its unlock prompt was dismissed or went unanswered for {PROMPT_SECONDS} s"
                ),
                hint: format!("unlock the keyring (log in to the desktop, or open Passwords and Keys) and try again, {OTHERWISE}"),
            },
            (SsError::NoResult, _) => Unreachable {
                message: "the Secret Service has no default keyring to store the password in".into(),
                hint: format!("create one (Passwords and Keys → New keyring, set as default), {OTHERWISE}"),
            },
            (e, _) => Unreachable {
                message: format!(
                    "the Secret Service failed: {}",
                    crate::text::one_line(&e.to_string(), 300)
                ),
                hint: OTHERWISE.trim_start_matches("or ").to_owned(),
            },
        }
    }

    pub fn get(account: &str) -> Result<Option<String>, Unreachable> {
        let ss = connect()?;
        let found = ss.search_items(attributes(account)).map_err(describe)?;
        let Some(item) = found.unlocked.first().or(found.locked.first()) else {
            return Ok(None);
        };
        item.ensure_unlocked().map_err(describe)?;
        let secret = item.get_secret().map_err(describe)?;
        String::from_utf8(secret)
            .map(Some)
            .map_err(|_| Unreachable {
                message: format!("the keyring's item for {account} is not text"),
                hint: "store the password again (`cairn team login`, or Settings → Team)".into(),
            })
    }

    pub fn set(account: &str, password: &str) -> Result<bool, Unreachable> {
        let ss = connect()?;
        let found = ss.search_items(attributes(account)).map_err(describe)?;
        let existed = !(found.unlocked.is_empty() && found.locked.is_empty());
        let collection = ss.get_default_collection().map_err(describe)?;
        collection.ensure_unlocked().map_err(describe)?;
        // `replace`: an item with the same attributes in this collection is overwritten.
        collection
            .create_item(
                &label(account),
                attributes(account),
                password.as_bytes(),
                true,
                "text/plain",
            )
            .map_err(describe)?;
        Ok(existed)
    }

    pub fn delete(account: &str) -> Result<bool, Unreachable> {
        let ss = connect()?;
        let found = ss.search_items(attributes(account)).map_err(describe)?;
        let mut any = false;
        for item in found.unlocked.iter().chain(found.locked.iter()) {
            item.ensure_unlocked().map_err(describe)?;
            item.delete().map_err(describe)?;
            any = true;
        }
        Ok(any)
    }
}

#[cfg(any(target_os = "macos", target_os = "windows"))]
mod imp {
    use super::{OTHERWISE, SERVICE, Unreachable};

    #[cfg(target_os = "macos")]
    pub const NAME: &str = "the macOS keychain";
    #[cfg(target_os = "windows")]
    pub const NAME: &str = "the Windows Credential Manager";

    fn describe(e: ::keyring::Error) -> Unreachable {
        Unreachable {
            message: format!(
                "{NAME} failed: {}",
                crate::text::one_line(&e.to_string(), 300)
            ),
            hint: format!("unlock {NAME} and try again, {OTHERWISE}"),
        }
    }

    fn entry(account: &str) -> Result<::keyring::Entry, Unreachable> {
        ::keyring::Entry::new(SERVICE, account).map_err(describe)
    }

    pub fn get(account: &str) -> Result<Option<String>, Unreachable> {
        match entry(account)?.get_password() {
            Ok(p) => Ok(Some(p)),
            Err(::keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(describe(e)),
        }
    }

    pub fn set(account: &str, password: &str) -> Result<bool, Unreachable> {
        let existed = get(account)?.is_some();
        entry(account)?.set_password(password).map_err(describe)?;
        Ok(existed)
    }

    pub fn delete(account: &str) -> Result<bool, Unreachable> {
        match entry(account)?.delete_credential() {
            Ok(()) => Ok(true),
            Err(::keyring::Error::NoEntry) => Ok(false),
            Err(e) => Err(describe(e)),
        }
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos", target_os = "windows")))]
mod imp {
    use super::{OTHERWISE, Unreachable};

    pub const NAME: &str = "the OS keyring";

    fn none() -> Unreachable {
        Unreachable {
            message: "Cairn has no OS keyring support on this platform".into(),
            hint: OTHERWISE.trim_start_matches("or ").to_owned(),
        }
    }

    pub fn get(_: &str) -> Result<Option<String>, Unreachable> {
        Err(none())
    }

    pub fn set(_: &str, _: &str) -> Result<bool, Unreachable> {
        Err(none())
    }

    pub fn delete(_: &str) -> Result<bool, Unreachable> {
        Err(none())
    }
}
