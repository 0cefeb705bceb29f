//! Hot paths of the evaluator: calls and arithmetic (fib), tail calls (loop, `do`), list
//! building and walking (conslist), strings, and reading + analysing source.
//!
//! Run with `cargo bench --bench eval`. Whole-program comparisons with other Lisps are
//! made by `../shared/bench/run` (see docs/BENCHMARKS.md).

use criterion::{criterion_group, criterion_main, Criterion};

mod common;
use common::bench_program;

fn evaluator(c: &mut Criterion) {
    bench_program(
        c,
        "fib 20",
        "(define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))",
        "(fib 20)",
    );
    bench_program(
        c,
        "tail loop 100k",
        "(define (count k n) (if (= k n) k (count (+ k 1) n)))",
        "(count 0 100000)",
    );
    bench_program(
        c,
        "conslist 100k",
        "(define (build n acc) (if (= n 0) acc (build (- n 1) (cons n acc))))
         (define (fold f acc l) (if (null? l) acc (fold f (f acc (car l)) (cdr l))))",
        "(fold + 0 (map (fn (x) (* x 2)) (build 100000 '())))",
    );
    bench_program(
        c,
        "do loop 100k",
        "",
        "(do ((i 0 (+ i 1))) ((= i 100000) i))",
    );
    bench_program(
        c,
        "named let + vector ops",
        "",
        "(let loop ((i 0) (acc '())) (if (< i 10000) (loop (+ i 1) (cons (* i i) acc)) (length (filter even? acc))))",
    );
    bench_program(
        c,
        "read + analyse two definitions",
        "",
        "(begin (define (f0 x) (if (< x 2) x (+ (f0 (- x 1)) 1))) (define (f1 x) (cond ((= x 0) 'zero) ((> x 0) 'pos) (else 'neg))))",
    );
}

criterion_group!(benches, evaluator);
criterion_main!(benches);
