//! The one Node process that hosts every TypeScript / JavaScript extension of a session:
//! `node <host> --extensions <entry>...` (the custom-tool host of `custom_tools::node`, in its
//! extensions mode), its TypeScript transpiled by pi beforehand (oxc, cached, served by the
//! host's load hook through `PI_TS_MODULES`).

use std::path::{Path, PathBuf};

use crate::custom_tools::node::{
    EnvLookup, NodeError, ScriptKind, TS_MODULES_ENV, TranspiledModule, cache_dir, check_version, find_node, host_file,
    node_flags, node_version, transpile, ts_cache_dir,
};
use crate::custom_tools::process::ProcessSpec;

/// How the Node host names itself in load errors.
pub const NODE_HOST_LABEL: &str = "node extension host";

/// The Node host's command for `entries` (at least one), and the entries that cannot be part of it (a
/// TypeScript file that does not transpile), each with its error.
pub(crate) async fn host_spec(
    entries: &[PathBuf],
    env: EnvLookup,
    cache: Option<&Path>,
) -> Result<(ProcessSpec, Vec<PathBuf>, Vec<(PathBuf, String)>), NodeError> {
    // The first entry names what needs Node in messages (callers pass at least one).
    let first = entries.first().cloned().unwrap_or_default();
    let lookup = env.clone();
    let (node, host) = tokio::task::spawn_blocking(move || {
        let node = find_node(&*lookup, &first)?;
        let preferred = cache_dir(&*lookup);
        let host = host_file(&preferred)
            .or_else(|_| host_file(&std::env::temp_dir().join("pi-node-host")))
            .map_err(|source| NodeError::HostNotWritten { dir: preferred, source })?;
        Ok::<_, NodeError>((node, host))
    })
    .await
    .map_err(|source| NodeError::Prepare { source })??;
    let version = node_version(&node).await?;
    let any_typescript = entries.iter().any(|e| ScriptKind::of(e) == ScriptKind::TypeScript);
    let kind = if any_typescript {
        ScriptKind::TypeScript
    } else {
        ScriptKind::JavaScript
    };
    check_version(version, &node, &entries.first().cloned().unwrap_or_default())?;
    let (owned, dir) = (entries.to_vec(), ts_cache_dir(cache));
    let (modules, loadable, failed) = tokio::task::spawn_blocking(move || transpile_all(&owned, &dir))
        .await
        .map_err(|source| NodeError::Prepare { source })?;
    let mut args = node_flags(version, kind);
    args.push(host.display().to_string());
    args.push("--extensions".to_owned());
    args.extend(loadable.iter().map(|entry| entry.display().to_string()));
    let mut spec = ProcessSpec {
        program: node,
        args,
        env: std::collections::BTreeMap::new(),
        dir: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        timeout: crate::custom_tools::node::CALL_TIMEOUT,
        label: NODE_HOST_LABEL.to_owned(),
    };
    if !modules.is_empty() {
        spec.env
            .insert(TS_MODULES_ENV.to_owned(), transpile::module_map(&modules));
    }
    Ok((spec, loadable, failed))
}

/// Transpiles every TypeScript entry's graph: the modules, the entries that can load, and those
/// that cannot (with why).
fn transpile_all(entries: &[PathBuf], dir: &Path) -> (Vec<TranspiledModule>, Vec<PathBuf>, Vec<(PathBuf, String)>) {
    let mut modules: Vec<TranspiledModule> = Vec::new();
    let mut loadable = Vec::new();
    let mut failed = Vec::new();
    for entry in entries {
        if ScriptKind::of(entry) != ScriptKind::TypeScript {
            loadable.push(entry.clone());
            continue;
        }
        match transpile::transpile_graph(entry, dir) {
            Ok(graph) => {
                for module in graph {
                    if !modules.iter().any(|known| known.source == module.source) {
                        modules.push(module);
                    }
                }
                loadable.push(entry.clone());
            }
            Err(error) => failed.push((entry.clone(), format!("Failed to load extension: {error}"))),
        }
    }
    (modules, loadable, failed)
}
