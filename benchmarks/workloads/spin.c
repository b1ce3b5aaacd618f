/* spin: a CPU-bound workload whose run time is linear in its argument.
 *
 * Used by benchmarks/calibration.py to measure pairbench's own error rates.
 *
 *   spin N              run N steps of a 64-bit LCG (a serial dependency chain
 *                       the compiler cannot shorten), print the final state, exit 0
 *   spin --busy         spin forever (one busy core for the background load);
 *                       on Linux it dies with its parent (PR_SET_PDEATHSIG)
 *   spin --stamp FILE   write CLOCK_MONOTONIC in nanoseconds to FILE and exit
 *                       (lets the harness place samples on the load schedule)
 *   spin --bimodal N P  run N steps or N (1 + P/100) steps, chosen at random per
 *                       run (a bimodal command: two modes P% apart, equally likely)
 *
 * Build: cc -O2 -o spin spin.c
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

static uint64_t lcg_steps(uint64_t n)
{
    /* Knuth's MMIX LCG: each step needs the previous one, so time = a + b n. */
    uint64_t x = 1;
    for (uint64_t i = 0; i < n; i++)
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x;
}

static int busy(void)
{
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    if (getppid() == 1)
        return 1; /* the parent died before prctl took effect */
    volatile uint64_t sink = 0;
    for (;;)
        sink = lcg_steps(1000000) + sink;
    return 0;
}

static int stamp(const char *path)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 1;
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "spin: cannot write %s: %s\n", path, strerror(errno));
        return 1;
    }
    fprintf(f, "%lld\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
    return fclose(f) == 0 ? 0 : 1;
}

static int bimodal(const char *steps, const char *percent)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    /* one random bit per run: mix the clock's nanoseconds with the pid (splitmix64) */
    uint64_t z = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_sec;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    unsigned long long n = strtoull(steps, NULL, 10);
    double p = strtod(percent, NULL);
    if (z & 1)
        n = (unsigned long long)((double)n * (1.0 + p / 100.0));
    printf("%llu\n", (unsigned long long)lcg_steps(n));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--bimodal") == 0)
        return bimodal(argv[2], argv[3]);
    if (argc == 2 && strcmp(argv[1], "--busy") == 0)
        return busy();
    if (argc == 3 && strcmp(argv[1], "--stamp") == 0)
        return stamp(argv[2]);
    if (argc != 2 || argv[1][0] < '0' || argv[1][0] > '9') {
        fprintf(stderr, "usage: spin N | spin --busy | spin --stamp FILE | spin --bimodal N PERCENT\n");
        return 2;
    }
    char *end;
    errno = 0;
    unsigned long long n = strtoull(argv[1], &end, 10);
    if (errno || *end) {
        fprintf(stderr, "spin: N must be a non-negative integer, got %s\n", argv[1]);
        return 2;
    }
    printf("%llu\n", (unsigned long long)lcg_steps(n));
    return 0;
}
