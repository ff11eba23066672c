//! Scenario tests for the `edit` tool: single and multiple replacements with pi's display diff
//! and patch, CRLF and byte-order-mark preservation, fuzzy matching that rewrites only the changed
//! lines, pi's argument shims (stringified `edits`, legacy `oldText`/`newText`), every error text
//! of pi's edit tool (each leaving the tree untouched), files edit refuses (missing, directory,
//! binary, invalid UTF-8, read-only), aborts, and properties checked against edits applied by
//! hand.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pi_agent_core::ToolContext;
use pi_tools::normalize_for_fuzzy_match;
use pi_tools::{Edit, apply_edits};
use proptest::prelude::*;
use serde_json::{Value, json};
use support::{Fixture, Outcome};

async fn edit(fx: &Fixture, args: Value) -> Outcome {
    fx.call(&fx.tool("edit"), args).await
}

/// [`Fixture::render`] with invisible characters made visible: `\r`, `<BOM>`, `<NBSP>`,
/// `<TAB>`, and `·` for each space ending a line (editors strip those from snapshot files).
fn render_visible(fx: &Fixture, outcome: &Outcome) -> String {
    let text = fx
        .render(outcome)
        .replace('\r', "\\r")
        .replace('\u{FEFF}', "<BOM>")
        .replace('\u{00A0}', "<NBSP>")
        .replace('\t', "<TAB>");
    text.split('\n')
        .map(|line| {
            let kept = line.trim_end_matches(' ');
            format!("{kept}{}", "\u{B7}".repeat(line.len() - kept.len()))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn lines(range: std::ops::RangeInclusive<usize>) -> String {
    range.map(|i| format!("line {i}\n")).collect()
}

const LIB_RS: &str =
    "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\npub fn sub(a: i32, b: i32) -> i32 {\n    a - b\n}\n";

// ---------------------------------------------------------------------------------------------
// Successful edits
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn single_edit() {
    let fx = Fixture::new(&[("src/lib.rs", LIB_RS)]);
    let out = edit(
        &fx,
        json!({"path": "src/lib.rs", "edits": [{"oldText": "    a - b", "newText": "    a.wrapping_sub(b)"}]}),
    )
    .await;
    insta::assert_snapshot!("edit_single", fx.render(&out));
}

#[tokio::test]
async fn multiple_edits_far_apart() {
    let fx = Fixture::new(&[("notes.txt", &lines(1..=30))]);
    let out = edit(
        &fx,
        json!({"path": "notes.txt", "edits": [
            {"oldText": "line 28\n", "newText": "line twenty-eight\n"},
            {"oldText": "line 3\n", "newText": "line three\nline three and a half\n"},
            {"oldText": "line 15\nline 16\n", "newText": ""}
        ]}),
    )
    .await;
    insta::assert_snapshot!("edit_multi", fx.render(&out));
}

#[tokio::test]
async fn absolute_path() {
    let fx = Fixture::new(&[("a.txt", "alpha\nbeta\n")]);
    let path = fx.path("a.txt").display().to_string();
    let out = edit(
        &fx,
        json!({"path": path, "edits": [{"oldText": "beta", "newText": "gamma"}]}),
    )
    .await;
    insta::assert_snapshot!("edit_absolute_path", fx.render(&out));
}

#[tokio::test]
async fn crlf_line_endings_are_kept() {
    let fx = Fixture::new(&[("win.txt", "one\r\ntwo\r\nthree\r\n")]);
    // The model writes LF; the match and the written file use the file's CRLF.
    let out = edit(
        &fx,
        json!({"path": "win.txt", "edits": [{"oldText": "two\nthree", "newText": "2\n3\n4"}]}),
    )
    .await;
    assert_eq!(std::fs::read(fx.path("win.txt")).unwrap(), b"one\r\n2\r\n3\r\n4\r\n");
    insta::assert_snapshot!("edit_crlf", render_visible(&fx, &out));
}

#[tokio::test]
async fn bom_is_kept() {
    let fx = Fixture::new(&[("bom.txt", "\u{FEFF}alpha\nbeta\n")]);
    let out = edit(
        &fx,
        json!({"path": "bom.txt", "edits": [{"oldText": "alpha", "newText": "ALPHA"}]}),
    )
    .await;
    assert_eq!(
        std::fs::read(fx.path("bom.txt")).unwrap(),
        "\u{FEFF}ALPHA\nbeta\n".as_bytes()
    );
    insta::assert_snapshot!("edit_bom", render_visible(&fx, &out));
}

#[tokio::test]
async fn bom_and_crlf_together() {
    let fx = Fixture::new(&[("both.txt", "\u{FEFF}a\r\nb\r\n")]);
    let out = edit(
        &fx,
        json!({"path": "both.txt", "edits": [{"oldText": "b", "newText": "c\nd"}]}),
    )
    .await;
    out.ok();
    assert_eq!(
        std::fs::read(fx.path("both.txt")).unwrap(),
        "\u{FEFF}a\r\nc\r\nd\r\n".as_bytes()
    );
}

#[tokio::test]
async fn through_a_symlink_the_target_changes_and_the_link_stays() {
    let fx = Fixture::new(&[("real.txt", "x = 1\n")]);
    std::os::unix::fs::symlink(fx.path("real.txt"), fx.path("link.txt")).unwrap();
    let out = edit(
        &fx,
        json!({"path": "link.txt", "edits": [{"oldText": "1", "newText": "2"}]}),
    )
    .await;
    assert_eq!(out.ok().content.len(), 1);
    assert!(
        std::fs::symlink_metadata(fx.path("link.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fx.read("real.txt"), "x = 2\n");
}

#[tokio::test]
async fn permissions_are_kept() {
    use std::os::unix::fs::PermissionsExt;
    let fx = Fixture::new(&[("run.sh", "echo old\n")]);
    std::fs::set_permissions(fx.path("run.sh"), std::fs::Permissions::from_mode(0o750)).unwrap();
    edit(
        &fx,
        json!({"path": "run.sh", "edits": [{"oldText": "old", "newText": "new"}]}),
    )
    .await
    .ok();
    let mode = std::fs::metadata(fx.path("run.sh")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o750);
}

// ---------------------------------------------------------------------------------------------
// Fuzzy matching
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn fuzzy_smart_quotes() {
    let original = "const greeting = \u{201C}hello\u{201D};\nconst other = \u{201C}world\u{201D};\nconst it = \u{2018}x\u{2019};\n";
    let fx = Fixture::new(&[("q.js", original)]);
    let out = edit(
        &fx,
        json!({"path": "q.js", "edits": [{"oldText": "const greeting = \"hello\";", "newText": "const greeting = \"hi\";"}]}),
    )
    .await;
    assert_eq!(
        fx.read("q.js"),
        "const greeting = \"hi\";\nconst other = \u{201C}world\u{201D};\nconst it = \u{2018}x\u{2019};\n"
    );
    insta::assert_snapshot!("edit_fuzzy_smart_quotes", fx.render(&out));
}

#[tokio::test]
async fn fuzzy_trailing_spaces() {
    let original = "fn a() {   \n    let x = 1;  \n    let y = 2;\t\n}  \n";
    let fx = Fixture::new(&[("a.rs", original)]);
    let out = edit(
        &fx,
        json!({"path": "a.rs", "edits": [{"oldText": "fn a() {\n    let x = 1;\n    let y = 2;\n}", "newText": "fn a() {\n    let x = 10;\n    let y = 2;\n}"}]}),
    )
    .await;
    // Only the changed line loses its trailing spaces; the other lines of the block keep theirs.
    assert_eq!(fx.read("a.rs"), "fn a() {   \n    let x = 10;\n    let y = 2;\t\n}  \n");
    insta::assert_snapshot!("edit_fuzzy_trailing_spaces", render_visible(&fx, &out));
}

#[tokio::test]
async fn fuzzy_nbsp_and_dashes() {
    let original = "price:\u{00A0}100\nname:\u{00A0}pi\nrange: 1\u{2013}9\n";
    let fx = Fixture::new(&[("p.txt", original)]);
    let out = edit(
        &fx,
        json!({"path": "p.txt", "edits": [
            {"oldText": "price: 100", "newText": "price: 200"},
            {"oldText": "range: 1-9", "newText": "range: 1-10"}
        ]}),
    )
    .await;
    assert_eq!(fx.read("p.txt"), "price: 200\nname:\u{00A0}pi\nrange: 1-10\n");
    insta::assert_snapshot!("edit_fuzzy_nbsp", render_visible(&fx, &out));
}

#[tokio::test]
async fn one_fuzzy_edit_puts_every_edit_in_fuzzy_space() {
    let original = "a = \u{201C}x\u{201D}\nb = 1   \nc = 2   \n";
    let fx = Fixture::new(&[("m.txt", original)]);
    let out = edit(
        &fx,
        json!({"path": "m.txt", "edits": [
            {"oldText": "a = \"x\"", "newText": "a = \"y\""},
            {"oldText": "c = 2", "newText": "c = 3"}
        ]}),
    )
    .await;
    assert_eq!(out.ok().content.len(), 1);
    assert_eq!(fx.read("m.txt"), "a = \"y\"\nb = 1   \nc = 3\n");
}

// ---------------------------------------------------------------------------------------------
// pi's argument shims
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn stringified_edits() {
    let fx = Fixture::new(&[("a.txt", "one\ntwo\n")]);
    let edits = json!([{"oldText": "two", "newText": "2"}]).to_string();
    let out = edit(&fx, json!({"path": "a.txt", "edits": edits})).await;
    insta::assert_snapshot!("edit_stringified_edits", fx.render(&out));
}

#[tokio::test]
async fn legacy_old_text_new_text() {
    let fx = Fixture::new(&[("a.txt", "one\ntwo\n")]);
    let out = edit(&fx, json!({"path": "a.txt", "oldText": "one", "newText": "1"})).await;
    insta::assert_snapshot!("edit_legacy_old_new_text", fx.render(&out));
}

#[tokio::test]
async fn legacy_pair_joins_existing_edits() {
    let fx = Fixture::new(&[("a.txt", "one\ntwo\n")]);
    let out = edit(
        &fx,
        json!({"path": "a.txt", "edits": [{"oldText": "one", "newText": "1"}], "oldText": "two", "newText": "2"}),
    )
    .await;
    assert_eq!(out.ok().content.len(), 1);
    assert_eq!(out.text(), "Successfully replaced 2 block(s) in a.txt.");
    assert_eq!(fx.read("a.txt"), "1\n2\n");
}

// ---------------------------------------------------------------------------------------------
// pi's errors: nothing changes on disk
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn empty_edits() {
    let fx = Fixture::new(&[("a.txt", "one\n")]);
    let out = edit(&fx, json!({"path": "a.txt", "edits": []})).await;
    insta::assert_snapshot!("edit_empty_edits", fx.render(&out));
}

#[tokio::test]
async fn not_found_single() {
    let fx = Fixture::new(&[("a.txt", "one\ntwo\n")]);
    let out = edit(
        &fx,
        json!({"path": "a.txt", "edits": [{"oldText": "three", "newText": "3"}]}),
    )
    .await;
    insta::assert_snapshot!("edit_not_found", fx.render(&out));
}

#[tokio::test]
async fn not_found_multi() {
    let fx = Fixture::new(&[("a.txt", "one\ntwo\n")]);
    let out = edit(
        &fx,
        json!({"path": "a.txt", "edits": [{"oldText": "one", "newText": "1"}, {"oldText": "three", "newText": "3"}]}),
    )
    .await;
    insta::assert_snapshot!("edit_not_found_multi", fx.render(&out));
}

#[tokio::test]
async fn duplicate_single() {
    let fx = Fixture::new(&[("a.txt", "x = 1\ny = 1\nz = 1\n")]);
    let out = edit(
        &fx,
        json!({"path": "a.txt", "edits": [{"oldText": "= 1", "newText": "= 2"}]}),
    )
    .await;
    insta::assert_snapshot!("edit_duplicate", fx.render(&out));
}

#[tokio::test]
async fn duplicate_multi() {
    let fx = Fixture::new(&[("a.txt", "x = 1\ny = 1\n")]);
    let out = edit(
        &fx,
        json!({"path": "a.txt", "edits": [{"oldText": "x", "newText": "a"}, {"oldText": "= 1", "newText": "= 2"}]}),
    )
    .await;
    insta::assert_snapshot!("edit_duplicate_multi", fx.render(&out));
}

#[tokio::test]
async fn duplicate_counted_after_fuzzy_normalisation() {
    // One exact occurrence, but two once the trailing spaces are ignored.
    let fx = Fixture::new(&[("a.txt", "let a = 1;\nlet a = 1;   \n")]);
    let out = edit(
        &fx,
        json!({"path": "a.txt", "edits": [{"oldText": "let a = 1;\n", "newText": "let b = 1;\n"}]}),
    )
    .await;
    assert!(
        out.err().starts_with("Found 2 occurrences of the text in a.txt."),
        "{}",
        out.err()
    );
    assert_eq!(fx.read("a.txt"), "let a = 1;\nlet a = 1;   \n");
}

#[tokio::test]
async fn empty_old_text_single() {
    let fx = Fixture::new(&[("a.txt", "one\n")]);
    let out = edit(
        &fx,
        json!({"path": "a.txt", "edits": [{"oldText": "", "newText": "x"}]}),
    )
    .await;
    insta::assert_snapshot!("edit_empty_old_text", fx.render(&out));
}

#[tokio::test]
async fn empty_old_text_multi() {
    let fx = Fixture::new(&[("a.txt", "one\n")]);
    let out = edit(
        &fx,
        json!({"path": "a.txt", "edits": [{"oldText": "one", "newText": "1"}, {"oldText": "", "newText": "x"}]}),
    )
    .await;
    insta::assert_snapshot!("edit_empty_old_text_multi", fx.render(&out));
}

#[tokio::test]
async fn overlapping_edits() {
    let fx = Fixture::new(&[("a.txt", "alpha beta gamma\n")]);
    let out = edit(
        &fx,
        json!({"path": "a.txt", "edits": [{"oldText": "beta gamma", "newText": "B G"}, {"oldText": "alpha beta", "newText": "A B"}]}),
    )
    .await;
    insta::assert_snapshot!("edit_overlap", fx.render(&out));
}

#[tokio::test]
async fn identical_replacement_single() {
    let fx = Fixture::new(&[("a.txt", "one\n")]);
    let out = edit(
        &fx,
        json!({"path": "a.txt", "edits": [{"oldText": "one", "newText": "one"}]}),
    )
    .await;
    insta::assert_snapshot!("edit_no_change", fx.render(&out));
}

#[tokio::test]
async fn identical_replacement_multi() {
    let fx = Fixture::new(&[("a.txt", "one\ntwo\n")]);
    let out = edit(
        &fx,
        json!({"path": "a.txt", "edits": [{"oldText": "one", "newText": "one"}, {"oldText": "two", "newText": "two"}]}),
    )
    .await;
    insta::assert_snapshot!("edit_no_change_multi", fx.render(&out));
}

#[tokio::test]
async fn missing_file_is_not_created() {
    let fx = Fixture::new(&[("other.txt", "x\n")]);
    let out = edit(
        &fx,
        json!({"path": "missing.txt", "edits": [{"oldText": "a", "newText": "b"}]}),
    )
    .await;
    insta::assert_snapshot!("edit_missing_file", fx.render(&out));
}

#[tokio::test]
async fn directory_path() {
    let fx = Fixture::new(&[("dir/inner.txt", "x\n")]);
    let out = edit(&fx, json!({"path": "dir", "edits": [{"oldText": "x", "newText": "y"}]})).await;
    insta::assert_snapshot!("edit_directory", fx.render(&out));
}

#[tokio::test]
async fn binary_file_is_refused() {
    let fx = Fixture::empty();
    fx.write("image.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01");
    let out = edit(
        &fx,
        json!({"path": "image.png", "edits": [{"oldText": "PNG", "newText": "GIF"}]}),
    )
    .await;
    assert_eq!(std::fs::read(fx.path("image.png")).unwrap()[..4], *b"\x89PNG");
    insta::assert_snapshot!("edit_binary_file", fx.render(&out));
}

#[tokio::test]
async fn invalid_utf8_is_refused() {
    let fx = Fixture::empty();
    fx.write("latin1.txt", b"caf\xe9 au lait\nsecond line\n");
    let out = edit(
        &fx,
        json!({"path": "latin1.txt", "edits": [{"oldText": "second", "newText": "2nd"}]}),
    )
    .await;
    assert_eq!(
        std::fs::read(fx.path("latin1.txt")).unwrap(),
        b"caf\xe9 au lait\nsecond line\n"
    );
    insta::assert_snapshot!("edit_invalid_utf8", fx.render(&out));
}

#[tokio::test]
async fn read_only_file_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let fx = Fixture::new(&[("ro.txt", "locked\n")]);
    std::fs::set_permissions(fx.path("ro.txt"), std::fs::Permissions::from_mode(0o444)).unwrap();
    if std::fs::OpenOptions::new().write(true).open(fx.path("ro.txt")).is_ok() {
        return; // running as root: permission bits do not stop us
    }
    let out = edit(
        &fx,
        json!({"path": "ro.txt", "edits": [{"oldText": "locked", "newText": "open"}]}),
    )
    .await;
    assert_eq!(out.err(), "Could not edit file: ro.txt. Error code: EACCES.");
    assert_eq!(fx.read("ro.txt"), "locked\n");
}

#[tokio::test]
async fn aborted_before_start() {
    let fx = Fixture::new(&[("a.txt", "one\n")]);
    let ctx = ToolContext::detached();
    ctx.cancel.cancel();
    let out = fx
        .call_with(
            &fx.tool("edit"),
            json!({"path": "a.txt", "edits": [{"oldText": "one", "newText": "1"}]}),
            ctx,
        )
        .await;
    insta::assert_snapshot!("edit_aborted", fx.render(&out));
}

#[tokio::test]
async fn validation_rejects_missing_edits() {
    let fx = Fixture::new(&[("a.txt", "one\n")]);
    let out = edit(&fx, json!({"path": "a.txt"})).await;
    assert!(
        out.err().starts_with("Validation failed for tool \"edit\":"),
        "{}",
        out.err()
    );
    assert_eq!(fx.read("a.txt"), "one\n");
}

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

/// Turns random (start, length, replacement) picks into edits that are unique (exactly and in
/// fuzzy space) and do not overlap, with the expected result built by hand.
fn pick_edits(content: &str, picks: &[(usize, usize, String)]) -> Option<(Vec<Edit>, String)> {
    let fuzzy_content = normalize_for_fuzzy_match(content);
    let mut chosen: Vec<(usize, usize, String)> = Vec::new();
    for (start, len, new_text) in picks {
        if content.is_empty() {
            break;
        }
        let start = start % content.len();
        let end = (start + 1 + len % 8).min(content.len());
        let old = &content[start..end];
        let fuzzy_old = normalize_for_fuzzy_match(old);
        let unique = content.find(old) == Some(start)
            && content.matches(old).count() == 1
            && (fuzzy_old.is_empty() || fuzzy_content.matches(fuzzy_old.as_ref()).count() == 1);
        let disjoint = chosen.iter().all(|&(s, e, _)| end <= s || start >= e);
        if unique && disjoint {
            chosen.push((start, end, new_text.clone()));
        }
    }
    if chosen.is_empty() {
        return None;
    }
    let edits = chosen
        .iter()
        .map(|(s, e, new)| Edit::new(&content[*s..*e], new.as_str()))
        .collect();
    chosen.sort_by_key(|&(s, _, _)| s);
    let mut expected = String::new();
    let mut position = 0;
    for (start, end, new_text) in &chosen {
        expected.push_str(&content[position..*start]);
        expected.push_str(new_text);
        position = *end;
    }
    expected.push_str(&content[position..]);
    Some((edits, expected))
}

fn picks() -> impl Strategy<Value = Vec<(usize, usize, String)>> {
    prop::collection::vec((any::<usize>(), any::<usize>(), "[a-z\n]{0,6}"), 1..5)
}

proptest! {
    #[test]
    fn exact_edits_equal_applying_them_by_hand(content in "[abc \n]{1,60}", picks in picks()) {
        let Some((edits, expected)) = pick_edits(&content, &picks) else { return Ok(()) };
        let result = apply_edits(&content, &edits, "f.txt");
        if expected == content {
            prop_assert!(result.unwrap_err().to_string().starts_with("No changes made to f.txt."));
        } else {
            prop_assert_eq!(result.unwrap(), expected);
        }
    }

    #[test]
    fn fuzzy_edit_rewrites_only_its_line(
        tails in prop::collection::vec(("[ab\u{2018}\u{2019}\u{201C}\u{201D}\u{2014} ]{0,4}", "[ \u{00A0}\t]{0,2}"), 1..8),
        target in any::<usize>(),
    ) {
        let lines: Vec<String> = tails.iter().enumerate().map(|(i, (body, trail))| format!("<{i}>{body}{trail}")).collect();
        let content = lines.join("\n") + "\n";
        let index = target % lines.len();
        let old_text = normalize_for_fuzzy_match(&lines[index]).into_owned();
        let new_line = format!("<{index}>X");
        let new = apply_edits(&content, &[Edit::new(old_text.as_str(), new_line.as_str())], "f.txt").unwrap();
        let new_lines: Vec<&str> = new.trim_end_matches('\n').split('\n').collect();
        prop_assert_eq!(new_lines.len(), lines.len());
        for (i, line) in lines.iter().enumerate() {
            if i != index {
                prop_assert_eq!(new_lines[i], line.as_str(), "untouched line {} keeps its bytes", i);
            } else if let Some(rest) = line.strip_prefix(old_text.as_str()) {
                // Matched exactly: only the matched part changes.
                prop_assert_eq!(new_lines[i].to_owned(), format!("{new_line}{rest}"));
            } else {
                prop_assert_eq!(new_lines[i], new_line.as_str());
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// The same property end to end: the tool writes the hand-made result, with CRLF kept.
    #[test]
    fn the_tool_writes_the_hand_made_result(content in "[abc \n]{1,40}", picks in picks(), crlf in any::<bool>()) {
        let Some((edits, expected)) = pick_edits(&content, &picks) else { return Ok(()) };
        prop_assume!(expected != content);
        let on_disk = |text: &str| if crlf { text.replace('\n', "\r\n") } else { text.to_owned() };
        let crlf_file = crlf && content.contains('\n');
        let fx = Fixture::new(&[("f.txt", &if crlf_file { on_disk(&content) } else { content.clone() })]);
        let args = json!({"path": "f.txt", "edits": edits});
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let out = runtime.block_on(edit(&fx, args));
        prop_assert!(out.result.is_ok(), "{}", out.text());
        let want = if crlf_file { on_disk(&expected) } else { expected };
        prop_assert_eq!(fx.read("f.txt"), want);
    }
}
