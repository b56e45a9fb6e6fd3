/* The simdbloom command: subcommand dispatch, --help and --version. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char main_help[] =
    "usage: simdbloom COMMAND [ARGS]\n"
    "\n"
    "Commands:\n"
    "  dedup      write each input line not seen before (the visited-URL table)\n"
    "  build      make a filter file from lines\n"
    "  add        add lines to a filter file\n"
    "  remove     take lines out of a counting filter (build --counting)\n"
    "  query      print the lines a filter holds (or not)\n"
    "  info       describe a filter file\n"
    "  merge      union of filter files\n"
    "  fold       shrink a filter to its items\n"
    "  allow      list known false positives beside a filter (query then reports them absent)\n"
    "  plan       filter size for N items at a false-positive rate, every layout\n"
    "  gen-urls   a deterministic stream of realistic URLs for large runs\n"
    "  bench      the speed of this build on this CPU, beside the memory's limit\n"
    "  push       merge a filter file into a fleet filter in Redis\n"
    "  pull       copy a fleet filter from Redis into a file\n"
    "\n"
    "'simdbloom COMMAND --help' describes one. 'simdbloom --version' (-V) names the version and\n"
    "the instruction set in use (SIMDBLOOM_ISA=scalar|avx2|avx512|avx512vbmi2|neon forces one).\n";

/* The instruction sets this binary runs here, space-separated, into buf. */
static const char *usable_isas(char *buf, size_t cap)
{
    const char *names[16];
    size_t count = sbloom_isa_list(names, 16), used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < count && i < 16 && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%s", i ? " " : "", names[i]);
    return buf;
}

/* SBLOOM_OK, or a one-line message naming SIMDBLOOM_ISA and its value and EXIT_RUNTIME when it
 * names an instruction set this binary cannot run here. */
static int check_isa_variable(void)
{
    const char *forced = getenv("SIMDBLOOM_ISA");
    if (!forced || !*forced || strcmp(forced, "auto") == 0 || sbloom_set_isa(forced) == SBLOOM_OK)
        return SBLOOM_OK;
    static const struct {
        const char *name, *feature;
    } known[] = {{"avx2", "AVX2"},
                 {"avx512", "AVX-512"},
                 {"avx512vbmi2", "AVX-512 with VBMI and VBMI2"},
                 {"neon", "NEON"},
                 {"avx2-simde", "the emulated AVX2 kernels (test builds only)"},
                 {"avx512-simde", "the emulated AVX-512 kernels (test builds only)"}};
    char usable[256];
    usable_isas(usable, sizeof usable);
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (strcmp(forced, known[i].name) == 0) {
            fprintf(stderr, "simdbloom: SIMDBLOOM_ISA=%s: this %s lacks %s (usable: %s)\n", forced,
                    strstr(known[i].feature, "kernels") ? "build" : "CPU or build",
                    known[i].feature, usable);
            return EXIT_RUNTIME;
        }
    }
    fprintf(stderr, "simdbloom: SIMDBLOOM_ISA=%s: unknown instruction set (usable: %s)\n", forced,
            usable);
    return EXIT_RUNTIME;
}

/* Output that could not be written is an error, whatever the command printed. */
static int finish_output(int rc)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        if (rc == EXIT_OK)
            fprintf(stderr, "simdbloom: cannot write output: %s\n", strerror(errno));
        return rc == EXIT_OK ? EXIT_RUNTIME : rc;
    }
    return rc;
}

static void print_version(void)
{
    char usable[256];
    /* the version alone as the second field, as scripts read it: "simdbloom 1.0.0 (...)" */
    printf("simdbloom %s (isa %s; available: %s)\n", sbloom_version_string(), sbloom_isa(),
           usable_isas(usable, sizeof usable));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "simdbloom: no command given (the commands: simdbloom --help)\n");
        return EXIT_USAGE;
    }
    const char *command = argv[1];
    if (strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0 ||
        strcmp(command, "help") == 0) {
        fputs(main_help, stdout);
        return finish_output(EXIT_OK);
    }
    if (check_isa_variable() != SBLOOM_OK)
        return EXIT_RUNTIME;
    if (strcmp(command, "--version") == 0 || strcmp(command, "-V") == 0 ||
        strcmp(command, "version") == 0) {
        print_version();
        return finish_output(EXIT_OK);
    }
    static const struct {
        const char *name;
        int (*run)(int, char **);
    } commands[] = {
        {"dedup", cmd_dedup}, {"build", cmd_build},   {"add", cmd_add},
        {"query", cmd_query}, {"info", cmd_info},     {"merge", cmd_merge},
        {"fold", cmd_fold},   {"plan", cmd_plan},     {"gen-urls", cmd_gen_urls},
        {"allow", cmd_allow}, {"remove", cmd_remove}, {"bench", cmd_bench},
#ifdef SIMDBLOOM_WITH_REDIS
        {"push", cmd_push},   {"pull", cmd_pull},
#endif
    };
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(command, commands[i].name) == 0)
            return finish_output(commands[i].run(argc - 1, argv + 1));
#ifndef SIMDBLOOM_WITH_REDIS
    if (strcmp(command, "push") == 0 || strcmp(command, "pull") == 0) {
        fprintf(stderr,
                "simdbloom: %s: this simdbloom was built without Redis support (build "
                "it with libhiredis-dev installed)\n",
                command);
        return EXIT_RUNTIME;
    }
#endif
    fprintf(stderr, "simdbloom: unknown command '%s' (see 'simdbloom --help')\n", command);
    return EXIT_USAGE;
}
