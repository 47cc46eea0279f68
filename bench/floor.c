/* bench/floor.c - the floor: the lock protocol done by hand on raw
 * libzookeeper-mt calls, with no library around it.
 *
 * The lock is the classic recipe, written correctly: create an
 * EPHEMERAL_SEQUENTIAL node, list the children, and if a node we must wait
 * for is below ours, set an exists watch on it and wait; after every
 * wake-up list again.  When the node to watch is already gone (exists
 * answers ZNONODE), list again at once instead of waiting for an event
 * that will never come: the lost wake-up of ZooKeeper's own Java
 * WriteLock.  Steady state: create, list, exists, list, delete = 5
 * requests per handoff. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>

#include "bench.h"

/* ---- sessions ------------------------------------------------------------------ */

typedef struct conn_wait {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int state;
} conn_wait_t;

/* The handle's global watcher: only the connection matters here. */
static void session_watcher(zhandle_t *zh, int type, int state,
                            const char *path, void *ctx) {
  (void)zh;
  (void)path;
  conn_wait_t *w = ctx; /* the context given to zookeeper_init2 */
  if (type != ZOO_SESSION_EVENT || w == NULL) return;
  pthread_mutex_lock(&w->mu);
  w->state = state;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

static void log_discard(const char *message) { (void)message; }

zhandle_t *floor_open(const char *hosts, int timeout_ms) {
  conn_wait_t *w = calloc(1, sizeof *w);
  if (w == NULL) return NULL;
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->cv, NULL);
  zhandle_t *zh = zookeeper_init2(hosts, session_watcher, timeout_ms, NULL, w,
                                  0, log_discard);
  if (zh == NULL) goto fail;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 15;
  pthread_mutex_lock(&w->mu);
  while (w->state != ZOO_CONNECTED_STATE &&
         pthread_cond_timedwait(&w->cv, &w->mu, &until) != ETIMEDOUT) {
  }
  int ok = w->state == ZOO_CONNECTED_STATE;
  pthread_mutex_unlock(&w->mu);
  if (ok) return zh;
  zookeeper_close(zh);
fail:
  pthread_cond_destroy(&w->cv);
  pthread_mutex_destroy(&w->mu);
  free(w);
  return NULL;
}

void floor_close(zhandle_t *zh) {
  if (zh == NULL) return;
  conn_wait_t *w = (conn_wait_t *)zoo_get_context(zh);
  zookeeper_close(zh); /* no watcher runs after it returns */
  if (w != NULL) {
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
  }
}

/* ---- names -------------------------------------------------------------------- */

/* "_c_<uuid>-" as Curator and zkl name their nodes: the same length. */
static void new_prefix(char *buf, size_t len) {
  uuid_t u;
  char s[37];
  uuid_generate_random(u);
  uuid_unparse_lower(u, s);
  snprintf(buf, len, "_c_%s-", s);
}

/* The sequence suffix: the last 10 characters of a contender's name. */
static long name_seq(const char *name) {
  size_t n = strlen(name);
  return n >= 10 ? strtol(name + n - 10, NULL, 10) : -1;
}

static int by_seq(const void *a, const void *b) {
  long x = name_seq(*(char *const *)a), y = name_seq(*(char *const *)b);
  return x < y ? -1 : x > y;
}

/* ---- uncontended cycles ------------------------------------------------------------ */

static int create_path(char *buf, size_t len, const char *root) {
  char prefix[64];
  new_prefix(prefix, sizeof prefix);
  return snprintf(buf, len, "%s/%slock-", root, prefix) >= (int)len ? -1 : 0;
}

/* Whether `node` (a full path) is the lowest contender in the listing. */
static int lowest_of(const struct String_vector *kids, const char *node) {
  const char *self = strrchr(node, '/') + 1;
  long mine = name_seq(self);
  int found = 0;
  for (int i = 0; i < kids->count; i++) {
    if (strcmp(kids->data[i], self) == 0) found = 1;
    else if (name_seq(kids->data[i]) < mine) return 0;
  }
  return found;
}

int floor_cycle_seq(zhandle_t *zh, const char *root) {
  char want[256], node[256];
  if (create_path(want, sizeof want, root) != 0) return ZBADARGUMENTS;
  int zrc = zoo_create(zh, want, "floor", 5, &ZOO_OPEN_ACL_UNSAFE,
                       ZOO_EPHEMERAL_SEQUENTIAL, node, sizeof node);
  if (zrc != ZOK) return zrc;
  struct String_vector kids = {0, NULL};
  zrc = zoo_get_children(zh, root, 0, &kids);
  if (zrc == ZOK && !lowest_of(&kids, node)) zrc = ZSYSTEMERROR;
  deallocate_String_vector(&kids);
  int drc = zoo_delete(zh, node, -1);
  return zrc != ZOK ? zrc : drc;
}

int floor_cycle_mark(zhandle_t *zh, const char *root) {
  char want[256], node[256];
  if (create_path(want, sizeof want, root) != 0) return ZBADARGUMENTS;
  int zrc = zoo_create(zh, want, "floor", 5, &ZOO_OPEN_ACL_UNSAFE,
                       ZOO_EPHEMERAL_SEQUENTIAL, node, sizeof node);
  if (zrc != ZOK) return zrc;
  struct String_vector kids = {0, NULL};
  zrc = zoo_get_children(zh, root, 0, &kids);
  if (zrc == ZOK && !lowest_of(&kids, node)) zrc = ZSYSTEMERROR;
  deallocate_String_vector(&kids);
  /* zkl's release: the node's data changed, then the node deleted */
  zoo_op_t ops[2];
  zoo_op_result_t res[2];
  zoo_set_op_init(&ops[0], node, "", 0, -1, NULL);
  zoo_delete_op_init(&ops[1], node, -1);
  int drc = zoo_multi(zh, 2, ops, res);
  return zrc != ZOK ? zrc : drc;
}

/* Both answers of a pipelined cycle, filled on the completion thread. */
typedef struct pipe_wait {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int pending;
  int create_rc, list_rc;
  char node[256];
  int lowest;
} pipe_wait_t;

static void pipe_done(pipe_wait_t *p) {
  pthread_mutex_lock(&p->mu);
  if (--p->pending == 0) pthread_cond_signal(&p->cv);
  pthread_mutex_unlock(&p->mu);
}

static void created(int rc, const char *value, const void *data) {
  pipe_wait_t *p = (pipe_wait_t *)data;
  p->create_rc = rc;
  if (rc == ZOK) snprintf(p->node, sizeof p->node, "%s", value);
  pipe_done(p);
}

static void listed(int rc, const struct String_vector *kids,
                   const void *data) {
  pipe_wait_t *p = (pipe_wait_t *)data;
  p->list_rc = rc;
  /* The create's completion ran first (answers come in order), so the
   * node's name is known here. */
  if (rc == ZOK && p->create_rc == ZOK) p->lowest = lowest_of(kids, p->node);
  pipe_done(p);
}

int floor_cycle_pipelined(zhandle_t *zh, const char *root) {
  char want[256];
  if (create_path(want, sizeof want, root) != 0) return ZBADARGUMENTS;
  pipe_wait_t p;
  memset(&p, 0, sizeof p);
  pthread_mutex_init(&p.mu, NULL);
  pthread_cond_init(&p.cv, NULL);
  p.pending = 2;
  p.create_rc = p.list_rc = ZSYSTEMERROR;
  int zrc = zoo_acreate(zh, want, "floor", 5, &ZOO_OPEN_ACL_UNSAFE,
                        ZOO_EPHEMERAL_SEQUENTIAL, created, &p);
  if (zrc != ZOK) p.pending--;
  int lrc = zoo_aget_children(zh, root, 0, listed, &p);
  if (lrc != ZOK) p.pending--;
  pthread_mutex_lock(&p.mu);
  while (p.pending > 0) pthread_cond_wait(&p.cv, &p.mu);
  pthread_mutex_unlock(&p.mu);
  if (zrc == ZOK) zrc = p.create_rc;
  if (lrc == ZOK) lrc = p.list_rc;
  if (zrc == ZOK) {
    int drc = zoo_delete(zh, p.node, -1);
    if (lrc == ZOK && !p.lowest) lrc = ZSYSTEMERROR;
    zrc = lrc != ZOK ? lrc : drc;
  }
  pthread_cond_destroy(&p.cv);
  pthread_mutex_destroy(&p.mu);
  return zrc;
}

/* ---- the lock -------------------------------------------------------------------- */

int floor_lock_init(floor_lock_t *l, zhandle_t *zh, const char *root,
                    floor_kind_t kind) {
  memset(l, 0, sizeof *l);
  l->zh = zh;
  l->root = root;
  l->kind = kind;
  snprintf(l->marker, sizeof l->marker, "%s",
           kind == FLOOR_READER   ? "__READ__"
           : kind == FLOOR_WRITER ? "__WRIT__"
                                  : "lock-");
  atomic_init(&l->armed, 0);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  int rc = pthread_mutex_init(&l->mu, NULL) || pthread_cond_init(&l->cv, &ca);
  pthread_condattr_destroy(&ca);
  return rc ? -1 : 0;
}

void floor_lock_fini(floor_lock_t *l) {
  pthread_cond_destroy(&l->cv);
  pthread_mutex_destroy(&l->mu);
}

static void pred_watcher(zhandle_t *zh, int type, int state, const char *path,
                         void *ctx) {
  (void)zh;
  (void)type;
  (void)state;
  (void)path;
  floor_lock_t *l = ctx;
  pthread_mutex_lock(&l->mu);
  l->fired = 1;
  pthread_cond_signal(&l->cv);
  pthread_mutex_unlock(&l->mu);
}

/* Given the sorted listing and our index in it: -1 granted, else the
 * index of the node to wait for. */
static int blocker(const floor_lock_t *l, char **names, int self) {
  if (l->kind != FLOOR_READER) return self > 0 ? self - 1 : -1;
  for (int i = self - 1; i >= 0; i--) /* the nearest writer below */
    if (strstr(names[i], "__READ__") == NULL) return i;
  return -1;
}

/* Waits for the watch to fire; 0, or -1 past the deadline. */
static int wait_fired(floor_lock_t *l, const struct timespec *deadline) {
  int rc = 0;
  pthread_mutex_lock(&l->mu);
  while (!l->fired && rc == 0)
    if (pthread_cond_timedwait(&l->cv, &l->mu, deadline) == ETIMEDOUT) rc = -1;
  pthread_mutex_unlock(&l->mu);
  return rc;
}

int floor_lock_acquire(floor_lock_t *l, int timeout_ms) {
  char want[256], prefix[64];
  struct timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += timeout_ms / 1000;
  deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec++;
    deadline.tv_nsec -= 1000000000L;
  }
  new_prefix(prefix, sizeof prefix);
  snprintf(want, sizeof want, "%s/%s%s", l->root, prefix, l->marker);
  int zrc = zoo_create(l->zh, want, "floor", 5, &ZOO_OPEN_ACL_UNSAFE,
                       ZOO_EPHEMERAL_SEQUENTIAL, l->node, sizeof l->node);
  if (zrc != ZOK) return zrc;
  const char *self = strrchr(l->node, '/') + 1;
  for (;;) {
    struct String_vector kids = {0, NULL};
    zrc = zoo_get_children(l->zh, l->root, 0, &kids);
    if (zrc != ZOK) break;
    qsort(kids.data, (size_t)kids.count, sizeof *kids.data, by_seq);
    int me = -1;
    for (int i = 0; i < kids.count && me < 0; i++)
      if (strcmp(kids.data[i], self) == 0) me = i;
    int b = me < 0 ? -2 : blocker(l, kids.data, me);
    char pred[512];
    if (b >= 0) snprintf(pred, sizeof pred, "%s/%s", l->root, kids.data[b]);
    deallocate_String_vector(&kids);
    if (b == -2) {
      zrc = ZNONODE; /* our node is gone: nothing to hold */
      break;
    }
    if (b == -1) return 0;
    pthread_mutex_lock(&l->mu);
    l->fired = 0;
    pthread_mutex_unlock(&l->mu);
    zrc = zoo_wexists(l->zh, pred, pred_watcher, l, NULL);
    if (zrc == ZNONODE) continue; /* gone already: re-check at once */
    if (zrc != ZOK) break;
    atomic_store(&l->armed, 1);
    int w = wait_fired(l, &deadline);
    atomic_store(&l->armed, 0);
    if (w != 0) {
      zrc = -1;
      break;
    }
  }
  zoo_delete(l->zh, l->node, -1);
  l->node[0] = '\0';
  return zrc;
}

int floor_lock_release(floor_lock_t *l) {
  int zrc = zoo_delete(l->zh, l->node, -1);
  l->node[0] = '\0';
  return zrc;
}
