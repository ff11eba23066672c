//! Numbers as pi writes them for people.

/// `n` with thousands separators, as JavaScript's `toLocaleString()` writes it in English (pi's
/// token counts in `/session`, the export and the compaction notice).
///
/// ```
/// assert_eq!(pi_coding_agent::grouped(1_234_567), "1,234,567");
/// assert_eq!(pi_coding_agent::grouped(999), "999");
/// ```
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
