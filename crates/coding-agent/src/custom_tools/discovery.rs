//! Where custom tools come from, in priority order (later sources win on a name conflict):
//!
//! 1. `~/.pi/agent/tools/*/` — global;
//! 2. `.pi/tools/*/` — the project's;
//! 3. `settings.json` `customTools` — configured paths (relative to the cwd, `~` expanded);
//! 4. `--tool <path>` — the command line, highest of the locations.
//!
//! MCP servers rank between `customTools` and `--tool`, and the native tools of a program embedding
//! pi above all of them ([`super::loader::load_all`]).
//!
//! A tool location is a directory holding a `tool.json` manifest (a process tool, any language) or an
//! `index.ts` / `index.js` (a pi TypeScript / JavaScript tool), or such a file itself.

use std::path::{Path, PathBuf};

/// Which source a location came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ToolSource {
    /// `~/.pi/agent/tools/*/`.
    Global,
    /// `.pi/tools/*/`.
    Project,
    /// `settings.json` `customTools`.
    Settings,
    /// `--tool`.
    Cli,
}

/// One place to load tools from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolLocation {
    /// The directory or file.
    pub path: PathBuf,
    /// Its source.
    pub source: ToolSource,
}

/// What a location holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolPackage {
    /// A process tool: `manifest` is its `tool.json`, `dir` the directory it runs in.
    Process {
        /// The tool's directory.
        dir: PathBuf,
        /// Its `tool.json`.
        manifest: PathBuf,
    },
    /// A pi TypeScript / JavaScript tool: the module exporting the factory.
    Script {
        /// `index.ts`, `index.js`, or the file given.
        entry: PathBuf,
    },
}

/// The manifest file name of a process tool.
pub const MANIFEST: &str = "tool.json";

/// Entry files of a script tool directory, in the order they are looked for.
pub const SCRIPT_ENTRIES: [&str; 2] = ["index.ts", "index.js"];

const SCRIPT_EXTENSIONS: [&str; 5] = ["ts", "mts", "js", "mjs", "cjs"];

/// Why nothing usable is at a tool location.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClassifyError {
    /// Nothing is there (or it cannot be read).
    #[error("Tool path not found: {}", .path.display())]
    NotFound {
        /// The location.
        path: PathBuf,
        /// Why its metadata could not be read.
        #[source]
        source: std::io::Error,
    },
    /// A directory without a `tool.json`, `index.ts` or `index.js`.
    #[error("No {MANIFEST}, index.ts or index.js in {}", .dir.display())]
    NoEntry {
        /// The directory.
        dir: PathBuf,
    },
    /// A file that is neither a manifest nor a script.
    #[error("Unsupported custom tool file: {}", .path.display())]
    Unsupported {
        /// The file.
        path: PathBuf,
    },
}

/// What is at `path`, or why nothing usable is.
///
/// ```
/// use pi_coding_agent::custom_tools::{ToolPackage, classify};
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("tool.json"), "{}").unwrap();
/// assert!(matches!(classify(dir.path()), Ok(ToolPackage::Process { .. })));
/// ```
pub fn classify(path: &Path) -> Result<ToolPackage, ClassifyError> {
    let metadata = std::fs::metadata(path).map_err(|source| ClassifyError::NotFound {
        path: path.to_path_buf(),
        source,
    })?;
    if metadata.is_dir() {
        let manifest = path.join(MANIFEST);
        if manifest.is_file() {
            return Ok(ToolPackage::Process {
                dir: path.to_path_buf(),
                manifest,
            });
        }
        for entry in SCRIPT_ENTRIES {
            let entry = path.join(entry);
            if entry.is_file() {
                return Ok(ToolPackage::Script { entry });
            }
        }
        return Err(ClassifyError::NoEntry {
            dir: path.to_path_buf(),
        });
    }
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if path.file_name().and_then(|n| n.to_str()) == Some(MANIFEST) || extension == "json" {
        let dir = path.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        return Ok(ToolPackage::Process {
            dir,
            manifest: path.to_path_buf(),
        });
    }
    if SCRIPT_EXTENSIONS.contains(&extension) {
        return Ok(ToolPackage::Script {
            entry: path.to_path_buf(),
        });
    }
    Err(ClassifyError::Unsupported {
        path: path.to_path_buf(),
    })
}

/// The subdirectories of `dir` that hold a tool (a `tool.json`, `index.ts` or `index.js`), sorted;
/// nothing when it does not exist. Other folders (shared code such as a `lib/`) are not tools and
/// are passed over without an error, as pi does.
fn subdirectories(dir: &Path) -> Vec<PathBuf> {
    let holds_tool = |dir: &Path| {
        std::iter::once(MANIFEST)
            .chain(SCRIPT_ENTRIES)
            .any(|entry| dir.join(entry).is_file())
    };
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| !entry.file_name().to_string_lossy().starts_with('.'))
        .map(|entry| entry.path())
        .filter(|path| path.is_dir() && holds_tool(path))
        .collect();
    dirs.sort();
    dirs
}

/// Every tool location, lowest priority first: `global_dir` (`~/.pi/agent/tools`) subdirectories,
/// `<cwd>/.pi/tools` subdirectories, `configured` paths, then `cli` paths. A path listed twice keeps
/// its last (highest) place. Blocking.
pub fn discover(
    global_dir: Option<&Path>,
    cwd: &Path,
    configured: &[String],
    cli: &[PathBuf],
    env: &dyn Fn(&str) -> Option<String>,
) -> Vec<ToolLocation> {
    let mut locations = Vec::new();
    if let Some(global) = global_dir {
        locations.extend(subdirectories(global).into_iter().map(|path| ToolLocation {
            path,
            source: ToolSource::Global,
        }));
    }
    locations.extend(
        subdirectories(&cwd.join(".pi").join("tools"))
            .into_iter()
            .map(|path| ToolLocation {
                path,
                source: ToolSource::Project,
            }),
    );
    for text in configured {
        locations.push(ToolLocation {
            path: cwd.join(crate::config::expand_home(text, env)),
            source: ToolSource::Settings,
        });
    }
    for path in cli {
        locations.push(ToolLocation {
            path: cwd.join(path),
            source: ToolSource::Cli,
        });
    }
    let key = |path: &Path| std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mut kept: Vec<ToolLocation> = Vec::new();
    for location in locations {
        let this = key(&location.path);
        kept.retain(|earlier| key(&earlier.path) != this);
        kept.push(location);
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_in_priority_order_and_duplicates_keep_their_last_place() {
        let dir = tempfile::tempdir().unwrap();
        let global = dir.path().join("global");
        let cwd = dir.path().join("project");
        for tool in ["b", "a", ".hidden"] {
            std::fs::create_dir_all(global.join(tool)).unwrap();
            std::fs::write(global.join(tool).join("tool.json"), "{}").unwrap();
        }
        // Shared code beside the tools is not a tool.
        std::fs::create_dir_all(global.join("lib")).unwrap();
        std::fs::create_dir_all(cwd.join(".pi/tools/local")).unwrap();
        std::fs::write(cwd.join(".pi/tools/local/index.ts"), "").unwrap();
        let env = |_: &str| None;
        let locations = discover(
            Some(&global),
            &cwd,
            &["../global/a".to_owned()],
            &[PathBuf::from("cli-tool")],
            &env,
        );
        let seen: Vec<(String, ToolSource)> = locations
            .iter()
            .map(|l| (l.path.file_name().unwrap().to_string_lossy().into_owned(), l.source))
            .collect();
        assert_eq!(
            seen,
            [
                ("b".to_owned(), ToolSource::Global),
                ("local".to_owned(), ToolSource::Project),
                ("a".to_owned(), ToolSource::Settings),
                ("cli-tool".to_owned(), ToolSource::Cli),
            ]
        );
    }

    #[test]
    fn classification() {
        let dir = tempfile::tempdir().unwrap();
        let ts = dir.path().join("ts");
        std::fs::create_dir_all(&ts).unwrap();
        std::fs::write(ts.join("index.ts"), "").unwrap();
        assert_eq!(
            classify(&ts).map_err(|e| e.to_string()),
            Ok(ToolPackage::Script {
                entry: ts.join("index.ts")
            })
        );
        let empty = dir.path().join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        assert_eq!(
            classify(&empty).map_err(|e| e.to_string()),
            Err(format!("No tool.json, index.ts or index.js in {}", empty.display()))
        );
        let missing = dir.path().join("missing");
        assert_eq!(
            classify(&missing).map_err(|e| e.to_string()),
            Err(format!("Tool path not found: {}", missing.display()))
        );
        let readme = dir.path().join("README.md");
        std::fs::write(&readme, "").unwrap();
        assert!(
            classify(&readme)
                .unwrap_err()
                .to_string()
                .starts_with("Unsupported custom tool file")
        );
    }
}
