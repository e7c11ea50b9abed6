/* SPDX-License-Identifier: MIT */
/* debuginfod, loaded with dlopen on first use: memscribe neither links nor
 * needs libdebuginfod, and nothing here runs unless the user's environment
 * sets DEBUGINFOD_URLS (ana_sym_find.c checks). The four functions used are
 * the stable public API of <elfutils/debuginfod.h>. */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>

#include "analysis/sym/ana_sym_internal.h"

typedef struct debuginfod_client debuginfod_client;
typedef debuginfod_client *begin_fn(void);
typedef int find_fn(debuginfod_client *, const unsigned char *, int, char **);
typedef void end_fn(debuginfod_client *);

struct dfd_api {
    void *lib;
    begin_fn *begin;
    find_fn *find_debuginfo;
    find_fn *find_executable;
    end_fn *end;
};

/* Loaded once and kept: libcurl, below libdebuginfod, does not expect to
 * be unloaded and reloaded. */
static struct dfd_api loaded_api;

static int load_api(struct dfd_api **out)
{
    struct dfd_api *api = &loaded_api;

    *out = api;
    if (api->lib)
        return 0;
    api->lib = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!api->lib)
        return -ENOSYS;
    api->begin = (begin_fn *)dlsym(api->lib, "debuginfod_begin");
    api->find_debuginfo = (find_fn *)dlsym(api->lib, "debuginfod_find_debuginfo");
    api->find_executable = (find_fn *)dlsym(api->lib, "debuginfod_find_executable");
    api->end = (end_fn *)dlsym(api->lib, "debuginfod_end");
    if (!api->begin || !api->find_debuginfo || !api->find_executable || !api->end) {
        dlclose(api->lib);
        api->lib = NULL;
        return -ENOSYS;
    }
    return 0;
}

int ana_sym_debuginfod_find(const uint8_t *build_id, uint32_t build_id_len, bool want_executable,
                            char **path)
{
    struct dfd_api *api;
    int rc = load_api(&api);

    *path = NULL;
    if (rc)
        return rc;
    debuginfod_client *c = api->begin();
    if (!c)
        return -ENOMEM;
    find_fn *find = want_executable ? api->find_executable : api->find_debuginfo;
    int fd = find(c, build_id, (int)build_id_len, path);
    api->end(c);
    if (fd < 0) {
        free(*path);
        *path = NULL;
    }
    return fd;
}
