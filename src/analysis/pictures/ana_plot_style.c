/* SPDX-License-Identifier: MIT */
/* The one style sheet of memscribe's plots, shared by the standalone SVGs
 * and the HTML report (which inlines the SVGs and links these classes). */
#include "analysis/pictures/ana_plot.h"

const char ana_plot_css[] =
    "text { fill: #222; }\n"
    ".title { font-size: 16px; font-weight: bold; }\n"
    ".subtitle { fill: #666; }\n"
    ".tick { font-size: 11px; fill: #444; }\n"
    ".axis-title { font-size: 12px; fill: #333; }\n"
    ".legend { font-size: 12px; }\n"
    ".grid { stroke: #e4e4e4; stroke-width: 1; }\n"
    ".axis { stroke: #555; stroke-width: 1; }\n"
    ".s-heap { stroke: #d0542c; stroke-width: 1.5; fill: none; }\n"
    ".a-heap { fill: #d0542c; fill-opacity: 0.15; stroke: none; }\n"
    ".k-heap { fill: #d0542c; }\n"
    ".s-rss { stroke: #3a78c2; stroke-width: 1.2; stroke-dasharray: 5 3; fill: none; }\n"
    ".k-rss { fill: #3a78c2; }\n"
    ".s-cum { stroke: #4c9a4c; stroke-width: 1.5; fill: none; }\n"
    ".a-cum { fill: #4c9a4c; fill-opacity: 0.12; stroke: none; }\n"
    ".k-cum { fill: #4c9a4c; }\n"
    ".s-com { stroke: #7a4fb0; stroke-width: 1.5; fill: none; }\n"
    ".a-com { fill: #7a4fb0; fill-opacity: 0.12; stroke: none; }\n"
    ".k-com { fill: #7a4fb0; }\n"
    ".s-res { stroke: #8a8a8a; stroke-width: 1.2; stroke-dasharray: 4 3; fill: none; }\n"
    ".k-res { fill: #8a8a8a; }\n"
    ".peak { fill: #b00020; stroke: #fff; stroke-width: 1.5; }\n"
    ".peak-line { stroke: #b00020; stroke-width: 1; stroke-dasharray: 3 3; }\n"
    ".peak-label { font-size: 12px; fill: #b00020; font-weight: bold; }\n"
    ".bar-count { fill: #3a78c2; stroke: #fff; stroke-width: 0.5; }\n"
    ".bar-bytes { fill: #d0542c; stroke: #fff; stroke-width: 0.5; }\n"
    ".k-count { fill: #3a78c2; }\n"
    ".k-bytes { fill: #d0542c; }\n";
