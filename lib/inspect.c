/* lib/inspect.c - zkl_contenders(): a recipe path's children in queue
 * order, decided by the core's name parser and order and by the recipes'
 * own drivers, so that it says exactly whom each recipe grants.  It sits
 * above the recipes (it knows all their drivers) and takes no part in any
 * queue. */
#include <stdlib.h>
#include <string.h>
#include <zookeeper/zookeeper.h>

#include "core/contend.h"

const char *zkl_kind_name(zkl_kind_t kind) {
  switch (kind) {
  case ZKL_KIND_LOCK: return "lock";
  case ZKL_KIND_READ: return "read";
  case ZKL_KIND_WRITE: return "write";
  case ZKL_KIND_ELECTION: return "election";
  case ZKL_KIND_FOREIGN: break;
  }
  return "foreign";
}

/* ---- queue order (no server) ----------------------------------------------- */

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

static zkl_kind_t shown_kind(const zkl__driver_t *d) {
  if (d == &zkl__driver_mutex) return ZKL_KIND_LOCK;
  if (d == &zkl__driver_reader) return ZKL_KIND_READ;
  if (d == &zkl__driver_writer) return ZKL_KIND_WRITE;
  if (d == &zkl__driver_latch) return ZKL_KIND_ELECTION;
  return ZKL_KIND_FOREIGN;
}

/* A child with its parsed name, for sorting. */
typedef struct {
  zkl_contender_t c;
  zkl__node_t node; /* kind ZKL__KIND_NONE: foreign */
} keyed_t;

static int keyed_cmp(const void *x, const void *y) {
  const keyed_t *a = x, *b = y;
  int fa = a->node.kind == ZKL__KIND_NONE, fb = b->node.kind == ZKL__KIND_NONE;
  if (fa != fb) return fa - fb; /* contenders first */
  if (!fa) {
    int c = zkl__seq_cmp(a->node.seq, b->node.seq);
    if (c != 0) return c;
  }
  return strcmp(a->c.name, b->c.name);
}

void zkl_contenders_order(zkl_contender_t *v, size_t n) {
  if (v == NULL || n == 0) return;
  keyed_t *k = calloc(n, sizeof *k);
  zkl__node_t *lower = calloc(n, sizeof *lower);
  if (k == NULL || lower == NULL) abort(); /* a few bytes per child */
  int rw_present = 0;
  for (size_t i = 0; i < n; i++) {
    k[i].c = v[i];
    if (v[i].name == NULL || zkl__name_parse(v[i].name, &k[i].node) != 0)
      k[i].node.kind = ZKL__KIND_NONE;
    rw_present |= is_rw_only(k[i].node.kind);
  }
  qsort(k, n, sizeof *k, keyed_cmp);
  int position = 0;
  for (size_t i = 0; i < n; i++) {
    zkl_contender_t *e = &k[i].c;
    e->kind = ZKL_KIND_FOREIGN;
    e->position = 0;
    e->holds = 0;
    const zkl__driver_t *d = driver_of(k[i].node.kind, rw_present);
    if (d == NULL) continue;
    e->kind = shown_kind(d);
    e->position = ++position;
    /* the contenders below it that its driver counts, in queue order */
    size_t m = 0;
    for (size_t j = 0; j < i; j++)
      if (k[j].node.kind != ZKL__KIND_NONE && d->counts(k[j].node.kind))
        lower[m++] = k[j].node;
    e->holds = d->blocker(lower, m) < 0;
  }
  for (size_t i = 0; i < n; i++) v[i] = k[i].c;
  free(lower);
  free(k);
}

/* ---- reading a path --------------------------------------------------------- */

void zkl_contenders_free(zkl_contender_t *v, size_t n) {
  if (v == NULL) return;
  for (size_t i = 0; i < n; i++) {
    free((void *)v[i].name);
    free((void *)v[i].data);
  }
  free(v);
}

static int map_zrc(zkl_session_t *s, int zrc, const char *path) {
  if (zrc == ZKL__ZTIMEDOUT)
    return zkl__fail(ZKL_ETIMEDOUT, "listing %s: no answer in time", path);
  int h = zkl__session_health(s);
  if (zrc == ZSESSIONEXPIRED || zrc == ZINVALIDSTATE || zrc == ZCLOSING ||
      h == ZKL_ELOST)
    return zkl__fail(ZKL_ELOST, "listing %s: the session is lost", path);
  if (zrc == ZCONNECTIONLOSS || zrc == ZOPERATIONTIMEOUT)
    return zkl__fail(ZKL_ESUSPENDED, "listing %s: the connection is down",
                     path);
  if (zrc == ZSYSTEMERROR)
    return zkl__fail(ZKL_ENOMEM, "listing %s: out of memory", path);
  return zkl__fail(zrc, "listing %s: %s", path, zerror(zrc));
}

/* Reads every child of kids into v (sent together, answered in order);
 * a vanished child is left out.  *n counts what was read.  ZOK or a code. */
static int read_children(zkl_session_t *s, int64_t dl, const char *path,
                         const struct String_vector *kids, zkl_contender_t *v,
                         size_t *n) {
  size_t count = (size_t)kids->count;
  zkl__zcall_t **calls = calloc(count ? count : 1, sizeof *calls);
  char **paths = calloc(count ? count : 1, sizeof *paths);
  int zrc = calls == NULL || paths == NULL ? ZSYSTEMERROR : ZOK;
  size_t plen = strlen(path);
  for (size_t i = 0; zrc == ZOK && i < count; i++) {
    size_t len = plen + strlen(kids->data[i]) + 2;
    if ((paths[i] = malloc(len)) == NULL) {
      zrc = ZSYSTEMERROR;
      break;
    }
    memcpy(paths[i], path, plen);
    paths[i][plen] = '/';
    strcpy(paths[i] + plen + 1, kids->data[i]);
    calls[i] = zkl__zk_get_send(s, paths[i], 0);
  }
  /* every record sent is waited for exactly once, whatever happened */
  for (size_t i = 0; calls != NULL && i < count; i++) {
    if (paths == NULL || paths[i] == NULL) break;
    char *value = NULL;
    int len = 0, rc;
    struct Stat st;
    memset(&st, 0, sizeof st);
    rc = zkl__zk_get_wait(calls[i], dl, &value, &len, &st);
    if (rc == ZNOAUTH && zrc == ZOK) /* its stat is public all the same */
      rc = zkl__zk_exists(s, dl, paths[i], 0, &st);
    if (zrc != ZOK || rc == ZNONODE) { /* failed before, or vanished */
      free(value);
      continue;
    }
    if (rc != ZOK) {
      free(value);
      zrc = rc;
      continue;
    }
    zkl_contender_t *e = &v[(*n)++];
    memset(e, 0, sizeof *e);
    e->name = strdup(kids->data[i]);
    if (e->name == NULL) zrc = ZSYSTEMERROR;
    e->data = value; /* NUL-terminated by zkcall.c; NULL if unreadable */
    e->data_len = value != NULL && len > 0 ? (size_t)len : 0;
    e->token = (uint64_t)st.czxid;
    e->session = st.ephemeralOwner;
    e->ctime_ms = st.ctime;
  }
  for (size_t i = 0; paths != NULL && i < count; i++) free(paths[i]);
  free(paths);
  free(calls);
  return zrc;
}

int zkl_contenders(zkl_session_t *s, const char *path, int64_t timeout_ms,
                   zkl_contender_t **out, size_t *count) {
  zkl__clear_error();
  if (out != NULL) *out = NULL;
  if (count != NULL) *count = 0;
  if (s == NULL || out == NULL || count == NULL)
    return zkl__fail(ZKL_EINVAL, "session, out or count is NULL");
  int rc = zkl__path_validate(path);
  if (rc != 0) return rc;
  int64_t dl = zkl__deadline_after_ms(timeout_ms);
  if ((rc = zkl__session_health(s)) != 0)
    return zkl__fail(rc, "listing %s: %s", path,
                     rc == ZKL_ELOST ? "the session is lost"
                                     : "the connection is down");
  struct String_vector kids = {0, NULL};
  int zrc = zkl__zk_sync(s, dl, path);
  if (zrc == ZOK || zrc == ZNONODE)
    zrc = zkl__zk_children(s, dl, path, 0, &kids);
  if (zrc == ZNONODE) return 0; /* no path: nobody there */
  if (zrc != ZOK) {
    zkl__zk_children_free(&kids);
    return map_zrc(s, zrc, path);
  }
  zkl_contender_t *v = calloc(kids.count > 0 ? (size_t)kids.count : 1,
                              sizeof *v);
  size_t n = 0;
  zrc = v == NULL ? ZSYSTEMERROR : read_children(s, dl, path, &kids, v, &n);
  zkl__zk_children_free(&kids);
  if (zrc != ZOK) {
    zkl_contenders_free(v, n);
    return map_zrc(s, zrc, path);
  }
  if (n == 0) {
    free(v);
    return 0;
  }
  zkl_contenders_order(v, n);
  *out = v;
  *count = n;
  return 0;
}
