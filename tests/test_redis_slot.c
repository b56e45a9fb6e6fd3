/* The cluster client's key slots (src/redis/cluster.c rc_slot) against slots Redis 7.0.15 gave
 * for the same keys (redis-cli CLUSTER KEYSLOT), hash-tag rules included. A wrong slot would not
 * show in the live tests: every command would be redirected (MOVED) and still succeed. */
#include <string.h>

#include "simdbloom.h"
#include "check.h"
#include "cluster.h"

static int slot_of(const char *key)
{
    return rc_slot(key, strlen(key));
}

int main(void)
{
    static const struct {
        const char *key;
        int slot;
    } vectors[] = {
        {"123456789", 12739}, /* CRC16/XMODEM check value 0x31C3 */
        {"foo", 12182},
        {"somekey", 11058},
        {"hello", 866},
        {"{user1000}.following", 3443}, /* the tag only */
        {"{user1000}.followers", 3443},
        {"foo{}{bar}", 8363},    /* empty tag: the whole key */
        {"foo{{bar}}zap", 4015}, /* tag "{bar" */
        {"foo{bar}{zap}", 5061}, /* the first tag */
        {"sbloom:{visited#0}", 15777},
        {"sbloom:{visited#63}", 10856},
        {"sbloom:{visited}", 14202},
    };
    for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
        int got = slot_of(vectors[i].key);
        if (got != vectors[i].slot)
            fprintf(stderr, "  %s: slot %d, Redis says %d\n", vectors[i].key, got, vectors[i].slot);
        CHECK(got == vectors[i].slot);
    }
    char text[32];
    CHECK(rc_u64_text(text, 0) == 1 && strcmp(text, "0") == 0);
    CHECK(rc_u64_text(text, UINT64_MAX) == 20 && strcmp(text, "18446744073709551615") == 0);
    return check_report();
}
