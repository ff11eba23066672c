//! Benchmark placeholder: replaced by the real `search` benchmark.

fn main() {}
