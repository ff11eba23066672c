//! The offline demo (`pi --demo`): a real agent session on a temporary copy of a small bundled
//! project, driven by the faux model replaying a bundled script — no API key, no network.
//!
//! The script exercises what makes pi pi: two `read`s in one turn (run in parallel), an `edit`, an
//! `ast_edit` preview that the forced `resolve` applies, a second preview that it discards, and a
//! custom tool declared `sequential` called three times in one turn. Everything between the
//! scripted model and the files is the real program: the loop, validation, dispatch, the tools,
//! the pending-action runtime.
//!
//! ```
//! # tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(async {
//! let run = pi_cli::demo::run(pi_cli::demo::DemoOptions::default(), |_| {}).await.unwrap();
//! assert!(run.transcript.contains("→ resolve {\"action\":\"apply\""));
//! assert!(run.files["src/greet.ts"].contains("logger.info(\"greeting\", name);"));
//! # });
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_agent_core::faux::{FauxModel, FauxResponse, faux_assistant_message, faux_text, faux_tool_call};
use pi_agent_core::{AgentError, ContentBlock, FnTool, ToolExecutionMode, ToolResult};
use serde_json::{Value, json};

use crate::modes::plain_text;
use pi_coding_agent::{AgentSession, RegisteredTool, SessionError, SessionOptions};

/// The bundled project, `(relative path, content)`.
pub const PROJECT: &[(&str, &str)] = &[
    ("README.md", include_str!("project/README.md")),
    ("src/greet.ts", include_str!("project/src/greet.ts")),
    ("src/math.ts", include_str!("project/src/math.ts")),
    ("src/logger.ts", include_str!("project/src/logger.ts")),
];

/// The prompt the demo answers.
pub const DEMO_PROMPT: &str = "Fix the typo in greet, route logging through the logger, and run the checklist.";

/// Name of the demo's sequential custom tool.
pub const CHECKLIST_TOOL: &str = "checklist";

/// How the demo runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct DemoOptions {
    /// Stream the model's text at a readable pace (the CLI does; tests don't).
    pub paced: bool,
}

/// What a demo run produced.
#[derive(Debug, Clone)]
pub struct DemoRun {
    /// Everything printed.
    pub transcript: String,
    /// The project's files after the run.
    pub files: BTreeMap<String, String>,
}

/// Why the demo could not run.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// The temporary project could not be written or read.
    #[error("demo project: {0}")]
    Io(#[from] std::io::Error),
    /// The session could not be built.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The agent refused to run.
    #[error(transparent)]
    Agent(#[from] AgentError),
}

fn call(id: &str, name: &str, args: Value) -> ContentBlock {
    faux_tool_call(id, name, args)
}

fn say(text: &str, calls: Vec<ContentBlock>) -> FauxResponse {
    let mut blocks = vec![faux_text(text)];
    blocks.extend(calls);
    FauxResponse::from(faux_assistant_message(blocks))
}

/// The scripted model turns.
pub fn script() -> Vec<FauxResponse> {
    vec![
        say(
            "Let me look at the code first.",
            vec![
                call("demo-1", "read", json!({"path": "src/greet.ts"})),
                call("demo-2", "read", json!({"path": "src/math.ts"})),
            ],
        ),
        say(
            "`greet` misspells \"Hello\". Fixing that with edit.",
            vec![call(
                "demo-3",
                "edit",
                json!({"path": "src/greet.ts", "edits": [{"oldText": "Helo", "newText": "Hello"}]}),
            )],
        ),
        say(
            "Both files log with console.log although the project has a logger. One structural rewrite covers \
             every call; it comes back as a preview.",
            vec![call(
                "demo-4",
                "ast_edit",
                json!({"ops": [{"pat": "console.log($$$ARGS)", "out": "logger.info($$$ARGS)"}], "paths": ["src"]}),
            )],
        ),
        say(
            "The preview changes exactly the two calls. Applying it.",
            vec![call(
                "demo-5",
                "resolve",
                json!({"action": "apply", "reason": "The preview replaces exactly the two console.log calls."}),
            )],
        ),
        say(
            "Another idea: rename add to sum.",
            vec![call(
                "demo-6",
                "ast_edit",
                json!({"ops": [{"pat": "add($A, $B)", "out": "sum($A, $B)"}], "paths": ["src/math.ts"]}),
            )],
        ),
        say(
            "That renames the call but not the function, which would break the build. Discarding it.",
            vec![call(
                "demo-7",
                "resolve",
                json!({"action": "discard", "reason": "It renames the call but not the function."}),
            )],
        ),
        say(
            "Now the checklist. Its tool is declared sequential, so the three steps run in order even though \
             they come in one turn.",
            vec![
                call("demo-8", CHECKLIST_TOOL, json!({"step": "format"})),
                call("demo-9", CHECKLIST_TOOL, json!({"step": "typecheck"})),
                call("demo-10", CHECKLIST_TOOL, json!({"step": "test"})),
            ],
        ),
        say(
            "A last look at greet.ts.",
            vec![call("demo-11", "read", json!({"path": "src/greet.ts"}))],
        ),
        FauxResponse::from(faux_assistant_message(vec![faux_text(
            "Done: the typo is fixed, both files log through the logger, `add` keeps its name, and the \
             checklist passed in order.",
        )])),
    ]
}

/// The demo's custom tool: records each step in the order it runs; a step sleeps a little so
/// that parallel execution would interleave them.
fn checklist_tool() -> FnTool {
    let done: Arc<Mutex<Vec<String>>> = Arc::new(Mutex::new(Vec::new()));
    FnTool::new(
        CHECKLIST_TOOL,
        "Run one step of the project checklist (format, typecheck, test). Steps must run in order.",
        json!({
            "type": "object",
            "properties": {"step": {"type": "string", "description": "The step to run"}},
            "required": ["step"]
        }),
        move |_id, args, _ctx| {
            let done = done.clone();
            async move {
                let step = args["step"].as_str().unwrap_or("step").to_owned();
                tokio::time::sleep(Duration::from_millis(30)).await;
                let mut done = done.lock().unwrap_or_else(|p| p.into_inner());
                done.push(step.clone());
                let order = done.join(" → ");
                Ok(ToolResult::text(format!("{step}: ok (done so far: {order})")).with_details(json!({"done": *done})))
            }
        },
    )
    .with_label("Checklist")
    .with_execution_mode(ToolExecutionMode::Sequential)
}

fn write_project(root: &Path) -> std::io::Result<()> {
    for (path, content) in PROJECT {
        let target = root.join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(target, content)?;
    }
    Ok(())
}

fn read_project(root: &Path) -> std::io::Result<BTreeMap<String, String>> {
    PROJECT
        .iter()
        .map(|(path, _)| Ok(((*path).to_owned(), std::fs::read_to_string(root.join(path))?)))
        .collect()
}

/// The demo's session, on its temporary copy of the project (removed when this is dropped).
pub struct DemoSession {
    /// The session, driven by the scripted model.
    pub session: AgentSession,
    /// The project's copy.
    pub root: PathBuf,
    /// The scripted model (more responses can be queued).
    pub faux: FauxModel,
    _dir: tempfile::TempDir,
}

impl std::fmt::Debug for DemoSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DemoSession")
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

/// The answer to every prompt after the script has played (the interactive demo goes on).
pub const SCRIPT_OVER: &str = "That was the whole demo script. Run `pi` with a model configured (an API key in the \
     environment, or a models.json) to work with a real model.";

/// Writes the project to a temporary directory and builds the session that works on it.
pub async fn demo_session(options: DemoOptions) -> Result<DemoSession, DemoError> {
    let dir = tempfile::Builder::new().prefix("pi-demo-").tempdir()?;
    let root = dir.path().to_path_buf();
    let setup = root.clone();
    tokio::task::spawn_blocking(move || write_project(&setup))
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))??;
    let faux = if options.paced {
        FauxModel::builder().tokens_per_second(240.0).build()
    } else {
        FauxModel::new()
    };
    faux.set_responses(script());
    let session_options = SessionOptions::new(&root, faux.model())
        .stream_fn(faux.stream_fn())
        .system_prompt("You are pi's offline demo model.")
        .extra_tool(RegisteredTool::custom(checklist_tool().into_arc(), None))
        .tools(["read", "edit", "ast_edit", CHECKLIST_TOOL]);
    let session = AgentSession::new(session_options)?;
    Ok(DemoSession {
        session,
        root,
        faux,
        _dir: dir,
    })
}

/// Runs the demo, calling `output` with each piece of the transcript as it streams.
pub async fn run(options: DemoOptions, output: impl Fn(&str) + Send + Sync + 'static) -> Result<DemoRun, DemoError> {
    let demo = demo_session(options).await?;
    let (session, root) = (&demo.session, demo.root.clone());
    let transcript = Arc::new(Mutex::new(String::new()));
    let sink = transcript.clone();
    let header = format!(
        "pi demo: a scripted model (no network) working on a copy of a small project in {}\n\n> {DEMO_PROMPT}\n\n",
        root.display()
    );
    output(&header);
    sink.lock().unwrap_or_else(|p| p.into_inner()).push_str(&header);
    let subscription = session.subscribe(move |event| {
        if let Some(text) = plain_text::render(event) {
            output(&text);
            sink.lock().unwrap_or_else(|p| p.into_inner()).push_str(&text);
        }
    });
    session.prompt(DEMO_PROMPT).await?;
    subscription.unsubscribe();
    let check = root.clone();
    let files = tokio::task::spawn_blocking(move || read_project(&check))
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))??;
    let transcript = transcript.lock().unwrap_or_else(|p| p.into_inner()).clone();
    Ok(DemoRun { transcript, files })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread")]
    async fn the_demo_changes_the_project_as_scripted() {
        let run = run(DemoOptions::default(), |_| {}).await.unwrap();
        let greet = &run.files["src/greet.ts"];
        assert!(greet.contains("return `Hello, ${name}!`;"), "{greet}");
        assert!(greet.contains("logger.info(\"greeting\", name);"), "{greet}");
        let math = &run.files["src/math.ts"];
        assert!(math.contains("logger.info(\"add\", a, b);"), "{math}");
        assert!(
            math.contains("add(sum, v)"),
            "the discarded preview changed nothing: {math}"
        );
        assert!(
            run.transcript
                .contains("test: ok (done so far: format → typecheck → test)"),
            "{}",
            run.transcript
        );
        assert!(run.transcript.contains("Discarded: AST Edit: 1 replacement in 1 file."));
        assert!(!run.transcript.contains('✗'), "no tool failed:\n{}", run.transcript);
    }
}
