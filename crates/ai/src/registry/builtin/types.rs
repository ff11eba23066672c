//! The shapes of the generated catalog's rows (`catalog.rs`, written by `cargo xtask models`).

/// One model of the generated catalog.
#[derive(Debug)]
pub(crate) struct CatalogModel {
    pub id: &'static str,
    pub name: &'static str,
    pub api: &'static str,
    pub base_url: &'static str,
    pub reasoning: bool,
    pub input: &'static [&'static str],
    /// Input, output, cache read, cache write: dollars per million tokens.
    pub cost: [f64; 4],
    pub context_window: u64,
    pub max_tokens: u64,
    /// pi-ai's `thinkingLevelMap` (empty when the model has none).
    pub thinking_level_map: &'static [(&'static str, Option<&'static str>)],
    pub headers: &'static [(&'static str, &'static str)],
    /// pi-ai's `compat` object as JSON text.
    pub compat: Option<&'static str>,
}

/// One provider of the generated catalog.
#[derive(Debug)]
pub(crate) struct CatalogProvider {
    /// Provider name as used in `models.json` and `provider/id` patterns.
    pub name: &'static str,
    /// The variables its key is read from, in pi-ai's order of precedence.
    pub env_keys: &'static [&'static str],
    /// Default wire API (pi: the first built-in model's), for `models.json` models of this provider.
    pub api: &'static str,
    /// Default base URL (the first built-in model's).
    pub base_url: &'static str,
    pub models: &'static [CatalogModel],
}

pub(super) const TEXT: &[&str] = &["text"];
pub(super) const TEXT_IMAGE: &[&str] = &["text", "image"];
