//! `/export` and RPC `export_html`: the app's session as one HTML file, with the system prompt
//! and the active tools of the running session.

use std::path::{Path, PathBuf};

use super::App;
use crate::export::{ExportColors, ExportError, ExportExtras, ExportTool};

impl App {
    /// Writes the session as HTML to `output` (relative to the current directory), or to pi's
    /// `pi-session-<file>.html`; returns the path written. Fails for an in-memory session and
    /// before the session file exists, with pi's messages.
    pub async fn export_html(&self, output: Option<&Path>, colors: &ExportColors) -> Result<PathBuf, ExportError> {
        let agent = self.session().agent();
        let extras = ExportExtras {
            system_prompt: Some(agent.state().system_prompt),
            tools: agent
                .tools()
                .iter()
                .map(|tool| ExportTool {
                    name: tool.name().to_owned(),
                    description: tool.description().to_owned(),
                    parameters: tool.parameters().schema().clone(),
                })
                .collect(),
        };
        // Under the store's lock only the checks; the page (a syntect pass over every code block)
        // is rendered off the runtime from the file, at the same leaf.
        let (file, leaf) = self.with_store(|store| {
            crate::export::check_exportable(store).map(|file| (file.to_path_buf(), store.leaf_id().map(str::to_owned)))
        })?;
        let (output, colors) = (output.map(Path::to_path_buf), colors.clone());
        tokio::task::spawn_blocking(move || {
            let (mut session, _warnings) = pi_session_store::SessionManager::open(&file)?;
            match leaf {
                Some(leaf) => session.branch(&leaf)?,
                None => session.reset_leaf(),
            }
            crate::export::export_session(&session, &extras, output.as_deref(), &colors)
        })
        .await?
    }
}
