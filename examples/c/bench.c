/* Two small benchmarks for pairbench: a checksum over 64 KiB and a sort of 64 ints.
 *
 * Build the version you have and the one you changed, then compare them:
 *
 *     cc -O2 -I"$(pairbench include-dir)" bench.c -o bench-old
 *     # ... edit bench.c (or the code it calls) ...
 *     cc -O2 -I"$(pairbench include-dir)" bench.c -o bench-new
 *     pairbench bench ./bench-old ./bench-new
 *
 * `./bench-new --list` names the benchmarks; run without pairbench, the program
 * says it is a worker and exits with status 2.
 */
#include "pairbench.h" /* first: it asks the C library for POSIX */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- checksum: Adler-32 over a buffer that setup fills and teardown frees ---- */

enum { CHECKSUM_BYTES = 64 * 1024 };
static unsigned char *checksum_data;

/* zlib's trick: the sums cannot overflow 32 bits within 5552 bytes, so the
 * costly modulo runs once per block instead of once per byte. */
static uint32_t adler32(const unsigned char *data, size_t length) {
    uint32_t a = 1, b = 0;
    while (length > 0) {
        size_t block = length < 5552 ? length : 5552;
        length -= block;
        while (block--) {
            a += *data++;
            b += a;
        }
        a %= 65521;
        b %= 65521;
    }
    return (b << 16) | a;
}

PAIRBENCH_SETUP(checksum) {
    checksum_data = (unsigned char *)malloc(CHECKSUM_BYTES); /* the cast keeps it valid C++ */
    if (!checksum_data) {
        pairbench_fail("out of memory");
        return;
    }
    for (size_t i = 0; i < CHECKSUM_BYTES; i++) checksum_data[i] = (unsigned char)(i * 131 + 7);
}

PAIRBENCH(checksum) {
    pairbench_keep(adler32(checksum_data, CHECKSUM_BYTES));
}

PAIRBENCH_TEARDOWN(checksum) {
    free(checksum_data); /* teardown runs even when setup failed: free(NULL) is fine */
    checksum_data = NULL;
}

/* ---- sort[n=64]: insertion sort of a fresh copy of the same shuffled array ---- */

enum { SORT_N = 64 };
static int sort_input[SORT_N], sort_work[SORT_N];

static void insertion_sort(int *values, size_t n) {
    for (size_t i = 1; i < n; i++) {
        int value = values[i];
        size_t j = i;
        for (; j > 0 && values[j - 1] > value; j--) values[j] = values[j - 1];
        values[j] = value;
    }
}

PAIRBENCH_SETUP(sort_64) {
    uint32_t state = 12345; /* a fixed shuffle, so every sample sorts the same input */
    for (int i = 0; i < SORT_N; i++) {
        state = state * 1103515245u + 12345u;
        sort_input[i] = (int)(state >> 16);
    }
}

/* The name carries a parameter: pairbench shows and stores n=64. The copy is
 * part of each iteration (sorting sorted data would measure something else). */
PAIRBENCH_NAMED(sort_64, "sort[n=64]") {
    memcpy(sort_work, sort_input, sizeof sort_work);
    insertion_sort(sort_work, SORT_N);
    pairbench_keep(sort_work[0]);
}

PAIRBENCH_MAIN()
