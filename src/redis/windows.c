/*
 * The windowed fleet filter (plan version 3): "seen in the last W?" for a whole fleet. Each
 * period's generation is a set of shard strings of its own, "sbloom:{NAME#i}:PERIOD", which
 * Redis expires by itself (PEXPIREAT) once the window has passed it: nothing sweeps. A client
 * takes the current period from its own clock (sbloom_redis_advance); a round runs one script a
 * shard (rf_window_script), which reads the generations of periods current - G .. current + 1
 * (all in the shard's hash slot) and sets a key in the current one only when none holds it, so
 * that of several clients adding one key exactly one is told "new". The generation after the
 * current one is there for a client whose clock runs ahead: up to a quarter period of skew
 * between clients (and servers) keeps every promise (docs/DISTRIBUTED.md).
 */
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handle.h"

/*
 * KEYS: the shard's generations, oldest first; ARGV: 'a' (test-and-add) or 'c' (lookup), k, the
 * current generation's index in KEYS, the shard's 8-byte marker, the marker's byte offset, the
 * current generation's expiry (ms), then k bit offsets a key. A generation present must be a
 * string ending in the marker (else the error SBLOOMDAMAGED: fail closed); an absent one is
 * empty (expired). Returns a 0/1 a key: new (adds) or held (lookups); a key repeated in the call
 * is new at its first occurrence only.
 */
const char rf_window_script[] =
    "local ngen, k, cur = #KEYS, tonumber(ARGV[2]), tonumber(ARGV[3])\n"
    "local add, marker, at = ARGV[1] == 'a', ARGV[4], tonumber(ARGV[5])\n"
    "local live = {}\n"
    "for g = 1, ngen do\n"
    "  local t = redis.call('TYPE', KEYS[g])['ok']\n"
    "  if t == 'string' then\n"
    "    if redis.call('GETRANGE', KEYS[g], at, at + 7) ~= marker then\n"
    "      return redis.error_reply('SBLOOMDAMAGED ' .. KEYS[g])\n"
    "    end\n"
    "    live[g] = true\n"
    "  elseif t ~= 'none' then\n"
    "    return redis.error_reply('SBLOOMDAMAGED ' .. KEYS[g])\n"
    "  end\n"
    "end\n"
    "if add and not live[cur] then\n"
    "  redis.call('SETRANGE', KEYS[cur], at, marker)\n"
    "  redis.call('PEXPIREAT', KEYS[cur], ARGV[6])\n"
    "  live[cur] = true\n"
    "end\n"
    "local out, i = {}, 7\n"
    "while i + k - 1 <= #ARGV do\n"
    "  local held = 0\n"
    "  for g = 1, ngen do\n"
    "    if live[g] then\n"
    "      local all = 1\n"
    "      for b = 0, k - 1 do\n"
    "        if redis.call('GETBIT', KEYS[g], ARGV[i + b]) == 0 then all = 0 break end\n"
    "      end\n"
    "      if all == 1 then held = 1 break end\n"
    "    end\n"
    "  end\n"
    "  if add and held == 0 then\n"
    "    for b = 0, k - 1 do redis.call('SETBIT', KEYS[cur], ARGV[i + b], 1) end\n"
    "  end\n"
    "  out[#out + 1] = add and 1 - held or held\n"
    "  i = i + k\n"
    "end\n"
    "return out\n";

uint64_t rf_window_expiry_ms(const sbloom_redis_t *f, uint64_t q)
{
    uint64_t tolerance = f->period / 4 + (f->period % 4 != 0);
    return ((q + f->periods + 1) * f->period + tolerance) * 1000;
}

int rf_window_move(sbloom_redis_t *f, uint64_t now)
{
    uint64_t q = now / f->period;
    if (q == f->current)
        return 0;
    if (f->current != UINT64_MAX && f->items_pending) { /* counted in the period it ended */
        int rc = rf_flush_items(f);
        if (rc)
            return rc;
    }
    uint32_t n = GEN_KEYS(f);
    uint64_t first = q >= f->periods ? q - f->periods : 0; /* the oldest generation read */
    for (uint64_t s = 0; s < f->plan.shards; s++)
        for (uint32_t g = 0; g < n; g++)
            snprintf(f->gen_keys[s * n + g], GEN_KEY_CHARS, "sbloom:{%s#%llu}:%llu", f->name,
                     (unsigned long long)s, (unsigned long long)(first + g));
    for (uint32_t g = 0; g < n; g++)
        snprintf(f->gen_items_keys[g], GEN_KEY_CHARS, "sbloom:{%s}:items:%llu", f->name,
                 (unsigned long long)(first + g));
    snprintf(f->items_key, sizeof f->items_key, "%s", f->gen_items_keys[q - first]);
    snprintf(f->expire_arg, sizeof f->expire_arg, "%llu",
             (unsigned long long)rf_window_expiry_ms(f, q));
    snprintf(f->gen_count_arg, sizeof f->gen_count_arg, "%u", n);
    snprintf(f->current_arg, sizeof f->current_arg, "%u", (unsigned)(q - first + 1));
    f->current = q;
    return 0;
}

int sbloom_redis_advance(sbloom_redis_t *f, uint64_t now)
{
    if (!f)
        return SBLOOM_E_NULL;
    if (!f->periods)
        return rf_fail(f, SBLOOM_E_LAYOUT, "filter %s is not windowed", f->name);
    if (f->current != UINT64_MAX && now / f->period < f->current)
        return 0; /* a clock that went back: the period stays */
    return rf_window_move(f, now);
}

int sbloom_redis_get_window(sbloom_redis_t *f, sbloom_window *out)
{
    if (!f || !out)
        return SBLOOM_E_NULL;
    if (out->size < sizeof *out)
        return SBLOOM_E_INVALID;
    if (!f->periods)
        return rf_fail(f, SBLOOM_E_LAYOUT, "filter %s is not windowed", f->name);
    int rc = rf_flush_items(f);
    if (rc)
        return rc;
    out->periods = f->periods;
    out->generations = f->periods + 1;
    out->period = f->period;
    out->now = f->current * f->period;
    uint64_t first = f->current >= f->periods ? f->current - f->periods : 0;
    for (uint32_t i = 0; i <= SBLOOM_WINDOW_MAX_PERIODS; i++) {
        out->generation_start[i] = UINT64_MAX;
        out->generation_items[i] = 0;
    }
    /* the live generations, oldest first (the one ahead of this clock is not listed) */
    for (uint32_t g = 0; g + first <= f->current; g++) {
        uint32_t i = (uint32_t)(f->periods - (f->current - first) + g); /* young filters: later */
        redisReply *r;
        if ((rc = rf_run_one(f, &r, f->gen_items_keys[g], 2, "GET", f->gen_items_keys[g])))
            return rc;
        out->generation_start[i] = (first + g) * f->period;
        out->generation_items[i] = r->type == REDIS_REPLY_STRING ? strtoull(r->str, NULL, 10) : 0;
        freeReplyObject(r);
    }
    return 0;
}
