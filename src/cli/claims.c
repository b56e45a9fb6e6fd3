/*
 * The claims journal of a dedup worker that shares its table (--shared, --redis).
 *
 * A shared table makes a line's first test-and-add its claim: whoever claims a line must write it,
 * and nobody else ever will. A worker killed between its claim and its write would lose the line
 * for the whole fleet, for good. So each worker keeps, in a small file of its own, the hashes of
 * the lines it is about to claim or has claimed and not yet handed to the output:
 *
 *   1. before a window of lines is claimed, all their hashes (the intent);
 *   2. after the claim, only those it claimed;
 *   3. after the output has taken the window's lines (written to the file or pipe), none.
 *
 * The worker holds an exclusive flock on its journal while it runs. A worker that starts later
 * and finds a journal nobody holds (its owner is dead) adopts it: the hashes become lines it owes,
 * kept in its own journal until written. When it meets a line it owes, it writes the line (once)
 * even though the table says "seen". A rerun of the killed command over the same input therefore
 * writes every line the dead worker had claimed, and repeats at most one window of lines (those
 * the dead worker had written just before it died, and, if it died between steps 1 and 2, the
 * window's lines others had claimed earlier).
 *
 * The journal is rewritten whole at each step; a write cut short by the kill must not lose the
 * state before it, so the file has two slots (offsets 0 and SLOT_SPAN, a sparse file) written in
 * turn, each with a sequence number and a checksum: a reader takes the newest slot that checks.
 * Step 1 cut short leaves step 3 of the window before (nothing claimed yet), step 2 leaves step 1
 * (more than was claimed), step 3 leaves step 2.
 */
#define _GNU_SOURCE /* flock, O_CLOEXEC */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "claims.h"

#define SLOT_SPAN (UINT64_C(64) << 20)          /* the second slot's offset: 8M hashes fit a slot */
#define MAX_HASHES (SLOT_SPAN / 8 - 8)          /* owed + in flight, at most */
#define SLOT_MAGIC UINT64_C(0x314d49414c434253) /* "SBCLAIM1" as little-endian bytes */

struct claims {
    char dir[PATH_MAX];
    char prefix[64]; /* journal names: PREFIX.PID */
    char path[PATH_MAX];
    int fd;
    uint64_t seq;
    size_t flight; /* hashes in flight in the last slot written */
    /* the owed set: open addressing over nonzero keys (a zero hash is kept apart) */
    uint64_t *owed;
    size_t owed_cap, owed_count;
    int owed_zero;
    uint64_t adopted;   /* hashes taken over from dead workers' journals */
    uint64_t *scratch;  /* a slot's image */
    size_t scratch_cap; /* in hashes */
    uint64_t *claimed;  /* claims_taken's list of a window's claimed hashes */
    size_t claimed_cap;
};

/* FNV-1a: a short, fixed name for any key (a path, a fleet name). */
static uint64_t name_hash(const char *s)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * UINT64_C(0x100000001b3);
    return h;
}

/* A hash's bits mixed down (MurmurHash3's finalizer, first half), for a table slot. */
static uint64_t slot_hash(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    return x ^ (x >> 33);
}

static int owed_grow(claims *c)
{
    size_t cap = c->owed_cap ? c->owed_cap * 2 : 1024;
    uint64_t *table = calloc(cap, sizeof *table);
    if (!table)
        return -1;
    for (size_t i = 0; i < c->owed_cap; i++) {
        uint64_t h = c->owed[i];
        if (!h)
            continue;
        size_t at = (size_t)slot_hash(h) & (cap - 1);
        while (table[at])
            at = (at + 1) & (cap - 1);
        table[at] = h;
    }
    free(c->owed);
    c->owed = table;
    c->owed_cap = cap;
    return 0;
}

static int owed_add(claims *c, uint64_t h)
{
    if (!h) {
        c->owed_count += !c->owed_zero;
        c->owed_zero = 1;
        return 0;
    }
    if ((c->owed_count + 1) * 2 > c->owed_cap && owed_grow(c) < 0)
        return -1;
    size_t at = (size_t)slot_hash(h) & (c->owed_cap - 1);
    while (c->owed[at] && c->owed[at] != h)
        at = (at + 1) & (c->owed_cap - 1);
    if (!c->owed[at]) {
        c->owed[at] = h;
        c->owed_count++;
    }
    return 0;
}

/* Removes h from the owed set; 1 if it was there. Deletion shifts the run after it back. */
static int owed_take(claims *c, uint64_t h)
{
    if (!h) {
        int was = c->owed_zero;
        c->owed_count -= (size_t)was;
        c->owed_zero = 0;
        return was;
    }
    if (!c->owed_cap)
        return 0;
    size_t mask = c->owed_cap - 1, at = (size_t)slot_hash(h) & mask;
    while (c->owed[at] && c->owed[at] != h)
        at = (at + 1) & mask;
    if (!c->owed[at])
        return 0;
    c->owed[at] = 0;
    c->owed_count--;
    for (size_t next = (at + 1) & mask; c->owed[next]; next = (next + 1) & mask) {
        uint64_t moved = c->owed[next];
        c->owed[next] = 0;
        size_t home = (size_t)slot_hash(moved) & mask;
        while (c->owed[home])
            home = (home + 1) & mask;
        c->owed[home] = moved;
    }
    return 1;
}

/* A slot: magic, sequence, count of owed, count in flight, the hashes, then a checksum of all
 * the words before it. */
static uint64_t words_sum(const uint64_t *w, size_t n)
{
    uint64_t h = UINT64_C(0x9e3779b97f4a7c15);
    for (size_t i = 0; i < n; i++)
        h = slot_hash(h ^ w[i]) + i;
    return h;
}

static int slot_write(claims *c, const uint64_t *flight, size_t nflight)
{
    size_t n = c->owed_count + nflight;
    if (n > MAX_HASHES) {
        errno = EFBIG;
        return -1;
    }
    if (n + 5 > c->scratch_cap) {
        size_t cap = (n + 5) * 2;
        uint64_t *grown = realloc(c->scratch, cap * sizeof *grown);
        if (!grown)
            return -1;
        c->scratch = grown;
        c->scratch_cap = cap;
    }
    uint64_t *w = c->scratch;
    size_t k = 4;
    if (c->owed_zero)
        w[k++] = 0;
    for (size_t i = 0; i < c->owed_cap; i++)
        if (c->owed[i])
            w[k++] = c->owed[i];
    if (nflight)
        memcpy(w + k, flight, nflight * sizeof *flight);
    k += nflight;
    c->seq++;
    w[0] = SLOT_MAGIC;
    w[1] = c->seq;
    w[2] = c->owed_count;
    w[3] = nflight;
    w[k] = words_sum(w, k);
    c->flight = nflight;
    size_t bytes = (k + 1) * sizeof *w;
    off_t at = (off_t)((c->seq & 1) ? 0 : SLOT_SPAN);
    for (size_t done = 0; done < bytes;) {
        ssize_t got = pwrite(c->fd, (const char *)w + done, bytes - done, at + (off_t)done);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        done += (size_t)got;
    }
    return 0;
}

/* Reads the newest valid slot of a journal into the owed set (owed and in flight alike). */
static int adopt_slots(claims *c, int fd)
{
    uint64_t head[2][4];
    int valid[2] = {0, 0};
    for (int s = 0; s < 2; s++)
        valid[s] = pread(fd, head[s], sizeof head[s], s ? (off_t)SLOT_SPAN : 0) ==
                       (ssize_t)sizeof head[s] &&
                   head[s][0] == SLOT_MAGIC && head[s][2] <= MAX_HASHES &&
                   head[s][3] <= MAX_HASHES - head[s][2];
    for (int tries = 0; tries < 2; tries++) {
        int s = valid[0] && (!valid[1] || head[0][1] > head[1][1]) ? 0 : 1;
        if (!valid[s])
            return 0; /* nothing readable: an empty or new journal */
        size_t n = (size_t)(head[s][2] + head[s][3]), words = n + 5;
        uint64_t *w = malloc(words * sizeof *w);
        if (!w)
            return -1;
        off_t at = s ? (off_t)SLOT_SPAN : 0;
        int ok = pread(fd, w, words * sizeof *w, at) == (ssize_t)(words * sizeof *w) &&
                 memcmp(w, head[s], sizeof head[s]) == 0 && w[words - 1] == words_sum(w, words - 1);
        for (size_t i = 0; ok && i < n; i++)
            if (owed_add(c, w[4 + i]) < 0)
                ok = -1;
        free(w);
        if (ok == -1)
            return -1;
        if (ok) {
            c->adopted += n;
            return 0;
        }
        valid[s] = 0; /* cut short: the other slot holds the state before */
    }
    return 0;
}

/* Takes over the journals of the same table that nobody holds: their owners are gone. */
static int adopt_dead(claims *c)
{
    DIR *d = opendir(c->dir);
    if (!d)
        return 0;
    size_t plen = strlen(c->prefix);
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        if (strncmp(e->d_name, c->prefix, plen) != 0 || e->d_name[plen] != '.')
            continue;
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", c->dir, e->d_name) >= (int)sizeof path ||
            strcmp(path, c->path) == 0)
            continue;
        int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
            continue;
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) { /* its owner is gone (or never came back) */
            rc = adopt_slots(c, fd);
            /* kept in this worker's journal before the dead one goes: emptied first, so that
             * another worker that opened it before the unlink adopts nothing twice */
            if (rc == 0 && (rc = slot_write(c, NULL, 0)) == 0 && ftruncate(fd, 0) == 0)
                unlink(path);
        }
        close(fd);
    }
    closedir(d);
    return rc;
}

/* This worker's journal at path, created if need be, locked, and still under that name. Between
 * its creation and its lock another worker starting up may take it for a dead one's: that worker
 * locks it, adopts it (nothing, or a dead worker's claims under the same process ID) and unlinks
 * it. So a lock held elsewhere is waited out (1 ms at a time, 5 s at most), and a journal unlinked
 * meanwhile is made again. The descriptor, or -1 with errno set. */
static int open_own_journal(const char *path)
{
    for (int tries = 0; tries < 5000; tries++) {
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
            return -1;
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            struct stat held, named;
            if (fstat(fd, &held) == 0 && stat(path, &named) == 0 && held.st_dev == named.st_dev &&
                held.st_ino == named.st_ino)
                return fd; /* locked, and the file at path: no other worker unlinks it now */
        } else if (errno != EWOULDBLOCK) {
            int saved = errno;
            close(fd);
            errno = saved;
            return -1;
        }
        close(fd);
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    errno = EWOULDBLOCK;
    return -1;
}

int claims_open(claims **out, const char *dir, const char *key)
{
    *out = NULL;
    claims *c = calloc(1, sizeof *c);
    if (!c)
        return -1;
    c->fd = -1;
    snprintf(c->dir, sizeof c->dir, "%s", dir);
    snprintf(c->prefix, sizeof c->prefix, ".sbloom-claims-%016llx",
             (unsigned long long)name_hash(key));
    if (snprintf(c->path, sizeof c->path, "%s/%s.%ld", dir, c->prefix, (long)getpid()) >=
        (int)sizeof c->path) {
        errno = ENAMETOOLONG;
        claims_close(c);
        return -1;
    }
    /* A journal under this worker's own process ID is a dead worker's whose ID came round
     * again: adopted like any other, then started afresh. */
    c->fd = open_own_journal(c->path);
    if (c->fd < 0 || adopt_slots(c, c->fd) < 0 || ftruncate(c->fd, 0) < 0 ||
        slot_write(c, NULL, 0) < 0 || adopt_dead(c) < 0) {
        int saved = errno;
        claims_close(c);
        errno = saved;
        return -1;
    }
    *out = c;
    return 0;
}

int claims_intend(claims *c, const uint64_t *hashes, size_t n)
{
    return slot_write(c, hashes, n);
}

int claims_taken(claims *c, const uint64_t *hashes, const uint8_t *is_new, size_t n)
{
    if (n > c->claimed_cap) { /* grown once, to the window's size */
        uint64_t *grown = realloc(c->claimed, n * sizeof *grown);
        if (!grown)
            return -1;
        c->claimed = grown;
        c->claimed_cap = n;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (is_new[i])
            c->claimed[m++] = hashes[i];
    return slot_write(c, c->claimed, m);
}

int claims_owed(claims *c, uint64_t hash)
{
    return c->owed_count && owed_take(c, hash);
}

int claims_written(claims *c)
{
    return slot_write(c, NULL, 0);
}

uint64_t claims_adopted(const claims *c)
{
    return c ? c->adopted : 0;
}

uint64_t claims_still_owed(const claims *c)
{
    return c ? c->owed_count : 0;
}

void claims_close(claims *c)
{
    if (!c)
        return;
    if (c->fd >= 0) {
        /* nothing owed or in flight: the journal goes; otherwise it stays for the next run
         * (lines never met, or a window whose output failed) */
        if (c->owed_count == 0 && c->flight == 0)
            unlink(c->path);
        close(c->fd);
    }
    free(c->owed);
    free(c->scratch);
    free(c->claimed);
    free(c);
}
