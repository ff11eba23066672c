//! Fuzzing on the stable toolchain: the budget of the `fuzz_*` property tests and the strategies
//! they share.
//!
//! Every fuzz target of the workspace is a proptest test whose name starts with `fuzz_`, run with
//! [`config`]: [`DEFAULT_CASES`] cases in a plain `cargo test` (and so in `cargo xtask ci`), or as
//! many as the [`CASES_ENV`] variable says (`cargo xtask fuzz --cases N` sets it). Failing inputs
//! proptest finds are kept in the crate's `proptest-regressions/` files (committed) and replayed
//! first on every run; the interesting ones also become plain regression tests.
//!
//! The strategies generate inputs near the valid ones, which find more than random bytes: a text
//! with [`Damage`] (cut, garbage inserted, bytes dropped or doubled), split into arbitrary
//! [`chunks`], and JSON values with awkward leaves ([`json_value`]).
//!
//! A target is `proptest! { #![proptest_config(fuzz::config())] #[test] fn fuzz_…(…) { … } }`; by hand:
//!
//! ```
//! use pi_test_support::fuzz;
//! use proptest::prelude::*;
//! use proptest::test_runner::TestRunner;
//!
//! let mut runner = TestRunner::new(fuzz::config());
//! let texts = fuzz::damaged(Just(br#"{"a": [1, "x"]}"#.to_vec()));
//! runner
//!     .run(&texts, |text| {
//!         // No panic, and the documented error for what is not JSON.
//!         if let Err(error) = serde_json::from_slice::<serde_json::Value>(&text) {
//!             prop_assert!(error.line() >= 1);
//!         }
//!         Ok(())
//!     })
//!     .unwrap();
//! ```

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use serde_json::Value;

/// The variable that sets the number of cases of every fuzz target.
pub const CASES_ENV: &str = "PI_FUZZ_CASES";

/// Cases per fuzz target when [`CASES_ENV`] is not set: the fixed budget of `cargo test`.
pub const DEFAULT_CASES: u32 = 64;

/// The number of cases: [`CASES_ENV`] when it is a positive number, else [`DEFAULT_CASES`].
pub fn cases() -> u32 {
    std::env::var(CASES_ENV)
        .ok()
        .and_then(|text| text.trim().parse::<u32>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(DEFAULT_CASES)
}

/// The variable that fixes the random seed of every fuzz target (a number).
pub const SEED_ENV: &str = "PI_FUZZ_SEED";

/// The seed under `CI` when [`SEED_ENV`] is not set.
pub const CI_SEED: u64 = 0x0070_692d_7275_7374; // "pi-rust"

/// The seed: [`SEED_ENV`] when it is a number; else [`CI_SEED`] when `CI` is set (`cargo xtask ci`
/// sets it), so that CI runs the same cases every time and a failure there can be repeated; else
/// a new random seed per run (`cargo test` by hand, `cargo xtask fuzz`), so that every run looks
/// somewhere new.
pub fn seed() -> RngSeed {
    match std::env::var(SEED_ENV)
        .ok()
        .and_then(|text| text.trim().parse::<u64>().ok())
    {
        Some(seed) => RngSeed::Fixed(seed),
        None if std::env::var_os("CI").is_some_and(|value| !value.is_empty()) => RngSeed::Fixed(CI_SEED),
        None => RngSeed::Random,
    }
}

/// The proptest configuration of a fuzz target: [`cases`] cases from [`seed`], failures persisted
/// beside the source (`proptest-regressions/`), and shrinking bounded so a failure is reported in
/// seconds.
pub fn config() -> Config {
    Config {
        cases: cases(),
        rng_seed: seed(),
        max_shrink_iters: 2048,
        max_shrink_time: 30_000,
        ..Config::default()
    }
}

/// One way to damage a text.
#[derive(Debug, Clone)]
pub enum Damage {
    /// Left as it is.
    None,
    /// Cut at a point (a torn write, a dropped connection).
    Cut(u32),
    /// Garbage bytes inserted at a point.
    Insert(u32, Vec<u8>),
    /// A stretch removed.
    Remove(u32, u32),
    /// A stretch repeated right after itself.
    Repeat(u32, u32),
    /// One byte replaced.
    Replace(u32, u8),
}

impl Damage {
    /// `bytes` with this damage done.
    pub fn apply(&self, bytes: &[u8]) -> Vec<u8> {
        let at = |point: &u32| position(*point, bytes.len());
        let range = |a: &u32, b: &u32| {
            let (a, b) = (at(a), at(b));
            (a.min(b), a.max(b))
        };
        match self {
            Damage::None => bytes.to_vec(),
            Damage::Cut(point) => bytes[..at(point)].to_vec(),
            Damage::Insert(point, garbage) => {
                let point = at(point);
                [&bytes[..point], garbage, &bytes[point..]].concat()
            }
            Damage::Remove(a, b) => {
                let (start, end) = range(a, b);
                [&bytes[..start], &bytes[end..]].concat()
            }
            Damage::Repeat(a, b) => {
                let (start, end) = range(a, b);
                [&bytes[..end], &bytes[start..]].concat()
            }
            Damage::Replace(point, byte) => {
                let mut out = bytes.to_vec();
                if let Some(slot) = out.get_mut(at(point)) {
                    *slot = *byte;
                }
                out
            }
        }
    }
}

/// Bytes that break parsers: structure characters, quotes, escapes, line ends, NUL, invalid
/// UTF-8 and a multi-byte character.
pub fn garbage() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        4 => prop::sample::select(b"{}[]\":,\\\n\r \t0-e.:u".to_vec()),
        1 => Just(0u8),
        1 => Just(0xFFu8),
        1 => Just(0xC3u8),
        2 => any::<u8>(),
    ];
    prop_oneof![
        4 => prop::collection::vec(byte, 1..8),
        1 => Just("é".as_bytes().to_vec()),
        1 => Just(b"\\u12".to_vec()),
    ]
}

/// Any [`Damage`], [`Damage::None`] about one time in six.
pub fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        1 => Just(Damage::None),
        2 => any::<u32>().prop_map(Damage::Cut),
        2 => (any::<u32>(), garbage()).prop_map(|(at, bytes)| Damage::Insert(at, bytes)),
        1 => (any::<u32>(), any::<u32>()).prop_map(|(a, b)| Damage::Remove(a, b)),
        1 => (any::<u32>(), any::<u32>()).prop_map(|(a, b)| Damage::Repeat(a, b)),
        1 => (any::<u32>(), any::<u8>()).prop_map(|(at, byte)| Damage::Replace(at, byte)),
    ]
}

/// The texts of `valid` with up to two [`Damage`]s done.
pub fn damaged(valid: impl Strategy<Value = Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
    (valid, prop::collection::vec(damage(), 0..3))
        .prop_map(|(bytes, damages)| damages.iter().fold(bytes, |bytes, damage| damage.apply(&bytes)))
}

/// A point in a text of `len` bytes (`0..=len`) picked by a random number.
pub fn position(pick: u32, len: usize) -> usize {
    usize::try_from(pick).map_or(len, |pick| pick % (len + 1))
}

/// `bytes` split at the `cuts` (in any order, repeats allowed): how a network delivers a body.
pub fn chunks<'a>(bytes: &'a [u8], cuts: &[u32]) -> Vec<&'a [u8]> {
    let mut points: Vec<usize> = cuts.iter().map(|cut| position(*cut, bytes.len())).collect();
    points.sort_unstable();
    let mut out = Vec::with_capacity(points.len() + 1);
    let mut start = 0;
    for point in points {
        out.push(&bytes[start..point]);
        start = point;
    }
    out.push(&bytes[start..]);
    out
}

/// `text` split at the `cuts`, each moved back to a character boundary: how a provider delivers
/// text fragments.
pub fn str_chunks<'a>(text: &'a str, cuts: &[u32]) -> Vec<&'a str> {
    let mut points: Vec<usize> = cuts
        .iter()
        .map(|cut| {
            let mut point = position(*cut, text.len());
            while !text.is_char_boundary(point) {
                point -= 1;
            }
            point
        })
        .collect();
    points.sort_unstable();
    let mut out = Vec::with_capacity(points.len() + 1);
    let mut start = 0;
    for point in points {
        out.push(&text[start..point]);
        start = point;
    }
    out.push(&text[start..]);
    out
}

/// Cut points for [`chunks`] and [`str_chunks`].
pub fn cuts() -> impl Strategy<Value = Vec<u32>> {
    prop::collection::vec(any::<u32>(), 0..10)
}

/// Strings that are awkward in JSON and in text handling: escapes, quotes, control characters,
/// line ends, non-ASCII, astral characters.
pub fn awkward_string() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-z0-9 _./-]{0,12}",
        2 => "[a-z\"\\\\\n\r\t\u{0}\u{1f}é\u{2028}\u{FEFF}😀{}\\[\\]:,]{0,12}",
        1 => any::<String>(),
    ]
}

/// JSON values up to three levels deep with awkward strings and numbers.
pub fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1.0e300f64..1.0e300).prop_map(Value::from),
        awkward_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((awkward_string(), inner), 0..5)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damage_does_what_it_says() {
        let text = b"abcdef";
        let index = |n: u32| n;
        assert_eq!(Damage::None.apply(text), b"abcdef");
        assert_eq!(Damage::Cut(index(2)).apply(text), b"ab");
        assert_eq!(Damage::Insert(index(1), b"XY".to_vec()).apply(text), b"aXYbcdef");
        assert_eq!(Damage::Remove(index(4), index(1)).apply(text), b"aef");
        assert_eq!(Damage::Repeat(index(1), index(3)).apply(text), b"abcbcdef");
        assert_eq!(Damage::Replace(index(0), b'Z').apply(text), b"Zbcdef");
        assert_eq!(Damage::Replace(index(6), b'Z').apply(text), b"abcdef");
    }

    #[test]
    fn chunks_cover_the_text_in_order() {
        let text = b"0123456789";
        // 15 % 11 = 4: cut points in any order.
        let parts = chunks(text, &[5, 0, 15]);
        assert_eq!(parts, [&b""[..], b"0123", b"4", b"56789"]);
        assert_eq!(position(u32::MAX, 0), 0);
        assert_eq!(str_chunks("aé", &[2]), ["a", "é"]);
    }

    #[test]
    fn the_budget_comes_from_the_environment() {
        // Only read here, never set: tests of this binary run in parallel.
        let expected = std::env::var(CASES_ENV)
            .ok()
            .and_then(|text| text.trim().parse::<u32>().ok())
            .filter(|n| *n > 0)
            .unwrap_or(DEFAULT_CASES);
        assert_eq!(cases(), expected);
        assert_eq!(config().cases, expected);
    }
}
