/* simdbloom allow: keys the filter wrongly reports present, kept exactly in FILTER.allow. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"

static const char allow_help[] =
    "usage: simdbloom allow [--normalize url] [--no-wait] [--quiet] FILTER [FILE...]\n"
    "\n"
    "Adds each input line to FILTER.allow, the exact list of known false positives beside the\n"
    "filter (for example URLs the filter called seen that a fetch proved new). 'simdbloom query'\n"
    "then reports them absent. The list is consulted only for lines the filter reports present,\n"
    "and saved crash-safely. Use the same --normalize as when the filter was built.\n"
    "One writer at a time: the command holds a lock on FILTER.lock (created beside the filter)\n"
    "from load to save; another writer waits for it (saying so on a terminal), or with\n"
    "--no-wait fails at once (exit 1) naming the holder. Readers (query, info) never wait.\n"

    "Example: simdbloom allow seen.sbloom proven-new.txt\n";

static int allow_batch(void *ctx, const line_batch *b)
{
    sbloom_allowlist_t *allow = ctx;
    for (size_t i = 0; i < b->n; i++) {
        int rc = sbloom_allowlist_add(allow, b->keys[i], b->key_lens[i]);
        if (rc < 0) {
            fprintf(stderr, "simdbloom: %s\n", sbloom_strerror(rc));
            return EXIT_RUNTIME;
        }
    }
    return EXIT_OK;
}

int cmd_allow(int argc, char **argv)
{
    cli_options o;
    int rc =
        parse_options("allow", allow_help, argc, argv, OPT_QUIET | OPT_NORMALIZE | OPT_NO_WAIT, &o);
    if (rc >= 0)
        return rc;
    if (o.nargs < 1)
        return usage_error("allow", "FILTER is missing");
    int lock;
    if ((rc = filter_lock(o.args[0], "allow", LOCK_FILTER_EXCLUSIVE, o.no_wait, o.quiet, &lock)) !=
        EXIT_OK)
        return rc;
    sbloom_t *filter; /* the filter must exist: its hash is the one keys would have */
    if ((rc = load_for_reading(o.args[0], &filter)) != SBLOOM_OK) {
        filter_unlock(lock);
        return filter_error("open", o.args[0], rc);
    }
    char *path = allowlist_path(o.args[0]);
    sbloom_allowlist_t *allow = NULL;
    if (!path) {
        rc = SBLOOM_E_NOMEM;
    } else if (access(path, F_OK) == 0) {
        rc = sbloom_allowlist_load(&allow, path);
    } else {
        rc = sbloom_allowlist_create(&allow);
    }
    if (rc != SBLOOM_OK) {
        filter_error("load", path ? path : "the allow-list", rc);
        free(path);
        sbloom_free(filter);
        filter_unlock(lock);
        return EXIT_RUNTIME;
    }
    uint64_t before = sbloom_allowlist_count(allow);
    stream_state s = {.command = "allow",
                      .quiet = o.quiet,
                      .normalize = o.normalize,
                      .threads = 1,
                      .filter = filter};
    if (!o.quiet)
        stale_temporaries_warn(path);
    rc = stream_inputs(&s, o.nargs - 1, o.args + 1, allow_batch, allow);
    if (rc == EXIT_OK) {
        int saved = sbloom_allowlist_save(allow, path);
        if (saved != SBLOOM_OK)
            rc = filter_error("save", path, saved);
        else if (o.summary)
            fprintf(stderr, "simdbloom allow: %llu new keys, %llu in %s\n",
                    (unsigned long long)(sbloom_allowlist_count(allow) - before),
                    (unsigned long long)sbloom_allowlist_count(allow), path);
    }
    sbloom_allowlist_free(allow);
    sbloom_free(filter);
    free(path);
    filter_unlock(lock);
    return rc;
}
