//! What a program may do beyond computing: run other programs, read and write files,
//! read the environment, choose a network provider and the servers it talks to. By
//! default everything is allowed; [`Capabilities::sandbox`] (the `--sandbox` flag)
//! allows nothing until flags re-allow it, for code nobody reviewed (a plan a model
//! wrote, a third-party template).
//!
//! A denied action is `TASK_FAILURE` / `permission_denied` naming the flag that would
//! allow it (details `capability` and `flag`).
//!
//! ```
//! use tasklisp::{Capabilities, Interp, Limits};
//! let limits = Limits {
//!     fuel: Some(1_000_000),
//!     capabilities: Capabilities {
//!         env: Some(vec!["LANG".into()]),
//!         ..Capabilities::sandbox()
//!     },
//!     ..Limits::default()
//! };
//! let denied = tasklisp::run_on_large_stack(&limits, |limits| {
//!     let interp = Interp::new(limits).expect("prelude loads");
//!     let error = interp.run_source("<plan>", "(getenv \"HOME\")").unwrap_err();
//!     error.reason().map(str::to_owned)
//! });
//! assert_eq!(denied.unwrap().as_deref(), Some("permission_denied"));
//! ```

use crate::error::{Error, Reason, Result};
use serde_json::json;
use std::path::{Component, Path, PathBuf};

/// Which actions a program may take. `None` in a field means any; a list means only
/// those (an empty list: none).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// Programs that script tasks and the `command` provider may run: a name without a
    /// `/` is found on `PATH` and matches only when the program is named the same way;
    /// a path matches that path.
    pub exec: Option<Vec<String>>,
    /// Directories whose files (at any depth) may be read: `read-file`, `file-exists?`,
    /// `list-dir`, `load`, `import`, `get-context`, a task's `:files` and `:context-dir`.
    pub read: Option<Vec<PathBuf>>,
    /// Directories whose files may be written: `write-file`, `append-file`.
    pub write: Option<Vec<PathBuf>>,
    /// Environment variables `getenv` may read.
    pub env: Option<Vec<String>>,
    /// Providers a program may choose by name (`set-provider!`, `with-provider`).
    /// `echo` and providers written as Lisp functions need no network and are always
    /// allowed; the provider given on the command line is the user's own choice.
    pub providers: Option<Vec<String>>,
    /// Hosts code may send requests to when it chooses the address itself (a provider's
    /// `base_url` given in code): `host` (any port) or `host:port`, compared without
    /// regard to case; an IPv6 address with or without its brackets. Addresses from the
    /// command line or the environment are the user's own choice and not checked.
    pub net: Option<Vec<String>>,
}

/// A file access being checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

impl Capabilities {
    /// Everything allowed: the default for code you wrote.
    pub fn all() -> Capabilities {
        Capabilities::default()
    }

    /// Nothing allowed: the start of `--sandbox`.
    pub fn sandbox() -> Capabilities {
        Capabilities {
            exec: Some(Vec::new()),
            read: Some(Vec::new()),
            write: Some(Vec::new()),
            env: Some(Vec::new()),
            providers: Some(Vec::new()),
            net: Some(Vec::new()),
        }
    }

    /// Whether `program` (a command's first word, or `sh` for a shell command) may run.
    pub fn check_exec(&self, program: &str) -> Result<()> {
        check_listed(self.exec.as_deref(), program, "exec", || {
            format!("running {program}")
        })
    }

    /// Checks `program` as [`Capabilities::check_exec`] does and, when only some programs
    /// may run, says which file to run: a name without a `/` found on tasklisp's own
    /// `PATH`, so a `PATH` given to the program (a script task's `:env`) cannot swap
    /// another file in under an allowed name. `None`: any program may run, looked up as
    /// the program's own `PATH` says.
    pub fn exec_program(&self, program: &str) -> Result<Option<PathBuf>> {
        self.check_exec(program)?;
        if self.exec.is_none() || program.contains('/') {
            return Ok(None);
        }
        let path = std::env::var_os("PATH").unwrap_or_default();
        find_on_path(program, &path).map(Some).ok_or_else(|| {
            Error::task_failure(
                Reason::ToolExecutionError,
                format!("{program}: not found on PATH"),
            )
        })
    }

    /// Whether `path` may be read or written: it must lie inside one of the allowed
    /// directories once `..` and symbolic links are resolved.
    pub fn check_path(&self, path: &Path, access: Access) -> Result<()> {
        let (allowed, capability, flag) = match access {
            Access::Read => (&self.read, "read", "--allow-read"),
            Access::Write => (&self.write, "write", "--allow-write"),
        };
        let Some(allowed) = allowed else {
            return Ok(());
        };
        let resolved = resolve(path);
        if allowed.iter().any(|dir| resolved.starts_with(resolve(dir))) {
            return Ok(());
        }
        // The flag names the directory itself, or the one holding the file.
        let dir = match resolved.parent() {
            Some(parent) if !resolved.is_dir() => parent,
            _ => &resolved,
        };
        let dir = dir.display().to_string();
        Err(denied(
            capability,
            format!("{}ing {}", capability_verb(access), path.display()),
            format!("{flag}={dir}"),
        ))
    }

    /// Whether `getenv` may read the variable `name`.
    pub fn check_env(&self, name: &str) -> Result<()> {
        check_listed(self.env.as_deref(), name, "env", || {
            format!("reading the environment variable {name}")
        })
    }

    /// Whether a program may choose the provider `kind` (`record:openai` counts as
    /// `record` and `openai`: both must be allowed).
    pub fn check_provider(&self, kind: &str) -> Result<()> {
        kind.split(':')
            .filter(|p| *p != "echo")
            .try_for_each(|part| {
                check_listed(self.providers.as_deref(), part, "provider", || {
                    format!("choosing the provider {kind}")
                })
            })
    }

    /// Whether code may send requests to `url`: its host must be allowed, alone (any
    /// port) or with the URL's port. A URL without a host is refused.
    pub fn check_url(&self, url: &str) -> Result<()> {
        let Some(allowed) = &self.net else {
            return Ok(());
        };
        let Some((host, port)) = host_and_port(url) else {
            return Err(denied(
                "net",
                "sending requests to a URL without a host".to_owned(),
                "--allow-net=HOST".to_owned(),
            ));
        };
        if allowed
            .iter()
            .any(|entry| net_entry_allows(entry, &host, port))
        {
            return Ok(());
        }
        Err(denied(
            "net",
            format!("sending requests to {host}"),
            format!("--allow-net={}", bracketed(&host)),
        ))
    }

    /// The ports a program tasklisp starts may connect to: those the `--allow-net`
    /// entries name, [`WEB_PORTS`] for an entry that names none; `None` when any host
    /// is allowed.
    pub fn net_ports(&self) -> Option<Vec<u16>> {
        let entries = self.net.as_ref()?;
        let mut ports: Vec<u16> = entries
            .iter()
            .filter_map(|entry| net_entry(entry))
            .flat_map(|(_, port)| port.map_or(WEB_PORTS.to_vec(), |port| vec![port]))
            .collect();
        ports.sort_unstable();
        ports.dedup();
        Some(ports)
    }
}

impl Capabilities {
    /// What both allow: a child evaluation's capabilities are those it asks for within
    /// its caller's, so no code gains one by nesting. A directory is kept when the other
    /// side allows it (a directory inside an allowed one); a host when the other side
    /// allows it at every port the entry names.
    pub fn intersect(&self, other: &Capabilities) -> Capabilities {
        Capabilities {
            exec: both(&self.exec, &other.exec, |list, name| list.contains(name)),
            read: both(&self.read, &other.read, |l, d| dir_within(l, d)),
            write: both(&self.write, &other.write, |l, d| dir_within(l, d)),
            env: both(&self.env, &other.env, |list, name| list.contains(name)),
            providers: both(&self.providers, &other.providers, |list, name| {
                list.contains(name)
            }),
            net: both(&self.net, &other.net, |l, h| host_within(l, h)),
        }
    }
}

/// The entries of each list the other allows (`None`: any).
fn both<T: Clone + PartialEq>(
    a: &Option<Vec<T>>,
    b: &Option<Vec<T>>,
    allows: impl Fn(&[T], &T) -> bool,
) -> Option<Vec<T>> {
    match (a, b) {
        (None, other) | (other, None) => other.clone(),
        (Some(a), Some(b)) => {
            let mut kept: Vec<T> = a.iter().filter(|x| allows(b, x)).cloned().collect();
            for x in b.iter().filter(|x| allows(a, x)) {
                if !kept.contains(x) {
                    kept.push(x.clone());
                }
            }
            Some(kept)
        }
    }
}

fn dir_within(allowed: &[PathBuf], dir: &Path) -> bool {
    let dir = resolve(dir);
    allowed.iter().any(|a| dir.starts_with(resolve(a)))
}

fn host_within(allowed: &[String], entry: &str) -> bool {
    let Some((host, port)) = net_entry(entry) else {
        return false;
    };
    allowed.iter().any(|a| match net_entry(a) {
        Some((a_host, a_port)) => {
            a_host.eq_ignore_ascii_case(host) && (a_port.is_none() || a_port == port)
        }
        None => false,
    })
}

/// The host of `url` (lower case, an IPv6 address without brackets) and its port,
/// the scheme's default when it names none. Never the URL's credentials.
fn host_and_port(url: &str) -> Option<(String, Option<u16>)> {
    let uri = url.trim().parse::<ureq::http::Uri>().ok()?;
    let host = uri.host().filter(|h| !h.is_empty())?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port = uri.port_u16().or(match uri.scheme_str() {
        Some("http") => Some(80),
        Some("https") => Some(443),
        _ => None,
    });
    Some((host.to_ascii_lowercase(), port))
}

/// The ports of an `--allow-net` entry without one, for a program tasklisp starts: the
/// kernel filters connections by port alone, and these are the ports a URL without one
/// reaches.
pub const WEB_PORTS: [u16; 2] = [80, 443];

/// The executable file `program` (a name without a `/`) names on the search path `path`.
pub fn find_on_path(program: &str, path: &std::ffi::OsStr) -> Option<PathBuf> {
    std::env::split_paths(path)
        // Absolute but not resolved further: a multi-call program (busybox) goes by the
        // name it is run under.
        .filter_map(|dir| std::path::absolute(dir.join(program)).ok())
        .find(|file| is_executable(file))
}

/// Whether an `--allow-net` entry (`host`, `host:port`, `[v6]:port`, a bare IPv6
/// address) allows `host` at `port`.
fn net_entry_allows(entry: &str, host: &str, port: Option<u16>) -> bool {
    net_entry(entry).is_some_and(|(entry_host, entry_port)| {
        entry_host.eq_ignore_ascii_case(host) && (entry_port.is_none() || entry_port == port)
    })
}

/// An `--allow-net` entry's host and port (`None`: any port); `None` when it reads as
/// neither.
fn net_entry(entry: &str) -> Option<(&str, Option<u16>)> {
    let entry = entry.trim();
    match entry.strip_prefix('[') {
        Some(rest) => match rest.split_once(']')? {
            (v6, "") => Some((v6, None)),
            (v6, tail) => Some((v6, Some(tail.strip_prefix(':')?.parse().ok()?))),
        },
        // More than one colon without brackets: an IPv6 address alone.
        None if entry.matches(':').count() > 1 => Some((entry, None)),
        None => match entry.split_once(':') {
            Some((name, p)) => Some((name, Some(p.parse().ok()?))),
            None => Some((entry, None)),
        },
    }
}

/// How a host is written in a flag: an IPv6 address in brackets.
fn bracketed(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_owned()
    }
}

/// Allowed when `allowed` is `None` or names `name`; otherwise denied with the flag
/// `--allow-CAPABILITY=name`.
fn check_listed(
    allowed: Option<&[String]>,
    name: &str,
    capability: &str,
    action: impl FnOnce() -> String,
) -> Result<()> {
    match allowed {
        Some(names) if !names.iter().any(|n| n == name) => Err(denied(
            capability,
            action(),
            format!("--allow-{capability}={name}"),
        )),
        _ => Ok(()),
    }
}

fn capability_verb(access: Access) -> &'static str {
    match access {
        Access::Read => "read",
        Access::Write => "writ",
    }
}

fn denied(capability: &str, action: String, flag: String) -> Error {
    Error::task_failure(
        Reason::PermissionDenied,
        format!("{action} is not allowed in the sandbox: pass {flag} to allow it"),
    )
    .with_details(json!({"capability": capability, "flag": flag}))
}

fn is_executable(file: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(file).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `path` made absolute with its symbolic links resolved; the part that does not exist
/// yet (a file about to be written) is appended with `.` and `..` folded away, so no
/// spelling of a path can leave the directory it names.
fn resolve(path: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            return fold(real, rest.into_iter().rev());
        }
        match (existing.components().next_back(), existing.parent()) {
            (Some(last), Some(parent)) => {
                rest.push(last);
                existing = parent;
            }
            // Only the root has no parent, and it always exists.
            _ => return fold(PathBuf::new(), absolute.components()),
        }
    }
}

/// `base` followed by `components`, with `.` dropped and `..` taking one step back.
fn fold<'a>(mut base: PathBuf, components: impl Iterator<Item = Component<'a>>) -> PathBuf {
    for component in components {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                base.pop();
            }
            other => base.push(other.as_os_str()),
        }
    }
    base
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason_and_flag(result: Result<()>) -> (String, String) {
        let error = result.unwrap_err();
        (
            error.reason().unwrap_or_default().to_owned(),
            error.details()["flag"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        )
    }

    #[test]
    fn everything_is_allowed_by_default() {
        let all = Capabilities::all();
        assert!(all.check_exec("rm").is_ok());
        assert!(all
            .check_path(Path::new("/etc/passwd"), Access::Read)
            .is_ok());
        assert!(all.check_path(Path::new("/tmp/x"), Access::Write).is_ok());
        assert!(all.check_env("HOME").is_ok());
        assert!(all.check_provider("openai").is_ok());
        assert!(all.check_url("https://anywhere.example/v1").is_ok());
    }

    #[test]
    fn the_sandbox_denies_each_capability_and_names_the_flag() {
        let sandbox = Capabilities::sandbox();
        assert_eq!(
            reason_and_flag(sandbox.check_exec("ls")),
            ("permission_denied".into(), "--allow-exec=ls".into())
        );
        assert_eq!(
            reason_and_flag(sandbox.check_env("HOME")).1,
            "--allow-env=HOME"
        );
        assert_eq!(
            reason_and_flag(sandbox.check_provider("record:openai")).1,
            "--allow-provider=record"
        );
        assert!(sandbox.check_provider("echo").is_ok());
        assert_eq!(
            reason_and_flag(sandbox.check_url("http://u:pw@Evil.Example:8080/v1")),
            (
                "permission_denied".into(),
                "--allow-net=evil.example".into()
            )
        );
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        let file = dir.path().join("f.txt");
        assert_eq!(
            reason_and_flag(sandbox.check_path(&file, Access::Read)).1,
            format!("--allow-read={}", real.display())
        );
        assert_eq!(
            reason_and_flag(sandbox.check_path(&file, Access::Write)).1,
            format!("--allow-write={}", real.display())
        );
    }

    #[test]
    fn allowed_directories_hold_their_files_and_no_others() {
        let dir = tempfile::tempdir().unwrap();
        let inside = dir.path().join("in");
        std::fs::create_dir(&inside).unwrap();
        std::fs::write(dir.path().join("secret"), "s").unwrap();
        let caps = Capabilities {
            read: Some(vec![inside.clone()]),
            ..Capabilities::sandbox()
        };
        assert!(caps
            .check_path(&inside.join("a/b.txt"), Access::Read)
            .is_ok());
        for escape in ["../secret", "new/../../secret", "./../in/../secret"] {
            assert!(
                caps.check_path(&inside.join(escape), Access::Read).is_err(),
                "{escape}"
            );
        }
        assert!(caps.check_path(&inside.join("x"), Access::Write).is_err());
    }

    #[test]
    fn a_symbolic_link_out_of_an_allowed_directory_is_followed_and_refused() {
        let dir = tempfile::tempdir().unwrap();
        let inside = dir.path().join("in");
        std::fs::create_dir(&inside).unwrap();
        std::fs::write(dir.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), inside.join("link")).unwrap();
        let caps = Capabilities {
            read: Some(vec![inside.clone()]),
            ..Capabilities::sandbox()
        };
        assert!(caps.check_path(&inside.join("link"), Access::Read).is_err());
    }

    #[test]
    fn only_the_named_programs_variables_and_providers_are_allowed() {
        let caps = Capabilities {
            exec: Some(vec!["wc".into()]),
            env: Some(vec!["LANG".into()]),
            providers: Some(vec!["openai".into()]),
            ..Capabilities::sandbox()
        };
        assert!(caps.check_exec("wc").is_ok());
        let wc = caps.exec_program("wc").unwrap().unwrap();
        assert!(wc.is_absolute() && wc.ends_with("wc"), "{}", wc.display());
        assert_eq!(Capabilities::all().exec_program("wc").unwrap(), None);
        assert!(caps.check_exec("/tmp/wc").is_err());
        assert!(caps.check_env("LANG").is_ok());
        assert!(caps.check_env("HOME").is_err());
        assert!(caps.check_provider("openai").is_ok());
        assert!(caps.check_provider("record:openai").is_err());
    }

    #[test]
    fn an_intersection_never_allows_more_than_either_side() {
        let dir = tempfile::tempdir().unwrap();
        let inner = dir.path().join("inner");
        std::fs::create_dir(&inner).unwrap();
        let parent = Capabilities {
            env: Some(vec!["LANG".into()]),
            read: Some(vec![dir.path().to_path_buf()]),
            net: Some(vec!["api.example.com:443".into()]),
            ..Capabilities::sandbox()
        };
        let asked = Capabilities {
            env: Some(vec!["LANG".into(), "HOME".into()]),
            read: Some(vec![inner.clone(), PathBuf::from("/etc")]),
            net: Some(vec!["api.example.com".into(), "evil.example".into()]),
            exec: None,
            ..Capabilities::sandbox()
        };
        let both = parent.intersect(&asked);
        assert_eq!(both.env, Some(vec!["LANG".to_owned()]));
        assert_eq!(both.read, Some(vec![inner]));
        assert_eq!(both.net, Some(vec!["api.example.com:443".to_owned()]));
        assert_eq!(both.exec, Some(vec![]));
        assert_eq!(Capabilities::all().intersect(&asked), asked);
        assert_eq!(asked.intersect(&Capabilities::all()), asked);
    }

    #[test]
    fn only_the_named_hosts_and_ports_are_allowed() {
        let caps = Capabilities {
            net: Some(vec![
                "api.example.com".into(),
                "127.0.0.1:8080".into(),
                "[::1]:9000".into(),
                "fe80::2".into(),
            ]),
            ..Capabilities::sandbox()
        };
        for allowed in [
            "https://API.example.com/v1",
            "http://api.example.com:1234",
            "http://127.0.0.1:8080/v1",
            "http://[::1]:9000/",
            "http://[fe80::2]/",
        ] {
            assert!(caps.check_url(allowed).is_ok(), "{allowed}");
        }
        for refused in [
            "http://api.example.com.evil.net/v1",
            "http://127.0.0.1:8081/v1",
            "http://127.0.0.1/v1",
            "http://[::1]:9001/",
            "http://api.example.com@evil.net/",
            "not a url",
            "/v1/chat",
        ] {
            assert!(caps.check_url(refused).is_err(), "{refused}");
        }
        let error = caps.check_url("http://[::2]:80/").unwrap_err();
        assert_eq!(error.details()["flag"], "--allow-net=[::2]");
        assert!(!error.message().contains("v1"), "{}", error.message());
    }
}
