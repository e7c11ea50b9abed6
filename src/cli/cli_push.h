/* SPDX-License-Identifier: MIT */
/* A Prometheus Pushgateway's push (memscribe metrics --push; record
 * --push-metrics): the metrics text PUT to URL/metrics/job/JOB/instance/
 * INSTANCE over plain HTTP/1.1, as the Pushgateway's API takes it. */
#ifndef CLI_PUSH_H
#define CLI_PUSH_H

#include <stddef.h>

/* Push body (len bytes) to the Pushgateway at url (http://HOST[:PORT],
 * a path after it kept as its prefix) under job and instance (each a
 * path segment: letters, digits and ._- only). Returns 0, or -1 with
 * why in err (an address that is not http, a connection refused, the
 * gateway's status and first words). */
int cli_push_metrics(const char *url, const char *job, const char *instance, const char *body,
                     size_t len, char *err, size_t err_size);

#endif
