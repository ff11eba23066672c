//! Mistral's tool-call ids: exactly nine ASCII letters and digits. pi-ai derives one from any
//! other id with its `shortHash` (two 32-bit multiplicative hashes in base 36), retrying with
//! `:<attempt>` appended when two ids of one request would collide.

use std::collections::HashMap;

/// The length of a Mistral tool-call id.
pub(crate) const ID_CHARS: usize = 9;

/// pi-ai's `shortHash`: over the UTF-16 code units of `text`, `h2` then `h1` in base 36.
pub(crate) fn short_hash(text: &str) -> String {
    let mut h1: u32 = 0xdead_beef;
    let mut h2: u32 = 0x41c6_ce57;
    for unit in text.encode_utf16() {
        let unit = u32::from(unit);
        h1 = (h1 ^ unit).wrapping_mul(2_654_435_761);
        h2 = (h2 ^ unit).wrapping_mul(1_597_334_677);
    }
    h1 = (h1 ^ (h1 >> 16)).wrapping_mul(2_246_822_507) ^ (h2 ^ (h2 >> 13)).wrapping_mul(3_266_489_909);
    h2 = (h2 ^ (h2 >> 16)).wrapping_mul(2_246_822_507) ^ (h1 ^ (h1 >> 13)).wrapping_mul(3_266_489_909);
    format!("{}{}", base36(h2), base36(h1))
}

fn base36(mut n: u32) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    out.into_iter().map(char::from).collect()
}

/// The Mistral id of `id` at `attempt`: the id itself when it is already nine letters and digits
/// (once its other characters are dropped), else the first nine characters of a short hash.
pub(crate) fn derive(id: &str, attempt: u32) -> String {
    let normalized: String = id.chars().filter(char::is_ascii_alphanumeric).collect();
    if attempt == 0 && normalized.len() == ID_CHARS {
        return normalized;
    }
    let base = if normalized.is_empty() { id } else { &normalized };
    let seed = if attempt == 0 {
        base.to_owned()
    } else {
        format!("{base}:{attempt}")
    };
    short_hash(&seed).chars().take(ID_CHARS).collect()
}

/// The ids of one request: each id keeps one Mistral id, and no two ids share one.
#[derive(Debug, Default)]
pub(crate) struct IdNormalizer {
    by_id: HashMap<String, String>,
    owner: HashMap<String, String>,
}

impl IdNormalizer {
    /// The Mistral id of `id`.
    pub(crate) fn normalize(&mut self, id: &str) -> String {
        if let Some(existing) = self.by_id.get(id) {
            return existing.clone();
        }
        let mut attempt = 0;
        loop {
            let candidate = derive(id, attempt);
            match self.owner.get(&candidate) {
                Some(owner) if owner != id => attempt += 1,
                _ => {
                    self.by_id.insert(id.to_owned(), candidate.clone());
                    self.owner.insert(candidate.clone(), id.to_owned());
                    return candidate;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn short_hash_is_pi_ais() {
        // Values computed with pi-ai 0.73.1's shortHash.
        assert_eq!(derive("call_abc|fc_123456789", 0), "qyf2yq1lq");
        assert_eq!(derive("AbC123xyz", 0), "AbC123xyz");
        assert_eq!(derive("Ab-C1_23xyz", 0), "AbC123xyz");
        assert_eq!(short_hash(""), "k4n83c7h0j2b");
        assert_eq!(short_hash("a"), "m8735310ae7sx");
        assert_eq!(derive("toolcall:0", 0), "toolcall0");
        assert_eq!(derive("AbC123xyz", 1), "1c608666i");
    }

    #[test]
    fn colliding_ids_get_distinct_mistral_ids() {
        let mut ids = IdNormalizer::default();
        let a = ids.normalize("AbC123xyz");
        let b = ids.normalize("Ab_C123xyz");
        assert_eq!(a, "AbC123xyz");
        assert_ne!(a, b);
        assert_eq!(b, derive("Ab_C123xyz", 1));
        assert_eq!(ids.normalize("Ab_C123xyz"), b);
    }

    proptest! {
        #[test]
        fn every_id_becomes_nine_letters_and_digits(id in "\\PC{0,80}") {
            let derived = derive(&id, 0);
            prop_assert!(derived.len() <= ID_CHARS);
            prop_assert!(derived.chars().all(|c| c.is_ascii_alphanumeric()));
        }
    }
}
