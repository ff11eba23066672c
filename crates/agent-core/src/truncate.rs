//! Output truncation shared by every tool and the loop: 2000 lines or 50KB, whichever is hit first.
//!
//! *Head* truncation (read, grep, find, ls) keeps whole leading lines; if the first line alone is
//! over the byte limit the result is empty with `first_line_exceeds_limit`. *Tail* truncation
//! (bash) keeps whole trailing lines; if the last line alone is over the byte limit it keeps the
//! end of that line (on a UTF-8 boundary) with `last_line_partial`.
//!
//! ```
//! use pi_agent_core::{TruncationOptions, format_size, truncate_head};
//!
//! let text = (1..=3000).map(|i| i.to_string()).collect::<Vec<_>>().join("\n");
//! let cut = truncate_head(&text, TruncationOptions::default());
//! assert!(cut.truncated);
//! assert_eq!(cut.output_lines, 2000);
//! assert_eq!(format_size(50 * 1024), "50.0KB");
//! ```

use serde::{Deserialize, Serialize};

/// Maximum number of lines a tool returns (pi: 2000).
pub const DEFAULT_MAX_LINES: usize = 2000;
/// Maximum number of bytes a tool returns (pi: 50KB).
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;
/// Maximum characters of one grep output line (pi: 500).
pub const GREP_MAX_LINE_LENGTH: usize = 500;

/// Limits for one truncation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TruncationOptions {
    /// Maximum lines kept.
    pub max_lines: usize,
    /// Maximum bytes kept.
    pub max_bytes: usize,
}

impl Default for TruncationOptions {
    fn default() -> Self {
        TruncationOptions {
            max_lines: DEFAULT_MAX_LINES,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// Which limit cut the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TruncatedBy {
    /// The line limit.
    Lines,
    /// The byte limit.
    Bytes,
}

/// The outcome of a truncation, serialised as pi's `details.truncation`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TruncationResult {
    /// The kept text.
    pub content: String,
    /// Whether anything was cut.
    pub truncated: bool,
    /// Which limit cut it.
    pub truncated_by: Option<TruncatedBy>,
    /// Lines of the input.
    pub total_lines: usize,
    /// Bytes of the input.
    pub total_bytes: usize,
    /// Lines kept.
    pub output_lines: usize,
    /// Bytes kept.
    pub output_bytes: usize,
    /// Tail truncation kept only the end of the last line.
    pub last_line_partial: bool,
    /// Head truncation could not keep even the first line.
    pub first_line_exceeds_limit: bool,
    /// The line limit used.
    pub max_lines: usize,
    /// The byte limit used.
    pub max_bytes: usize,
}

/// `512B`, `50.0KB`, `1.5MB` — pi's `formatSize`.
pub fn format_size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes}B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1}KB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1}MB", bytes as f64 / (1024.0 * 1024.0))
    }
}

/// The lines of `content` for counting: split on `\n`, ignoring one trailing newline.
fn split_lines(content: &str) -> Vec<&str> {
    let body = content.strip_suffix('\n').unwrap_or(content);
    body.split('\n').collect()
}

fn untruncated(content: &str, lines: usize, options: TruncationOptions) -> TruncationResult {
    TruncationResult {
        content: content.to_owned(),
        truncated: false,
        truncated_by: None,
        total_lines: lines,
        total_bytes: content.len(),
        output_lines: lines,
        output_bytes: content.len(),
        last_line_partial: false,
        first_line_exceeds_limit: false,
        max_lines: options.max_lines,
        max_bytes: options.max_bytes,
    }
}

/// Keeps whole leading lines within the limits.
pub fn truncate_head(content: &str, options: TruncationOptions) -> TruncationResult {
    let lines = split_lines(content);
    if lines.len() <= options.max_lines && content.len() <= options.max_bytes {
        return untruncated(content, lines.len(), options);
    }
    let mut result = untruncated("", lines.len(), options);
    result.total_bytes = content.len();
    result.truncated = true;
    if lines.first().is_some_and(|first| first.len() > options.max_bytes) {
        result.truncated_by = Some(TruncatedBy::Bytes);
        result.first_line_exceeds_limit = true;
        result.output_lines = 0;
        result.output_bytes = 0;
        return result;
    }
    let mut kept = 0;
    let mut bytes = 0;
    let mut by = TruncatedBy::Lines;
    for (index, line) in lines.iter().enumerate().take(options.max_lines) {
        let cost = line.len() + usize::from(index > 0);
        if bytes + cost > options.max_bytes {
            by = TruncatedBy::Bytes;
            break;
        }
        bytes += cost;
        kept += 1;
    }
    result.content = lines[..kept].join("\n");
    result.truncated_by = Some(by);
    result.output_lines = kept;
    result.output_bytes = result.content.len();
    result
}

/// The longest suffix of `line` of at most `max_bytes` bytes that starts on a char boundary.
fn tail_of_line(line: &str, max_bytes: usize) -> &str {
    let mut start = line.len().saturating_sub(max_bytes);
    while !line.is_char_boundary(start) {
        start += 1;
    }
    &line[start..]
}

/// Keeps whole trailing lines within the limits (or the end of an over-long last line).
pub fn truncate_tail(content: &str, options: TruncationOptions) -> TruncationResult {
    let lines = split_lines(content);
    if lines.len() <= options.max_lines && content.len() <= options.max_bytes {
        return untruncated(content, lines.len(), options);
    }
    let mut result = untruncated("", lines.len(), options);
    result.total_bytes = content.len();
    result.truncated = true;
    let mut kept: Vec<&str> = Vec::new();
    let mut bytes = 0;
    let mut by = TruncatedBy::Lines;
    for line in lines.iter().rev() {
        if kept.len() >= options.max_lines {
            break;
        }
        let cost = line.len() + usize::from(!kept.is_empty());
        if bytes + cost > options.max_bytes {
            by = TruncatedBy::Bytes;
            if kept.is_empty() {
                let tail = tail_of_line(line, options.max_bytes);
                kept.push(tail);
                result.last_line_partial = true;
            }
            break;
        }
        kept.push(line);
        bytes += cost;
    }
    kept.reverse();
    result.content = kept.join("\n");
    result.truncated_by = Some(by);
    result.output_lines = kept.len();
    result.output_bytes = result.content.len();
    result
}

/// Cuts `line` to `max_chars` characters, appending `... [truncated]`; returns whether it cut.
pub fn truncate_line(line: &str, max_chars: usize) -> (String, bool) {
    match line.char_indices().nth(max_chars) {
        Some((end, _)) => (format!("{}... [truncated]", &line[..end]), true),
        None => (line.to_owned(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(max_lines: usize, max_bytes: usize) -> TruncationOptions {
        TruncationOptions { max_lines, max_bytes }
    }

    #[test]
    fn sizes_format_like_pi() {
        assert_eq!(format_size(0), "0B");
        assert_eq!(format_size(1023), "1023B");
        assert_eq!(format_size(1024), "1.0KB");
        assert_eq!(format_size(51_200), "50.0KB");
        assert_eq!(format_size(1_572_864), "1.5MB");
    }

    #[test]
    fn head_within_limits_is_untouched() {
        let r = truncate_head("a\nb\n", opts(2, 100));
        assert!(!r.truncated);
        assert_eq!(r.content, "a\nb\n");
        assert_eq!(r.total_lines, 2);
    }

    #[test]
    fn head_cuts_by_lines_then_bytes() {
        let r = truncate_head("a\nb\nc", opts(2, 100));
        assert_eq!((r.content.as_str(), r.truncated_by), ("a\nb", Some(TruncatedBy::Lines)));
        let r = truncate_head("aaaa\nbbbb\ncccc", opts(10, 9));
        assert_eq!(
            (r.content.as_str(), r.truncated_by),
            ("aaaa\nbbbb", Some(TruncatedBy::Bytes))
        );
    }

    #[test]
    fn head_first_line_too_long() {
        let r = truncate_head("aaaaaaaaaa\nb", opts(10, 5));
        assert!(r.first_line_exceeds_limit);
        assert_eq!(r.content, "");
        assert_eq!(r.output_lines, 0);
    }

    #[test]
    fn tail_keeps_the_end() {
        let r = truncate_tail("a\nb\nc", opts(2, 100));
        assert_eq!(r.content, "b\nc");
        let r = truncate_tail("aaaa\nbbbb\ncccc", opts(10, 9));
        assert_eq!(r.content, "bbbb\ncccc");
    }

    #[test]
    fn tail_partial_last_line_is_utf8_safe() {
        let r = truncate_tail("x\néééé", opts(10, 5));
        assert!(r.last_line_partial);
        assert_eq!(r.content, "éé");
    }

    #[test]
    fn long_lines_get_the_truncated_marker() {
        assert_eq!(truncate_line("abcdef", 3), ("abc... [truncated]".to_owned(), true));
        assert_eq!(truncate_line("abc", 3), ("abc".to_owned(), false));
    }
}
