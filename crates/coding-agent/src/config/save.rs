//! Writing the global `settings.json`: pi saves the default model and thinking level the user
//! picks (`defaultProvider`, `defaultModel`, `defaultThinkingLevel`) there.

use std::io::Write;
use std::path::Path;

use serde_json::{Map, Value};

use super::SettingsError;
use super::settings::read_object;

/// Sets `updates`' keys in the settings file at `path`, keeping every other key (also the ones
/// this program does not know) and their order; an object updates the object already there key
/// by key (`{"compaction": {"enabled": false}}` keeps `compaction.reserveTokens`), as pi marks
/// single fields modified. The file is replaced atomically (a temporary
/// file in the same directory, then renamed), as pi writes it: pretty-printed with two spaces.
/// The directory is created when missing. Blocking.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("settings.json");
/// std::fs::write(&path, r#"{"theme": "light", "someFutureKey": [1]}"#).unwrap();
/// let updates = serde_json::json!({"defaultProvider": "anthropic", "defaultModel": "claude-x"});
/// pi_coding_agent::config::save_global_settings(&path, updates.as_object().unwrap().clone()).unwrap();
/// let saved: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
/// assert_eq!(saved, serde_json::json!({
///     "theme": "light", "someFutureKey": [1], "defaultProvider": "anthropic", "defaultModel": "claude-x"
/// }));
/// ```
pub fn save_global_settings(path: &Path, updates: Map<String, Value>) -> Result<(), SettingsError> {
    let mut settings = read_object(path)?.unwrap_or_default();
    merge_into(&mut settings, updates);
    let failed = |error: std::io::Error| SettingsError::Write {
        file: path.display().to_string(),
        message: error.to_string(),
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(failed)?;
    let text = serde_json::to_string_pretty(&Value::Object(settings)).map_err(|e| failed(e.into()))?;
    let mut file = tempfile::NamedTempFile::new_in(dir).map_err(failed)?;
    file.write_all(text.as_bytes()).map_err(failed)?;
    file.as_file().sync_all().map_err(failed)?;
    file.persist(path).map_err(|e| failed(e.error))?;
    Ok(())
}

fn merge_into(settings: &mut Map<String, Value>, updates: Map<String, Value>) {
    for (key, value) in updates {
        match (settings.get_mut(&key), value) {
            (Some(Value::Object(existing)), Value::Object(fields)) => merge_into(existing, fields),
            (_, value) => {
                settings.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn creates_the_file_and_keeps_unknown_keys_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent").join("settings.json");
        let set = |value: Value| save_global_settings(&path, value.as_object().unwrap().clone()).unwrap();
        set(json!({"defaultThinkingLevel": "high"}));
        std::fs::write(
            &path,
            "{\n  \"zeta\": 1,\n  \"defaultThinkingLevel\": \"high\",\n  \"alpha\": {\"x\": true}\n}",
        )
        .unwrap();
        set(json!({"defaultThinkingLevel": "low", "defaultModel": "m"}));
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\n  \"zeta\": 1,\n  \"defaultThinkingLevel\": \"low\",\n  \"alpha\": {\n    \"x\": true\n  },\n  \"defaultModel\": \"m\"\n}"
        );
        let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left");
    }

    #[test]
    fn an_object_is_updated_field_by_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, r#"{"compaction": {"reserveTokens": 1000, "enabled": true}}"#).unwrap();
        save_global_settings(
            &path,
            json!({"compaction": {"enabled": false}}).as_object().unwrap().clone(),
        )
        .unwrap();
        let saved: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(saved, json!({"compaction": {"reserveTokens": 1000, "enabled": false}}));
    }

    #[test]
    fn a_broken_file_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "{ broken").unwrap();
        let error = save_global_settings(&path, Map::new()).unwrap_err();
        assert!(matches!(error, SettingsError::Parse { .. }), "{error}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ broken");
    }
}
