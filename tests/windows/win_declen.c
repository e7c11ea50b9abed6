/* SPDX-License-Identifier: MIT */
/* Test helper: for each line of hex bytes on stdin, print a line of the
 * lengths win_x86_decode finds for its first instructions ("E<errno>" where
 * it refuses), up to the first one that ends the function.
 * Usage: win_declen 64|32 */
#include "windows/win_x86_decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INSNS 6

static void decode_line(const char *line, int mode64)
{
    unsigned char b[64];
    size_t n = 0, pos = 0;
    unsigned x;
    int used;

    while (n < sizeof(b) && sscanf(line, "%x%n", &x, &used) == 1) {
        b[n++] = (unsigned char)x;
        line += used;
    }
    for (int k = 0; k < MAX_INSNS && pos < n; k++) {
        struct win_insn in;
        int rc = win_x86_decode(b + pos, n - pos, mode64, &in);
        if (rc) {
            printf("E%d ", -rc);
            break;
        }
        printf("%u ", in.len);
        pos += in.len;
        if (in.ends)
            break;
    }
    putchar('\n');
}

int main(int argc, char **argv)
{
    char line[512];

    if (argc != 2 || (strcmp(argv[1], "64") && strcmp(argv[1], "32"))) {
        fprintf(stderr, "usage: win_declen 64|32 < hex\n");
        return 2;
    }
    while (fgets(line, sizeof(line), stdin))
        decode_line(line, strcmp(argv[1], "64") == 0);
    return 0;
}
