//! `ast_edit` scenarios: the schema, the `-line:col` / `+line:col` preview and its grouping, the pending
//! action (preview writes nothing, apply writes, stale apply writes nothing, apply twice), globs,
//! gitignore and `node_modules`, language inference and the alias table, twenty-one languages, overlap
//! rejection, the touched-files cap, parse issues and every validation error.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::ast_support;

use ast_support::{Fixture, Outcome};
use pi_agent_core::ToolContext;
use serde_json::{Value, json};

fn op(pat: &str, out: &str) -> Value {
    json!({"pat": pat, "out": out})
}

async fn edit(fx: &Fixture, ops: Value, paths: Value) -> Outcome {
    fx.call(&fx.edit_tool(), json!({"ops": ops, "paths": paths})).await
}

#[test]
fn schema_and_description() {
    let fx = Fixture::new(&[]);
    let tool = fx.edit_tool();
    let schema = tool.parameters().schema();
    assert_eq!(schema["properties"]["ops"]["items"]["required"], json!(["pat", "out"]));
    assert_eq!(
        schema["properties"]["ops"]["items"]["properties"]["pat"]["type"],
        "string"
    );
    assert_eq!(
        schema["properties"]["ops"]["items"]["properties"]["out"]["type"],
        "string"
    );
    assert!(schema["properties"].get("preview").is_none());
    assert_eq!(schema["required"], json!(["ops", "paths"]));
    insta::assert_snapshot!(
        "ast_edit_schema",
        format!(
            "name: {}\nlabel: {}\nexecution mode: {:?}\ndescription:\n{}\nparameters:\n{}",
            tool.name(),
            tool.label(),
            tool.execution_mode(),
            tool.description(),
            serde_json::to_string_pretty(schema).unwrap()
        )
    );
}

#[tokio::test]
async fn preview_lines_have_line_and_column_prefixes() {
    let fx = Fixture::new(&[("legacy.ts", "legacyWrap(x, value)\n")]);
    let out = edit(
        &fx,
        json!([op("legacyWrap($A, $B)", "modernWrap($A, $B)")]),
        json!([fx.path("legacy.ts")]),
    )
    .await;
    let text = out.text();
    let minus = text.lines().find(|l| l.starts_with('-')).unwrap();
    let plus = text.lines().find(|l| l.starts_with('+')).unwrap();
    let prefix = |line: &str| line.split(' ').next().unwrap().len();
    assert!(
        minus.split(' ').next().unwrap()[1..]
            .split(':')
            .all(|n| n.parse::<u32>().is_ok()),
        "{minus}"
    );
    assert!(
        plus.split(' ').next().unwrap()[1..]
            .split(':')
            .all(|n| n.parse::<u32>().is_ok()),
        "{plus}"
    );
    assert_eq!(prefix(minus), prefix(plus));
    insta::assert_snapshot!("ast_edit_single_file_preview", fx.render(&out));
}

#[tokio::test]
async fn preview_pushes_a_pending_action_and_writes_nothing_until_applied() {
    let fx = Fixture::new(&[("legacy.ts", "legacyWrap(x, value)\n")]);
    let out = edit(
        &fx,
        json!([op("legacyWrap($A, $B)", "modernWrap($A, $B)")]),
        json!(["legacy.ts"]),
    )
    .await;
    assert_eq!(out.ok().details["applied"], false);
    assert_eq!(
        fx.read("legacy.ts"),
        "legacyWrap(x, value)\n",
        "the preview wrote nothing"
    );
    assert_eq!(fx.store.labels(), ["AST Edit: 1 replacement in 1 file"]);
    let action = fx.store.peek().unwrap();
    assert_eq!(action.source_tool_name, "ast_edit");
    assert_eq!(action.details.as_ref(), Some(&out.ok().details));

    let applied = fx.apply_top().await;
    assert_eq!(applied.text(), "Applied 1 replacement in 1 file.");
    assert_eq!(applied.details()["totalReplacements"], 1);
    assert_eq!(fx.read("legacy.ts"), "modernWrap(x, value)\n");
    insta::assert_snapshot!("ast_edit_apply_result", fx.render(&applied));

    // A second apply of the same preview finds the file changed and applies nothing again.
    let again = fx.apply_top().await;
    assert!(
        again
            .err()
            .starts_with("Preview is stale / no longer matches; no replacements were applied.")
    );
    assert_eq!(fx.read("legacy.ts"), "modernWrap(x, value)\n");
}

#[tokio::test]
async fn stale_apply_writes_nothing() {
    let fx = Fixture::new(&[
        ("legacy.ts", "legacyWrap(x, value)\n"),
        ("other.ts", "legacyWrap(a, b)\n"),
    ]);
    let out = edit(
        &fx,
        json!([op("legacyWrap($A, $B)", "modernWrap($A, $B)")]),
        json!(["."]),
    )
    .await;
    assert_eq!(out.ok().details["totalReplacements"], 2);
    fx.write("legacy.ts", "otherWrap(x, value)\n");
    let applied = fx.apply_top().await;
    let text = applied.err();
    assert!(text.contains("Preview is stale / no longer matches"), "{text}");
    assert!(text.contains("no replacements were applied"), "{text}");
    assert_eq!(applied.details()["totalReplacements"], 0);
    assert_eq!(fx.read("legacy.ts"), "otherWrap(x, value)\n");
    assert_eq!(
        fx.read("other.ts"),
        "legacyWrap(a, b)\n",
        "the unchanged file is not written either"
    );
    assert_eq!(
        fx.store.len(),
        1,
        "a failed apply leaves the action for resolve to keep"
    );
    insta::assert_snapshot!("ast_edit_stale_apply", fx.render(&applied));
}

#[tokio::test]
async fn a_deleted_file_makes_the_preview_stale() {
    let fx = Fixture::new(&[("a.ts", "oldCall(1);\n"), ("b.ts", "oldCall(2);\n")]);
    edit(&fx, json!([op("oldCall($A)", "newCall($A)")]), json!(["."]))
        .await
        .ok();
    std::fs::remove_file(fx.path("b.ts")).unwrap();
    let applied = fx.apply_top().await;
    assert!(applied.err().ends_with("- b.ts (deleted)"), "{}", applied.err());
    assert_eq!(fx.read("a.ts"), "oldCall(1);\n");
}

#[tokio::test]
async fn glob_paths_group_the_preview_by_directory() {
    let fx = Fixture::new(&[
        (
            "packages/pkg-123/src/root.ts",
            "const providerOptions = legacyWrap(a, b);\n",
        ),
        (
            "packages/pkg-123/src/nested/child.ts",
            "export function f() {\n  return legacyWrap(x, y);\n}\n",
        ),
        ("packages/pkg-123/src/ignore.js", "legacyWrap(a, b);\n"),
        ("outside.ts", "legacyWrap(a, b);\n"),
    ]);
    let glob = format!("{}/packages/pkg-*/src/**/*.ts", fx.root.display());
    let out = edit(
        &fx,
        json!([op("legacyWrap($A, $B)", "modernWrap($A, $B)")]),
        json!([glob]),
    )
    .await;
    let text = out.text();
    assert!(text.lines().any(|l| l == "## root.ts (1 replacement)"), "{text}");
    assert!(text.lines().any(|l| l == "### child.ts (1 replacement)"), "{text}");
    assert!(!text.contains("ignore.js") && !text.contains("outside.ts"));
    let details = out.ok().details.clone();
    assert_eq!(details["totalReplacements"], 2);
    assert_eq!(
        details["fileReplacements"],
        json!([
            {"path": "packages/pkg-123/src/nested/child.ts", "count": 1},
            {"path": "packages/pkg-123/src/root.ts", "count": 1}
        ])
    );
    insta::assert_snapshot!("ast_edit_glob_preview", fx.render(&out));

    let applied = fx.apply_top().await;
    assert_eq!(applied.text(), "Applied 2 replacements in 2 files.");
    insta::assert_snapshot!("ast_edit_glob_tree_after_apply", fx.tree());
}

#[tokio::test]
async fn directory_scope_with_root_files_and_several_replacements() {
    let fx = Fixture::new(&[
        ("main.py", "print(fmt(1))\nprint(fmt(2), fmt(3))\n"),
        ("lib/util.py", "def f():\n    return fmt(4)\n"),
        ("lib/deep/er/x.py", "fmt(5)\n"),
        ("README.md", "fmt(6)\n"),
    ]);
    let ops = json!([op("fmt($A)", "format_value($A)")]);
    let mixed = edit(&fx, ops.clone(), json!(["."])).await;
    assert_eq!(
        mixed.err(),
        "`lang` is required for ast_edit when path/glob resolves to multiple languages: markdown, python"
    );
    let out = fx
        .call(&fx.edit_tool(), json!({"ops": ops, "paths": ["."], "lang": "py"}))
        .await;
    insta::assert_snapshot!("ast_edit_directory_preview", fx.render(&out));
    assert_eq!(fx.store.labels(), ["AST Edit: 5 replacements in 3 files"]);
}

#[tokio::test]
async fn multi_line_replacements_show_their_first_lines() {
    let fx = Fixture::new(&[(
        "a.js",
        "function greet(name) {\n  return `hi ${name}`;\n}\nconst x = greet(\"a\");\n",
    )]);
    let out = edit(
        &fx,
        json!([op(
            "function $F($$$P) { $$$BODY }",
            "const $F = ($$$P) => {\n  $$$BODY\n};"
        )]),
        json!(["a.js"]),
    )
    .await;
    insta::assert_snapshot!("ast_edit_multi_line_preview", out.text());
    fx.apply_top().await.ok();
    insta::assert_snapshot!("ast_edit_multi_line_applied", fx.read("a.js"));
}

#[tokio::test]
async fn several_ops_apply_in_pattern_order_and_empty_out_deletes() {
    let fx = Fixture::new(&[("a.ts", "debugger;\nfoo(1);\nbar(2);\n")]);
    let ops = json!([
        op("foo($A)", "baz($A)"),
        op("debugger;", ""),
        op("bar($A)", "qux($A, $A)")
    ]);
    let out = edit(&fx, ops, json!(["a.ts"])).await;
    insta::assert_snapshot!("ast_edit_several_ops_preview", out.text());
    fx.apply_top().await.ok();
    assert_eq!(fx.read("a.ts"), "\nbaz(1);\nqux(2, 2);\n");
}

#[tokio::test]
async fn overlapping_replacements_are_rejected_at_preview() {
    let fx = Fixture::new(&[("a.ts", "foo(1);\n")]);
    let out = edit(
        &fx,
        json!([op("foo($A)", "bar($A)"), op("foo(1)", "one()")]),
        json!(["a.ts"]),
    )
    .await;
    assert_eq!(
        out.err(),
        "Overlapping replacements detected; refine pattern to avoid ambiguous edits (a.ts: 1:1 `foo($A)` and 1:1 `foo(1)`)"
    );
    assert!(fx.store.is_empty(), "no pending action for a rejected preview");
}

#[tokio::test]
async fn nested_matches_of_one_pattern_rewrite_the_outer_one() {
    let fx = Fixture::new(&[("a.rs", "fn main() {\n    wrap(wrap(1));\n}\n")]);
    let out = edit(&fx, json!([op("wrap($A)", "boxed($A)")]), json!(["a.rs"])).await;
    assert_eq!(out.ok().details["totalReplacements"], 1);
    fx.apply_top().await.ok();
    assert_eq!(fx.read("a.rs"), "fn main() {\n    boxed(wrap(1));\n}\n");
}

#[tokio::test]
async fn no_replacements_means_no_pending_action() {
    let fx = Fixture::new(&[("a.ts", "foo(1);\n")]);
    let out = edit(&fx, json!([op("nothingLikeThis($A)", "x")]), json!(["a.ts"])).await;
    assert_eq!(out.text(), "No replacements made");
    assert_eq!(out.ok().details["totalReplacements"], 0);
    assert!(fx.store.is_empty());
}

#[tokio::test]
async fn parse_issues_are_reported_and_broken_files_skipped() {
    let fx = Fixture::new(&[
        ("good.ts", "oldCall(1);\n"),
        ("broken.ts", "export function broken( { oldCall(2); }\n"),
        ("unrelated_broken.ts", "export function ( {\n"),
    ]);
    let ops = json!([op("oldCall($A)", "newCall($A)"), op("class {", "x")]);
    let out = edit(&fx, ops, json!(["."])).await;
    insta::assert_snapshot!("ast_edit_parse_issues", fx.render(&out));
    let details = out.ok().details.clone();
    assert_eq!(details["parseErrorsTotal"], 2);
    assert_eq!(details["filesSearched"], 3);
    assert_eq!(
        details["filesParsed"], 2,
        "a file without the pattern's text is not parsed"
    );

    let none = edit(&fx, json!([op("oldCall($A)", "newCall($A)")]), json!(["broken.ts"])).await;
    assert_eq!(
        none.text(),
        "No replacements made\nParse issues:\n- broken.ts: parse error (syntax tree contains error nodes)"
    );
}

#[tokio::test]
async fn parse_issues_are_capped_at_twenty() {
    let fx = Fixture::new(&[]);
    for i in 0..35 {
        fx.write(&format!("broken{i:02}.ts"), "oldCall(1); export function ( {\n");
    }
    let out = edit(&fx, json!([op("oldCall($A)", "newCall($A)")]), json!(["."])).await;
    let details = out.ok().details.clone();
    assert_eq!(details["parseErrors"].as_array().unwrap().len(), 20);
    assert_eq!(details["parseErrorsTotal"], 35);
    assert!(
        out.text()
            .starts_with("No replacements made\nParse issues (20 / 35):\n- broken00.ts: parse error")
    );
}

#[tokio::test]
async fn gitignored_files_and_node_modules_are_skipped() {
    let fx = Fixture::new(&[
        (".gitignore", "generated/\n"),
        ("src/a.ts", "oldCall(1);\n"),
        ("generated/b.ts", "oldCall(2);\n"),
        ("node_modules/lib/index.ts", "oldCall(3);\n"),
        (".config/c.ts", "oldCall(4);\n"),
    ]);
    let out = edit(&fx, json!([op("oldCall($A)", "newCall($A)")]), json!(["."])).await;
    assert_eq!(out.ok().details["files"], json!([".config/c.ts", "src/a.ts"]));
    fx.store.clear();
    let out = edit(
        &fx,
        json!([op("oldCall($A)", "newCall($A)")]),
        json!(["node_modules/**/*.ts"]),
    )
    .await;
    assert_eq!(out.ok().details["files"], json!(["node_modules/lib/index.ts"]));
    fx.store.clear();
    let out = edit(
        &fx,
        json!([op("oldCall($A)", "newCall($A)")]),
        json!(["generated/b.ts"]),
    )
    .await;
    assert_eq!(
        out.ok().details["files"],
        json!(["generated/b.ts"]),
        "named files are searched"
    );
}

#[tokio::test]
async fn the_touched_files_cap_sets_limit_reached() {
    let fx = Fixture::new(&[
        ("a.ts", "oldCall(1);\n"),
        ("b.ts", "oldCall(2);\n"),
        ("c.ts", "oldCall(3);\n"),
    ]);
    let out = fx
        .call(
            &fx.edit_tool_max(2),
            json!({"ops": [op("oldCall($A)", "newCall($A)")], "paths": ["."]}),
        )
        .await;
    insta::assert_snapshot!("ast_edit_limit_reached", fx.render(&out));
    assert_eq!(fx.store.labels(), ["AST Edit: 2 replacements in 2 files"]);
    fx.apply_top().await.ok();
    assert_eq!(fx.read("c.ts"), "oldCall(3);\n");
    assert_eq!(fx.read("b.ts"), "newCall(2);\n");
}

#[tokio::test]
async fn a_multi_file_apply_writes_every_file_and_leaves_no_temp_file() {
    let fx = Fixture::new(&[]);
    for i in 0..40 {
        fx.write(
            &format!("d{}/f{i:02}.go", i % 4),
            &format!("package d\n\nfunc f() {{ fmt.Println({i}) }}\n"),
        );
    }
    edit(&fx, json!([op("fmt.Println($A)", "log.Print($A)")]), json!(["."]))
        .await
        .ok();
    assert_eq!(fx.store.labels(), ["AST Edit: 40 replacements in 40 files"]);
    assert_eq!(fx.apply_top().await.text(), "Applied 40 replacements in 40 files.");
    assert_eq!(fx.file_names().len(), 40);
    assert_eq!(fx.read("d3/f39.go"), "package d\n\nfunc f() { log.Print(39) }\n");
}

#[tokio::test]
async fn languages_are_inferred_from_extensions() {
    let cases = [
        ("a.ts", "oldCall(1);\n", "typescript"),
        ("a.tsx", "const e = <A>{oldCall(1)}</A>;\n", "tsx"),
        ("a.mjs", "oldCall(1);\n", "javascript"),
        ("a.rs", "fn f() { oldCall(1); }\n", "rust"),
        ("a.py", "oldCall(1)\n", "python"),
        ("a.rb", "oldCall(1)\n", "ruby"),
        ("a.kt", "fun f() { oldCall(1) }\n", "kotlin"),
    ];
    for (file, source, name) in cases {
        let fx = Fixture::new(&[(file, source)]);
        let out = edit(&fx, json!([op("oldCall($A)", "newCall($A)")]), json!([file])).await;
        assert_eq!(out.ok().details["totalReplacements"], 1, "{name}: {}", out.text());
        fx.apply_top().await.ok();
        assert!(fx.read(file).contains("newCall(1)"), "{name}");
    }
}

#[tokio::test]
async fn mixed_languages_need_lang() {
    let fx = Fixture::new(&[("a.ts", "oldCall(1);\n"), ("b.rs", "fn f() { oldCall(1); }\n")]);
    let out = edit(&fx, json!([op("oldCall($A)", "newCall($A)")]), json!(["."])).await;
    assert_eq!(
        out.err(),
        "`lang` is required for ast_edit when path/glob resolves to multiple languages: rust, typescript"
    );
    let out = fx
        .call(
            &fx.edit_tool(),
            json!({"ops": [op("oldCall($A)", "newCall($A)")], "paths": ["."], "lang": "RS"}),
        )
        .await;
    assert_eq!(out.ok().details["files"], json!(["b.rs"]));
}

#[tokio::test]
async fn lang_aliases() {
    // (alias, source of `code.txt`, source after the rewrite); the pattern is `oldCall($A)` except for bash.
    let cases = [
        ("ts", "oldCall(1);\n", "newCall(1);\n"),
        ("TypeScript", "oldCall(1);\n", "newCall(1);\n"),
        (
            "jsx",
            "const a = <b>{oldCall(1)}</b>;\n",
            "const a = <b>{newCall(1)}</b>;\n",
        ),
        ("js", "oldCall(1);\n", "newCall(1);\n"),
        ("rs", "fn f() { oldCall(1); }\n", "fn f() { newCall(1); }\n"),
        ("kotlin", "fun f() { oldCall(1) }\n", "fun f() { newCall(1) }\n"),
        ("c", "void f() { oldCall(1); }\n", "void f() { newCall(1); }\n"),
        ("cpp", "void f() { oldCall(1); }\n", "void f() { newCall(1); }\n"),
        ("C++", "void f() { oldCall(1); }\n", "void f() { newCall(1); }\n"),
        ("bash", "oldCall 1\n", "newCall 1\n"),
    ];
    for (alias, source, expected) in cases {
        let fx = Fixture::new(&[("code.txt", source)]);
        let (pat, out) = if alias == "bash" {
            ("oldCall $A", "newCall $A")
        } else {
            ("oldCall($A)", "newCall($A)")
        };
        let preview = fx
            .call(
                &fx.edit_tool(),
                json!({"ops": [op(pat, out)], "paths": ["code.txt"], "lang": alias}),
            )
            .await;
        assert_eq!(preview.details()["totalReplacements"], 1, "{alias}: {}", preview.text());
        fx.apply_top().await.ok();
        assert_eq!(fx.read("code.txt"), expected, "{alias}");
    }
    let fx = Fixture::new(&[("code.txt", "x\n")]);
    let out = fx
        .call(
            &fx.edit_tool(),
            json!({"ops": [op("a", "b")], "paths": ["code.txt"], "lang": "brainfuck"}),
        )
        .await;
    assert!(
        out.err()
            .starts_with("Unsupported language 'brainfuck'. Supported: bash, c, c++, cc, cpp, cs, csharp, css"),
        "{}",
        out.err()
    );
}

/// One rewrite per language: (file, source, pattern, template, expected file after apply).
const LANGUAGE_CASES: &[(&str, &str, &str, &str, &str)] = &[
    (
        "a.rs",
        "fn main() {\n    let x = old_call(1);\n}\n",
        "old_call($A)",
        "new_call($A)",
        "fn main() {\n    let x = new_call(1);\n}\n",
    ),
    (
        "a.py",
        "result = old_call(1)\n",
        "old_call($A)",
        "new_call($A)",
        "result = new_call(1)\n",
    ),
    (
        "a.ts",
        "const x: number = oldCall(1);\n",
        "oldCall($A)",
        "newCall($A)",
        "const x: number = newCall(1);\n",
    ),
    (
        "a.tsx",
        "const el = <Button label={x} />;\n",
        "<Button label={$L} />",
        "<Link label={$L} />",
        "const el = <Link label={x} />;\n",
    ),
    ("a.js", "var x = 1;\n", "var $A = $B", "let $A = $B", "let x = 1;\n"),
    (
        "a.go",
        "package main\n\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n",
        "fmt.Println($A)",
        "log.Print($A)",
        "package main\n\nfunc main() {\n\tlog.Print(\"hi\")\n}\n",
    ),
    (
        "A.java",
        "class A {\n  void f() {\n    System.out.println(\"hi\");\n  }\n}\n",
        "System.out.println($A)",
        "LOG.info($A)",
        "class A {\n  void f() {\n    LOG.info(\"hi\");\n  }\n}\n",
    ),
    (
        "a.c",
        "int main() {\n  printf(\"hi\");\n  return 0;\n}\n",
        "printf($A)",
        "puts($A)",
        "int main() {\n  puts(\"hi\");\n  return 0;\n}\n",
    ),
    (
        "a.cpp",
        "int main() {\n  std::cout << 1;\n}\n",
        "std::cout << $A",
        "std::cerr << $A",
        "int main() {\n  std::cerr << 1;\n}\n",
    ),
    (
        "A.cs",
        "class A { void F() { Console.WriteLine(\"hi\"); } }\n",
        "Console.WriteLine($A)",
        "Log.Info($A)",
        "class A { void F() { Log.Info(\"hi\"); } }\n",
    ),
    (
        "a.rb",
        "puts old_call(1)\n",
        "old_call($A)",
        "new_call($A)",
        "puts new_call(1)\n",
    ),
    (
        "a.sh",
        "echo hello\n",
        "echo $A",
        "printf '%s\\n' $A",
        "printf '%s\\n' hello\n",
    ),
    (
        "a.json",
        "{\"name\": \"old\"}\n",
        "\"old\"",
        "\"new\"",
        "{\"name\": \"new\"}\n",
    ),
    (
        "a.yaml",
        "name: old\nother: 1\n",
        "name: $V",
        "title: $V",
        "title: old\nother: 1\n",
    ),
    (
        "a.html",
        "<p><b>hi</b></p>\n",
        "<b>$T</b>",
        "<strong>$T</strong>",
        "<p><strong>hi</strong></p>\n",
    ),
    (
        "a.css",
        "a { color: red; }\n",
        "color: $V",
        "background: $V",
        "a { background: red; }\n",
    ),
    (
        "a.kt",
        "fun main() {\n    println(\"hi\")\n}\n",
        "println($A)",
        "log($A)",
        "fun main() {\n    log(\"hi\")\n}\n",
    ),
    (
        "a.swift",
        "print(\"hi\")\n",
        "print($A)",
        "debugPrint($A)",
        "debugPrint(\"hi\")\n",
    ),
    (
        "a.php",
        "<?php\necho strlen($s);\n",
        "strlen($A)",
        "mb_strlen($A)",
        "<?php\necho mb_strlen($s);\n",
    ),
    (
        "a.scala",
        "object A { println(\"hi\") }\n",
        "println($A)",
        "log($A)",
        "object A { log(\"hi\") }\n",
    ),
    (
        "a.lua",
        "print(\"hi\")\n",
        "print($A)",
        "io.write($A)",
        "io.write(\"hi\")\n",
    ),
];

#[tokio::test]
async fn every_language_rewrites() {
    let mut failures = Vec::new();
    for (file, source, pat, out, expected) in LANGUAGE_CASES {
        let fx = Fixture::new(&[(file, source)]);
        let preview = edit(&fx, json!([op(pat, out)]), json!([file])).await;
        if preview.details()["totalReplacements"] != 1 {
            failures.push(format!("{file}: preview: {}", preview.text()));
            continue;
        }
        let applied = fx.apply_top().await;
        let written = fx.read(file);
        if written != *expected {
            failures.push(format!("{file}: apply: {} -> {written:?}", applied.text()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test]
async fn validation_errors() {
    let fx = Fixture::new(&[("a.ts", "oldCall(1);\n"), ("Makefile", "all:\n")]);
    let tool = fx.edit_tool();
    let good = json!([op("oldCall($A)", "newCall($A)")]);
    let cases = [
        ("empty ops (schema)", json!({"ops": [], "paths": ["a.ts"]}), true),
        ("empty ops", json!({"ops": [], "paths": ["a.ts"]}), false),
        (
            "empty pattern",
            json!({"ops": [op("oldCall($A)", "x"), op("", "y")], "paths": ["a.ts"]}),
            false,
        ),
        (
            "duplicate pattern",
            json!({"ops": [op("oldCall($A)", "x"), op("oldCall($A)", "y")], "paths": ["a.ts"]}),
            false,
        ),
        ("blank paths", json!({"ops": good, "paths": ["", "  "]}), false),
        (
            "missing paths",
            json!({"ops": good, "paths": ["nope.ts", "gone/"]}),
            false,
        ),
        (
            "url",
            json!({"ops": good, "paths": ["https://example.com/a.ts"]}),
            false,
        ),
        (
            "unsupported lang",
            json!({"ops": good, "paths": ["a.ts"], "lang": "cobol"}),
            false,
        ),
        (
            "no language from file",
            json!({"ops": good, "paths": ["Makefile"]}),
            false,
        ),
        ("no files match", json!({"ops": good, "paths": ["*.md"]}), false),
    ];
    let mut rendered = String::new();
    for (label, args, validate) in cases {
        let out = if validate {
            fx.call(&tool, args).await
        } else {
            fx.call_raw(&tool, args).await
        };
        rendered.push_str(&format!("== {label}\n{}\n", fx.redact(out.err())));
    }
    insta::assert_snapshot!("ast_edit_validation_errors", rendered);
    assert!(fx.store.is_empty());
}

#[tokio::test]
async fn missing_paths_are_dropped_when_one_exists() {
    let fx = Fixture::new(&[("a.ts", "oldCall(1);\n")]);
    let out = edit(
        &fx,
        json!([op("oldCall($A)", "newCall($A)")]),
        json!(["nope.ts", "a.ts"]),
    )
    .await;
    assert_eq!(out.ok().details["totalReplacements"], 1);
}

#[tokio::test]
async fn a_cancelled_call_is_aborted() {
    let fx = Fixture::new(&[("a.ts", "oldCall(1);\n")]);
    let ctx = ToolContext::detached();
    ctx.cancel.cancel();
    let out = fx
        .call_with(
            &fx.edit_tool(),
            json!({"ops": [op("oldCall($A)", "newCall($A)")], "paths": ["a.ts"]}),
            ctx,
        )
        .await;
    assert_eq!(out.err(), "Operation aborted");
    assert!(fx.store.is_empty());
}

#[tokio::test]
async fn crlf_files_keep_their_line_endings() {
    let fx = Fixture::new(&[("a.ts", "if (a) {\r\n  go();\r\n}\r\n")]);
    edit(&fx, json!([op("go()", "first();\nsecond()")]), json!(["a.ts"]))
        .await
        .ok();
    fx.apply_top().await.ok();
    assert_eq!(fx.read("a.ts"), "if (a) {\r\n  first();\r\n  second();\r\n}\r\n");
}

#[tokio::test]
async fn a_huge_preview_is_cut_but_applies_everything() {
    let fx = Fixture::new(&[]);
    for file in 0..30 {
        let calls: String = (0..40)
            .map(|i| format!("registerHandler(\"event-{file}-{i}\", handleEverythingThatCanHappen{i});\n"))
            .collect();
        fx.write(&format!("src/f{file:02}.ts"), &calls);
    }
    let out = edit(
        &fx,
        json!([op("registerHandler($A, $B)", "bus.on($A, $B)")]),
        json!(["src"]),
    )
    .await;
    let text = out.text();
    assert!(text.len() < 60_000, "{} bytes", text.len());
    let last = text.lines().last().unwrap();
    assert!(
        last.starts_with("[Preview cut at 50KB: ")
            && last.ends_with(" not listed. Applying writes all 1200; narrow paths to review them.]"),
        "{last}"
    );
    assert_eq!(out.ok().details["changes"].as_array().unwrap().len(), 200);
    assert_eq!(fx.apply_top().await.text(), "Applied 1200 replacements in 30 files.");
    assert!(
        fx.read("src/f29.ts")
            .ends_with("bus.on(\"event-29-39\", handleEverythingThatCanHappen39);\n")
    );
}

#[tokio::test]
async fn a_symlink_next_to_its_target_is_rewritten_once() {
    let fx = Fixture::new(&[("real.ts", "oldCall(1);\n")]);
    std::os::unix::fs::symlink(fx.path("real.ts"), fx.path("link.ts")).unwrap();
    let out = edit(
        &fx,
        json!([op("oldCall($A)", "newCall($A)")]),
        json!(["link.ts", "real.ts"]),
    )
    .await;
    assert_eq!(out.ok().details["totalReplacements"], 1);
    fx.apply_top().await.ok();
    assert_eq!(fx.read("real.ts"), "newCall(1);\n");
    assert!(
        std::fs::symlink_metadata(fx.path("link.ts"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}
