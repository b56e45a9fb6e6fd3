/*
 * Durability without a power cut: the file system calls of a save, recorded in order
 * (trace_syscalls.h), and a failure injected at each of them.
 *   - A crash-safe save (sbloom_save on every layout, sbloom_allowlist_save) writes a temporary
 *     file in the target's directory, fsyncs it, closes it, renames it over the target and then
 *     fsyncs the directory: in that order, with no write after the fsync.
 *   - A failure at any step before the rename leaves the previous file byte for byte and no
 *     temporary file; a failed directory fsync does not fail the save (the rename is done).
 *   - A read-write mapping: sbloom_sync writes the header and msyncs; sbloom_free syncs before
 *     it unmaps; a failed msync is an I/O error.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "simdbloom.h"
#include "check.h"
#include "trace_syscalls.h"

static char dir[256];

static void path_in_dir(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

/* The index of the first event at or after `from` with this op whose path is `path` (or, with
 * path NULL, any path), or the count when none. */
static size_t find(size_t from, trace_op op, const char *path)
{
    for (size_t i = from; i < trace_count(); i++)
        if (trace_at(i)->op == op && (!path || strcmp(trace_at(i)->path, path) == 0))
            return i;
    return trace_count();
}

static size_t find_last(trace_op op, const char *path)
{
    size_t last = trace_count();
    for (size_t i = 0; i < trace_count(); i++)
        if (trace_at(i)->op == op && strcmp(trace_at(i)->path, path) == 0)
            last = i;
    return last;
}

/* The save just traced went: create TMP in the target's directory, write it, fsync it, close it,
 * rename it over TARGET, fsync the directory. */
static int save_in_order(const char *target)
{
    size_t end = trace_count();
    size_t created = end;
    for (size_t i = 0; i < end && created == end; i++)
        if (trace_at(i)->op == TRACE_OPEN && trace_at(i)->created && !trace_at(i)->failed)
            created = i;
    if (created == end)
        return 0;
    const char *tmp = trace_at(created)->path;
    size_t rename_at = find(created, TRACE_RENAME, tmp);
    size_t last_write = find_last(TRACE_WRITE, tmp);
    size_t synced = find(created, TRACE_FSYNC, tmp);
    size_t closed = find(created, TRACE_CLOSE, tmp);
    size_t dir_opened = find(rename_at, TRACE_OPEN, dir);
    size_t dir_synced = find(rename_at, TRACE_FSYNC, dir);
    int ok = strncmp(tmp, dir, strlen(dir)) == 0 && tmp[strlen(dir)] == '/' && /* same directory */
             last_write < end && last_write < synced && synced < closed && closed < rename_at &&
             rename_at < end && strcmp(trace_at(rename_at)->to, target) == 0 &&
             dir_opened < dir_synced && dir_synced < end;
    /* nothing written to the temporary file after its fsync */
    ok = ok && find(synced, TRACE_WRITE, tmp) == end;
    if (!ok)
        trace_dump();
    return ok;
}

static uint8_t *read_all(const char *path, size_t *len)
{
    FILE *in = fopen(path, "rb");
    if (!in)
        return NULL;
    uint8_t *buf = NULL;
    size_t cap = 0;
    *len = 0;
    for (;;) {
        if (*len == cap) {
            cap = cap ? cap * 2 : 1 << 16;
            uint8_t *grown = realloc(buf, cap);
            if (!grown)
                break;
            buf = grown;
        }
        size_t got = fread(buf + *len, 1, cap - *len, in);
        *len += got;
        if (got == 0)
            break;
    }
    fclose(in);
    return buf;
}

/* The directory holds exactly the named files (no temporary left behind). */
static int only_files(const char *a, const char *b)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int ok = 1;
    for (struct dirent *e; (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        ok &= (a && strcmp(e->d_name, a) == 0) || (b && strcmp(e->d_name, b) == 0);
    }
    closedir(d);
    return ok;
}

static sbloom_t *filled(sbloom_layout layout, uint64_t n, uint64_t seed)
{
    sbloom_t *f = NULL;
    if (sbloom_create_for_layout(&f, n, 0.01, layout) != SBLOOM_OK)
        return NULL;
    for (uint64_t i = 0; i < n; i++)
        sbloom_add_u64(f, test_rand(&seed));
    return f;
}

static void save_order_every_layout(void)
{
    char target[300];
    path_in_dir(target, sizeof target, "f.sbloom");
    TEST_FOR_EVERY_LAYOUT(layout)
    {
        sbloom_t *f = filled(layout, 5000, (uint64_t)layout);
        CHECK(f != NULL);
        if (!f)
            continue;
        trace_start();
        CHECK(sbloom_save(f, target) == SBLOOM_OK);
        trace_stop();
        if (!save_in_order(target))
            fprintf(stderr, "  in: sbloom_save of %s\n", sbloom_layout_name(layout));
        CHECK(save_in_order(target));
        sbloom_free(f);
    }
    sbloom_allowlist_t *allow;
    CHECK(sbloom_allowlist_create(&allow) == SBLOOM_OK);
    CHECK(sbloom_allowlist_add(allow, "a", 1) == 1);
    path_in_dir(target, sizeof target, "f.allow");
    trace_start();
    CHECK(sbloom_allowlist_save(allow, target) == SBLOOM_OK);
    trace_stop();
    CHECK(save_in_order(target));
    sbloom_allowlist_free(allow);
    unlink(target);
    path_in_dir(target, sizeof target, "f.sbloom");
    unlink(target);
}

/* A failure at each step of a save: the old file stays as it was, nothing else is left. */
static void failure_at_each_step(void)
{
    char target[300];
    path_in_dir(target, sizeof target, "g.sbloom");
    static const struct {
        trace_op op;
        unsigned nth; /* the nth call of op within the save */
        int err;
        const char *what;
    } steps[] = {
        {TRACE_OPEN, 1, EACCES, "creating the temporary file"},
        {TRACE_WRITE, 1, ENOSPC, "the first write"},
        {TRACE_WRITE, 2, EIO, "the second write"},
        {TRACE_FSYNC, 1, EIO, "the file's fsync"},
        {TRACE_CLOSE, 1, EIO, "the close"},
        {TRACE_RENAME, 1, EXDEV, "the rename"},
    };
    TEST_FOR_EVERY_LAYOUT(layout)
    {
        sbloom_t *f = filled(layout, 3000, 7);
        CHECK(f != NULL && sbloom_save(f, target) == SBLOOM_OK);
        if (!f)
            continue;
        size_t old_len = 0;
        uint8_t *old = read_all(target, &old_len);
        CHECK(old != NULL && old_len > 0);
        for (uint64_t i = 0; i < 500; i++) /* the filter now differs from the file */
            sbloom_add_u64(f, 1000000 + i);
        for (size_t s = 0; s < sizeof steps / sizeof *steps; s++) {
            trace_fail(steps[s].op, steps[s].nth, steps[s].err);
            trace_start();
            errno = 0;
            int rc = sbloom_save(f, target);
            int err = errno;
            trace_stop();
            trace_fail(steps[s].op, 0, 0);
            size_t now_len = 0;
            uint8_t *now = read_all(target, &now_len);
            int intact = now && now_len == old_len && memcmp(now, old, old_len) == 0;
            if (rc != SBLOOM_E_IO || err != steps[s].err || !intact ||
                !only_files("g.sbloom", NULL))
                fprintf(stderr, "  in: %s failing on %s: rc %d, errno %d\n", steps[s].what,
                        sbloom_layout_name(layout), rc, err);
            CHECK(rc == SBLOOM_E_IO && err == steps[s].err); /* the cause reaches the caller */
            CHECK(intact);
            CHECK(only_files("g.sbloom", NULL));
            free(now);
        }
        /* The directory's fsync comes after the rename: the new file is in place, and a file
         * system that refuses to fsync a directory does not fail the save. */
        trace_fail(TRACE_FSYNC, 2, EINVAL);
        trace_start();
        CHECK(sbloom_save(f, target) == SBLOOM_OK);
        trace_stop();
        trace_fail(TRACE_FSYNC, 0, 0);
        sbloom_t *back = NULL;
        CHECK(sbloom_load(&back, target) == SBLOOM_OK && back &&
              sbloom_items(back) == sbloom_items(f));
        sbloom_free(back);
        free(old);
        sbloom_free(f);
    }
    unlink(target);
}

/* A read-write mapping: the header is written into the mapping, then msync; sbloom_free syncs
 * before it unmaps; a failed msync is reported. Every kind of mapping whose sync ends in msync:
 * a plain filter's (kind 0) and a windowed filter's, generation slots (1) and adjacent lines (2),
 * whose record and lines are its own; and a concurrent mapping of each (flags), which only an
 * explicit sbloom_sync brings up to date (others may still be adding when one leaves). */
static void mapped_sync(int kind, unsigned flags)
{
    char target[300];
    path_in_dir(target, sizeof target, "m.sbloom");
    sbloom_t *f = NULL;
    if (kind == 0)
        f = filled(SBLOOM_LAYOUT_BLOCK512_K8, 2000, 3);
    else if (sbloom_create_windowed(&f, 3000, kind == 1 ? 0.01 : 1e-6, 3, 10, 100) == SBLOOM_OK)
        for (uint64_t i = 0; i < 2000; i++)
            sbloom_add_u64(f, i);
    CHECK(f && sbloom_save(f, target) == SBLOOM_OK);
    sbloom_free(f);
    sbloom_t *m = NULL;
    int mapped = sbloom_map(&m, target, SBLOOM_OPEN_WRITE | flags);
    if (mapped == SBLOOM_E_UNSUPPORTED) { /* a big-endian host: no read-write mapping */
        printf("mapped_sync: skipped (no read-write mapping on this host)\n");
        unlink(target);
        return;
    }
    CHECK(mapped == SBLOOM_OK);
    if (!m)
        return;
    for (uint64_t i = 0; i < 100; i++)
        sbloom_add_u64(m, 5000000 + i);
    uint64_t items = sbloom_items(m);
    trace_start();
    CHECK(sbloom_sync(m) == SBLOOM_OK);
    trace_stop();
    CHECK(find(0, TRACE_MSYNC, target) < trace_count());

    trace_fail(TRACE_MSYNC, 1, EIO);
    trace_start();
    CHECK(sbloom_sync(m) == SBLOOM_E_IO);
    trace_stop();
    trace_fail(TRACE_MSYNC, 0, 0);

    sbloom_add_u64(m, 9999999);
    if (flags & SBLOOM_OPEN_CONCURRENT) /* (its last process syncs, as dedup --shared does) */
        CHECK(sbloom_sync(m) == SBLOOM_OK);
    trace_start();
    sbloom_free(m);
    trace_stop();
    size_t synced = find(0, TRACE_MSYNC, target), unmapped = find(0, TRACE_MUNMAP, target);
    if (!(flags & SBLOOM_OPEN_CONCURRENT) && !(synced < unmapped && unmapped < trace_count()))
        trace_dump();
    CHECK(flags & SBLOOM_OPEN_CONCURRENT || (synced < unmapped && unmapped < trace_count()));
    sbloom_t *back = NULL;
    CHECK(sbloom_load(&back, target) == SBLOOM_OK && back && sbloom_items(back) >= items);
    CHECK(back && sbloom_contains_u64(back, 9999999) == 1);
    sbloom_free(back);
    unlink(target);
    char lock[320];
    snprintf(lock, sizeof lock, "%s.lock", target);
    unlink(lock); /* (a concurrent mapping's) */
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/simdbloom-durability-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    save_order_every_layout();
    failure_at_each_step();
    for (int kind = 0; kind < 3; kind++) {
        mapped_sync(kind, 0);
        mapped_sync(kind, SBLOOM_OPEN_CONCURRENT);
    }
    CHECK(only_files(NULL, NULL));
    rmdir(dir);
    return check_report();
}
