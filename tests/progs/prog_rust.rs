// Rust on the system allocator (Box, Vec) under the profiler: three threads each box 1000
// values from site_rust_box and grow 500 vectors from site_rust_vec. Prints a checksum.
use std::thread;

// Keeps the compiler from removing an allocation (std::hint::black_box needs Rust 1.66;
// Debian 12 has 1.63): a volatile copy of the value stands in for it.
fn black_box<T>(x: T) -> T {
    let y = unsafe { std::ptr::read_volatile(&x) };
    std::mem::forget(x);
    y
}

#[inline(never)]
fn site_rust_box(n: usize) -> usize {
    let mut sum = 0;
    for i in 0..n {
        let b = black_box(Box::new([i; 8]));
        sum += b[0];
    }
    sum
}

#[inline(never)]
fn site_rust_vec(n: usize) -> usize {
    let mut sum = 0;
    for i in 0..n {
        let v: Vec<u64> = black_box(Vec::with_capacity(100 + i % 7));
        sum += v.capacity();
    }
    sum
}

fn main() {
    let handles: Vec<_> = (0..3)
        .map(|_| thread::spawn(|| site_rust_box(1000) + site_rust_vec(500)))
        .collect();
    let total: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    println!("rust: {}", total);
}
