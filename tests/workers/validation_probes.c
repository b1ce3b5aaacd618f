/* Benchmarks each made to fail one of the validation rules of `pairbench bench`, and one that
 * passes them all: built with pairbench.h by tests/workers/test_worker_validation.py. */
#include "pairbench.h" /* first: it asks for POSIX 2008 */

#include <stdlib.h>
#include <string.h>

static volatile unsigned seed_value = 7;

/* about 100 ns of dependent multiplications, its result kept: passes every rule */
PAIRBENCH(clean) {
    unsigned x = seed_value;
    for (int i = 0; i < 64; i++) x = x * 2654435761u + 1u;
    pairbench_keep(x);
}

/* the same loop, its result unused: the compiler removes it */
PAIRBENCH(elided) {
    unsigned x = seed_value;
    for (int i = 0; i < 64; i++) x = x * 2654435761u + 1u;
    (void)x;
}

/* keeps 1 KiB an iteration, touched so that it is resident */
PAIRBENCH(leaky) {
    char *kept = malloc(1024);
    if (kept == NULL) pairbench_fail("out of memory");
    memset(kept, seed_value, 1024);
    pairbench_keep(kept);
}

PAIRBENCH_MAIN()
