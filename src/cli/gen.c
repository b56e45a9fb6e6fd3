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
    uint64_t count = 0, seed = 1;
    double repeat = 0.0;
    int have_count = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *value;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            fputs(gen_help, stdout);
            return EXIT_OK;
        } else if (is_option(arg, "--seed")) {
            if (!(value = option_value(argc, argv, &i, "--seed")) ||
                !parse_count("--seed", value, &seed))
                return EXIT_USAGE;
        } else if (is_option(arg, "--repeat")) {
            if (!(value = option_value(argc, argv, &i, "--repeat")) ||
                !parse_fraction("--repeat", value, &repeat))
                return EXIT_USAGE;
        } else if (arg[0] == '-') {
            return usage_error("gen-urls", "unknown option '%s'", arg);
        } else if (!have_count) {
            if (!parse_count("COUNT", arg, &count))
                return EXIT_USAGE;
            have_count = 1;
        } else {
            return usage_error("gen-urls", "unexpected argument '%s'", arg);
        }
    }
    if (!have_count)
        return usage_error("gen-urls", "COUNT is missing");

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
