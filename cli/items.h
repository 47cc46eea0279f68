/* cli/items.h - PRIVATE to the zkl tool: the names of a queue's items and
 * their order, for `zkl queue ls`, `zkl queue rm` and `zkl status`.
 *
 * Pure logic, unit-tested without a server.  The rules are the library's
 * (zkl_queue(3)): `qn-<seq>` for ZKL_QUEUE_QN, `entry-<prio>-<seq>` for
 * ZKL_QUEUE_KAZOO; the head is the lowest priority, then the lowest
 * sequence with the wrap at 2^31 handled, then the name.  The library has
 * no public call that lists a queue's items (see cli/queue.c), so the tool
 * reads the children with zkl_contenders() and orders them here.
 */
#ifndef ZKL_CLI_ITEMS_H
#define ZKL_CLI_ITEMS_H

#include <stddef.h>
#include <stdint.h>

/* An item's name, parsed. */
typedef struct cli_item_key {
  const char *name; /* borrowed                                          */
  int format;       /* a zkl_queue_format_t                              */
  int prio;         /* 0..999 (kazoo's); 0 for qn-                        */
  int32_t seq;      /* ZooKeeper's sequence, negative once it wrapped    */
  size_t index;     /* the caller's (which child it is); 0 when parsed   */
} cli_item_key_t;

/* Is name an item of format (ZKL_QUEUE_QN or ZKL_QUEUE_KAZOO)?  0 and *k
 * filled, or -1 (any other shape, or an unknown format). */
int cli_item_parse(int format, const char *name, cli_item_key_t *k);

/* Queue order of two items of one format: <0, 0 or >0. */
int cli_item_cmp(const cli_item_key_t *a, const cli_item_key_t *b);

/* Sorts n keys in queue order (the head first). */
void cli_items_sort(cli_item_key_t *v, size_t n);

/* The format's name as --format takes it ("qn", "kazoo"), "?" for any
 * other value. */
const char *cli_format_name(int format);

/* The format called name: 0 and *format, or -1. */
int cli_format_parse(const char *name, int *format);

#endif /* ZKL_CLI_ITEMS_H */
