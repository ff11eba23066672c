//! [`Writer`]: the RPC output, one JSON line at a time.

use serde_json::Value;

use crate::modes::print::Output;

/// Writes whole lines to stdout, one at a time.
#[derive(Clone)]
pub struct Writer {
    output: Output,
}

impl Writer {
    /// Lines go to `output`.
    pub fn new(output: Output) -> Self {
        Writer { output }
    }

    /// Writes `value` as one line, every secret redacted ([`pi_ai::redact`]), and flushes.
    pub fn line(&self, value: &Value) {
        let line = pi_ai::redact(&value.to_string(), None);
        let mut out = self.output.lock().unwrap_or_else(|p| p.into_inner());
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}
