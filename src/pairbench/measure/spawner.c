/* pairbench-spawner: the native spawner, a small C process that runs pairbench's commands.
 *
 * Linux charges the spawning process's resident set to a child at exec, so a
 * command's max RSS is never reported below the size of the process that
 * starts it. This program is that process: about 1 MiB, against ~13 MiB for
 * the Python spawner (measure/spawner.py), which it replaces wherever it was
 * built. It speaks the same protocol over the same two pipes, with these
 * differences (the parent, SpawnerExecutor, knows them):
 *
 *   pairbench-spawner [--grace-ns N] [--lifeline] [--cgroup DIR] [--contain DIR] REQUEST_FD REPLY_FD PARENT_PID
 *   pairbench-spawner --keep PARENT_PID [--grace-ns N] [--contain DIR] -- PROGRAM [ARG...]
 *
 * The second form keeps one program that pairbench starts and talks to itself (a worker, a
 * listing, a build) tied to pairbench's life; see keep() and measure/children.py.
 *
 * - There is no hello line. The environment is this process's own (the parent
 *   starts it with the environment the commands get), and so are standard
 *   input, output and error (the parent opens them as the output policy says;
 *   each command inherits them). The kill grace period and the lifeline
 *   (watch the request pipe for hang-up instead of PR_SET_PDEATHSIG) are
 *   options; --cgroup names a cgroup v2 directory delegated to pairbench for
 *   memory.peak, --contain one it may make cgroups in (measure/containment.py).
 * - It starts by answering [0,"ready",floor_kib,memory,reason,containment,why]:
 *   memory is "cgroup" (each command runs in a fresh child cgroup of DIR and
 *   its max RSS is that cgroup's memory.peak) or "rusage" (wait4's ru_maxrss;
 *   reason says why not the cgroup, "" if none was asked for); containment is
 *   "cgroup" (each command's cgroup, or a cell of --contain's that this process
 *   shares with the command it runs), "scan" (the descendants' scan) or "group"
 *   (its process group only), and why says why not a cgroup.
 * - A command that cannot be started is answered [id,"noexec",errno]: the
 *   parent words the error, as the in-process executor does.
 *
 * Requests are JSON lines [id,"run",timeout_ns|null,shell,text,arg...],
 * [id,"floor"], [id,"sync"]; replies [id,"ok",wall_ns,start_ns,status,user_ns,
 * sys_ns,max_rss_kib,voluntary_cs,involuntary_cs,leftover_processes,
 * escaped_processes],
 * [id,"err",class,message], [id,"int"], [id,"floor",kib], [id,"sync"]. An
 * arg is a string whose characters are the argument's bytes (latin-1).
 *
 * The guarantees are the Python spawner's:
 * - the pipes are close-on-exec, and so is every other descriptor beyond 0-2
 *   this process inherited: no command sees any;
 * - each command leads its own process group, with stdin from the parent's
 *   choice (/dev/null), default SIGPIPE and SIGXFSZ, and no signal blocked;
 * - what a command leaves alive, in its group or having left it with setsid, is
 *   counted in leftover_processes and ended before the reply: its cgroup is
 *   killed (cgroup.kill) where there is one; and this process is a child
 *   subreaper, so any other descendant is found, stopped (SIGSTOP, rescanning
 *   until none is new) and killed; those still running when that gave up are
 *   escaped_processes;
 * - a timeout kills the command's group the same way (status -1000);
 * - SIGINT, SIGTERM and SIGHUP are blocked except while waiting, so they
 *   never cut a clean-up short. One arriving while a command runs kills its
 *   group and the run is answered "int"; SIGINT while idle cancels the next
 *   run (until "sync"); SIGTERM or SIGHUP also make this process exit once the
 *   current request is answered. It leads its own process group, so the
 *   terminal's Ctrl-C reaches only pairbench, which forwards one SIGINT;
 * - it dies with pairbench: PR_SET_PDEATHSIG sends it SIGTERM (or, with
 *   --lifeline, the request pipe's hang-up does), and at end of file on its
 *   request pipe it exits.
 *
 * Waiting never polls: every wait for a child is a ppoll() that unblocks the
 * signals above, woken by SIGCHLD, so no signal can slip in between the check
 * and the sleep. The timed window runs from just before vfork to just
 * after the wait4 that reaps the command, on CLOCK_MONOTONIC (pairbench's clock).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

extern char **environ;

#define STATUS_TIMEOUT (-1000)
/* The test suite builds a variant with -DPAIRBENCH_TESTING_WITHOUT_PEAK=1, which runs commands in
 * cgroups that lack memory.peak (a cgroup v2 hierarchy without the memory controller), to exercise
 * the cgroup path on machines that do not delegate memory; such a command's peak is ru_maxrss. */
#ifdef PAIRBENCH_TESTING_WITHOUT_PEAK
#define TESTING_WITHOUT_PEAK 1
#else
#define TESTING_WITHOUT_PEAK 0
#endif
#define CHUNK 65536
#define FREEZE_BOUND_NS 2000000000LL /* how long the scan keeps stopping new descendants */
#define END_BOUND_NS 5000000000LL     /* how long ending descendants goes on before it says some run */
#define END_WAIT_NS 5000000000LL      /* how long killed processes may take to be gone */
#define MESSAGE_MAX 512

/* -- state ------------------------------------------------------------------------ */

static volatile sig_atomic_t got_int;  /* SIGINT arrived */
static volatile sig_atomic_t got_term; /* SIGTERM or SIGHUP arrived, or the lifeline broke */
static int cancelled;                  /* SIGINT while idle: the next run is answered "int" */
static sigset_t blocked_mask;          /* what is blocked while not waiting */
static sigset_t waiting_mask;          /* what is blocked while waiting (nothing of ours) */

static int request_fd = -1, reply_fd = -1;
static long long grace_ns = 500000000LL;
static int lifeline;
static int adopts_orphans;
static int clear_refs_fd = -1;
static pid_t self_pid;

static const char *cgroup_dir; /* --cgroup, while usable */
static const char *contain_dir; /* --contain: where cells are made */
static char cell_path[4096];    /* this process's cell ("" when in none) */
static int in_cell;             /* this process is in cell_path (a spawner's; a keeper's holds its program) */
static char contain_reason[MESSAGE_MAX];
static char memory_reason[MESSAGE_MAX];
static unsigned long long cgroup_serial;
static volatile int *exec_errno; /* a shared page: the exec's errno, written by a failing child */
static struct sigaction default_action; /* SIG_DFL */

static char *in_buf;          /* the request pipe's unread bytes */
static size_t in_len, in_cap;

/* -- small helpers ---------------------------------------------------------------- */

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *grow(void *block, size_t size)
{
    void *bigger = realloc(block, size ? size : 1);
    if (!bigger) {
        _exit(71); /* the parent notices the exit and says so */
    }
    return bigger;
}

static void on_signal(int signum)
{
    if (signum == SIGINT)
        got_int = 1;
    else if (signum == SIGTERM || signum == SIGHUP)
        got_term = 1;
    /* SIGCHLD: only wakes ppoll */
}

/* Let a signal that is pending (blocked) run its handler now. */
static void deliver_pending(void)
{
    sigset_t pending;
    if (sigpending(&pending) == 0 && (sigismember(&pending, SIGINT) || sigismember(&pending, SIGTERM) ||
                                      sigismember(&pending, SIGHUP))) {
        sigprocmask(SIG_SETMASK, &waiting_mask, NULL);
        sigprocmask(SIG_SETMASK, &blocked_mask, NULL);
    }
}

/* Sleep until a signal of ours (SIGCHLD included), the deadline (ns on CLOCK_MONOTONIC, or
 * -1: none), or, with ``watch`` and the lifeline, a hang-up of the request pipe (which sets
 * got_term). */
static void sleep_until(long long deadline, int watch)
{
    struct timespec left, *timeout = NULL;
    if (deadline >= 0) {
        long long rest = deadline - now_ns();
        if (rest <= 0)
            return;
        left.tv_sec = rest / 1000000000LL;
        left.tv_nsec = rest % 1000000000LL;
        timeout = &left;
    }
    struct pollfd pipe_end = {.fd = request_fd, .events = 0};
    watch = watch && lifeline;
    int n = ppoll(watch ? &pipe_end : NULL, watch ? 1 : 0, timeout, &waiting_mask);
    if (n > 0 && (pipe_end.revents & (POLLHUP | POLLERR | POLLNVAL)))
        got_term = 1;
}

static void sleep_ns(long long ns)
{
    struct timespec ts = {ns / 1000000000LL, ns % 1000000000LL};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Poll steps while waiting on processes that are not our children: 1, 2, 5, 10, 20, 20... ms. */
static long long backoff_ns(int step)
{
    static const long long steps[] = {1000000LL, 2000000LL, 5000000LL, 10000000LL, 20000000LL};
    return steps[step < 4 ? step : 4];
}

static int exit_code(int wstatus)
{
    if (WIFEXITED(wstatus))
        return WEXITSTATUS(wstatus);
    if (WIFSIGNALED(wstatus))
        return -WTERMSIG(wstatus);
    return 0;
}

/* -- replies ---------------------------------------------------------------------- */

static void leave_cell(void);

/* Exit the spawner (not a child of it), leaving its cell first. */
__attribute__((noreturn)) static void exit_spawner(int code)
{
    if (getpid() == self_pid)
        leave_cell();
    _exit(code);
}

static void write_all(int fd, const char *data, size_t size)
{
    while (size) {
        ssize_t n = write(fd, data, size);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            exit_spawner(0); /* the parent is gone; nothing runs any more */
        }
        data += n;
        size -= (size_t)n;
    }
}

/* The request id as JSON: a number, or null for a request without one. */
static void format_id(char *out, size_t size, long long id)
{
    if (id < 0)
        snprintf(out, size, "null");
    else
        snprintf(out, size, "%lld", id);
}

static void reply_kind(long long id, const char *kind)
{
    char line[96], ids[32];
    format_id(ids, sizeof ids, id);
    int n = snprintf(line, sizeof line, "[%s,\"%s\"]\n", ids, kind);
    write_all(reply_fd, line, (size_t)n);
}

static void reply_number(long long id, const char *kind, long long value)
{
    char line[128], ids[32];
    format_id(ids, sizeof ids, id);
    int n = snprintf(line, sizeof line, "[%s,\"%s\",%lld]\n", ids, kind, value);
    write_all(reply_fd, line, (size_t)n);
}

/* Append ``text`` as a JSON string (bytes beyond ASCII as \u00XX, so any byte survives). */
static size_t json_quote(char *out, size_t at, size_t size, const char *text)
{
    if (at < size)
        out[at++] = '"';
    for (const unsigned char *p = (const unsigned char *)text; *p && at + 8 < size; p++) {
        if (*p == '"' || *p == '\\') {
            out[at++] = '\\';
            out[at++] = (char)*p;
        } else if (*p < 0x20 || *p >= 0x7f) {
            at += (size_t)snprintf(out + at, size - at, "\\u%04x", *p);
        } else {
            out[at++] = (char)*p;
        }
    }
    if (at < size)
        out[at++] = '"';
    return at;
}

static void reply_error(long long id, const char *class_name, const char *message)
{
    char line[4 * MESSAGE_MAX], ids[32];
    format_id(ids, sizeof ids, id);
    size_t at = (size_t)snprintf(line, sizeof line, "[%s,\"err\",", ids);
    at = json_quote(line, at, sizeof line - 4, class_name);
    line[at++] = ',';
    at = json_quote(line, at, sizeof line - 4, message);
    line[at++] = ']';
    line[at++] = '\n';
    write_all(reply_fd, line, at);
}

static void reply_failure(long long id, const char *why)
{
    char message[MESSAGE_MAX];
    snprintf(message, sizeof message, "pairbench's spawner process failed: %s", why);
    reply_error(id, "MeasurementError", message);
}

struct sample {
    long long wall_ns, start_ns;
    int status;
    struct rusage usage;
    int have_usage;
    long long max_rss_kib;
    int leftovers, escaped;
};

static long long usage_ns(struct timeval tv)
{
    return ((long long)tv.tv_sec * 1000000LL + tv.tv_usec) * 1000LL;
}

static void reply_sample(long long id, const struct sample *s)
{
    char line[512];
    const struct rusage *u = &s->usage;
    int n = snprintf(line, sizeof line, "[%lld,\"ok\",%lld,%lld,%d,%lld,%lld,%lld,%ld,%ld,%d,%d]\n", id,
                     s->wall_ns, s->start_ns, s->status, s->have_usage ? usage_ns(u->ru_utime) : 0,
                     s->have_usage ? usage_ns(u->ru_stime) : 0, s->max_rss_kib,
                     s->have_usage ? u->ru_nvcsw : 0L, s->have_usage ? u->ru_nivcsw : 0L, s->leftovers,
                     s->escaped);
    write_all(reply_fd, line, (size_t)n);
}

/* -- /proc: processes, groups, descendants ------------------------------------------ */

struct proc {
    pid_t pid, ppid, pgrp, sid;
    char state;
};

/* Every process from /proc (pid, parent, group, state); -1 without /proc. */
static long scan_processes(struct proc **found)
{
    DIR *dir = opendir("/proc");
    if (!dir)
        return -1;
    size_t count = 0, cap = 256;
    struct proc *list = grow(NULL, cap * sizeof *list);
    struct dirent *entry;
    char path[64], stat[512];
    while ((entry = readdir(dir))) {
        if (!isdigit((unsigned char)entry->d_name[0]))
            continue;
        snprintf(path, sizeof path, "/proc/%.20s/stat", entry->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue; /* exited meanwhile */
        ssize_t n = read(fd, stat, sizeof stat - 1);
        close(fd);
        if (n <= 0)
            continue;
        stat[n] = '\0';
        char *close_paren = strrchr(stat, ')'); /* "pid (comm) state ppid pgrp ...": comm may hold ')' */
        struct proc p = {.pid = (pid_t)atol(entry->d_name)};
        int ppid, pgrp, sid;
        if (!close_paren || sscanf(close_paren + 1, " %c %d %d %d", &p.state, &ppid, &pgrp, &sid) != 4)
            continue;
        p.ppid = ppid;
        p.pgrp = pgrp;
        p.sid = sid;
        if (count == cap)
            list = grow(list, (cap *= 2) * sizeof *list);
        list[count++] = p;
    }
    closedir(dir);
    *found = list;
    return (long)count;
}

static int is_live(const struct proc *p)
{
    return p->state != 'Z' && p->state != 'X';
}

static int group_exists(pid_t pgid)
{
    return killpg(pgid, 0) == 0 || errno == EPERM;
}

/* Live members of group ``pgid``; 1 without /proc (the group exists: at least one). */
static int count_live_members(pid_t pgid)
{
    struct proc *list;
    long n = scan_processes(&list);
    if (n < 0)
        return 1;
    int live = 0;
    for (long i = 0; i < n; i++)
        live += list[i].pgrp == pgid && is_live(&list[i]);
    free(list);
    return live;
}

/* A pid list that grows. */
struct pids {
    pid_t *at;
    size_t n, cap;
};

static void pids_add(struct pids *list, pid_t pid)
{
    if (list->n == list->cap)
        list->at = grow(list->at, (list->cap = list->cap * 2 + 16) * sizeof *list->at);
    list->at[list->n++] = pid;
}

static int pids_has(const struct pids *list, pid_t pid)
{
    for (size_t i = 0; i < list->n; i++)
        if (list->at[i] == pid)
            return 1;
    return 0;
}

/* A process's state, group and session from /proc/PID/stat; 0 if it cannot be read. */
static int read_stat(pid_t pid, struct proc *p)
{
    char path[64], stat[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, stat, sizeof stat - 1);
    close(fd);
    if (n <= 0)
        return 0;
    stat[n] = '\0';
    char *close_paren = strrchr(stat, ')');
    int ppid, pgrp, sid;
    if (!close_paren || sscanf(close_paren + 1, " %c %d %d %d", &p->state, &ppid, &pgrp, &sid) != 4)
        return 0;
    p->pid = pid;
    p->ppid = ppid;
    p->pgrp = pgrp;
    p->sid = sid;
    return 1;
}

/* The children of ``pid`` (every thread's) from /proc/PID/task/TID/children, added to ``out``. */
static void add_children(pid_t pid, struct pids *out)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *dir = opendir(path);
    if (!dir)
        return;
    struct dirent *entry;
    char *text = NULL;
    size_t cap = 0;
    while ((entry = readdir(dir))) {
        if (!isdigit((unsigned char)entry->d_name[0]))
            continue;
        char file[128];
        snprintf(file, sizeof file, "/proc/%d/task/%.20s/children", (int)pid, entry->d_name);
        int fd = open(file, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        size_t len = 0;
        for (;;) {
            if (cap - len < 256)
                text = grow(text, cap = cap * 2 + 4096);
            ssize_t got = read(fd, text + len, cap - len - 1);
            if (got <= 0)
                break;
            len += (size_t)got;
        }
        close(fd);
        text[len] = '\0';
        for (char *p = text; *p;) {
            char *after;
            long child = strtol(p, &after, 10);
            if (after == p)
                break;
            pids_add(out, (pid_t)child);
            p = after;
        }
    }
    free(text);
    closedir(dir);
}

static int children_files; /* 1: /proc/PID/task/TID/children exists (CONFIG_PROC_CHILDREN) */
static int has_children_files(void);

/* The live descendants of ``ancestor`` (pid, group, session) into ``*out`` (malloc'd); their count.
 * Walked down the kernel's lists of children where they exist (a small tree costs a few reads),
 * else from a scan of every process. */
static size_t descendants(pid_t ancestor, struct proc **out)
{
    size_t count = 0, cap = 16;
    struct proc *found = grow(NULL, cap * sizeof *found);
    if (children_files) {
        struct pids queue = {0};
        pids_add(&queue, ancestor);
        for (size_t head = 0; head < queue.n; head++) {
            struct pids kids = {0};
            add_children(queue.at[head], &kids);
            for (size_t i = 0; i < kids.n; i++) {
                if (pids_has(&queue, kids.at[i]))
                    continue;
                pids_add(&queue, kids.at[i]);
                struct proc p;
                if (read_stat(kids.at[i], &p) && is_live(&p)) {
                    if (count == cap)
                        found = grow(found, (cap *= 2) * sizeof *found);
                    found[count++] = p;
                }
            }
            free(kids.at);
        }
        free(queue.at);
        *out = found;
        return count;
    }
    struct proc *list;
    long n = scan_processes(&list);
    if (n > 0) {
        struct pids queue = {0};
        pids_add(&queue, ancestor);
        for (size_t head = 0; head < queue.n; head++)
            for (long i = 0; i < n; i++) {
                if (list[i].ppid != queue.at[head] || list[i].pid == ancestor || pids_has(&queue, list[i].pid))
                    continue;
                pids_add(&queue, list[i].pid);
                if (is_live(&list[i])) {
                    if (count == cap)
                        found = grow(found, (cap *= 2) * sizeof *found);
                    found[count++] = list[i];
                }
            }
        free(queue.at);
        free(list);
    }
    *out = found;
    return count;
}

static int has_children(void)
{
    siginfo_t info;
    return waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0;
}

static void reap_exited_children(void)
{
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
}

static int process_gone(pid_t pid)
{
    char path[64], stat[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return kill(pid, 0) != 0 && errno == ESRCH;
    ssize_t n = read(fd, stat, sizeof stat - 1);
    close(fd);
    if (n <= 0)
        return 1;
    stat[n] = '\0';
    char *close_paren = strrchr(stat, ')');
    char state = close_paren && close_paren[1] ? close_paren[2] : 'X';
    return state == 'Z' || state == 'X';
}

/* -- waiting and killing ---------------------------------------------------------- */

enum waited { REAPED, DEADLINE, INTERRUPTED };

/* Wait for our child ``pid`` until ``deadline`` (-1: none); with ``interruptible``, a signal of
 * ours ends the wait too. On REAPED, its wait status and rusage. */
static enum waited wait_child(pid_t pid, long long deadline, int interruptible, int *wstatus,
                              struct rusage *usage)
{
    for (;;) {
        pid_t reaped = wait4(pid, wstatus, WNOHANG, usage);
        if (reaped == pid)
            return REAPED;
        if (reaped < 0 && errno != EINTR) { /* reaped elsewhere (ECHILD): nothing to wait for */
            *wstatus = 0;
            memset(usage, 0, sizeof *usage);
            return REAPED;
        }
        if (interruptible && (got_int || got_term))
            return INTERRUPTED;
        if (deadline >= 0 && now_ns() >= deadline)
            return DEADLINE;
        sleep_until(deadline, interruptible);
    }
}

/* Terminate group ``pgid`` whose leader is our child ``leader``: SIGTERM, the grace period,
 * SIGKILL; reap the leader. */
static void kill_group_with_leader(pid_t pgid, pid_t leader, int *wstatus, struct rusage *usage)
{
    killpg(pgid, SIGTERM);
    if (wait_child(leader, now_ns() + grace_ns, 0, wstatus, usage) == REAPED)
        return;
    killpg(pgid, SIGKILL);
    wait_child(leader, -1, 0, wstatus, usage);
}

static void reap_group_children(pid_t pgid)
{
    while (waitpid(-pgid, NULL, WNOHANG) > 0) {
    }
}

static int wait_for_group(pid_t pgid, long long timeout_ns)
{
    long long deadline = now_ns() + timeout_ns;
    for (int step = 0;; step++) {
        reap_group_children(pgid);
        if (!group_exists(pgid) || count_live_members(pgid) == 0)
            return 1;
        if (now_ns() >= deadline)
            return 0;
        sleep_ns(backoff_ns(step));
    }
}

/* Terminate what is left of group ``pgid`` (its leader reaped): SIGTERM, grace, SIGKILL. */
static void kill_group(pid_t pgid)
{
    if (killpg(pgid, SIGTERM) != 0 && errno == ESRCH)
        return;
    if (!wait_for_group(pgid, grace_ns)) {
        killpg(pgid, SIGKILL);
        wait_for_group(pgid, grace_ns > 1000000000LL ? grace_ns : 1000000000LL);
    }
}

/* Stop every live descendant (SIGSTOP; its whole group too where ``known`` is the group or the
 * group lies in a session a descendant made), scanning again until nothing is new or the bound
 * passes; the pids and groups stopped. A stopped process cannot fork, and a signal to a group
 * reaches every member at once, forks in progress included. */
static void stop_all(pid_t known, struct pids *stopped, struct pids *groups)
{
    pid_t own_sid = getsid(0), parent_sid = getsid(getppid());
    long long deadline = now_ns() + FREEZE_BOUND_NS;
    for (;;) {
        reap_exited_children();
        struct proc *found;
        size_t n = descendants(self_pid, &found), fresh = 0;
        for (size_t i = 0; i < n; i++) {
            if (pids_has(stopped, found[i].pid))
                continue;
            kill(found[i].pid, SIGSTOP);
            pids_add(stopped, found[i].pid);
            fresh++;
            pid_t group = found[i].pgrp;
            if (group > 1 && !pids_has(groups, group) &&
                (group == known || (found[i].sid != own_sid && found[i].sid != parent_sid))) {
                killpg(group, SIGSTOP);
                pids_add(groups, group);
            }
        }
        free(found);
        if (!fresh || now_ns() >= deadline)
            return;
    }
}

/* End every descendant of ours: stop them all (stop_all), then SIGKILL and SIGCONT, reap; and again
 * while we have a live child, for END_BOUND_NS at most. How many were still alive at the end (0: all
 * ended). A walk can miss a process its parent's exit hands to us as the walk reads; whether we have
 * a live child cannot (every live descendant of a subreaper has a live ancestor among its children),
 * so that is what ends the loop. */
static int end_descendants(pid_t known)
{
    long long until = now_ns() + END_BOUND_NS;
    for (;;) {
        reap_exited_children();
        if (!has_children())
            return 0;
        struct pids stopped = {0}, groups = {0};
        stop_all(known, &stopped, &groups);
        const int signals[2] = {SIGKILL, SIGCONT};
        for (int s = 0; s < 2; s++) {
            for (size_t i = 0; i < groups.n; i++)
                killpg(groups.at[i], signals[s]);
            for (size_t i = 0; i < stopped.n; i++)
                kill(stopped.at[i], signals[s]);
        }
        long long deadline = now_ns() + END_WAIT_NS;
        for (int step = 0; stopped.n; step++) {
            reap_exited_children();
            size_t alive = 0;
            for (size_t i = 0; i < stopped.n; i++)
                if (!process_gone(stopped.at[i]))
                    stopped.at[alive++] = stopped.at[i];
            stopped.n = alive;
            if (!alive || now_ns() >= deadline)
                break;
            sleep_ns(backoff_ns(step));
        }
        free(stopped.at);
        free(groups.at);
        if (now_ns() >= until) {
            reap_exited_children();
            struct proc *found;
            size_t left = descendants(self_pid, &found);
            free(found);
            return left ? (int)left : has_children();
        }
    }
}

/* How many processes the command ``pgid`` (reaped) left alive, without a cgroup. */
static int survivors(pid_t pgid)
{
    if (!adopts_orphans)
        return group_exists(pgid) ? count_live_members(pgid) : 0;
    if (!has_children()) /* the usual case: one system call, no /proc scan */
        return 0;
    reap_exited_children();
    struct proc *found;
    size_t n = descendants(self_pid, &found);
    free(found);
    return n ? (int)n : has_children(); /* a walk can miss a process handed to us; a live child cannot */
}

/* -- cgroups: a command's own, or a cell this process shares with the command ---------------------- */

static int read_file(const char *path, char *buffer, size_t size);

static int write_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t size = strlen(text);
    ssize_t n = write(fd, text, size);
    int saved = errno;
    close(fd);
    errno = saved;
    return n == (ssize_t)size ? 0 : -1;
}

/* The processes in cgroup ``dir`` and the cgroups below it, other than this one: counted, and
 * with ``signum`` each sent that signal. */
static int cgroup_members(const char *dir, int signum)
{
    char path[4200], text[65536];
    int count = 0;
    snprintf(path, sizeof path, "%s/cgroup.procs", dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        size_t len = 0;
        ssize_t got;
        while (len < sizeof text - 1 && (got = read(fd, text + len, sizeof text - 1 - len)) > 0)
            len += (size_t)got;
        close(fd);
        text[len] = '\0';
        for (char *p = text; *p;) {
            char *after;
            long pid = strtol(p, &after, 10);
            if (after == p)
                break;
            p = after;
            if ((pid_t)pid == self_pid)
                continue;
            count++;
            if (signum)
                kill((pid_t)pid, signum);
        }
    }
    /* the cgroups below (a pairbench the command ran made them) only when cgroup.stat counts some */
    snprintf(path, sizeof path, "%s/cgroup.stat", dir);
    if (read_file(path, text, sizeof text) > 0) {
        char *descendants = strstr(text, "nr_descendants ");
        if (descendants && atol(descendants + strlen("nr_descendants ")) == 0)
            return count;
    }
    DIR *listing = opendir(dir);
    if (!listing)
        return count;
    struct dirent *entry;
    while ((entry = readdir(listing))) {
        if (entry->d_type != DT_DIR || entry->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%.255s", dir, entry->d_name);
        count += cgroup_members(path, signum);
    }
    closedir(listing);
    return count;
}

static int cgroup_has(const char *dir, const char *what)
{
    char path[4200], text[256];
    snprintf(path, sizeof path, "%s/cgroup.events", dir);
    if (read_file(path, text, sizeof text) <= 0)
        return -1;
    return strstr(text, what) != NULL;
}

/* Kill every process of cgroup ``dir`` (not this one: call it from outside): cgroup.kill, else
 * freeze, SIGKILL each member, thaw; then wait until it is empty, at most END_WAIT_NS. How many were
 * still there then (0: it is empty). */
static int cgroup_end(const char *dir)
{
    char path[4200];
    if (cgroup_has(dir, "populated 1") == 0)
        return 0;
    snprintf(path, sizeof path, "%s/cgroup.kill", dir);
    if (write_text(path, "1") != 0) {
        snprintf(path, sizeof path, "%s/cgroup.freeze", dir);
        int frozen = write_text(path, "1") == 0;
        long long until = now_ns() + END_WAIT_NS;
        while (frozen && cgroup_has(dir, "frozen 1") == 0 && now_ns() < until)
            sleep_ns(1000000LL);
        for (int i = 0; i < 3; i++)
            cgroup_members(dir, SIGKILL);
        if (frozen)
            write_text(path, "0");
    }
    long long deadline = now_ns() + END_WAIT_NS;
    for (int step = 0;; step++) {
        reap_exited_children();
        int populated = cgroup_has(dir, "populated 1");
        if (populated == 0 || (populated < 0 && cgroup_members(dir, 0) == 0))
            return 0;
        if (now_ns() >= deadline) {
            int left = cgroup_members(dir, 0);
            return left ? left : 1;
        }
        sleep_ns(backoff_ns(step));
    }
}

/* Remove cgroup ``dir`` and the (empty) cgroups below it. */
static void cgroup_remove(const char *dir)
{
    DIR *listing = opendir(dir);
    if (listing) {
        struct dirent *entry;
        char path[4200];
        while ((entry = readdir(listing))) {
            if (entry->d_type != DT_DIR || entry->d_name[0] == '.')
                continue;
            snprintf(path, sizeof path, "%s/%.255s", dir, entry->d_name);
            cgroup_remove(path);
        }
        closedir(listing);
    }
    rmdir(dir);
}

/* A new cell of --contain's for this process (it moves in) into cell_path; 0, or -1 (cell_path is
 * then left as it was). */
static int cell_enter(void)
{
    char path[4096], procs[4200];
    snprintf(path, sizeof path, "%s/pairbench-%d-%llu", contain_dir, (int)self_pid, cgroup_serial++);
    if (mkdir(path, 0755) != 0) {
        snprintf(contain_reason, sizeof contain_reason, "cannot create a cgroup in %.300s: %s", contain_dir,
                 strerror(errno));
        return -1;
    }
    snprintf(procs, sizeof procs, "%s/cgroup.pressure", path);
    write_text(procs, "0"); /* no pressure-stall accounting of its own: see measure/containment.py */
    snprintf(procs, sizeof procs, "%s/cgroup.procs", path);
    if (write_text(procs, "0") != 0) {
        snprintf(contain_reason, sizeof contain_reason, "cannot move into the cgroup %.300s: %s", path,
                 strerror(errno));
        rmdir(path);
        return -1;
    }
    memcpy(cell_path, path, sizeof cell_path);
    in_cell = 1;
    return 0;
}

/* What the command left in our cell ends with the cell: we move to a new one, and the old one is
 * killed and removed. How many were still running (0: all ended), or -1 if no new cell could be
 * had (we stay; the scan must do). */
static int renew_cell(void)
{
    char old[sizeof cell_path];
    memcpy(old, cell_path, sizeof old);
    if (cell_enter() != 0)
        return -1;
    int left = cgroup_end(old);
    cgroup_remove(old);
    return left;
}

/* Before exiting: move back to --contain's directory, then end what is still in our cell and remove
 * it. Our parent removes the cell of a spawner that has exited, but a parent killed with SIGKILL
 * cannot, and the cell would outlive us. If the move is refused (the directory may hold no
 * processes), what is left is ended by a new cell as after a command, and the parent removes ours. */
static void leave_cell(void)
{
    char procs[4200], old[sizeof cell_path];
    if (!in_cell || !cell_path[0])
        return;
    snprintf(procs, sizeof procs, "%s/cgroup.procs", contain_dir);
    if (write_text(procs, "0") != 0) {
        if (cgroup_members(cell_path, 0))
            renew_cell();
        return;
    }
    memcpy(old, cell_path, sizeof old);
    cell_path[0] = '\0';
    in_cell = 0;
    cgroup_end(old);
    cgroup_remove(old);
}

/* End what the command ``pgid`` (reaped) left: its cgroup ``own`` (or our cell), then any other
 * descendant. Sets how many there were and how many still ran at the end. */
static void end_leftovers(pid_t pgid, const char *own, int *leftovers, int *escaped)
{
    *leftovers = *escaped = 0;
    if (adopts_orphans && !has_children()) /* the usual case: nothing left (a subreaper would have a child) */
        return;
    reap_exited_children();
    if (own || cell_path[0]) {
        *leftovers = cgroup_members(own ? own : cell_path, 0);
        if (*leftovers) {
            int left = own ? cgroup_end(own) : renew_cell();
            if (left >= 0) {
                *escaped = left;
                if (adopts_orphans && has_children())
                    *escaped += end_descendants(pgid);
                return;
            }
        }
        if (!*leftovers && !(adopts_orphans && has_children()))
            return;
    }
    if (!*leftovers)
        *leftovers = survivors(pgid);
    if (!*leftovers)
        return;
    kill_group(pgid);
    *escaped = adopts_orphans ? end_descendants(pgid) : (group_exists(pgid) ? count_live_members(pgid) : 0);
}

/* After an interruption: kill and reap the command's group, then whatever else it left. */
static void kill_after_interrupt(pid_t pid, const char *own, int *wstatus, struct rusage *usage)
{
    int leftovers, escaped;
    kill_group_with_leader(pid, pid, wstatus, usage);
    end_leftovers(pid, own, &leftovers, &escaped);
}

/* -- peak memory: wait4's ru_maxrss, or a cgroup's memory.peak ------------------------ */

static long long rss_now_kib(void)
{
    char buffer[128];
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buffer, sizeof buffer - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buffer[n] = '\0';
    long long size, resident;
    if (sscanf(buffer, "%lld %lld", &size, &resident) != 2)
        return 0;
    return resident * sysconf(_SC_PAGESIZE) / 1024;
}

/* The smallest max RSS a command can be reported with: our own size (0 with the cgroup, whose
 * peak holds none of ours). */
static long long floor_kib(void)
{
    return cgroup_dir ? 0 : rss_now_kib();
}

/* Lower our peak RSS to our current RSS, so no transient peak of ours is charged to a command. */
static void reset_peak_rss(void)
{
    if (clear_refs_fd >= 0 && write(clear_refs_fd, "5", 1) != 1) {
        close(clear_refs_fd);
        clear_refs_fd = -1;
    }
}

static int read_file(const char *path, char *buffer, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buffer, size - 1);
    close(fd);
    if (n < 0)
        return -1;
    buffer[n] = '\0';
    return (int)n;
}

static void sample_cgroup_path(char *out, size_t size, unsigned long long serial)
{
    snprintf(out, size, "%s/pairbench-%d-%llu", cgroup_dir, (int)self_pid, serial);
}

/* In a new child, vfork's (sharing our memory and stack until it execs) or clone3's: its own
 * process group, the default disposition of every signal we handle or ignore, no signal blocked,
 * then the program; if that fails, its errno in *exec_errno and exit 127. Never returns. Only
 * system calls here: signals we handle are blocked in the parent, so none can run a handler in
 * the child before they are reset. */
__attribute__((noreturn)) static void exec_child(char *const argv[])
{
    static const int reset[] = {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE, SIGXFSZ};
    setpgid(0, 0);
    for (size_t i = 0; i < sizeof reset / sizeof *reset; i++)
        sigaction(reset[i], &default_action, NULL);
    sigprocmask(SIG_SETMASK, &waiting_mask, NULL); /* the empty set */
    execve(argv[0], argv, environ);
    *exec_errno = errno ? errno : ENOEXEC;
    _exit(127);
}

/* Start ``argv`` in a new process group (vfork: no page tables copied; we wait until it execs);
 * its pid, or -1 with the errno of the vfork or of the exec (the child is then reaped). */
static pid_t spawn(char *const argv[])
{
    *exec_errno = 0;
    pid_t pid = vfork();
    if (pid == 0)
        exec_child(argv);
    if (pid > 0 && *exec_errno) {
        int failed = *exec_errno, wstatus;
        struct rusage usage;
        wait_child(pid, -1, 0, &wstatus, &usage);
        errno = failed;
        return -1;
    }
    return pid;
}

#ifdef SYS_clone3
/* Start ``argv`` in a fresh child of the cgroup ``cgroup_fd`` (clone3 with CLONE_INTO_CGROUP, so it
 * never runs outside it; without ``argv`` the child exits at once); its pid, or -1 with errno. */
static pid_t spawn_into_cgroup(char *const argv[], int cgroup_fd)
{
    struct clone_args args;
    memset(&args, 0, sizeof args);
    args.flags = CLONE_INTO_CGROUP;
    args.exit_signal = SIGCHLD;
    args.cgroup = (uint64_t)cgroup_fd;
    *exec_errno = 0;
    long pid = syscall(SYS_clone3, &args, sizeof args);
    if (pid > 0)
        setpgid((pid_t)pid, (pid_t)pid); /* as the child does: no kill may miss its group */
    if (pid != 0)
        return (pid_t)pid; /* parent (or -1) */
    if (!argv)
        _exit(0);
    exec_child(argv);
}
#endif

/* Check that --cgroup can be used: a fresh child cgroup has memory.peak, and a process starts in
 * it. Else say why in memory_reason and use rusage. */
static void probe_cgroup(void)
{
    char path[4096], text[256];
#ifndef SYS_clone3
    snprintf(memory_reason, sizeof memory_reason, "this spawner was built without clone3");
    cgroup_dir = NULL;
    return;
#else
    sample_cgroup_path(path, sizeof path, cgroup_serial++);
    if (mkdir(path, 0755) != 0) {
        snprintf(memory_reason, sizeof memory_reason, "cannot create a cgroup in %.300s: %s", cgroup_dir,
                 strerror(errno));
        cgroup_dir = NULL;
        return;
    }
    char peak[4200];
    snprintf(peak, sizeof peak, "%s/memory.peak", path);
    int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    pid_t pid = fd < 0 ? -1 : spawn_into_cgroup(NULL, fd); /* a child that exits at once */
    if (fd < 0) {
        snprintf(memory_reason, sizeof memory_reason, "cannot open %.300s: %s", path, strerror(errno));
    } else if (pid < 0) {
        snprintf(memory_reason, sizeof memory_reason, "cannot start a process in the cgroup %.300s "
                 "(clone3 with CLONE_INTO_CGROUP): %s", path, strerror(errno));
    } else {
        int wstatus;
        struct rusage usage;
        wait_child(pid, -1, 0, &wstatus, &usage);
        if (read_file(peak, text, sizeof text) <= 0 && !TESTING_WITHOUT_PEAK)
            snprintf(memory_reason, sizeof memory_reason,
                     "%.300s has no memory.peak (the memory controller is not enabled for its children, "
                     "or the kernel is older than 5.19)", path);
        else
            memory_reason[0] = '\0';
    }
    if (fd >= 0)
        close(fd);
    rmdir(path);
    if (memory_reason[0])
        cgroup_dir = NULL;
#endif
}

/* -- running one command ---------------------------------------------------------- */

/* Run ``argv`` once with ``timeout_ns`` (-1: none) and answer request ``id``. */
static void run_command(long long id, char *const argv[], long long timeout_ns)
{
    struct sample s = {0};
    int wstatus = 0, cgroup_fd = -1;
    char cgroup_path[4096];
    pid_t pid;
    if (cgroup_dir) {
        sample_cgroup_path(cgroup_path, sizeof cgroup_path, cgroup_serial++);
        if (mkdir(cgroup_path, 0755) != 0 ||
            (cgroup_fd = open(cgroup_path, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
            char why[MESSAGE_MAX];
            snprintf(why, sizeof why, "cannot create the command's cgroup %.300s: %s", cgroup_path,
                     strerror(errno));
            rmdir(cgroup_path);
            reply_error(id, "MeasurementError", why);
            return;
        }
    } else {
        reset_peak_rss();
    }
    s.start_ns = now_ns();
#ifdef SYS_clone3
    if (cgroup_fd >= 0)
        pid = spawn_into_cgroup(argv, cgroup_fd);
    else
#endif
        pid = spawn(argv);
    if (pid < 0) {
        int failed = errno;
        if (cgroup_fd >= 0) {
            close(cgroup_fd);
            rmdir(cgroup_path);
        }
        reply_number(id, "noexec", failed);
        return;
    }
    long long deadline = timeout_ns >= 0 ? s.start_ns + timeout_ns : -1;
    enum waited how = wait_child(pid, deadline, 1, &wstatus, &s.usage);
    long long end = now_ns();
    if (how == REAPED) {
        s.status = exit_code(wstatus);
    } else if (how == DEADLINE) {
        kill_group_with_leader(pid, pid, &wstatus, &s.usage);
        s.status = STATUS_TIMEOUT;
    } else {
        kill_after_interrupt(pid, cgroup_fd >= 0 ? cgroup_path : NULL, &wstatus, &s.usage);
    }
    s.wall_ns = end - s.start_ns;
    s.have_usage = 1;
    s.max_rss_kib = s.usage.ru_maxrss;
    if (how != INTERRUPTED)
        end_leftovers(pid, cgroup_fd >= 0 ? cgroup_path : NULL, &s.leftovers, &s.escaped);
    if (cgroup_fd >= 0) {
        close(cgroup_fd);
        char peak_path[4200], text[64];
        snprintf(peak_path, sizeof peak_path, "%s/memory.peak", cgroup_path);
        int exec_failed = *exec_errno, unread = 0;
        if (read_file(peak_path, text, sizeof text) > 0)
            s.max_rss_kib = atoll(text) / 1024;
        else
            unread = TESTING_WITHOUT_PEAK ? 0 : (errno ? errno : EIO);
        rmdir(cgroup_path);
        if (exec_failed && how == REAPED) {
            reply_number(id, "noexec", exec_failed);
            return;
        }
        if (unread) {
            char why[MESSAGE_MAX];
            snprintf(why, sizeof why, "cannot read %.300s: %s", peak_path, strerror(unread));
            reply_error(id, "MeasurementError", why);
            return;
        }
    }
    deliver_pending();
    if (how == INTERRUPTED || got_int || got_term) { /* a signal during the run or its clean-up */
        got_int = 0;
        reply_kind(id, "int");
        return;
    }
    reply_sample(id, &s);
}

/* -- requests: one JSON list per line ----------------------------------------------- */

struct cursor {
    const char *p, *end;
    int bad;
};

static void skip_space(struct cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r' || *c->p == '\n'))
        c->p++;
}

static int take(struct cursor *c, char ch)
{
    skip_space(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

static int take_word(struct cursor *c, const char *word)
{
    skip_space(c);
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) >= n && memcmp(c->p, word, n) == 0) {
        c->p += n;
        return 1;
    }
    return 0;
}

static int hex4(const char *p, unsigned *value)
{
    *value = 0;
    for (int i = 0; i < 4; i++) {
        int ch = (unsigned char)p[i], digit;
        if (ch >= '0' && ch <= '9')
            digit = ch - '0';
        else if (ch >= 'a' && ch <= 'f')
            digit = ch - 'a' + 10;
        else if (ch >= 'A' && ch <= 'F')
            digit = ch - 'A' + 10;
        else
            return 0;
        *value = *value * 16 + (unsigned)digit;
    }
    return 1;
}

/* A JSON string; with ``out``, its characters as bytes (each must be below 256: the wire's
 * latin-1 encoding of OS bytes), NUL-terminated, and their count in ``*size``. */
static int take_string(struct cursor *c, char *out, size_t *size)
{
    skip_space(c);
    if (c->p >= c->end || *c->p != '"')
        return 0;
    c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != '"') {
        unsigned value = (unsigned char)*c->p++;
        if (value == '\\') {
            if (c->p >= c->end)
                return 0;
            char esc = *c->p++;
            switch (esc) {
            case '"': case '\\': case '/': value = (unsigned char)esc; break;
            case 'b': value = '\b'; break;
            case 'f': value = '\f'; break;
            case 'n': value = '\n'; break;
            case 'r': value = '\r'; break;
            case 't': value = '\t'; break;
            case 'u':
                if (c->end - c->p < 4 || !hex4(c->p, &value))
                    return 0;
                c->p += 4;
                break;
            default:
                return 0;
            }
        } else if (value >= 0x80 && out) {
            return 0; /* json.dumps escapes every non-ASCII character */
        }
        if (out) {
            if (value > 0xff || value == 0)
                return 0;
            out[n] = (char)value;
        }
        n++;
    }
    if (c->p >= c->end)
        return 0;
    c->p++;
    if (out)
        out[n] = '\0';
    if (size)
        *size = n;
    return 1;
}

static int take_integer(struct cursor *c, long long *value)
{
    skip_space(c);
    char *after;
    errno = 0;
    long long parsed = strtoll(c->p, &after, 10);
    if (after == c->p || errno)
        return 0;
    c->p = after;
    *value = parsed;
    return 1;
}

/* ``b'[12,"run",...]'`` -> 12 and the text after the comma; -1 if the line has no id. */
static long long split_id(const char *line, size_t size, const char **tail)
{
    *tail = line;
    if (size < 3 || line[0] != '[')
        return -1;
    long long id = 0;
    size_t i = 1;
    for (; i < size && i < 19 && isdigit((unsigned char)line[i]); i++)
        id = id * 10 + (line[i] - '0');
    if (i == 1 || i >= size || line[i] != ',')
        return -1;
    *tail = line + i + 1;
    return id;
}

static char **run_argv;
static char *run_bytes;

/* Answer one request line (without its newline, NUL-terminated). */
static void answer(char *line, size_t size)
{
    const char *tail;
    long long id = split_id(line, size, &tail);
    struct cursor c = {tail, line + size, 0};
    if (id < 0)
        c.p = line + size; /* no id: a torn or foreign line */
    if (take_word(&c, "\"sync\"") && take(&c, ']')) {
        deliver_pending();
        cancelled = 0;
        got_int = 0;
        reply_kind(id, "sync");
        return;
    }
    c.p = tail;
    if (id >= 0 && take_word(&c, "\"floor\"") && take(&c, ']')) {
        reply_number(id, "floor", floor_kib());
        return;
    }
    c.p = tail;
    long long timeout_ns = -1;
    if (id < 0 || !take_word(&c, "\"run\"") || !take(&c, ',')) {
        reply_failure(id, "unknown or malformed request");
        return;
    }
    if (!take_word(&c, "null") && !(take_integer(&c, &timeout_ns) && timeout_ns > 0)) {
        reply_failure(id, "a run request's timeout must be null or a positive integer");
        return;
    }
    if (!take(&c, ',') || !(take_word(&c, "true") || take_word(&c, "false")) || !take(&c, ',') ||
        !take_string(&c, NULL, NULL)) {
        reply_failure(id, "malformed run request");
        return;
    }
    size_t argc = 0, used = 0;
    run_bytes = grow(run_bytes, size + 1);
    while (take(&c, ',')) {
        size_t n;
        if (!take_string(&c, run_bytes + used, &n)) {
            reply_failure(id, "a run request's arguments must be strings of bytes without NUL");
            return;
        }
        run_argv = grow(run_argv, (argc + 2) * sizeof *run_argv);
        run_argv[argc++] = run_bytes + used;
        used += n + 1;
    }
    if (!take(&c, ']') || argc == 0) {
        reply_failure(id, "malformed run request");
        return;
    }
    run_argv[argc] = NULL;
    deliver_pending();
    if (got_term) { /* SIGTERM or SIGHUP while idle: exit without running */
        reply_kind(id, "int");
        exit_spawner(0);
    }
    if (cancelled || got_int) {
        cancelled = 0;
        got_int = 0;
        reply_kind(id, "int");
        return;
    }
    run_command(id, run_argv, timeout_ns);
    if (size > 4 * CHUNK) { /* a huge request: give its memory back */
        free(run_bytes);
        run_bytes = NULL;
    }
}

/* The next request line (NUL-terminated, without its newline) and its length; NULL at end of
 * file. While idle, SIGINT marks the next run cancelled and SIGTERM or SIGHUP exit. */
static char *next_line(size_t *size, size_t *consumed)
{
    if (*consumed) {
        memmove(in_buf, in_buf + *consumed, in_len - *consumed);
        in_len -= *consumed;
        *consumed = 0;
        if (in_cap > 4 * CHUNK && in_len < CHUNK) /* after a huge request: give the memory back */
            in_buf = grow(in_buf, in_cap = CHUNK);
    }
    for (;;) {
        char *newline = memchr(in_buf, '\n', in_len);
        if (newline) {
            *newline = '\0';
            *size = (size_t)(newline - in_buf);
            *consumed = *size + 1;
            return in_buf;
        }
        if (in_cap - in_len < CHUNK)
            in_buf = grow(in_buf, in_cap = in_cap * 2 + CHUNK);
        struct pollfd readable = {.fd = request_fd, .events = POLLIN};
        int n = ppoll(&readable, 1, NULL, &waiting_mask);
        if (got_term)
            return NULL;
        if (got_int) {
            got_int = 0;
            cancelled = 1;
        }
        if (n <= 0)
            continue;
        ssize_t got = read(request_fd, in_buf + in_len, in_cap - in_len);
        if (got == 0)
            return NULL;
        if (got < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            return NULL;
        }
        in_len += (size_t)got;
    }
}

/* -- set-up ------------------------------------------------------------------------- */

/* Mark every descriptor beyond 0-2 close-on-exec: the pipes, and whatever we inherited. */
static void close_on_exec_beyond_stdio(void)
{
    DIR *dir = opendir("/proc/self/fd");
    if (!dir)
        dir = opendir("/dev/fd");
    if (dir) {
        struct dirent *entry;
        while ((entry = readdir(dir))) {
            int fd = atoi(entry->d_name);
            if (fd > 2 && isdigit((unsigned char)entry->d_name[0]))
                fcntl(fd, F_SETFD, FD_CLOEXEC);
        }
        closedir(dir);
        return;
    }
    long max = sysconf(_SC_OPEN_MAX);
    for (long fd = 3; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
        fcntl((int)fd, F_SETFD, FD_CLOEXEC);
}

static void install_signals(void)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal; /* no SA_RESTART: a signal ends the wait it lands in */
    sigemptyset(&action.sa_mask);
    sigemptyset(&blocked_mask);
    const int ours[] = {SIGINT, SIGTERM, SIGHUP, SIGCHLD};
    for (size_t i = 0; i < sizeof ours / sizeof *ours; i++) {
        sigaddset(&blocked_mask, ours[i]);
        sigaction(ours[i], &action, NULL);
    }
    signal(SIGPIPE, SIG_IGN); /* a dead parent is an EPIPE on the reply pipe, then exit */
    sigprocmask(SIG_SETMASK, &blocked_mask, NULL);
    sigemptyset(&waiting_mask);
}

/* -- keeping one program: --keep ------------------------------------------------------ */

/* In the program's child, after fork: the parent-death signal (SIGKILL when this keeper dies,
 * however it dies, unless it has already died), a process group of its own, the default disposition
 * of the signals we handle or ignore, nothing blocked, then the program, looked up on the PATH.
 * Never returns. */
__attribute__((noreturn)) static void keep_child(char *const argv[])
{
    static const int reset[] = {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE, SIGXFSZ};
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
#endif
    if (getppid() != self_pid)
        _exit(127);
    if (cell_path[0]) { /* refused: the keeper's scan contains it instead */
        char procs[4200];
        snprintf(procs, sizeof procs, "%s/cgroup.procs", cell_path);
        write_text(procs, "0");
    }
    setpgid(0, 0);
    for (size_t i = 0; i < sizeof reset / sizeof *reset; i++)
        sigaction(reset[i], &default_action, NULL);
    sigprocmask(SIG_SETMASK, &waiting_mask, NULL); /* the empty set */
    execvp(argv[0], argv);
    char message[MESSAGE_MAX];
    int n = snprintf(message, sizeof message, "pairbench: cannot run %.300s: %s\n", argv[0], strerror(errno));
    if (n > 0)
        write_all(2, message, (size_t)n < sizeof message ? (size_t)n : sizeof message - 1);
    _exit(127);
}

/* Point standard input, output and error at /dev/null and close everything else: the keeper holds
 * none of the program's pipes or files, so their ends are the program's alone. */
static void let_go_of_descriptors(void)
{
    int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int fd = 0; fd < 3 && null_fd >= 0; fd++)
        dup2(null_fd, fd);
    close_on_exec_beyond_stdio();
    DIR *dir = opendir("/proc/self/fd");
    if (!dir)
        return; /* close-on-exec must do: nothing here execs */
    int own = dirfd(dir);
    struct dirent *entry;
    while ((entry = readdir(dir))) {
        int fd = atoi(entry->d_name);
        if (fd > 2 && fd != own && isdigit((unsigned char)entry->d_name[0]))
            close(fd);
    }
    closedir(dir);
}

/* End as the program ended: its exit code, or its signal (without a core dump of ours). */
__attribute__((noreturn)) static void end_like(int wstatus)
{
    if (WIFSIGNALED(wstatus)) {
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_CORE, &none);
        int signum = WTERMSIG(wstatus);
        sigaction(signum, &default_action, NULL);
        sigset_t only;
        sigemptyset(&only);
        sigaddset(&only, signum);
        sigprocmask(SIG_UNBLOCK, &only, NULL);
        raise(signum);
    }
    _exit(WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 1);
}

/* pairbench-spawner --keep PARENT_PID [--grace-ns N] [--contain DIR] -- PROGRAM ARG...: run PROGRAM
 * as our child and keep it, and everything it starts, tied to pairbench's life. With --contain the
 * program starts in a cgroup of its own below DIR (a cell), and this process is a child subreaper (a
 * daemon that leaves the program's process group with setsid stays our descendant); it dies with
 * pairbench (PR_SET_PDEATHSIG), and gives the program a parent-death signal of its own. When the
 * program exits, what it left running is ended (the cell killed, then any other descendant stopped
 * and killed) and we exit as it did; on SIGTERM, SIGHUP or SIGINT (pairbench stopping it, or dying)
 * the program's group gets SIGTERM and the grace period first. pairbench starts this process in a session of its own,
 * and signals only this process; the program leads a process group of its own. */
static int keep(pid_t parent, char *const argv[])
{
    self_pid = getpid();
    install_signals();
    default_action.sa_handler = SIG_DFL;
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
#endif
    if (getppid() != parent)
        return 1; /* pairbench died before we were watching it: run nothing */
    children_files = has_children_files();
    if (contain_dir) { /* the program's cell; none: the scan contains it */
        snprintf(cell_path, sizeof cell_path, "%s/pairbench-%d-1", contain_dir, (int)self_pid);
        char pressure[4200];
        snprintf(pressure, sizeof pressure, "%s/cgroup.pressure", cell_path);
        if (mkdir(cell_path, 0755) != 0)
            cell_path[0] = '\0';
        else
            write_text(pressure, "0");
    }
    pid_t pid = fork();
    if (pid < 0)
        return 127;
    if (pid == 0)
        keep_child(argv);
    setpgid(pid, pid); /* as the child does: no kill may miss its group */
    let_go_of_descriptors();
    int wstatus = 0;
    struct rusage usage;
    if (wait_child(pid, -1, 1, &wstatus, &usage) == INTERRUPTED)
        kill_group_with_leader(pid, pid, &wstatus, &usage);
    if (cell_path[0]) {
        cgroup_end(cell_path);
        cgroup_remove(cell_path);
    }
    if (has_children()) /* the usual case: none, and no /proc scan (orphans become our children) */
        end_descendants(pid); /* what the program left running, in its group or out of it */
    end_like(wstatus);
}

/* Whether /proc/PID/task/TID/children exists (CONFIG_PROC_CHILDREN): descendants are then found by
 * walking down, not by a scan of every process. */
static int has_children_files(void)
{
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)self_pid, (int)self_pid);
    return access(path, R_OK) == 0;
}

static int usage(void)
{
    static const char text[] =
        "usage: pairbench-spawner [--grace-ns N] [--lifeline] [--cgroup DIR] [--contain DIR] REQUEST_FD "
        "REPLY_FD PARENT_PID\n       pairbench-spawner --keep PARENT_PID [--grace-ns N] [--contain DIR] -- "
        "PROGRAM [ARG...]\n"
        "(started by pairbench, not by hand)\n";
    write_all(2, text, sizeof text - 1);
    return 2;
}

int main(int argc, char **argv)
{
    int i = 1;
    if (argc > 1 && strcmp(argv[1], "--keep") == 0) {
        if (argc < 5)
            return usage();
        pid_t parent = (pid_t)atol(argv[2]);
        i = 3;
        if (i < argc && strcmp(argv[i], "--grace-ns") == 0 && i + 1 < argc) {
            grace_ns = atoll(argv[i + 1]);
            i += 2;
        }
        if (i < argc && strcmp(argv[i], "--contain") == 0 && i + 1 < argc) {
            contain_dir = argv[i + 1];
            i += 2;
        }
        if (i >= argc || strcmp(argv[i], "--") != 0 || i + 1 >= argc || grace_ns < 0 || parent <= 0)
            return usage();
        return keep(parent, argv + i + 1);
    }
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--grace-ns") == 0 && i + 1 < argc)
            grace_ns = atoll(argv[++i]);
        else if (strcmp(argv[i], "--lifeline") == 0)
            lifeline = 1;
        else if (strcmp(argv[i], "--cgroup") == 0 && i + 1 < argc)
            cgroup_dir = argv[++i];
        else if (strcmp(argv[i], "--contain") == 0 && i + 1 < argc)
            contain_dir = argv[++i];
        else
            return usage();
    }
    if (argc - i != 3 || grace_ns < 0)
        return usage();
    request_fd = atoi(argv[i]);
    reply_fd = atoi(argv[i + 1]);
    pid_t parent = (pid_t)atol(argv[i + 2]);
    self_pid = getpid();
    install_signals();
    close_on_exec_beyond_stdio();
    setpgid(0, 0); /* out of pairbench's group: the terminal's Ctrl-C is pairbench's */
#ifdef __linux__
    if (!lifeline && prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) != 0)
        lifeline = 1;
    adopts_orphans = prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
#else
    lifeline = 1;
#endif
    if (getppid() != parent)
        return 0; /* the parent died before we were watching it */
    clear_refs_fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    default_action.sa_handler = SIG_DFL;
    exec_errno = mmap(NULL, sizeof *exec_errno, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (exec_errno == MAP_FAILED)
        return 71;
    if (cgroup_dir)
        probe_cgroup();
    children_files = has_children_files();
    if (!cgroup_dir && contain_dir) /* commands share our cell; with --cgroup, each has its own */
        cell_enter();
    in_buf = grow(NULL, in_cap = CHUNK);
    char ready[MESSAGE_MAX * 4];
    size_t at = (size_t)snprintf(ready, sizeof ready, "[0,\"ready\",%lld,\"%s\",", floor_kib(),
                                 cgroup_dir ? "cgroup" : "rusage");
    at = json_quote(ready, at, sizeof ready - MESSAGE_MAX * 2, memory_reason);
    at += (size_t)snprintf(ready + at, sizeof ready - at, ",\"%s\",",
                           cgroup_dir || cell_path[0] ? "cgroup" : adopts_orphans ? "scan" : "group");
    at = json_quote(ready, at, sizeof ready - 4, cgroup_dir || cell_path[0] ? "" : contain_reason);
    ready[at++] = ']';
    ready[at++] = '\n';
    write_all(reply_fd, ready, at);
    size_t size, consumed = 0;
    char *line;
    while (!got_term && (line = next_line(&size, &consumed)))
        answer(line, size);
    /* Our parent closed the requests and waits for us: alone in our cell, we exit in it and the parent
     * removes it (end_cells_of). Moving out is a cgroup migration, 10-15 ms the parent would wait for;
     * a parent killed before it removed the cell leaves it to the next run's sweep. */
    if (!got_term && getppid() == parent && cgroup_members(cell_path, 0) == 0)
        return 0;
    leave_cell();
    return 0;
}
