/*
 * The progress line of a command reading lines: on standard error, about once a second, when it
 * is a terminal: lines, bytes, rate, and an ETA when the total input size is known.
 */
#include <stdio.h>

#include "stream.h"

void stream_progress(stream_state *s, int final)
{
    double now = now_seconds();
    if (!final && now - s->last_shown < 1.0)
        return;
    s->last_shown = now;
    double elapsed = now - s->started;
    double rate = elapsed > 0 ? (double)s->bytes / elapsed : 0.0;
    char done[32], speed[32];
    fprintf(stderr, "\rsimdbloom %s: %llu lines, %s, %s/s", s->command,
            (unsigned long long)s->lines, human_bytes(s->bytes, done, sizeof done),
            human_bytes((uint64_t)rate, speed, sizeof speed));
    if (s->total_bytes && rate > 0 && s->bytes <= s->total_bytes)
        fprintf(stderr, ", %.0f%%, ETA %.0f s   ",
                100.0 * (double)s->bytes / (double)s->total_bytes,
                (double)(s->total_bytes - s->bytes) / rate);
    else
        fprintf(stderr, "   ");
    if (final)
        fputc('\n', stderr);
}
