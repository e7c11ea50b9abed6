/* SPDX-License-Identifier: MIT */
/* The MSF container a PDB is stored in (docs/windows.md, "Symbols"): a
 * superblock, a stream directory whose blocks are listed in a block map,
 * and numbered streams made of fixed-size blocks anywhere in the file.
 * Every size and block index is checked against the file: a truncated or
 * corrupt file is an error, never a read outside it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sym/ana_sym_internal.h"

static const char msf_magic[32] = "Microsoft C/C++ MSF 7.00\r\n\x1a"
                                  "DS\0\0\0";

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Copy the blocks listed at list[0..nr) into one buffer of size bytes. */
static int gather(const struct ana_sym_msf *m, const uint8_t *list, uint32_t size, uint8_t **out,
                  const char **why)
{
    uint32_t nr = (uint32_t)(((uint64_t)size + m->block_size - 1) / m->block_size);
    uint8_t *buf = malloc(size ? size : 1);

    if (!buf)
        return -ENOMEM;
    for (uint32_t i = 0; i < nr; i++) {
        uint32_t block = rd32(list + 4 * (size_t)i);
        uint64_t off = (uint64_t)block * m->block_size;
        uint32_t n =
            size - i * m->block_size < m->block_size ? size - i * m->block_size : m->block_size;
        if (block >= m->nr_blocks || off + n > m->size) {
            free(buf);
            *why = "a stream block lies past the end of the file (truncated?)";
            return -EPROTO;
        }
        memcpy(buf + (size_t)i * m->block_size, m->data + off, n);
    }
    *out = buf;
    return 0;
}

int ana_sym_msf_open(struct ana_sym_msf *m, const uint8_t *data, size_t size, const char **why)
{
    memset(m, 0, sizeof(*m));
    m->data = data;
    m->size = size;
    if (size < 56 || memcmp(data, msf_magic, sizeof(msf_magic))) {
        *why = "not a PDB (no MSF 7.00 superblock)";
        return -EPROTO;
    }
    m->block_size = rd32(data + 32);
    m->nr_blocks = rd32(data + 40);
    uint32_t dir_bytes = rd32(data + 44), map_block = rd32(data + 52);
    uint32_t bs = m->block_size;
    if (bs != 512 && bs != 1024 && bs != 2048 && bs != 4096) {
        *why = "bad MSF block size";
        return -EPROTO;
    }
    uint64_t dir_blocks = ((uint64_t)dir_bytes + bs - 1) / bs;
    if (map_block >= m->nr_blocks || (uint64_t)map_block * bs + dir_blocks * 4 > size ||
        dir_blocks * 4 > bs || dir_bytes < 4) {
        *why = "bad MSF stream directory (truncated?)";
        return -EPROTO;
    }
    int rc = gather(m, data + (uint64_t)map_block * bs, dir_bytes, &m->dir, why);
    if (rc)
        return rc;
    m->dir_size = dir_bytes;
    m->nr_streams = rd32(m->dir);
    if (m->nr_streams > (dir_bytes - 4) / 4) {
        *why = "bad MSF stream directory (more streams than it holds)";
        goto bad;
    }
    /* Each stream's first entry in the block lists after the sizes. */
    m->lists = calloc(m->nr_streams ? m->nr_streams : 1, sizeof(*m->lists));
    if (!m->lists) {
        rc = -ENOMEM;
        goto fail;
    }
    uint64_t at = 4 + (uint64_t)m->nr_streams * 4;
    for (uint32_t i = 0; i < m->nr_streams; i++) {
        uint32_t len = rd32(m->dir + 4 + 4 * (size_t)i);
        if (len == 0xffffffffu) /* a deleted stream */
            len = 0;
        m->lists[i] = (uint32_t)at;
        at += ((uint64_t)len + bs - 1) / bs * 4;
        if (at > dir_bytes) {
            *why = "bad MSF stream directory (its block lists are cut short)";
            goto bad;
        }
    }
    return 0;
bad:
    rc = -EPROTO;
fail:
    ana_sym_msf_close(m);
    return rc;
}

int ana_sym_msf_stream(const struct ana_sym_msf *m, uint32_t index, uint8_t **out, uint32_t *size,
                       const char **why)
{
    if (index >= m->nr_streams) {
        *why = "a stream the PDB names is missing from its directory";
        return -EPROTO;
    }
    uint32_t len = rd32(m->dir + 4 + 4 * (size_t)index);
    if (len == 0xffffffffu)
        len = 0;
    *size = len;
    return gather(m, m->dir + m->lists[index], len, out, why);
}

void ana_sym_msf_close(struct ana_sym_msf *m)
{
    free(m->dir);
    free(m->lists);
    m->dir = NULL;
    m->lists = NULL;
}
