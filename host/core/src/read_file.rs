//! Reading a file that hostile input may name: only a regular file, only
//! up to a size, looked at before any byte is read (a FIFO or a device is
//! opened without blocking and refused unread).

use std::io::Read as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadRefused {
    /// It could not be opened or read.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// It is a directory, a device, a FIFO or a socket.
    #[error("not a regular file")]
    NotRegular,
    /// It is larger than the limit (or grew past it while read).
    #[error("{len} bytes, more than the limit of {max}")]
    TooLarge {
        /// Its size, as far as it was read.
        len: u64,
        /// The limit.
        max: u64,
    },
}

/// The bytes of the regular file at `path`, at most `max` of them.
///
/// # Errors
/// A [`ReadRefused`] saying why nothing was read.
pub fn read_regular_file(path: &Path, max: u64) -> Result<Vec<u8>, ReadRefused> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(ReadRefused::NotRegular);
    }
    if meta.len() > max {
        return Err(ReadRefused::TooLarge {
            len: meta.len(),
            max,
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(ReadRefused::TooLarge {
            len: bytes.len() as u64,
            max,
        });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_or_an_oversized_file_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        assert!(matches!(
            read_regular_file(&fifo, 10),
            Err(ReadRefused::NotRegular)
        ));
        let big = dir.path().join("big");
        std::fs::write(&big, "x".repeat(11)).unwrap();
        assert!(matches!(
            read_regular_file(&big, 10),
            Err(ReadRefused::TooLarge { len: 11, max: 10 })
        ));
        assert_eq!(read_regular_file(&big, 11).unwrap().len(), 11);
    }
}
