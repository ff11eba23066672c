//! Snapshots of the interactive mode's views, at 40 and 200 columns: streaming text, each tool's
//! block collapsed and expanded (from a real session with the faux model), a pending `ast_edit`
//! preview, each `resolve` verb, errors, a custom renderer (and one that panics), dialogs.
//!
//! Each snapshot shows the lines twice: plain text, then with styles named after the theme's
//! slots (`pi_tui::testing::styled`), rendered with `Theme::indexed()` so that every slot has a
//! colour of its own.
//!
//! Longer than 800 lines on purpose: one short test per view, sharing the session and rendering
//! helpers at the top; the snapshot names (`all__interactive_screens__*`) are tied to this file.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use pi_agent_core::faux::{
    FauxModel, faux_assistant_message, faux_assistant_text, faux_text, faux_thinking, faux_tool_call,
};
use pi_agent_core::{
    AgentEvent, AgentMessage, AssistantMessage, ContentBlock, StopReason, ToolResult, ToolResultMessage,
};
use pi_cli::modes::interactive::FooterInfo;
use pi_cli::modes::interactive::UiRequest;
use pi_cli::modes::interactive::{Action, Screen};
use pi_cli::modes::interactive::{InlineImages, RenderContext, Renderers, render_tool};
use pi_cli::modes::interactive::{Item, NoticeKind, ToolBlock, Transcript};
use pi_coding_agent::resolve::ResolveAction;
use pi_coding_agent::{AgentSession, SessionEvent, SessionOptions};
use pi_tui::testing::{plain, styled};
use pi_tui::{Line, Theme};
use serde_json::{Value, json};
use tokio::sync::oneshot;

const WIDTHS: [u16; 2] = [40, 200];

/// Snapshots do not depend on the terminal the tests run in.
const NO_IMAGES: InlineImages = InlineImages {
    protocol: None,
    show: true,
    width_cells: 60,
};

fn theme() -> Theme {
    Theme::indexed()
}

/// Both views of `lines` under a heading.
fn views(heading: &str, lines: &[Line]) -> String {
    format!(
        "== {heading}\n-- plain --\n{}\n-- styled --\n{}\n",
        plain(lines),
        styled(lines, &theme())
    )
}

/// A screen built by `build`, at each width: what it commits, then its live region.
fn screen_snapshot(build: impl Fn() -> Screen) -> String {
    let mut out = String::new();
    for width in WIDTHS {
        let mut screen = build();
        let committed = screen.take_commit(width);
        let (live, cursor) = screen.render_live(width);
        out.push_str(&views(&format!("width {width}: scrollback"), &committed));
        out.push_str(&views(
            &format!("width {width}: live region (cursor {cursor:?})"),
            &live,
        ));
    }
    normalise(&out)
}

/// Run times vary: `Took 0.0s` / `Elapsed 0.3s` become `Took <t>`.
fn normalise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = ["Took ", "Elapsed "]
        .iter()
        .filter_map(|word| rest.find(word).map(|i| (i, word.len())))
        .min()
    {
        let (index, len) = at;
        out.push_str(&rest[..index + len]);
        rest = &rest[index + len..];
        let end = rest.find('s').map_or(0, |i| i + 1);
        if rest[..end.saturating_sub(1)]
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.')
            && end > 1
        {
            out.push_str("<t>");
            rest = &rest[end..];
        }
    }
    out.push_str(rest);
    out
}

fn footer() -> FooterInfo {
    FooterInfo {
        cwd: "~/src/shop".into(),
        git_branch: Some("main".into()),
        model: "claude-sonnet-4-5".into(),
        reasoning: true,
        thinking: "medium".into(),
        input: 12_400,
        output: 830,
        cost: 0.0513,
        context_window: 200_000,
        context_percent: Some(6.2),
        auto_compact: true,
        ..FooterInfo::default()
    }
}

fn screen() -> Screen {
    let mut screen = Screen::new(theme());
    screen.set_footer(footer());
    screen
}

fn agent(event: AgentEvent) -> SessionEvent {
    SessionEvent::Agent(event)
}

fn assistant(blocks: Vec<ContentBlock>, stop: StopReason) -> AssistantMessage {
    let mut message = faux_assistant_message(blocks);
    message.stop_reason = stop;
    message
}

// ----- a real session -------------------------------------------------------------------------

const APP_TS: &str = "import { logger } from \"./logger\";\n\nexport function greet(name: string) {\n  console.log(\"greeting\", name);\n  return `Helo, ${name}!`;\n}\n\nexport function farewell(name: string) {\n  console.log(\"farewell\", name);\n  return `Bye, ${name}.`;\n}\n";

fn project(dir: &Path) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/app.ts"), APP_TS).unwrap();
    std::fs::write(
        dir.join("src/logger.ts"),
        "export const logger = { info: console.info };\n",
    )
    .unwrap();
    std::fs::write(dir.join("README.md"), "# shop\n\nA small shop.\n").unwrap();
    // Enough output for every list, and a long enough diff, to be cut when collapsed.
    std::fs::create_dir_all(dir.join("src/items")).unwrap();
    for i in 1..=24 {
        std::fs::write(
            dir.join(format!("src/items/item{i:02}.ts")),
            format!("export const item{i} = () => console.log(\"item {i}\");\n"),
        )
        .unwrap();
    }
    std::fs::write(dir.join("src/prices.ts"), PRICES_TS).unwrap();
}

/// Twenty prices; the edit below changes twelve of them.
const PRICES_TS: &str = "export const p01 = 1;\nexport const p02 = 2;\nexport const p03 = 3;\nexport const p04 = 4;\nexport const p05 = 5;\nexport const p06 = 6;\nexport const p07 = 7;\nexport const p08 = 8;\nexport const p09 = 9;\nexport const p10 = 10;\nexport const p11 = 11;\nexport const p12 = 12;\nexport const p13 = 13;\nexport const p14 = 14;\nexport const p15 = 15;\nexport const p16 = 16;\nexport const p17 = 17;\nexport const p18 = 18;\nexport const p19 = 19;\nexport const p20 = 20;\n";

/// Every built-in tool once (plus a failing read), through a session on the faux model; the
/// screen's transcript afterwards.
async fn session_transcript() -> (Transcript, String) {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path());
    let notes: String = (1..=14).map(|i| format!("- note {i}\n")).collect();
    let faux = FauxModel::new();
    let call = faux_tool_call;
    faux.set_responses([
        faux_assistant_message(vec![
            faux_text("Looking around."),
            call("t1", "read", json!({"path": "src/app.ts"})),
            call("t2", "read", json!({"path": "src/app.ts", "offset": 3, "limit": 2})),
            call("t3", "read", json!({"path": "src/missing.ts"})),
            call("t4", "ls", json!({"path": "src/items"})),
            call("t5", "find", json!({"pattern": "*.ts"})),
            call("t6", "grep", json!({"pattern": "console", "path": "src"})),
            call(
                "t7",
                "bash",
                json!({"command": "for i in 1 2 3 4 5 6 7 8; do echo line $i; done"}),
            ),
        ]),
        faux_assistant_message(vec![
            call(
                "t8",
                "edit",
                json!({"path": "src/prices.ts", "edits": [{
                    "oldText": (5..=16).map(|i| format!("export const p{i:02} = {i};\n")).collect::<String>(),
                    "newText": (5..=16).map(|i| format!("export const p{i:02} = {};\n", i * 10)).collect::<String>(),
                }]}),
            ),
            call("t9", "write", json!({"path": "NOTES.md", "content": notes})),
            call("t10", "ast_grep", json!({"pat": "console.log($$$A)", "paths": ["src"]})),
        ]),
        faux_assistant_message(vec![call(
            "t11",
            "ast_edit",
            json!({"ops": [{"pat": "console.log($$$A)", "out": "logger.info($$$A)"}], "paths": ["src"]}),
        )]),
        faux_assistant_message(vec![call(
            "t12",
            "resolve",
            json!({"action": "apply", "reason": "Both calls go through the logger now."}),
        )]),
        faux_assistant_text("Done."),
    ]);
    let options = SessionOptions::new(dir.path(), faux.model())
        .stream_fn(faux.stream_fn())
        .tools([
            "read", "bash", "edit", "write", "grep", "find", "ls", "ast_grep", "ast_edit",
        ]);
    let session = AgentSession::new(options).unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let subscription = session.subscribe(move |event| sink.lock().unwrap().push(event.clone()));
    session.prompt("Tidy up the app.").await.unwrap();
    subscription.unsubscribe();
    let mut transcript = Transcript::new();
    for event in events.lock().unwrap().iter() {
        transcript.apply(event);
    }
    (transcript, dir.path().display().to_string())
}

fn tool_block<'a>(transcript: &'a Transcript, call_id: &str) -> &'a ToolBlock {
    transcript
        .items()
        .iter()
        .find_map(|item| match item {
            Item::Tool(block) if block.call_id == call_id => Some(block),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no block {call_id}"))
}

/// A tool block collapsed and expanded, at both widths.
fn block_snapshot(block: &ToolBlock, renderers: &Renderers) -> String {
    let theme = theme();
    let mut out = String::new();
    for expanded in [false, true] {
        for width in WIDTHS {
            let context = RenderContext {
                theme: &theme,
                expanded,
                renderers,
                images: NO_IMAGES,
            };
            let state = if expanded { "expanded" } else { "collapsed" };
            out.push_str(&views(
                &format!("{state}, width {width}"),
                &render_tool(block, context, width),
            ));
        }
    }
    normalise(&out)
}

#[tokio::test(flavor = "multi_thread")]
async fn each_built_in_tool_block_collapsed_and_expanded() {
    let (transcript, dir) = session_transcript().await;
    let renderers = Renderers::new();
    let cases = [
        ("tool_read", "t1"),
        ("tool_read_range", "t2"),
        ("tool_read_error", "t3"),
        ("tool_ls", "t4"),
        ("tool_find", "t5"),
        ("tool_grep", "t6"),
        ("tool_bash", "t7"),
        ("tool_edit", "t8"),
        ("tool_write", "t9"),
        ("tool_ast_grep", "t10"),
        ("tool_ast_edit_preview", "t11"),
        ("resolve_accept_from_the_model", "t12"),
    ];
    for (name, call_id) in cases {
        let block = tool_block(&transcript, call_id);
        insta::assert_snapshot!(name, block_snapshot(block, &renderers).replace(&dir, "<tmp>"));
    }
}

// ----- hand-made views --------------------------------------------------------------------------

fn block(call_id: &str, name: &str, args: Value) -> ToolBlock {
    ToolBlock {
        call_id: call_id.into(),
        name: name.into(),
        args,
        partial: None,
        result: None,
        is_error: false,
        started: None,
        elapsed: None,
    }
}

fn resolve_block(action: &str, label: &str, reason: &str, text: &str, is_error: bool) -> ToolBlock {
    let mut block = block("r", "resolve", json!({"action": action, "reason": reason}));
    block.result = Some(ToolResult::text(text).with_details(json!({
        "action": action,
        "reason": reason,
        "label": label,
        "sourceToolName": "ast_edit",
    })));
    block.is_error = is_error;
    block
}

#[test]
fn bash_shows_its_last_five_rows_as_drawn_not_its_last_five_lines() {
    let mut long = block("b", "bash", json!({"command": "cat long.txt"}));
    let text = format!("first\n{}\nlast", "word ".repeat(30).trim_end());
    long.result = Some(ToolResult::text(text));
    let theme = theme();
    let renderers = Renderers::new();
    let context = RenderContext {
        theme: &theme,
        expanded: false,
        renderers: &renderers,
        images: NO_IMAGES,
    };
    let shown = plain(&render_tool(&long, context, 40));
    // 40 columns: the 149-character line takes four rows; with `last` that is five.
    assert!(shown.contains("... (2 earlier lines, ctrl+o to"), "{shown}");
    assert!(!shown.contains("first"), "{shown}");
    assert!(shown.contains("last"), "{shown}");
}

#[test]
fn each_resolve_verb() {
    let renderers = Renderers::new();
    let accept = resolve_block(
        "apply",
        "AST Edit: 2 replacements in 1 file",
        "Both calls should use the logger.",
        "Applied 2 replacements in 1 file.",
        false,
    );
    let discard = resolve_block(
        "discard",
        "AST Edit: 1 replacement in 1 file",
        "It renames the call but not the function.",
        "Discarded: AST Edit: 1 replacement in 1 file.",
        false,
    );
    let failed = resolve_block(
        "apply",
        "AST Edit: 2 replacements in 1 file",
        "Looks right.",
        "Apply failed: src/app.ts changed since the preview",
        true,
    );
    let mut degenerate = block("r", "resolve", json!({"action": "apply"}));
    degenerate.result = Some(ToolResult::text("No pending action to resolve"));
    degenerate.is_error = true;
    let running = block(
        "r",
        "resolve",
        json!({"action": "discard", "reason": "Not what I meant."}),
    );
    insta::assert_snapshot!("resolve_accept", block_snapshot(&accept, &renderers));
    insta::assert_snapshot!("resolve_discard", block_snapshot(&discard, &renderers));
    insta::assert_snapshot!("resolve_failed", block_snapshot(&failed, &renderers));
    insta::assert_snapshot!("resolve_no_pending_action", block_snapshot(&degenerate, &renderers));
    insta::assert_snapshot!("resolve_call_running", block_snapshot(&running, &renderers));
    // The callback's own text is not shown (oh-my-pi's test).
    let theme = theme();
    let context = RenderContext {
        theme: &theme,
        expanded: true,
        renderers: &renderers,
        images: NO_IMAGES,
    };
    assert!(!plain(&render_tool(&accept, context, 200)).contains("Applied 2 replacements"));
}

#[test]
fn a_running_bash_block_shows_its_last_lines_and_the_elapsed_time() {
    let mut running = block("b", "bash", json!({"command": "cargo test", "timeout": 120}));
    running.started = Some(std::time::Instant::now());
    let output: String = (1..=9).map(|i| format!("test case_{i} ... ok\n")).collect();
    running.partial = Some(ToolResult::text(output));
    insta::assert_snapshot!("tool_bash_running", block_snapshot(&running, &Renderers::new()));
}

#[test]
fn a_tool_without_a_renderer_falls_back_to_its_name_arguments_and_text() {
    let mut unknown = block("u", "deploy", json!({"target": "staging", "dry_run": true}));
    let log: String = (1..=12).map(|i| format!("step {i}\n")).collect();
    unknown.result = Some(ToolResult::text(log));
    insta::assert_snapshot!("tool_fallback", block_snapshot(&unknown, &Renderers::new()));
}

// ----- custom renderers ---------------------------------------------------------------------------

mod custom {
    use async_trait::async_trait;
    use pi_agent_core::{AgentTool, ToolContext, ToolError, ToolParameters, ToolResult};
    use pi_coding_agent::custom_tools::{CustomTool, RenderResultOptions};
    use pi_tui::{Line, Slot, Theme};
    use serde_json::{Value, json};

    /// A todo tool drawing itself like pi's example: `todo add "…"`, then ✓ and the list.
    pub(crate) struct Todo;

    #[async_trait]
    impl AgentTool for Todo {
        fn name(&self) -> &str {
            "todo"
        }
        fn description(&self) -> &str {
            "Manage a todo list."
        }
        fn parameters(&self) -> &ToolParameters {
            static SCHEMA: std::sync::OnceLock<ToolParameters> = std::sync::OnceLock::new();
            SCHEMA.get_or_init(|| ToolParameters::new(json!({"type": "object"})))
        }
        async fn execute(&self, _id: &str, _args: Value, _ctx: ToolContext) -> Result<ToolResult, ToolError> {
            Ok(ToolResult::text("ok"))
        }
    }

    #[async_trait]
    impl CustomTool for Todo {
        fn render_call(&self, args: &Value, theme: &Theme) -> Option<Vec<Line>> {
            let action = args["action"].as_str().unwrap_or("…").to_owned();
            let text = args["text"].as_str().map(|t| format!(" \"{t}\"")).unwrap_or_default();
            Some(vec![Line::from(vec![
                theme.bold("todo "),
                theme.fg(Slot::Muted, action),
                theme.fg(Slot::Dim, text),
            ])])
        }

        fn render_result(&self, result: &ToolResult, options: RenderResultOptions, theme: &Theme) -> Option<Vec<Line>> {
            if options.is_partial {
                return Some(vec![Line::from(theme.fg(Slot::Warning, "adding…"))]);
            }
            let todos = result.details["todos"].as_array().cloned().unwrap_or_default();
            let mut lines = vec![Line::from(vec![
                theme.fg(Slot::Success, "✓ "),
                theme.fg(Slot::Muted, format!("{} todos", todos.len())),
            ])];
            if options.expanded {
                for todo in todos {
                    let mark = if todo["done"].as_bool() == Some(true) {
                        "[x]"
                    } else {
                        "[ ]"
                    };
                    lines.push(Line::from(format!("{mark} {}", todo["text"].as_str().unwrap_or(""))));
                }
            }
            Some(lines)
        }
    }

    /// A tool whose renderers panic: its block falls back to the plain view.
    pub(crate) struct Broken;

    #[async_trait]
    impl AgentTool for Broken {
        fn name(&self) -> &str {
            "broken"
        }
        fn description(&self) -> &str {
            "Renders badly."
        }
        fn parameters(&self) -> &ToolParameters {
            static SCHEMA: std::sync::OnceLock<ToolParameters> = std::sync::OnceLock::new();
            SCHEMA.get_or_init(|| ToolParameters::new(json!({"type": "object"})))
        }
        async fn execute(&self, _id: &str, _args: Value, _ctx: ToolContext) -> Result<ToolResult, ToolError> {
            Ok(ToolResult::text("ok"))
        }
    }

    #[async_trait]
    impl CustomTool for Broken {
        fn render_call(&self, _args: &Value, _theme: &Theme) -> Option<Vec<Line>> {
            panic!("render_call exploded")
        }

        fn render_result(
            &self,
            _result: &ToolResult,
            _options: RenderResultOptions,
            _theme: &Theme,
        ) -> Option<Vec<Line>> {
            panic!("render_result exploded")
        }
    }
}

#[test]
fn a_custom_renderer_draws_its_block_and_one_that_panics_falls_back() {
    let mut renderers = Renderers::new();
    renderers.insert("todo".into(), Arc::new(custom::Todo));
    renderers.insert("broken".into(), Arc::new(custom::Broken));
    let mut todo = block("c1", "todo", json!({"action": "add", "text": "ship the TUI"}));
    todo.result = Some(ToolResult::text("Added todo #2: ship the TUI").with_details(json!({
        "action": "add",
        "todos": [{"id": 1, "text": "write docs", "done": true}, {"id": 2, "text": "ship the TUI", "done": false}],
        "nextId": 3,
    })));
    insta::assert_snapshot!("custom_renderer", block_snapshot(&todo, &renderers));

    let mut partial = block("c2", "todo", json!({"action": "add", "text": "more"}));
    partial.partial = Some(ToolResult::text("…"));
    insta::assert_snapshot!("custom_renderer_partial", block_snapshot(&partial, &renderers));

    let mut broken = block("c3", "broken", json!({"level": 3}));
    broken.result = Some(ToolResult::text("it worked, the drawing did not"));
    insta::assert_snapshot!("custom_renderer_panics", block_snapshot(&broken, &renderers));
}

// ----- whole screens ------------------------------------------------------------------------------

#[test]
fn streaming_text_and_thinking_with_the_loader() {
    insta::assert_snapshot!(
        "screen_streaming",
        screen_snapshot(|| {
            let mut screen = screen();
            screen.apply(&agent(AgentEvent::MessageStart {
                message: AgentMessage::user("Why does the checkout total drift by a cent?"),
            }));
            let mut partial = assistant(
                vec![
                    faux_thinking("The totals are summed as floats; rounding happens per line."),
                    faux_text(
                        "The total is computed with **floating point** numbers:\n\n```ts\nconst total = items.reduce((s, i) => s + i.price, 0);\n```\n\nEach",
                    ),
                ],
                StopReason::Stop,
            );
            partial.stop_reason = StopReason::Stop;
            screen.set_running(true);
            screen.apply(&agent(AgentEvent::MessageStart {
                message: AgentMessage::Assistant(partial.clone()),
            }));
            screen.apply(&agent(AgentEvent::MessageUpdate {
                message: Arc::new(partial),
                assistant_message_event: pi_agent_core::AssistantMessageEvent::Start {
                    partial: Arc::new(faux_assistant_message(vec![])),
                },
            }));
            screen.tick_at(Duration::from_secs(3));
            screen
        })
    );
}

#[test]
fn a_pending_ast_edit_preview_with_its_banner() {
    insta::assert_snapshot!(
        "screen_pending_preview",
        screen_snapshot(|| {
            let mut screen = screen();
            let transcript = screen.transcript_mut();
            transcript.user("Route logging through the logger.");
            let mut edit = block(
                "e1",
                "ast_edit",
                json!({"ops": [{"pat": "console.log($$$A)", "out": "logger.info($$$A)"}], "paths": ["src"]}),
            );
            edit.result = Some(ToolResult::text("2 replacements in 1 file (preview)").with_details(json!({
                "totalReplacements": 2,
                "filesTouched": 1,
                "filesSearched": 2,
                "parseErrorsTotal": 0,
                "changes": [
                    {"path": "src/app.ts", "line": 4, "before": "console.log(\"greeting\", name)", "after": "logger.info(\"greeting\", name)"},
                    {"path": "src/app.ts", "line": 9, "before": "console.log(\"farewell\", name)", "after": "logger.info(\"farewell\", name)"}
                ]
            })));
            push_block(&mut screen, edit);
            screen.set_pending(Some("AST Edit: 2 replacements in 1 file".into()));
            screen
        })
    );
}

fn push_block(screen: &mut Screen, block: ToolBlock) {
    let message = faux_assistant_message(vec![faux_tool_call(&block.call_id, &block.name, block.args.clone())]);
    screen.apply(&agent(AgentEvent::MessageEnd {
        message: AgentMessage::Assistant(message),
    }));
    if let Some(result) = block.result {
        screen.apply(&agent(AgentEvent::ToolExecutionEnd {
            tool_call_id: block.call_id.clone(),
            tool_name: block.name.clone(),
            result,
            is_error: block.is_error,
        }));
    }
}

#[test]
fn errors_a_failed_request_an_aborted_run_and_a_failed_tool() {
    insta::assert_snapshot!(
        "screen_errors",
        screen_snapshot(|| {
            let mut screen = screen();
            screen.transcript_mut().user("Deploy it.");
            let mut failed = block("x1", "bash", json!({"command": "./deploy.sh"}));
            failed.result = Some(ToolResult::text(
                "./deploy.sh: line 3: kubectl: command not found\n\nCommand exited with code 127",
            ));
            failed.is_error = true;
            push_block(&mut screen, failed);
            let mut error = assistant(vec![], StopReason::Error);
            error.error_message =
                Some("429 rate_limit_error: Number of request tokens has exceeded your per-minute rate limit".into());
            screen.apply(&agent(AgentEvent::MessageEnd {
                message: AgentMessage::Assistant(error),
            }));
            screen.transcript_mut().user("Try again.");
            let aborted = assistant(vec![faux_text("Retrying the deploy with")], StopReason::Aborted);
            screen.apply(&agent(AgentEvent::MessageEnd {
                message: AgentMessage::Assistant(aborted),
            }));
            screen.notice(
                "Custom tool hello: could not load tool.json: missing field `command`",
                NoticeKind::Error,
            );
            screen
        })
    );
}

/// A failed request, then pi's retry countdown under it (1.2 s into a 4 s wait: `in 3s`); once
/// the attempts ran out, pi's `Error: Retry failed after 3 attempts: …` with the working loader
/// back; and an answer aborted while the retry is in progress: `Aborted after 2 retry attempts`.
#[test]
fn an_automatic_retry_counts_down_then_reports_running_out() {
    let failed = |screen: &mut Screen| {
        let mut error = assistant(vec![], StopReason::Error);
        error.error_message = Some("503 Service Unavailable".into());
        screen.apply(&agent(AgentEvent::MessageEnd {
            message: AgentMessage::Assistant(error),
        }));
    };
    let waiting = || {
        let mut screen = screen();
        screen.transcript_mut().user("Deploy it.");
        screen.set_running(true);
        failed(&mut screen);
        screen.apply(&SessionEvent::AutoRetryStart {
            attempt: 2,
            max_attempts: 3,
            delay_ms: 4000,
            error_message: "503 Service Unavailable".into(),
        });
        screen.tick_at(Duration::from_millis(1200));
        screen
    };
    insta::assert_snapshot!("screen_retry_waiting", screen_snapshot(waiting));
    insta::assert_snapshot!(
        "screen_retry_failed",
        screen_snapshot(|| {
            let mut screen = waiting();
            screen.apply(&agent(AgentEvent::AgentStart));
            failed(&mut screen);
            screen.apply(&SessionEvent::AutoRetryEnd {
                success: false,
                attempt: 3,
                final_error: Some("503 Service Unavailable".into()),
            });
            screen
        })
    );
    insta::assert_snapshot!(
        "screen_retry_aborted",
        screen_snapshot(|| {
            let mut screen = waiting();
            screen.apply(&agent(AgentEvent::AgentStart));
            let aborted = assistant(vec![faux_text("Deploying to")], StopReason::Aborted);
            screen.apply(&agent(AgentEvent::MessageEnd {
                message: AgentMessage::Assistant(aborted),
            }));
            screen.apply(&SessionEvent::AutoRetryEnd {
                success: true,
                attempt: 2,
                final_error: None,
            });
            screen
        })
    );
}

#[test]
fn parallel_tools_commit_in_order_and_a_running_one_stays_live() {
    insta::assert_snapshot!(
        "screen_running_tools",
        screen_snapshot(|| {
            let mut screen = screen();
            screen.transcript_mut().user("Check both.");
            let message = faux_assistant_message(vec![
                faux_text("Running both checks."),
                faux_tool_call("p1", "bash", json!({"command": "npm run lint"})),
                faux_tool_call("p2", "bash", json!({"command": "npm test"})),
            ]);
            screen.set_running(true);
            screen.apply(&agent(AgentEvent::MessageEnd {
                message: AgentMessage::Assistant(message),
            }));
            screen.apply(&agent(AgentEvent::ToolExecutionEnd {
                tool_call_id: "p2".into(),
                tool_name: "bash".into(),
                result: ToolResult::text("42 passing"),
                is_error: false,
            }));
            screen.apply(&agent(AgentEvent::ToolExecutionUpdate {
                tool_call_id: "p1".into(),
                tool_name: "bash".into(),
                args: json!({"command": "npm run lint"}),
                partial_result: ToolResult::text("src/app.ts\n  4:3  warning  Unexpected console statement"),
            }));
            screen.tick_at(Duration::from_secs(12));
            screen
        })
    );
}

fn dialog_screen(request: UiRequest) -> Screen {
    let mut screen = screen();
    screen.transcript_mut().user("Play a round.");
    screen.set_running(true);
    screen.push_request(request);
    screen
}

#[test]
fn dialogs_select_confirm_and_input() {
    let select = || {
        let (reply, _) = oneshot::channel();
        dialog_screen(UiRequest::Select {
            title: "Where should X go?".into(),
            options: vec!["top left".into(), "centre".into(), "bottom right".into()],
            reply,
        })
    };
    let confirm = || {
        let (reply, _) = oneshot::channel();
        dialog_screen(UiRequest::Confirm {
            title: "Delete 3 files?".into(),
            message: "src/old.ts, src/older.ts and src/oldest.ts will be removed.".into(),
            reply,
        })
    };
    let input = || {
        let (reply, _) = oneshot::channel();
        dialog_screen(UiRequest::Input {
            title: "Name the branch".into(),
            placeholder: Some("feature/…".into()),
            reply,
        })
    };
    insta::assert_snapshot!("dialog_select", screen_snapshot(select));
    insta::assert_snapshot!("dialog_confirm", screen_snapshot(confirm));
    insta::assert_snapshot!("dialog_input", screen_snapshot(input));
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn alt(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::ALT)
}

fn type_text(screen: &mut Screen, text: &str) {
    for c in text.chars() {
        screen.handle_key(key(KeyCode::Char(c)));
    }
}

#[tokio::test]
async fn dialogs_answer_the_tool() {
    let mut screen = screen();
    let (reply, answer) = oneshot::channel();
    screen.push_request(UiRequest::Select {
        title: "Pick".into(),
        options: vec!["a".into(), "b".into()],
        reply,
    });
    let (reply, confirmed) = oneshot::channel();
    screen.push_request(UiRequest::Confirm {
        title: "Sure?".into(),
        message: String::new(),
        reply,
    });
    let (reply, typed) = oneshot::channel();
    screen.push_request(UiRequest::Input {
        title: "Name".into(),
        placeholder: None,
        reply,
    });
    screen.handle_key(key(KeyCode::Down));
    assert_eq!(screen.handle_key(key(KeyCode::Enter)), None);
    assert_eq!(answer.await.unwrap(), Some("b".into()));
    screen.handle_key(key(KeyCode::Char('y')));
    assert!(confirmed.await.unwrap());
    type_text(&mut screen, "main");
    screen.handle_key(key(KeyCode::Enter));
    assert_eq!(typed.await.unwrap(), Some("main".into()));
    assert!(!screen.has_overlay());
    // An unanswered dialog that goes away answers "no".
    let (reply, dropped) = oneshot::channel();
    screen.push_request(UiRequest::Confirm {
        title: "Sure?".into(),
        message: String::new(),
        reply,
    });
    drop(screen);
    assert!(!dropped.await.unwrap());
}

#[test]
fn keys_become_actions() {
    let mut screen = screen();
    type_text(&mut screen, "fix it");
    assert_eq!(
        screen.handle_key(key(KeyCode::Enter)),
        Some(Action::Prompt("fix it".into()))
    );
    screen.set_running(true);
    type_text(&mut screen, "use the logger");
    assert_eq!(
        screen.handle_key(key(KeyCode::Enter)),
        Some(Action::Steer("use the logger".into()))
    );
    type_text(&mut screen, "then run the tests");
    let alt_enter = KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT);
    assert_eq!(
        screen.handle_key(alt_enter),
        Some(Action::FollowUp("then run the tests".into()))
    );
    assert_eq!(screen.handle_key(key(KeyCode::Esc)), Some(Action::Abort));
    // No pending preview: Alt+Y is just a key.
    assert_eq!(screen.handle_key(alt('y')), None);
    screen.set_pending(Some("AST Edit: 1 replacement in 1 file".into()));
    assert_eq!(
        screen.handle_key(alt('y')),
        Some(Action::Resolve {
            action: ResolveAction::Apply,
            reason: "Decided by the user.".into()
        })
    );
    assert_eq!(
        screen.handle_key(alt('n')),
        Some(Action::Resolve {
            action: ResolveAction::Discard,
            reason: "Decided by the user.".into()
        })
    );
    type_text(&mut screen, "/discard Wrong files.");
    assert_eq!(
        screen.handle_key(key(KeyCode::Enter)),
        Some(Action::Resolve {
            action: ResolveAction::Discard,
            reason: "Wrong files.".into()
        })
    );
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(screen.handle_key(ctrl_c), None, "the first Ctrl+C only arms");
    assert!(plain(&screen.render_live(80).0).contains("Press Ctrl+C again to exit"));
    assert_eq!(screen.handle_key(ctrl_c), Some(Action::Exit));
    let ctrl_d = KeyEvent::new(KeyCode::Char('d'), KeyModifiers::CONTROL);
    assert_eq!(screen.handle_key(ctrl_d), Some(Action::Exit));
}

#[test]
fn steering_and_follow_ups_wait_under_the_loader_until_they_reach_the_model() {
    insta::assert_snapshot!(
        "screen_queued_messages",
        screen_snapshot(|| {
            let mut screen = screen();
            screen.transcript_mut().user("Refactor the cart.");
            screen.set_running(true);
            type_text(&mut screen, "keep the public API");
            screen.handle_key(key(KeyCode::Enter));
            type_text(&mut screen, "then update the changelog");
            screen.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
            // The steering message reaches the model: it leaves the queue, joins the transcript.
            screen.apply(&agent(AgentEvent::MessageStart {
                message: AgentMessage::user("keep the public API"),
            }));
            screen.tick_at(Duration::from_secs(65));
            screen
        })
    );
}

#[test]
fn alt_up_takes_the_queued_messages_back_into_the_editor() {
    let alt_up = KeyEvent::new(KeyCode::Up, KeyModifiers::ALT);
    let mut screen = screen();
    screen.set_running(true);
    assert_eq!(screen.handle_key(alt_up), None, "nothing queued, nothing to restore");
    type_text(&mut screen, "keep the public API");
    assert_eq!(
        screen.handle_key(key(KeyCode::Enter)),
        Some(Action::Steer("keep the public API".into()))
    );
    type_text(&mut screen, "then update the changelog");
    screen.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
    type_text(&mut screen, "draft");
    assert_eq!(screen.handle_key(alt_up), Some(Action::RestoreQueued));
    // The loop takes back what the agent still had: here the steering message was delivered in
    // the meantime, so only the follow-up returns.
    screen.restore_queued(vec!["then update the changelog".into()]);
    assert_eq!(screen.editor_mut().text(), "then update the changelog\n\ndraft");
    let live = plain(&screen.render_live(80).0);
    assert!(!live.contains("Steering:") && !live.contains("alt+up"), "{live}");
    assert_eq!(screen.handle_key(alt_up), None, "the queue is empty again");
}

#[test]
fn ctrl_o_gives_the_whole_transcript_again_expanded() {
    let mut screen = screen();
    screen.transcript_mut().user("List it.");
    let mut ls = block("l1", "ls", json!({"path": "."}));
    let listing: String = (1..=25).map(|i| format!("file{i:02}.txt\n")).collect();
    ls.result = Some(ToolResult::text(listing));
    push_block(&mut screen, ls);
    let collapsed = plain(&screen.take_commit(60));
    assert!(
        collapsed.contains("... (5 more lines, ctrl+o to expand)"),
        "{collapsed}"
    );
    assert!(!collapsed.contains("file25.txt"));
    assert!(!screen.wants_redraw());
    screen.handle_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL));
    assert!(screen.is_expanded() && screen.wants_redraw());
    let expanded = plain(&screen.take_commit(60));
    assert!(
        expanded.contains("List it.") && expanded.contains("file25.txt"),
        "{expanded}"
    );
    assert!(!screen.wants_redraw());
    assert_eq!(plain(&screen.take_commit(60)), "", "printed once");
}

#[test]
fn loaded_history_is_shown_with_results_matched_to_their_calls() {
    let mut transcript = Transcript::new();
    let call = faux_assistant_message(vec![
        faux_text("Reading."),
        faux_tool_call("h1", "read", json!({"path": "a.ts"})),
    ]);
    let result = ToolResultMessage {
        tool_call_id: "h1".into(),
        tool_name: "read".into(),
        content: vec![ContentBlock::text("one\ntwo")],
        details: None,
        usage: None,
        added_tool_names: None,
        is_error: false,
        timestamp: 0,
    };
    let cut_off = faux_assistant_message(vec![faux_tool_call("h2", "bash", json!({"command": "sleep 100"}))]);
    transcript.load_messages(&[
        AgentMessage::user("Read a.ts"),
        AgentMessage::Assistant(call),
        AgentMessage::ToolResult(result),
        AgentMessage::Assistant(cut_off),
    ]);
    assert_eq!(transcript.take_finished(), 0..5, "everything loaded is finished");
    let Item::Tool(read) = &transcript.items()[2] else {
        panic!("{:?}", transcript.items()[2])
    };
    assert_eq!(
        read.result.as_ref().unwrap().content,
        vec![ContentBlock::text("one\ntwo")]
    );
    let Item::Tool(bash) = &transcript.items()[4] else {
        panic!("{:?}", transcript.items()[4])
    };
    assert!(bash.is_error, "a call without a result is closed");
}
