//! The stdio transport: the server is a program tasklisp starts (in a process group of
//! its own, killed with the interpreter), messages are lines on its stdin and stdout,
//! and what it prints on stderr is kept (its end) to explain an exit.
//!
//! Its stdin is written without blocking: a server that stops reading holds a write up
//! only until the request's deadline or Ctrl-C, and a message written in part leaves the
//! connection closed (the server could not read what follows).

use super::transport::{forward_lines, Inbox, Transport, Until, POLL};
use crate::process::{kill_group, spawn, ProcessSpec};
use crate::provider::http::excerpt;
use serde_json::Value as Json;
use std::io::{BufReader, ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::process::{Child, ChildStdin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How much of the end of the server's stderr is kept.
const STDERR_TAIL: usize = 4096;

/// How long a server whose output ended may take to exit before it is called gone
/// without an exit status.
const EXIT_GRACE: Duration = Duration::from_millis(500);

/// How long `close` waits for a server to exit on its own once its input is closed.
const CLOSE_GRACE: Duration = Duration::from_millis(200);

pub struct Stdio {
    stdin: Mutex<Option<ChildStdin>>,
    group: u32,
    /// Set once the server has exited and been reaped: its group id may be reused.
    exited: Arc<AtomicBool>,
}

type Tail = Arc<Mutex<Vec<u8>>>;

impl Stdio {
    /// Starts the server; its messages arrive in the inbox.
    pub fn start(spec: &ProcessSpec) -> std::io::Result<(Stdio, Arc<Inbox>)> {
        let mut child = spawn(spec)?;
        let (stdin, stdout, stderr) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take());
        if let Some(stdin) = &stdin {
            set_nonblocking(stdin)?;
        }
        let inbox = Arc::new(Inbox::default());
        let sender = inbox.clone();
        let tail: Tail = Arc::default();
        let exited = Arc::new(AtomicBool::new(false));
        if let Some(stderr) = stderr {
            let tail = tail.clone();
            spawn_thread("tasklisp-mcp-stderr", move || keep_tail(stderr, &tail))?;
        }
        let group = child.id();
        let reaped = exited.clone();
        spawn_thread("tasklisp-mcp-read", move || {
            if let Some(stdout) = stdout {
                forward_lines(&mut BufReader::new(stdout), &sender);
            }
            let why = ended(&mut child, &tail);
            reaped.store(true, Ordering::SeqCst);
            sender.close(why);
        })?;
        let stdio = Stdio {
            stdin: Mutex::new(stdin),
            group,
            exited,
        };
        Ok((stdio, inbox))
    }
}

impl Transport for Stdio {
    fn send(&self, message: &Json, until: &Until) -> Result<(), String> {
        let mut stdin = self.stdin.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(pipe) = stdin.as_mut() else {
            return Err("the connection is closed".into());
        };
        let mut line = message.to_string();
        line.push('\n');
        let written = write_within(pipe, line.as_bytes(), until);
        if written.is_err() {
            // Part of the message may be written: nothing after it would read right.
            stdin.take();
        }
        written
            .map_err(|why| format!("cannot write to the server ({why}); the connection is closed"))
    }

    /// Closes the server's input (a server ends when it ends), then kills what is left.
    fn close(&self) {
        drop(
            self.stdin
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
        let start = Instant::now();
        while !self.exited.load(Ordering::SeqCst) && start.elapsed() < CLOSE_GRACE {
            std::thread::sleep(Duration::from_millis(5));
        }
        if !self.exited.load(Ordering::SeqCst) {
            kill_group(self.group);
        }
    }
}

impl Drop for Stdio {
    fn drop(&mut self) {
        self.close();
    }
}

/// The server's stdin made non-blocking, so a write waits only as `send` allows.
fn set_nonblocking(pipe: &ChildStdin) -> std::io::Result<()> {
    let fd = pipe.as_raw_fd();
    // SAFETY: fcntl on a descriptor this process owns (the pipe stays open meanwhile).
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above, setting flags read from the same descriptor.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Writes all of `bytes` to the non-blocking `pipe`, waiting for room while `until`
/// allows; why it stopped otherwise.
fn write_within(pipe: &mut ChildStdin, mut bytes: &[u8], until: &Until) -> Result<(), String> {
    while !bytes.is_empty() {
        match pipe.write(bytes) {
            Ok(0) => return Err("the server closed its input".into()),
            Ok(written) => bytes = bytes.get(written..).unwrap_or_default(),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                if let Some(why) = until.expired() {
                    return Err(why);
                }
                wait_for_room(pipe, until.left().min(POLL));
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(())
}

/// Waits until `pipe` can take more bytes (or closes), at most `wait`.
fn wait_for_room(pipe: &ChildStdin, wait: Duration) {
    let mut ready = libc::pollfd {
        fd: pipe.as_raw_fd(),
        events: libc::POLLOUT,
        revents: 0,
    };
    let millis = wait.as_millis().clamp(1, 1000) as libc::c_int;
    // SAFETY: one valid pollfd for a descriptor this process owns; poll only reads the
    // descriptor and writes `revents`.
    unsafe { libc::poll(&mut ready, 1, millis) };
}

fn spawn_thread(name: &str, work: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(work)
        .map(drop)
}

/// Reads the server's stderr to its end, keeping its last `STDERR_TAIL` bytes.
fn keep_tail(mut stderr: impl Read, tail: &Tail) {
    let mut chunk = [0u8; 4096];
    while let Ok(n @ 1..) = stderr.read(&mut chunk) {
        let mut kept = tail.lock().unwrap_or_else(PoisonError::into_inner);
        kept.extend_from_slice(chunk.get(..n).unwrap_or_default());
        let extra = kept.len().saturating_sub(STDERR_TAIL);
        kept.drain(..extra);
    }
}

/// Why the server's output ended: its exit status (waited for a moment) and the end of
/// its stderr. A server that does not exit is killed with its group (before it is
/// reaped, while the group's id is still its own).
fn ended(child: &mut Child, tail: &Tail) -> String {
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() < EXIT_GRACE => {
                std::thread::sleep(Duration::from_millis(5))
            }
            _ => break None,
        }
    };
    let status = match status {
        Some(status) => format!("exited ({status})"),
        None => {
            kill_group(child.id());
            let _ = child.wait();
            "closed its output".to_owned()
        }
    };
    // The stderr thread may still be copying the last bytes.
    std::thread::sleep(Duration::from_millis(20));
    let kept = tail.lock().unwrap_or_else(PoisonError::into_inner);
    let stderr = String::from_utf8_lossy(&kept);
    match stderr.trim() {
        "" => status,
        text => format!("{status}; its stderr ends: {}", excerpt(text, 1000)),
    }
}
