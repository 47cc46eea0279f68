/* cli/listing.h - PRIVATE to the zkl tool: a path's children read from
 * the server (names, data, stat), put in queue order. */
#ifndef ZKL_CLI_LISTING_H
#define ZKL_CLI_LISTING_H

#include <stddef.h>
#include <zkl.h>

#include "queue.h"

#define CLI_DATA_SHOWN 1024 /* bytes of a node's data read and shown */

typedef struct cli_listing {
  cli_entry_t *v;      /* in queue order                                */
  size_t n;
  char **names;        /* owned copies of the names v points at          */
} cli_listing_t;

/* Lists path's children with each one's data and stat, in queue order.
 * Children that vanish meanwhile are left out; a path that does not exist
 * gives an empty listing.  0, or ZooKeeper's code (the listing is then
 * empty).  Free with cli_listing_free(). */
int cli_listing_read(zhandle_t *zh, const char *path, cli_listing_t *out);
void cli_listing_free(cli_listing_t *l);

#endif /* ZKL_CLI_LISTING_H */
