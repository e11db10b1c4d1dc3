//! Writing the files a user names (scripts, sidecars, seeds, test files, exports, JUnit reports)
//! and evalbench's own files, atomically: the bytes go to a temporary file created with O_EXCL
//! under an unpredictable name in the target's directory, which is then renamed over the target.
//! A crash never leaves half a file, and a link planted where the temporary would go is never
//! followed (the name cannot be guessed, and O_EXCL refuses an existing one).
//!
//! A target that is a symbolic link is written through: the link's final target gets the new
//! bytes and the link stays a link. An existing target keeps its mode and, where the process may,
//! its owner. Only regular files are written: a FIFO, a device or a directory is refused before
//! anything is opened (opening a FIFO for writing blocks until a reader comes).

use std::io::Write;
use std::path::{Path, PathBuf};

/// How many links a target may go through before it is refused (as the kernel's ELOOP).
const MAX_LINKS: usize = 40;

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("cannot write {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {}: it is {kind}, not a regular file (evalbench writes regular files only; give the path of one)", path.display())]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error("cannot write {}: it exists (choose another name)", path.display())]
    Exists { path: PathBuf },
    #[error("cannot write {}: more than {MAX_LINKS} symbolic links to follow", path.display())]
    TooManyLinks { path: PathBuf },
}

/// What to do about the target's mode and an existing target.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Give the file this mode whatever it had (evalbench's own files: 0600). None: an existing
    /// file keeps its mode, a new one gets 0666 less the umask.
    pub mode: Option<u32>,
    /// Refuse an existing target (checked and created in one step: the rename never replaces).
    pub create_new: bool,
}

/// Write `bytes` to `path` atomically (see the module's text), keeping an existing file's mode.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    write_with(path, Options::default(), |w| w.write_all(bytes))
}

/// The file a write to `path` changes: the final target of its symbolic links (which may not
/// exist yet).
pub fn resolve(path: &Path) -> Result<PathBuf, OutputError> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(&current).map_err(|source| OutputError::Io {
                    path: path.to_path_buf(),
                    source,
                })?;
                current = match current.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(OutputError::TooManyLinks {
        path: path.to_path_buf(),
    })
}

/// Check that `path` (links followed) is a regular file or does not exist yet, without opening
/// it; returns its metadata when it exists.
pub fn check_writable(path: &Path) -> Result<Option<std::fs::Metadata>, OutputError> {
    // The kernel's view first: a link `resolve` cannot follow by its text (`/dev/stdout` ->
    // `/proc/self/fd/1` -> `pipe:[N]`) still names a pipe or a terminal.
    if let Ok(meta) = std::fs::metadata(path) {
        if !meta.file_type().is_file() {
            return Err(OutputError::NotRegular {
                path: path.to_path_buf(),
                kind: crate::engine::input::kind_of(meta.file_type()),
            });
        }
    }
    let real = resolve(path)?;
    match std::fs::metadata(&real) {
        Ok(meta) if meta.file_type().is_file() => Ok(Some(meta)),
        Ok(meta) => Err(OutputError::NotRegular {
            path: path.to_path_buf(),
            kind: crate::engine::input::kind_of(meta.file_type()),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(OutputError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Write `path` atomically with what `fill` writes (buffered), so a large output streams to the
/// disk rather than being built in memory first. On any error the temporary file is removed and
/// the target is unchanged.
pub fn write_with(
    path: &Path,
    options: Options,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), OutputError> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let io = |source| OutputError::Io {
        path: path.to_path_buf(),
        source,
    };
    let existing = check_writable(path)?;
    if options.create_new && (existing.is_some() || std::fs::symlink_metadata(path).is_ok()) {
        return Err(OutputError::Exists {
            path: path.to_path_buf(),
        });
    }
    let real = resolve(path)?;
    let name = real.file_name().ok_or_else(|| {
        io(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a file name",
        ))
    })?;
    let dir = match real.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(name);
    prefix.push(".");
    // Created owner-only: the text is never readable by others, not even before the chmod.
    let mut tmp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(
            match (options.mode, &existing) {
                (Some(_), _) | (None, Some(_)) => 0o600,
                (None, None) => 0o666,
            },
        ))
        .tempfile_in(&dir)
        .map_err(io)?;
    {
        let mut w = std::io::BufWriter::new(tmp.as_file_mut());
        fill(&mut w).map_err(io)?;
        w.flush().map_err(io)?;
    }
    let file = tmp.as_file();
    if let Some(meta) = &existing {
        // The owner first: chown clears set-user-ID bits, which the chmod then restores. Only
        // root may give a file away; anyone else keeps the file as theirs (the group may fail too).
        if meta.uid() != unsafe { libc::geteuid() } || meta.gid() != unsafe { libc::getegid() } {
            let _ = std::os::unix::fs::fchown(file, Some(meta.uid()), Some(meta.gid()));
        }
    }
    let mode = match (options.mode, &existing) {
        (Some(mode), _) => Some(mode),
        (None, Some(meta)) => Some(meta.mode() & 0o7777),
        (None, None) => None,
    };
    if let Some(mode) = mode {
        file.set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(io)?;
    }
    file.sync_all().map_err(io)?;
    if options.create_new {
        tmp.persist_noclobber(&real).map_err(|e| {
            if e.error.kind() == std::io::ErrorKind::AlreadyExists {
                OutputError::Exists {
                    path: path.to_path_buf(),
                }
            } else {
                io(e.error)
            }
        })?;
    } else {
        tmp.persist(&real).map_err(|e| io(e.error))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn dir() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_new_file_is_written_and_no_temporary_is_left() {
        let d = dir();
        let path = d.path().join("a.lua");
        write_file(&path, b"return 1").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"return 1");
        assert_eq!(names(d.path()), ["a.lua"]);
    }

    #[test]
    fn a_symlinked_target_is_written_through_and_stays_a_link() {
        let d = dir();
        let real = d.path().join("real.toml");
        std::fs::write(&real, "old").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = d.path().join("link.toml");
        std::os::unix::fs::symlink("real.toml", &link).unwrap();
        write_file(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("real.toml"));
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        assert_eq!(mode(&real), 0o600);
        assert_eq!(names(d.path()), ["link.toml", "real.toml"]);
    }

    #[test]
    fn an_existing_mode_is_kept_not_widened_or_narrowed() {
        let d = dir();
        for m in [0o600, 0o640, 0o755] {
            let path = d.path().join(format!("f{m:o}"));
            std::fs::write(&path, "x").unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(m)).unwrap();
            write_file(&path, b"y").unwrap();
            assert_eq!(mode(&path), m);
            assert_eq!(std::fs::read(&path).unwrap(), b"y");
        }
        let private = d.path().join("own");
        std::fs::write(&private, "x").unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o644)).unwrap();
        let options = Options {
            mode: Some(0o600),
            create_new: false,
        };
        write_with(&private, options, |w| w.write_all(b"z")).unwrap();
        assert_eq!(mode(&private), 0o600);
    }

    #[test]
    fn the_old_predictable_temporary_names_are_not_followed() {
        let d = dir();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let target = d.path().join("x.test.toml");
        std::fs::write(&target, "old").unwrap();
        for planted in [
            format!(".x.test.toml.{}.tmp", std::process::id()),
            "x.test.toml.evalbench-tmp".to_string(),
        ] {
            std::os::unix::fs::symlink(&victim, d.path().join(planted)).unwrap();
        }
        write_file(&target, b"new").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
    }

    #[test]
    fn a_link_to_a_pipe_only_the_kernel_can_follow_is_refused() {
        // As `--export /dev/stdout` with the output piped: /proc/self/fd/N reads as `pipe:[ino]`.
        let (reader, writer) = std::io::pipe().unwrap();
        let d = dir();
        let link = d.path().join("out.md");
        let fd = std::os::fd::AsRawFd::as_raw_fd(&writer);
        std::os::unix::fs::symlink(format!("/proc/self/fd/{fd}"), &link).unwrap();
        let err = write_file(&link, b"x").unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "cannot write {}: it is a FIFO (named pipe), not a regular file (evalbench writes regular files only; give the path of one)",
                link.display()
            )
        );
        assert_eq!(names(d.path()), ["out.md"]);
        drop((reader, writer));
    }

    #[test]
    fn a_fifo_is_refused_without_opening_it() {
        let d = dir();
        let fifo = d.path().join("pipe");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = write_file(&fifo, b"x").unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "cannot write {}: it is a FIFO (named pipe), not a regular file (evalbench writes regular files only; give the path of one)",
                fifo.display()
            )
        );
        let link = d.path().join("to-pipe");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        assert!(matches!(
            write_file(&link, b"x"),
            Err(OutputError::NotRegular { .. })
        ));
        assert!(matches!(
            write_file(d.path(), b"x"),
            Err(OutputError::NotRegular {
                kind: "a directory",
                ..
            })
        ));
    }

    #[test]
    fn create_new_refuses_an_existing_file_or_link_and_keeps_it() {
        let d = dir();
        let path = d.path().join("run.md");
        std::fs::write(&path, "mine").unwrap();
        let options = Options {
            mode: None,
            create_new: true,
        };
        let err = write_with(&path, options, |w| w.write_all(b"x")).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "cannot write {}: it exists (choose another name)",
                path.display()
            )
        );
        let dangling = d.path().join("dangling.md");
        std::os::unix::fs::symlink(d.path().join("nowhere"), &dangling).unwrap();
        assert!(matches!(
            write_with(&dangling, options, |w| w.write_all(b"x")),
            Err(OutputError::Exists { .. })
        ));
        assert!(!d.path().join("nowhere").exists());
        assert_eq!(std::fs::read(&path).unwrap(), b"mine");
        let fresh = d.path().join("new.md");
        write_with(&fresh, options, |w| w.write_all(b"x")).unwrap();
        assert_eq!(std::fs::read(&fresh).unwrap(), b"x");
    }

    #[test]
    fn a_failed_fill_leaves_the_target_and_no_temporary() {
        let d = dir();
        let path = d.path().join("a");
        std::fs::write(&path, "old").unwrap();
        let err = write_with(&path, Options::default(), |w| {
            w.write_all(b"partial")?;
            Err(std::io::Error::other("the render stopped"))
        })
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("cannot write {}: the render stopped", path.display())
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(names(d.path()), ["a"]);
    }

    #[test]
    fn a_new_file_gets_the_umask_mode() {
        let d = dir();
        let path = d.path().join("n");
        write_file(&path, b"x").unwrap();
        // Read, not set: setting the mask would race with other tests creating files.
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let mask = status
            .lines()
            .find_map(|l| l.strip_prefix("Umask:"))
            .map(|m| u32::from_str_radix(m.trim(), 8).unwrap())
            .unwrap();
        assert_eq!(mode(&path), 0o666 & !mask);
    }
}
