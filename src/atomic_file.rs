//! Files written whole: the bytes go to a temporary file beside the target, which is then
//! renamed over it. A crash or a full disk leaves the old file as it was (or no file),
//! never a half-written or emptied one; readers see the old text or the new.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Replaces the file at `path` with `bytes`. A symbolic link is followed: its target is
/// replaced, and the link stays. An existing file keeps its permissions. What is not a
/// file (`/dev/null`, a terminal, a named pipe) is written to as it is: renaming over it
/// would put a file in its place.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let target = followed(path)?;
    if std::fs::metadata(&target).is_ok_and(|meta| !meta.is_file() && !meta.is_dir()) {
        return OpenOptions::new()
            .write(true)
            .open(&target)?
            .write_all(bytes);
    }
    let (temporary, mut file) = create_beside(&target)?;
    let written = fill(&mut file, &target, bytes).and_then(|()| {
        drop(file);
        std::fs::rename(&temporary, &target)
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// The file a write to `path` replaces: the target of a symbolic link, else `path`.
fn followed(path: &Path) -> io::Result<PathBuf> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => match std::fs::canonicalize(path) {
            Ok(target) => Ok(target),
            // A link to nothing yet: the file is created where it points.
            Err(_) => {
                let link = std::fs::read_link(path)?;
                Ok(path.parent().map_or(link.clone(), |dir| dir.join(&link)))
            }
        },
        _ => Ok(path.to_owned()),
    }
}

/// A new file in the directory of `target`, named after it so a leftover is recognisable.
fn create_beside(target: &Path) -> io::Result<(PathBuf, File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = target
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let temporary = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)
        {
            Ok(file) => return Ok((temporary, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Writes the bytes, gives the file the permissions of the one it replaces, and waits
/// until the bytes are on disk, so the rename never publishes a file still empty there.
fn fill(file: &mut File, target: &Path, bytes: &[u8]) -> io::Result<()> {
    file.write_all(bytes)?;
    if let Ok(meta) = std::fs::metadata(target) {
        file.set_permissions(meta.permissions())?;
    }
    file.sync_data()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("a directory")
            .map(|e| {
                e.expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        names.sort();
        names
    }

    #[test]
    fn replaces_the_file_and_leaves_nothing_beside_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("out.txt");
        write(&path, b"first").expect("write");
        write(&path, b"second").expect("write");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "second");
        assert_eq!(entries(dir.path()), ["out.txt"]);
    }

    #[test]
    fn a_failed_write_leaves_nothing() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("missing-dir/out.txt");
        assert!(write(&path, b"x").is_err());
        assert!(entries(dir.path()).is_empty());
    }

    #[test]
    fn a_named_pipe_is_written_to_not_replaced() {
        use std::io::Read;
        use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
        let dir = tempfile::tempdir().expect("temp dir");
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo runs");
        assert!(made.success());
        // A reader that does not wait for a writer, so the write can open the pipe.
        let mut reader = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
            .expect("open the pipe");
        write(&fifo, b"through").expect("write");
        let mut got = String::new();
        reader.read_to_string(&mut got).expect("read");
        assert_eq!(got, "through");
        let kind = std::fs::symlink_metadata(&fifo).expect("stat").file_type();
        assert!(kind.is_fifo(), "the pipe was replaced by {kind:?}");
        assert_eq!(entries(dir.path()), ["pipe"]);
    }

    #[test]
    fn keeps_permissions_and_follows_links() {
        let dir = tempfile::tempdir().expect("temp dir");
        let real = dir.path().join("real.sh");
        std::fs::write(&real, "old").expect("write");
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o750)).expect("chmod");
        let link = dir.path().join("link.sh");
        std::os::unix::fs::symlink(&real, &link).expect("symlink");
        write(&link, b"new").expect("write");
        assert!(std::fs::symlink_metadata(&link)
            .expect("stat")
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&real).expect("read"), "new");
        let mode = std::fs::metadata(&real).expect("stat").permissions().mode();
        assert_eq!(mode & 0o777, 0o750);
    }
}
