/* The recorder behind trace_syscalls.h: __wrap_NAME for each wrapped call. */
#define _GNU_SOURCE
#include "trace_syscalls.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <sys/uio.h>
#include <unistd.h>

/* The real calls, which the linker's --wrap names __real_NAME. */
int __real_open(const char *path, int flags, ...);
ssize_t __real_write(int fd, const void *buf, size_t len);
ssize_t __real_pwrite(int fd, const void *buf, size_t len, off_t at);
ssize_t __real_writev(int fd, const struct iovec *pieces, int count);
int __real_fsync(int fd);
int __real_fdatasync(int fd);
int __real_close(int fd);
int __real_rename(const char *from, const char *to);
int __real_unlink(const char *path);
int __real_msync(void *addr, size_t len, int flags);
int __real_munmap(void *addr, size_t len);
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t at);
int __real_clock_gettime(clockid_t clock, struct timespec *ts);

int __wrap_open(const char *path, int flags, ...);
ssize_t __wrap_write(int fd, const void *buf, size_t len);
ssize_t __wrap_pwrite(int fd, const void *buf, size_t len, off_t at);
ssize_t __wrap_writev(int fd, const struct iovec *pieces, int count);
int __wrap_fsync(int fd);
int __wrap_fdatasync(int fd);
int __wrap_close(int fd);
int __wrap_rename(const char *from, const char *to);
int __wrap_unlink(const char *path);
int __wrap_msync(void *addr, size_t len, int flags);
int __wrap_munmap(void *addr, size_t len);
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t at);
int __wrap_clock_gettime(clockid_t clock, struct timespec *ts);

static const char *const op_names[TRACE_NOPS] = {"open",   "write",  "fsync", "close",
                                                 "rename", "unlink", "msync", "munmap"};

static struct {
    int on;
    trace_event *events;
    size_t count, cap;
    unsigned calls[TRACE_NOPS]; /* calls of each op since trace_start */
    trace_op fail_op, exit_op;
    unsigned fail_nth, exit_nth; /* 0: none */
    int fail_err;
    int log_fd; /* SIMDBLOOM_TRACE's file, or -1 */
    long clock_step, clock_offset;
    char *fd_paths[1024]; /* what each descriptor opened through open() names */
    struct {
        void *addr;
        char *path;
    } maps[64]; /* file mappings and their files */
} trace = {.log_fd = -1};

const char *trace_op_name(trace_op op)
{
    return op < TRACE_NOPS ? op_names[op] : "?";
}

void trace_start(void)
{
    trace.count = 0;
    memset(trace.calls, 0, sizeof trace.calls);
    trace.on = 1;
}

void trace_stop(void)
{
    trace.on = 0;
}

size_t trace_count(void)
{
    return trace.count;
}

const trace_event *trace_at(size_t i)
{
    return i < trace.count ? &trace.events[i] : NULL;
}

void trace_fail(trace_op op, unsigned nth, int err)
{
    trace.fail_op = op;
    trace.fail_nth = nth;
    trace.fail_err = err;
}

void trace_dump(void)
{
    for (size_t i = 0; i < trace.count; i++) {
        const trace_event *e = &trace.events[i];
        fprintf(stderr, "    %zu: %s %s%s%s%s\n", i, op_names[e->op], e->path,
                e->to[0] ? " -> " : "", e->to, e->failed ? " (failed)" : "");
    }
}

static const char *fd_path(int fd, char *buf, size_t cap)
{
    if (fd >= 0 && fd < 1024 && trace.fd_paths[fd])
        return trace.fd_paths[fd];
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, buf, cap - 1);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

static const char *map_path(const void *addr)
{
    for (size_t i = 0; i < sizeof trace.maps / sizeof *trace.maps; i++)
        if (trace.maps[i].addr == addr && trace.maps[i].path)
            return trace.maps[i].path;
    return "";
}

/* Called before each traced call: 1 if it is to fail (errno then set). */
static int inject(trace_op op)
{
    if (!trace.on)
        return 0;
    unsigned nth = ++trace.calls[op];
    if (trace.fail_nth && op == trace.fail_op && nth == trace.fail_nth) {
        errno = trace.fail_err;
        return 1;
    }
    return 0;
}

/* Records a call after it returned; a crash is staged here, after the call took effect. */
static void record(trace_op op, int fd, const char *path, const char *to, int created, int failed)
{
    if (!trace.on)
        return;
    int saved = errno;
    if (trace.count == trace.cap) {
        size_t cap = trace.cap ? trace.cap * 2 : 256;
        trace_event *grown = realloc(trace.events, cap * sizeof *grown);
        if (!grown)
            abort(); /* a test helper: nothing sensible to do */
        trace.events = grown;
        trace.cap = cap;
    }
    trace_event *e = &trace.events[trace.count++];
    memset(e, 0, sizeof *e);
    e->op = op;
    e->fd = fd;
    e->created = created;
    e->failed = failed;
    snprintf(e->path, sizeof e->path, "%s", path ? path : "");
    snprintf(e->to, sizeof e->to, "%s", to ? to : "");
    if (trace.log_fd >= 0) {
        char line[1200];
        int len = snprintf(line, sizeof line, "%s %s%s%s%s\n", op_names[op], e->path, to ? " " : "",
                           to ? to : "", failed ? " FAILED" : "");
        if (len > 0)
            (void)!__real_write(trace.log_fd, line,
                                (size_t)len < sizeof line ? (size_t)len : sizeof line - 1);
    }
    if (trace.exit_nth && op == trace.exit_op && trace.calls[op] == trace.exit_nth && !failed)
        _exit(99);
    errno = saved;
}

int __wrap_open(const char *path, int flags, ...)
{
    mode_t mode = 0;
    if (flags & O_CREAT) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    if (inject(TRACE_OPEN)) {
        record(TRACE_OPEN, -1, path, NULL, !!(flags & O_CREAT), 1);
        return -1;
    }
    int fd = __real_open(path, flags, mode);
    if (fd >= 0 && fd < 1024) {
        free(trace.fd_paths[fd]);
        trace.fd_paths[fd] = strdup(path);
    }
    record(TRACE_OPEN, fd, path, NULL, !!(flags & O_CREAT), fd < 0);
    return fd;
}

/* The three writes' shared steps: a failure injected before the call (1: return -1), and the
 * call's outcome recorded after it. */
static int write_injected(int fd)
{
    char name[512];
    if (!inject(TRACE_WRITE))
        return 0;
    record(TRACE_WRITE, fd, fd_path(fd, name, sizeof name), NULL, 0, 1);
    return 1;
}

static ssize_t write_recorded(int fd, ssize_t n)
{
    char name[512];
    if (trace.on)
        record(TRACE_WRITE, fd, fd_path(fd, name, sizeof name), NULL, 0, n < 0);
    return n;
}

ssize_t __wrap_write(int fd, const void *buf, size_t len)
{
    return write_injected(fd) ? -1 : write_recorded(fd, __real_write(fd, buf, len));
}

ssize_t __wrap_pwrite(int fd, const void *buf, size_t len, off_t at)
{
    return write_injected(fd) ? -1 : write_recorded(fd, __real_pwrite(fd, buf, len, at));
}

/* The command's output goes out in pieces (src/cli/output.c): a writev is a write here. */
ssize_t __wrap_writev(int fd, const struct iovec *pieces, int count)
{
    return write_injected(fd) ? -1 : write_recorded(fd, __real_writev(fd, pieces, count));
}

static int traced_sync(int fd, int (*real)(int))
{
    char name[512];
    if (inject(TRACE_FSYNC)) {
        record(TRACE_FSYNC, fd, fd_path(fd, name, sizeof name), NULL, 0, 1);
        return -1;
    }
    int rc = real(fd);
    if (trace.on)
        record(TRACE_FSYNC, fd, fd_path(fd, name, sizeof name), NULL, 0, rc < 0);
    return rc;
}

int __wrap_fsync(int fd)
{
    return traced_sync(fd, __real_fsync);
}

int __wrap_fdatasync(int fd)
{
    return traced_sync(fd, __real_fdatasync);
}

int __wrap_close(int fd)
{
    char name[512];
    const char *path = trace.on ? fd_path(fd, name, sizeof name) : "";
    char kept[512];
    snprintf(kept, sizeof kept, "%s", path);
    if (fd >= 0 && fd < 1024) {
        free(trace.fd_paths[fd]);
        trace.fd_paths[fd] = NULL;
    }
    if (inject(TRACE_CLOSE)) { /* as Linux does: the descriptor is gone, the error reported */
        __real_close(fd);
        errno = trace.fail_err;
        record(TRACE_CLOSE, fd, kept, NULL, 0, 1);
        return -1;
    }
    int rc = __real_close(fd);
    record(TRACE_CLOSE, fd, kept, NULL, 0, rc < 0);
    return rc;
}

int __wrap_rename(const char *from, const char *to)
{
    if (inject(TRACE_RENAME)) {
        record(TRACE_RENAME, -1, from, to, 0, 1);
        return -1;
    }
    int rc = __real_rename(from, to);
    record(TRACE_RENAME, -1, from, to, 0, rc < 0);
    return rc;
}

int __wrap_unlink(const char *path)
{
    if (inject(TRACE_UNLINK)) {
        record(TRACE_UNLINK, -1, path, NULL, 0, 1);
        return -1;
    }
    int rc = __real_unlink(path);
    record(TRACE_UNLINK, -1, path, NULL, 0, rc < 0);
    return rc;
}

int __wrap_msync(void *addr, size_t len, int flags)
{
    if (inject(TRACE_MSYNC)) {
        record(TRACE_MSYNC, -1, map_path(addr), NULL, 0, 1);
        return -1;
    }
    int rc = __real_msync(addr, len, flags);
    record(TRACE_MSYNC, -1, map_path(addr), NULL, 0, rc < 0);
    return rc;
}

int __wrap_munmap(void *addr, size_t len)
{
    char kept[512];
    snprintf(kept, sizeof kept, "%s", map_path(addr));
    for (size_t i = 0; i < sizeof trace.maps / sizeof *trace.maps; i++)
        if (trace.maps[i].addr == addr) {
            free(trace.maps[i].path);
            trace.maps[i].path = NULL;
            trace.maps[i].addr = NULL;
        }
    if (inject(TRACE_MUNMAP)) {
        record(TRACE_MUNMAP, -1, kept, NULL, 0, 1);
        return -1;
    }
    int rc = __real_munmap(addr, len);
    record(TRACE_MUNMAP, -1, kept, NULL, 0, rc < 0);
    return rc;
}

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t at)
{
    void *got = __real_mmap(addr, len, prot, flags, fd, at);
    if (got != MAP_FAILED && fd >= 0) {
        char name[512];
        const char *path = fd_path(fd, name, sizeof name);
        for (size_t i = 0; i < sizeof trace.maps / sizeof *trace.maps; i++)
            if (!trace.maps[i].addr) {
                trace.maps[i].addr = got;
                trace.maps[i].path = strdup(path);
                break;
            }
    }
    return got;
}

int __wrap_clock_gettime(clockid_t clock, struct timespec *ts)
{
    int rc = __real_clock_gettime(clock, ts);
    if (rc == 0 && trace.clock_step) {
        trace.clock_offset += trace.clock_step;
        ts->tv_sec += trace.clock_offset;
    }
    return rc;
}

static trace_op op_named(const char *name, size_t len)
{
    for (int op = 0; op < TRACE_NOPS; op++)
        if (strlen(op_names[op]) == len && strncmp(name, op_names[op], len) == 0)
            return (trace_op)op;
    return TRACE_NOPS;
}

/* "OP:N[:ERRNO]" into its parts; 0 if it is not of that form. */
static int parse_spec(const char *spec, trace_op *op, unsigned *nth, int *err)
{
    const char *colon = strchr(spec, ':');
    if (!colon || (*op = op_named(spec, (size_t)(colon - spec))) == TRACE_NOPS)
        return 0;
    char *end;
    *nth = (unsigned)strtoul(colon + 1, &end, 10);
    *err = *end == ':' ? atoi(end + 1) : 0;
    return *nth > 0;
}

/* The command's claim windows, step by step (src/cli/cli.h): SIGKILL at the Nth pass of the step
 * SIMDBLOOM_TRACE_KILL names ("taken:3"). */
void claims_step(const char *step);
void claims_step(const char *step)
{
    static unsigned passes;
    const char *kill_at = getenv("SIMDBLOOM_TRACE_KILL");
    const char *colon = kill_at ? strchr(kill_at, ':') : NULL;
    if (!colon || strlen(step) != (size_t)(colon - kill_at) ||
        strncmp(step, kill_at, (size_t)(colon - kill_at)) != 0)
        return;
    if (++passes == (unsigned)strtoul(colon + 1, NULL, 10))
        raise(SIGKILL);
}

/* A program linked with the recorder reads its orders from the environment before main. */
__attribute__((constructor)) static void trace_from_environment(void)
{
    const char *log = getenv("SIMDBLOOM_TRACE");
    const char *fail = getenv("SIMDBLOOM_TRACE_FAIL");
    const char *crash = getenv("SIMDBLOOM_TRACE_EXIT");
    const char *step = getenv("SIMDBLOOM_TRACE_CLOCK_STEP");
    if (step)
        trace.clock_step = atol(step);
    if (fail) {
        unsigned nth;
        int err;
        trace_op op;
        if (parse_spec(fail, &op, &nth, &err))
            trace_fail(op, nth, err ? err : EIO);
    }
    if (crash) {
        int unused;
        if (parse_spec(crash, &trace.exit_op, &trace.exit_nth, &unused) == 0)
            trace.exit_nth = 0;
    }
    if (log) {
        trace.log_fd = __real_open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        trace_start();
    } else if (fail || crash) {
        trace_start();
    }
}
