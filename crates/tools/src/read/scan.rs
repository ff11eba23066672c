//! One streaming pass over a text file for `read`, holding no more of it than the output.
//!
//! The result equals what pi computes in memory — decode the whole file as UTF-8 (invalid bytes
//! become U+FFFD the way Node does it), split on `\n`, take the window `[start, start + limit)`,
//! join it with `\n` and [`truncate_head`](crate::truncate::truncate_head) it — but the file is
//! read in fixed-size chunks: lines before the window are only scanned for `\n`, lines of the
//! window are decoded and kept while they fit the limits (the rest of the window is only
//! measured), and lines after the window are only counted. Memory stays at one chunk plus the
//! kept text, whatever the file or line size.

use std::io::{self, Read};

use crate::truncate::{TruncatedBy, TruncationOptions, TruncationResult};

/// Bytes read from the file at a time.
pub(crate) const CHUNK_BYTES: usize = 256 * 1024;

const REPLACEMENT: &str = "\u{FFFD}";

/// Which lines the caller wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window {
    /// First line, 0-based.
    pub(crate) start: usize,
    /// Maximum number of lines (the user's `limit`), if any.
    pub(crate) limit: Option<usize>,
}

/// What the pass found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scan {
    /// Lines in the file: `\n` count + 1 (a trailing newline adds an empty last line).
    pub(crate) total_lines: usize,
    /// Lines in the window; 0 when the window starts past the end.
    pub(crate) selected_lines: usize,
    /// Decoded UTF-8 size of the window's first line.
    pub(crate) first_line_bytes: usize,
    /// pi's truncation record of the window's text.
    pub(crate) truncation: TruncationResult,
}

/// Why the pass stopped early.
#[derive(Debug)]
pub(crate) enum ScanError {
    /// Reading failed.
    Io(io::Error),
    /// The call was cancelled.
    Cancelled,
}

/// Scans `reader` for `window`; `cancelled` is polled once per chunk.
pub(crate) fn scan(
    reader: impl Read,
    window: Window,
    options: TruncationOptions,
    cancelled: impl Fn() -> bool,
) -> Result<Scan, ScanError> {
    scan_in_chunks(reader, window, options, cancelled, CHUNK_BYTES)
}

fn scan_in_chunks(
    mut reader: impl Read,
    window: Window,
    options: TruncationOptions,
    cancelled: impl Fn() -> bool,
    chunk_bytes: usize,
) -> Result<Scan, ScanError> {
    let end = window
        .limit
        .map_or(usize::MAX, |limit| window.start.saturating_add(limit));
    let mut selection = Selection::new(options);
    let mut decoder = LossyDecoder::default();
    let mut buffer = vec![0u8; chunk_bytes.max(1)];
    // Index of the line the next byte belongs to, and whether it has been opened in `selection`.
    let mut line = 0usize;
    let mut open = false;
    loop {
        if cancelled() {
            return Err(ScanError::Cancelled);
        }
        let read = match reader.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(ScanError::Io(error)),
        };
        let mut rest = &buffer[..read];
        // Whether the rest of this chunk may still be handled in one go (tried once per chunk).
        let mut whole = true;
        while !rest.is_empty() {
            if line >= end {
                line += count_newlines(rest);
                break;
            }
            if whole && (line < window.start || selection.measuring_only()) {
                whole = false;
                let last = line + count_newlines(rest);
                if last < window.start {
                    // Entirely before the window.
                    line = last;
                    break;
                }
                if line >= window.start && last < end {
                    // Entirely inside the window, past what is kept: only sizes matter.
                    if !open {
                        selection.begin_line();
                        open = true;
                    }
                    match rest.iter().rposition(|&byte| byte == b'\n') {
                        Some(at) => {
                            let mut finished = 0;
                            decoder.feed(&rest[..=at], &mut |piece| finished += piece.len());
                            selection.measure_lines(last - line, finished);
                            decoder.feed(&rest[at + 1..], &mut |piece| selection.push(piece));
                        }
                        None => decoder.feed(rest, &mut |piece| selection.push(piece)),
                    }
                    line = last;
                    break;
                }
            }
            let newline = rest.iter().position(|&byte| byte == b'\n');
            let segment = newline.map_or(rest, |at| &rest[..at]);
            let selected = line >= window.start;
            if selected {
                if !open {
                    selection.begin_line();
                    open = true;
                }
                decoder.feed(segment, &mut |piece| selection.push(piece));
            }
            match newline {
                Some(at) => {
                    if selected {
                        decoder.finish(&mut |piece| selection.push(piece));
                        selection.end_line();
                        open = false;
                    }
                    line += 1;
                    rest = &rest[at + 1..];
                }
                None => rest = &[],
            }
        }
    }
    // The last line: whatever followed the final `\n` (possibly nothing).
    if line >= window.start && line < end {
        if !open {
            selection.begin_line();
        }
        decoder.finish(&mut |piece| selection.push(piece));
        selection.end_line();
    }
    Ok(Scan {
        total_lines: line + 1,
        selected_lines: selection.count,
        first_line_bytes: selection.first_line_bytes,
        truncation: selection.finish(),
    })
}

/// Number of `\n` bytes. Counting into a `u8` per 255-byte block lets the compiler vectorise the
/// loop (about 8x faster than `filter().count()`).
fn count_newlines(bytes: &[u8]) -> usize {
    bytes
        .chunks(255)
        .map(|block| {
            let count = block
                .iter()
                .fold(0u8, |n, &byte| n.wrapping_add(u8::from(byte == b'\n')));
            usize::from(count)
        })
        .sum()
}

/// Decodes UTF-8 fed in arbitrary pieces exactly like decoding it whole with
/// `String::from_utf8_lossy` (one U+FFFD per maximal invalid subpart, as Node does), carrying an
/// incomplete sequence from one piece to the next.
#[derive(Debug, Default)]
struct LossyDecoder {
    pending: [u8; 4],
    pending_len: usize,
}

impl LossyDecoder {
    fn feed(&mut self, mut bytes: &[u8], out: &mut impl FnMut(&str)) {
        while self.pending_len > 0 {
            let Some((&byte, rest)) = bytes.split_first() else {
                return;
            };
            self.pending[self.pending_len] = byte;
            match std::str::from_utf8(&self.pending[..=self.pending_len]) {
                Ok(text) => {
                    out(text);
                    self.pending_len = 0;
                    bytes = rest;
                }
                Err(error) if error.error_len().is_none() => {
                    self.pending_len += 1;
                    bytes = rest;
                }
                Err(_) => {
                    // The carried bytes were a maximal invalid subpart; `byte` starts afresh.
                    out(REPLACEMENT);
                    self.pending_len = 0;
                }
            }
        }
        if let Ok(text) = std::str::from_utf8(bytes) {
            if !text.is_empty() {
                out(text);
            }
            return;
        }
        let mut chunks = bytes.utf8_chunks().peekable();
        while let Some(chunk) = chunks.next() {
            if !chunk.valid().is_empty() {
                out(chunk.valid());
            }
            let invalid = chunk.invalid();
            if invalid.is_empty() {
                continue;
            }
            let incomplete = std::str::from_utf8(invalid).is_err_and(|error| error.error_len().is_none());
            if chunks.peek().is_none() && incomplete {
                self.pending[..invalid.len()].copy_from_slice(invalid);
                self.pending_len = invalid.len();
            } else {
                out(REPLACEMENT);
            }
        }
    }

    /// Ends the input: a dangling incomplete sequence becomes one U+FFFD.
    fn finish(&mut self, out: &mut impl FnMut(&str)) {
        if self.pending_len > 0 {
            self.pending_len = 0;
            out(REPLACEMENT);
        }
    }
}

/// The window's lines as they stream by: their sizes, and the leading part kept under the
/// limits with the same decisions `truncate_head` takes.
#[derive(Debug)]
struct Selection {
    options: TruncationOptions,
    /// Lines finished so far.
    count: usize,
    /// Size of the window joined with `\n`.
    bytes: usize,
    first_line_bytes: usize,
    last_line_empty: bool,
    /// Decoded size of the current line so far.
    current: usize,
    /// Kept lines joined with `\n`.
    kept: String,
    kept_lines: usize,
    /// Why keeping stopped.
    stop: Option<TruncatedBy>,
    /// The current line is being kept tentatively (from byte `mark` of `kept`).
    keeping: bool,
    mark: usize,
    /// The current line went over the byte limit.
    overflow: bool,
    /// An empty line was seen and not yet kept: it is dropped if it turns out to be the last one
    /// (`truncate_head` ignores one trailing newline).
    pending_empty: bool,
}

impl Selection {
    fn new(options: TruncationOptions) -> Self {
        Selection {
            options,
            count: 0,
            bytes: 0,
            first_line_bytes: 0,
            last_line_empty: false,
            current: 0,
            kept: String::new(),
            kept_lines: 0,
            stop: None,
            keeping: false,
            mark: 0,
            overflow: false,
            pending_empty: false,
        }
    }

    fn begin_line(&mut self) {
        let index = self.count;
        self.current = 0;
        self.keeping = false;
        self.overflow = false;
        if self.pending_empty {
            self.pending_empty = false;
            if self.stop.is_none() {
                if self.kept.len() + 1 > self.options.max_bytes {
                    self.stop = Some(TruncatedBy::Bytes);
                } else {
                    self.kept.push('\n');
                    self.kept_lines += 1;
                }
            }
        }
        if self.stop.is_some() {
            return;
        }
        if index >= self.options.max_lines {
            self.stop = Some(TruncatedBy::Lines);
            return;
        }
        self.keeping = true;
        self.mark = self.kept.len();
        if index > 0 {
            self.kept.push('\n');
        }
    }

    fn push(&mut self, piece: &str) {
        self.current += piece.len();
        if !self.keeping || self.overflow {
            return;
        }
        if self.kept.len() + piece.len() > self.options.max_bytes {
            self.overflow = true;
            self.kept.truncate(self.mark);
        } else {
            self.kept.push_str(piece);
        }
    }

    /// Keeping is over: the remaining lines are only measured.
    fn measuring_only(&self) -> bool {
        self.stop.is_some() && !self.keeping && self.count > 0
    }

    /// Accounts for `lines` line ends in one go while [measuring only](Self::measuring_only):
    /// `decoded` is the decoded size of the bytes from the current position through the last of
    /// those `\n`s (so it includes the separators). The line after them is current and empty.
    fn measure_lines(&mut self, lines: usize, decoded: usize) {
        debug_assert!(self.count > 0 && lines > 0);
        self.count += lines;
        self.bytes += self.current + decoded;
        self.current = 0;
        self.last_line_empty = false;
    }

    fn end_line(&mut self) {
        let index = self.count;
        let size = self.current;
        self.count += 1;
        self.bytes += size + usize::from(index > 0);
        if index == 0 {
            self.first_line_bytes = size;
        }
        self.last_line_empty = size == 0;
        if !self.keeping {
            return;
        }
        self.keeping = false;
        if size == 0 && index > 0 {
            // Decided when the next line starts (or never, if this is the last one).
            self.kept.truncate(self.mark);
            self.pending_empty = true;
        } else if self.overflow || self.kept.len() > self.options.max_bytes {
            self.kept.truncate(self.mark);
            self.stop = Some(TruncatedBy::Bytes);
        } else {
            self.kept_lines += 1;
        }
    }

    fn finish(self) -> TruncationResult {
        let options = self.options;
        let trailing_newline = self.count >= 2 && self.last_line_empty;
        let lines = self.count - usize::from(trailing_newline);
        let truncated = lines > options.max_lines || self.bytes > options.max_bytes;
        let mut result = TruncationResult {
            content: self.kept,
            truncated,
            truncated_by: None,
            total_lines: lines,
            total_bytes: self.bytes,
            output_lines: lines,
            output_bytes: self.bytes,
            last_line_partial: false,
            first_line_exceeds_limit: false,
            max_lines: options.max_lines,
            max_bytes: options.max_bytes,
        };
        if !truncated {
            if trailing_newline {
                result.content.push('\n');
            }
            return result;
        }
        result.truncated_by = Some(self.stop.unwrap_or(TruncatedBy::Lines));
        result.output_lines = self.kept_lines;
        result.output_bytes = result.content.len();
        result.first_line_exceeds_limit = self.first_line_bytes > options.max_bytes;
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::truncate::truncate_head;
    use proptest::prelude::*;

    /// pi's in-memory algorithm, for comparison.
    fn in_memory(bytes: &[u8], window: Window, options: TruncationOptions) -> Scan {
        let text = String::from_utf8_lossy(bytes);
        let lines: Vec<&str> = text.split('\n').collect();
        let total = lines.len();
        if window.start >= total {
            return Scan {
                total_lines: total,
                selected_lines: 0,
                first_line_bytes: 0,
                truncation: truncate_head("", options),
            };
        }
        let end = window.limit.map_or(total, |l| (window.start + l).min(total));
        let selected = &lines[window.start..end];
        Scan {
            total_lines: total,
            selected_lines: selected.len(),
            first_line_bytes: selected[0].len(),
            truncation: truncate_head(&selected.join("\n"), options),
        }
    }

    fn opts(max_lines: usize, max_bytes: usize) -> TruncationOptions {
        TruncationOptions { max_lines, max_bytes }
    }

    fn streamed(bytes: &[u8], window: Window, options: TruncationOptions, chunk: usize) -> Scan {
        match scan_in_chunks(bytes, window, options, || false, chunk) {
            Ok(scan) => scan,
            Err(error) => panic!("scan failed: {error:?}"),
        }
    }

    fn decode_in_pieces(bytes: &[u8], piece: usize) -> String {
        let mut decoder = LossyDecoder::default();
        let mut out = String::new();
        for part in bytes.chunks(piece.max(1)) {
            decoder.feed(part, &mut |s| out.push_str(s));
        }
        decoder.finish(&mut |s| out.push_str(s));
        out
    }

    #[test]
    fn decodes_invalid_utf8_like_node() {
        // Node: "a\u{FFFD}\n\u{FFFD}\u{FFFD}\u{FFFD}(😀" followed by ten U+FFFD, 49 bytes.
        let bytes = b"a\xe2\x82\n\xff\xfe\xc3(\xf0\x9f\x98\x80\xed\xa0\x80\xf4\x90\x80\x80\xe0\x80\xaf";
        for piece in 1..bytes.len() {
            let text = decode_in_pieces(bytes, piece);
            assert_eq!(text.len(), 49, "piece size {piece}");
            assert_eq!(text, String::from_utf8_lossy(bytes));
        }
    }

    #[test]
    fn window_and_totals() {
        let file = b"one\ntwo\nthree\n";
        let scan = streamed(
            file,
            Window {
                start: 1,
                limit: Some(1),
            },
            opts(2000, 51200),
            3,
        );
        assert_eq!((scan.total_lines, scan.selected_lines), (4, 1));
        assert_eq!(scan.truncation.content, "two");
        let scan = streamed(file, Window { start: 9, limit: None }, opts(2000, 51200), 3);
        assert_eq!((scan.total_lines, scan.selected_lines), (4, 0));
    }

    #[test]
    fn huge_first_line_is_measured_not_kept() {
        let mut file = vec![b'x'; 300_000];
        file.extend_from_slice(b"\nnext\n");
        let scan = streamed(&file, Window { start: 0, limit: None }, opts(2000, 51200), 4096);
        assert!(scan.truncation.first_line_exceeds_limit);
        assert_eq!(scan.first_line_bytes, 300_000);
        assert_eq!(scan.truncation.content, "");
        assert_eq!(
            scan,
            in_memory(&file, Window { start: 0, limit: None }, opts(2000, 51200))
        );
    }

    #[test]
    fn cancellation_stops_the_pass() {
        let result = scan_in_chunks(&b"a\nb"[..], Window { start: 0, limit: None }, opts(10, 10), || true, 1);
        assert!(matches!(result, Err(ScanError::Cancelled)));
    }

    fn file_bytes() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            Just(b"\n".to_vec()),
            Just(b"\n\n".to_vec()),
            Just(b"abc".to_vec()),
            Just(b"x".to_vec()),
            Just("é€😀".as_bytes().to_vec()),
            Just(b"\xe2\x82".to_vec()),
            Just(b"\xff".to_vec()),
            Just(b"\xf0\x9f".to_vec()),
            Just(b"\x98\x80".to_vec()),
            Just(b"0123456789".to_vec()),
        ];
        proptest::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #[test]
        fn streaming_equals_pi_in_memory(
            bytes in file_bytes(),
            start in 0usize..12,
            limit in proptest::option::of(1usize..10),
            max_lines in 1usize..8,
            max_bytes in 1usize..40,
            chunk in 1usize..64,
        ) {
            let window = Window { start, limit };
            let options = opts(max_lines, max_bytes);
            let expected = in_memory(&bytes, window, options);
            let got = streamed(&bytes, window, options, chunk);
            if expected.selected_lines == 0 {
                prop_assert_eq!(got.total_lines, expected.total_lines);
                prop_assert_eq!(got.selected_lines, 0);
            } else {
                prop_assert_eq!(got, expected);
            }
        }

        #[test]
        fn decoding_in_pieces_equals_decoding_whole(bytes in file_bytes(), piece in 1usize..8) {
            prop_assert_eq!(decode_in_pieces(&bytes, piece), String::from_utf8_lossy(&bytes).into_owned());
        }
    }
}
