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
        let (path, html) = self.with_store(|store| crate::export::prepare(store, &extras, output, colors))?;
        tokio::fs::write(&path, html)
            .await
            .map_err(|source| ExportError::Write {
                path: path.clone(),
                source,
            })?;
        Ok(path)
    }
}
