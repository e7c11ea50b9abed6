/* SPDX-License-Identifier: MIT */
/* A heap that grows in known steps, for the live view's test
 * (tests/e2e/serve_live.sh): stdio's buffers are its own (setvbuf: none
 * made on the heap). It says "start" and waits for a line before its first
 * allocation (the page is opened then), and its last allocation before it
 * says "ready" is a
 * marker block of MARK_BYTES, kept: once the trace holds the marker it
 * holds every allocation before it, and the heap stays as it is (the
 * base) until the program reads a line. Then step i allocates i blocks of
 * 1 MiB (the heap is base + i(i+1)/2 MiB after it), says "step i" on
 * stdout and waits for a line on stdin before the next; after the last
 * step it frees step 1's block and ends, leaking the rest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEPS 4
#define MIB (1024 * 1024)
#define MARK_BYTES 123457 /* tests/e2e/serve_live.py's MARK */

/* Written through a volatile pointer: no compiler drops the block. */
static char *volatile mark;

int main(void)
{
    static char *blocks[STEPS * STEPS];
    static char in[BUFSIZ], out[BUFSIZ];
    char line[64];
    int n = 0;

    setvbuf(stdin, in, _IOFBF, sizeof(in));
    setvbuf(stdout, out, _IOFBF, sizeof(out));
    printf("start\n");
    fflush(stdout);
    if (!fgets(line, sizeof(line), stdin))
        return 2;
    mark = malloc(MARK_BYTES);
    if (!mark)
        return 1;
    printf("ready\n");
    fflush(stdout);
    if (!fgets(line, sizeof(line), stdin))
        return 2;
    for (int i = 1; i <= STEPS; i++) {
        for (int k = 0; k < i; k++) {
            blocks[n] = malloc(MIB);
            if (!blocks[n])
                return 1;
            memset(blocks[n], i, MIB);
            n++;
        }
        printf("step %d\n", i);
        fflush(stdout);
        if (!fgets(line, sizeof(line), stdin))
            return 2;
    }
    free(blocks[0]);
    return 0;
}
