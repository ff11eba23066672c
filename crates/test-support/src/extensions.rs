//! Extensions for tests: a Python extension written into a directory, speaking the extension
//! protocol through `examples/extensions/lib/pi_extension.py`.

use std::path::{Path, PathBuf};

use serde_json::json;

/// `examples/extensions` of this repository.
pub fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/extensions")
}

/// Writes a Python extension `name` under `dir` and returns its directory: an `extension.json`
/// (`python3 extension.py`, with `timeout` milliseconds when given) and an `extension.py` that
/// imports `pi_extension`, makes `ext` (its path: the directory), runs `body`, then `ext.run()`.
///
/// # Panics
///
/// When the files cannot be written.
pub fn python_extension(dir: &Path, name: &str, body: &str, timeout: Option<u64>) -> PathBuf {
    let root = dir.join(name);
    #[allow(clippy::expect_used)]
    std::fs::create_dir_all(&root).expect("the extension's directory");
    let mut manifest = json!({"command": "python3", "args": ["extension.py"]});
    if let Some(timeout) = timeout {
        manifest["timeout"] = json!(timeout);
    }
    let script = format!(
        "import sys\nsys.path.insert(0, {lib:?})\nimport pi_extension\next = pi_extension.Extension(path={root:?})\n{body}\next.run()\n",
        lib = examples_dir().join("lib").display().to_string(),
        root = root.display().to_string(),
    );
    #[allow(clippy::expect_used)]
    {
        std::fs::write(root.join("extension.json"), manifest.to_string()).expect("extension.json written");
        std::fs::write(root.join("extension.py"), script).expect("extension.py written");
    }
    root
}
