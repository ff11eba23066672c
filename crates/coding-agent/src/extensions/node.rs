//! The one Node process that hosts every TypeScript / JavaScript extension of a session:
//! `node <host> --extensions <entry>...` (the custom-tool host of `custom_tools::node`, in its
//! extensions mode), its TypeScript transpiled by pi beforehand (oxc, cached, served by the
//! host's load hook through `PI_TS_MODULES`).

use std::path::{Path, PathBuf};

use crate::custom_tools::node::{
    EnvLookup, NodeError, ScriptKind, TS_MODULES_ENV, TranspiledModule, check_version_for, ensure_host_file, find_node,
    node_flags, node_version, transpile, ts_cache_dir,
};
use crate::custom_tools::process::ProcessSpec;

/// How the Node host names itself in load errors.
pub(crate) const NODE_HOST_LABEL: &str = "node extension host";

/// The Node host's command for `entries` (at least one), run in `cwd` (the session's), and the
/// entries that cannot be part of it (a TypeScript file that does not transpile), each with its
/// error.
///
/// Public for the extension host's integration tests, which start the host from this command.
#[doc(hidden)]
pub async fn host_spec(
    entries: &[PathBuf],
    cwd: &Path,
    env: EnvLookup,
    cache: Option<&Path>,
) -> Result<(ProcessSpec, Vec<PathBuf>, Vec<(PathBuf, String)>), NodeError> {
    // The entry that decides the Node.js version needed (the first TypeScript one, else the first)
    // names what needs Node in messages (callers pass at least one).
    let typescript = entries.iter().find(|e| ScriptKind::of(e) == ScriptKind::TypeScript);
    let kind = if typescript.is_some() {
        ScriptKind::TypeScript
    } else {
        ScriptKind::JavaScript
    };
    let needs = typescript.or(entries.first()).cloned().unwrap_or_default();
    let (lookup, probe) = (env.clone(), needs.clone());
    let (node, host) = tokio::task::spawn_blocking(move || {
        let node = find_node(&*lookup, &probe)?;
        let host = ensure_host_file(&*lookup)?;
        Ok::<_, NodeError>((node, host))
    })
    .await
    .map_err(|source| NodeError::Prepare { source })??;
    let version = node_version(&node).await?;
    check_version_for(version, &node, &needs, kind)?;
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
        dir: cwd.to_path_buf(),
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;

    use super::*;

    /// A `node` that answers `--version` with `version` (and does nothing else).
    #[cfg(unix)]
    fn fake_node(dir: &Path, version: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join("node");
        std::fs::write(&path, format!("#!/bin/sh\necho {version}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn the_version_check_is_the_one_of_typescript_when_any_entry_is_typescript() {
        let dir = tempfile::tempdir().unwrap();
        let node = fake_node(dir.path(), "v20.5.1").display().to_string();
        let cache = dir.path().join("cache").display().to_string();
        let env: EnvLookup = Arc::new(move |name: &str| match name {
            "PI_NODE" => Some(node.clone()),
            "XDG_CACHE_HOME" => Some(cache.clone()),
            _ => None,
        });
        let entries = [dir.path().join("first.mjs"), dir.path().join("second.ts")];
        let error = host_spec(&entries, dir.path(), env, Some(dir.path()))
            .await
            .unwrap_err();
        assert!(
            matches!(&error, NodeError::TooOldForTypeScript { entry, .. } if *entry == entries[1]),
            "{error:?}"
        );
    }
}
