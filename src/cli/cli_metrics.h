/* SPDX-License-Identifier: MIT */
/* What memscribe metrics (cmd_metrics.c) shares with serve, which passes
 * its --metrics-label on to it. */
#ifndef CLI_METRICS_H
#define CLI_METRICS_H

#include <stdbool.h>

/* K=V, K a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not __*) that
 * is not one of the metrics' own (pid, exe, site). */
bool cli_metrics_label_ok(const char *kv);

#endif
