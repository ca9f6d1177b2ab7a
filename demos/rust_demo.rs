// A Rust workload for malloc_freq (see README, Demos): the same records collected into a Vec
// and formatted into a String, once growing them from empty and once with with_capacity.
//   rustc -C opt-level=2 -g -o rust_demo demos/rust_demo.rs && malloc_freq ./rust_demo
use std::fmt::Write;

const RECORDS: usize = 20_000;
const ROUNDS: usize = 50;

#[inline(never)]
fn collect_growing(n: usize) -> Vec<u64> {
    let mut v = Vec::new();
    for i in 0..n {
        v.push((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    }
    v
}

#[inline(never)]
fn collect_with_capacity(n: usize) -> Vec<u64> {
    let mut v = Vec::with_capacity(n);
    for i in 0..n {
        v.push((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    }
    v
}

#[inline(never)]
fn format_growing(values: &[u64]) -> String {
    let mut s = String::new();
    for v in values {
        write!(s, "{:016x}\n", v).unwrap();
    }
    s
}

#[inline(never)]
fn format_with_capacity(values: &[u64]) -> String {
    let mut s = String::with_capacity(values.len() * 17);
    for v in values {
        write!(s, "{:016x}\n", v).unwrap();
    }
    s
}

fn main() {
    let mut total = 0usize;
    for _ in 0..ROUNDS {
        let a = collect_growing(RECORDS);
        let b = collect_with_capacity(RECORDS);
        let s = format_growing(&a);
        let t = format_with_capacity(&b);
        assert_eq!(s, t);
        total += s.len() + t.len();
    }
    println!("rust_demo: {} rounds of {} records, {} bytes of text", ROUNDS, RECORDS, total);
}
