//! Recognising a request that was too large for the model's context window (pi-ai's
//! `isContextOverflow`), so that the session can compact and retry once.
//!
//! Three cases, as pi tells them apart: an error whose text matches one of the providers' overflow
//! messages (and none of the rate-limit ones); a "successful" answer whose input alone exceeds the
//! window (servers that truncate silently); and a `length` stop with no output whose input fills
//! the window.

use std::sync::LazyLock;

use pi_agent_core::{AssistantMessage, StopReason};
use regex::RegexSet;

/// The overflow messages of the providers pi knows, as pi 0.73.1 lists them.
const OVERFLOW_PATTERNS: &[&str] = &[
    // Anthropic: too many tokens.
    r"(?i)prompt is too long",
    // Anthropic: too many bytes (HTTP 413).
    r"(?i)request_too_large",
    // Amazon Bedrock.
    r"(?i)input is too long for requested model",
    // OpenAI, Completions and Responses.
    r"(?i)exceeds the context window",
    // Google Gemini.
    r"(?i)input token count.*exceeds the maximum",
    // xAI.
    r"(?i)maximum prompt length is \d+",
    // Groq.
    r"(?i)reduce the length of the messages",
    // OpenRouter, every backend.
    r"(?i)maximum context length is \d+ tokens",
    // GitHub Copilot.
    r"(?i)exceeds the limit of \d+",
    // llama.cpp server.
    r"(?i)exceeds the available context size",
    // LM Studio.
    r"(?i)greater than the context length",
    // MiniMax.
    r"(?i)context window exceeds limit",
    // Kimi.
    r"(?i)exceeded model token limit",
    // Mistral.
    r"(?i)too large for model with \d+ maximum context length",
    // z.ai's finish reason surfaced as an error.
    r"(?i)model_context_window_exceeded",
    // Ollama.
    r"(?i)prompt too long; exceeded (?:max )?context length",
    // Generic.
    r"(?i)context[_ ]length[_ ]exceeded",
    r"(?i)too many tokens",
    r"(?i)token limit exceeded",
    // Cerebras: 400 / 413 without a body, in pi's wording and in ours (`HttpError::Status`).
    r"(?i)^4(?:00|13)\s*(?:status code)?\s*\(no body\)",
    r"(?i)^4(?:00|13) status code:\s*$",
];

/// Errors that mention tokens or length but are not overflows (throttling, rate limits).
const NON_OVERFLOW_PATTERNS: &[&str] = &[
    r"(?i)^(Throttling error|Service unavailable):",
    r"(?i)rate limit",
    r"(?i)too many requests",
];

static OVERFLOW: LazyLock<RegexSet> = LazyLock::new(|| set(OVERFLOW_PATTERNS));
static NON_OVERFLOW: LazyLock<RegexSet> = LazyLock::new(|| set(NON_OVERFLOW_PATTERNS));

fn set(patterns: &[&str]) -> RegexSet {
    // The patterns are constants checked by the tests below; an empty set never matches.
    RegexSet::new(patterns).unwrap_or_else(|_| RegexSet::empty())
}

/// Whether an error text is a provider's context-overflow error.
pub fn is_overflow_error_text(text: &str) -> bool {
    !NON_OVERFLOW.is_match(text) && OVERFLOW.is_match(text)
}

/// Whether `message` shows that the request overflowed the model's context window of
/// `context_window` tokens (0: unknown, only the error texts count).
///
/// ```
/// use pi_agent_core::{AssistantMessage, StopReason};
/// use pi_ai::is_context_overflow;
///
/// let mut message = AssistantMessage::default();
/// message.stop_reason = StopReason::Error;
/// message.error_message = Some(r#"400 status code: {"error":{"message":"prompt is too long: 213462 tokens > 200000 maximum"}}"#.into());
/// assert!(is_context_overflow(&message, 200_000));
/// message.error_message = Some("429 status code: rate limit: too many tokens per minute".into());
/// assert!(!is_context_overflow(&message, 200_000));
/// ```
pub fn is_context_overflow(message: &AssistantMessage, context_window: u64) -> bool {
    if message.stop_reason == StopReason::Error
        && let Some(text) = &message.error_message
        && is_overflow_error_text(text)
    {
        return true;
    }
    let input = message.usage.input.saturating_add(message.usage.cache_read);
    if context_window > 0 && message.stop_reason == StopReason::Stop && input > context_window {
        return true;
    }
    // pi: input + cacheRead >= 99% of the window.
    context_window > 0
        && message.stop_reason == StopReason::Length
        && message.usage.output == 0
        && input.saturating_mul(100) >= context_window.saturating_mul(99)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> AssistantMessage {
        AssistantMessage {
            stop_reason: StopReason::Error,
            error_message: Some(text.to_owned()),
            ..AssistantMessage::default()
        }
    }

    #[test]
    fn every_pattern_compiles() {
        for pattern in OVERFLOW_PATTERNS.iter().chain(NON_OVERFLOW_PATTERNS) {
            assert!(regex::Regex::new(pattern).is_ok(), "{pattern}");
        }
        assert_eq!(OVERFLOW.len(), OVERFLOW_PATTERNS.len());
    }

    #[test]
    fn each_api_of_ours_reports_overflow_as_pi_recognises_it() {
        // The texts our wire APIs produce for the providers' overflow answers
        // (`HttpError::Status`: "<status> status code: <body>").
        let anthropic = r#"400 status code: {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213462 tokens > 200000 maximum"}}"#;
        let anthropic_bytes = r#"413 status code: {"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}"#;
        let openai = r#"400 status code: {"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}"#;
        let openrouter =
            "This endpoint's maximum context length is 8192 tokens. However, you requested about 9000 tokens";
        let llama = "the request exceeds the available context size, try increasing it";
        let empty_413 = "413 status code: ";
        let gemini = r#"400 status code: {"error":{"code":400,"message":"The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).","status":"INVALID_ARGUMENT"}}"#;
        for text in [anthropic, anthropic_bytes, openai, openrouter, llama, empty_413, gemini] {
            assert!(is_context_overflow(&error(text), 0), "{text}");
        }
    }

    #[test]
    fn rate_limits_and_other_errors_are_not_overflow() {
        for text in [
            "429 status code: rate limit reached: too many tokens per minute",
            "Too many requests, token limit exceeded for this minute",
            "Service unavailable: token limit exceeded",
            "500 status code: internal error",
            "Connection error: connection refused",
        ] {
            assert!(!is_context_overflow(&error(text), 100), "{text}");
        }
    }

    #[test]
    fn silent_and_length_overflows_count_with_a_window() {
        let mut message = AssistantMessage {
            stop_reason: StopReason::Stop,
            ..AssistantMessage::default()
        };
        message.usage.input = 900;
        message.usage.cache_read = 200;
        assert!(is_context_overflow(&message, 1000));
        assert!(!is_context_overflow(&message, 0));
        assert!(!is_context_overflow(&message, 1100));
        message.stop_reason = StopReason::Length;
        assert!(is_context_overflow(&message, 1110));
        message.usage.output = 1;
        assert!(!is_context_overflow(&message, 1110));
    }
}
