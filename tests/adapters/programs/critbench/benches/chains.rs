// criterion benchmarks for pairbench's adapter tests. A copy of the binary whose file name contains
// "slow" runs BenchmarkId chain/work eight times as long, so one build gives both sides of a comparison.
// "--quiet" and "--list" are ids that read as criterion's own options unless given after "--".
use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};

fn chain(mut x: u64, n: u32) -> u64 {
    for _ in 0..n {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    }
    x
}

fn benches(c: &mut Criterion) {
    let slow = std::env::args().next().map_or(false, |p| p.contains("slow"));
    let work = if slow { 16000 } else { 2000 };
    c.bench_function("same", |b| b.iter(|| chain(black_box(1), black_box(2000))));
    let mut group = c.benchmark_group("chain");
    group.bench_with_input(BenchmarkId::new("work", 2000), &work, |b, &n| b.iter(|| chain(black_box(1), n)));
    group.finish();
    c.bench_function("--quiet", |b| b.iter(|| chain(black_box(1), black_box(100))));
    c.bench_function("--list", |b| b.iter(|| chain(black_box(1), black_box(100))));
}

criterion_group!(group, benches);
criterion_main!(group);
