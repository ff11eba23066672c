//! The one error of reading `settings.json`.

/// A settings file that could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// The file exists but could not be read.
    #[error("Cannot read {file}: {message}")]
    Read {
        /// The file.
        file: String,
        /// Why.
        message: String,
    },
    /// The file could not be written.
    #[error("Failed to save settings to {file}: {message}")]
    Write {
        /// The file.
        file: String,
        /// Why.
        message: String,
    },
    /// The file is not a JSON object.
    #[error("Invalid settings in {file}:{line}:{column}: {message}")]
    Parse {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A known key has a value of the wrong kind.
    #[error("Invalid settings in {file}: \"{key}\" {message}")]
    Value {
        /// The file.
        file: String,
        /// The key.
        key: String,
        /// What is wrong.
        message: String,
    },
}
