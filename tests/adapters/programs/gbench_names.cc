// A Google Benchmark program whose benchmarks have the names a filter must quote: every character
// POSIX extended regular expressions treat specially, brackets and braces as pairbench's parameter
// syntax writes them, and a few more (tests/adapters/test_gbench_names.py; built by conftest.py).
#include <benchmark/benchmark.h>

#include <cstdint>

static void work(benchmark::State& state) {
  std::uint64_t x = 1;
  for (auto _ : state) benchmark::DoNotOptimize(x = x * 6364136223846793005ULL + 1442695040888963407ULL);
}

int main(int argc, char** argv) {
  const char* names[] = {"BM_y[2]", "BM_z{3}", "BM_plain", "BM_a.b", "BM_p+q", "BM_(x)", "BM_p|q", "BM_^c",
                         "BM_$d", "BM_\\w", "BM_-e", "BM_ sp", "BM_s/l", "BM_]", "BM_}", "BM_*", "BM_?", "BM_[",
                         "BM_{", "BM_x{2,3}", "BM_[^a]", "BM_\\", "BM_]]", "BM_sort[n=10,kind=a]"};
  for (const char* name : names) benchmark::RegisterBenchmark(name, work);
  benchmark::Initialize(&argc, argv);
  // as BENCHMARK_MAIN() does: an option the library does not know (1.7's --benchmark_min_time=Nx) is an
  // error, so that pairbench sees the library cannot run a given iteration count. Without it, 1.7 only
  // warns and exits 0, pairbench then passes counts 1.7 ignores, and every sample runs the library's
  // default 0.5 s instead of --sample-time (24 s of CPU for this file's 16-sample measuring test).
#ifndef IGNORES_UNKNOWN_FLAGS  // built with it too, as a program whose main does not check
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
#endif
  benchmark::RunSpecifiedBenchmarks();
}
