/* SPDX-License-Identifier: MIT */
/* Replay the fuzz corpus (tests/fuzz/corpus: malformed traces and every
 * crash the fuzzer ever found) through the fuzz target's code in the
 * normal build, checksums checked, under ASan and UBSan. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#ifndef MS_CORPUS_DIR
#error "MS_CORPUS_DIR must name tests/fuzz/corpus"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void test_corpus(void **state)
{
    DIR *d = opendir(MS_CORPUS_DIR);
    struct dirent *de;
    int nr = 0;

    (void)state;
    assert_non_null(d);
    while ((de = readdir(d))) {
        char path[1024];
        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", MS_CORPUS_DIR, de->d_name);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        uint8_t *buf = malloc(1 << 20);
        assert_non_null(buf);
        size_t n = fread(buf, 1, 1 << 20, f);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, n);
        free(buf);
        nr++;
    }
    closedir(d);
    assert_true(nr >= 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
