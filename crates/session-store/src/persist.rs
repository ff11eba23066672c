//! The append-only writer of a session file.
//!
//! Each call writes what is not on disk yet with one `write` on a file opened for appending: the
//! header and every entry so far the first time, one entry line after that. The file is never
//! rewritten. When a write fails (a full disk), the file is truncated back to its length before
//! the write, so it holds exactly what it held; if even that fails, the next write starts with a
//! newline so that the torn bytes stay a line of their own, which the loader skips.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::entry::{SessionEntry, SessionHeader};
use super::error::StoreError;
use super::file::push_json_line;

/// Appends a session's lines to its file.
#[derive(Debug)]
pub(crate) struct Writer {
    path: PathBuf,
    file: Option<File>,
    /// The header is on disk.
    header_written: bool,
    /// How many entries are on disk.
    persisted: usize,
    /// The file does not end with a newline.
    needs_newline: bool,
    /// This writer created the file (and may delete it again if the first write fails).
    created: bool,
    /// Test hook: the next write stops after this many bytes and fails.
    #[cfg(test)]
    pub(crate) fail_next_write_after: Option<usize>,
}

impl Writer {
    /// A writer for a file that does not exist yet.
    pub(crate) fn new_file(path: PathBuf) -> Self {
        Writer {
            path,
            file: None,
            header_written: false,
            persisted: 0,
            needs_newline: false,
            created: false,
            #[cfg(test)]
            fail_next_write_after: None,
        }
    }

    /// A writer for a file that holds a header and `persisted` entries.
    pub(crate) fn existing(path: PathBuf, persisted: usize, ends_with_newline: bool) -> Self {
        Writer {
            header_written: true,
            persisted,
            needs_newline: !ends_with_newline,
            ..Writer::new_file(path)
        }
    }

    /// The session file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the header is on disk.
    pub(crate) fn is_written(&self) -> bool {
        self.header_written
    }

    /// Writes the header (if it is not on disk yet) and the entries after the `persisted` first.
    pub(crate) fn write_pending(&mut self, header: &SessionHeader, entries: &[SessionEntry]) -> Result<(), StoreError> {
        let start = self.persisted.min(entries.len());
        if self.header_written && start == entries.len() {
            return Ok(());
        }
        let path = self.path.clone();
        let error = |source| StoreError::Write {
            path: path.clone(),
            source,
        };
        let mut buf = Vec::with_capacity(512 * (entries.len() - start + 1));
        if self.needs_newline {
            buf.push(b'\n');
        }
        if !self.header_written {
            push_json_line(&mut buf, header).map_err(error)?;
        }
        for entry in &entries[start..] {
            push_json_line(&mut buf, entry).map_err(error)?;
        }
        let mut file = match self.file.take() {
            Some(file) => file,
            None => self.open().map_err(error)?,
        };
        let before = file.metadata().map(|m| m.len()).map_err(error)?;
        match self.write_bytes(&mut file, &buf).and_then(|()| file.flush()) {
            Ok(()) => {
                self.file = Some(file);
                self.header_written = true;
                self.persisted = entries.len();
                self.needs_newline = false;
                Ok(())
            }
            Err(source) => {
                self.undo(file, before);
                Err(error(source))
            }
        }
    }

    fn open(&mut self) -> std::io::Result<File> {
        if self.header_written {
            return OpenOptions::new().append(true).open(&self.path);
        }
        if let Some(parent) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        match OpenOptions::new().append(true).create_new(true).open(&self.path) {
            Ok(file) => {
                self.created = true;
                Ok(file)
            }
            // An existing empty file (or a device) may be written; a file with content is another
            // session's and is never appended to.
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                let file = OpenOptions::new().append(true).open(&self.path)?;
                if file.metadata()?.len() > 0 {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::AlreadyExists,
                        "the file already exists and is not empty",
                    ));
                }
                Ok(file)
            }
            Err(error) => Err(error),
        }
    }

    fn write_bytes(&mut self, file: &mut File, buf: &[u8]) -> std::io::Result<()> {
        #[cfg(test)]
        if let Some(limit) = self.fail_next_write_after.take() {
            file.write_all(&buf[..limit.min(buf.len())])?;
            return Err(std::io::Error::new(
                std::io::ErrorKind::StorageFull,
                "No space left on device (injected)",
            ));
        }
        file.write_all(buf)
    }

    /// Puts the file back the way it was before a failed write.
    fn undo(&mut self, file: File, before: u64) {
        if file.set_len(before).is_err() {
            self.needs_newline = true;
        }
        if !self.header_written && self.created && before == 0 {
            drop(file);
            if std::fs::remove_file(&self.path).is_ok() {
                self.created = false;
                self.needs_newline = false;
                return;
            }
            self.file = None;
            return;
        }
        self.file = Some(file);
    }
}
