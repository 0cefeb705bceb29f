//! Confining a program in the kernel: under a sandbox, a program tasklisp starts is held
//! by Landlock to what the sandbox grants — reads under the allowed directories, its own
//! file and its `#!` interpreters, and the system's [`SYSTEM_READ`] list; writes under the
//! allowed directories and a private temporary directory (its `TMPDIR`); TCP connections
//! to the allowed ports — so a program allowed to run cannot read what the code that ran
//! it may not.
//!
//! The ruleset is built here, in the parent (opening paths allocates); the child only
//! sets `no_new_privs` and hands the ruleset's descriptor to `landlock_restrict_self`
//! between fork and exec. Rights the kernel does not know are dropped (best effort); a
//! kernel without Landlock is named once, or, when confinement is required, refuses the
//! program before it starts.

use super::ProcessSpec;
use crate::capabilities::{find_on_path, Capabilities};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use tempfile::TempDir;

/// Read and execute: what any program needs to start and run — binaries, shared
/// libraries and the loader's configuration, locales, the time zone, the harmless
/// devices. Paths that do not exist are skipped.
pub const SYSTEM_READ: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/ld.so.preload",
    "/etc/localtime",
    "/etc/locale.alias",
    "/etc/locale.conf",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
];

/// Written as well as read by any program (`>/dev/null`).
pub const SYSTEM_WRITE: &[&str] = &["/dev/null"];

/// Read when some hosts are allowed: what resolving names and checking certificates
/// reads.
pub const NETWORK_READ: &[&str] = &[
    "/etc/hosts",
    "/etc/resolv.conf",
    "/etc/nsswitch.conf",
    "/etc/host.conf",
    "/etc/gai.conf",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/pki",
];

/// The environment variable that makes tasklisp act as if the kernel had no Landlock:
/// a test hook, since a kernel that has it cannot be made to lack it.
pub const PRETEND_ABSENT_VAR: &str = "TASKLISP_TEST_NO_LANDLOCK";

/// How many `#!` interpreters deep a program's file is followed (the kernel's own limit).
const MAX_INTERPRETERS: usize = 4;

/// The first Landlock ABI that filters TCP connections.
const TCP_ABI: i32 = 4;

/// What a program started under a sandbox may reach; `None` in a field: anything.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Confinement {
    read: Option<Vec<PathBuf>>,
    write: Option<Vec<PathBuf>>,
    /// The TCP ports it may connect to.
    ports: Option<Vec<u16>>,
    /// The variables of tasklisp's environment it inherits besides [`INHERITED_ENV`]
    /// (`--allow-env`); `None`: all of them.
    env: Option<Vec<String>>,
    /// A program that cannot be confined must not start (`--require-confinement`).
    required: bool,
}

/// What a program started under a sandbox inherits of tasklisp's environment besides
/// the `--allow-env` variables and its own `:env`: enough to find programs and run in
/// the user's locale (with the `LC_*` variables), and no keys.
pub const INHERITED_ENV: &[&str] = &["PATH", "HOME", "LANG", "TERM", "TMPDIR", "USER"];

/// Those of tasklisp's variables named by [`INHERITED_ENV`], the `LC_*` ones, and
/// `also`, that are set.
pub fn inherited_env(also: &[String]) -> Vec<(String, String)> {
    let kept = |name: &str| {
        INHERITED_ENV.contains(&name) || name.starts_with("LC_") || also.iter().any(|a| a == name)
    };
    std::env::vars_os()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .filter(|(name, _)| kept(name))
        .collect()
}

/// The command line's sandbox, for programs started outside any evaluation (the
/// `command` provider), and whether confinement is required.
static PROCESS_SANDBOX: OnceLock<(Capabilities, bool)> = OnceLock::new();

/// Set once the missing Landlock has been named.
static NAMED_MISSING: AtomicBool = AtomicBool::new(false);

/// Sets the sandbox of the command line: the capabilities programs started outside an
/// evaluation are confined to, and whether every program must be confined. Once per
/// process; later calls change nothing.
pub fn set_process_sandbox(capabilities: Capabilities, required: bool) {
    let _ = PROCESS_SANDBOX.set((capabilities, required));
}

impl Confinement {
    /// The confinement of a program started by code with `capabilities`: none when the
    /// code may read, write and connect anywhere.
    pub fn of(capabilities: &Capabilities) -> Option<Confinement> {
        let confinement = Confinement {
            read: capabilities.read.clone(),
            write: capabilities.write.clone(),
            ports: capabilities.net_ports(),
            env: capabilities.env.clone(),
            required: PROCESS_SANDBOX.get().is_some_and(|(_, required)| *required),
        };
        let free = confinement.read.is_none()
            && confinement.write.is_none()
            && confinement.ports.is_none();
        (!free).then_some(confinement)
    }

    /// The environment the program starts with, before its own `:env`: tasklisp's whole
    /// environment (`None`), or only [`inherited_env`] with the `--allow-env` variables.
    pub fn environment(&self) -> Option<Vec<(String, String)>> {
        self.env.as_deref().map(inherited_env)
    }

    /// The confinement of the command line's sandbox (none without one).
    pub fn of_process() -> Option<Confinement> {
        PROCESS_SANDBOX
            .get()
            .and_then(|(capabilities, _)| Confinement::of(capabilities))
    }
}

/// What the kernel offers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Landlock {
    /// Landlock with this ABI version.
    Abi(i32),
    /// No Landlock, and why.
    Unavailable(String),
}

impl std::fmt::Display for Landlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Landlock::Abi(abi) => write!(f, "ABI {abi}"),
            Landlock::Unavailable(why) => write!(f, "unavailable ({why})"),
        }
    }
}

/// The kernel's Landlock, asked once.
pub fn landlock() -> &'static Landlock {
    static FOUND: OnceLock<Landlock> = OnceLock::new();
    FOUND.get_or_init(|| {
        if std::env::var_os(PRETEND_ABSENT_VAR).is_some_and(|v| !v.is_empty()) {
            return Landlock::Unavailable(format!("pretended by {PRETEND_ABSENT_VAR}"));
        }
        kernel::abi()
    })
}

/// Why a program was not started.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Confinement is required and the kernel cannot give it.
    Unavailable(String),
    /// Confining it failed (no temporary directory, a ruleset refused).
    Failed(String),
}

/// Confines the program `command` will start as `spec.confine` says, and returns its
/// private temporary directory (to be removed once it has ended), if it was confined.
pub(super) fn confine(
    command: &mut Command,
    spec: &ProcessSpec,
) -> Result<Option<TempDir>, Refusal> {
    let Some(confinement) = &spec.confine else {
        return Ok(None);
    };
    if !confinable(landlock(), confinement)? {
        if !NAMED_MISSING.swap(true, Ordering::Relaxed) {
            crate::notice::emit(&format!(
                "note: Landlock is {}: programs started under --sandbox are not confined \
                 by the kernel (--require-confinement refuses to start them)",
                landlock()
            ));
        }
        return Ok(None);
    }
    let private = tempfile::Builder::new()
        .prefix("tasklisp-child-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .tempdir()
        .map_err(|e| Refusal::Failed(format!("cannot make its temporary directory: {e}")))?;
    let grants = Grants::new(confinement, program_files(spec), private.path());
    kernel::restrict(command, &grants).map_err(Refusal::Failed)?;
    command.env("TMPDIR", private.path());
    Ok(Some(private))
}

/// Whether the kernel can confine the program (`false`: it runs unconfined); refused
/// when confinement is required and the kernel cannot give all of it.
fn confinable(found: &Landlock, confinement: &Confinement) -> Result<bool, Refusal> {
    let wants_tcp = confinement.ports.as_ref().is_some_and(|p| !p.is_empty());
    match found {
        Landlock::Abi(abi) if *abi < TCP_ABI && wants_tcp && confinement.required => {
            Err(Refusal::Unavailable(format!(
                "Landlock ABI {abi} cannot filter TCP for --allow-net (ABI {TCP_ABI} can)"
            )))
        }
        Landlock::Abi(_) => Ok(true),
        Landlock::Unavailable(why) if confinement.required => Err(Refusal::Unavailable(format!(
            "Landlock is unavailable ({why})"
        ))),
        Landlock::Unavailable(_) => Ok(false),
    }
}

/// The paths and ports a confined program is granted; a `None` list: not restricted.
struct Grants {
    /// Read and execute.
    read: Option<Vec<PathBuf>>,
    /// The program and its interpreters: read and execute, each only as a regular file.
    program: Vec<PathBuf>,
    /// Write, create and remove, not read.
    write: Option<Vec<PathBuf>>,
    /// Read and write, not execute: the private temporary directory and `/dev/null`.
    read_write: Vec<PathBuf>,
    ports: Option<Vec<u16>>,
}

impl Grants {
    fn new(confinement: &Confinement, program: Vec<PathBuf>, private: &Path) -> Grants {
        let read = confinement.read.as_ref().map(|allowed| {
            let mut read: Vec<PathBuf> = SYSTEM_READ.iter().map(PathBuf::from).collect();
            if confinement.ports.as_ref().is_some_and(|p| !p.is_empty()) {
                read.extend(NETWORK_READ.iter().map(PathBuf::from));
            }
            read.extend(allowed.iter().cloned());
            read
        });
        let mut read_write = vec![private.to_path_buf()];
        read_write.extend(SYSTEM_WRITE.iter().map(PathBuf::from));
        Grants {
            read,
            program,
            write: confinement.write.clone(),
            read_write,
            ports: confinement.ports.clone(),
        }
    }
}

/// The files the kernel runs for `spec`: the program and the `#!` interpreters it names
/// (an interpreter found through `env` lies in the system's directories or needs
/// `--allow-read`).
fn program_files(spec: &ProcessSpec) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = program_file(spec).into_iter().collect();
    while files.len() <= MAX_INTERPRETERS {
        match files.last().and_then(|file| interpreter_of(file)) {
            Some(next) if !files.contains(&next) => files.push(next),
            _ => break,
        }
    }
    // Only regular files, by their real path: a name that leads to a directory (a link
    // to `/`) grants nothing. The kernel checks the file again when the rule is made.
    files
        .iter()
        .filter_map(|file| std::fs::canonicalize(file).ok())
        .filter(|file| file.is_file())
        .collect()
}

/// The file `spec` runs, found as the kernel will find it: the caller's, a path, or a
/// name on the program's `PATH`.
fn program_file(spec: &ProcessSpec) -> Option<PathBuf> {
    if let Some(file) = &spec.executable {
        return Some(file.clone());
    }
    let name = if spec.shell { "sh" } else { spec.program() };
    if name.contains('/') {
        let base = spec.cwd.clone().unwrap_or_default();
        return std::path::absolute(base.join(name)).ok();
    }
    let path = match spec.env.iter().rev().find(|(key, _)| key == "PATH") {
        Some((_, path)) => path.into(),
        None => std::env::var_os("PATH").unwrap_or_default(),
    };
    find_on_path(name, &path)
}

/// The interpreter a `#!` line at the start of `file` names.
fn interpreter_of(file: &Path) -> Option<PathBuf> {
    let mut head = Vec::new();
    std::fs::File::open(file)
        .ok()?
        .take(256)
        .read_to_end(&mut head)
        .ok()?;
    let line = head.strip_prefix(b"#!")?.split(|&b| b == b'\n').next()?;
    // As the kernel reads it (binfmt_script): the name ends at a space, a tab or a NUL,
    // nothing else — a `\r` is part of the name, so a word cut elsewhere would grant a
    // file the kernel never runs.
    let word = line
        .split(|&b| matches!(b, b' ' | b'\t' | 0))
        .find(|word| !word.is_empty())?;
    Some(PathBuf::from(std::str::from_utf8(word).ok()?))
}

#[cfg(target_os = "linux")]
mod kernel {
    use super::{Grants, Landlock};
    use landlock::{
        path_beneath_rules, Access, AccessFs, AccessNet, BitFlags, NetPort, PathBeneath, Ruleset,
        RulesetAttr, RulesetCreatedAttr, RulesetError, Scope, ABI,
    };
    use std::os::fd::{AsRawFd, OwnedFd};
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    /// The newest ABI these rules are written for; a kernel with an older one gets what
    /// it knows of them.
    const WRITTEN_FOR: ABI = ABI::V9;

    /// `LANDLOCK_CREATE_RULESET_VERSION`: asks for the ABI instead of a ruleset.
    const ASK_VERSION: libc::c_uint = 1;

    pub fn abi() -> Landlock {
        // SAFETY: with a null attribute, size 0 and the version flag, the call only
        // returns a number (or -1 and errno).
        let version = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<libc::c_void>(),
                0usize,
                ASK_VERSION,
            )
        };
        if version > 0 {
            return Landlock::Abi(i32::try_from(version).unwrap_or(i32::MAX));
        }
        let error = std::io::Error::last_os_error();
        Landlock::Unavailable(match error.raw_os_error() {
            Some(libc::ENOSYS) => "the kernel is built without it".to_owned(),
            Some(libc::EOPNOTSUPP) => "disabled when the kernel started".to_owned(),
            _ => error.to_string(),
        })
    }

    /// Builds the ruleset for `grants` and has the child enter it before exec.
    pub fn restrict(command: &mut Command, grants: &Grants) -> Result<(), String> {
        let ruleset = ruleset(grants).map_err(|e| format!("cannot build its ruleset: {e}"))?;
        if let Some(ruleset) = ruleset {
            let filter = if grants.ports.is_some() {
                not_tcp_by_another_name()
            } else {
                Vec::new()
            };
            enter_in_child(command, ruleset, filter);
        }
        Ok(())
    }

    /// The audit architecture of this build's system calls (seccomp filters check it).
    #[cfg(target_arch = "x86_64")]
    const AUDIT_ARCH: Option<u32> = Some(0xC000_003E);
    #[cfg(target_arch = "aarch64")]
    const AUDIT_ARCH: Option<u32> = Some(0xC000_00B7);
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    const AUDIT_ARCH: Option<u32> = None;

    /// `io_uring_setup`, the same number on both architectures above.
    const IO_URING_SETUP: u32 = 425;
    /// System call numbers at or above this are x86-64's x32 calls.
    const X32_CALLS: u32 = 0x4000_0000;

    /// A seccomp filter for a program whose TCP connections are filtered: Landlock
    /// filters TCP only, so an MPTCP socket (a TCP connection by another protocol
    /// number) and io_uring (which opens sockets without the `socket` call) are refused,
    /// as are system calls of another architecture or ABI. Empty where the architecture
    /// is not known (documented).
    fn not_tcp_by_another_name() -> Vec<libc::sock_filter> {
        let Some(arch) = AUDIT_ARCH else {
            return Vec::new();
        };
        let op = |code: u32, k: u32, jt: u8, jf: u8| libc::sock_filter {
            code: code as u16,
            jt,
            jf,
            k,
        };
        let load = |offset: u32| op(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, offset, 0, 0);
        let equal =
            |k: u32, jt: u8, jf: u8| op(libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K, k, jt, jf);
        let refuse =
            libc::SECCOMP_RET_ERRNO | (libc::EPROTONOSUPPORT as u32 & libc::SECCOMP_RET_DATA);
        let ret = |k: u32| op(libc::BPF_RET | libc::BPF_K, k, 0, 0);
        // seccomp_data: nr at 0, arch at 4, args[i] at 16 + 8 i (the low half first).
        vec![
            load(4),                                                          // 0
            equal(arch, 1, 0),                                                // 1: → 3, 2
            ret(refuse),                                                      // 2
            load(0),                                                          // 3
            op(libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K, X32_CALLS, 5, 0), // 4: → 10, 5
            equal(libc::SYS_socket as u32, 0, 2),                             // 5: → 6, 8
            load(32),                                                         // 6: args[2]
            equal(libc::IPPROTO_MPTCP as u32, 2, 1),                          // 7: → 10, 9
            equal(IO_URING_SETUP, 1, 0),                                      // 8: → 10, 9
            ret(libc::SECCOMP_RET_ALLOW),                                     // 9
            ret(refuse),                                                      // 10
        ]
    }

    fn ruleset(grants: &Grants) -> Result<Option<OwnedFd>, RulesetError> {
        let read = AccessFs::from_read(WRITTEN_FOR);
        let write = AccessFs::from_write(WRITTEN_FOR);
        let mut handled = BitFlags::EMPTY;
        if grants.read.is_some() {
            handled |= read;
        }
        if grants.write.is_some() {
            handled |= write;
        }
        let mut ruleset = Ruleset::default().scope(Scope::from_all(WRITTEN_FOR))?;
        if !handled.is_empty() {
            ruleset = ruleset.handle_access(handled)?;
        }
        if grants.ports.is_some() {
            ruleset = ruleset.handle_access(AccessNet::ConnectTcp)?;
        }
        let mut created = ruleset.create()?;
        let no_execute = !BitFlags::from(AccessFs::Execute);
        let rules: [(&[std::path::PathBuf], BitFlags<AccessFs>); 3] = [
            (grants.read.as_deref().unwrap_or_default(), read & handled),
            (grants.write.as_deref().unwrap_or_default(), write & handled),
            (&grants.read_write, (read | write) & no_execute & handled),
        ];
        for (paths, access) in rules {
            if !access.is_empty() {
                created = created.add_rules(path_beneath_rules(paths, access))?;
            }
        }
        if grants.read.is_some() {
            let as_file = read & AccessFs::from_file(WRITTEN_FOR) & handled;
            for file in grants.program.iter().filter_map(|path| regular_file(path)) {
                created = created.add_rule(PathBeneath::new(file, as_file))?;
            }
        }
        for &port in grants.ports.as_deref().unwrap_or_default() {
            created = created.add_rule(NetPort::new(port, AccessNet::ConnectTcp))?;
        }
        Ok(created.into())
    }

    /// `path` opened without following a link at its end, if it is a regular file: what
    /// the rule grants is that file, whatever the name points to later.
    fn regular_file(path: &std::path::Path) -> Option<std::fs::File> {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
            .ok()?;
        file.metadata().ok()?.is_file().then_some(file)
    }

    /// Has the child enter the ruleset `ruleset`, and the seccomp `filter` when it is not
    /// empty, between fork and exec.
    fn enter_in_child(command: &mut Command, ruleset: OwnedFd, filter: Vec<libc::sock_filter>) {
        // SAFETY: the closure runs in the child between fork and exec; it makes at most
        // three system calls and does not allocate (the filter was built in the parent
        // and is only pointed to). The descriptor and the filter live as long as the
        // closure (the `Command`); the descriptor is close-on-exec.
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let fd = ruleset.as_raw_fd();
                if libc::syscall(libc::SYS_landlock_restrict_self, fd, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if !filter.is_empty() {
                    let program = libc::sock_fprog {
                        len: filter.len() as u16,
                        filter: filter.as_ptr().cast_mut(),
                    };
                    let installed = libc::prctl(
                        libc::PR_SET_SECCOMP,
                        libc::SECCOMP_MODE_FILTER,
                        &program as *const libc::sock_fprog,
                    );
                    if installed != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod kernel {
    use super::{Grants, Landlock};
    use std::process::Command;

    pub fn abi() -> Landlock {
        Landlock::Unavailable("not Linux".to_owned())
    }

    pub fn restrict(_: &mut Command, _: &Grants) -> Result<(), String> {
        Err("Landlock is Linux's".to_owned())
    }
}

#[cfg(test)]
mod tests;
