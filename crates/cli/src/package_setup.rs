//! What pi's packages add to every run (`docs/packages.md`): the installed packages' extensions,
//! skills and prompt templates, and the `-e npm:…` / `-e git:…` sources installed for the run.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pi_coding_agent::WarnFn;
use pi_coding_agent::config::AgentPaths;
use pi_coding_agent::packages::{ChildOutput, PackageManager, PackageResources, PackageSource, ResourceKind};
use pi_coding_agent::resources::{ExtraResource, Metadata};

use crate::args::Args;
use crate::io::{Io, say};

/// What pi's packages add to this run (`docs/packages.md`).
#[derive(Default)]
pub(crate) struct PackageAdditions {
    /// Extension entries: the installed packages' (unless `--no-extensions`), then those of the
    /// `-e npm:…` / `-e git:…` sources.
    pub(crate) extensions: Vec<PathBuf>,
    /// Every enabled resource of the installed packages.
    installed: PackageResources,
}

impl PackageAdditions {
    /// The installed packages' skills or prompt templates, as the resource loader takes them.
    pub(crate) fn extras(&self, kind: ResourceKind) -> Vec<ExtraResource> {
        self.installed
            .of(kind)
            .iter()
            .map(|resource| ExtraResource {
                path: resource.path.clone(),
                metadata: Metadata {
                    source: resource.package.source.clone(),
                    scope: resource.package.scope.as_str().to_owned(),
                    origin: "package".to_owned(),
                    base_dir: Some(resource.package.root.clone()),
                },
            })
            .collect()
    }
}

/// Whether an `-e` argument names a package (`npm:…`, `git:…`, a git URL) rather than a path:
/// what the package manager's own parser says (pi's rules).
pub(crate) fn is_package_source(path: &Path) -> bool {
    !matches!(PackageSource::parse(&path.to_string_lossy()), PackageSource::Local(_))
}

/// pi's packages at start-up: every enabled resource of the packages in both settings files
/// (missing npm and git packages are installed first unless offline, as pi does), and the `-e`
/// package sources installed for this run under the temporary directory. npm's and git's output
/// and the progress lines go to stderr (stdout may carry JSON or RPC); a failure is a warning and
/// the run goes on without those resources.
pub(crate) async fn package_resources(
    args: &Args,
    cwd: &Path,
    paths: &AgentPaths,
    io: &Io,
    warn: &WarnFn,
) -> PackageAdditions {
    let stderr = io.stderr.clone();
    let manager = PackageManager::new(cwd, &paths.agent_dir)
        .offline(args.offline)
        .child_output(ChildOutput::Stderr)
        .on_progress(Arc::new(move |line: &str| say(&stderr, line)));
    let mut additions = PackageAdditions::default();
    match pi_coding_agent::packages::resources(&manager).await {
        Ok(installed) => additions.installed = installed,
        Err(error) => warn(format!("Warning: packages: {error}")),
    }
    if !args.no_extensions {
        additions.extensions = (additions.installed.of(ResourceKind::Extensions).iter())
            .map(|resource| resource.path.clone())
            .collect();
    }
    let sources: Vec<String> = (args.extension.iter())
        .filter(|path| is_package_source(path))
        .map(|path| path.to_string_lossy().into_owned())
        .collect();
    if !sources.is_empty() {
        match manager.resolve_extension_sources(&sources).await {
            Ok(resolved) => additions.extensions.extend(
                resolved
                    .enabled()
                    .of(ResourceKind::Extensions)
                    .iter()
                    .map(|resource| resource.path.clone()),
            ),
            Err(error) => warn(format!("Error: {error}")),
        }
    }
    additions
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_sources_are_told_from_paths_by_the_package_parser() {
        for source in ["npm:@foo/bar@1.0.0", "git:github.com/u/r@v1", "https://github.com/u/r"] {
            assert!(is_package_source(Path::new(source)), "{source}");
        }
        for path in ["./ext.ts", "ext.ts", "/abs/ext", "~/ext.ts"] {
            assert!(!is_package_source(Path::new(path)), "{path}");
        }
    }
}
