/*
 * Benchmark key sets. Pre-hashed keys are counter-based (key i = mix(seed, i)), so any inserted
 * key can be regenerated from its index and a 1 GiB filter needs no array of its keys. String
 * workloads are the real URL sample (read through `xz -dc` when compressed) or the generator's
 * URLs (src/cli/urlgen.c).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "workloads.h"
#include "../src/cli/urlgen.h"

uint64_t bench_key(uint64_t seed, uint64_t i)
{
    uint64_t state = seed * UINT64_C(0x9e3779b97f4a7c15) + i * UINT64_C(0xd1b54a32d192ed03);
    return url_splitmix(&state);
}

static int append(bench_strings *s, size_t *cap, size_t *text_len, size_t *text_cap,
                  const char *line, size_t len)
{
    if (s->count == *cap) {
        *cap = *cap ? *cap * 2 : 1024;
        size_t *lens = realloc(s->lens, *cap * sizeof *lens);
        if (!lens)
            return 0;
        s->lens = lens;
    }
    if (*text_len + len > *text_cap) {
        *text_cap = (*text_cap + len) * 2;
        char *text = realloc(s->text, *text_cap);
        if (!text)
            return 0;
        s->text = text;
    }
    memcpy(s->text + *text_len, line, len);
    s->lens[s->count++] = len;
    *text_len += len;
    return 1;
}

/* Pointers are set once all text is in place (the text buffer moves while it grows). */
static int finish(bench_strings *s)
{
    s->keys = malloc((s->count ? s->count : 1) * sizeof *s->keys);
    if (!s->keys)
        return 0;
    size_t offset = 0;
    for (size_t i = 0; i < s->count; i++) {
        s->keys[i] = s->text + offset;
        offset += s->lens[i];
    }
    return 1;
}

static FILE *open_urls(const char *path, int *piped)
{
    size_t len = strlen(path);
    *piped = len > 3 && strcmp(path + len - 3, ".xz") == 0;
    if (!*piped)
        return fopen(path, "rb");
    char command[4096];
    if (snprintf(command, sizeof command, "xz -dc '%s'", path) >= (int)sizeof command)
        return NULL;
    return popen(command, "r");
}

bench_strings *bench_strings_load(const bench_spec *spec, char *err, size_t errcap)
{
    bench_strings *s = calloc(1, sizeof *s);
    size_t cap = 0, text_len = 0, text_cap = 0;
    if (!s)
        goto fail;
    if (spec->workload == WL_URLS) {
        int piped;
        FILE *in = open_urls(spec->url_file, &piped);
        if (!in) {
            snprintf(err, errcap, "cannot read %s", spec->url_file);
            free(s);
            return NULL;
        }
        char *line = NULL;
        size_t line_cap = 0;
        ssize_t got;
        while ((got = getline(&line, &line_cap, in)) > 0) {
            if (line[got - 1] == '\n')
                got--;
            if (!append(s, &cap, &text_len, &text_cap, line, (size_t)got))
                break;
        }
        free(line);
        if (piped)
            pclose(in);
        else
            fclose(in);
    } else {
        url_buffer u;
        for (uint64_t i = 0; i < spec->generated; i++) {
            url_make(7, i, &u);
            if (!append(s, &cap, &text_len, &text_cap, u.text, u.len - 1))
                goto fail;
        }
    }
    if (s->count < 2 || !finish(s)) {
        snprintf(err, errcap, "workload has fewer than 2 keys, or out of memory");
        bench_strings_free(s);
        return NULL;
    }
    s->inserted = s->count / 2;
    return s;
fail:
    snprintf(err, errcap, "out of memory loading the workload");
    bench_strings_free(s);
    return NULL;
}

void bench_strings_free(bench_strings *s)
{
    if (!s)
        return;
    free(s->keys);
    free(s->lens);
    free(s->text);
    free(s);
}
