/* The simdbloom command: subcommand dispatch, --help and --version. */
#include <stdio.h>
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
    "\n"
    "'simdbloom COMMAND --help' describes one. 'simdbloom --version' names the version and the\n"
    "instruction set in use (SIMDBLOOM_ISA=scalar|avx2|avx512|neon forces one).\n";

static void print_version(void)
{
    const char *names[8];
    size_t count = sbloom_isa_list(names, 8);
    printf("simdbloom %s, isa %s (available:", sbloom_version_string(), sbloom_isa());
    for (size_t i = 0; i < count && i < 8; i++)
        printf(" %s", names[i]);
    printf(")\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(main_help, stderr);
        return EXIT_USAGE;
    }
    const char *command = argv[1];
    if (strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0 ||
        strcmp(command, "help") == 0) {
        fputs(main_help, stdout);
        return EXIT_OK;
    }
    if (strcmp(command, "--version") == 0 || strcmp(command, "version") == 0) {
        print_version();
        return EXIT_OK;
    }
    static const struct {
        const char *name;
        int (*run)(int, char **);
    } commands[] = {
        {"dedup", cmd_dedup}, {"build", cmd_build},   {"add", cmd_add},
        {"query", cmd_query}, {"info", cmd_info},     {"merge", cmd_merge},
        {"fold", cmd_fold},   {"plan", cmd_plan},     {"gen-urls", cmd_gen_urls},
        {"allow", cmd_allow}, {"remove", cmd_remove},
    };
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(command, commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "simdbloom: unknown command '%s' (see 'simdbloom --help')\n", command);
    return EXIT_USAGE;
}
