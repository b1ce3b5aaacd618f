/* The C workload of benchmarks/microbench.py: one benchmark, `micro`, of about 1 us a call.
 *
 * One iteration runs a dependent chain of N multiply-adds (a linear congruential
 * step), so its time is N times the latency of one step: N is a compile-time
 * constant, and -DN=1010 is exactly 1% more work than -DN=1000. The chain
 * cannot be vectorised or folded (each step needs the previous one), and
 * pairbench_keep makes the result live, so the loop is not removed.
 *
 *     cc -O2 -I src/pairbench/worker/include -DN=1000 benchmarks/workloads/micro.c -o micro-a
 *     cc -O2 -I src/pairbench/worker/include -DN=1010 benchmarks/workloads/micro.c -o micro-b
 */
#include "pairbench.h"

#include <stdint.h>

#ifndef N
#define N 1000
#endif

static volatile uint64_t micro_seed = 88172645463325252ull; /* read once a call: not a constant */

PAIRBENCH(micro) {
    uint64_t x = micro_seed;
    for (int i = 0; i < N; i++) x = x * 6364136223846793005ull + 1442695040888963407ull;
    pairbench_keep(x);
}

PAIRBENCH_MAIN()
