//! Keeping what reaches the model within pi's output limits (2000 lines / 50KB) when the tool did
//! not: the loop caps the text of every error result ([`cap_error_result`]), and the coding agent
//! cuts the results of custom tools ([`cut_text_content`]).
//!
//! The start of the text is kept — for an error it is the part that says what went wrong — as
//! whole lines, or, when the first line alone is over the byte limit, as the start of that line;
//! the lines of an error are first cut one by one at [`ERROR_MAX_LINE_CHARS`]. A notice in the
//! style of pi's `bash` says what was shown:
//!
//! ```
//! use pi_agent_core::{ToolResult, cap_error_result};
//!
//! let pattern = "(".repeat(100_000);
//! let mut result = ToolResult::error_text(format!("regex parse error:\n    {pattern}\nerror: unclosed group"));
//! cap_error_result(&mut result);
//! let text = result.content[0].as_text().unwrap();
//! assert!(text.starts_with("regex parse error:\n    (((("));
//! assert!(text.ends_with("((... [truncated]\nerror: unclosed group"));
//! assert!(text.len() < 5000);
//!
//! let lines = "a line\n".repeat(3000);
//! let mut result = ToolResult::error_text(lines);
//! cap_error_result(&mut result);
//! assert!(result.content[0].as_text().unwrap().ends_with("a line\n\n[Showing lines 1-2000 of 3000]"));
//! ```

use crate::message::{ContentBlock, TextContent};
use crate::tool::ToolResult;
use crate::truncate::{TruncatedBy, TruncationOptions, TruncationResult, format_size, truncate_head, truncate_line};

/// How many lines over the line limit a text may be and still be left alone: room for the
/// notice a tool appends after truncating itself (pi's `bash` adds two lines, and two more for
/// a failed command's exit code).
pub const NOTICE_ROOM_LINES: usize = 10;

/// How many bytes over the byte limit a text may be and still be left alone (see
/// [`NOTICE_ROOM_LINES`]; pi's notices are one line of a few hundred bytes at most).
pub const NOTICE_ROOM_BYTES: usize = 1024;

/// The text of a result cut by [`cut_text_content`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentCut {
    /// How it was cut; `content` is what the result now holds (before its notice).
    pub truncation: TruncationResult,
    /// The size of the text's first line, for the notice of a cut first line.
    pub first_line_bytes: usize,
    /// The whole text that was cut (the text blocks joined with `\n`), to be saved or dropped.
    pub full_text: String,
}

impl ContentCut {
    /// The notice for this cut (see [`head_notice`]).
    pub fn notice(&self, full_output: Option<&str>) -> String {
        head_notice(&self.truncation, self.first_line_bytes, full_output)
    }
}

/// Lines of `text` as the truncation counts them (one trailing newline ignored), without
/// splitting it.
fn count_lines(text: &str) -> usize {
    let body = text.strip_suffix('\n').unwrap_or(text);
    body.bytes().filter(|&byte| byte == b'\n').count() + 1
}

/// Whether a text of `lines` lines and `bytes` bytes is over the limits by more than the room
/// for a notice.
fn over_limits(lines: usize, bytes: usize, options: TruncationOptions) -> bool {
    lines > options.max_lines.saturating_add(NOTICE_ROOM_LINES)
        || bytes > options.max_bytes.saturating_add(NOTICE_ROOM_BYTES)
}

/// The longest prefix of `text` of at most `max_bytes` bytes that ends on a char boundary.
fn prefix_within(text: &str, max_bytes: usize) -> &str {
    let mut end = max_bytes.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Keeps the start of `text` within `options`: whole leading lines ([`truncate_head`]), except
/// that a first line alone over the byte limit is not dropped but cut (on a char boundary), with
/// `first_line_exceeds_limit` set and one (partial) output line.
pub fn cut_head(text: &str, options: TruncationOptions) -> TruncationResult {
    let mut result = truncate_head(text, options);
    if result.first_line_exceeds_limit {
        let first = text.split('\n').next().unwrap_or_default();
        result.content = prefix_within(first, options.max_bytes).to_owned();
        result.output_lines = 1;
        result.output_bytes = result.content.len();
    }
    result
}

/// The notice appended after a head cut, in the words of pi's `bash` notices:
/// `[Showing lines 1-N of M. Full output: PATH]`, `[Showing lines 1-N of M (50.0KB limit). …]`,
/// or for a first line over the byte limit `[Showing first 50.0KB of line 1 (line is 1.2MB). …]`;
/// without `full_output` (nothing was saved) the `Full output` sentence is left out. Starts
/// with the blank line that separates it from the text.
pub fn head_notice(cut: &TruncationResult, first_line_bytes: usize, full_output: Option<&str>) -> String {
    let location = full_output
        .map(|path| format!(". Full output: {path}"))
        .unwrap_or_default();
    let total = cut.total_lines;
    if cut.first_line_exceeds_limit {
        return format!(
            "\n\n[Showing first {} of line 1 (line is {}){location}]",
            format_size(cut.output_bytes),
            format_size(first_line_bytes)
        );
    }
    let shown = cut.output_lines;
    match cut.truncated_by {
        Some(TruncatedBy::Bytes) => format!(
            "\n\n[Showing lines 1-{shown} of {total} ({} limit){location}]",
            format_size(cut.max_bytes)
        ),
        _ => format!("\n\n[Showing lines 1-{shown} of {total}{location}]"),
    }
}

/// When the text blocks of `content` together go over `options` (by more than
/// [`NOTICE_ROOM_LINES`] / [`NOTICE_ROOM_BYTES`], so a tool that cut its own output and added a
/// notice is left alone), replaces them — at the place of the first — with one text block
/// holding the start of their text joined with `\n` ([`cut_head`]) — the others go — and returns the cut with the
/// whole text. Images and other blocks stay as they are. The caller appends the notice
/// ([`ContentCut::notice`], [`append_text`]). A single text block is moved out, not copied.
pub fn cut_text_content(content: &mut Vec<ContentBlock>, options: TruncationOptions) -> Option<ContentCut> {
    let texts: Vec<usize> = content
        .iter()
        .enumerate()
        .filter_map(|(index, block)| matches!(block, ContentBlock::Text(_)).then_some(index))
        .collect();
    let text_of = |index: usize| match &content[index] {
        ContentBlock::Text(text) => text.text.as_str(),
        _ => "",
    };
    let bytes: usize = texts.iter().map(|&i| text_of(i).len()).sum::<usize>() + texts.len().saturating_sub(1);
    let lines: usize = texts.iter().map(|&i| count_lines(text_of(i))).sum();
    if texts.is_empty() || !over_limits(lines, bytes, options) {
        return None;
    }
    let mut full_text = String::new();
    for (n, &index) in texts.iter().enumerate() {
        if let ContentBlock::Text(text) = &mut content[index] {
            if n == 0 {
                full_text = std::mem::take(&mut text.text);
            } else {
                full_text.push('\n');
                full_text.push_str(&text.text);
            }
        }
    }
    let truncation = cut_head(&full_text, options);
    let first_line_bytes = full_text.find('\n').unwrap_or(full_text.len());
    content[texts[0]] = ContentBlock::Text(TextContent::new(truncation.content.clone()));
    // The other text blocks are now part of the first (an empty text block is refused by some
    // providers, so they go).
    let mut index = 0;
    content.retain(|_| {
        index += 1;
        !texts[1..].contains(&(index - 1))
    });
    Some(ContentCut {
        truncation,
        first_line_bytes,
        full_text,
    })
}

/// Appends `text` to the first text block of `content` (a new text block when there is none).
pub fn append_text(content: &mut Vec<ContentBlock>, text: &str) {
    for block in content.iter_mut() {
        if let ContentBlock::Text(block) = block {
            block.text.push_str(text);
            return;
        }
    }
    content.push(ContentBlock::text(text));
}

/// The longest line of an error text the model reads, in characters: longer ones are cut with
/// pi's `... [truncated]` marker. Every real path (`PATH_MAX` is 4096 bytes) fits; a 100 KB
/// pattern quoted in a regex error does not, and the lines after it (what went wrong) stay.
pub const ERROR_MAX_LINE_CHARS: usize = 4096;

/// Cuts every line of `text` longer than [`ERROR_MAX_LINE_CHARS`] ([`truncate_line`]).
fn cut_long_lines(text: &mut String) {
    if !text.split('\n').any(|line| line.len() > ERROR_MAX_LINE_CHARS) {
        return;
    }
    let lines: Vec<String> = text
        .split('\n')
        .map(|line| truncate_line(line, ERROR_MAX_LINE_CHARS).0)
        .collect();
    *text = lines.join("\n");
}

/// Caps the text of an error result the way outputs are capped, keeping its start: each line at
/// [`ERROR_MAX_LINE_CHARS`] characters (with pi's `... [truncated]` marker), then the whole at
/// pi's 2000 lines / 50KB with a notice of what was shown (nothing is saved: the rest of an
/// error is dropped). Errors within the limits are left as they are. The loop applies it to
/// every error result the model reads.
pub fn cap_error_result(result: &mut ToolResult) {
    for block in &mut result.content {
        if let ContentBlock::Text(text) = block {
            cut_long_lines(&mut text.text);
        }
    }
    if let Some(cut) = cut_text_content(&mut result.content, TruncationOptions::default()) {
        let notice = cut.notice(None);
        append_text(&mut result.content, &notice);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The kept text is a start of the input within the limits; a cut says so; a text
        /// within the limits plus the notice room is never cut.
        #[test]
        fn cuts_keep_a_start_within_the_limits(
            text in "[a\né]{0,400}",
            max_lines in 1usize..20,
            max_bytes in 1usize..120,
        ) {
            let options = opts(max_lines, max_bytes);
            let cut = cut_head(&text, options);
            prop_assert!(text.starts_with(&cut.content));
            prop_assert!(cut.content.len() <= max_bytes);
            prop_assert!(cut.content.split('\n').count() <= max_lines || !cut.truncated);
            let mut content = vec![ContentBlock::text(text.clone())];
            match cut_text_content(&mut content, options) {
                Some(done) => {
                    prop_assert_eq!(&done.full_text, &text);
                    prop_assert_eq!(content[0].as_text(), Some(done.truncation.content.as_str()));
                }
                None => {
                    prop_assert!(count_lines(&text) <= max_lines + NOTICE_ROOM_LINES);
                    prop_assert!(text.len() <= max_bytes + NOTICE_ROOM_BYTES);
                    prop_assert_eq!(content[0].as_text(), Some(text.as_str()));
                }
            }
        }
    }

    fn opts(max_lines: usize, max_bytes: usize) -> TruncationOptions {
        TruncationOptions { max_lines, max_bytes }
    }

    fn texts(content: &[ContentBlock]) -> Vec<&str> {
        content.iter().filter_map(ContentBlock::as_text).collect()
    }

    #[test]
    fn a_long_first_line_keeps_its_start() {
        let cut = cut_head("abcdéfgh\nnext", opts(10, 5));
        assert_eq!(cut.content, "abcd");
        assert_eq!((cut.output_lines, cut.output_bytes), (1, 4));
        assert!(cut.first_line_exceeds_limit);
        assert_eq!(
            head_notice(&cut, 9, Some("/tmp/x.log")),
            "\n\n[Showing first 4B of line 1 (line is 9B). Full output: /tmp/x.log]"
        );
    }

    #[test]
    fn notices_name_lines_and_limits() {
        let by_lines = cut_head("a\nb\nc\nd", opts(2, 100));
        assert_eq!(head_notice(&by_lines, 1, None), "\n\n[Showing lines 1-2 of 4]");
        let by_bytes = cut_head("aaaa\nbbbb\ncccc", opts(10, 9));
        assert_eq!(
            head_notice(&by_bytes, 4, Some("/t")),
            "\n\n[Showing lines 1-2 of 3 (9B limit). Full output: /t]"
        );
    }

    #[test]
    fn content_within_the_notice_room_is_left_alone() {
        let text = "x".repeat(10 + NOTICE_ROOM_BYTES);
        let mut content = vec![ContentBlock::text(text.clone())];
        assert!(cut_text_content(&mut content, opts(100, 10)).is_none());
        assert_eq!(texts(&content), [text.as_str()]);
        let lines = "l\n".repeat(2 + NOTICE_ROOM_LINES);
        let mut content = vec![ContentBlock::text(lines)];
        assert!(cut_text_content(&mut content, opts(2, 10_000)).is_none());
    }

    #[test]
    fn text_blocks_are_joined_and_cut_around_images() {
        let image = ContentBlock::Image(crate::message::ImageContent {
            data: "AAAA".into(),
            mime_type: "image/png".into(),
        });
        let big = "y\n".repeat(3000);
        let mut content = vec![ContentBlock::text("first"), image.clone(), ContentBlock::text(big)];
        let cut = cut_text_content(&mut content, TruncationOptions::default()).unwrap();
        assert_eq!(cut.truncation.total_lines, 3001);
        assert_eq!(cut.truncation.output_lines, 2000);
        assert!(cut.full_text.starts_with("first\ny\n"));
        assert_eq!(content.len(), 2, "the text blocks became one");
        assert_eq!(content[1], image);
        append_text(&mut content, &cut.notice(None));
        assert!(texts(&content)[0].ends_with("y\n\n[Showing lines 1-2000 of 3001]"));
    }

    #[test]
    fn error_results_are_capped_and_small_ones_untouched() {
        let mut small = ToolResult::error_text("File not found: a.txt");
        cap_error_result(&mut small);
        assert_eq!(texts(&small.content), ["File not found: a.txt"]);
        let mut long_line = ToolResult::error_text(format!("Error: {}\nwhy", "z".repeat(200_000)));
        cap_error_result(&mut long_line);
        let text = texts(&long_line.content)[0];
        assert!(text.starts_with("Error: zzz"));
        assert!(text.ends_with("zzz... [truncated]\nwhy"));
        assert_eq!(
            text.chars().count(),
            ERROR_MAX_LINE_CHARS + "... [truncated]\nwhy".len()
        );
        let many = "w".repeat(4000) + "\n";
        let mut big = ToolResult::error_text(many.repeat(100));
        cap_error_result(&mut big);
        let text = texts(&big.content)[0];
        assert!(
            text.ends_with("\n\n[Showing lines 1-12 of 100 (50.0KB limit)]"),
            "{}",
            &text[text.len() - 80..]
        );
    }
}
