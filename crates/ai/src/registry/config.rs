//! Reading `models.json`: JSON syntax first (serde's line and column), then every field checked
//! by hand so that an error names the file, the line and column of the offending value and its
//! path, e.g. `models.json:7:26: providers.ollama.models[0].contextWindow: expected a positive
//! integer`.

use std::collections::BTreeMap;
use std::fmt;

use pi_agent_core::{Model, ModelCost};
use serde_json::{Map, Value};

use super::builtin::known_provider;

/// Default context window of a `models.json` model (pi's default).
pub(crate) const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;
/// Default output-token limit of a `models.json` model (pi's default).
pub(crate) const DEFAULT_MAX_TOKENS: u64 = 16_384;

/// Why a `models.json` could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryError {
    /// The file exists but could not be read.
    Io {
        /// The file.
        file: String,
        /// The OS error.
        message: String,
    },
    /// Invalid JSON or an invalid field.
    Invalid {
        /// The file.
        file: String,
        /// 1-based line of the offending value.
        line: usize,
        /// 1-based column of the offending value.
        column: usize,
        /// Path of the offending value (`providers.ollama.models[0].id`); empty for syntax
        /// errors.
        path: String,
        /// What is wrong.
        message: String,
    },
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryError::Io { file, message } => write!(f, "{file}: {message}"),
            RegistryError::Invalid {
                file,
                line,
                column,
                path,
                message,
            } if path.is_empty() => write!(f, "{file}:{line}:{column}: {message}"),
            RegistryError::Invalid {
                file,
                line,
                column,
                path,
                message,
            } => write!(f, "{file}:{line}:{column}: {path}: {message}"),
        }
    }
}

impl std::error::Error for RegistryError {}

/// Why `pi.registerProvider(name, config)` refused a config: pi's messages for its own rules, and
/// the field that does not check otherwise.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderConfigError {
    /// Models without a `baseUrl`.
    #[error("Provider {provider}: \"baseUrl\" is required when defining models.")]
    MissingBaseUrl {
        /// The provider's name.
        provider: String,
    },
    /// Models without an `apiKey` (or `oauth`).
    #[error("Provider {provider}: \"apiKey\" or \"oauth\" is required when defining models.")]
    MissingApiKey {
        /// The provider's name.
        provider: String,
    },
    /// A model whose `api` is set neither on it nor on the provider.
    #[error("Provider {provider}, model {model}: no \"api\" specified.")]
    MissingApi {
        /// The provider's name.
        provider: String,
        /// The model's id.
        model: String,
    },
    /// A field of the wrong kind (`models[0].contextWindow`).
    #[error("Provider {provider}: {field}: {message}")]
    Invalid {
        /// The provider's name.
        provider: String,
        /// The field's path in the config.
        field: String,
        /// What is wrong.
        message: String,
    },
}

impl ProviderConfigError {
    /// Checks pi's rules for `config` of `provider` (before its fields are read).
    pub(crate) fn check(provider: &str, config: &Value) -> Result<(), ProviderConfigError> {
        let provider = provider.to_owned();
        let set = |key: &str| config.get(key).is_some_and(|value| !value.is_null() && value != "");
        let models = config
            .get("models")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        if models.is_empty() {
            return Ok(());
        }
        if !set("baseUrl") {
            return Err(ProviderConfigError::MissingBaseUrl { provider });
        }
        if !set("apiKey") && !set("oauth") {
            return Err(ProviderConfigError::MissingApiKey { provider });
        }
        for model in models {
            let has_api = model.get("api").is_some_and(|api| !api.is_null() && api != "");
            if !has_api && !set("api") {
                let id = model
                    .get("id")
                    .map(|id| id.as_str().map_or_else(|| id.to_string(), str::to_owned));
                return Err(ProviderConfigError::MissingApi {
                    provider,
                    model: id.unwrap_or_else(|| "undefined".to_owned()),
                });
            }
        }
        Ok(())
    }

    /// A field error of [`registered_provider`] for `provider`.
    pub(crate) fn from_registry(provider: &str, error: RegistryError) -> ProviderConfigError {
        let (field, message) = match error {
            RegistryError::Invalid { path, message, .. } => (path, message),
            RegistryError::Io { message, .. } => (String::new(), message),
        };
        ProviderConfigError::Invalid {
            provider: provider.to_owned(),
            field,
            message,
        }
    }
}

/// One step of a path into the document.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

#[derive(Debug, Clone, Default)]
struct Path(Vec<Step>);

impl Path {
    fn key(&self, key: &str) -> Path {
        let mut steps = self.0.clone();
        steps.push(Step::Key(key.to_owned()));
        Path(steps)
    }

    fn index(&self, index: usize) -> Path {
        let mut steps = self.0.clone();
        steps.push(Step::Index(index));
        Path(steps)
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, step) in self.0.iter().enumerate() {
            match step {
                Step::Key(key) if !key.is_empty() && key.chars().all(|c| c.is_alphanumeric() || "_-:@".contains(c)) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(key)?;
                }
                Step::Key(key) => write!(f, "[{}]", Value::String(key.clone()))?,
                Step::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// Finds the byte offset of the value at a path in a valid JSON text.
struct Locator<'a> {
    text: &'a str,
    pos: usize,
}

impl Locator<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// Skips a string starting at `pos` (on its quote); returns its decoded text.
    fn string(&mut self) -> Option<String> {
        let start = self.pos;
        self.pos += 1;
        let bytes = self.text.as_bytes();
        while let Some(&byte) = bytes.get(self.pos) {
            self.pos += 1;
            match byte {
                b'\\' => self.pos += 1,
                b'"' => return serde_json::from_str(self.text.get(start..self.pos)?).ok(),
                _ => {}
            }
        }
        None
    }

    fn skip_value(&mut self) -> Option<()> {
        self.skip_ws();
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            open @ (b'{' | b'[') => {
                let close = if open == b'{' { b'}' } else { b']' };
                self.pos += 1;
                loop {
                    self.skip_ws();
                    match self.peek()? {
                        byte if byte == close => {
                            self.pos += 1;
                            break;
                        }
                        b',' | b':' => self.pos += 1,
                        _ => self.skip_value()?,
                    }
                }
            }
            _ => {
                while !matches!(
                    self.peek(),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    self.pos += 1;
                }
            }
        }
        Some(())
    }

    /// Moves to the value of `step` inside the container at `pos`.
    fn enter(&mut self, step: &Step) -> Option<()> {
        self.skip_ws();
        let open = self.peek()?;
        self.pos += 1;
        let mut found = None;
        let mut index = 0;
        loop {
            self.skip_ws();
            match (open, self.peek()?) {
                (_, b'}' | b']') => break,
                (_, b',') => self.pos += 1,
                (b'{', b'"') => {
                    let key = self.string()?;
                    self.skip_ws();
                    if self.peek()? != b':' {
                        return None;
                    }
                    self.pos += 1;
                    self.skip_ws();
                    if matches!(step, Step::Key(wanted) if *wanted == key) {
                        // A repeated key: the last one wins, as when parsing.
                        found = Some(self.pos);
                    }
                    self.skip_value()?;
                }
                (b'[', _) => {
                    if matches!(step, Step::Index(wanted) if *wanted == index) {
                        found = Some(self.pos);
                    }
                    index += 1;
                    self.skip_value()?;
                }
                _ => return None,
            }
        }
        self.pos = found?;
        Some(())
    }
}

/// 1-based line and column (in characters) of the value at `path`.
fn position(text: &str, path: &Path) -> (usize, usize) {
    let mut locator = Locator { text, pos: 0 };
    let mut offset = 0;
    locator.skip_ws();
    for step in &path.0 {
        if locator.enter(step).is_none() {
            break;
        }
        offset = locator.pos;
    }
    if path.0.is_empty() {
        offset = locator.pos;
    }
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |last| last.chars().count()) + 1;
    (line, column)
}

/// A provider entry of `models.json` as pi applies it.
#[derive(Debug, Clone, Default)]
pub(crate) struct ProviderConfig {
    /// `baseUrl`.
    pub base_url: Option<String>,
    /// `api`.
    pub api: Option<String>,
    /// `apiKey` (unresolved).
    pub api_key: Option<String>,
    /// `headers` (unresolved).
    pub headers: Option<BTreeMap<String, String>>,
    /// `authHeader`.
    pub auth_header: bool,
    /// `compat`.
    pub compat: Option<Map<String, Value>>,
    /// `models`, complete.
    pub models: Vec<Model>,
    /// `modelOverrides`: model id → the fields to replace.
    pub model_overrides: Vec<(String, Map<String, Value>)>,
}

/// The parsed file: providers in file order.
pub(crate) type Config = Vec<(String, ProviderConfig)>;

struct Checker<'a> {
    file: &'a str,
    text: &'a str,
}

type Checked<T> = Result<T, RegistryError>;

impl Checker<'_> {
    fn fail(&self, path: &Path, message: impl Into<String>) -> RegistryError {
        let (line, column) = position(self.text, path);
        RegistryError::Invalid {
            file: self.file.to_owned(),
            line,
            column,
            path: path.to_string(),
            message: message.into(),
        }
    }

    fn object<'v>(&self, value: &'v Value, path: &Path) -> Checked<&'v Map<String, Value>> {
        value.as_object().ok_or_else(|| self.fail(path, "expected an object"))
    }

    fn string(&self, value: &Value, path: &Path) -> Checked<String> {
        value
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| self.fail(path, "expected a string"))
    }

    fn boolean(&self, value: &Value, path: &Path) -> Checked<bool> {
        value.as_bool().ok_or_else(|| self.fail(path, "expected true or false"))
    }

    fn number(&self, value: &Value, path: &Path) -> Checked<f64> {
        value
            .as_f64()
            .filter(|n| n.is_finite() && *n >= 0.0)
            .ok_or_else(|| self.fail(path, "expected a number (zero or more)"))
    }

    fn count(&self, value: &Value, path: &Path) -> Checked<u64> {
        match value.as_u64() {
            Some(n) if n > 0 => Ok(n),
            _ => match value.as_f64() {
                Some(n) if n >= 1.0 && n.fract() == 0.0 && n < u64::MAX as f64 => Ok(n as u64),
                _ => Err(self.fail(path, "expected a positive integer")),
            },
        }
    }

    fn string_map(&self, value: &Value, path: &Path) -> Checked<BTreeMap<String, String>> {
        let mut out = BTreeMap::new();
        for (name, value) in self.object(value, path)? {
            out.insert(name.clone(), self.string(value, &path.key(name))?);
        }
        Ok(out)
    }

    fn input(&self, value: &Value, path: &Path) -> Checked<Vec<String>> {
        let items = value
            .as_array()
            .ok_or_else(|| self.fail(path, r#"expected an array such as ["text", "image"]"#))?;
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            match item.as_str() {
                Some(kind @ ("text" | "image")) => out.push(kind.to_owned()),
                _ => return Err(self.fail(&path.index(i), r#"expected "text" or "image""#)),
            }
        }
        Ok(out)
    }

    fn cost(&self, value: &Value, path: &Path, mut cost: ModelCost) -> Checked<ModelCost> {
        let object = self.object(value, path)?;
        for (key, slot) in [
            ("input", &mut cost.input),
            ("output", &mut cost.output),
            ("cacheRead", &mut cost.cache_read),
            ("cacheWrite", &mut cost.cache_write),
        ] {
            if let Some(value) = object.get(key) {
                *slot = self.number(value, &path.key(key))?;
            }
        }
        Ok(cost)
    }

    /// Applies the model fields of `object` (all optional) onto `model`.
    fn model_fields(&self, object: &Map<String, Value>, path: &Path, model: &mut Model) -> Checked<()> {
        for (key, value) in object {
            let at = path.key(key);
            match key.as_str() {
                "name" => model.name = self.string(value, &at)?,
                "api" => model.api = self.string(value, &at)?,
                "reasoning" => model.reasoning = self.boolean(value, &at)?,
                "input" => model.input = self.input(value, &at)?,
                "contextWindow" => model.context_window = self.count(value, &at)?,
                "maxTokens" => model.max_tokens = self.count(value, &at)?,
                "cost" => model.cost = self.cost(value, &at, model.cost)?,
                "headers" => {
                    let headers = self.string_map(value, &at)?;
                    model.headers.get_or_insert_with(BTreeMap::new).extend(headers);
                }
                "compat" => {
                    let compat = self.object(value, &at)?.clone();
                    merge_compat(&mut model.compat, &compat);
                }
                "thinkingLevelMap" => {
                    let mut map = BTreeMap::new();
                    for (level, mapped) in self.object(value, &at)? {
                        let mapped = match mapped {
                            Value::Null => None,
                            other => Some(self.string(other, &at.key(level))?),
                        };
                        map.insert(level.clone(), mapped);
                    }
                    model.thinking_level_map = Some(map);
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn provider(&self, name: &str, value: &Value, path: &Path) -> Checked<ProviderConfig> {
        let object = self.object(value, path)?;
        let mut config = ProviderConfig::default();
        let field = |key: &str| object.get(key).filter(|value| !value.is_null());
        if let Some(value) = field("baseUrl") {
            config.base_url = Some(self.string(value, &path.key("baseUrl"))?);
        }
        if let Some(value) = field("api") {
            config.api = Some(self.string(value, &path.key("api"))?);
        }
        if let Some(value) = field("apiKey") {
            config.api_key = Some(self.string(value, &path.key("apiKey"))?);
        }
        if let Some(value) = field("headers") {
            config.headers = Some(self.string_map(value, &path.key("headers"))?);
        }
        if let Some(value) = field("authHeader") {
            config.auth_header = self.boolean(value, &path.key("authHeader"))?;
        }
        if let Some(value) = field("compat") {
            config.compat = Some(self.object(value, &path.key("compat"))?.clone());
        }
        if let Some(value) = field("modelOverrides") {
            let at = path.key("modelOverrides");
            for (id, fields) in self.object(value, &at)? {
                let fields = self.object(fields, &at.key(id))?;
                // Check the fields now so that a bad override is reported even if unused.
                self.model_fields(fields, &at.key(id), &mut Model::unknown())?;
                config.model_overrides.push((id.clone(), fields.clone()));
            }
        }
        let known = known_provider(name);
        let models = match field("models") {
            Some(value) => value
                .as_array()
                .ok_or_else(|| self.fail(&path.key("models"), "expected an array of models"))?
                .as_slice(),
            None => &[],
        };
        if models.is_empty() {
            return Ok(config);
        }
        let base_url = match (
            &config.base_url,
            known.map(|known| known.base_url).filter(|url| !url.is_empty()),
        ) {
            (Some(url), _) => url.clone(),
            (None, Some(url)) => url.to_owned(),
            (None, None) => return Err(self.fail(path, r#""baseUrl" is required when defining custom models"#)),
        };
        for (i, value) in models.iter().enumerate() {
            let at = path.key("models").index(i);
            let object = self.object(value, &at)?;
            let id = match object.get("id") {
                Some(id) => self.string(id, &at.key("id"))?,
                None => return Err(self.fail(&at, r#"missing required field "id""#)),
            };
            if id.is_empty() {
                return Err(self.fail(&at.key("id"), "expected a non-empty string"));
            }
            let mut model = Model {
                name: id.clone(),
                id,
                api: config.api.clone().unwrap_or_default(),
                provider: name.to_owned(),
                base_url: base_url.clone(),
                reasoning: false,
                input: vec!["text".to_owned()],
                cost: ModelCost::default(),
                context_window: DEFAULT_CONTEXT_WINDOW,
                max_tokens: DEFAULT_MAX_TOKENS,
                headers: config.headers.clone(),
                compat: config.compat.clone().map(Value::Object),
                thinking_level_map: None,
            };
            self.model_fields(object, &at, &mut model)?;
            if model.api.is_empty() {
                match known.map(|known| known.api) {
                    Some(api) => model.api = api.to_owned(),
                    None => {
                        return Err(self.fail(&at, r#"no "api" specified; set "api" on the provider or the model"#));
                    }
                }
            }
            config.models.push(model);
        }
        Ok(config)
    }
}

/// Merges `overrides` into a model's `compat` object, key by key.
pub(crate) fn merge_compat(compat: &mut Option<Value>, overrides: &Map<String, Value>) {
    match compat {
        Some(Value::Object(existing)) => {
            for (key, value) in overrides {
                existing.insert(key.clone(), value.clone());
            }
        }
        _ => *compat = Some(Value::Object(overrides.clone())),
    }
}

/// Applies `modelOverrides` fields (already checked) to a model.
pub(crate) fn apply_override(model: &mut Model, fields: &Map<String, Value>) {
    let checker = Checker { file: "", text: "" };
    // The fields were validated when the file was read, so this cannot fail.
    let _ = checker.model_fields(fields, &Path::default(), model);
}

/// Checks the config an extension gives `pi.registerProvider(name, config)`, field by field as a
/// `models.json` provider (pi's own rules for it are checked by the caller first). A model may set
/// its own `baseUrl`. Errors are [`RegistryError::Invalid`] with an empty file and the field's path
/// from the config (`models[0].contextWindow`).
pub(crate) fn registered_provider(name: &str, value: &Value) -> Result<ProviderConfig, RegistryError> {
    let checker = Checker { file: "", text: "" };
    let root = Path::default();
    let mut config = checker.provider(name, value, &root)?;
    let definitions = value
        .get("models")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    for (i, (model, definition)) in config.models.iter_mut().zip(definitions).enumerate() {
        if let Some(url) = definition.get("baseUrl").filter(|url| !url.is_null()) {
            model.base_url = checker.string(url, &root.key("models").index(i).key("baseUrl"))?;
        }
    }
    Ok(config)
}

/// Parses and checks a `models.json` text; `file` names it in errors.
pub(crate) fn parse(text: &str, file: &str) -> Result<Config, RegistryError> {
    let document: Value = serde_json::from_str(text).map_err(|error| {
        let full = error.to_string();
        let suffix = format!(" at line {} column {}", error.line(), error.column());
        let message = full.strip_suffix(&suffix).unwrap_or(&full);
        RegistryError::Invalid {
            file: file.to_owned(),
            line: error.line(),
            column: error.column().max(1),
            path: String::new(),
            message: format!("invalid JSON: {message}"),
        }
    })?;
    let checker = Checker { file, text };
    let root = Path::default();
    let object = document
        .as_object()
        .ok_or_else(|| checker.fail(&root, r#"expected an object with "providers""#))?;
    let Some(providers) = object.get("providers") else {
        return Ok(Vec::new());
    };
    let at = root.key("providers");
    let mut config = Vec::new();
    for (name, value) in checker.object(providers, &at)? {
        config.push((name.clone(), checker.provider(name, value, &at.key(name))?));
    }
    Ok(config)
}

#[cfg(test)]
mod fuzz;
