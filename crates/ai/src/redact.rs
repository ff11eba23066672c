//! The one redactor of secrets.
//!
//! Every secret the program resolves — an API key (the call's own, `--api-key`, a `models.json`
//! `apiKey`, a provider's environment variable), a `models.json` header value that came from
//! `$VAR` / `${VAR}` / `!command` or whose header names a credential, a token a login stores — is
//! registered once with [`register_secret`]. [`redact`] replaces every registered secret (and the
//! one it is given) by `[redacted]`; every text that leaves the program through an error path
//! passes through it: provider error texts (status bodies, transport errors, malformed stream
//! data), and, in the `pi` binary, stderr, the JSON and RPC output and the debug log.
//!
//! The set is process-wide: a key resolved by the model registry must also be kept out of a line
//! the CLI writes much later, far from the request. It only grows, and it holds the few secrets
//! one process resolves.

use std::sync::{Arc, PoisonError, RwLock};

/// What a secret is replaced by.
pub const REDACTED: &str = "[redacted]";

/// Registered secrets shorter than this are ignored: they would match ordinary text (a local
/// server's placeholder key `ollama`, a header value `true`).
pub const MIN_SECRET_CHARS: usize = 8;

/// The shortest start of a secret that is redacted where an excerpt cut the secret.
const MIN_PREFIX_CHARS: usize = 4;

/// The registered secrets, longest first (a secret containing another is redacted whole).
static SECRETS: RwLock<Option<Arc<Vec<String>>>> = RwLock::new(None);

/// Registers `secret`: from now on [`redact`] replaces it wherever it occurs. Values shorter
/// than [`MIN_SECRET_CHARS`] characters (after trimming) are ignored. An `Authorization`-style
/// value (`Bearer <token>`, `Basic <credentials>`) registers its token too.
///
/// ```
/// pi_ai::register_secret("Bearer tok-0123456789-example");
/// assert_eq!(pi_ai::redact("token tok-0123456789-example", None), "token [redacted]");
/// ```
pub fn register_secret(secret: &str) {
    let secret = secret.trim();
    if let Some((scheme, token)) = secret.split_once(' ')
        && !scheme.is_empty()
        && scheme.chars().all(|c| c.is_ascii_alphabetic())
    {
        register_one(token.trim());
    }
    register_one(secret);
}

fn register_one(secret: &str) {
    if secret.chars().count() < MIN_SECRET_CHARS {
        return;
    }
    if registered().iter().any(|known| known == secret) {
        return;
    }
    let mut slot = SECRETS.write().unwrap_or_else(PoisonError::into_inner);
    let mut secrets: Vec<String> = slot.as_deref().cloned().unwrap_or_default();
    if secrets.iter().any(|known| known == secret) {
        return;
    }
    secrets.push(secret.to_owned());
    secrets.sort_by_key(|known| std::cmp::Reverse(known.len()));
    *slot = Some(Arc::new(secrets));
}

/// The registered secrets, longest first.
fn registered() -> Arc<Vec<String>> {
    SECRETS
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
        .unwrap_or_default()
}

/// The secrets to redact, longest first: `extra` (4 characters or more) and the registered ones.
fn secrets_with<'a>(registered: &'a [String], extra: Option<&'a str>) -> Vec<&'a str> {
    let mut secrets: Vec<&str> = registered.iter().map(String::as_str).collect();
    if let Some(extra) = extra.filter(|extra| extra.len() >= MIN_PREFIX_CHARS)
        && !secrets.contains(&extra)
    {
        secrets.push(extra);
        secrets.sort_by_key(|known| std::cmp::Reverse(known.len()));
    }
    secrets
}

/// `text` with every registered secret, and `secret` (4 characters or more), replaced by
/// `[redacted]`.
///
/// ```
/// assert_eq!(pi_ai::redact("key sk-abc123 bad", Some("sk-abc123")), "key [redacted] bad");
/// ```
pub fn redact(text: &str, secret: Option<&str>) -> String {
    let registered = registered();
    replace_all(text, &secrets_with(&registered, secret))
}

fn replace_all(text: &str, secrets: &[&str]) -> String {
    let mut out = text.to_owned();
    for secret in secrets {
        if out.contains(secret) {
            out = out.replace(secret, REDACTED);
        }
    }
    out
}

/// An excerpt of `text` for an error message: the secrets redacted *before* the cut (a secret the
/// cut would split is not recognised afterwards), then the text trimmed and cut to `max_chars`
/// characters followed by `…`, and a start of a secret (4 characters or more) that the excerpt
/// ends with redacted as well (the body may have been cut before it reached us).
///
/// ```
/// let key = "sk-live-0123456789abcdef";
/// let body = format!("{}{key} and then a long explanation", "x".repeat(10));
/// assert_eq!(pi_ai::redacted_excerpt(&body, 24, Some(key)), "xxxxxxxxxx[redacted] and…");
/// // A body that arrived cut in the middle of the key.
/// assert_eq!(pi_ai::redacted_excerpt("bad key sk-live-0123", 100, Some(key)), "bad key [redacted]");
/// ```
pub fn redacted_excerpt(text: &str, max_chars: usize, secret: Option<&str>) -> String {
    let registered = registered();
    let secrets = secrets_with(&registered, secret);
    let whole = replace_all(text, &secrets);
    let whole = whole.trim();
    let cut = match whole.char_indices().nth(max_chars) {
        Some((end, _)) => format!("{}…", &whole[..end]),
        None => whole.to_owned(),
    };
    redact_cut_prefix(cut, &secrets)
}

/// `text` with a trailing start (4 characters or more) of one of `secrets` replaced by
/// `[redacted]`, looking before the `…` of a cut excerpt.
fn redact_cut_prefix(text: String, secrets: &[&str]) -> String {
    let (body, ellipsis) = match text.strip_suffix('…') {
        Some(body) => (body, "…"),
        None => (text.as_str(), ""),
    };
    let longest = secrets
        .iter()
        .flat_map(|secret| {
            (MIN_PREFIX_CHARS..secret.len())
                .rev()
                .filter(|&len| secret.is_char_boundary(len))
                .find(|&len| body.ends_with(&secret[..len]))
        })
        .max();
    match longest {
        Some(len) => format!("{}{REDACTED}{ellipsis}", &body[..body.len() - len]),
        None => text,
    }
}

/// Whether a header called `name` carries a credential by its name (`authorization`, `api-key`,
/// `x-goog-api-key`, `cookie`, anything with `key`, `token`, `secret`, `auth`, `password`,
/// `signature` or `credential` in it).
///
/// ```
/// assert!(pi_ai::names_a_credential("api-key"));
/// assert!(pi_ai::names_a_credential("X-Amz-Security-Token"));
/// assert!(!pi_ai::names_a_credential("anthropic-beta"));
/// ```
pub fn names_a_credential(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    [
        "key",
        "token",
        "secret",
        "auth",
        "password",
        "cookie",
        "signature",
        "credential",
    ]
    .iter()
    .any(|word| name.contains(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_secrets_are_redacted_longest_first() {
        register_secret("reg-secret-0001");
        register_secret("reg-secret-0001-and-more");
        register_secret("short");
        assert_eq!(
            redact("a reg-secret-0001-and-more b reg-secret-0001 c short", None),
            "a [redacted] b [redacted] c short"
        );
    }

    #[test]
    fn a_bearer_value_registers_its_token() {
        register_secret("Bearer reg-token-abcdefgh");
        assert_eq!(redact("got reg-token-abcdefgh", None), "got [redacted]");
    }

    #[test]
    fn a_key_split_by_the_excerpt_is_still_redacted() {
        let key = "sk-live-0123456789abcdefghijklmnopqrstuvwxyz";
        // The key starts 10 characters before the cut.
        let body = format!("{}{key} and more", "x".repeat(990));
        let text = redacted_excerpt(&body, 1000, Some(key));
        assert!(!text.contains(&key[..4]), "{}", &text[text.len() - 40..]);
        assert!(text.ends_with("[redacted]…"), "{}", &text[text.len() - 40..]);
        // A body that merely ends with the start of the key, uncut.
        assert_eq!(
            redacted_excerpt("error near sk-live", 1000, Some(key)),
            "error near [redacted]"
        );
        // Short bodies are redacted as before.
        assert_eq!(
            redacted_excerpt(&format!("bad key {key}"), 1000, Some(key)),
            "bad key [redacted]"
        );
    }

    #[test]
    fn a_registered_secret_cut_by_the_excerpt_is_redacted() {
        let secret = "reg-cut-0123456789abcdef";
        register_secret(secret);
        // Redacted before the cut: the cut may split the marker, never the secret.
        let text = redacted_excerpt(&format!("{}{secret}", "y".repeat(6)), 12, None);
        assert_eq!(text, "yyyyyy[redac…");
        // A body that was cut before it reached us, in the middle of the secret.
        let text = redacted_excerpt(&format!("{}{}", "y".repeat(6), &secret[..10]), 1000, None);
        assert_eq!(text, "yyyyyy[redacted]");
    }
}
