/*
 * fuzz_window: add / lookup / advance / save-and-load sequences on a windowed filter, held against
 * an exact model of when each key was added. A key the model has inside its window (added at t,
 * now < t + W) must be present, and its add must say "not new": a false negative inside the
 * window is a finding, whatever the clock does (stand still, creep, jump, go back). The filter's
 * time is the latest it was given (an advance to an earlier time changes nothing), so the model
 * keeps that time too.
 *
 * Input: periods (1 byte; its top bit: a window that grows, sbloom_create_windowed_scalable, from
 * 8 keys a window, so that 64 keys make it grow; else its next bit: a window of any family,
 * sbloom_create_opts with SBLOOM_OPTS_ANY_FAMILY, the fingerprint window of ages where it is
 * smaller, planned for the 64 keys), period (1 byte), then operations of 2 bytes: a kind and an
 * argument (a key of 64, or a step of the clock). The fingerprint window may refuse a key it has
 * no room for (SBLOOM_E_FULL, the key not added): never a key the model holds.
 */
#include "fuzz_common.h"

#define KEYS 64
#define NOT_ADDED UINT64_MAX

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in = {data, size, 0};
    uint32_t first = (uint32_t)fuzz_take(&in, 1), periods = 1 + (first & 0x3f) % 5;
    int growing = (first & 0x80) != 0, any = !growing && (first & 0x40) != 0;
    uint64_t period = 1 + fuzz_take(&in, 1) % 9;
    uint64_t window = periods * period, now = 1000, latest = now; /* latest: the filter's time */
    uint64_t added[KEYS];
    for (int i = 0; i < KEYS; i++)
        added[i] = NOT_ADDED;
    sbloom_t *f = NULL;
    sbloom_opts opts = sbloom_opts_init();
    opts.expected = KEYS;
    opts.fpp = 0.01;
    opts.periods = periods;
    opts.period = period;
    opts.now = now;
    opts.flags = SBLOOM_OPTS_ANY_FAMILY;
    if ((growing ? sbloom_create_windowed_scalable(&f, 8, 0.01, periods, period, now)
         : any   ? sbloom_create_opts(&f, &opts)
                 : sbloom_create_windowed(&f, 40, 0.01, periods, period, now)) != SBLOOM_OK)
        abort();
    while (!fuzz_done(&in)) {
        uint8_t kind = (uint8_t)fuzz_take(&in, 1), arg = (uint8_t)fuzz_take(&in, 1);
        uint64_t key = arg % KEYS;
        int inside = added[key] != NOT_ADDED && latest < added[key] + window;
        switch (kind % 6) {
        case 0: { /* one key */
            int fresh = sbloom_add_u64(f, key);
            if (any && fresh == SBLOOM_E_FULL && !inside)
                fresh = 0; /* refused, not added */
            if (fresh < 0 || (inside && fresh))
                abort();
            if (fresh)
                added[key] = latest;
            break;
        }
        case 1: /* lookup */
            if (inside && sbloom_contains_u64(f, key) != 1)
                abort();
            break;
        case 2: /* the clock: still, a little, or a jump; sometimes back */
            if (arg < 200)
                now += arg * period / 8;
            else if (arg < 250)
                now += (uint64_t)(arg - 199) * window;
            else
                now -= now > 3 * period ? 3 * period : 0;
            if (sbloom_advance(f, now) != SBLOOM_OK)
                abort();
            latest = now > latest ? now : latest;
            break;
        case 3: { /* a batch of the next keys, with repeats */
            uint64_t keys[8];
            uint8_t is_new[8];
            for (int i = 0; i < 8; i++)
                keys[i] = (key + (uint64_t)i * (arg % 3)) % KEYS;
            int64_t added_now = sbloom_add_if_new_u64s(f, keys, 8, is_new);
            if (added_now < 0 && !(any && added_now == SBLOOM_E_FULL))
                abort();
            for (int i = 0; i < 8; i++) {
                uint64_t k = keys[i];
                int held = added[k] != NOT_ADDED && latest < added[k] + window;
                if (held && is_new[i])
                    abort();
                if (is_new[i])
                    added[k] = latest;
            }
            break;
        }
        case 4: { /* the file: serialized, loaded back, and going on from the copy */
            size_t len = (size_t)sbloom_serialized_size(f);
            uint8_t *image = malloc(len);
            sbloom_t *back = NULL;
            if (!image || sbloom_serialize(f, image, len) != SBLOOM_OK ||
                sbloom_deserialize(&back, image, len) != SBLOOM_OK ||
                sbloom_items(back) != sbloom_items(f))
                abort();
            free(image);
            sbloom_free(f);
            f = back;
            break;
        }
        default: { /* the window's account: its generations' keys add up to the filter's */
            sbloom_window w = sbloom_window_init();
            uint64_t sum = 0;
            /* (the fingerprint window keeps finer periods where the period divides) */
            if (sbloom_get_window(f, &w) != SBLOOM_OK || w.periods * w.period != window ||
                w.generations != w.periods + 1 || sbloom_is_growing(f) != growing ||
                sbloom_stages(f) % w.generations != 0)
                abort();
            for (uint32_t i = 0; i < w.generations; i++)
                sum += w.generation_items[i];
            if (sum != sbloom_items(f))
                abort();
            break;
        }
        }
    }
    /* at the end, every key the model holds is present */
    for (uint64_t k = 0; k < KEYS; k++)
        if (added[k] != NOT_ADDED && latest < added[k] + window && sbloom_contains_u64(f, k) != 1)
            abort();
    sbloom_free(f);
    return 0;
}
