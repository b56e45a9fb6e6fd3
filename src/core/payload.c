/*
 * A core's payload in file order: files store little-endian words, so on a big-endian host the
 * blocks are swapped on the way out and in (the layout says the word size); on a little-endian
 * host the payload is the blocks themselves.
 */
#include "../base/endian.h"
#include "../base/hash.h"
#include "../os/os.h"
#include "core.h"

void sbloom_core_payload_out(const sbloom_core *c, void *out)
{
    sbloom_copy_words(out, c->blocks, c->bytes, sbloom_layout_word_bits(c->layout),
                      sbloom_host_is_big_endian());
}

void sbloom_core_payload_in(sbloom_core *c, const void *payload)
{
    sbloom_copy_words(c->blocks, payload, c->bytes, sbloom_layout_word_bits(c->layout),
                      sbloom_host_is_big_endian());
}

int sbloom_core_payload_write(int fd, const sbloom_core *c)
{
    if (!sbloom_host_is_big_endian())
        return sbloom_write_all(fd, c->blocks, c->bytes);
    uint8_t chunk[1 << 16];
    for (uint64_t at = 0; at < c->bytes; at += sizeof chunk) {
        uint64_t len = c->bytes - at < sizeof chunk ? c->bytes - at : sizeof chunk;
        sbloom_copy_words(chunk, (const uint8_t *)c->blocks + at, len,
                          sbloom_layout_word_bits(c->layout), 1);
        if (sbloom_write_all(fd, chunk, len) < 0)
            return -1;
    }
    return 0;
}

uint64_t sbloom_core_payload_checksum(const sbloom_core *c)
{
    if (!sbloom_host_is_big_endian())
        return sbloom_xxh3(c->blocks, (size_t)c->bytes);
    /* Big-endian host: checksum the little-endian image, a chunk at a time. */
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    uint8_t chunk[4096];
    for (uint64_t at = 0; at < c->bytes; at += sizeof chunk) {
        uint64_t len = c->bytes - at < sizeof chunk ? c->bytes - at : sizeof chunk;
        sbloom_copy_words(chunk, (const uint8_t *)c->blocks + at, len,
                          sbloom_layout_word_bits(c->layout), 1);
        XXH3_64bits_update(&state, chunk, (size_t)len);
    }
    return XXH3_64bits_digest(&state);
}
