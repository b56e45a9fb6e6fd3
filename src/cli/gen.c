/* simdbloom gen-urls: writes the generator's URLs (urlgen.c), with repeats on request. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "urlgen.h"

static const char gen_help[] =
    "usage: simdbloom gen-urls COUNT [--seed S] [--repeat FRACTION]\n"
    "\n"
    "Writes COUNT realistic URLs, one per line, the same for the same arguments everywhere.\n"
    "  --seed S           which stream (default 1)\n"
    "  --repeat FRACTION  share of lines that repeat an earlier URL, as a crawler's discovered\n"
    "                     links do (default 0: every line distinct)\n"
    "Example: simdbloom gen-urls 10M --repeat 0.7 > stream.txt\n";

int cmd_gen_urls(int argc, char **argv)
{
    cli_options o;
    int rc = parse_options("gen-urls", gen_help, argc, argv, OPT_GEN, &o);
    if (rc >= 0)
        return rc;
    if (o.nargs == 0)
        return usage_error("gen-urls", "COUNT is missing");
    if (o.nargs > 1)
        return usage_error("gen-urls", "unexpected argument '%s'", o.args[1]);
    uint64_t count, seed = o.seed;
    double repeat = o.repeat;
    if (!parse_count("COUNT", o.args[0], &count))
        return EXIT_USAGE;

    static char out_buffer[1 << 20];
    setvbuf(stdout, out_buffer, _IOFBF, sizeof out_buffer);
    uint64_t choice = seed * UINT64_C(0x2545f4914f6cdd1d);
    uint64_t repeat_threshold = (uint64_t)(repeat * 4294967296.0);
    uint64_t distinct = 0;
    url_buffer url;
    for (uint64_t line = 0; line < count; line++) {
        uint64_t index;
        if (distinct > 0 && (url_splitmix(&choice) >> 32) < repeat_threshold)
            index = (uint64_t)(((url_splitmix(&choice) >> 32) * distinct) >> 32) % distinct;
        else
            index = distinct++;
        url_make(seed, index, &url);
        if (fwrite(url.text, 1, url.len, stdout) != url.len)
            break;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        perror("simdbloom: cannot write output");
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}
