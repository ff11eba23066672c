//! The two views of an edit that `edit` returns in `details`: pi's line-numbered display diff
//! (`diff`) and a standard unified patch (`patch`), both with 4 lines of context, plus the first
//! changed line of the new file.
//!
//! Display diff lines are `-<n> <text>` (removed, old line number), `+<n> <text>` (added, new line
//! number) and ` <n> <text>` (context, old line number); numbers are right-aligned to the width
//! of the larger file's line count, and ` <blank> ...` stands for skipped unchanged lines before,
//! between and after the changes.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp, capture_diff_deadline, group_diff_ops};

use super::text::count_newlines;

/// Lines of unchanged context around each change, in both views.
pub(super) const CONTEXT_LINES: usize = 4;

/// How long the line diff may search for a minimal diff before settling for a coarser one.
const DIFF_DEADLINE: Duration = Duration::from_secs(2);

/// What `details` reports about an edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct EditDiff {
    /// pi's display diff with line numbers.
    pub diff: String,
    /// Unified patch (`--- path`, `+++ path`, `@@ -a,b +c,d @@` hunks).
    pub patch: String,
    /// 1-based line of the new file where the first change is; `None` when nothing changed.
    pub first_changed_line: Option<usize>,
}

/// Lines with their `\n` (the last one may lack it); empty text has none.
fn lines_with_endings(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// Length of the common prefix of two byte strings.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const CHUNK: usize = 4096;
    let len = a.len().min(b.len());
    let mut i = 0;
    while i + CHUNK <= len && a[i..i + CHUNK] == b[i..i + CHUNK] {
        i += CHUNK;
    }
    while i < len && a[i] == b[i] {
        i += 1;
    }
    i
}

/// Length of the common suffix of two byte strings.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    const CHUNK: usize = 4096;
    let len = a.len().min(b.len());
    let (a_end, b_end) = (a.len(), b.len());
    let mut i = 0;
    while i + CHUNK <= len && a[a_end - i - CHUNK..a_end - i] == b[b_end - i - CHUNK..b_end - i] {
        i += CHUNK;
    }
    while i < len && a[a_end - i - 1] == b[b_end - i - 1] {
        i += 1;
    }
    i
}

/// Start of the line `count` lines before the line starting at `start` (or of the text).
fn lines_back(text: &str, mut start: usize, count: usize) -> usize {
    for _ in 0..count {
        if start == 0 {
            break;
        }
        start = text[..start - 1].rfind('\n').map_or(0, |i| i + 1);
    }
    start
}

/// End of the line `count` lines after the line ending at `end` (or of the text).
fn lines_forward(text: &str, mut end: usize, count: usize) -> usize {
    for _ in 0..count {
        if end == text.len() {
            break;
        }
        end = text[end..].find('\n').map_or(text.len(), |i| end + i + 1);
    }
    end
}

/// The part of two texts a diff looks at: whole lines from `margin` lines before the first
/// difference to `margin` lines after the last one, as byte offsets into old and new, and the
/// number of (identical) lines before it.
struct Window {
    old: std::ops::Range<usize>,
    new: std::ops::Range<usize>,
    lines_before: usize,
}

fn window(old: &str, new: &str, margin: usize) -> Window {
    let head = common_prefix(old.as_bytes(), new.as_bytes());
    // Back to the start of the line holding the first difference: everything before is equal.
    let head = old[..head].rfind('\n').map_or(0, |i| i + 1);
    let tail = common_suffix(&old.as_bytes()[head..], &new.as_bytes()[head..]);
    // Forward to a line start inside the common tail, so whole lines remain on both sides.
    let (old_tail, new_tail) = (old.len() - tail, new.len() - tail);
    let line_start = |text: &str, at: usize| at == 0 || text.as_bytes()[at - 1] == b'\n';
    let old_end = if line_start(old, old_tail) && line_start(new, new_tail) {
        old_tail
    } else {
        old[old_tail..].find('\n').map_or(old.len(), |i| old_tail + i + 1)
    };
    let new_end = new.len() - (old.len() - old_end);
    let start = lines_back(old, head, margin);
    Window {
        old: start..lines_forward(old, old_end, margin),
        new: start..lines_forward(new, new_end, margin),
        lines_before: count_newlines(&old[..start]),
    }
}

/// The line diff of `old` and `new` (slices of lines); indices are shifted by `offset`.
fn line_ops(old: &[&str], new: &[&str], offset: usize) -> Vec<DiffOp> {
    let deadline = Instant::now() + DIFF_DEADLINE;
    capture_diff_deadline(Algorithm::Myers, old, 0..old.len(), new, 0..new.len(), Some(deadline))
        .into_iter()
        .map(|op| shift(op, offset))
        .collect()
}

fn shift(op: DiffOp, by: usize) -> DiffOp {
    match op {
        DiffOp::Equal {
            old_index,
            new_index,
            len,
        } => DiffOp::Equal {
            old_index: old_index + by,
            new_index: new_index + by,
            len,
        },
        DiffOp::Delete {
            old_index,
            old_len,
            new_index,
        } => DiffOp::Delete {
            old_index: old_index + by,
            old_len,
            new_index: new_index + by,
        },
        DiffOp::Insert {
            old_index,
            new_index,
            new_len,
        } => DiffOp::Insert {
            old_index: old_index + by,
            new_index: new_index + by,
            new_len,
        },
        DiffOp::Replace {
            old_index,
            old_len,
            new_index,
            new_len,
        } => DiffOp::Replace {
            old_index: old_index + by,
            old_len,
            new_index: new_index + by,
            new_len,
        },
    }
}

/// Old and new ranges an op covers.
fn op_ranges(op: &DiffOp) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
    (op.old_range(), op.new_range())
}

/// The lines of a window, addressed by their line index in the whole text.
struct Lines<'a> {
    lines: Vec<&'a str>,
    offset: usize,
}

impl<'a> std::ops::Index<usize> for Lines<'a> {
    type Output = &'a str;
    fn index(&self, line: usize) -> &&'a str {
        &self.lines[line - self.offset]
    }
}

/// Builds both views of the change from `old` to `new` (LF line endings).
///
/// Only the lines around the changes are split and diffed: the identical head and tail of the
/// texts are skipped with byte comparisons, so a small edit of a large file stays cheap. The
/// window is widened (in the end to the whole text) until the diff leaves at least
/// [`CONTEXT_LINES`] unchanged lines inside it on each side, or reaches the text's edge, because
/// the line diff may place an ambiguous change a little off the first and last differing bytes.
pub(super) fn edit_diff(path: &str, old: &str, new: &str) -> EditDiff {
    let mut margin = CONTEXT_LINES;
    while margin <= MAX_MARGIN {
        if let Some(diff) = diff_in(path, old, new, window(old, new, margin), true) {
            return diff;
        }
        margin *= 4;
    }
    let whole = Window {
        old: 0..old.len(),
        new: 0..new.len(),
        lines_before: 0,
    };
    diff_in(path, old, new, whole, false).unwrap_or_else(|| EditDiff {
        diff: String::new(),
        patch: format!("--- {path}\n+++ {path}\n"),
        first_changed_line: None,
    })
}

/// Widest window margin (lines) tried before diffing the whole texts.
const MAX_MARGIN: usize = 1024;

/// Whether the window's ops keep [`CONTEXT_LINES`] unchanged lines inside the window before
/// the first change and after the last one, wherever the window does not reach the text's edge.
fn context_fits(ops: &[DiffOp], window: &Window, old: &str, new: &str) -> bool {
    let leading = match ops.first() {
        Some(DiffOp::Equal { len, .. }) => *len,
        _ => 0,
    };
    let trailing = match ops.last() {
        Some(DiffOp::Equal { len, .. }) => *len,
        _ => 0,
    };
    let at_start = window.old.start == 0;
    let at_end = window.old.end == old.len() && window.new.end == new.len();
    (at_start || leading >= CONTEXT_LINES) && (at_end || trailing >= CONTEXT_LINES)
}

/// Both views from the lines inside `window`; `None` when `check` is set and the window is too
/// narrow for the context.
fn diff_in(path: &str, old: &str, new: &str, window: Window, check: bool) -> Option<EditDiff> {
    let offset = window.lines_before;
    let old_lines = Lines {
        lines: lines_with_endings(&old[window.old.clone()]),
        offset,
    };
    let new_lines = Lines {
        lines: lines_with_endings(&new[window.new.clone()]),
        offset,
    };
    let ops = line_ops(&old_lines.lines, &new_lines.lines, offset);
    if check && !context_fits(&ops, &window, old, new) {
        return None;
    }
    let first_changed_line = ops
        .iter()
        .find(|op| !matches!(op, DiffOp::Equal { .. }))
        .map(|op| op.new_range().start + 1);
    let groups = group_diff_ops(ops, CONTEXT_LINES);
    // pi sizes the number column by `split("\n").length` of the longer text. Outside the window
    // both texts are the same, so one count of old serves both.
    let outside = offset + count_newlines(&old[window.old.end..]);
    let old_breaks = outside + count_newlines(&old[window.old.clone()]);
    let new_breaks = outside + count_newlines(&new[window.new.clone()]);
    let total_lines = old_breaks.max(new_breaks) + 1;
    let width = total_lines.to_string().len();
    let old_line_count = old_breaks + usize::from(!old.is_empty() && !old.ends_with('\n'));
    Some(EditDiff {
        diff: display_diff(&groups, &old_lines, &new_lines, width, old_line_count),
        patch: unified_patch(path, &groups, &old_lines, &new_lines),
        first_changed_line,
    })
}

fn display_diff(
    groups: &[Vec<DiffOp>],
    old: &Lines<'_>,
    new: &Lines<'_>,
    width: usize,
    old_line_count: usize,
) -> String {
    let mut out: Vec<String> = Vec::new();
    let ellipsis = format!(" {:width$} ...", "");
    let strip = |line: &str| line.strip_suffix('\n').unwrap_or(line).to_owned();
    for (index, group) in groups.iter().enumerate() {
        let starts_at = group.first().map_or(0, |op| op.old_range().start);
        if index > 0 || starts_at > 0 {
            out.push(ellipsis.clone());
        }
        for op in group {
            let (old_range, new_range) = op_ranges(op);
            if let DiffOp::Equal { .. } = op {
                for i in old_range {
                    out.push(format!(" {:>width$} {}", i + 1, strip(old[i])));
                }
                continue;
            }
            for i in old_range {
                out.push(format!("-{:>width$} {}", i + 1, strip(old[i])));
            }
            for i in new_range {
                out.push(format!("+{:>width$} {}", i + 1, strip(new[i])));
            }
        }
    }
    let ends_at = groups
        .last()
        .and_then(|group| group.last())
        .map_or(0, |op| op.old_range().end);
    if !groups.is_empty() && ends_at < old_line_count {
        out.push(ellipsis);
    }
    out.join("\n")
}

/// A hunk range as the patch header shows it: 1-based start (the line before for an empty
/// range) and length.
fn hunk_range(range: std::ops::Range<usize>) -> String {
    let len = range.len();
    let start = if len == 0 { range.start } else { range.start + 1 };
    format!("{start},{len}")
}

fn push_patch_line(out: &mut String, marker: char, line: &str) {
    out.push(marker);
    out.push_str(line);
    if !line.ends_with('\n') {
        out.push_str("\n\\ No newline at end of file\n");
    }
}

fn unified_patch(path: &str, groups: &[Vec<DiffOp>], old: &Lines<'_>, new: &Lines<'_>) -> String {
    let mut out = format!("--- {path}\n+++ {path}\n");
    for group in groups {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_hunk = first.old_range().start..last.old_range().end;
        let new_hunk = first.new_range().start..last.new_range().end;
        let _ = writeln!(out, "@@ -{} +{} @@", hunk_range(old_hunk), hunk_range(new_hunk));
        for op in group {
            let (old_range, new_range) = op_ranges(op);
            if let DiffOp::Equal { .. } = op {
                for i in old_range {
                    push_patch_line(&mut out, ' ', old[i]);
                }
                continue;
            }
            for i in old_range {
                push_patch_line(&mut out, '-', old[i]);
            }
            for i in new_range {
                push_patch_line(&mut out, '+', new[i]);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The helpers at a glance (the example the module documentation used to carry).
    #[test]
    fn module_example() {
        let old: String = (1..=12).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 7\n", "line seven\n");
        let diff = edit_diff("notes.txt", &old, &new);
        assert_eq!(diff.first_changed_line, Some(7));
        assert_eq!(
            diff.diff,
            "    ...\n  3 line 3\n  4 line 4\n  5 line 5\n  6 line 6\n- 7 line 7\n+ 7 line seven\n  8 line 8\n  9 line 9\n 10 line 10\n 11 line 11\n    ..."
        );
        assert!(
            diff.patch
                .starts_with("--- notes.txt\n+++ notes.txt\n@@ -3,9 +3,9 @@\n line 3\n")
        );
    }

    fn numbered(range: std::ops::RangeInclusive<usize>) -> String {
        range.map(|i| format!("l{i}\n")).collect()
    }

    #[test]
    fn single_change_near_the_top() {
        let d = edit_diff("f", "a\nb\nc\n", "a\nB\nc\n");
        assert_eq!(d.diff, " 1 a\n-2 b\n+2 B\n 3 c");
        assert_eq!(d.patch, "--- f\n+++ f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
        assert_eq!(d.first_changed_line, Some(2));
    }

    #[test]
    fn distant_changes_are_separated_by_an_ellipsis() {
        let old = numbered(1..=30);
        let new = old.replace("l3\n", "L3\n").replace("l25\n", "L25\n");
        let d = edit_diff("f", &old, &new);
        let expected = [
            "  1 l1", "  2 l2", "- 3 l3", "+ 3 L3", "  4 l4", "  5 l5", "  6 l6", "  7 l7", "    ...", " 21 l21",
            " 22 l22", " 23 l23", " 24 l24", "-25 l25", "+25 L25", " 26 l26", " 27 l27", " 28 l28", " 29 l29",
            "    ...",
        ];
        assert_eq!(d.diff, expected.join("\n"));
        assert!(d.patch.contains("@@ -1,7 +1,7 @@\n"), "{}", d.patch);
        assert!(d.patch.contains("@@ -21,9 +21,9 @@\n"), "{}", d.patch);
    }

    #[test]
    fn close_changes_share_one_hunk() {
        let old = numbered(1..=20);
        let new = old.replace("l5\n", "L5\n").replace("l13\n", "L13\n");
        let d = edit_diff("f", &old, &new);
        assert!(d.diff.starts_with("  1 l1\n"), "{}", d.diff);
        assert_eq!(d.diff.matches("...").count(), 1, "{}", d.diff);
        assert_eq!(d.patch.matches("@@ -").count(), 1);
    }

    #[test]
    fn insertion_and_deletion_numbers() {
        let d = edit_diff("f", "a\nb\n", "a\nx\ny\nb\n");
        assert_eq!(d.diff, " 1 a\n+2 x\n+3 y\n 2 b");
        assert_eq!(d.first_changed_line, Some(2));
        let d = edit_diff("f", "a\nb\nc\n", "a\n");
        assert_eq!(d.diff, " 1 a\n-2 b\n-3 c");
        assert_eq!(d.patch, "--- f\n+++ f\n@@ -1,3 +1,1 @@\n a\n-b\n-c\n");
        assert_eq!(d.first_changed_line, Some(2));
    }

    #[test]
    fn empty_ranges_use_the_line_before() {
        let d = edit_diff("f", "a\n", "");
        assert_eq!(d.patch, "--- f\n+++ f\n@@ -1,1 +0,0 @@\n-a\n");
        let d = edit_diff("f", "", "a\n");
        assert_eq!(d.patch, "--- f\n+++ f\n@@ -0,0 +1,1 @@\n+a\n");
    }

    #[test]
    fn missing_final_newline_is_marked() {
        let d = edit_diff("f", "a\nb", "a\nc");
        assert_eq!(
            d.patch,
            "--- f\n+++ f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
        );
        assert_eq!(d.diff, " 1 a\n-2 b\n+2 c");
    }

    #[test]
    fn window_covers_the_change_and_its_context() {
        let old = numbered(1..=20);
        let new = old.replace("l10\n", "L10\n");
        let w = window(&old, &new, CONTEXT_LINES);
        assert_eq!(&old[w.old.clone()], "l6\nl7\nl8\nl9\nl10\nl11\nl12\nl13\nl14\n");
        assert_eq!(w.lines_before, 5);
        assert_eq!(&new[w.new], "l6\nl7\nl8\nl9\nL10\nl11\nl12\nl13\nl14\n");
    }

    proptest::proptest! {
        #[test]
        fn windowed_diff_equals_whole_text_diff(
            old in "(([ab]{0,2})\n){0,12}[ab]{0,2}",
            new in "(([ab]{0,2})\n){0,12}[ab]{0,2}",
        ) {
            let whole = Window { old: 0..old.len(), new: 0..new.len(), lines_before: 0 };
            proptest::prop_assert_eq!(Some(edit_diff("f", &old, &new)), diff_in("f", &old, &new, whole, false));
        }

        #[test]
        fn windowed_diff_equals_whole_text_diff_for_local_changes(
            old in "(([abc]{0,3})\n){0,40}[abc]{0,2}",
            at in 0usize..1000,
            cut in 0usize..12,
            insert in "[abc\n]{0,8}",
        ) {
            let start = at % (old.len() + 1);
            let end = (start + cut).min(old.len());
            let new = format!("{}{insert}{}", &old[..start], &old[end..]);
            let whole = Window { old: 0..old.len(), new: 0..new.len(), lines_before: 0 };
            proptest::prop_assert_eq!(Some(edit_diff("f", &old, &new)), diff_in("f", &old, &new, whole, false));
        }
    }

    #[test]
    fn ambiguous_change_past_the_first_window_still_gets_four_context_lines() {
        // The inserted line break makes Myers report the change one line after the last differing
        // byte, so the first window would have been one context line short.
        let old = "aaa\n\n\na\naaa\n\naaa\naa\naa\naa\n\naa\naaa\naa\naaa\naa\naaa\na\n\n\naaa\n\n\na\naa";
        let new = format!("{}\n{}", &old[..45], &old[45..]);
        let d = edit_diff("f", old, &new);
        assert!(d.diff.ends_with(" 19 \n 20 \n 21 aaa\n 22 \n    ..."), "{}", d.diff);
        assert!(
            d.patch.starts_with("--- f\n+++ f\n@@ -13,10 +13,11 @@\n"),
            "{}",
            d.patch
        );
    }

    #[test]
    fn identical_texts_have_no_diff() {
        let d = edit_diff("f", "a\n", "a\n");
        assert_eq!(d.diff, "");
        assert_eq!(d.patch, "--- f\n+++ f\n");
        assert_eq!(d.first_changed_line, None);
    }
}
