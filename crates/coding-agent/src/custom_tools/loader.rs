//! Loading custom tools from every source, resolving name conflicts, collecting errors.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::discovery::{ToolLocation, ToolPackage, classify};
use super::{CustomTool, NamedFactory, ToolApi};
use crate::config::McpServerConfig;

/// How a custom tool runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolKind {
    /// A Rust factory of the embedding program.
    Native,
    /// A process speaking the stdio protocol.
    Process,
    /// A pi TypeScript / JavaScript tool in the Node host.
    Node,
    /// A tool of an MCP server.
    Mcp,
}

/// One loaded tool.
#[derive(Clone)]
pub struct LoadedTool {
    /// The tool.
    pub tool: Arc<dyn CustomTool>,
    /// Where it came from: its path, `native:<factory>` or `mcp:<server>`.
    pub origin: String,
    /// Its directory or file, for file-based tools.
    pub path: Option<PathBuf>,
    /// How it runs.
    pub kind: ToolKind,
}

impl std::fmt::Debug for LoadedTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedTool")
            .field("name", &self.tool.name())
            .field("origin", &self.origin)
            .field("kind", &self.kind)
            .finish()
    }
}

/// A tool (or a whole location) that could not be loaded; it never stops the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// Where: a path, `native:<factory>` or `mcp:<server>`.
    pub origin: String,
    /// Why.
    pub error: String,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.origin, self.error)
    }
}

/// The outcome of loading: the tools that won, and every error.
#[derive(Debug, Clone, Default)]
pub struct CustomTools {
    /// Loaded tools, in priority order (lowest first).
    pub tools: Vec<LoadedTool>,
    /// Everything that went wrong.
    pub errors: Vec<LoadError>,
}

/// Keeps one tool per name — the later one wins — and refuses names in `reserved` (the built-ins)
/// with `Tool name "<name>" conflicts with existing tool`.
pub fn resolve_conflicts(loaded: Vec<LoadedTool>, reserved: &[&str]) -> CustomTools {
    let mut errors = Vec::new();
    let mut by_name: BTreeMap<String, usize> = BTreeMap::new();
    let mut kept: Vec<Option<LoadedTool>> = Vec::new();
    for tool in loaded {
        let name = tool.tool.name().to_owned();
        if reserved.contains(&name.as_str()) {
            errors.push(LoadError {
                origin: tool.origin.clone(),
                error: format!("Tool name \"{name}\" conflicts with existing tool"),
            });
            continue;
        }
        if let Some(&earlier) = by_name.get(&name) {
            kept[earlier] = None;
        }
        by_name.insert(name, kept.len());
        kept.push(Some(tool));
    }
    CustomTools {
        tools: kept.into_iter().flatten().collect(),
        errors,
    }
}

/// Loads every source in priority order, lowest first — `locations` (from
/// [`super::discovery::discover`]: global, project, `customTools`), MCP servers, the `--tool`
/// locations, then the `native` factories (highest: like the tools of pi's SDK `customTools`, they
/// override every other custom tool of the same name) — then resolves conflicts against `reserved`.
pub async fn load_all(
    native: &[NamedFactory],
    locations: &[ToolLocation],
    mcp_servers: &BTreeMap<String, McpServerConfig>,
    api: &ToolApi,
    reserved: &[&str],
) -> CustomTools {
    let mut loaded = Vec::new();
    let mut errors = Vec::new();
    let mut cli_locations = Vec::new();
    for location in locations {
        if location.source == super::discovery::ToolSource::Cli {
            cli_locations.push(location);
            continue;
        }
        load_location(location, api, &mut loaded, &mut errors).await;
    }
    for (name, config) in mcp_servers {
        let origin = format!("mcp:{name}");
        match super::mcp::load_server(name, config, api).await {
            Ok(tools) => loaded.extend(tools.into_iter().map(|tool| LoadedTool {
                tool,
                origin: origin.clone(),
                path: None,
                kind: ToolKind::Mcp,
            })),
            Err(error) => errors.push(LoadError {
                origin,
                error: error.to_string(),
            }),
        }
    }
    for location in cli_locations {
        load_location(location, api, &mut loaded, &mut errors).await;
    }
    for factory in native {
        let origin = format!("native:{}", factory.name);
        match factory.factory.create(api) {
            Ok(tools) => loaded.extend(tools.into_iter().map(|tool| LoadedTool {
                tool,
                origin: origin.clone(),
                path: None,
                kind: ToolKind::Native,
            })),
            Err(error) => {
                tracing::warn!(%origin, %error, "native custom tool factory failed");
                errors.push(LoadError {
                    origin,
                    error: format!("Failed to load tool: {error}"),
                });
            }
        }
    }
    let mut resolved = resolve_conflicts(loaded, reserved);
    errors.append(&mut resolved.errors);
    resolved.errors = errors;
    resolved
}

async fn load_location(
    location: &ToolLocation,
    api: &ToolApi,
    loaded: &mut Vec<LoadedTool>,
    errors: &mut Vec<LoadError>,
) {
    let origin = location.path.display().to_string();
    let path = location.path.clone();
    let package = match tokio::task::spawn_blocking(move || classify(&path)).await {
        Ok(Ok(package)) => package,
        Ok(Err(error)) => {
            return errors.push(LoadError {
                origin,
                error: error.to_string(),
            });
        }
        Err(error) => {
            return errors.push(LoadError {
                origin,
                error: error.to_string(),
            });
        }
    };
    let (result, kind) = match &package {
        ToolPackage::Process { dir, manifest } => (
            super::process::load(dir, manifest, api)
                .await
                .map_err(|e| e.to_string()),
            ToolKind::Process,
        ),
        ToolPackage::Script { entry } => (
            super::node::load(entry, api).await.map_err(|e| e.to_string()),
            ToolKind::Node,
        ),
    };
    match result {
        Ok(tools) => {
            tracing::debug!(%origin, ?kind, tools = tools.len(), "custom tools loaded");
            loaded.extend(tools.into_iter().map(|tool| LoadedTool {
                tool,
                origin: origin.clone(),
                path: Some(location.path.clone()),
                kind,
            }));
        }
        Err(error) => {
            tracing::warn!(%origin, %error, "custom tool not loaded");
            errors.push(LoadError { origin, error });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::custom_tools::ToolSource;
    use crate::custom_tools::plain;
    use pi_agent_core::{FnTool, ToolResult};
    use serde_json::json;

    fn tool(name: &str, origin: &str) -> LoadedTool {
        let reply = origin.to_owned();
        let tool = FnTool::new(name, "test", json!({"type": "object"}), move |_, _, _| {
            let reply = reply.clone();
            async move { Ok(ToolResult::text(reply)) }
        });
        LoadedTool {
            tool: plain(tool),
            origin: origin.to_owned(),
            path: None,
            kind: ToolKind::Native,
        }
    }

    /// A `hello` process tool (the example's script) in `dir/<name>`, from `source`.
    fn hello_location(dir: &std::path::Path, name: &str, source: ToolSource) -> ToolLocation {
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/custom-tools/hello/tool.py");
        let path = dir.join(name);
        std::fs::create_dir_all(&path).unwrap();
        let manifest = json!({"command": "python3", "args": [script]});
        std::fs::write(path.join("tool.json"), manifest.to_string()).unwrap();
        ToolLocation { path, source }
    }

    fn kept(resolved: &CustomTools) -> Vec<(&str, &str)> {
        resolved
            .tools
            .iter()
            .map(|t| (t.tool.name(), t.origin.as_str()))
            .collect()
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn native_tools_beat_cli_tools_which_beat_tool_directories() {
        let dir = tempfile::tempdir().unwrap();
        // `--tool` first in the list: its rank comes from its source, not its place.
        let cli = hello_location(dir.path(), "cli", ToolSource::Cli);
        let global = hello_location(dir.path(), "global", ToolSource::Global);
        let project = hello_location(dir.path(), "project", ToolSource::Project);
        let settings = hello_location(dir.path(), "settings", ToolSource::Settings);
        let locations = [cli.clone(), global, project, settings];
        let origin = |location: &ToolLocation| location.path.display().to_string();
        let api = ToolApi::new(dir.path());
        let no_mcp = BTreeMap::new();

        let resolved = load_all(&[], &locations, &no_mcp, &api, &[]).await;
        assert_eq!(resolved.errors, []);
        assert_eq!(kept(&resolved), [("hello", origin(&cli).as_str())]);

        let native = NamedFactory::new("mine", |_api: &ToolApi| -> Result<Vec<Arc<dyn CustomTool>>, String> {
            Ok(vec![tool("hello", "native").tool])
        });
        let resolved = load_all(&[native], &locations, &no_mcp, &api, &[]).await;
        assert_eq!(resolved.errors, []);
        assert_eq!(kept(&resolved), [("hello", "native:mine")]);
        let result = resolved.tools[0]
            .tool
            .execute("c1", json!({}), pi_agent_core::ToolContext::detached())
            .await
            .unwrap();
        assert_eq!(result.content[0].as_text(), Some("native"));
    }

    #[test]
    fn later_sources_win_and_built_in_names_are_reserved() {
        let loaded = vec![
            tool("todo", "global"),
            tool("read", "project"),
            tool("hello", "project"),
            tool("todo", "cli"),
        ];
        let resolved = resolve_conflicts(loaded, &["read", "bash"]);
        let kept: Vec<(&str, &str)> = resolved
            .tools
            .iter()
            .map(|t| (t.tool.name(), t.origin.as_str()))
            .collect();
        assert_eq!(kept, [("hello", "project"), ("todo", "cli")]);
        assert_eq!(
            resolved.errors,
            [LoadError {
                origin: "project".into(),
                error: "Tool name \"read\" conflicts with existing tool".into()
            }]
        );
    }
}
