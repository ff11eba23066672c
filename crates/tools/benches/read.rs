//! Benchmark placeholder: replaced by the real `read` benchmark.

fn main() {}
