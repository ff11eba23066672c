//! Output handling for `bash`: lossy UTF-8 decoding of each pipe, a bounded accumulator whose
//! snapshot equals pi's tail truncation of the whole output, the full-output log file, and the
//! truncation notices.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};

use tokio::io::AsyncWriteExt;

use crate::truncate::{TruncatedBy, TruncationOptions, TruncationResult, format_size, truncate_tail};

/// Decodes one pipe's bytes as UTF-8, replacing invalid sequences with U+FFFD and carrying a
/// character split across two reads over to the next one.
#[derive(Debug, Default)]
pub(crate) struct Utf8Decoder {
    pending: Vec<u8>,
}

impl Utf8Decoder {
    /// Decodes `bytes`, keeping an incomplete trailing sequence for the next call.
    pub(crate) fn decode(&mut self, bytes: &[u8]) -> String {
        let joined;
        let mut rest: &[u8] = if self.pending.is_empty() {
            bytes
        } else {
            let mut buffer = std::mem::take(&mut self.pending);
            buffer.extend_from_slice(bytes);
            joined = buffer;
            &joined
        };
        let mut out = String::with_capacity(rest.len());
        loop {
            match std::str::from_utf8(rest) {
                Ok(valid) => {
                    out.push_str(valid);
                    return out;
                }
                Err(error) => {
                    let (valid, after) = rest.split_at(error.valid_up_to());
                    // `valid_up_to` marks the end of a valid prefix, so this cannot fail.
                    out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                    match error.error_len() {
                        Some(bad) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            rest = &after[bad..];
                        }
                        None => {
                            self.pending = after.to_vec();
                            return out;
                        }
                    }
                }
            }
        }
    }

    /// Flushes an incomplete sequence left at the end of the stream.
    pub(crate) fn finish(&mut self) -> String {
        let rest = std::mem::take(&mut self.pending);
        String::from_utf8_lossy(&rest).into_owned()
    }
}

/// The command's merged output: everything while it is within the limits, then only a rolling
/// tail, from which [`OutputAccumulator::snapshot`] still yields exactly what
/// `truncate_tail(<whole output>)` would.
///
/// Once the output has passed the limits, the kept text is a suffix of the whole output that
/// either starts at a line start and holds more than `max_bytes` bytes (after one trailing newline
/// is ignored), or starts inside a line with more than `max_bytes` bytes of it. Either way tail
/// truncation stops inside the kept text and makes the same choices as on the whole output; only
/// the totals differ, and those are counted separately.
#[derive(Debug)]
pub(crate) struct OutputAccumulator {
    options: TruncationOptions,
    text: String,
    overflowed: bool,
    total_bytes: usize,
    newlines: usize,
    line_bytes: usize,
    previous_line_bytes: usize,
}

impl OutputAccumulator {
    /// An empty accumulator truncating with `options`.
    pub(crate) fn new(options: TruncationOptions) -> Self {
        OutputAccumulator {
            options,
            text: String::new(),
            overflowed: false,
            total_bytes: 0,
            newlines: 0,
            line_bytes: 0,
            previous_line_bytes: 0,
        }
    }

    /// Appends decoded output; returns true when this call first took it past the limits.
    pub(crate) fn push(&mut self, chunk: &str) -> bool {
        if chunk.is_empty() {
            return false;
        }
        self.total_bytes += chunk.len();
        let mut rest = chunk;
        while let Some(index) = rest.find('\n') {
            self.previous_line_bytes = self.line_bytes + index;
            self.line_bytes = 0;
            self.newlines += 1;
            rest = &rest[index + 1..];
        }
        self.line_bytes += rest.len();
        self.text.push_str(chunk);
        let first = !self.overflowed
            && (self.total_bytes > self.options.max_bytes || self.total_lines() > self.options.max_lines);
        self.overflowed |= first;
        if self.overflowed {
            self.trim();
        }
        first
    }

    /// Lines of the whole output, ignoring one trailing newline (pi's count).
    fn total_lines(&self) -> usize {
        let ends_with_newline = self.newlines > 0 && self.line_bytes == 0;
        self.newlines + 1 - usize::from(ends_with_newline)
    }

    /// Bytes of the whole output's last line (the one a partial-line notice names).
    pub(crate) fn last_line_bytes(&self) -> usize {
        if self.newlines > 0 && self.line_bytes == 0 {
            self.previous_line_bytes
        } else {
            self.line_bytes
        }
    }

    /// Drops the front of the kept text, keeping the invariant described on the type.
    fn trim(&mut self) {
        let keep = 2 * self.options.max_bytes + 8;
        if self.text.len() <= 2 * keep {
            return;
        }
        let mut cut = self.text.len() - keep;
        while !self.text.is_char_boundary(cut) {
            cut += 1;
        }
        let suffix = &self.text[cut..];
        let start = match suffix.find('\n') {
            Some(index) => {
                let after = &suffix[index + 1..];
                let counted = after.strip_suffix('\n').unwrap_or(after).len();
                // Start at the next line if what follows still overflows; otherwise the line
                // around the cut keeps more than `max_bytes` of itself.
                if counted > self.options.max_bytes {
                    cut + index + 1
                } else {
                    cut
                }
            }
            None => cut,
        };
        self.text.drain(..start);
    }

    /// The tail truncation of the whole output so far.
    pub(crate) fn snapshot(&self) -> TruncationResult {
        let mut result = truncate_tail(&self.text, self.options);
        if self.overflowed {
            result.total_lines = self.total_lines();
            result.total_bytes = self.total_bytes;
        }
        result
    }
}

/// Where the full output goes once it is truncated: raw bytes are held in memory until
/// [`FullOutputLog::open`] creates `<tmpdir>/pi-bash-<16 hex>.log`, then streamed to it.
#[derive(Debug, Default)]
pub(crate) struct FullOutputLog {
    buffer: Vec<u8>,
    file: Option<tokio::fs::File>,
    path: Option<PathBuf>,
    error: Option<String>,
}

impl FullOutputLog {
    /// Records raw output bytes.
    pub(crate) async fn write(&mut self, bytes: &[u8]) {
        if let Some(file) = &mut self.file {
            if let Err(error) = file.write_all(bytes).await {
                self.fail(error);
            }
        } else if self.error.is_none() {
            self.buffer.extend_from_slice(bytes);
        }
    }

    /// Creates the log file and writes what was recorded so far.
    pub(crate) async fn open(&mut self) {
        let buffer = std::mem::take(&mut self.buffer);
        match create_log_file(&std::env::temp_dir()).await {
            Ok((path, mut file)) => {
                self.path = Some(path);
                match file.write_all(&buffer).await {
                    Ok(()) => self.file = Some(file),
                    Err(error) => self.fail(error),
                }
            }
            Err(error) => self.fail(error),
        }
    }

    fn fail(&mut self, error: std::io::Error) {
        self.file = None;
        self.buffer = Vec::new();
        self.error = Some(error.to_string());
    }

    /// Flushes and closes the file; returns where the full output is, or why it is not.
    pub(crate) async fn finish(&mut self) -> Result<Option<PathBuf>, String> {
        if let Some(mut file) = self.file.take()
            && let Err(error) = file.flush().await
        {
            self.fail(error);
        }
        match &self.error {
            Some(error) => Err(error.clone()),
            None => Ok(self.path.clone()),
        }
    }

    /// The log's path once it exists.
    pub(crate) fn path(&self) -> Option<&Path> {
        if self.error.is_some() {
            None
        } else {
            self.path.as_deref()
        }
    }
}

/// 16 lowercase hex digits from the standard library's randomly keyed hasher.
fn random_hex() -> String {
    let mut hasher = RandomState::new().build_hasher();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_nanos())
        .unwrap_or_default();
    hasher.write_u128(nanos);
    hasher.write_u32(std::process::id());
    format!("{:016x}", hasher.finish())
}

/// Creates a fresh `pi-bash-<16 hex>.log` (owner-only, never an existing file) in `dir`.
async fn create_log_file(dir: &Path) -> std::io::Result<(PathBuf, tokio::fs::File)> {
    let mut attempts = 0;
    loop {
        let path = dir.join(format!("pi-bash-{}.log", random_hex()));
        let mut options = tokio::fs::OpenOptions::new();
        options.write(true).create_new(true).mode(0o600);
        match options.open(&path).await {
            Ok(file) => return Ok((path, file)),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists && attempts < 8 => attempts += 1,
            Err(error) => return Err(error),
        }
    }
}

/// The text the model sees: the kept output (or `empty` when there is none) plus pi's
/// truncation notice naming the full-output file.
pub(crate) fn format_output(
    truncation: &TruncationResult,
    last_line_bytes: usize,
    full_output: &Result<Option<PathBuf>, String>,
    empty: &str,
) -> String {
    let mut text = if truncation.content.is_empty() {
        empty.to_owned()
    } else {
        truncation.content.clone()
    };
    if !truncation.truncated {
        return text;
    }
    let location = match full_output {
        Ok(Some(path)) => path.display().to_string(),
        Ok(None) => "unavailable".to_owned(),
        Err(error) => format!("unavailable ({error})"),
    };
    let end = truncation.total_lines;
    let start = end + 1 - truncation.output_lines.min(end);
    if truncation.last_line_partial {
        text.push_str(&format!(
            "\n\n[Showing last {} of line {end} (line is {}). Full output: {location}]",
            format_size(truncation.output_bytes),
            format_size(last_line_bytes)
        ));
    } else if truncation.truncated_by == Some(TruncatedBy::Lines) {
        text.push_str(&format!(
            "\n\n[Showing lines {start}-{end} of {end}. Full output: {location}]"
        ));
    } else {
        text.push_str(&format!(
            "\n\n[Showing lines {start}-{end} of {end} ({} limit). Full output: {location}]",
            format_size(truncation.max_bytes)
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn opts(max_lines: usize, max_bytes: usize) -> TruncationOptions {
        TruncationOptions { max_lines, max_bytes }
    }

    #[test]
    fn decoder_joins_split_characters_and_replaces_bad_bytes() {
        let mut decoder = Utf8Decoder::default();
        let bytes = "é€".as_bytes();
        assert_eq!(decoder.decode(&bytes[..1]), "");
        assert_eq!(decoder.decode(&bytes[1..3]), "é");
        assert_eq!(decoder.decode(&bytes[3..]), "€");
        assert_eq!(decoder.decode(b"a\xff\xfeb"), "a\u{FFFD}\u{FFFD}b");
        assert_eq!(decoder.decode(b"\xe2\x82"), "");
        assert_eq!(decoder.finish(), "\u{FFFD}");
    }

    #[test]
    fn small_output_is_untouched() {
        let mut acc = OutputAccumulator::new(TruncationOptions::default());
        assert!(!acc.push("a\nb\n"));
        let snap = acc.snapshot();
        assert!(!snap.truncated);
        assert_eq!(snap.content, "a\nb\n");
    }

    #[test]
    fn long_output_keeps_bounded_memory_and_exact_totals() {
        let mut acc = OutputAccumulator::new(TruncationOptions::default());
        let mut full = String::new();
        for i in 1..=100_000 {
            let line = format!("{i}\n");
            acc.push(&line);
            full.push_str(&line);
        }
        assert!(acc.text.len() <= 4 * (2 * crate::truncate::DEFAULT_MAX_BYTES + 8));
        assert_eq!(acc.snapshot(), truncate_tail(&full, TruncationOptions::default()));
    }

    #[test]
    fn huge_last_line_reports_its_full_size() {
        let mut acc = OutputAccumulator::new(opts(10, 8));
        acc.push("head\n");
        for _ in 0..10 {
            acc.push("0123456789");
        }
        acc.push("\n");
        let snap = acc.snapshot();
        assert!(snap.last_line_partial);
        assert_eq!(snap.content, "23456789");
        assert_eq!(acc.last_line_bytes(), 100);
    }

    #[test]
    fn notices_match_pi() {
        let path: Result<Option<PathBuf>, String> = Ok(Some(PathBuf::from("/tmp/pi-bash-0.log")));
        let mut acc = OutputAccumulator::new(opts(2, 100));
        acc.push("1\n2\n3\n");
        let text = format_output(&acc.snapshot(), acc.last_line_bytes(), &path, "(no output)");
        assert_eq!(
            text,
            "2\n3\n\n[Showing lines 2-3 of 3. Full output: /tmp/pi-bash-0.log]"
        );

        let mut acc = OutputAccumulator::new(opts(100, 4));
        acc.push("aa\nbb\ncc");
        let text = format_output(&acc.snapshot(), acc.last_line_bytes(), &path, "(no output)");
        assert_eq!(
            text,
            "cc\n\n[Showing lines 3-3 of 3 (4B limit). Full output: /tmp/pi-bash-0.log]"
        );

        let mut acc = OutputAccumulator::new(opts(100, 4));
        acc.push("abcdefgh");
        let text = format_output(&acc.snapshot(), acc.last_line_bytes(), &path, "(no output)");
        assert_eq!(
            text,
            "efgh\n\n[Showing last 4B of line 1 (line is 8B). Full output: /tmp/pi-bash-0.log]"
        );

        let acc = OutputAccumulator::new(TruncationOptions::default());
        assert_eq!(format_output(&acc.snapshot(), 0, &path, "(no output)"), "(no output)");
        assert_eq!(format_output(&acc.snapshot(), 0, &path, ""), "");
    }

    proptest! {
        #[test]
        fn snapshot_equals_truncating_everything(
            chunks in proptest::collection::vec("[ab\n]{0,40}|[aé]{0,60}|\n{0,3}", 0..60),
            max_lines in 1usize..8,
            max_bytes in 1usize..24,
        ) {
            let options = opts(max_lines, max_bytes);
            let mut acc = OutputAccumulator::new(options);
            let mut full = String::new();
            for chunk in &chunks {
                acc.push(chunk);
                full.push_str(chunk);
                prop_assert_eq!(acc.snapshot(), truncate_tail(&full, options));
            }
            let last = full.strip_suffix('\n').unwrap_or(&full).rsplit('\n').next().unwrap_or("");
            prop_assert_eq!(acc.last_line_bytes(), last.len());
        }
    }
}
