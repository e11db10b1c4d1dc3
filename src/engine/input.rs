//! Reading the files a user names (scripts, keyspace JSON, sidecars, configuration, themes, PEM files)
//! with a size cap, from regular files only: `/dev/zero` or a FIFO given as a script must give an
//! error at once, not hang or fill memory.

use std::io::Read;
use std::path::{Path, PathBuf};

/// How much of one kind of file evalbench reads, and what to tell the user past it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub bytes: u64,
    /// What the file is, for messages ("a script").
    pub what: &'static str,
    /// What to do when the file is larger.
    pub advice: &'static str,
}

/// A Lua script (the workbench's editor, `evalbench run`). Real scripts are kilobytes.
pub const SCRIPT: Limit = Limit {
    bytes: 16 << 20,
    what: "a script",
    advice: "check that this is the Lua file you meant",
};

/// A seed keyspace (`--keyspace`, the workbench's `l`) or a sidecar holding one. Parsing holds the
/// whole document and the database it describes (several times the file's size).
pub const KEYSPACE_JSON: Limit = Limit {
    bytes: 64 << 20,
    what: "keyspace JSON",
    advice: "seed only the keys the script uses (evalbench copy KEY ... prints them)",
};

/// A race lab (`evalbench race FILE`): its logic, invariants and a seed keyspace.
pub const LAB: Limit = Limit {
    bytes: 16 << 20,
    what: "a race lab",
    advice:
        "a lab holds one logic and a small seed keyspace: check that this is the lab file you meant",
};

/// A file of a lesson folder (`--lessons DIR`): its task, a script or its checks.
pub const LESSON: Limit = Limit {
    bytes: 4 << 20,
    what: "a lesson file",
    advice: "a lesson holds a task, two short scripts and its checks: check the folder",
};

/// Small settings files: config.toml, themes, PEM certificates and keys.
pub const SETTINGS: Limit = Limit {
    bytes: 4 << 20,
    what: "a settings or certificate file",
    advice: "check the path",
};

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read {}: it is {kind}, not a regular file (evalbench reads {what} from a regular file only; give the path of one)", path.display(), what = limit.what)]
    NotRegular {
        path: PathBuf,
        kind: &'static str,
        limit: Limit,
    },
    #[error("cannot read {}: {size} is above the {} limit for {what}; {advice}", path.display(), mib(limit.bytes), size = size_text(*size, limit), what = limit.what, advice = limit.advice)]
    TooLarge {
        path: PathBuf,
        /// The size when known (a regular file's length), or None for "more than the limit".
        size: Option<u64>,
        limit: Limit,
    },
    #[error("cannot read {}: it is not UTF-8 text ({source})", path.display())]
    NotUtf8 {
        path: PathBuf,
        source: std::str::Utf8Error,
    },
}

fn mib(bytes: u64) -> String {
    if bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes}-byte")
    }
}

fn size_text(size: Option<u64>, limit: &Limit) -> String {
    match size {
        Some(n) => format!("its size ({n} bytes)"),
        None => format!("its size (more than {} bytes)", limit.bytes),
    }
}

pub(crate) fn kind_of(file_type: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_fifo() {
        "a FIFO (named pipe)"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else if file_type.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

/// The contents of the regular file `path` (symbolic links followed), at most `limit.bytes` bytes.
/// Never blocks on a FIFO or a device: the type is checked before opening, and the open itself is
/// non-blocking (a file swapped for a FIFO in between is caught by the check of the open file).
pub fn read_bounded(path: &Path, limit: &Limit) -> Result<Vec<u8>, InputError> {
    use std::os::unix::fs::OpenOptionsExt;
    let io = |source| InputError::Io {
        path: path.to_path_buf(),
        source,
    };
    let check = |meta: &std::fs::Metadata| -> Result<(), InputError> {
        if !meta.file_type().is_file() {
            return Err(InputError::NotRegular {
                path: path.to_path_buf(),
                kind: kind_of(meta.file_type()),
                limit: *limit,
            });
        }
        if meta.len() > limit.bytes {
            return Err(InputError::TooLarge {
                path: path.to_path_buf(),
                size: Some(meta.len()),
                limit: *limit,
            });
        }
        Ok(())
    };
    check(&std::fs::metadata(path).map_err(io)?)?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(io)?;
    check(&file.metadata().map_err(io)?)?;
    // A file can grow while it is read, and some (in /proc) report a length of 0.
    let mut bytes = Vec::new();
    file.take(limit.bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > limit.bytes {
        return Err(InputError::TooLarge {
            path: path.to_path_buf(),
            size: None,
            limit: *limit,
        });
    }
    Ok(bytes)
}

/// As `read_bounded`, for text: the contents must be UTF-8.
pub fn read_bounded_text(path: &Path, limit: &Limit) -> Result<String, InputError> {
    let bytes = read_bounded(path, limit)?;
    String::from_utf8(bytes).map_err(|e| InputError::NotUtf8 {
        path: path.to_path_buf(),
        source: e.utf8_error(),
    })
}

impl InputError {
    /// The file was not there (the workbench opens a new buffer under that name).
    pub fn is_not_found(&self) -> bool {
        matches!(self, InputError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    const TINY: Limit = Limit {
        bytes: 8,
        what: "a test file",
        advice: "make it smaller",
    };

    #[test]
    fn a_regular_file_within_the_limit_is_read_whole() {
        let dir = temp_dir();
        let path = dir.path().join("f.lua");
        std::fs::write(&path, "return 1").unwrap();
        assert_eq!(read_bounded(&path, &TINY).unwrap(), b"return 1");
    }

    #[test]
    fn a_larger_file_is_refused_with_its_size_and_the_limit() {
        let dir = temp_dir();
        let path = dir.path().join("f.lua");
        std::fs::write(&path, "return 12").unwrap();
        assert_eq!(
            read_bounded(&path, &TINY).unwrap_err().to_string(),
            format!(
                "cannot read {}: its size (9 bytes) is above the 8-byte limit for a test file; make it smaller",
                path.display()
            )
        );
        assert_eq!(
            read_bounded(Path::new("/proc/self/status"), &TINY)
                .unwrap_err()
                .to_string(),
            "cannot read /proc/self/status: its size (more than 8 bytes) is above the 8-byte limit for a test file; make it smaller"
        );
    }

    #[test]
    fn devices_fifos_and_directories_are_refused_without_blocking() {
        assert_eq!(
            read_bounded(Path::new("/dev/zero"), &SCRIPT).unwrap_err().to_string(),
            "cannot read /dev/zero: it is a character device, not a regular file (evalbench reads a script from a regular file only; give the path of one)"
        );
        let tmp = temp_dir();
        let dir = tmp.path();
        let fifo = dir.join("pipe.lua");
        let _ = std::fs::remove_file(&fifo);
        let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        // No writer: a blocking open would never return.
        let err = read_bounded(&fifo, &SCRIPT).unwrap_err();
        assert!(
            err.to_string().ends_with(": it is a FIFO (named pipe), not a regular file (evalbench reads a script from a regular file only; give the path of one)"),
            "{err}"
        );
        assert!(read_bounded(dir, &SCRIPT)
            .unwrap_err()
            .to_string()
            .contains("it is a directory, not a regular file"));
    }

    #[test]
    fn a_missing_file_says_so() {
        let err = read_bounded(Path::new("/nonexistent/x.lua"), &SCRIPT).unwrap_err();
        assert!(err.is_not_found());
        assert_eq!(
            err.to_string(),
            "cannot read /nonexistent/x.lua: No such file or directory (os error 2)"
        );
    }

    #[test]
    fn limits_are_stated_in_mib() {
        assert_eq!(mib(SCRIPT.bytes), "16 MiB");
        assert_eq!(mib(KEYSPACE_JSON.bytes), "64 MiB");
    }
}
