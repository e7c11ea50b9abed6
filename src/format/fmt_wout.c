/* SPDX-License-Identifier: MIT */
/* Writing blocks: one writev per block, so a crash or a full disk leaves at
 * most one partial block at the end, which the reader treats as truncation. */
#include "format/fmt_wout_internal.h"

#include <errno.h>
#include <unistd.h>

#include "format/fmt_block_internal.h"
#include "format/fmt_crc_internal.h"

static int wout_writev(struct fmt_wout *o, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t k = writev(o->fd, iov, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            o->err = -errno;
            return o->err;
        }
        if (k == 0) {
            o->err = -EIO;
            return o->err;
        }
        o->off += (uint64_t)k;
        while (n > 0 && (size_t)k >= iov->iov_len) {
            k -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + k;
            iov->iov_len -= (size_t)k;
        }
    }
    return 0;
}

int fmt_wout_raw(struct fmt_wout *o, const void *p, size_t len)
{
    struct iovec iov = {(void *)p, len};

    if (o->err)
        return o->err;
    return wout_writev(o, &iov, 1);
}

int fmt_wout_block(struct fmt_wout *o, uint16_t type, uint16_t flags, uint32_t raw_size,
                   const struct iovec *parts, int nr_parts)
{
    uint8_t hdr[FMT_BLOCK_HEADER_SIZE];
    struct iovec iov[FMT_WOUT_MAX_PARTS + 1];
    size_t stored = 0;

    if (o->err)
        return o->err;
    if (nr_parts > FMT_WOUT_MAX_PARTS)
        return -EINVAL;
    for (int i = 0; i < nr_parts; i++)
        stored += parts[i].iov_len;
    if (stored > FMT_BLOCK_MAX_PAYLOAD || raw_size > FMT_BLOCK_MAX_PAYLOAD)
        return -EFBIG;
    if (fmt_buf_reserve(&o->dir, 3 * FMT_VARINT_MAX))
        return -ENOMEM;

    fmt_put_le32(hdr, FMT_BLOCK_MAGIC);
    fmt_put_le16(hdr + 4, type);
    fmt_put_le16(hdr + 6, flags);
    fmt_put_le32(hdr + 8, (uint32_t)stored);
    fmt_put_le32(hdr + 12, raw_size);
    fmt_put_le32(hdr + 16, o->seq);
    uint32_t crc = fmt_crc32c(0, hdr, 20);
    for (int i = 0; i < nr_parts; i++)
        crc = fmt_crc32c(crc, parts[i].iov_base, parts[i].iov_len);
    fmt_put_le32(hdr + 20, crc);

    uint64_t at = o->off;
    iov[0] = (struct iovec){hdr, sizeof(hdr)};
    for (int i = 0; i < nr_parts; i++)
        iov[i + 1] = parts[i];
    int rc = wout_writev(o, iov, nr_parts + 1);
    if (rc)
        return rc;
    o->seq++;
    fmt_buf_put_varint(&o->dir, type);
    fmt_buf_put_varint(&o->dir, at - o->dir_prev_off);
    fmt_buf_put_varint(&o->dir, stored);
    o->dir_prev_off = at;
    return 0;
}
