/* SPDX-License-Identifier: MIT */
/* Before recording: find the program on PATH and refuse what LD_PRELOAD
 * cannot reach, a static program (no PT_INTERP) or a setuid/setgid one
 * (ld.so ignores LD_PRELOAD paths with slashes there). Scripts are judged by
 * their "#!" interpreter. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder/rec_internal.h"
#include "recorder/rec_shebang.h"

char *rec_resolve_command(const char *cmd)
{
    const char *path = getenv("PATH");
    size_t cmd_len = strlen(cmd);

    if (strchr(cmd, '/'))
        return strdup(cmd);
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t dir_len = colon ? (size_t)(colon - path) : strlen(path);
        char *full = malloc(dir_len + cmd_len + 3);
        struct stat st;

        if (!full)
            return NULL;
        if (dir_len == 0)
            snprintf(full, dir_len + cmd_len + 3, "./%s", cmd);
        else
            snprintf(full, dir_len + cmd_len + 3, "%.*s/%s", (int)dir_len, path, cmd);
        if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0)
            return full;
        free(full);
        path += dir_len + (colon ? 1 : 0);
    }
    errno = ENOENT;
    return NULL;
}

/* Does the ELF file have a PT_INTERP? 1 yes, 0 no, -1 not ELF/unreadable. */
static int rec_has_interp(int fd)
{
    unsigned char ident[EI_NIDENT];
    union {
        Elf64_Ehdr e64;
        Elf32_Ehdr e32;
    } eh;
    uint64_t phoff;
    uint16_t phnum, phentsize;

    if (pread(fd, ident, sizeof(ident), 0) != (ssize_t)sizeof(ident) ||
        memcmp(ident, ELFMAG, SELFMAG) != 0)
        return -1;
    if (ident[EI_CLASS] != ELFCLASS64 && ident[EI_CLASS] != ELFCLASS32)
        return -1;
    /* One header read for either class, its fields taken from its own. */
    bool is64 = ident[EI_CLASS] == ELFCLASS64;
    size_t eh_size = is64 ? sizeof(eh.e64) : sizeof(eh.e32);

    if (pread(fd, &eh, eh_size, 0) != (ssize_t)eh_size)
        return -1;
    phoff = is64 ? eh.e64.e_phoff : eh.e32.e_phoff;
    phnum = is64 ? eh.e64.e_phnum : eh.e32.e_phnum;
    phentsize = is64 ? eh.e64.e_phentsize : eh.e32.e_phentsize;
    for (uint16_t i = 0; i < phnum; i++) {
        uint32_t type;

        if (pread(fd, &type, sizeof(type), (off_t)(phoff + (uint64_t)i * phentsize)) !=
            (ssize_t)sizeof(type))
            return -1;
        if (type == PT_INTERP)
            return 1;
    }
    return 0;
}

int rec_check_program(const char *path, char *msg, size_t msg_size)
{
    char cur[512], next[512];
    struct stat st;
    int fd, rc;

    for (int depth = 0; depth < 4; depth++) {
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) != 0) {
            snprintf(msg, msg_size, "%s: %s", path, strerror(errno));
            if (fd >= 0)
                close(fd);
            return -1;
        }
        if (st.st_mode & (S_ISUID | S_ISGID)) {
            snprintf(msg, msg_size,
                     "%s is set-user-ID or set-group-ID; the loader ignores LD_PRELOAD for it, "
                     "so it cannot be traced",
                     path);
            close(fd);
            return -1;
        }
        rc = rec_shebang_next(path, next, sizeof(next));
        if (rc < 0) {
            snprintf(msg, msg_size, rc == -1 ? "%s: empty \"#!\" line" : "%s: \"#!\" path too long",
                     path);
            close(fd);
            return -1;
        }
        if (rc == 1) { /* follow the program that runs the script */
            close(fd);
            memcpy(cur, next, sizeof(cur));
            path = cur;
            continue;
        }
        rc = rec_has_interp(fd);
        close(fd);
        if (rc == 0) {
            snprintf(msg, msg_size,
                     "%s is statically linked; memscribe traces through LD_PRELOAD, which a "
                     "static program never loads",
                     path);
            return -1;
        }
        if (rc < 0) {
            snprintf(msg, msg_size, "%s is not an ELF program or a \"#!\" script", path);
            return -1;
        }
        return 0;
    }
    snprintf(msg, msg_size, "%s: too many nested \"#!\" interpreters", path);
    return -1;
}
