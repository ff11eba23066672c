//! Dollar cost of a response from its usage and the model's prices (per million tokens).

use pi_agent_core::{Cost, ModelCost, Usage};

/// The cost of `usage` at `price`.
///
/// ```
/// use pi_agent_core::{ModelCost, Usage};
/// let price = ModelCost { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75 };
/// let usage = Usage { input: 1_000_000, output: 100_000, ..Default::default() };
/// let cost = pi_ai::cost_of(&price, &usage);
/// assert_eq!(cost.total, 4.5);
/// ```
pub fn cost_of(price: &ModelCost, usage: &Usage) -> Cost {
    let per_token = |tokens: u64, per_million: f64| tokens as f64 * per_million / 1_000_000.0;
    let input = per_token(usage.input, price.input);
    let output = per_token(usage.output, price.output);
    let cache_read = per_token(usage.cache_read, price.cache_read);
    let cache_write = per_token(usage.cache_write, price.cache_write);
    Cost {
        input,
        output,
        cache_read,
        cache_write,
        total: input + output + cache_read + cache_write,
    }
}
