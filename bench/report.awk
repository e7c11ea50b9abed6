# SPDX-License-Identifier: MIT
# Turn bench/run.sh's raw runs into the table: medians per workload and tool,
# ratios to the untraced run, added time and trace bytes per heap call, and
# memscribe's targets (bench/README.md), each marked met or missed and by how much.
#
# Usage: awk -v workloads="w1 w2" -v tools="untraced memscribe heaptrack" \
#            [-v analyses="memscribe-report heaptrack_print"] \
#            [-v memscribe_missing="why it was not run"] [-v mem_limit_mib=N] \
#            -f report.awk EVENTS.tsv RUNS.tsv
# EVENTS.tsv: workload, counted heap calls, calls by construction ("-": unknown).
# RUNS.tsv:   workload, tool, rep, wall_ns, cpu_ns, maxrss_kb, result, trace_bytes[, time_bytes:
#             a memscribe trace's per-event time columns, from trace_bytes.py --times].
#             A row whose "tool" is one of the analyses timed an analysis of a
#             trace (bench/run.sh --report); the first analysis is memscribe's,
#             compared with the second.
# Plain POSIX awk (Debian's default is mawk): no gawk extensions.

BEGIN {
    FS = "\t"
    TARGET_RATIO = 0.40     # memscribe's added time per event / heaptrack's
    TARGET_BYTES = 2.0      # memscribe's trace bytes per event
    # Issue 12: on the real programs, a trace at most twice heaptrack's and a
    # run at most 1.25x the untraced wall time; and, as the next bar, added
    # time per event at most 0.25x heaptrack --raw's (recording alone).
    # (Issue 45, item 3) every real program, perl and C++ ones too. Where
    # the per-event times alone (TIME, FREE_TIME, TIME_HI) exceed the bound,
    # which heaptrack's trace has no counterpart of (it stamps every 10 ms:
    # a tiny loop's trace is little else), the rest of the trace is held to it.
    REAL_PROGRAMS = " sqlite cc1 python perl containers cxx-loop "
    TARGET_REAL_BYTES = 2.0
    TARGET_REAL_WALL = 1.25
    TARGET_RAW_RATIO = 0.25
    nr_met = nr_missed = nr_unmeasured = 0
}

FNR == 1 { next }           # header lines

FILENAME == ARGV[1] {
    counted[$1] = $2
    constructed[$1] = $3
    next
}

{
    k = $1 SUBSEP $2
    nr_runs[k]++
    if ($3 + 0 > max_rep)
        max_rep = $3 + 0
    if ($7 == "ok") {
        n = ++nr_ok[k]
        wall[k, n] = $4
        wall_rep[k, $3] = $4
        cpu_rep[k, $3] = $5
        cpu[k, n] = $5
        rss[k, n] = $6
        bytes[k, n] = $8
        tbytes[k, n] = $9 + 0
    } else if (!(k in failure)) {
        failure[k] = $7
        failure_rss[k] = $6
    }
}

# Median of arr[k, 1..n], by insertion sort of a copy (n is small).
function median(arr, k, n,    i, j, v, tmp) {
    for (i = 1; i <= n; i++) {
        v = arr[k, i] + 0
        for (j = i - 1; j >= 1 && tmp[j] > v; j--)
            tmp[j + 1] = tmp[j]
        tmp[j + 1] = v
    }
    if (n % 2)
        return tmp[(n + 1) / 2]
    return (tmp[n / 2] + tmp[n / 2 + 1]) / 2
}

# Half the range of arr[k, 1..n] in percent of its median m: how noisy the
# runs were (the machine is shared).
function spread(arr, k, n, m,    i, lo, hi) {
    lo = hi = arr[k, 1] + 0
    for (i = 2; i <= n; i++) {
        if (arr[k, i] + 0 < lo)
            lo = arr[k, i] + 0
        if (arr[k, i] + 0 > hi)
            hi = arr[k, i] + 0
    }
    return m > 0 ? (hi - lo) / 2 / m * 100 : 0
}

# "1234567" -> "1,234,567"
function grouped(n,    s, out) {
    s = sprintf("%.0f", n)
    out = ""
    while (length(s) > 3) {
        out = "," substr(s, length(s) - 2) out
        s = substr(s, 1, length(s) - 3)
    }
    return s out
}

function verdict(name, value, limit, unit,    txt) {
    if (value <= limit) {
        nr_met++
        txt = "met"
    } else {
        nr_missed++
        txt = sprintf("MISSED by %.1f%% (%.2fx the limit)", (value / limit - 1) * 100, value / limit)
    }
    printf "  target  %-52s %9.3f %-4s %s\n", name, value, unit, txt
}

function unmeasured(name, why) {
    nr_unmeasured++
    printf "  target  %-52s %9s %-4s not measured: %s\n", name, "-", "", why
}

# "out-of-memory" -> "out of memory", "timeout-120s" -> "timed out after 120s"
function failure_text(f) {
    if (f == "out-of-memory")
        return "out of memory"
    if (f ~ /^timeout-/)
        return "timed out after " substr(f, 9)
    return f
}

# The --report rows of workload w: one line per analysis, then memscribe's
# against the other's. No target: the analysis issues will set them.
function print_analyses(w, ev,    na, al, i, a, k, any, mw_, mc_, mr_) {
    na = split(analyses, al, " ")
    any = 0
    for (i = 1; i <= na; i++)
        if ((w SUBSEP al[i]) in nr_runs)
            any = 1
    if (!any)
        return
    printf "  %-18s %5s %8s %6s %8s %11s %9s\n", "analysis of trace", "runs", "wall s", "+-%", "cpu s",
           "cpu ns/ev", "peak MiB"
    for (i = 1; i <= na; i++) {
        a = al[i]
        k = w SUBSEP a
        if (!(k in nr_runs))
            continue
        if (!nr_ok[k]) {
            printf "  %-18s %5s   %s\n", a, "0/" nr_runs[k], failure_text(failure[k])
            continue
        }
        mw_[i] = median(wall, k, nr_ok[k])
        mc_[i] = median(cpu, k, nr_ok[k])
        mr_[i] = median(rss, k, nr_ok[k])
        printf "  %-18s %5s %8.3f %6.0f %8.3f %11.1f %9.1f\n", a, nr_ok[k] "/" nr_runs[k], mw_[i] / 1e9,
               spread(wall, k, nr_ok[k], mw_[i]), mc_[i] / 1e9, (ev > 0 ? mc_[i] / ev : 0), mr_[i] / 1024
    }
    if ((1 in mw_) && (2 in mw_) && mw_[2] > 0 && mc_[2] > 0 && mr_[2] > 0)
        printf "  %s / %s: wall %.2fx, cpu %.2fx, peak RSS %.2fx\n", al[1], al[2], mw_[1] / mw_[2],
               mc_[1] / mc_[2], mr_[1] / mr_[2]
}

# memscribe's (m: memscribe, or memscribe-base from run.sh --base) added wall
# and CPU per event and bytes per event as a multiple of tool h's (heaptrack, or
# heaptrack --raw: recording without its interpreter), from the medians of the
# workload just printed. No target: a comparison.
function print_ratios(m, h) {
    if (!have_base || ev <= 0 || !ok[m] || !ok[h])
        return
    printf "  %s / %s:", m, h
    printf " +wall %s, +cpu %s, bytes %s\n", ratio(aw[m], aw[h]), ratio(ac[m], ac[h]), ratio(bpe[m], bpe[h])
}

# The median over the repetitions of tool m's wall time divided by the
# untraced run's of the same repetition (run.sh runs every tool once per
# repetition, one after the other): a host whose speed drifts between
# repetitions moves each pair together, so this moves far less than the
# ratio of the medians does (bench/README.md, "Paired ratios").
function paired_wall(w, m,    r, n, tmp, mk, bk) {
    mk = w SUBSEP m
    bk = w SUBSEP "untraced"
    n = 0
    for (r = 1; r <= max_rep; r++)
        if ((mk, r) in wall_rep && (bk, r) in wall_rep && wall_rep[bk, r] > 0)
            tmp[1, ++n] = wall_rep[mk, r] / wall_rep[bk, r]
    return n ? median(tmp, 1, n) : 0
}

# The median over the repetitions of tool m's added wall or CPU (v:
# wall_rep or cpu_rep) over tool h's, each against the untraced run of the
# same repetition: the +wall and +cpu ratios of print_ratios, paired as
# paired_wall is, so that a drift of the host between repetitions moves
# the three runs of a ratio together. 0 if no repetition has all three.
function paired_added(w, m, h, v,    r, n, tmp, mk, hk, bk) {
    mk = w SUBSEP m
    hk = w SUBSEP h
    bk = w SUBSEP "untraced"
    n = 0
    for (r = 1; r <= max_rep; r++)
        if ((mk, r) in v && (hk, r) in v && (bk, r) in v && v[hk, r] - v[bk, r] > 0)
            tmp[1, ++n] = (v[mk, r] - v[bk, r]) / (v[hk, r] - v[bk, r])
    return n ? median(tmp, 1, n) : 0
}

function print_paired_added(w, m, h,    xw, xc) {
    if (!have_base || !ok[m] || !ok[h])
        return
    xw = paired_added(w, m, h, wall_rep)
    xc = paired_added(w, m, h, cpu_rep)
    if (xw || xc)
        printf "  %s / %s, paired by repetition (median): +wall %.2fx, +cpu %.2fx\n", m, h, xw, xc
}

function print_paired(w, m,    x) {
    if (!have_base || !ok[m] || !(x = paired_wall(w, m)))
        return
    printf "  %s wall / untraced wall of the same repetition: median %.2fx\n", m, x
}

function ratio(a, b) {
    return b > 0 ? sprintf("%.2fx", a / b) : "-"
}

function why_missing(k, tool) {
    if (tool == "memscribe" && memscribe_missing != "")
        return "memscribe " memscribe_missing
    if (k in failure)
        return tool " " failure_text(failure[k])
    return tool " not run"
}

END {
    nw = split(workloads, wl, " ")
    nt = split(tools, tl, " ")
    for (i = 1; i <= nw; i++) {
        w = wl[i]
        ev = counted[w] + 0
        printf "%s: %s heap calls", w, grouped(ev)
        if (constructed[w] != "-" && constructed[w] != "")
            printf " (%s made by the workload itself, the rest by libc and start-up)", grouped(constructed[w])
        printf "\n"
        printf "  %-13s %5s %8s %6s %8s %8s %8s %11s %11s %9s %9s\n", "tool", "runs", "wall s", "+-%",
               "cpu s", "wall x", "cpu x", "+wall ns/ev", "+cpu ns/ev", "bytes/ev", "peak MiB"
        base = w SUBSEP "untraced"
        have_base = (nr_ok[base] > 0)
        if (have_base) {
            bw = median(wall, base, nr_ok[base])
            bc = median(cpu, base, nr_ok[base])
        }
        for (j = 1; j <= nt; j++) {
            t = tl[j]
            k = w SUBSEP t
            ok[t] = 0
            if (!(k in nr_runs)) {
                printf "  %-13s %5s   not measured\n", t, "-"
                continue
            }
            runs = sprintf("%d/%d", nr_ok[k] + 0, nr_runs[k])
            if (!nr_ok[k]) {
                limit = (t != "untraced" && mem_limit_mib != "") ? ", address space limited to " mem_limit_mib " MiB" : ""
                printf "  %-13s %5s   %s (peak RSS %.0f MiB%s)\n", t, runs, failure_text(failure[k]), failure_rss[k] / 1024, limit
                continue
            }
            ok[t] = 1
            mw[t] = median(wall, k, nr_ok[k])
            mc[t] = median(cpu, k, nr_ok[k])
            mb[t] = median(bytes, k, nr_ok[k])
            mtb[t] = median(tbytes, k, nr_ok[k])
            mr = median(rss, k, nr_ok[k])
            printf "  %-13s %5s %8.3f %6.0f %8.3f", t, runs, mw[t] / 1e9, spread(wall, k, nr_ok[k], mw[t]),
                   mc[t] / 1e9
            if (have_base && t != "untraced" && ev > 0) {
                aw[t] = (mw[t] - bw) / ev
                ac[t] = (mc[t] - bc) / ev
                bpe[t] = mb[t] / ev
                printf " %8.2f %8.2f %11.1f %11.1f %9.3f", mw[t] / bw, mc[t] / bc, aw[t], ac[t], bpe[t]
            } else if (t == "untraced") {
                printf " %8.2f %8.2f %11s %11s %9s", 1, 1, "-", "-", "-"
            } else {
                printf " %8s %8s %11s %11s %9s", "-", "-", "-", "-", "-"
            }
            printf " %9.1f", mr / 1024
            if (nr_ok[k] < nr_runs[k])
                printf "  (%d failed: %s)", nr_runs[k] - nr_ok[k], failure_text(failure[k])
            printf "\n"
        }

        print_paired(w, "memscribe")
        print_paired(w, "memscribe-base")
        print_ratios("memscribe", "heaptrack")
        print_paired_added(w, "memscribe", "heaptrack")
        print_ratios("memscribe", "heaptrack-raw")
        print_ratios("memscribe-base", "heaptrack")
        print_ratios("memscribe-base", "heaptrack-raw")
        print_analyses(w, ev)

        # memscribe's targets for this workload.
        msk = w SUBSEP "memscribe"
        htk = w SUBSEP "heaptrack"
        if (!have_base) {
            unmeasured("(all)", "no untraced run")
            printf "\n"
            continue
        }
        # Every run must complete; where heaptrack fails, that is the point.
        if (msk in nr_runs) {
            name = (htk in failure) ? "memscribe completes every run (heaptrack fails)" : "memscribe completes every run"
            if (nr_ok[msk] == nr_runs[msk]) {
                nr_met++
                printf "  target  %-52s %9s %-4s met\n", name, nr_ok[msk] "/" nr_runs[msk], ""
            } else {
                nr_missed++
                printf "  target  %-52s %9s %-4s MISSED: %s\n", name, nr_ok[msk] + 0 "/" nr_runs[msk], "",
                       failure_text(failure[msk])
            }
        }
        if (!ok["memscribe"]) {
            why = why_missing(msk, "memscribe")
            unmeasured("memscribe added wall/event <= 0.40 x heaptrack's", why)
            unmeasured("memscribe added cpu/event <= 0.40 x heaptrack's", why)
            unmeasured("memscribe trace <= 2 bytes/event", why)
            printf "\n"
            continue
        }
        if (!ok["heaptrack"]) {
            why = why_missing(htk, "heaptrack")
            unmeasured("memscribe added wall/event <= 0.40 x heaptrack's", why)
            unmeasured("memscribe added cpu/event <= 0.40 x heaptrack's", why)
        } else if (aw["heaptrack"] <= 0 || ac["heaptrack"] <= 0) {
            unmeasured("memscribe added time/event vs heaptrack's", "heaptrack added no time (noise)")
        } else {
            verdict("memscribe added wall/event <= 0.40 x heaptrack's", aw["memscribe"] / aw["heaptrack"], TARGET_RATIO, "x")
            verdict("memscribe added cpu/event <= 0.40 x heaptrack's", ac["memscribe"] / ac["heaptrack"], TARGET_RATIO, "x")
        }
        verdict("memscribe trace <= 2 bytes/event", bpe["memscribe"], TARGET_BYTES, "B/ev")
        if (index(REAL_PROGRAMS, " " w " ")) {
            if (ok["heaptrack"] && mtb["memscribe"] / mb["heaptrack"] > TARGET_REAL_BYTES) {
                printf "  (per-event times alone %.2fx heaptrack's trace: the rest is held to the bound)\n",
                       mtb["memscribe"] / mb["heaptrack"]
                verdict("memscribe trace less its times <= 2 x heaptrack's",
                        (mb["memscribe"] - mtb["memscribe"]) / mb["heaptrack"], TARGET_REAL_BYTES, "x")
            } else if (ok["heaptrack"])
                verdict("memscribe trace <= 2 x heaptrack's", bpe["memscribe"] / bpe["heaptrack"],
                        TARGET_REAL_BYTES, "x")
            else
                unmeasured("memscribe trace <= 2 x heaptrack's", why_missing(htk, "heaptrack"))
            verdict("memscribe wall <= 1.25 x untraced", mw["memscribe"] / bw, TARGET_REAL_WALL, "x")
        }
        rk = w SUBSEP "heaptrack-raw"
        if (!ok["heaptrack-raw"]) {
            if (rk in nr_runs)
                unmeasured("(next bar) added wall, cpu <= 0.25 x heaptrack --raw's",
                           why_missing(rk, "heaptrack --raw"))
        } else if (aw["heaptrack-raw"] > 0 && ac["heaptrack-raw"] > 0) {
            verdict("(next bar) added wall/event <= 0.25 x --raw's", aw["memscribe"] / aw["heaptrack-raw"],
                    TARGET_RAW_RATIO, "x")
            verdict("(next bar) added cpu/event <= 0.25 x --raw's", ac["memscribe"] / ac["heaptrack-raw"],
                    TARGET_RAW_RATIO, "x")
        }
        if (w ~ /^storm/) {
            if (ok["heaptrack"])
                verdict(sprintf("memscribe trace <= heaptrack's (%.3f bytes/event)", bpe["heaptrack"]),
                        bpe["memscribe"], bpe["heaptrack"], "B/ev")
            else
                unmeasured("memscribe trace <= heaptrack's bytes/event", why_missing(htk, "heaptrack"))
        }
        printf "\n"
    }
    printf "targets: %d met, %d missed, %d not measured\n", nr_met, nr_missed, nr_unmeasured
}
