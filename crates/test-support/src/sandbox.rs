//! A place to run the `pi` binary as a user would, without touching the real home directory: a
//! temporary directory holding a `HOME` with an empty agent directory (`~/.pi/agent`) and a
//! project directory to run in, and commands with a clean environment (only `PATH` and `HOME`).
//!
//! The binary is a parameter: in the pi-cli crate's tests and benches it is
//! `env!("CARGO_BIN_EXE_pi")`.
//!
//! ```no_run
//! # async fn demo() {
//! use pi_test_support::sandbox::{Sandbox, text};
//! use pi_test_support::{MockServer, openai};
//!
//! let server = MockServer::start(vec![openai::text("Hello.")]).await;
//! let sandbox = Sandbox::new("/path/to/pi");
//! sandbox.use_server(&server);
//! let output = sandbox.run(&["-p", "Say hello"]).await;
//! assert_eq!(text(&output.stdout), "Hello.\n");
//! assert_eq!(sandbox.session_files().len(), 1);
//! # }
//! ```

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use super::{MockServer, openai, session_files};

/// A temporary `HOME` and project (both removed on drop), and the program to run in them.
pub struct Sandbox {
    dir: tempfile::TempDir,
    program: PathBuf,
    /// The home directory (`HOME` of the commands): holds `.pi/agent`.
    pub home: PathBuf,
    /// The project directory the commands run in, empty at first.
    pub project: PathBuf,
}

impl Sandbox {
    /// A sandbox running `program`: `<tmp>/home/.pi/agent` and `<tmp>/project`, both created.
    ///
    /// # Panics
    ///
    /// When the temporary directories cannot be created.
    pub fn new(program: impl Into<PathBuf>) -> Self {
        #[allow(clippy::expect_used)]
        let dir = tempfile::tempdir().expect("a temporary directory");
        let home = dir.path().join("home");
        let project = dir.path().join("project");
        for path in [home.join(".pi/agent"), project.clone()] {
            #[allow(clippy::expect_used)]
            std::fs::create_dir_all(&path).expect("a directory in the sandbox");
        }
        Sandbox {
            dir,
            program: program.into(),
            home,
            project,
        }
    }

    /// The temporary directory holding `home` and `project` (for more directories beside them).
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// pi's agent directory, `~/.pi/agent`.
    pub fn agent_dir(&self) -> PathBuf {
        self.home.join(".pi/agent")
    }

    /// Writes `json` as the agent directory's `models.json`.
    ///
    /// # Panics
    ///
    /// When the file cannot be written.
    pub fn write_models_json(&self, json: &str) {
        #[allow(clippy::expect_used)]
        std::fs::write(self.agent_dir().join("models.json"), json).expect("models.json written");
    }

    /// Points `models.json` at `server`: [`openai::models_json`] for `server.url("/v1")`, so
    /// that the mock model ([`openai::PROVIDER`] / [`openai::MODEL_ID`]) is the default one.
    pub fn use_server(&self, server: &MockServer) {
        self.write_models_json(&openai::models_json(&server.url("/v1")));
    }

    /// The program with `args`, in the project, with only `PATH` (the test's) and `HOME` set,
    /// and stdin from `/dev/null`. Change what you need before running it (more variables,
    /// piped stdin, another directory).
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.program);
        command
            .args(args)
            .current_dir(&self.project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .stdin(Stdio::null());
        command
    }

    /// Runs the program with `args` to the end (see [`output`]).
    pub async fn run(&self, args: &[&str]) -> Output {
        output(self.command(args)).await
    }

    /// Runs the program with `args`, writing `stdin` to its standard input and closing it.
    ///
    /// # Panics
    ///
    /// When the program cannot be started or its input written.
    pub async fn run_with_stdin(&self, args: &[&str], stdin: &str) -> Output {
        let mut command = self.command(args);
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let input = stdin.to_owned();
        #[allow(clippy::expect_used)]
        tokio::task::spawn_blocking(move || {
            use std::io::Write;
            let mut child = command.spawn().expect("the program starts");
            let mut stdin = child.stdin.take().expect("a piped stdin");
            stdin.write_all(input.as_bytes()).expect("stdin written");
            drop(stdin);
            child.wait_with_output().expect("the program's output")
        })
        .await
        .expect("the blocking task finished")
    }

    /// The session files pi wrote under the agent directory (`sessions/<cwd>/<file>`), sorted.
    pub fn session_files(&self) -> Vec<PathBuf> {
        session_files::list(&self.agent_dir().join("sessions"))
    }
}

/// Runs `command` to the end on a blocking thread (so that a mock server on the test's runtime
/// keeps answering) and returns its output.
///
/// # Panics
///
/// When the program cannot be started.
pub async fn output(mut command: Command) -> Output {
    #[allow(clippy::expect_used)]
    tokio::task::spawn_blocking(move || command.output().expect("the program runs"))
        .await
        .expect("the blocking task finished")
}

/// Output bytes as text (invalid UTF-8 replaced).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
