/*
 * The windowed fleet filter (plan version 3): "seen in the last W?" for a whole fleet. Each
 * period's generation is a set of shard strings of its own, "sbloom:{NAME#i}:PERIOD", which
 * Redis expires by itself (PEXPIREAT) once the window has passed it: nothing sweeps. A client
 * takes the current period from its own clock (sbloom_redis_advance); a round runs one script a
 * shard (rf_window_script), which reads the generations of periods current - G .. current + 1
 * (all in the shard's hash slot) and sets a key in the current one only when none holds it, so
 * that of several clients adding one key exactly one is told "new". The generation after the
 * current one is there for a client whose clock runs ahead: up to a quarter period of skew
 * between clients (and servers) keeps every promise (docs/DISTRIBUTED.md). That skew is checked:
 * when a client opens the filter (TIME on the plan's node) and in every round (the script reads
 * its server's TIME), so that a client whose clock is off fails (SBLOOM_REDIS_E_CLOCK, naming
 * both clocks) before it writes a key, least of all one whose expiry is already past. And a
 * generation this client found or made in a round must still be there while the window reads it
 * (nothing but a deletion or an eviction removes it before its expiry): a round that finds it gone
 * fails, as for a damaged shard, rather than make it anew, empty, and take its keys for new.
 */
#include <inttypes.h>
#include <time.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handle.h"

/*
 * KEYS: the shard's generations, oldest first; ARGV: 'a' (test-and-add) or 'c' (lookup), k, the
 * current generation's index in KEYS, the shard's 8-byte marker, the marker's byte offset, the
 * current generation's expiry (ms), the client's clock (ms), the clocks' tolerance (ms), a flag a
 * generation ('1': it must be there), then k bit offsets a key. The server's clock further than
 * the tolerance from the client's, or past the expiry an add would set: the error SBLOOMCLOCK
 * with the server's (ms). A generation present must be a string ending in the marker (else the
 * error SBLOOMDAMAGED: fail closed); an absent one is empty (expired), unless it must be there
 * (SBLOOMVANISHED). Returns a 0/1 a key: new (adds) or held (lookups); a key repeated in the
 * call is new at its first occurrence only. Nothing is written before every check has passed.
 */
const char rf_window_script[] =
    "local ngen, k, cur = #KEYS, tonumber(ARGV[2]), tonumber(ARGV[3])\n"
    "local add, marker, at = ARGV[1] == 'a', ARGV[4], tonumber(ARGV[5])\n"
    "local time = redis.call('TIME')\n"
    "local server = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)\n"
    "if math.abs(server - tonumber(ARGV[7])) > tonumber(ARGV[8]) or\n"
    "   (add and tonumber(ARGV[6]) <= server) then\n"
    "  return redis.error_reply('SBLOOMCLOCK ' .. string.format('%.0f', server))\n"
    "end\n"
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
    "  elseif string.sub(ARGV[9], g, g) == '1' then\n"
    "    return redis.error_reply('SBLOOMVANISHED ' .. KEYS[g])\n"
    "  end\n"
    "end\n"
    "if add and not live[cur] then\n"
    "  redis.call('SETRANGE', KEYS[cur], at, marker)\n"
    "  redis.call('PEXPIREAT', KEYS[cur], ARGV[6])\n"
    "  live[cur] = true\n"
    "end\n"
    "local out, i = {}, 10\n"
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

uint64_t rf_window_tolerance(const sbloom_redis_t *f)
{
    return f->period / 4 + (f->period % 4 != 0);
}

uint64_t rf_window_expiry_ms(const sbloom_redis_t *f, uint64_t q)
{
    return ((q + f->periods + 1) * f->period + rf_window_tolerance(f)) * 1000;
}

/* The largest time, in seconds, whose milliseconds Redis takes (a signed 64-bit count). */
#define LAST_SECOND ((uint64_t)INT64_MAX / 1000)

int rf_window_fits(sbloom_redis_t *f, uint32_t periods, uint64_t period, uint64_t now)
{
    /* the last expiry a client running for a thousand windows from now could set:
     * (q + G + 2) x P + P / 4 + 1, q = now / P + 1000 (G + 1) */
    uint64_t reach = (uint64_t)periods + 2 + 1000 * ((uint64_t)periods + 1);
    if (period > LAST_SECOND / 2 || now / period > LAST_SECOND / period ||
        now / period + reach > (LAST_SECOND - period) / period)
        return rf_fail(f, SBLOOM_E_INVALID,
                       "a window of %u periods of %llu s is too long: its keys' expiry times (in "
                       "ms since the epoch) would not fit Redis's; nothing was written",
                       periods, (unsigned long long)period);
    return 0;
}

/* t (seconds since the epoch) as "2026-11-29 10:00:00 UTC". */
static void utc_text(uint64_t t, char *out, size_t cap)
{
    time_t when = (time_t)(t > (uint64_t)INT64_MAX ? INT64_MAX : t);
    struct tm tm;
    if (!gmtime_r(&when, &tm) || strftime(out, cap, "%Y-%m-%d %H:%M:%S UTC", &tm) == 0)
        snprintf(out, cap, "%llu s after the epoch", (unsigned long long)t);
}

/* The error for clocks apart: this client's now and the server's (seconds). */
static int clocks_apart(sbloom_redis_t *f, uint64_t client, uint64_t server)
{
    char mine[64], theirs[64];
    utc_text(client, mine, sizeof mine);
    utc_text(server, theirs, sizeof theirs);
    uint64_t apart = client > server ? client - server : server - client;
    return rf_fail(f, SBLOOM_REDIS_E_CLOCK,
                   "filter %s: this client's clock says %s and the Redis server's %s: %llu s "
                   "apart, more than the quarter period (%llu s) a window allows; nothing was "
                   "written. Set the clocks right (NTP) and run again",
                   f->name, mine, theirs, (unsigned long long)apart,
                   (unsigned long long)rf_window_tolerance(f));
}

int rf_window_check_clock(sbloom_redis_t *f, uint64_t now)
{
    redisReply *r;
    int rc = rf_run_one(f, &r, f->meta_key, 1, "TIME");
    if (rc)
        return rc;
    uint64_t server = 0;
    int ok = r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
             r->element[0]->type == REDIS_REPLY_STRING;
    if (ok)
        server = strtoull(r->element[0]->str, NULL, 10);
    freeReplyObject(r);
    if (!ok)
        return rf_fail(f, SBLOOM_REDIS_E_PROTOCOL, "filter %s: TIME gave no time", f->name);
    uint64_t apart = now > server ? now - server : server - now; /* (both in whole seconds) */
    return apart > rf_window_tolerance(f) + 1 ? clocks_apart(f, now, server) : 0;
}

int rf_window_clock_failed(sbloom_redis_t *f, const char *reply)
{
    const char *space = strchr(reply, ' ');
    uint64_t server_ms = space ? strtoull(space + 1, NULL, 10) : 0;
    return clocks_apart(f, f->now, server_ms / 1000);
}

const char *rf_window_must_live(sbloom_redis_t *f, uint64_t s)
{
    uint32_t n = GEN_KEYS(f);
    uint64_t first = f->current >= f->periods ? f->current - f->periods : 0;
    char *flags = f->must_live + s * (n + 1);
    for (uint32_t g = 0; g < n; g++)
        flags[g] = f->made[s * n + (first + g) % n] == first + g ? '1' : '0';
    flags[n] = '\0';
    return flags;
}

void rf_window_made(sbloom_redis_t *f, uint64_t s)
{
    uint32_t n = GEN_KEYS(f);
    f->made[s * n + f->current % n] = f->current;
}

/* The client's clock as the script's arguments. */
static void set_clock_args(sbloom_redis_t *f, uint64_t now)
{
    f->now = now;
    snprintf(f->now_arg, sizeof f->now_arg, "%llu", (unsigned long long)now * 1000);
    /* (the client's clock is read in whole seconds: a second more for that) */
    snprintf(f->tolerance_arg, sizeof f->tolerance_arg, "%llu",
             (unsigned long long)(rf_window_tolerance(f) + 1) * 1000);
}

int rf_window_move(sbloom_redis_t *f, uint64_t now)
{
    uint64_t q = now / f->period;
    set_clock_args(f, now);
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
    if (f->current != UINT64_MAX && now / f->period < f->current) {
        set_clock_args(f, now); /* a clock that went back: the period stays (the next round
                                   checks this clock against the server's) */
        return 0;
    }
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
