//! Which process a run belongs to, so a run whose process is gone (killed by SIGKILL,
//! or the machine restarted) is told from one still going: the run row keeps the host,
//! the boot, the pid and the process's start time, and the next tasklisp to open the log
//! marks the runs whose process no longer exists as `interrupted`.

use rusqlite::{params, Connection};

/// A process as the run row records it. A pid alone is reused; with the start time (in
/// clock ticks since boot) and the boot's id it names one process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    pub host: String,
    pub boot: String,
    pub pid: u32,
    pub start: u64,
}

impl Owner {
    /// This process, or `None` where `/proc` cannot tell (then the run is never marked).
    pub fn this_process() -> Option<Owner> {
        let pid = std::process::id();
        Some(Owner {
            host: proc_text("sys/kernel/hostname")?,
            boot: proc_text("sys/kernel/random/boot_id")?,
            pid,
            start: start_ticks(pid)?,
        })
    }

    /// Whether this process is certainly gone: on this host, the machine restarted since,
    /// or the pid is free or now another process's. A run of another host is never gone.
    fn is_gone(&self, here: &Owner) -> bool {
        if self.host != here.host {
            return false;
        }
        self.boot != here.boot || start_ticks(self.pid) != Some(self.start)
    }
}

fn proc_text(path: &str) -> Option<String> {
    let text = std::fs::read_to_string(format!("/proc/{path}")).ok()?;
    Some(text.trim().to_owned())
}

/// Field 22 of `/proc/PID/stat`, the start time. The command name (field 2) may hold
/// spaces and brackets, so fields are counted after its closing bracket.
fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, after_name) = stat.rsplit_once(')')?;
    after_name.split_whitespace().nth(19)?.parse().ok()
}

/// Marks `running` runs whose process is gone as `interrupted`; returns how many.
pub fn mark_interrupted(conn: &Connection) -> rusqlite::Result<usize> {
    let Some(here) = Owner::this_process() else {
        return Ok(0);
    };
    let mut statement = conn.prepare(
        "SELECT id, host, boot, pid, pid_start FROM runs
         WHERE status = 'running' AND pid IS NOT NULL AND host = ?1",
    )?;
    let gone: Vec<String> = statement
        .query_map(params![here.host], |row| {
            let owner = Owner {
                host: row.get(1)?,
                boot: row.get(2)?,
                pid: row.get(3)?,
                start: row.get::<_, i64>(4)?.try_into().unwrap_or(0),
            };
            Ok((row.get::<_, String>(0)?, owner))
        })?
        .filter_map(Result::ok)
        .filter(|(_, owner)| owner.is_gone(&here))
        .map(|(id, _)| id)
        .collect();
    for id in &gone {
        conn.execute(
            "UPDATE runs SET status = 'interrupted' WHERE id = ?1 AND status = 'running'",
            params![id],
        )?;
    }
    Ok(gone.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_not_gone_and_another_start_time_is() {
        let Some(here) = Owner::this_process() else {
            return;
        };
        assert!(!here.is_gone(&here));
        let reused = Owner {
            start: here.start + 1,
            ..here.clone()
        };
        assert!(reused.is_gone(&here));
        let rebooted = Owner {
            boot: "another boot".into(),
            ..here.clone()
        };
        assert!(rebooted.is_gone(&here));
        let elsewhere = Owner {
            host: "another host".into(),
            start: 0,
            ..here.clone()
        };
        assert!(!elsewhere.is_gone(&here));
    }
}
