/* cli/items.c - queue item names and their order, as the library reads
 * them (lib/recipes/queue.c).  Pure logic. */
#include "items.h"

#include <stdlib.h>
#include <string.h>

#include "zkl.h"

/* A signed decimal sequence that ends the name, as ZooKeeper prints it
 * (%010d: ten digits, or a minus sign and more once it wrapped): 0 and
 * *seq, or -1. */
static int parse_seq(const char *p, int32_t *seq) {
  const char *d = *p == '-' ? p + 1 : p;
  size_t n = strspn(d, "0123456789");
  if (n == 0 || n > 10 || d[n] != '\0') return -1;
  long long v = strtoll(p, NULL, 10);
  if (v > INT32_MAX || v < INT32_MIN) return -1;
  *seq = (int32_t)v;
  return 0;
}

int cli_item_parse(int format, const char *name, cli_item_key_t *k) {
  if (name == NULL) return -1;
  cli_item_key_t r = {name, format, 0, 0, 0};
  if (format == ZKL_QUEUE_QN) {
    if (strncmp(name, "qn-", 3) != 0 || parse_seq(name + 3, &r.seq) != 0)
      return -1;
  } else if (format == ZKL_QUEUE_KAZOO) {
    if (strncmp(name, "entry-", 6) != 0) return -1;
    const char *p = name + 6;
    if (strspn(p, "0123456789") != 3 || p[3] != '-') return -1;
    r.prio = (p[0] - '0') * 100 + (p[1] - '0') * 10 + (p[2] - '0');
    if (parse_seq(p + 4, &r.seq) != 0) return -1;
  } else {
    return -1;
  }
  *k = r;
  return 0;
}

/* Sequences compared across the wrap at 2^31, as the library does: a is
 * before b when b - a, in 32-bit arithmetic, is positive. */
static int seq_cmp(int32_t a, int32_t b) {
  int32_t d = (int32_t)((uint32_t)a - (uint32_t)b);
  return (d > 0) - (d < 0);
}

int cli_item_cmp(const cli_item_key_t *a, const cli_item_key_t *b) {
  if (a->prio != b->prio) return a->prio < b->prio ? -1 : 1;
  int c = seq_cmp(a->seq, b->seq);
  return c != 0 ? c : strcmp(a->name, b->name);
}

static int key_cmp(const void *a, const void *b) {
  return cli_item_cmp(a, b);
}

void cli_items_sort(cli_item_key_t *v, size_t n) {
  if (n > 1) qsort(v, n, sizeof *v, key_cmp);
}

const char *cli_format_name(int format) {
  switch (format) {
  case ZKL_QUEUE_QN: return "qn";
  case ZKL_QUEUE_KAZOO: return "kazoo";
  default: break;
  }
  return "?";
}

int cli_format_parse(const char *name, int *format) {
  static const int formats[] = {ZKL_QUEUE_QN, ZKL_QUEUE_KAZOO};
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
    if (strcmp(name, cli_format_name(formats[i])) == 0) {
      *format = formats[i];
      return 0;
    }
  return -1;
}
