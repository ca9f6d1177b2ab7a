// Rust built with -O -g for the inline test: format!, clone, collect and a closure inline
// standard library code into build_words, clone_all and main, where symbolization must find
// the inlined functions and their lines as binutils' addr2line does. Prints two counts.
use std::collections::HashMap;

#[inline(never)]
fn build_words(n: usize) -> Vec<String> {
    let mut v = Vec::new();
    for i in 0..n {
        v.push(format!("word{}", i));
    }
    v
}

#[inline(never)]
fn clone_all(v: &[String]) -> Vec<String> {
    v.iter().map(|s| s.clone()).collect()
}

fn main() {
    let words = build_words(1000);
    let copies = clone_all(&words);
    let mut seen: HashMap<String, usize> = HashMap::new();
    for s in &copies {
        *seen.entry(s.clone()).or_insert(0) += 1;
    }
    println!("{} {}", copies.len(), seen.len());
}
