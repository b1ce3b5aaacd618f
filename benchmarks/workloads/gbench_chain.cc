// The Google Benchmark workload of benchmarks/suites.py: BM_chain, a dependent chain of WORK 64-bit
// multiply-adds per iteration (about 1 us at WORK=1000 on the project's VM). Built with -DWORK=1000
// (A, and again as A2 for A/A) and -DWORK=1010: exactly 1% more work.
#include <benchmark/benchmark.h>

#include <cstdint>

#ifndef WORK
#define WORK 1000
#endif

static void BM_chain(benchmark::State& state) {
  std::uint64_t x = 1;
  for (auto _ : state) {
    for (int i = 0; i < WORK; i++) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    benchmark::DoNotOptimize(x);
  }
}
BENCHMARK(BM_chain);

BENCHMARK_MAIN();
