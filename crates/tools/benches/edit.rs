//! Benchmark placeholder: replaced by the real `edit` benchmark.

fn main() {}
