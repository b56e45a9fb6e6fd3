/* Line splitting (src/cli/newlines.c): the vector path against the portable one and against a
 * byte-by-byte model, on buffers of every length around the 64-byte pieces, every density of
 * newlines and of CRs before them, and every cut-off count; with the keys' lengths (split_keys:
 * the line without a trailing CR) and without. */
#include <stdlib.h>
#include <string.h>

#include "simdbloom.h"
#include "check.h"
#include "../src/cli/newlines.h"

#define MAX_LEN 700

/* The model: one byte at a time; a key drops the line's last byte when it is a CR. */
static size_t split_model(const char *buf, size_t len, const char **lines, size_t *lens,
                          size_t *key_lens, size_t max, size_t *used)
{
    size_t count = 0, begin = 0;
    for (size_t i = 0; i < len && count < max; i++)
        if (buf[i] == '\n') {
            lines[count] = buf + begin;
            key_lens[count] = i - begin;
            if (i > begin && buf[i - 1] == '\r')
                key_lens[count]--;
            lens[count++] = i - begin;
            begin = i + 1;
        }
    *used = begin;
    return count;
}

static uint64_t state = 0x9e3779b97f4a7c15u;
static uint64_t next_random(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

/* what: "split_lines", "scalar" (split_lines_scalar), "keys" (split_keys), "keys_scalar". */
static int same(const char *what, const char *buf, size_t len, size_t max)
{
    static const char *want_lines[MAX_LEN + 1], *got_lines[MAX_LEN + 1];
    static size_t want_lens[MAX_LEN + 1], got_lens[MAX_LEN + 1];
    static size_t want_keys[MAX_LEN + 1], got_keys[MAX_LEN + 1];
    size_t want_used = 0, got_used = 0, got = 0;
    size_t want = split_model(buf, len, want_lines, want_lens, want_keys, max, &want_used);
    int keys = strncmp(what, "keys", 4) == 0;
    if (!strcmp(what, "scalar"))
        got = split_lines_scalar(buf, len, got_lines, got_lens, max, &got_used);
    else if (!strcmp(what, "split_lines"))
        got = split_lines(buf, len, got_lines, got_lens, max, &got_used);
    else if (!strcmp(what, "keys"))
        got = split_keys(buf, len, got_lines, got_lens, got_keys, max, &got_used);
    else
        got = split_keys_scalar(buf, len, got_lines, got_lens, got_keys, max, &got_used);
    int ok = got == want && got_used == want_used;
    for (size_t i = 0; ok && i < want; i++)
        ok = got_lines[i] == want_lines[i] && got_lens[i] == want_lens[i] &&
             (!keys || got_keys[i] == want_keys[i]);
    if (!ok)
        fprintf(stderr, "  %s: len %zu max %zu: %zu lines (%zu used), want %zu (%zu used)\n", what,
                len, max, got, got_used, want, want_used);
    return ok;
}

int main(void)
{
    /* the buffer starts at every offset of a 64-byte piece (unaligned loads) */
    char *storage = malloc(MAX_LEN + 64);
    int all_ok = 1;
    unsigned cases = 0;
    for (int round = 0; round < 2000 && all_ok; round++) {
        size_t len = (size_t)(next_random() % MAX_LEN);
        char *buf = storage + next_random() % 64;
        unsigned per_1024 = (unsigned)(next_random() % 5 == 0 ? 1024 : next_random() % 300);
        unsigned cr_per_4 = (unsigned)(next_random() % 5); /* of the bytes before a '\n' */
        for (size_t i = 0; i < len; i++) /* other bytes include '\r', 0 and bytes over 127 */
            buf[i] = next_random() % 1024 < per_1024 ? '\n' : (char)(next_random() % 256 | 1);
        for (size_t i = 1; i < len; i++) /* CRLF line ends, and lines of a CR alone */
            if (buf[i] == '\n' && next_random() % 4 < cr_per_4)
                buf[i - 1] = '\r';
        size_t maxes[] = {0,          1, 2, 3, 63, 64, 65, (size_t)(next_random() % (MAX_LEN + 1)),
                          MAX_LEN + 1};
        for (size_t m = 0; m < sizeof maxes / sizeof maxes[0]; m++) {
            all_ok &= same("split_lines", buf, len, maxes[m]);
            all_ok &= same("scalar", buf, len, maxes[m]);
            all_ok &= same("keys", buf, len, maxes[m]);
            all_ok &= same("keys_scalar", buf, len, maxes[m]);
            cases++;
        }
    }
    CHECK(all_ok);
    CHECK(cases >= 1000);
    /* a newline as the last byte of a 64-byte piece and the first of the next */
    char edges[192];
    memset(edges, 'a', sizeof edges);
    edges[63] = edges[64] = edges[127] = edges[191] = '\n';
    CHECK(same("split_lines", edges, sizeof edges, 10));
    const char *lines[8];
    size_t lens[8], used = 0;
    CHECK(split_lines(edges, sizeof edges, lines, lens, 8, &used) == 4);
    CHECK(used == sizeof edges && lens[0] == 63 && lens[1] == 0 && lens[2] == 62 && lens[3] == 63);
    /* a CR as the last byte of a piece, its '\n' the first of the next; a line of a CR alone;
     * a CR not before a newline stays in the key */
    memset(edges, 'a', sizeof edges);
    edges[63] = '\r';
    edges[64] = '\n';
    edges[65] = '\r';
    edges[66] = '\n';
    edges[100] = '\r';
    edges[191] = '\n';
    size_t key_lens[8];
    CHECK(same("keys", edges, sizeof edges, 10));
    CHECK(split_keys(edges, sizeof edges, lines, lens, key_lens, 8, &used) == 3);
    CHECK(lens[0] == 64 && key_lens[0] == 63 && lens[1] == 1 && key_lens[1] == 0 &&
          lens[2] == 124 && key_lens[2] == 124);
    free(storage);
    return check_report();
}
