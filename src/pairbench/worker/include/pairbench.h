/* pairbench.h: write in-process microbenchmarks in C or C++ that pairbench drives.
 *
 *     #include "pairbench.h"          // include it first (it needs POSIX 2008)
 *
 *     static unsigned char *buf;
 *     PAIRBENCH_SETUP(checksum)    { buf = malloc(4096); memset(buf, 7, 4096); }
 *     PAIRBENCH_TEARDOWN(checksum) { free(buf); }
 *     PAIRBENCH(checksum) {                            // the body is ONE iteration
 *         unsigned sum = 0;
 *         for (int i = 0; i < 4096; i++) sum += buf[i];
 *         pairbench_keep(sum);                         // or the compiler deletes the loop
 *     }
 *     PAIRBENCH_NAMED(sort_64, "sort[n=64]") { ... }   // a name with parameters
 *     PAIRBENCH_MAIN()
 *
 *     cc -O2 -I"$(pairbench include-dir)" bench.c -o bench
 *     pairbench bench ./bench                          (./bench --list names them)
 *
 * The program is a pairbench *worker*: it speaks the protocol of
 * docs/worker-protocol.md over two pipes pairbench hands it. Each sample runs
 * the setup, times ITERATIONS runs of the body with the monotonic clock, then
 * runs the teardown; setup and teardown are never timed and may be defined
 * before or after their benchmark. A compiler memory barrier separates the
 * iterations, so work that reads or writes memory is redone every iteration;
 * pass results to pairbench_keep(). pairbench_fail("why") turns the sample into
 * an `error` reply (the iterations still run: return from the body after it).
 *
 * Linux/POSIX, gcc or clang (C11 or C++11 and later), libc only. The header may
 * be included by several files of one program: the registry is one weak symbol.
 *
 * Instructions (`pairbench bench --metric instructions`, docs/instructions.md):
 * only the timed loop is counted. Under Callgrind, through its client requests
 * (<valgrind/callgrind.h>, used when the compiler finds it: Debian's `valgrind`
 * package installs it): collection is switched on around the loop and the counts
 * dumped after it, one dump per sample, which pairbench reads
 * (-DPAIRBENCH_NO_CALLGRIND leaves the requests out). With hardware
 * counters, when pairbench sets PAIRBENCH_COUNTER=instructions: a
 * perf_event_open counter of this thread's user-space instructions, enabled
 * around the loop and reported as `instructions=N` in the reply.
 */
#ifndef PAIRBENCH_H
#define PAIRBENCH_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* clock_gettime, getrusage(RUSAGE_THREAD), unsetenv under -std=c11 */
#endif

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>) && !defined(PAIRBENCH_NO_CALLGRIND)
#include <valgrind/callgrind.h>
#define PAIRBENCH_CALLGRIND_ 1
#endif
#if defined(__linux__) && __has_include(<linux/perf_event.h>)
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#define PAIRBENCH_PERF_EVENTS_ 1
#endif
#endif

#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#error "pairbench.h needs POSIX 2008: include it before any other header, or compile with -D_GNU_SOURCE"
#endif

/* ------------------------------------------------------------------ public API */

/* Keeps VALUE (any scalar or pointer) alive: the compiler must compute it, yet
 * no instruction is emitted. The "memory" clobber also makes it assume memory
 * was read and written here, so stores before it are not dropped either. */
#define pairbench_keep(value) __asm__ __volatile__("" : : "g"(value) : "memory")

/* A compiler memory barrier: memory must be written before and re-read after. */
#define pairbench_clobber() __asm__ __volatile__("" : : : "memory")

/* One benchmark named after the C identifier ID; the braces after it are the body. */
#define PAIRBENCH(id) PAIRBENCH_DEFINE_(id, #id)

/* One benchmark with any NAME pairbench allows: "sort[n=64]" gives the parameter n. */
#define PAIRBENCH_NAMED(id, name) PAIRBENCH_DEFINE_(id, name)

/* Run once per sample, untimed, before / after the timed loop of benchmark ID. */
#define PAIRBENCH_SETUP(id) PAIRBENCH_HOOK_(id, setup)
#define PAIRBENCH_TEARDOWN(id) PAIRBENCH_HOOK_(id, teardown)

/* Defines main(): serves the protocol, or `--list` prints the names on stdout. */
#define PAIRBENCH_MAIN() \
    int main(int argc, char **argv) { return pairbench_main_(argc, argv); }

/* --------------------------------------------------------------- registration */

#define PAIRBENCH_MAX_BENCHMARKS_ 4096 /* well under the protocol's 10,000 */
#define PAIRBENCH_LINE_MAX_ 4096       /* a protocol line with its newline */
#define PAIRBENCH_NAME_MAX_ 200

/* The loop is generated next to the body, so at -O2 the body is inlined into it
 * and an iteration costs no call; the barrier stops work moving between iterations.
 * It starts at a 64-byte boundary, so code added or removed elsewhere in the program
 * does not move it across one: on an AMD EPYC guest the same 2,000-iteration loop
 * ran 2.07 times slower in a build where an unrelated edit had moved it across a
 * 64-byte line, and at the same speed once the loop functions were aligned. */
#define PAIRBENCH_LOOP_ALIGN_ 64
#define PAIRBENCH_DEFINE_(id, name)                                                    \
    static inline void pairbench_body_##id(void);                                      \
    __attribute__((aligned(PAIRBENCH_LOOP_ALIGN_)))                                    \
    static void pairbench_loop_##id(uint64_t pairbench_n_) {                           \
        for (uint64_t pairbench_i_ = 0; pairbench_i_ < pairbench_n_; pairbench_i_++) { \
            pairbench_body_##id();                                                     \
            pairbench_clobber();                                                       \
        }                                                                              \
    }                                                                                  \
    __attribute__((constructor)) static void pairbench_add_body_##id(void) {           \
        pairbench_add_(#id, name, pairbench_loop_##id);                                \
    }                                                                                  \
    static inline void pairbench_body_##id(void)

#define PAIRBENCH_HOOK_(id, kind)                                                   \
    static void pairbench_##kind##_##id(void);                                      \
    __attribute__((constructor)) static void pairbench_add_##kind##_##id(void) {    \
        pairbench_add_hook_(#id, #kind, pairbench_##kind##_##id);                   \
    }                                                                               \
    static void pairbench_##kind##_##id(void)

struct pairbench_case_ {
    const char *id;   /* the C identifier: setup and teardown find their benchmark by it */
    const char *name; /* what pairbench sees; NULL while only a setup/teardown names the id */
    void (*loop)(uint64_t iterations);
    void (*setup)(void);
    void (*teardown)(void);
};

struct pairbench_registry_ {
    size_t count;
    struct pairbench_case_ cases[PAIRBENCH_MAX_BENCHMARKS_];
    int failed;                     /* pairbench_fail() was called during this sample */
    int counter;                    /* the hardware instruction counter's descriptor, or -1 */
    char failure[PAIRBENCH_LINE_MAX_ / 2];
};

/* Weak, so that every file including this header shares one registry. */
__attribute__((weak)) struct pairbench_registry_ pairbench_state_;

static inline void pairbench_die_(const char *what, const char *detail) {
    fprintf(stderr, "pairbench worker: %s%s\n", what, detail ? detail : "");
    exit(2);
}

/* A name pairbench accepts. Stricter than the protocol (printable ASCII only),
 * so every name the header lists is valid whatever the driver's notion of
 * Unicode whitespace. */
static inline int pairbench_valid_name_(const char *name, size_t length) {
    if (length == 0 || length > PAIRBENCH_NAME_MAX_) return 0;
    for (size_t i = 0; i < length; i++)
        if (name[i] <= ' ' || name[i] > '~') return 0;
    return 1;
}

static inline struct pairbench_case_ *pairbench_case_of_(const char *id) {
    struct pairbench_registry_ *r = &pairbench_state_;
    for (size_t i = 0; i < r->count; i++)
        if (strcmp(r->cases[i].id, id) == 0) return &r->cases[i];
    if (r->count == PAIRBENCH_MAX_BENCHMARKS_)
        pairbench_die_("more than 4096 benchmarks, the most one program may define; at ", id);
    struct pairbench_case_ *c = &r->cases[r->count++];
    c->id = id;
    return c;
}

static inline void pairbench_add_(const char *id, const char *name, void (*loop)(uint64_t)) {
    if (!pairbench_valid_name_(name, strlen(name)))
        pairbench_die_("a benchmark name must be 1 to 200 printable ASCII characters "
                       "without spaces, not the name of ", id);
    struct pairbench_registry_ *r = &pairbench_state_;
    for (size_t i = 0; i < r->count; i++)
        if (r->cases[i].name && strcmp(r->cases[i].name, name) == 0)
            pairbench_die_("two benchmarks are named ", name);
    struct pairbench_case_ *c = pairbench_case_of_(id);
    if (c->loop) pairbench_die_("two benchmarks are defined as ", id);
    c->name = name;
    c->loop = loop;
}

static inline void pairbench_add_hook_(const char *id, const char *kind, void (*hook)(void)) {
    struct pairbench_case_ *c = pairbench_case_of_(id);
    void (**slot)(void) = strcmp(kind, "setup") == 0 ? &c->setup : &c->teardown;
    if (*slot) pairbench_die_("two setups or two teardowns for ", id);
    *slot = hook;
}

/* Call from a setup or body: this sample's reply is `error MESSAGE` (the first one wins). */
static inline void pairbench_fail(const char *message) {
    struct pairbench_registry_ *r = &pairbench_state_;
    if (!r->failed) snprintf(r->failure, sizeof r->failure, "%s", message ? message : "failed");
    r->failed = 1;
}

/* -------------------------------------------------------------------- the pipes */

struct pairbench_reader_ {
    int fd;
    size_t length;                 /* bytes read but not yet returned */
    char buf[PAIRBENCH_LINE_MAX_]; /* a whole line with its newline always fits */
};

static inline void pairbench_write_all_(int fd, const char *data, size_t length) {
    while (length > 0) {
        ssize_t n = write(fd, data, length);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) pairbench_die_("cannot write a reply (pairbench is gone?): ", strerror(errno));
        data += n;
        length -= (size_t)n;
    }
}

/* The next request into LINE (NUL-terminated, without its newline); returns its
 * length, or -1 at end of file. A request over the line limit, or cut short by
 * the end of the pipe, means the stream cannot be trusted: the worker exits. */
static inline ssize_t pairbench_read_line_(struct pairbench_reader_ *r, char *line) {
    for (;;) {
        char *newline = (char *)memchr(r->buf, '\n', r->length);
        if (newline) {
            size_t n = (size_t)(newline - r->buf);
            memcpy(line, r->buf, n);
            line[n] = '\0';
            r->length -= n + 1;
            memmove(r->buf, newline + 1, r->length);
            return (ssize_t)n;
        }
        if (r->length == sizeof r->buf) pairbench_die_("a request is longer than 4096 bytes", NULL);
        ssize_t got = read(r->fd, r->buf + r->length, sizeof r->buf - r->length);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) pairbench_die_("cannot read requests: ", strerror(errno));
        if (got == 0 && r->length > 0) pairbench_die_("the request pipe ended inside a line", NULL);
        if (got == 0) return -1;
        r->length += (size_t)got;
    }
}

/* `error MESSAGE` with every byte that is not printable ASCII shown as \xNN, so
 * a hostile request echoed back cannot break the reply line. */
static inline void pairbench_reply_error_(int fd, const char *message, const char *detail) {
    char reply[PAIRBENCH_LINE_MAX_];
    size_t n = (size_t)snprintf(reply, 1024, "error %s", message); /* MESSAGE: a short constant */
    for (const char *p = detail; p && *p && n + 6 < sizeof reply; p++) {
        unsigned char c = (unsigned char)*p;
        if (c >= ' ' && c <= '~') reply[n++] = (char)c;
        else n += (size_t)snprintf(reply + n, 5, "\\x%02x", c);
    }
    reply[n++] = '\n';
    pairbench_write_all_(fd, reply, n);
}

/* ------------------------------------------------------------------- measuring */

#ifdef RUSAGE_THREAD
#define PAIRBENCH_RUSAGE_THREAD_ RUSAGE_THREAD
#else
#define PAIRBENCH_RUSAGE_THREAD_ 1 /* Linux's value, when the libc headers hide it */
#endif

static inline uint64_t pairbench_now_ns_(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline uint64_t pairbench_timeval_ns_(struct timeval t) {
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_usec * 1000u;
}

/* after - before, or 0 should a counter ever step back. */
static inline uint64_t pairbench_delta_(uint64_t after, uint64_t before) {
    return after > before ? after - before : 0;
}
#define PAIRBENCH_FIELD_(field) pairbench_delta_((uint64_t)after.field, (uint64_t)before.field)

/* The CPU time this thread has run, ns: exact, and reading it brings the kernel's
 * account of the thread up to date. getrusage(RUSAGE_THREAD) alone returns the
 * runtime as of the thread's last tick or context switch, so around a ~1 ms
 * sample it missed most of the CPU time (a CPU-bound loop read 15-20% of its
 * wall time). */
static inline uint64_t pairbench_thread_cpu_ns_(void) {
    struct timespec t;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) return 0;
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The thread's usage with its CPU time up to date (the clock is read first). */
static inline uint64_t pairbench_usage_(struct rusage *usage) {
    uint64_t cpu = pairbench_thread_cpu_ns_();
    getrusage(PAIRBENCH_RUSAGE_THREAD_, usage);
    return cpu;
}

/* The sample's CPU time split as user and system: the total is the thread CPU
 * clock's (exact); the system part is getrusage's (the kernel's tick-sampled
 * share, scaled to the same up-to-date total), at most the total; user is the
 * rest. Over one short sample the split is coarse, over many it averages out. */
static inline void pairbench_cpu_split_(uint64_t cpu_ns, const struct rusage *before, const struct rusage *after,
                                        uint64_t *user_ns, uint64_t *sys_ns) {
    uint64_t sys = pairbench_delta_(pairbench_timeval_ns_(after->ru_stime), pairbench_timeval_ns_(before->ru_stime));
    *sys_ns = sys < cpu_ns ? sys : cpu_ns;
    *user_ns = cpu_ns - *sys_ns;
}

/* ------------------------------------------------------------ counting instructions */

/* Callgrind (the program runs under `valgrind --tool=callgrind --collect-atstart=no`):
 * collection on around the loop only, then one dump per sample for pairbench to read.
 * Outside Valgrind a client request is a few instructions that do nothing. */
#ifdef PAIRBENCH_CALLGRIND_
/* Instrumentation starts with the first sample (pairbench starts the worker with
 * --instr-atstart=no) and stays on; collection is toggled around each loop. */
static inline void pairbench_instrument_(void) {
    static int started;
    if (!started) CALLGRIND_START_INSTRUMENTATION;
    started = 1;
}
#define PAIRBENCH_INSTRUMENT_() pairbench_instrument_()
#define PAIRBENCH_COLLECT_() CALLGRIND_TOGGLE_COLLECT
#define PAIRBENCH_DUMP_() CALLGRIND_DUMP_STATS_AT("pairbench sample")
#else
#define PAIRBENCH_INSTRUMENT_() ((void)0)
#define PAIRBENCH_COLLECT_() ((void)0)
#define PAIRBENCH_DUMP_() ((void)0)
#endif

/* PAIRBENCH_COUNTER=callgrind: the client requests above count the loop (a worker
 * built without them says so and ends). PAIRBENCH_COUNTER=instructions: a counter of this thread's user-space instructions
 * (perf_event_open, disabled until the loop; kernel and hypervisor excluded). A
 * machine without the counter (no PMU, perf_event_paranoid) ends the worker saying
 * why: pairbench asks for it only where it found one. */
static inline void pairbench_counter_open_(void) {
    struct pairbench_registry_ *r = &pairbench_state_;
    const char *want = getenv("PAIRBENCH_COUNTER");
    r->counter = -1;
    if (!want) return;
    if (strcmp(want, "callgrind") == 0) { /* counted by Callgrind through the client requests */
#ifndef PAIRBENCH_CALLGRIND_
        pairbench_die_("built without <valgrind/callgrind.h>, this worker cannot count its loop under Callgrind: "
                       "install valgrind (Debian's package has the header) and build it again", NULL);
#endif
        unsetenv("PAIRBENCH_COUNTER");
        return;
    }
    if (strcmp(want, "instructions") != 0)
        pairbench_die_("PAIRBENCH_COUNTER must be callgrind or instructions, not ", want);
#ifdef PAIRBENCH_PERF_EVENTS_
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.type = PERF_TYPE_HARDWARE;
    attr.size = sizeof attr;
    attr.config = PERF_COUNT_HW_INSTRUCTIONS;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    r->counter = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (r->counter < 0) pairbench_die_("cannot open the hardware instruction counter: ", strerror(errno));
#else
    pairbench_die_("this build has no <linux/perf_event.h>: it cannot count instructions with hardware counters",
                   NULL);
#endif
    unsetenv("PAIRBENCH_COUNTER");
}

static inline void pairbench_counter_start_(void) {
#ifdef PAIRBENCH_PERF_EVENTS_
    if (pairbench_state_.counter < 0) return;
    ioctl(pairbench_state_.counter, PERF_EVENT_IOC_RESET, 0);
    ioctl(pairbench_state_.counter, PERF_EVENT_IOC_ENABLE, 0);
#endif
}

/* The instructions counted since the start, or -1 without a counter. */
static inline int64_t pairbench_counter_stop_(void) {
#ifdef PAIRBENCH_PERF_EVENTS_
    if (pairbench_state_.counter < 0) return -1;
    ioctl(pairbench_state_.counter, PERF_EVENT_IOC_DISABLE, 0);
    uint64_t count = 0;
    if (read(pairbench_state_.counter, &count, sizeof count) != (ssize_t)sizeof count)
        pairbench_die_("cannot read the hardware instruction counter: ", strerror(errno));
    return (int64_t)(count & (((uint64_t)1 << 53) - 1)); /* the protocol's largest field */
#else
    return -1;
#endif
}

/* One sample of C: setup, the timed loop, teardown, then the reply. */
static inline void pairbench_run_(int fd, const struct pairbench_case_ *c, uint64_t iterations) {
    struct rusage before, after, self;
    uint64_t start = 0, stop = 0, cpu_start = 0, cpu_stop = 0, user_ns = 0, sys_ns = 0;
    int64_t instructions = -1;
    pairbench_state_.failed = 0;
    PAIRBENCH_INSTRUMENT_(); /* before the setup: its memory is then in the simulated caches */
    if (c->setup) c->setup();
    if (!pairbench_state_.failed) {
        pairbench_usage_(&before); /* outside the clock readings */
        cpu_start = pairbench_thread_cpu_ns_();
        start = pairbench_now_ns_();
        pairbench_counter_start_();
        PAIRBENCH_COLLECT_();
        c->loop(iterations);
        PAIRBENCH_COLLECT_();
        instructions = pairbench_counter_stop_();
        stop = pairbench_now_ns_();
        cpu_stop = pairbench_usage_(&after);
        PAIRBENCH_DUMP_();
    }
    if (c->teardown) c->teardown(); /* always, so a failed setup can release what it took */
    if (pairbench_state_.failed) {
        pairbench_reply_error_(fd, "", pairbench_state_.failure);
        return;
    }
    pairbench_cpu_split_(pairbench_delta_(cpu_stop, cpu_start), &before, &after, &user_ns, &sys_ns);
    getrusage(RUSAGE_SELF, &self);
    char reply[512];
    int n = snprintf(reply, sizeof reply,
                     "ok ns=%" PRIu64 " user_ns=%" PRIu64 " sys_ns=%" PRIu64 " vcs=%" PRIu64
                     " ivcs=%" PRIu64 " minflt=%" PRIu64 " majflt=%" PRIu64 " maxrss_kib=%" PRIu64 "\n",
                     pairbench_delta_(stop, start), user_ns, sys_ns,
                     PAIRBENCH_FIELD_(ru_nvcsw), PAIRBENCH_FIELD_(ru_nivcsw), PAIRBENCH_FIELD_(ru_minflt),
                     PAIRBENCH_FIELD_(ru_majflt), (uint64_t)(self.ru_maxrss > 0 ? self.ru_maxrss : 0));
    if (instructions >= 0) /* replaces the newline */
        n += snprintf(reply + n - 1, sizeof reply - (size_t)n + 1, " instructions=%" PRId64 "\n", instructions) - 1;
    pairbench_write_all_(fd, reply, (size_t)n);
}

/* ------------------------------------------------------------------- requests */

/* A whole number of 1 to 19 digits (so no overflow) ending the string; else 0 (invalid). */
static inline uint64_t pairbench_parse_count_(const char *text) {
    size_t digits = strspn(text, "0123456789");
    if (digits == 0 || digits > 19 || text[digits] != '\0') return 0;
    uint64_t value = 0;
    for (size_t i = 0; i < digits; i++) value = value * 10 + (uint64_t)(text[i] - '0');
    return value;
}

static inline const struct pairbench_case_ *pairbench_find_(const char *name) {
    for (size_t i = 0; i < pairbench_state_.count; i++)
        if (strcmp(pairbench_state_.cases[i].name, name) == 0) return &pairbench_state_.cases[i];
    return NULL;
}

static inline void pairbench_reply_list_(int fd) {
    char line[PAIRBENCH_LINE_MAX_];
    int n = snprintf(line, sizeof line, "benchmarks %zu\n", pairbench_state_.count);
    pairbench_write_all_(fd, line, (size_t)n);
    for (size_t i = 0; i < pairbench_state_.count; i++) {
        n = snprintf(line, sizeof line, "benchmark %s\n", pairbench_state_.cases[i].name);
        pairbench_write_all_(fd, line, (size_t)n);
    }
}

/* `run NAME ITERATIONS`, checked field by field. */
static inline void pairbench_serve_run_(int fd, char *args) {
    char *space = strchr(args, ' ');
    if (!space) {
        pairbench_reply_error_(fd, "malformed request: run ", args);
        return;
    }
    *space = '\0';
    const char *name = args, *count = space + 1;
    uint64_t iterations = pairbench_parse_count_(count);
    const struct pairbench_case_ *c = pairbench_valid_name_(name, strlen(name)) ? pairbench_find_(name) : NULL;
    if (!c)
        pairbench_reply_error_(fd, "no such benchmark: ", name);
    else if (iterations < 1 || iterations > ((uint64_t)1 << 40))
        pairbench_reply_error_(fd, "the iteration count must be a whole number from 1 to 2^40, not ", count);
    else
        pairbench_run_(fd, c, iterations);
}

/* Serves requests until `quit` or the end of the request pipe. */
static inline int pairbench_serve_(int in, int out) {
    struct pairbench_reader_ reader;
    char line[PAIRBENCH_LINE_MAX_];
    reader.fd = in;
    reader.length = 0;
    pairbench_write_all_(out, "pairbench-worker 1\n", 19);
    for (;;) {
        ssize_t n = pairbench_read_line_(&reader, line);
        if (n < 0) return 0;
        if ((size_t)n != strlen(line)) pairbench_reply_error_(out, "malformed request: a NUL byte", NULL);
        else if (strcmp(line, "quit") == 0) return 0;
        else if (strcmp(line, "list") == 0) pairbench_reply_list_(out);
        else if (strncmp(line, "run ", 4) == 0) pairbench_serve_run_(out, line + 4);
        else pairbench_reply_error_(out, "unknown request: ", line);
    }
}

/* ----------------------------------------------------------------------- main */

/* One descriptor of PAIRBENCH_WORKER_FDS: decimal, open, and readable or
 * writable as its role needs; then close-on-exec. */
static inline int pairbench_take_fd_(const char *text, size_t length, int writing) {
    if (length == 0 || length > 9 || strspn(text, "0123456789") < length)
        pairbench_die_("PAIRBENCH_WORKER_FDS must be R,W (two file descriptors in decimal)", NULL);
    int fd = 0;
    for (size_t i = 0; i < length; i++) fd = fd * 10 + (text[i] - '0');
    int mode = fcntl(fd, F_GETFL), flags = fcntl(fd, F_GETFD);
    int wrong_way = (mode & O_ACCMODE) == (writing ? O_RDONLY : O_WRONLY);
    if (mode < 0 || flags < 0 || wrong_way)
        pairbench_die_("PAIRBENCH_WORKER_FDS names a descriptor that is not open for ",
                       writing ? "writing" : "reading");
    if (fcntl(fd, F_SETFD, flags | FD_CLOEXEC) < 0) /* what the benchmarks start must not inherit it */
        pairbench_die_("cannot mark a pipe close-on-exec: ", strerror(errno));
    return fd;
}

static inline int pairbench_main_(int argc, char **argv) {
    const char *program = argc > 0 ? argv[0] : "bench";
    for (size_t i = 0; i < pairbench_state_.count; i++)
        if (!pairbench_state_.cases[i].loop)
            pairbench_die_("a setup or teardown has no benchmark: ", pairbench_state_.cases[i].id);
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < pairbench_state_.count; i++) puts(pairbench_state_.cases[i].name);
        return 0;
    }
    if (argc > 1) pairbench_die_("unknown argument (the only one is --list): ", argv[1]);
    const char *fds = getenv("PAIRBENCH_WORKER_FDS");
    if (!fds) {
        fprintf(stderr, "%s is a pairbench worker: run its benchmarks with `pairbench bench %s` "
                        "(`%s --list` names them)\n", program, program, program);
        return 2;
    }
    const char *comma = strchr(fds, ',');
    if (!comma) pairbench_die_("PAIRBENCH_WORKER_FDS must be R,W (two file descriptors in decimal)", NULL);
    int in = pairbench_take_fd_(fds, (size_t)(comma - fds), 0);
    int out = pairbench_take_fd_(comma + 1, strlen(comma + 1), 1);
    if (in == out) pairbench_die_("PAIRBENCH_WORKER_FDS names the same descriptor twice", NULL);
    unsetenv("PAIRBENCH_WORKER_FDS"); /* fds is not used past this point */
    signal(SIGPIPE, SIG_IGN);          /* a reply to a vanished pairbench is an error, not a kill */
    pairbench_counter_open_();
    return pairbench_serve_(in, out);
}

#endif /* PAIRBENCH_H */
