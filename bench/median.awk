# SPDX-License-Identifier: MIT
# The median of a space-separated list of numbers: the awk function the
# side-by-side bench scripts (rec_tail.sh, floor.sh) give their reports,
# each with its own program after it (awk -f median.awk -f /dev/stdin).
function median(list,   a, n, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++)
        for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
