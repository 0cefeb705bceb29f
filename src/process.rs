//! Running an external program: the one runner behind script tasks and the `command`
//! provider.
//!
//! A program runs directly from its argv (no shell unless asked), in a process group of
//! its own so that a timeout or a cancellation can kill it *and everything it spawned*
//! with one `SIGKILL`; the kernel kills it too if the interpreter dies first
//! (`PR_SET_PDEATHSIG`). Its exit is awaited on a pidfd. Its output is drained on
//! threads while we wait, keeping at most `max_output` bytes of each stream, so a chatty
//! program can neither block on a full pipe nor fill our memory. When the program
//! exits, whatever is left of its process group is killed too, and the pipes get a short
//! drain: a process that left the group (`setsid`) and still holds them open does not
//! hold the caller.
//!
//! Under a sandbox, the program is confined by the kernel to what the sandbox grants
//! (see [`confine`]).
//!
//! This is plain Rust and `Send`: the interpreter runs it through
//! [`run_blocking`](crate::eval::fiber::run_blocking) so `pmap` items overlap.

mod confine;

pub use confine::{inherited_env, landlock, set_process_sandbox, Confinement};

use crate::interrupt::Cancel;
use confine::Refusal;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How much of each output stream is kept unless the caller says otherwise.
pub const DEFAULT_MAX_OUTPUT: usize = 10 << 20;

/// The exit code reported for a program that could not be started (as shells do).
pub const NOT_STARTED_EXIT_CODE: i32 = 127;

/// How long the pipes may stay open once the program has ended: what a process that
/// escaped the group writes after that is not waited for.
const DRAIN_GRACE: Duration = Duration::from_millis(500);

/// `$0` of a shell script.
const SHELL_NAME: &str = "tasklisp";

/// The longest pause between two checks of the program, the timeout and the cancel flag.
const MAX_POLL_INTERVAL: Duration = Duration::from_millis(20);

/// What to run and how.
#[derive(Clone, Debug)]
pub struct ProcessSpec {
    /// The program and its arguments. With `shell`, `argv[0]` is the shell script and the
    /// rest are its positional parameters: `sh -c argv[0] tasklisp argv[1]…`, so `"$1"`
    /// is `argv[1]` (and `$0` is `tasklisp`); they are never spliced into the script.
    pub argv: Vec<String>,
    /// Bytes written to the program's standard input; `None` gives it an empty input
    /// (never the interpreter's own stdin, which the REPL owns).
    pub stdin: Option<Vec<u8>>,
    /// Variables added to (or replacing those of) the inherited environment.
    pub env: Vec<(String, String)>,
    /// Variables removed from the inherited environment.
    pub env_remove: Vec<String>,
    /// Whether the program inherits no environment at all (only `env`).
    pub clear_env: bool,
    pub shell: bool,
    pub timeout: Option<Duration>,
    pub cwd: Option<PathBuf>,
    /// The most bytes kept of stdout and of stderr, each; the rest is read and dropped.
    pub max_output: usize,
    /// Whether stdout beyond `max_output` ends the program (`OutputOverflow`) instead of
    /// being dropped.
    pub stop_at_cap: bool,
    /// The file to run, found by the caller on tasklisp's own `PATH` (see
    /// `Capabilities::exec_program`); `None`: `argv[0]` (or `sh`) is looked up on the
    /// `PATH` the program is given.
    pub executable: Option<PathBuf>,
    /// What the kernel confines the program to (a sandbox's grants); `None`: nothing.
    pub confine: Option<Confinement>,
}

impl ProcessSpec {
    /// A spec that runs `argv` directly, with no input and the default output cap.
    pub fn new(argv: Vec<String>) -> ProcessSpec {
        ProcessSpec {
            argv,
            stdin: None,
            env: Vec::new(),
            env_remove: Vec::new(),
            clear_env: false,
            shell: false,
            timeout: None,
            cwd: None,
            max_output: DEFAULT_MAX_OUTPUT,
            stop_at_cap: false,
            executable: None,
            confine: None,
        }
    }

    /// How the program is named in messages: the program, or the shell script.
    pub fn program(&self) -> &str {
        self.argv.first().map_or("", String::as_str)
    }
}

/// What a program left behind. A non-zero exit is still `Ok`: the caller decides what
/// it means.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProcessOutput {
    pub stdout: String,
    pub stderr: String,
    /// The exit status, or `128 + signal` when a signal ended the program.
    pub exit_code: i32,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
}

/// Why a run ended before the program finished on its own, with what it printed so far.
#[derive(Debug)]
pub struct Stopped {
    pub why: StopReason,
    pub output: ProcessOutput,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StopReason {
    /// The program could not be started (the OS error); the exit code is 127.
    NotStarted(String),
    /// It ran longer than `spec.timeout`.
    TimedOut(Duration),
    /// The caller's deadline passed.
    DeadlinePassed,
    /// The caller's cancel flag was raised.
    Cancelled,
    /// Stdout passed the cap of a spec with `stop_at_cap`.
    OutputOverflow,
    /// The runner itself could not go on (no thread for the pipes, no wait).
    Failed(String),
    /// Confinement is required and the kernel cannot give it (why); the program was not
    /// started.
    Unconfined(String),
}

/// Runs the program `spec` describes and waits for it, its timeout, or `cancel`.
pub fn run(spec: &ProcessSpec, cancel: &Cancel) -> Result<ProcessOutput, Stopped> {
    if spec.argv.is_empty() {
        return Err(Stopped {
            why: StopReason::NotStarted("the command is empty".into()),
            output: ProcessOutput::not_started(""),
        });
    }
    let not_started = |why: StopReason, message: &str| Stopped {
        why,
        output: ProcessOutput::not_started(message),
    };
    let (mut command, private_tmp) = prepare(spec).map_err(|refusal| match refusal {
        Refusal::Unavailable(why) => not_started(StopReason::Unconfined(why), ""),
        Refusal::Failed(why) => not_started(StopReason::NotStarted(why.clone()), &why),
    })?;
    let mut child = command
        .spawn()
        .map_err(|e| not_started(StopReason::NotStarted(e.to_string()), &e.to_string()))?;
    let group = ProcessGroup::new(child.id());
    let (stdout, stderr) = (Capture::shared(), Capture::shared());
    let watch = Watch {
        started: Instant::now(),
        timeout: spec.timeout,
        cancel,
        overflow: spec.stop_at_cap.then_some(&stdout),
    };
    let io = start_io(&mut child, spec, &stdout, &stderr);
    let ending = match &io {
        Ok(_) => watch.until(|| group.leader_exited(), |pause| group.wait_for_exit(pause)),
        Err(e) => Ending::Stopped(StopReason::Failed(e.to_string())),
    };
    // The leader has exited (or is about to be killed) but is not reaped, so its id
    // still names only its own group.
    group.kill();
    let status = child.wait();
    // A process that left the group (setsid) may still hold a pipe open: the streams
    // get a short drain, within the same timeout and cancel flag, and no more.
    let ending = match (ending, &io) {
        (Ending::Exited, Ok(threads)) => watch.drain(threads),
        (ending, _) => ending,
    };
    drop(private_tmp);
    let output = Capture::output(&stdout, &stderr);
    let output = ProcessOutput {
        exit_code: status.as_ref().map_or(NOT_STARTED_EXIT_CODE, exit_code),
        ..output
    };
    let why = match (ending, status) {
        (Ending::Exited, Ok(_)) => return Ok(output),
        (Ending::Exited, Err(e)) => StopReason::Failed(format!("cannot wait: {e}")),
        (Ending::Stopped(why), _) => why,
    };
    Err(Stopped { why, output })
}

/// Starts the threads that feed stdin and drain stdout and stderr.
fn start_io(
    child: &mut Child,
    spec: &ProcessSpec,
    stdout: &SharedCapture,
    stderr: &SharedCapture,
) -> std::io::Result<Vec<JoinHandle<()>>> {
    let mut threads = Vec::new();
    if let (Some(input), Some(pipe)) = (spec.stdin.clone(), child.stdin.take()) {
        threads.push(spawn_thread(move || feed(pipe, &input))?);
    }
    if let Some(pipe) = child.stdout.take() {
        let (capture, cap) = (stdout.clone(), spec.max_output);
        threads.push(spawn_thread(move || drain(pipe, cap, &capture))?);
    }
    if let Some(pipe) = child.stderr.take() {
        let (capture, cap) = (stderr.clone(), spec.max_output);
        threads.push(spawn_thread(move || drain(pipe, cap, &capture))?);
    }
    Ok(threads)
}

/// Starts the program `spec` describes, as `run` does (its own process group, killed with
/// the interpreter), and hands it over with its pipes: for a program that lives on and
/// is talked to (an MCP server). `spec.stdin` `Some` gives it a pipe for its input.
/// A program confined by the kernel gets a private temporary directory, removed once it
/// has exited.
pub fn spawn(spec: &ProcessSpec) -> std::io::Result<Child> {
    let (mut command, private_tmp) = prepare(spec).map_err(|refusal| match refusal {
        Refusal::Unavailable(why) => std::io::Error::other(format!("{UNCONFINED_MESSAGE}: {why}")),
        Refusal::Failed(why) => std::io::Error::other(why),
    })?;
    let child = command.spawn()?;
    if let Some(dir) = private_tmp {
        remove_when_exited(child.id(), dir);
    }
    Ok(child)
}

/// How a program that must be confined and cannot be is reported.
pub const UNCONFINED_MESSAGE: &str = "confinement unavailable";

/// The command for `spec`, confined as it says, with the private temporary directory of
/// a confined program.
fn prepare(spec: &ProcessSpec) -> Result<(Command, Option<tempfile::TempDir>), Refusal> {
    let mut command = command(spec);
    let private_tmp = confine::confine(&mut command, spec)?;
    Ok((command, private_tmp))
}

/// Removes `dir` once the process `id` has exited (its pidfd becomes readable), on a
/// thread of its own; without a pidfd or a thread, at once.
fn remove_when_exited(id: u32, dir: tempfile::TempDir) {
    let Some(exit_fd) = open_pidfd(id) else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("tasklisp-child-tmp".into())
        .spawn(move || {
            let mut poll = libc::pollfd {
                fd: exit_fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: poll reads and writes only the one pollfd we own; -1 waits until
            // the process exits. A signal interrupting the wait repeats it.
            while unsafe { libc::poll(&mut poll, 1, -1) } < 0
                && std::io::Error::last_os_error().kind() == ErrorKind::Interrupted
            {}
            drop(dir);
        });
}

fn command(spec: &ProcessSpec) -> Command {
    let mut command = if spec.shell {
        let mut sh = Command::new(spec.executable.as_deref().unwrap_or(Path::new("sh")));
        sh.arg("-c")
            .args(spec.argv.first())
            .arg(SHELL_NAME)
            .args(spec.argv.iter().skip(1));
        sh
    } else {
        let named = Path::new(spec.argv.first().map_or("", String::as_str));
        let mut direct = Command::new(spec.executable.as_deref().unwrap_or(named));
        direct.args(spec.argv.iter().skip(1));
        direct
    };
    // A sandboxed program inherits no keys: only the variables its confinement names.
    let confined_env = spec.confine.as_ref().and_then(Confinement::environment);
    if spec.clear_env || confined_env.is_some() {
        command.env_clear();
    }
    if !spec.clear_env {
        command.envs(confined_env.unwrap_or_default());
    }
    for name in &spec.env_remove {
        command.env_remove(name);
    }
    command
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(if spec.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    if let Some(dir) = &spec.cwd {
        command.current_dir(dir);
    }
    die_with_interpreter(&mut command);
    command
}

/// Has the kernel kill the program if the interpreter dies first (killed, or ended by a
/// signal it does not handle): its own process group does not get the terminal's
/// Ctrl-C, and nothing else would stop it.
#[cfg(target_os = "linux")]
fn die_with_interpreter(command: &mut Command) {
    let interpreter = std::process::id();
    // SAFETY: the closure runs in the child between fork and exec; it calls only
    // async-signal-safe functions and does not allocate.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The interpreter may have died before the request was made.
            if u32::try_from(libc::getppid()).ok() != Some(interpreter) {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_interpreter(_command: &mut Command) {}

fn spawn_thread<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<JoinHandle<T>> {
    std::thread::Builder::new()
        .name("tasklisp-script-io".into())
        .spawn(work)
}

/// Writes the input and closes the pipe. A program that exits without reading it all
/// breaks the pipe, which is not an error.
fn feed(mut pipe: std::process::ChildStdin, input: &[u8]) {
    let _ = pipe.write_all(input);
}

/// One output stream as far as it has been read; shared so that a stream we stop
/// waiting for still shows what it printed.
#[derive(Default)]
struct Capture {
    bytes: Vec<u8>,
    truncated: bool,
}

type SharedCapture = Arc<Mutex<Capture>>;

impl Capture {
    fn shared() -> SharedCapture {
        Arc::new(Mutex::new(Capture::default()))
    }

    /// The streams decoded; the exit code is filled in by the caller.
    fn output(stdout: &SharedCapture, stderr: &SharedCapture) -> ProcessOutput {
        let stdout = lock(stdout);
        let stderr = lock(stderr);
        ProcessOutput {
            stdout: decode(&stdout.bytes, stdout.truncated),
            stderr: decode(&stderr.bytes, stderr.truncated),
            exit_code: 0,
            stdout_truncated: stdout.truncated,
            stderr_truncated: stderr.truncated,
        }
    }
}

fn lock(capture: &SharedCapture) -> MutexGuard<'_, Capture> {
    capture.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Reads a stream to its end, keeping at most `cap` bytes.
fn drain(mut pipe: impl Read, cap: usize, capture: &SharedCapture) {
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        match pipe.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                let mut capture = lock(capture);
                let room = cap.saturating_sub(capture.bytes.len());
                let kept = chunk.get(..n.min(room)).unwrap_or_default();
                capture.bytes.extend_from_slice(kept);
                capture.truncated |= n > room;
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
}

/// Decodes output lossily; a cap that cut a character in two drops its first bytes
/// rather than showing a replacement character.
fn decode(bytes: &[u8], truncated: bool) -> String {
    let end = if truncated {
        bytes.len() - incomplete_tail(bytes)
    } else {
        bytes.len()
    };
    String::from_utf8_lossy(bytes.get(..end).unwrap_or(bytes)).into_owned()
}

/// How many bytes at the end of `bytes` begin a UTF-8 character they do not finish.
fn incomplete_tail(bytes: &[u8]) -> usize {
    let tail = bytes
        .get(bytes.len().saturating_sub(3)..)
        .unwrap_or_default();
    for (from_end, &byte) in tail.iter().rev().enumerate() {
        let have = from_end + 1;
        let needed = match byte {
            0x00..=0x7f => return 0,
            0x80..=0xbf => continue,
            0xc0..=0xdf => 2,
            0xe0..=0xef => 3,
            _ => 4,
        };
        return if have < needed { have } else { 0 };
    }
    0
}

fn exit_code(status: &ExitStatus) -> i32 {
    status
        .code()
        .or_else(|| status.signal().map(|signal| 128 + signal))
        .unwrap_or(NOT_STARTED_EXIT_CODE)
}

impl ProcessOutput {
    fn not_started(os_error: &str) -> ProcessOutput {
        ProcessOutput {
            stderr: os_error.to_owned(),
            exit_code: NOT_STARTED_EXIT_CODE,
            ..ProcessOutput::default()
        }
    }
}

/// Why we stopped waiting for the program.
enum Ending {
    Exited,
    Stopped(StopReason),
}

/// The limits a wait is under: the program's timeout, the caller's cancel flag, and
/// the output cap when passing it ends the program.
struct Watch<'a> {
    started: Instant,
    timeout: Option<Duration>,
    cancel: &'a Cancel,
    overflow: Option<&'a SharedCapture>,
}

impl Watch<'_> {
    /// Polls `done` until it is true (`Exited`) or a limit ends the wait, waiting with
    /// `wait` (which may return early) between polls.
    fn until(
        &self,
        mut done: impl FnMut() -> std::io::Result<bool>,
        wait: impl Fn(Duration),
    ) -> Ending {
        let mut pause = Duration::from_millis(1);
        loop {
            match done() {
                Ok(true) => return Ending::Exited,
                Ok(false) => {}
                Err(e) => return Ending::Stopped(StopReason::Failed(e.to_string())),
            }
            if let Some(why) = self.limit_reached() {
                return Ending::Stopped(why);
            }
            wait(pause);
            pause = (pause * 2).min(MAX_POLL_INTERVAL);
        }
    }
}

impl Watch<'_> {
    /// The limit that ends the wait now, if any.
    fn limit_reached(&self) -> Option<StopReason> {
        if self.cancel.flag.load(Ordering::Relaxed) {
            return Some(StopReason::Cancelled);
        }
        // The deadline alone: a Ctrl-C that lands after the flag was read is seen on the
        // next round, not mistaken for a timeout.
        if self.cancel.deadline.is_some_and(|d| Instant::now() >= d) {
            return Some(StopReason::DeadlinePassed);
        }
        if let Some(limit) = self
            .timeout
            .filter(|&limit| self.started.elapsed() >= limit)
        {
            return Some(StopReason::TimedOut(limit));
        }
        self.overflow
            .filter(|capture| lock(capture).truncated)
            .map(|_| StopReason::OutputOverflow)
    }

    /// Waits for the pipe threads to finish, for at most `DRAIN_GRACE` after the
    /// program ended; past it, what was read is the output (the threads end by
    /// themselves when the last holder of the pipe closes it).
    fn drain(&self, threads: &[JoinHandle<()>]) -> Ending {
        let grace_ends = Instant::now() + DRAIN_GRACE;
        self.until(
            || Ok(threads.iter().all(JoinHandle::is_finished) || Instant::now() >= grace_ends),
            std::thread::sleep,
        )
    }
}

/// The process group a program runs in; its id is the program's process id.
struct ProcessGroup {
    id: u32,
    /// Becomes readable when the leader exits (Linux pidfd), so a wait ends at once.
    exit_fd: Option<OwnedFd>,
}

impl ProcessGroup {
    fn new(id: u32) -> ProcessGroup {
        ProcessGroup {
            id,
            exit_fd: open_pidfd(id),
        }
    }

    /// Waits up to `pause`, or less if the leader exits meanwhile.
    fn wait_for_exit(&self, pause: Duration) {
        let Some(fd) = &self.exit_fd else {
            return std::thread::sleep(pause);
        };
        let mut poll = libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let millis = libc::c_int::try_from(pause.as_millis()).unwrap_or(libc::c_int::MAX);
        // SAFETY: poll reads and writes only the one pollfd we own.
        if unsafe { libc::poll(&mut poll, 1, millis) } < 0 {
            std::thread::sleep(pause);
        }
    }

    /// True once the leader has exited. It is left unreaped (`WNOWAIT`), so its id cannot
    /// be reused by an unrelated process before [`ProcessGroup::kill`].
    fn leader_exited(&self) -> std::io::Result<bool> {
        // SAFETY: waitid only writes into the zeroed siginfo_t we own; WNOHANG makes it
        // return at once and WNOWAIT leaves the child for `Child::wait` to reap.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
            if libc::waitid(libc::P_PID, self.id as libc::id_t, &mut info, flags) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(info.si_pid() != 0)
        }
    }

    /// Kills every process left in the group (the program and all it spawned).
    fn kill(&self) {
        kill_group(self.id);
    }
}

/// Kills every process in the group `id` (a program `spawn` started, and all it spawned).
pub fn kill_group(id: u32) {
    let Ok(id) = libc::pid_t::try_from(id) else {
        return;
    };
    // SAFETY: killpg only sends a signal; a group that is already gone gives ESRCH.
    unsafe {
        libc::killpg(id, libc::SIGKILL);
    }
}

#[cfg(target_os = "linux")]
fn open_pidfd(id: u32) -> Option<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1; the
    // descriptor is ours alone, so OwnedFd may close it.
    unsafe {
        let fd = libc::syscall(libc::SYS_pidfd_open, id as libc::pid_t, 0);
        let fd = libc::c_int::try_from(fd).ok().filter(|&fd| fd >= 0)?;
        Some(OwnedFd::from_raw_fd(fd))
    }
}

/// Without pidfds, waits poll at intervals.
#[cfg(not(target_os = "linux"))]
fn open_pidfd(_id: u32) -> Option<OwnedFd> {
    None
}

#[cfg(test)]
mod tests;
