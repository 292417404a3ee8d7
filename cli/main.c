/* mblin command-line tool: a thin client of the public API. */
#include <stdio.h>
#include <string.h>

#include "mblin/mblin.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: mblin COMMAND [ARGS]\n"
               "  mblin --version\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("mblin %s\n", mbl_version());
        return 0;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "mblin: unknown command '%s' (try mblin --help)\n", argv[1]);
    return 2;
}
