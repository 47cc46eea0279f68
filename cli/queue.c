/* cli/queue.c - queue order and holders of a path's children, decided by
 * the library's own name parser and drivers (lib/core/names.c, the drivers in lib/recipes/). */
#include "queue.h"

#include <stdlib.h>
#include <string.h>

#include "core/contend.h"

const char *cli_kind_name(cli_kind_t kind) {
  switch (kind) {
  case CLI_KIND_LOCK: return "lock";
  case CLI_KIND_READ: return "read";
  case CLI_KIND_WRITE: return "write";
  case CLI_KIND_ELECTION: return "election";
  case CLI_KIND_FOREIGN: break;
  }
  return "foreign";
}

static int is_rw_only(zkl__kind_t k) {
  return k == ZKL__KIND_READ || k == ZKL__KIND_WRITE ||
         k == ZKL__KIND_KAZOO_RLOCK;
}

/* The driver a contender of kind k waits under.  kazoo's "__lock__" is
 * both its Lock and its WriteLock: beside read/write nodes it is a writer. */
static const zkl__driver_t *driver_of(zkl__kind_t k, int rw_present) {
  switch (k) {
  case ZKL__KIND_LOCK: return &zkl__driver_mutex;
  case ZKL__KIND_KAZOO_LOCK:
    return rw_present ? &zkl__driver_writer : &zkl__driver_mutex;
  case ZKL__KIND_READ:
  case ZKL__KIND_KAZOO_RLOCK: return &zkl__driver_reader;
  case ZKL__KIND_WRITE: return &zkl__driver_writer;
  case ZKL__KIND_LATCH: return &zkl__driver_latch;
  case ZKL__KIND_NONE: break;
  }
  return NULL;
}

static cli_kind_t shown_kind(const zkl__driver_t *d) {
  if (d == &zkl__driver_mutex) return CLI_KIND_LOCK;
  if (d == &zkl__driver_reader) return CLI_KIND_READ;
  if (d == &zkl__driver_writer) return CLI_KIND_WRITE;
  if (d == &zkl__driver_latch) return CLI_KIND_ELECTION;
  return CLI_KIND_FOREIGN;
}

static int entry_cmp(const void *x, const void *y) {
  const cli_entry_t *a = x, *b = y;
  int fa = a->kind == CLI_KIND_FOREIGN, fb = b->kind == CLI_KIND_FOREIGN;
  if (fa != fb) return fa - fb;
  if (!fa) {
    int c = zkl__seq_cmp(a->seq, b->seq);
    if (c != 0) return c;
  }
  return strcmp(a->name, b->name);
}

void cli_queue_order(cli_entry_t *v, size_t n) {
  zkl__kind_t *kinds = calloc(n ? n : 1, sizeof *kinds);
  zkl__node_t *lower = calloc(n ? n : 1, sizeof *lower);
  if (kinds == NULL || lower == NULL) abort(); /* a few bytes per child */
  int rw_present = 0;
  for (size_t i = 0; i < n; i++) {
    zkl__node_t node;
    v[i].kind = CLI_KIND_FOREIGN;
    v[i].seq = 0;
    if (zkl__name_parse(v[i].name, &node) != 0) continue;
    v[i].seq = node.seq;
    v[i].kind = CLI_KIND_LOCK; /* a contender; refined below */
    rw_present |= is_rw_only(node.kind);
  }
  /* Sort first, then classify: parse again in the sorted order. */
  if (n > 1) qsort(v, n, sizeof *v, entry_cmp);
  int position = 0;
  for (size_t i = 0; i < n; i++) {
    zkl__node_t node;
    kinds[i] = ZKL__KIND_NONE;
    v[i].position = 0;
    v[i].holds = 0;
    if (v[i].kind == CLI_KIND_FOREIGN || zkl__name_parse(v[i].name, &node))
      continue;
    kinds[i] = node.kind;
    const zkl__driver_t *d = driver_of(node.kind, rw_present);
    v[i].kind = shown_kind(d);
    v[i].position = ++position;
    size_t m = 0;
    for (size_t j = 0; j < i; j++) {
      if (kinds[j] == ZKL__KIND_NONE || !d->counts(kinds[j])) continue;
      lower[m].name = v[j].name;
      lower[m].seq = v[j].seq;
      lower[m].kind = kinds[j];
      m++;
    }
    v[i].holds = d->blocker(lower, m) < 0;
  }
  free(lower);
  free(kinds);
}
