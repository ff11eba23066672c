//! The text the model reads: per-file blocks grouped into a directory tree, the change lines of an
//! `ast_edit` preview, the match lines of `ast_grep`, and the parse-issue block.
//!
//! Grouping (directory or glob scope): files directly in the scope are `# <file> (…)`; a directory is
//! `# <dir>/` (a chain of directories holding nothing but one directory is folded into one header,
//! `# pkg/src/`), its files one level deeper (`## <file> (…)`) and its subdirectories too
//! (`## nested/`, `### child.ts (…)`). Within a directory files come before subdirectories, each
//! sorted by name. A blank line goes before every directory header and every file directly in the
//! scope. A single-file scope is just `# <path> (…)` followed by its lines.

use std::collections::BTreeMap;

use super::engine::{Change, Match, cut};

/// Parse issues shown at most (the rest are counted).
pub const PARSE_ERRORS_LIMIT: usize = 20;

/// Characters of a before/after line shown in a preview.
pub(crate) const PREVIEW_LINE_CHARS: usize = 120;

/// One file's output block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileBlock {
    /// Path relative to the scope with `/` separators (the display path for a single-file scope).
    pub(crate) path: String,
    /// Appended to the file name in its header, e.g. ` (2 replacements)`.
    pub(crate) suffix: String,
    /// The lines under the header.
    pub(crate) lines: Vec<String>,
}

#[derive(Default)]
struct Dir<'a> {
    files: Vec<&'a FileBlock>,
    dirs: BTreeMap<&'a str, Dir<'a>>,
}

/// `count` and `word`, with an `s` unless the count is exactly 1.
pub(crate) fn plural(count: usize, word: &str) -> String {
    if count == 1 {
        format!("{count} {word}")
    } else {
        format!("{count} {word}s")
    }
}

/// The blocks as output lines, grouped by directory (see the module docs).
pub(crate) fn grouped(blocks: &[FileBlock], single_file: bool) -> Vec<String> {
    let mut out = Vec::new();
    if single_file {
        for block in blocks {
            if !out.is_empty() {
                out.push(String::new());
            }
            out.push(format!("# {}{}", block.path, block.suffix));
            out.extend(block.lines.iter().cloned());
        }
        return out;
    }
    let mut root = Dir::default();
    for block in blocks {
        let mut parts: Vec<&str> = block.path.split('/').collect();
        parts.pop();
        let mut dir = &mut root;
        for part in parts {
            dir = dir.dirs.entry(part).or_default();
        }
        dir.files.push(block);
    }
    render(&root, 1, &mut out);
    out
}

fn render(dir: &Dir<'_>, depth: usize, out: &mut Vec<String>) {
    let hashes = "#".repeat(depth);
    let mut files = dir.files.clone();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    for block in files {
        if depth == 1 && !out.is_empty() {
            out.push(String::new());
        }
        let name = block.path.rsplit('/').next().unwrap_or(&block.path);
        out.push(format!("{hashes} {name}{}", block.suffix));
        out.extend(block.lines.iter().cloned());
    }
    for (name, sub) in &dir.dirs {
        let mut label = format!("{name}/");
        let mut node = sub;
        while node.files.is_empty()
            && node.dirs.len() == 1
            && let Some((child, next)) = node.dirs.iter().next()
        {
            label.push_str(child);
            label.push('/');
            node = next;
        }
        if !out.is_empty() {
            out.push(String::new());
        }
        out.push(format!("{hashes} {label}"));
        render(node, depth + 1, out);
    }
}

/// De-duplicates parse issues (keeping the first occurrence) and returns the ones to show and the total.
pub(crate) fn cap_issues(issues: Vec<String>) -> (Vec<String>, usize) {
    let mut seen = std::collections::HashSet::new();
    let unique: Vec<String> = issues.into_iter().filter(|issue| seen.insert(issue.clone())).collect();
    let total = unique.len();
    (unique.into_iter().take(PARSE_ERRORS_LIMIT).collect(), total)
}

/// The `Parse issues:` block (`Parse issues (20 / <total>):` when capped); empty when there are none.
pub(crate) fn issues_block(shown: &[String], total: usize) -> Vec<String> {
    if shown.is_empty() {
        return Vec::new();
    }
    let header = if total > shown.len() {
        format!("Parse issues ({} / {total}):", shown.len())
    } else {
        "Parse issues:".to_owned()
    };
    std::iter::once(header)
        .chain(shown.iter().map(|issue| format!("- {issue}")))
        .collect()
}

/// The first line of `text`, cut to [`PREVIEW_LINE_CHARS`] characters; `…` marks anything left out.
pub(crate) fn first_line(text: &str) -> String {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("");
    let shown = cut(first, PREVIEW_LINE_CHARS);
    if lines.next().is_some() && !shown.ends_with('…') {
        format!("{shown}…")
    } else {
        shown
    }
}

/// The two preview lines of a change: `-<line>:<col> <before>` and `+<line>:<col> <after>`.
pub(crate) fn change_lines(change: &Change) -> [String; 2] {
    [
        format!("-{}:{} {}", change.line, change.column, first_line(&change.before)),
        format!("+{}:{} {}", change.line, change.column, first_line(&change.after)),
    ]
}

/// The lines of one `ast_grep` match: `*<line>|<text>` for its first line, ` <line>|<text>` after,
/// `  … <n> more lines` when cut, then `  meta: A=…, B=…` when it captured anything.
pub(crate) fn match_lines(found: &Match) -> Vec<String> {
    let mut out: Vec<String> = found
        .lines
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let marker = if i == 0 { '*' } else { ' ' };
            format!("{marker}{}|{text}", found.line + i)
        })
        .collect();
    if found.more_lines > 0 {
        out.push(format!("  … {}", plural(found.more_lines, "more line")));
    }
    if !found.captures.is_empty() {
        let pairs: Vec<String> = found
            .captures
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        out.push(format!("  meta: {}", pairs.join(", ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(path: &str) -> FileBlock {
        FileBlock {
            path: path.to_owned(),
            suffix: " (1 replacement)".to_owned(),
            lines: vec![format!("-1:1 {path}")],
        }
    }

    #[test]
    fn groups_by_directory_and_folds_chains() {
        let blocks = [
            block("top.ts"),
            block("pkg-1/src/root.ts"),
            block("pkg-1/src/nested/child.ts"),
            block("another.ts"),
            block("z/a/b/c.ts"),
        ];
        let text = grouped(&blocks, false).join("\n");
        let expected = "\
# another.ts (1 replacement)
-1:1 another.ts

# top.ts (1 replacement)
-1:1 top.ts

# pkg-1/src/
## root.ts (1 replacement)
-1:1 pkg-1/src/root.ts

## nested/
### child.ts (1 replacement)
-1:1 pkg-1/src/nested/child.ts

# z/a/b/
## c.ts (1 replacement)
-1:1 z/a/b/c.ts";
        assert_eq!(text, expected);
    }

    #[test]
    fn single_file_scope() {
        let text = grouped(&[block("src/a.ts")], true).join("\n");
        assert_eq!(text, "# src/a.ts (1 replacement)\n-1:1 src/a.ts");
    }

    #[test]
    fn issues_are_deduplicated_and_capped() {
        let issues: Vec<String> = (0..25)
            .map(|i| format!("f{i:02}.ts: broken"))
            .chain(["f00.ts: broken".to_owned()])
            .collect();
        let (shown, total) = cap_issues(issues);
        assert_eq!((shown.len(), total), (20, 25));
        let block = issues_block(&shown, total);
        assert_eq!(block[0], "Parse issues (20 / 25):");
        assert_eq!(block[1], "- f00.ts: broken");
        assert_eq!(issues_block(&shown[..2], 2)[0], "Parse issues:");
        assert!(issues_block(&[], 0).is_empty());
    }

    #[test]
    fn preview_lines_show_the_first_line_cut() {
        assert_eq!(first_line("a\nb"), "a…");
        assert_eq!(first_line(""), "");
        assert_eq!(first_line(&"x".repeat(130)).chars().count(), 121);
        assert_eq!(plural(1, "file"), "1 file");
        assert_eq!(plural(0, "file"), "0 files");
    }
}
