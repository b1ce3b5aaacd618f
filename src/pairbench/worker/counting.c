/* Callgrind's client requests for the Python worker, which calls them through ctypes
 * (pairbench/worker/counting.py): collection switched on and off around a sample's
 * loop, and the counts dumped after it, one dump per sample, which pairbench reads.
 *
 * Built by the package's install beside this file as pairbench-counting.so when the
 * compiler finds <valgrind/callgrind.h> (Debian's `valgrind` package); built without
 * it, pairbench_counting_available() says 0 and the worker refuses to count. Outside
 * Valgrind a client request is a few instructions that do nothing. */
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define PAIRBENCH_CALLGRIND_ 1
#endif
#endif

int pairbench_counting_available(void);
void pairbench_collect(void);
void pairbench_dump(void);

#ifdef PAIRBENCH_CALLGRIND_
/* what `make test` looks for to know this build has the requests */
__attribute__((used)) static const char pairbench_marker_[] = "pairbench-callgrind-requests";
int pairbench_counting_available(void) { return 1; }
static int pairbench_instrumented_;
/* instrumentation starts at the first sample (--instr-atstart=no) and stays on */
void pairbench_collect(void) {
    if (!pairbench_instrumented_) CALLGRIND_START_INSTRUMENTATION;
    pairbench_instrumented_ = 1;
    CALLGRIND_TOGGLE_COLLECT;
}
void pairbench_dump(void) { CALLGRIND_DUMP_STATS_AT("pairbench sample"); }
#else
int pairbench_counting_available(void) { return 0; }
void pairbench_collect(void) {}
void pairbench_dump(void) {}
#endif
