// Google Benchmark programs for pairbench's adapter tests (tests/adapters/conftest.py builds them):
// -DWORK=N sets BM_work's chain length (the candidate is built with eight times as much), -DCRASH makes BM_crash abort.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>

#ifndef WORK
#define WORK 2000
#endif

static std::uint64_t chain(std::uint64_t x, int n) {
  for (int i = 0; i < n; i++) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  return x;
}

static void BM_work(benchmark::State& state) {
  std::uint64_t x = 1;
  for (auto _ : state) benchmark::DoNotOptimize(x = chain(x, WORK));
}
BENCHMARK(BM_work);

static void BM_same(benchmark::State& state) {
  std::uint64_t x = 1;
  for (auto _ : state) benchmark::DoNotOptimize(x = chain(x, 2000));
}
BENCHMARK(BM_same);

// a name over 40 characters, as suites nobody here wrote have (Go's own strconv has several)
static void BM_long_name_of_a_suite_benchmark_nobody_here_chose(benchmark::State& state) {
  std::uint64_t x = 1;
  for (auto _ : state) benchmark::DoNotOptimize(x = chain(x, 200));
}
BENCHMARK(BM_long_name_of_a_suite_benchmark_nobody_here_chose);

static void BM_counters(benchmark::State& state) {
  std::uint64_t x = 1;
  for (auto _ : state) benchmark::DoNotOptimize(x = chain(x, 500));
  state.SetBytesProcessed(state.iterations() * 64);
  state.counters["widgets"] = 7;
}
BENCHMARK(BM_counters);

static void BM_crash(benchmark::State& state) {
#ifdef CRASH
  std::abort();
#endif
  std::uint64_t x = 1;
  for (auto _ : state) benchmark::DoNotOptimize(x = chain(x, 500));
}
BENCHMARK(BM_crash);

static void BM_error(benchmark::State& state) {
  for (auto _ : state) {
    state.SkipWithError("the fixture is broken");
    break;
  }
}
BENCHMARK(BM_error);

BENCHMARK_MAIN();
