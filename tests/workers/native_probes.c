/* Test-only benchmarks that let tests/workers/test_native_workers.py observe
 * what pairbench.h does: what a child of the worker inherits, when setup and
 * teardown run, whether pairbench_keep keeps work, and how a failure replies.
 * The test compiles it as C11 and as C++17, both with -Wall -Wextra -Werror.
 * NATIVE_OUT (set by the test) names the directory the probes write into. */
#include "pairbench.h"

#include <time.h>

static void out_path(char *path, size_t size, const char *file) {
    const char *dir = getenv("NATIVE_OUT");
    snprintf(path, size, "%s/%s", dir ? dir : ".", file);
}

/* Appends one line to NATIVE_OUT/hooks.log: the order of hooks and bodies. */
static void log_line(const char *text, uint64_t number) {
    char path[4096];
    out_path(path, sizeof path, "hooks.log");
    FILE *log = fopen(path, "a");
    if (!log) {
        pairbench_fail("cannot open hooks.log");
        return;
    }
    fprintf(log, "%s %" PRIu64 "\n", text, number);
    fclose(log);
}

static void sleep_ms(long ms) {
    struct timespec t = {0, ms * 1000000L};
    while (nanosleep(&t, &t) != 0) {}
}

/* ---- spawn: a child lists the descriptors and environment it inherited ---- */

PAIRBENCH(spawn) {
    char fds[4096], env[4096], command[8400];
    out_path(fds, sizeof fds, "fds.txt");
    out_path(env, sizeof env, "env.txt");
    snprintf(command, sizeof command, "ls -l /proc/self/fd > '%s' && env > '%s'", fds, env);
    if (system(command) != 0) pairbench_fail("the child failed");
}

/* ---- slow_hooks: 20 ms of setup and teardown around a body that only counts.
 * The teardown comes first and the setup last: their order must not matter. */

static uint64_t slow_hooks_bodies;

PAIRBENCH_TEARDOWN(slow_hooks) {
    sleep_ms(20);
    log_line("teardown after bodies:", slow_hooks_bodies);
}

PAIRBENCH(slow_hooks) {
    slow_hooks_bodies++;
}

PAIRBENCH_SETUP(slow_hooks) {
    log_line("setup, bodies so far:", slow_hooks_bodies);
    slow_hooks_bodies = 0;
    sleep_ms(20);
}

/* ---- failing_setup: the sample is an error, the body never runs, teardown does ---- */

PAIRBENCH_SETUP(failing_setup) {
    pairbench_fail("no fixture:\tdisk on fire\n");
}

PAIRBENCH(failing_setup) {
    log_line("failing_setup body", 0);
}

PAIRBENCH_TEARDOWN(failing_setup) {
    log_line("failing_setup teardown", 0);
}

/* ---- keep_mix: 256 dependent multiply-adds a body must not lose ---- */

static uint64_t mix_data[256];

PAIRBENCH_SETUP(keep_mix) {
    for (int i = 0; i < 256; i++) mix_data[i] = (uint64_t)i * 2654435761u;
}

/* Without pairbench_keep, gcc -O2 deletes the whole computation (about 0.3 ns
 * an iteration here); with it, about 200 ns. */
PAIRBENCH(keep_mix) {
    uint64_t hash = 0;
    for (int i = 0; i < 256; i++) hash = hash * 31 + mix_data[i];
    pairbench_keep(hash);
}

/* ---- keep_kinds: pairbench_keep takes any scalar or pointer, lvalue or not ---- */

static int an_int = 3;
static double a_double = 1.5;

PAIRBENCH_NAMED(keep_kinds, "keep[kinds=scalars,pointers]") {
    pairbench_keep(an_int);
    pairbench_keep(an_int + 1);
    pairbench_keep(a_double);
    pairbench_keep(a_double * 2.0);
    pairbench_keep((float)a_double);
    pairbench_keep((char)an_int);
    pairbench_keep((unsigned long long)an_int);
    pairbench_keep(&an_int);
    pairbench_keep(mix_data);
    pairbench_keep("a literal");
    pairbench_clobber();
}

PAIRBENCH_MAIN()
