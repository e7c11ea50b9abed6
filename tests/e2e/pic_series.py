#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A picture is a claim: read the series a timeline picture draws back into
numbers, from the pixels alone (the polylines, and the axes' tick labels
for the scales), and compare them with `memscribe timeline --format=json`.

usage: pic_series.py SVG_OR_HTML TIMELINE_JSON [REPORT_JSON]

SVG_OR_HTML is `memscribe plot timeline`'s SVG or `memscribe html`'s page
(its inline timeline); TIMELINE_JSON `memscribe timeline --format=json`
with the same --interval the picture used. For every time the text timeline has a row, the
drawn heap, RSS and cumulative-allocated lines must pass through that
time's value: the sum over the processes alive then (for cumulative
allocated, what every process ever allocated: it never falls), within the
rounding of one drawn coordinate; the HTML page's committed and reserved
lines (its address-space panel, drawn where anything was mapped) the same
way. Every point must lie inside its panel.
With REPORT_JSON, the peak marker must sit at the report's peak. Prints
one line per series checked; exits 1 naming the first value that is not
drawn, 2 on bad usage or a picture it cannot read.
"""
import json
import re
import sys

BYTES = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4}
TIMES = {"ns": 1, "\u00b5s": 1e3, "ms": 1e6, "s": 1e9}
# Coordinates are written with one decimal: a drawn value is exact to half
# of 0.1 px; allow as much again for the scale fitted from rounded ticks.
PX_TOL = 0.1


def die(msg, code=2):
    print("pic_series: " + msg, file=sys.stderr)
    sys.exit(code)


def the_svg(path):
    text = open(path, encoding="utf-8").read()
    if path.endswith(".svg"):
        return text
    m = re.search(r'<svg[^>]*id="timeline-svg".*?</svg>', text, re.S)
    if not m:
        die(path + ": no inline timeline (id timeline-svg)")
    return m.group(0)


def attrs(tag):
    return dict(re.findall(r'([\w-]+)="([^"]*)"', tag))


def fit(pairs):
    """Least-squares line through (pixel, value) pairs: value = a + b * px."""
    n = len(pairs)
    if n < 2:
        die("an axis with fewer than two ticks")
    mx = sum(p for p, _ in pairs) / n
    my = sum(v for _, v in pairs) / n
    sxx = sum((p - mx) ** 2 for p, _ in pairs)
    sxy = sum((p - mx) * (v - my) for p, v in pairs)
    b = sxy / sxx
    return my - b * mx, b


def label_value(label, units):
    m = re.fullmatch(r"(-?[0-9.]+)\s*(\S+)", label.strip())
    if not m or m.group(2) not in units:
        return None
    return float(m.group(1)) * units[m.group(2)]


def read_picture(svg):
    ticks = [(attrs(t), lbl) for t, lbl in
             re.findall(r'(<text[^>]*class="tick"[^>]*>)([^<]*)</text>', svg)]
    # The panels: each y axis is a vertical axis line as tall as its panel;
    # its ticks are the right-aligned byte labels beside it.
    panels = []
    for tag in re.findall(r'<line class="axis"[^>]*>', svg):
        a = attrs(tag)
        y1, y2 = sorted((float(a["y1"]), float(a["y2"])))
        if a["x1"] == a["x2"] and y2 - y1 > 10:
            panels.append((y1, y2))
    ylab = [(float(a["y"]) - 4.0, label_value(l, BYTES)) for a, l in ticks
            if a.get("text-anchor") == "end" and label_value(l, BYTES) is not None]
    xlab = [(float(a["x"]), label_value(l, TIMES)) for a, l in ticks
            if a.get("text-anchor") == "middle" and label_value(l, TIMES) is not None]
    # Both panels' time axes are one scale: keep each tick once.
    x_fit = fit(sorted(set(xlab)))
    axes = []
    for lo, hi in panels:
        axes.append({"lo": lo, "hi": hi,
                     "fit": fit([(y, v) for y, v in ylab if lo - 0.5 <= y <= hi + 0.5])})
    series = {}
    for tag in re.findall(r"<polyline[^>]*>", svg):
        a = attrs(tag)
        cls = a.get("class", "")
        pts = [tuple(map(float, p.split(","))) for p in a.get("points", "").split()]
        if not pts:
            continue
        ymin, ymax = min(y for _, y in pts), max(y for _, y in pts)
        # The panel whose ticks span the line (heap and RSS above, the
        # cumulative allocated below).
        axis = min(axes, key=lambda ax: max(0.0, ax["lo"] - ymin) + max(0.0, ymax - ax["hi"]))
        if ymin < axis["lo"] - 0.5 or ymax > axis["hi"] + 0.5:
            die("%s: a point at y %.1f-%.1f leaves its panel (%.1f-%.1f)"
                % (cls, ymin, ymax, axis["lo"], axis["hi"]), 1)
        series[cls] = {"pts": pts, "axis": axis}
    peak = re.search(r'<circle class="peak"[^>]*>', svg)
    return x_fit, axes, series, attrs(peak.group(0)) if peak else None


def expected(tl):
    """Per time: the sums a tree's picture draws (heap and RSS of the
    processes alive then; cumulative allocated of every process so far)."""
    by_t, cum_of = {}, {}
    rows = sorted((r["time_ns"], p["image"], r) for p in tl["processes"] for r in p["rows"])
    out = []
    for t, image, r in rows:
        cum_of[image] = r["allocated_bytes"]
        e = by_t.get(t)
        if e is None:
            e = by_t[t] = {"t": t, "heap": 0, "rss": 0, "has_rss": False}
            out.append(e)
        e["heap"] += r["heap_bytes"]
        e["com"] = e.get("com", 0) + r.get("committed_bytes", 0)
        e["res"] = e.get("res", 0) + r.get("reserved_bytes", 0)
        if r.get("rss_bytes") is not None:
            e["rss"] += r["rss_bytes"]
            e["has_rss"] = e["has_rss"] or r["rss_bytes"] > 0
        e["cum"] = sum(cum_of.values())
    return out


def check(series, name, x_fit, want):
    s = series.get(name)
    if s is None:
        die("no polyline of class " + name, 1)
    a, b = s["axis"]["fit"]
    tol = abs(b) * PX_TOL
    xa, xb = x_fit
    pts = s["pts"]
    for t, v in want:
        px = (t - xa) / xb
        # The step line keeps at most four points per pixel column (where
        # it enters, its highest and lowest, where it leaves): a row's
        # value lies within its column's range.
        # (px comes from the tick labels' scale: near a column's edge, the
        # drawing may have put the time in the column beside it.)
        cols = {int(px - 0.1), int(px + 0.1)}
        col = [a + b * y for x, y in pts if abs(x - px) <= 0.11 or int(x + 0.05) in cols]
        if not col:
            die("%s: nothing drawn at t=%d ns (x %.1f)" % (name, t, px), 1)
        if not (min(col) - tol <= v <= max(col) + tol):
            die("%s: at t=%d ns the text says %d, the picture draws %.0f-%.0f there"
                % (name, t, v, min(col), max(col)), 1)
    last = a + b * pts[-1][1]
    if want and abs(last - want[-1][1]) > tol:
        die("%s: the line ends at %.0f, the text's last value is %d" % (name, last, want[-1][1]), 1)
    print("ok: %s draws the %d values of the text timeline" % (name, len(want)))


def main():
    if len(sys.argv) not in (3, 4):
        die(__doc__.strip().splitlines()[2])
    svg = the_svg(sys.argv[1])
    tl = json.load(open(sys.argv[2]))
    x_fit, axes, series, peak = read_picture(svg)
    want = expected(tl)
    check(series, "s-heap", x_fit, [(e["t"], e["heap"]) for e in want])
    check(series, "s-cum", x_fit, [(e["t"], e["cum"]) for e in want])
    if "s-rss" in series:
        check(series, "s-rss", x_fit, [(e["t"], e["rss"]) for e in want if e["has_rss"]])
    # The HTML page's address-space panel: committed and reserved, where
    # anything was mapped (plot timeline has no such panel).
    if sys.argv[1].endswith(".html") and any(e["com"] or e["res"] for e in want):
        check(series, "s-com", x_fit, [(e["t"], e["com"]) for e in want])
        check(series, "s-res", x_fit, [(e["t"], e["res"]) for e in want])
    elif "s-com" in series or "s-res" in series:
        die("an address-space panel where nothing was mapped, or in plot timeline", 1)
    if len(sys.argv) == 4:
        rep = json.load(open(sys.argv[3]))["total"]
        if rep["peak_bytes"]:
            if not peak:
                die("no peak marker, the report's peak is %d" % rep["peak_bytes"], 1)
            a, b = series["s-heap"]["axis"]["fit"]
            drawn = a + b * float(peak["cy"])
            t = x_fit[0] + x_fit[1] * float(peak["cx"])
            if abs(drawn - rep["peak_bytes"]) > abs(b) * PX_TOL:
                die("the peak marker stands at %.0f, the report's peak is %d"
                    % (drawn, rep["peak_bytes"]), 1)
            if abs(t - rep["peak_ns"]) > abs(x_fit[1]) * PX_TOL:
                die("the peak marker stands at t=%.0f ns, the report's peak is at %d"
                    % (t, rep["peak_ns"]), 1)
            print("ok: the peak marker stands at the report's peak")


if __name__ == "__main__":
    main()
