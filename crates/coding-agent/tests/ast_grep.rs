//! `ast_grep` scenarios: the schema, match lines with continuation lines and captures, grouping by
//! directory for globs, paging with `skip`, parse issues (one per broken file, capped at twenty),
//! language inference and overrides, and the validation errors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::ast_support;

use ast_support::{Fixture, Outcome};
use pi_agent_core::ToolContext;
use serde_json::{Value, json};

async fn grep(fx: &Fixture, args: Value) -> Outcome {
    fx.call(&fx.grep_tool(), args).await
}

#[test]
fn schema_and_description() {
    let fx = Fixture::new(&[]);
    let tool = fx.grep_tool();
    let schema = tool.parameters().schema();
    assert_eq!(schema["required"], json!(["pat", "paths"]));
    assert_eq!(schema["properties"]["skip"]["type"], "number");
    insta::assert_snapshot!(
        "ast_grep_schema",
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
async fn reports_the_parse_error_of_the_searched_file_once() {
    let fx = Fixture::new(&[("broken.ts", "export function broken( { return 1; }\n")]);
    let out = grep(
        &fx,
        json!({"pat": "someUnlikelyCall($A)", "paths": [fx.path("broken.ts")]}),
    )
    .await;
    let details = out.ok().details.clone();
    assert_eq!(details["matchCount"], 0);
    let text = out.text();
    assert!(text.contains("No matches found"), "{text}");
    assert!(text.contains("Parse issues mean the query may be mis-scoped"), "{text}");
    let errors = details["parseErrors"].as_array().unwrap();
    assert_eq!(errors.len(), 1);
    let error = errors[0].as_str().unwrap();
    assert!(
        error.contains("broken.ts: parse error (syntax tree contains error nodes)"),
        "{error}"
    );
    assert!(!error.starts_with("someUnlikelyCall"), "{error}");
    insta::assert_snapshot!("ast_grep_parse_error", fx.render(&out));
}

#[tokio::test]
async fn parse_errors_are_capped_at_twenty() {
    let fx = Fixture::new(&[]);
    for i in 0..35 {
        fx.write(&format!("broken{i:02}.ts"), "export function broken( { return 1; }\n");
    }
    let out = grep(&fx, json!({"pat": "someUnlikelyCall($A)", "paths": ["."]})).await;
    let details = out.ok().details.clone();
    assert_eq!(details["parseErrors"].as_array().unwrap().len(), 20);
    assert_eq!(details["parseErrorsTotal"], 35);
    assert!(out.text().contains("Parse issues (20 / 35):"), "{}", out.text());
}

#[tokio::test]
async fn glob_paths_group_matches_by_directory() {
    let fx = Fixture::new(&[
        (
            "packages/pkg-123/src/root.ts",
            "const providerOptions = { retries: 3 };\nexport default providerOptions;\n",
        ),
        (
            "packages/pkg-123/src/nested/child.ts",
            "export function f() {\n  const providerOptions = {\n    timeout: 10,\n  };\n  return providerOptions;\n}\n",
        ),
        ("packages/pkg-123/src/ignore.js", "const providerOptions = {};\n"),
        ("outside.ts", "const providerOptions = {};\n"),
    ]);
    let glob = format!("{}/packages/pkg-*/src/**/*.ts", fx.root.display());
    let out = grep(&fx, json!({"pat": "const providerOptions = $VALUE", "paths": [glob]})).await;
    let text = out.text();
    assert!(text.lines().any(|l| l == "## root.ts (1 match)"), "{text}");
    assert!(text.lines().any(|l| l == "### child.ts (1 match)"), "{text}");
    let details = out.ok().details.clone();
    assert_eq!(
        (details["matchCount"].clone(), details["fileCount"].clone()),
        (json!(2), json!(2))
    );
    insta::assert_snapshot!("ast_grep_glob", fx.render(&out));
}

#[tokio::test]
async fn captures_and_continuation_lines() {
    let fx = Fixture::new(&[(
        "app.py",
        "import logging\n\nlogging.info(\"start %s\", name)\nlogging.warning(\n    \"slow: %d ms\",\n    elapsed,\n)\nprint(\"done\")\n",
    )]);
    let out = grep(
        &fx,
        json!({"pat": "logging.$LEVEL($MSG, $$$ARGS)", "paths": ["app.py"]}),
    )
    .await;
    insta::assert_snapshot!("ast_grep_captures", out.text());
}

#[tokio::test]
async fn skip_pages_through_the_matches() {
    let fx = Fixture::new(&[]);
    for file in 0..3 {
        let calls: String = (0..20).map(|i| format!("track({});\n", file * 20 + i)).collect();
        fx.write(&format!("src/f{file}.ts"), &calls);
    }
    let first = grep(&fx, json!({"pat": "track($N)", "paths": ["src"]})).await;
    let text = first.text();
    assert_eq!(text.lines().filter(|l| l.starts_with('*')).count(), 50);
    assert!(
        text.ends_with("Result limit reached; narrow paths or set skip to 50 for the next page."),
        "{text}"
    );
    assert_eq!(first.ok().details["limitReached"], true);
    assert_eq!(first.ok().details["matchCount"], 50);

    let second = grep(&fx, json!({"pat": "track($N)", "paths": ["src"], "skip": 50})).await;
    insta::assert_snapshot!("ast_grep_second_page", fx.render(&second));

    let past = grep(&fx, json!({"pat": "track($N)", "paths": ["src"], "skip": 100})).await;
    assert_eq!(past.text(), "No matches at skip 100: the search found 60 matches.");
}

#[tokio::test]
async fn all_matches_are_listed_including_nested_ones() {
    let fx = Fixture::new(&[("a.rs", "fn main() {\n    wrap(wrap(1));\n}\n")]);
    let out = grep(&fx, json!({"pat": "wrap($A)", "paths": ["a.rs"]})).await;
    assert_eq!(
        out.text(),
        "# a.rs (2 matches)\n*2|    wrap(wrap(1));\n  meta: A=wrap(1)\n*2|    wrap(wrap(1));\n  meta: A=1"
    );
}

#[tokio::test]
async fn languages_and_overrides() {
    let fx = Fixture::new(&[
        ("main.go", "package main\n\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n"),
        ("lib.rs", "fn f() { println!(\"hi\"); }\n"),
        ("notes.md", "# notes\n"),
    ]);
    let mixed = grep(&fx, json!({"pat": "fmt.Println($A)", "paths": ["."]})).await;
    assert_eq!(
        mixed.err(),
        "`lang` is required for ast_grep when path/glob resolves to multiple languages: go, markdown, rust"
    );
    let go = grep(&fx, json!({"pat": "fmt.Println($A)", "paths": ["."], "lang": "golang"})).await;
    assert_eq!(
        go.text(),
        "# main.go (1 match)\n*4|\tfmt.Println(\"hi\")\n  meta: A=\"hi\""
    );
    let rust = grep(&fx, json!({"pat": "println!($$$)", "paths": ["lib.rs"]})).await;
    assert_eq!(rust.ok().details["matchCount"], 1);
}

#[tokio::test]
async fn an_invalid_pattern_is_a_parse_issue() {
    let fx = Fixture::new(&[("a.ts", "foo(1);\n")]);
    let out = grep(&fx, json!({"pat": "foo(; bar", "paths": ["a.ts"]})).await;
    insta::assert_snapshot!("ast_grep_invalid_pattern", out.text());
}

#[tokio::test]
async fn no_matches() {
    let fx = Fixture::new(&[("a.ts", "foo(1);\n")]);
    let out = grep(&fx, json!({"pat": "bar($A)", "paths": ["a.ts"]})).await;
    assert_eq!(out.text(), "No matches found");
    assert_eq!(
        out.ok().details,
        json!({
            "matchCount": 0,
            "fileCount": 0,
            "filesSearched": 1,
            "limitReached": false,
            "scopePath": "a.ts",
            "skip": 0,
            "fileMatches": []
        })
    );
}

#[tokio::test]
async fn validation_errors() {
    let fx = Fixture::new(&[("a.ts", "foo(1);\n")]);
    let tool = fx.grep_tool();
    let cases = [
        ("blank pattern", json!({"pat": "  ", "paths": ["a.ts"]})),
        (
            "negative skip",
            json!({"pat": "foo($A)", "paths": ["a.ts"], "skip": -1}),
        ),
        ("blank paths", json!({"pat": "foo($A)", "paths": [""]})),
        ("missing paths", json!({"pat": "foo($A)", "paths": ["nope.ts"]})),
        ("url", json!({"pat": "foo($A)", "paths": ["http://example.com/x.ts"]})),
        (
            "unsupported lang",
            json!({"pat": "foo($A)", "paths": ["a.ts"], "lang": "brainfuck"}),
        ),
        ("no files match", json!({"pat": "foo($A)", "paths": ["*.txt"]})),
    ];
    let mut rendered = String::new();
    for (label, args) in cases {
        let out = fx.call_raw(&tool, args).await;
        rendered.push_str(&format!("== {label}\n{}\n", fx.redact(out.err())));
    }
    insta::assert_snapshot!("ast_grep_validation_errors", rendered);
}

#[tokio::test]
async fn a_cancelled_call_is_aborted() {
    let fx = Fixture::new(&[("a.ts", "foo(1);\n")]);
    let ctx = ToolContext::detached();
    ctx.cancel.cancel();
    let out = fx
        .call_with(&fx.grep_tool(), json!({"pat": "foo($A)", "paths": ["a.ts"]}), ctx)
        .await;
    assert_eq!(out.err(), "Operation aborted");
}
