/* SPDX-License-Identifier: MIT */
/* writev for the trace writer in the mingw-w64 build of the launcher
 * (src/windows/cross): Windows has no sys/uio.h. The file must be open in
 * binary mode. */
#ifndef MS_WIN_COMPAT_SYS_UIO_H
#define MS_WIN_COMPAT_SYS_UIO_H

#include <io.h>
#include <stddef.h>
#include <sys/types.h>

struct iovec {
    void *iov_base;
    size_t iov_len;
};

static inline ssize_t writev(int fd, const struct iovec *iov, int n)
{
    ssize_t total = 0;

    for (int i = 0; i < n; i++) {
        for (size_t done = 0; done < iov[i].iov_len;) {
            size_t left = iov[i].iov_len - done;
            int k = _write(fd, (const char *)iov[i].iov_base + done,
                           left > (1u << 30) ? (1u << 30) : (unsigned)left);
            if (k <= 0)
                return total ? total : -1;
            done += (size_t)k;
            total += k;
        }
    }
    return total;
}

#endif
