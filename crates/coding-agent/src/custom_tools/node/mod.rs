//! pi's TypeScript / JavaScript custom tools (`index.ts` / `index.js` exporting a factory), run
//! unchanged by a small Node host that speaks the process protocol (`docs/custom-tools.md`).
//!
//! The host (`host.mjs`) is shipped inside the crate ([`HOST_SOURCE`]) and written, once per
//! content, to a cache file ([`host_file`]). [`load`] finds `node` ([`find_node`]: `PI_NODE`, else
//! `node` on `PATH`), asks it its version once ([`NodeVersion`]), checks that it can run the entry
//! (Node.js 20.6 or newer, as pi 0.73's `engines`: the module hooks that map pi's packages to the
//! host's shims need `module.register`), transpiles a TypeScript entry and the TypeScript files it
//! imports ([`transpile`]: oxc, cached by content hash, served by the host's load hook, so no
//! Node type stripping is needed and the project's `package.json` `"type"` does not matter), and
//! hands the command ([`process_spec`]) to the process-tool runtime.

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tracing::Instrument;

use super::process::{ProcessError, ProcessSpec, load_spec};
use super::{CustomTool, ToolApi};

#[cfg(test)]
mod tests;
pub mod transpile;

pub use transpile::{TranspileError, TranspiledModule};

/// The Node host: one JavaScript module speaking the process protocol, for one tool module
/// (`node host.mjs <entry>`, protocol version 1) or for pi 0.73's extensions (`node host.mjs
/// --extensions <entry>...`, version 2). It is written as parts that share one module scope,
/// concatenated here in order: `host.mjs` (imports, typebox shim, module hooks, the protocol
/// channel, the custom-tool mode), `tui.mjs` (the pi-tui shim), `shims.mjs` (the pi-coding-agent
/// and pi-ai shims of extensions), `extensions.mjs` (the extension mode), `main.mjs` (argv).
pub const HOST_SOURCE: &str = concat!(
    include_str!("host.mjs"),
    include_str!("tui.mjs"),
    include_str!("shims.mjs"),
    include_str!("extensions.mjs"),
    include_str!("main.mjs"),
);

/// The environment variable naming the `node` to use (a path, or a name looked up on `PATH`).
pub const NODE_ENV: &str = "PI_NODE";

/// The oldest Node.js that runs JavaScript tools (`module.register`).
pub const MIN_NODE_JS: NodeVersion = NodeVersion::new(20, 6, 0);

/// The oldest Node.js that runs TypeScript tools: the same as for JavaScript, since pi transpiles
/// TypeScript itself ([`transpile`]) and Node only runs the output.
pub const MIN_NODE_TS: NodeVersion = MIN_NODE_JS;

/// The environment variable through which the host's load hook gets the transpiled TypeScript
/// ([`transpile::module_map`]).
pub const TS_MODULES_ENV: &str = "PI_TS_MODULES";

/// A call's time limit (`execute`, `pendingAction.*`), as for process tools without a `timeout`.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(300);

/// How long `node --version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

/// A Node.js version, as `node --version` prints it (`v22.6.0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeVersion {
    /// Major.
    pub major: u32,
    /// Minor.
    pub minor: u32,
    /// Patch.
    pub patch: u32,
}

impl NodeVersion {
    /// `major.minor.patch`.
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        NodeVersion { major, minor, patch }
    }

    /// Parses what `node --version` prints (`v22.6.0`, surrounding space allowed).
    ///
    /// ```
    /// use pi_coding_agent::custom_tools::node::NodeVersion;
    /// assert_eq!(NodeVersion::parse("v22.6.0\n"), Some(NodeVersion::new(22, 6, 0)));
    /// assert_eq!(NodeVersion::parse("not node"), None);
    /// ```
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        let text = text.strip_prefix('v').unwrap_or(text);
        let core = text.split(['-', '+']).next()?;
        let mut parts = core.split('.').map(|part| part.parse::<u32>().ok());
        let version = NodeVersion::new(parts.next()??, parts.next()??, parts.next()??);
        parts.next().is_none().then_some(version)
    }

    /// `22.6` (without the patch, for messages).
    fn short(self) -> String {
        format!("{}.{}", self.major, self.minor)
    }
}

impl std::fmt::Display for NodeVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "v{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// What language a tool module is written in, from its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptKind {
    /// `.ts`, `.mts`, `.cts`: transpiled by pi before Node runs it.
    TypeScript,
    /// Anything else (`.js`, `.mjs`, `.cjs`).
    JavaScript,
}

impl ScriptKind {
    /// The kind of `entry`.
    pub fn of(entry: &Path) -> Self {
        match entry.extension().and_then(|e| e.to_str()) {
            Some("ts" | "mts" | "cts") => ScriptKind::TypeScript,
            _ => ScriptKind::JavaScript,
        }
    }

    /// The oldest Node.js that runs this kind.
    pub fn min_node(self) -> NodeVersion {
        match self {
            ScriptKind::TypeScript => MIN_NODE_TS,
            ScriptKind::JavaScript => MIN_NODE_JS,
        }
    }
}

/// Why a pi TypeScript / JavaScript tool cannot run: no `node`, one too old for it, one that does
/// not say its version, a host file that cannot be written — or, once the host runs, the process
/// tool's own load error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NodeError {
    /// No `node` on `PATH` (and `PI_NODE` unset).
    #[error(
        "Node.js is needed to run {} (install Node.js {} or newer, or set {NODE_ENV} to its path)",
        .entry.display(),
        .needed.short()
    )]
    NotFound {
        /// The tool module.
        entry: PathBuf,
        /// The oldest Node.js that runs it.
        needed: NodeVersion,
    },
    /// `PI_NODE` names no program pi can run.
    #[error(
        "{NODE_ENV}={value} is not a program pi can run; Node.js is needed to run {} (install Node.js {} or newer, or set {NODE_ENV} to its path)",
        .entry.display(),
        .needed.short()
    )]
    NotRunnable {
        /// The value of `PI_NODE`.
        value: String,
        /// The tool module.
        entry: PathBuf,
        /// The oldest Node.js that runs it.
        needed: NodeVersion,
    },
    /// A TypeScript tool and a `node` older than [`MIN_NODE_TS`].
    #[error(
        "{} is TypeScript, which needs Node.js {} or newer (pi transpiles it; the host needs module.register); \
         {} is {version}. Install a newer Node.js or set {NODE_ENV} to one",
        .entry.display(),
        MIN_NODE_TS.short(),
        .node.display()
    )]
    TooOldForTypeScript {
        /// The tool module.
        entry: PathBuf,
        /// The `node`.
        node: PathBuf,
        /// Its version.
        version: NodeVersion,
    },
    /// A JavaScript tool and a `node` older than [`MIN_NODE_JS`].
    #[error(
        "{} needs Node.js {} or newer (for module.register); {} is {version}. Install a newer Node.js or set {NODE_ENV} to one",
        .entry.display(),
        MIN_NODE_JS.short(),
        .node.display()
    )]
    TooOldForJavaScript {
        /// The tool module.
        entry: PathBuf,
        /// The `node`.
        node: PathBuf,
        /// Its version.
        version: NodeVersion,
    },
    /// `node --version` did not answer in time.
    #[error("{} --version did not answer within {} s", .node.display(), .after.as_secs())]
    VersionTimedOut {
        /// The `node`.
        node: PathBuf,
        /// The time limit.
        after: Duration,
    },
    /// `node --version` could not be run.
    #[error("Cannot run {} --version: {source}", .node.display())]
    VersionFailed {
        /// The `node`.
        node: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// `node --version` printed something else than a version.
    #[error("{} --version printed {:?}, not a Node.js version", .node.display(), .printed)]
    NotAVersion {
        /// The `node`.
        node: PathBuf,
        /// What it printed (trimmed).
        printed: String,
    },
    /// The host file could not be written, neither to the cache directory nor to the temp one.
    #[error("Cannot write the Node host to {}: {source}", .dir.display())]
    HostNotWritten {
        /// The cache directory tried first.
        dir: PathBuf,
        /// Why the last attempt failed.
        #[source]
        source: std::io::Error,
    },
    /// A TypeScript file of the tool could not be transpiled (or its output not cached).
    #[error(transparent)]
    Transpile(#[from] TranspileError),
    /// The blocking task that looks for `node` and writes the host failed (panicked).
    #[error("Cannot prepare the Node host: {source}")]
    Prepare {
        /// The task's failure.
        #[source]
        source: tokio::task::JoinError,
    },
    /// The host ran but the tool did not load: the process tool's error.
    #[error(transparent)]
    Process(#[from] ProcessError),
}

/// Whether `path` is a file this user may run.
fn is_executable(path: &Path) -> bool {
    let Ok(metadata) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        metadata.is_file() && metadata.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        metadata.is_file()
    }
}

/// `name` looked up in the directories of `path` (a `PATH` value).
fn search_path(name: &str, path: Option<&str>) -> Option<PathBuf> {
    let names: Vec<String> = if cfg!(windows) && Path::new(name).extension().is_none() {
        vec![format!("{name}.exe"), format!("{name}.cmd"), name.to_owned()]
    } else {
        vec![name.to_owned()]
    };
    std::env::split_paths(path?)
        .filter(|dir| !dir.as_os_str().is_empty())
        .flat_map(|dir| names.iter().map(move |name| dir.join(name)))
        .find(|candidate| is_executable(candidate))
}

/// The `node` to run: `PI_NODE` (a path, or a name looked up on `PATH`), else `node` on `PATH`.
/// `Err` says what is missing; `entry` is named in the message. Blocking (file metadata).
pub fn find_node(env: &dyn Fn(&str) -> Option<String>, entry: &Path) -> Result<PathBuf, NodeError> {
    let path = env("PATH");
    let needed = ScriptKind::of(entry).min_node();
    match env(NODE_ENV).filter(|value| !value.trim().is_empty()) {
        Some(value) => {
            let named = Path::new(&value);
            let found = if named.components().count() > 1 || named.is_absolute() {
                is_executable(named).then(|| named.to_path_buf())
            } else {
                search_path(&value, path.as_deref())
            };
            found.ok_or_else(|| NodeError::NotRunnable {
                value,
                entry: entry.to_path_buf(),
                needed,
            })
        }
        None => search_path("node", path.as_deref()).ok_or_else(|| NodeError::NotFound {
            entry: entry.to_path_buf(),
            needed,
        }),
    }
}

/// Checks that Node.js `version` (at `node`) can run `entry`; the error says what is needed.
pub fn check_version(version: NodeVersion, node: &Path, entry: &Path) -> Result<(), NodeError> {
    check_version_for(version, node, entry, ScriptKind::of(entry))
}

/// Checks that Node.js `version` (at `node`) can run `kind` scripts, `entry` naming what needs it
/// in the error.
pub(crate) fn check_version_for(
    version: NodeVersion,
    node: &Path,
    entry: &Path,
    kind: ScriptKind,
) -> Result<(), NodeError> {
    if version >= kind.min_node() {
        return Ok(());
    }
    let (entry, node) = (entry.to_path_buf(), node.to_path_buf());
    Err(match kind {
        ScriptKind::TypeScript => NodeError::TooOldForTypeScript { entry, node, version },
        ScriptKind::JavaScript => NodeError::TooOldForJavaScript { entry, node, version },
    })
}

/// The flags `node` runs the host with, for a `kind` entry on Node.js `version`:
///
/// - TypeScript: `--enable-source-maps`, so that a stack trace names the `.ts` line through the
///   inline source map of the transpiled module (no type-stripping flag: pi transpiles);
/// - `--experimental-detect-module` before 22.7 (20.10 and newer), so an ES-module `.js` file
///   needs no `package.json` `"type": "module"`;
/// - `--disable-warning=ExperimentalWarning` and `--disable-warning=MODULE_TYPELESS_PACKAGE_JSON`
///   (the warnings of module hooks and module detection) where `--disable-warning` exists (20.11,
///   21.3 and newer).
pub fn node_flags(version: NodeVersion, kind: ScriptKind) -> Vec<String> {
    let v = |major, minor| NodeVersion::new(major, minor, 0);
    let mut flags = Vec::new();
    if version >= v(21, 3) || (version >= v(20, 11) && version < v(21, 0)) {
        flags.push("--disable-warning=ExperimentalWarning".to_owned());
        flags.push("--disable-warning=MODULE_TYPELESS_PACKAGE_JSON".to_owned());
    }
    if kind == ScriptKind::TypeScript {
        flags.push("--enable-source-maps".to_owned());
    }
    if version >= v(20, 10) && version < v(22, 7) {
        flags.push("--experimental-detect-module".to_owned());
    }
    flags
}

/// The command running `entry` in the host at `host` with `node` (Node.js `version`), in the
/// entry's directory; relative paths are made absolute (against the current directory).
pub fn process_spec(node: &Path, version: NodeVersion, host: &Path, entry: &Path) -> ProcessSpec {
    let absolute = |path: &Path| std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let (node, host, entry) = (absolute(node), absolute(host), absolute(entry));
    let entry = entry.as_path();
    let mut args = node_flags(version, ScriptKind::of(entry));
    args.push(host.display().to_string());
    args.push(entry.display().to_string());
    let dir = entry
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let name = entry
        .file_name()
        .map_or_else(|| entry.display().to_string(), |n| n.to_string_lossy().into_owned());
    ProcessSpec {
        program: node,
        args,
        env: BTreeMap::new(),
        dir,
        timeout: CALL_TIMEOUT,
        label: format!("node {name}"),
    }
}

/// The versions of the `node`s asked so far, by path: each is asked once per pi process.
fn versions() -> &'static Mutex<HashMap<PathBuf, NodeVersion>> {
    static VERSIONS: OnceLock<Mutex<HashMap<PathBuf, NodeVersion>>> = OnceLock::new();
    VERSIONS.get_or_init(Mutex::default)
}

/// The version of `node` (`node --version`, run once per path).
pub async fn node_version(node: &Path) -> Result<NodeVersion, NodeError> {
    if let Some(version) = pi_agent_core::lock(versions()).get(node) {
        return Ok(*version);
    }
    let run = tokio::process::Command::new(node)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(VERSION_TIMEOUT, run)
        .await
        .map_err(|_| NodeError::VersionTimedOut {
            node: node.to_path_buf(),
            after: VERSION_TIMEOUT,
        })?
        .map_err(|source| NodeError::VersionFailed {
            node: node.to_path_buf(),
            source,
        })?;
    let text = String::from_utf8_lossy(&output.stdout);
    let version = NodeVersion::parse(&text).ok_or_else(|| NodeError::NotAVersion {
        node: node.to_path_buf(),
        printed: text.trim().to_owned(),
    })?;
    pi_agent_core::lock(versions()).insert(node.to_path_buf(), version);
    Ok(version)
}

/// A short hash of the host's source, so that the cache file changes with it.
fn source_hash() -> u64 {
    // FNV-1a, 64 bits.
    HOST_SOURCE.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The directory the host file is cached in: the user's cache directory (`$XDG_CACHE_HOME`,
/// `~/.cache`, `%LOCALAPPDATA%`) under `pi/node-host`, else the OS temp directory.
pub fn cache_dir(env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    let non_empty = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let base = non_empty("XDG_CACHE_HOME")
        .or_else(|| non_empty("HOME").map(|home| home.join(".cache")))
        .or_else(|| non_empty("LOCALAPPDATA"));
    match base {
        Some(base) => base.join("pi").join("node-host"),
        None => std::env::temp_dir().join("pi-node-host"),
    }
}

/// Writes the host to `dir` (created if needed) as `host-<version>-<hash>.mjs` unless a file with
/// exactly its content is there, atomically (a temporary file renamed into place), and returns
/// its path. Blocking.
pub fn host_file(dir: &Path) -> std::io::Result<PathBuf> {
    let path = dir.join(format!("host-{}-{:016x}.mjs", env!("CARGO_PKG_VERSION"), source_hash()));
    if std::fs::read(&path).is_ok_and(|existing| existing == HOST_SOURCE.as_bytes()) {
        return Ok(path);
    }
    std::fs::create_dir_all(dir)?;
    let mut temp = tempfile::Builder::new()
        .prefix(".host-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    std::io::Write::write_all(&mut temp, HOST_SOURCE.as_bytes())?;
    temp.as_file().sync_all()?;
    temp.persist(&path).map_err(|error| error.error)?;
    Ok(path)
}

/// The host file in the cache directory, or in the OS temp directory when that cannot be written.
/// Blocking.
pub(crate) fn ensure_host_file(env: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf, NodeError> {
    let preferred = cache_dir(env);
    host_file(&preferred)
        .or_else(|_| host_file(&std::env::temp_dir().join("pi-node-host")))
        .map_err(|source| NodeError::HostNotWritten { dir: preferred, source })
}

/// Reads an environment variable (`std::env::var` in pi; a fixed map in tests).
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Where transpiled TypeScript is cached: `<cache_dir>/ts` (pi's `<agent dir>/cache/ts`), or
/// without a cache directory `pi-ts-cache` in the OS temp directory.
pub fn ts_cache_dir(cache_dir: Option<&Path>) -> PathBuf {
    match cache_dir {
        Some(dir) => dir.join("ts"),
        None => std::env::temp_dir().join("pi-ts-cache"),
    }
}

/// The command that runs `entry` in the Node host, with the environment read through `env`:
/// finds `node`, checks its version, writes the host file and, for a TypeScript entry,
/// transpiles it and the TypeScript files it imports into `<cache_dir>/ts` ([`ts_cache_dir`]).
pub async fn prepare(entry: &Path, env: EnvLookup, cache_dir: Option<&Path>) -> Result<ProcessSpec, NodeError> {
    let entry_owned = entry.to_path_buf();
    let (node, host) = tokio::task::spawn_blocking(move || {
        let node = find_node(&*env, &entry_owned)?;
        let host = ensure_host_file(&*env)?;
        Ok::<_, NodeError>((node, host))
    })
    .await
    .map_err(|source| NodeError::Prepare { source })??;
    let version = node_version(&node).await?;
    check_version(version, &node, entry)?;
    let mut spec = process_spec(&node, version, &host, entry);
    if ScriptKind::of(entry) == ScriptKind::TypeScript {
        let (entry, dir) = (entry.to_path_buf(), ts_cache_dir(cache_dir));
        let modules = tokio::task::spawn_blocking(move || transpile::transpile_graph(&entry, &dir))
            .await
            .map_err(|source| NodeError::Prepare { source })??;
        let transpiled = modules.iter().filter(|m| !m.cached).count();
        tracing::debug!(modules = modules.len(), transpiled, "TypeScript ready");
        spec.env
            .insert(TS_MODULES_ENV.to_owned(), transpile::module_map(&modules));
    }
    tracing::debug!(node = %node.display(), %version, "starting the Node host");
    Ok(spec)
}

/// Loads the pi TypeScript / JavaScript tool module `entry`: runs it in the Node host and returns
/// the tools its factory creates.
pub async fn load(entry: &Path, api: &ToolApi) -> Result<Vec<Arc<dyn CustomTool>>, NodeError> {
    let span = tracing::info_span!("node_tool", entry = %entry.display());
    async {
        let env: EnvLookup = Arc::new(|name: &str| std::env::var(name).ok());
        let spec = prepare(entry, env, api.cache_dir()).await?;
        Ok(load_spec(spec, api).await?)
    }
    .instrument(span)
    .await
}
