//! Where `cairn pull` reads teammates' documents from: a remote configured in the repository, or
//! a URL or a local path, as `git fetch` takes them. The argument is hostile input (it may come
//! from a pasted command or a deep link): one that git would read as an option, a transport that
//! runs a command (`ext::`, and any other `<transport>::` helper), an ssh host that is an option,
//! a path that names no repository, and control characters are each refused with what to do.
//! Every git command a pull runs also carries a protocol allowlist ([`PROTOCOLS`]), so a
//! configured remote or a redirect cannot reach another transport either.

use std::path::Path;

use super::repo::{Repo, run_git};
use crate::error::{Error, Result};

/// The transports a pull may use, as git's `protocol.<name>.allow` names them.
pub const ALLOWED: [&str; 5] = ["file", "git", "http", "https", "ssh"];

/// `-c` pairs every git command of a pull starts with: no transport but [`ALLOWED`], whatever
/// the user's or the repository's git config allows (`protocol.ext.allow=always`, say).
pub const PROTOCOLS: [&str; 12] = [
    "-c",
    "protocol.allow=never",
    "-c",
    "protocol.file.allow=always",
    "-c",
    "protocol.git.allow=always",
    "-c",
    "protocol.http.allow=always",
    "-c",
    "protocol.https.allow=always",
    "-c",
    "protocol.ssh.allow=always",
];

/// The longest URL or path a pull accepts.
const MAX_CHARS: usize = 2048;

/// A checked place to pull from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullFrom {
    /// What git is given: the remote's name, the URL, or the canonical path.
    pub git_arg: String,
    /// What the archive records and shows as where a session came from (`pulled_from`): the
    /// remote's name, or the URL without any user or password in it, or the path.
    pub shown: String,
    /// Where the fetched refs are kept: `refs/cairn/remotes/<remote>/sessions/` for a
    /// configured remote, `refs/cairn/fetched/<hash of shown>/sessions/` for a URL or path.
    pub ref_prefix: String,
}

/// Check `arg` (a configured remote's name, a URL, or a path) for a pull in `repo`.
pub fn check(repo: &Repo, arg: &str) -> Result<PullFrom> {
    check_for(repo, arg, "pull from")
}

/// Check `arg` as [`check`] does, for `cairn push` to it: the same rules for the same hostile
/// argument (a push sends only this machine's own published refs, but a place that runs a
/// command or an option given to git is as bad one way as the other).
pub fn check_push(repo: &Repo, arg: &str) -> Result<PullFrom> {
    check_for(repo, arg, "push to")
}

fn check_for(repo: &Repo, arg: &str, doing: &str) -> Result<PullFrom> {
    let refuse = |why: String| {
        Err(Error::Invalid(format!(
            "cannot {doing} \"{}\": {why}",
            crate::text::one_line(arg, 80)
        )))
    };
    if arg.is_empty() || arg.trim() != arg {
        return refuse(
            "name a remote of this repository (`git remote -v`), a URL or a path".into(),
        );
    }
    if arg.starts_with('-') {
        return refuse(
            "it would be read as an option of git, not a place: name a remote, a URL or a path"
                .into(),
        );
    }
    if arg.chars().count() > MAX_CHARS || arg.chars().any(char::is_control) {
        return refuse(format!(
            "a URL or path is at most {MAX_CHARS} printable characters"
        ));
    }
    let remotes = run_git(&repo.root, &["remote"])?;
    if remotes.lines().any(|r| r == arg) {
        // A configured remote's own URL passes the same checks: `ext::` there runs a command.
        if !is_plain_name(arg) {
            return refuse(
                "a remote Cairn reaches is named with letters, digits, '-', '_' and '.' only"
                    .into(),
            );
        }
        let url = run_git(&repo.root, &["remote", "get-url", arg])?;
        if let Err(why) = transport(url.trim()) {
            return refuse(format!("its URL {why}"));
        }
        return Ok(PullFrom {
            git_arg: arg.to_owned(),
            shown: arg.to_owned(),
            ref_prefix: format!("refs/cairn/remotes/{arg}/sessions/"),
        });
    }
    let (git_arg, shown) = match transport(arg) {
        Ok(Some(shown)) => (arg.to_owned(), shown),
        Ok(None) => {
            // A local path: a repository that exists (bare or not), canonical.
            let path = if Path::new(arg).is_absolute() {
                Path::new(arg).to_owned()
            } else {
                repo.root.join(arg)
            };
            let Ok(path) = std::fs::canonicalize(&path) else {
                return refuse(format!(
                    "no remote of {} has that name, and no folder is at that path (add a remote with `git remote add <name> <url>`)",
                    repo.root.display()
                ));
            };
            if !path.is_dir() || run_git(&path, &["rev-parse", "--git-dir"]).is_err() {
                return refuse(format!(
                    "{} is not a git repository",
                    crate::text::one_line(&path.to_string_lossy(), 200)
                ));
            }
            let path = path.to_string_lossy().into_owned();
            (path.clone(), path)
        }
        Err(why) => return refuse(why),
    };
    let hash = crate::keys::digest_hex(shown.as_bytes());
    Ok(PullFrom {
        git_arg,
        shown,
        ref_prefix: format!("refs/cairn/fetched/{}/sessions/", &hash[..16]),
    })
}

/// A remote name Cairn uses as one ref-name component.
fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 100
        && !name.starts_with(['-', '.'])
        && !name.ends_with(".lock")
        && !name.contains("..")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// How git would reach `url`: `Ok(Some(shown))` for a URL over an allowed transport (shown
/// without its user and password), `Ok(None)` for a local path, `Err(why)` for a transport Cairn
/// refuses.
pub fn transport(url: &str) -> std::result::Result<Option<String>, String> {
    // `<transport>::<address>` runs git-remote-<transport>: `ext::` runs any command.
    if let Some((helper, _)) = url.split_once("::")
        && !helper.contains('/')
    {
        return Err(format!(
            "uses the transport `{}::`, which Cairn refuses (`ext::` runs a command; Cairn pulls only over {})",
            crate::text::one_line(helper, 20),
            ALLOWED.join(", ")
        ));
    }
    if let Some((scheme, rest)) = url.split_once("://") {
        let scheme = scheme.to_ascii_lowercase();
        let known = match scheme.as_str() {
            "git+ssh" | "ssh+git" => "ssh",
            s => s,
        };
        if !ALLOWED.contains(&known) {
            return Err(format!(
                "uses the transport {}://, which Cairn refuses (it pulls only over {})",
                crate::text::one_line(&scheme, 20),
                ALLOWED.join(", ")
            ));
        }
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        if host.starts_with('-') {
            return Err("names a host that git would pass to ssh as an option".to_owned());
        }
        if known == "file" {
            return Ok(Some(format!("file://{authority}/{path}")));
        }
        return Ok(Some(format!("{scheme}://{host}/{path}")));
    }
    // scp-like `[user@]host:path` (a ':' before any '/'): ssh.
    if let Some((before, path)) = url.split_once(':')
        && !before.contains('/')
    {
        let host = before.rsplit_once('@').map_or(before, |(_, h)| h);
        if host.is_empty() || host.starts_with('-') || before.starts_with('-') {
            return Err("names a host that git would pass to ssh as an option".to_owned());
        }
        return Ok(Some(format!("{host}:{path}")));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transports_are_an_allowlist_and_credentials_are_not_shown() {
        let ok = |u: &str| transport(u).unwrap();
        assert_eq!(
            ok("https://ann:hunter2@example.com/team/app.git").as_deref(),
            Some("https://example.com/team/app.git")
        );
        assert_eq!(
            ok("ssh://git@example.com/app").as_deref(),
            Some("ssh://example.com/app")
        );
        assert_eq!(
            ok("git@example.com:team/app.git").as_deref(),
            Some("example.com:team/app.git")
        );
        assert_eq!(
            ok("file:///srv/app.git").as_deref(),
            Some("file:///srv/app.git")
        );
        assert_eq!(ok("/srv/app.git"), None);
        assert_eq!(ok("../app.git"), None);
        for (url, why) in [
            ("ext::sh -c touch% /tmp/pwned", "`ext::`"),
            ("fd::3", "`fd::`"),
            ("foo::bar", "`foo::`"),
            ("gopher://example.com/app", "gopher://"),
            ("ssh://-oProxyCommand=touch%20x/app", "as an option"),
            ("-oProxyCommand=x:app", "as an option"),
            ("git@-oProxyCommand=x:app", "as an option"),
        ] {
            let err = transport(url).unwrap_err();
            assert!(err.contains(why), "{url}: {err}");
        }
    }
}
