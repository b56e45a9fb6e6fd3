/* Reading Redis's replies: the slot map, redirects, error words (src/redis/replies.h). */
#include "replies.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rc_error_is(const redisReply *r, const char *word)
{
    size_t n = strlen(word);
    return r->type == REDIS_REPLY_ERROR && r->str && r->len >= n && strncmp(r->str, word, n) == 0 &&
           (r->len == n || r->str[n] == ' ');
}

int rc_slot_map(const redisReply *r, const char *asked_host, rc_node_of node_of, void *ctx,
                int16_t map[RC_SLOTS])
{
    if (r->type != REDIS_REPLY_ARRAY)
        return -1;
    for (int s = 0; s < RC_SLOTS; s++)
        map[s] = -1;
    for (size_t e = 0; e < r->elements; e++) {
        const redisReply *range = r->element[e];
        if (range->type != REDIS_REPLY_ARRAY || range->elements < 3 ||
            range->element[0]->type != REDIS_REPLY_INTEGER ||
            range->element[1]->type != REDIS_REPLY_INTEGER ||
            range->element[2]->type != REDIS_REPLY_ARRAY || range->element[2]->elements < 2)
            continue;
        const redisReply *master = range->element[2];
        if (master->element[0]->type != REDIS_REPLY_STRING ||
            master->element[1]->type != REDIS_REPLY_INTEGER)
            continue;
        /* Slots outside the 16,384 (a range from LLONG_MIN once meant a loop without end). */
        long long from = range->element[0]->integer, to = range->element[1]->integer;
        long long port = master->element[1]->integer;
        if (from < 0 || to >= RC_SLOTS || from > to || port < 1 || port > 65535)
            continue;
        /* An empty host is the node we asked; "?" an endpoint it does not know. */
        const char *host = master->element[0]->len ? master->element[0]->str : asked_host;
        if (!host || !host[0] || strcmp(host, "?") == 0 ||
            strlen(host) != (master->element[0]->len ? master->element[0]->len : strlen(host)))
            continue; /* (a host with a NUL byte inside is no host) */
        int node = node_of(ctx, host, (int)port);
        if (node < 0)
            continue;
        for (long long s = from; s <= to; s++)
            map[s] = (int16_t)node;
    }
    int missing = 0;
    for (int s = 0; s < RC_SLOTS; s++)
        missing += map[s] < 0;
    return missing;
}

int rc_redirect_target(const char *text, size_t len, char *host, size_t cap, int *port)
{
    char line[320];
    if (len >= sizeof line || memchr(text, '\0', len))
        return -1;
    memcpy(line, text, len);
    line[len] = '\0';
    const char *sp = strchr(line, ' ');
    sp = sp ? strchr(sp + 1, ' ') : NULL;
    if (!sp)
        return -1;
    char *colon = strrchr(sp + 1, ':');
    if (!colon || colon == sp + 1)
        return -1;
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || *end || p < 1 || p > 65535 || (size_t)(colon - (sp + 1)) >= cap)
        return -1;
    memcpy(host, sp + 1, (size_t)(colon - (sp + 1)));
    host[colon - (sp + 1)] = '\0';
    *port = (int)p;
    return 0;
}
