/*
 * The allow-list for known false positives (seed 000's remedy:
 * "建立一个小的白名单，存储那些可能误判的 邮件地址"): a small exact set of keys that the filter
 * wrongly reports present, for example URLs a fetch proved new. It is consulted only for keys the
 * filter reports present, so its cost is paid on positives alone.
 *
 * An open-addressing table of XXH3-64 hashes (linear probing, at most half full) pointing into
 * one arena of key bytes. Saved as a companion file (docs/FORMAT.md, "Allow-list files").
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/endian.h"
#include "../base/hash.h"
#include "../base/alloc.h"
#include "../os/os.h"
#include "../object.h"

#define ALLOW_HEADER_BYTES 64
static const uint8_t allow_magic[8] = {0x89, 'S', 'B', 'A', 'L', 'L', 'O', 'W'};

struct sbloom_allowlist {
    uint64_t *hashes; /* per slot */
    uint32_t *entry;  /* per slot: entry number + 1, 0 when the slot is empty */
    size_t slots;     /* a power of two */
    size_t count;
    size_t *offsets, *lens, entries_cap;
    char *text;
    size_t text_len, text_cap;
    atomic_uint_fast64_t lookups; /* a statistic: readers on many threads may count at once */
};

static uint64_t key_hash(const void *key, size_t len)
{
    return sbloom_xxh3(len ? key : "", len);
}

int sbloom_allowlist_create(sbloom_allowlist_t **out)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    sbloom_allowlist_t *a = sbloom_calloc(1, sizeof *a);
    if (!a)
        return SBLOOM_E_NOMEM;
    a->slots = 16;
    a->hashes = sbloom_calloc(a->slots, sizeof *a->hashes);
    a->entry = sbloom_calloc(a->slots, sizeof *a->entry);
    if (!a->hashes || !a->entry) {
        sbloom_allowlist_free(a);
        return SBLOOM_E_NOMEM;
    }
    *out = a;
    return SBLOOM_OK;
}

void sbloom_allowlist_free(sbloom_allowlist_t *a)
{
    if (!a)
        return;
    free(a->hashes);
    free(a->entry);
    free(a->offsets);
    free(a->lens);
    free(a->text);
    free(a);
}

/* The slot holding key, or the empty slot where it would go. */
static size_t find_slot(const sbloom_allowlist_t *a, uint64_t h, const void *key, size_t len)
{
    size_t mask = a->slots - 1;
    for (size_t s = (size_t)h & mask;; s = (s + 1) & mask) {
        uint32_t e = a->entry[s];
        if (e == 0)
            return s;
        if (a->hashes[s] == h && a->lens[e - 1] == len &&
            (len == 0 || memcmp(a->text + a->offsets[e - 1], key, len) == 0))
            return s;
    }
}

static int grow_table(sbloom_allowlist_t *a)
{
    size_t slots = a->slots * 2;
    uint64_t *hashes = sbloom_calloc(slots, sizeof *hashes);
    uint32_t *entry = sbloom_calloc(slots, sizeof *entry);
    if (!hashes || !entry) {
        free(hashes);
        free(entry);
        return SBLOOM_E_NOMEM;
    }
    for (size_t s = 0; s < a->slots; s++) {
        if (!a->entry[s])
            continue;
        size_t t = (size_t)a->hashes[s] & (slots - 1);
        while (entry[t])
            t = (t + 1) & (slots - 1);
        hashes[t] = a->hashes[s];
        entry[t] = a->entry[s];
    }
    free(a->hashes);
    free(a->entry);
    a->hashes = hashes;
    a->entry = entry;
    a->slots = slots;
    return SBLOOM_OK;
}

static int reserve(sbloom_allowlist_t *a, size_t len)
{
    if (a->count == a->entries_cap) {
        size_t cap = a->entries_cap ? a->entries_cap * 2 : 16;
        size_t *offsets = sbloom_realloc(a->offsets, cap * sizeof *offsets);
        if (!offsets)
            return SBLOOM_E_NOMEM;
        a->offsets = offsets;
        size_t *lens = sbloom_realloc(a->lens, cap * sizeof *lens);
        if (!lens)
            return SBLOOM_E_NOMEM;
        a->lens = lens;
        a->entries_cap = cap;
    }
    if (a->text_len + len > a->text_cap) {
        size_t cap = (a->text_cap + len) * 2;
        char *text = sbloom_realloc(a->text, cap);
        if (!text)
            return SBLOOM_E_NOMEM;
        a->text = text;
        a->text_cap = cap;
    }
    if ((a->count + 1) * 2 > a->slots)
        return grow_table(a);
    return SBLOOM_OK;
}

int sbloom_allowlist_add(sbloom_allowlist_t *a, const void *key, size_t len)
{
    if (!a || (!key && len))
        return SBLOOM_E_NULL;
    if (len > UINT32_MAX || a->count >= UINT32_MAX - 1)
        return SBLOOM_E_TOO_LARGE;
    uint64_t h = key_hash(key, len);
    if (a->entry[find_slot(a, h, key, len)])
        return 0;
    int rc = reserve(a, len);
    if (rc != SBLOOM_OK)
        return rc;
    size_t s = find_slot(a, h, key, len); /* the table may have grown */
    if (len)
        memcpy(a->text + a->text_len, key, len);
    a->offsets[a->count] = a->text_len;
    a->lens[a->count] = len;
    a->text_len += len;
    a->hashes[s] = h;
    a->entry[s] = (uint32_t)++a->count;
    return 1;
}

int sbloom_allowlist_contains(const sbloom_allowlist_t *a, const void *key, size_t len)
{
    if (!a || (!key && len))
        return SBLOOM_E_NULL;
    atomic_fetch_add_explicit(&((sbloom_allowlist_t *)a)->lookups, 1, memory_order_relaxed);
    return a->entry[find_slot(a, key_hash(key, len), key, len)] != 0;
}

uint64_t sbloom_allowlist_count(const sbloom_allowlist_t *a)
{
    return a ? a->count : 0;
}

uint64_t sbloom_allowlist_lookups(const sbloom_allowlist_t *a)
{
    return a ? (uint64_t)atomic_load_explicit(&((sbloom_allowlist_t *)a)->lookups,
                                              memory_order_relaxed)
             : 0;
}

int64_t sbloom_contains_keys_allowing(const sbloom_t *filter, const sbloom_allowlist_t *allow,
                                      const void *const *keys, const size_t *lens, size_t n,
                                      uint8_t *results)
{
    if (!results)
        return SBLOOM_E_NULL;
    int64_t found = sbloom_contains_keys(filter, keys, lens, n, results);
    if (found <= 0 || !allow)
        return found;
    for (size_t i = 0; i < n; i++) /* only the filter's positives reach the allow-list */
        if (results[i] && sbloom_allowlist_contains(allow, keys[i], lens[i]) == 1) {
            results[i] = 0;
            found--;
        }
    return found;
}

/* ---- files: header (64 bytes), then per entry a 4-byte length and the key's bytes ---- */

static uint64_t payload_bytes(const sbloom_allowlist_t *a)
{
    return 4 * (uint64_t)a->count + a->text_len;
}

static int write_entries(int fd, const void *ctx)
{
    const sbloom_allowlist_t *a = ctx;
    for (size_t i = 0; i < a->count; i++) {
        uint8_t len[4];
        sbloom_put_le32(len, (uint32_t)a->lens[i]);
        if (sbloom_write_all(fd, len, 4) < 0 ||
            sbloom_write_all(fd, a->text + a->offsets[i], a->lens[i]) < 0)
            return -1;
    }
    return 0;
}

static uint64_t entries_checksum(const sbloom_allowlist_t *a)
{
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    for (size_t i = 0; i < a->count; i++) {
        uint8_t len[4];
        sbloom_put_le32(len, (uint32_t)a->lens[i]);
        XXH3_64bits_update(&state, len, 4);
        XXH3_64bits_update(&state, a->text + a->offsets[i], a->lens[i]);
    }
    return XXH3_64bits_digest(&state);
}

int sbloom_allowlist_save(const sbloom_allowlist_t *a, const char *path)
{
    if (!a || !path)
        return SBLOOM_E_NULL;
    uint8_t header[ALLOW_HEADER_BYTES] = {0};
    memcpy(header, allow_magic, 8);
    sbloom_put_le32(header + 8, 1);
    sbloom_put_le64(header + 16, a->count);
    sbloom_put_le64(header + 24, payload_bytes(a));
    sbloom_put_le64(header + 32, entries_checksum(a));
    sbloom_put_le64(header + 56, sbloom_xxh3(header, 56));
    return sbloom_write_file(path, header, sizeof header, write_entries, a);
}

/* Validates the header against the file size, then reads, checks and parses the entries. */
int sbloom_allowlist_load(sbloom_allowlist_t **out, const char *path)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    if (!path)
        return SBLOOM_E_NULL;
    int fd;
    uint64_t size;
    int opened = sbloom_open_regular(path, &fd, &size);
    if (opened != SBLOOM_OK)
        return opened;
    uint8_t header[ALLOW_HEADER_BYTES];
    uint8_t *body = NULL;
    sbloom_allowlist_t *a = NULL;
    int rc = SBLOOM_E_TRUNCATED;
    if (size < ALLOW_HEADER_BYTES) {
        if (size >= 8 && sbloom_read_all(fd, header, 8) == 0 && memcmp(header, allow_magic, 8))
            rc = SBLOOM_E_FORMAT;
        goto done;
    }
    rc = SBLOOM_E_IO;
    if (sbloom_read_all(fd, header, sizeof header) < 0)
        goto done;
    rc = SBLOOM_E_FORMAT;
    if (memcmp(header, allow_magic, 8) != 0)
        goto done;
    rc = SBLOOM_E_CORRUPT;
    if (sbloom_get_le64(header + 56) != sbloom_xxh3(header, 56))
        goto done;
    rc = SBLOOM_E_VERSION;
    if (sbloom_get_le32(header + 8) != 1 || sbloom_get_le32(header + 12) != 0)
        goto done;
    for (int i = 40; i < 56; i++)
        if (header[i] != 0)
            goto done;
    uint64_t count = sbloom_get_le64(header + 16), bytes = sbloom_get_le64(header + 24);
    rc = SBLOOM_E_TRUNCATED;
    if (bytes != size - ALLOW_HEADER_BYTES)
        goto done;
    rc = SBLOOM_E_CORRUPT;
    if (count > bytes / 4)
        goto done;
    rc = SBLOOM_E_NOMEM;
    body = sbloom_malloc(bytes ? (size_t)bytes : 1);
    if (!body)
        goto done;
    rc = SBLOOM_E_IO;
    if (sbloom_read_all(fd, body, bytes) < 0)
        goto done;
    rc = SBLOOM_E_CORRUPT;
    if (sbloom_xxh3(body, (size_t)bytes) != sbloom_get_le64(header + 32))
        goto done;
    if ((rc = sbloom_allowlist_create(&a)) != SBLOOM_OK)
        goto done;
    uint64_t at = 0;
    for (uint64_t i = 0; i < count; i++) {
        rc = SBLOOM_E_CORRUPT;
        if (bytes - at < 4)
            goto done;
        uint32_t len = sbloom_get_le32(body + at);
        at += 4;
        if (bytes - at < len)
            goto done;
        int added = sbloom_allowlist_add(a, body + at, len);
        if (added < 0) {
            rc = added;
            goto done;
        }
        if (added == 0) /* a repeated key: no writer of ours makes that */
            goto done;
        at += len;
    }
    rc = at == bytes ? SBLOOM_OK : SBLOOM_E_CORRUPT;
done:
    if (rc != SBLOOM_OK) {
        int saved = errno;
        sbloom_allowlist_free(a);
        a = NULL;
        errno = saved;
    }
    free(body);
    close(fd);
    *out = a;
    return rc;
}
