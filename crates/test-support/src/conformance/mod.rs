//! Recorded conformance with pi 0.73.1: scenarios that are data, run through a program, with
//! what the program did normalized into comparable artifacts.
//!
//! A scenario is a directory under `crates/cli/tests/data/conformance/` holding `scenario.json`
//! (the model's scripted replies, files of the project, the runs: arguments and, for `--mode rpc`,
//! the commands sent) and the goldens pi 0.73.1 produced for it (`cargo xtask record-pi` writes
//! them; pi-cli's `conformance` tests replay the scenario through our binary and [`compare`]).
//! The same [`run`] drives both programs, so they see the same server, sandbox and inputs.
//!
//! ```
//! use pi_test_support::conformance::Scenario;
//!
//! let scenario = Scenario::parse("demo", r#"{
//!     "replies": [{"text": "Hello."}],
//!     "runs": [{"args": ["--mode", "json", "-p", "hi"]}]
//! }"#).unwrap();
//! assert_eq!(scenario.runs.len(), 1);
//! ```

mod compare;
mod normalize;
mod record;
mod scenario;

pub use compare::{Difference, Differences, Report, compare};
pub use normalize::{Context, normalize};
pub use record::{Artifacts, Program, read_goldens, run, write_goldens};
pub use scenario::{Run, Scenario, ScenarioError, Step, scenarios, server_reply};
