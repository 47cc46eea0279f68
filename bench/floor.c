/* bench/floor.c - the floor: the lock protocol (and, for S9 and S10, the
 * queue recipe; for S11 the counter; for S12 the multi-lock; for S13 the
 * semaphore) done by hand on raw libzookeeper-mt calls, with no library
 * around it.
 *
 * The counter: get, then set at the version read, again from the get on
 * ZBADVERSION (what any compare-and-set counter must do at least).
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
  /* as zkl's sessions: the hosts resolved once a minute, not at every
   * check of the socket (the client's default), so that the floor and zkl
   * run on the same client settings */
  zoo_set_servers_resolution_delay(zh, 60000);
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

/* zkl's release: one multi that changes the node's data, then deletes it. */
static int mark_release(zhandle_t *zh, const char *node) {
  zoo_op_t ops[2];
  zoo_op_result_t res[2];
  zoo_set_op_init(&ops[0], node, "", 0, -1, NULL);
  zoo_delete_op_init(&ops[1], node, -1);
  return zoo_multi(zh, 2, ops, res);
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
  int drc = mark_release(zh, node);
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

/* The deadline timeout_ms from now, on CLOCK_MONOTONIC (the cv's). */
static void deadline_in(struct timespec *deadline, int timeout_ms) {
  clock_gettime(CLOCK_MONOTONIC, deadline);
  deadline->tv_sec += timeout_ms / 1000;
  deadline->tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (deadline->tv_nsec >= 1000000000L) {
    deadline->tv_sec++;
    deadline->tv_nsec -= 1000000000L;
  }
}

/* Our node l->node made: list, watch the node to wait for, list again
 * after every wake-up, until it is our turn.  0 granted, or a ZooKeeper
 * code / -1 (deadline); the node is left to the caller. */
static int wait_turn(floor_lock_t *l, const struct timespec *deadline) {
  int zrc;
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
    int w = wait_fired(l, deadline);
    atomic_store(&l->armed, 0);
    if (w != 0) {
      zrc = -1;
      break;
    }
  }
  return zrc;
}

int floor_lock_acquire(floor_lock_t *l, int timeout_ms) {
  char want[256], prefix[64];
  struct timespec deadline;
  deadline_in(&deadline, timeout_ms);
  new_prefix(prefix, sizeof prefix);
  snprintf(want, sizeof want, "%s/%s%s", l->root, prefix, l->marker);
  int zrc = zoo_create(l->zh, want, "floor", 5, &ZOO_OPEN_ACL_UNSAFE,
                       ZOO_EPHEMERAL_SEQUENTIAL, l->node, sizeof l->node);
  if (zrc != ZOK) return zrc;
  zrc = wait_turn(l, &deadline);
  if (zrc == 0) return 0;
  zoo_delete(l->zh, l->node, -1);
  l->node[0] = '\0';
  return zrc;
}

int floor_lock_release(floor_lock_t *l) {
  int zrc = zoo_delete(l->zh, l->node, -1);
  l->node[0] = '\0';
  return zrc;
}

/* ---- the multi-lock by hand (S12) ------------------------------------------------ */

/* Every path's node in ONE multi (one prefix for all, as zkl names
 * them), then the classic wait in each queue, one queue after the other:
 * every node waited for is older than ours, whatever the order, so the
 * waits cannot form a cycle; a queue looked at later may be ours already
 * (its holder released it with the one we waited for).  The release
 * deletes every node in ONE multi. */

int floor_multilock_init(floor_multilock_t *m, zhandle_t *zh,
                         const char *const *roots, int n) {
  memset(m, 0, sizeof *m);
  m->zh = zh;
  m->l = calloc((size_t)n, sizeof *m->l);
  if (m->l == NULL) return -1;
  for (; m->n < n; m->n++)
    if (floor_lock_init(&m->l[m->n], zh, roots[m->n], FLOOR_MUTEX) != 0)
      return -1;
  return 0;
}

void floor_multilock_fini(floor_multilock_t *m) {
  for (int i = 0; i < m->n; i++) floor_lock_fini(&m->l[i]);
  free(m->l);
  memset(m, 0, sizeof *m);
}

int floor_multilock_acquire(floor_multilock_t *m, int timeout_ms) {
  char prefix[64];
  struct timespec deadline;
  deadline_in(&deadline, timeout_ms);
  new_prefix(prefix, sizeof prefix);
  char(*want)[256] = calloc((size_t)m->n, sizeof *want);
  zoo_op_t *ops = calloc((size_t)m->n, sizeof *ops);
  zoo_op_result_t *res = calloc((size_t)m->n, sizeof *res);
  int zrc = ZSYSTEMERROR;
  if (want != NULL && ops != NULL && res != NULL) {
    for (int i = 0; i < m->n; i++) {
      floor_lock_t *l = &m->l[i];
      snprintf(want[i], sizeof want[i], "%s/%s%s", l->root, prefix,
               l->marker);
      zoo_create_op_init(&ops[i], want[i], "floor", 5, &ZOO_OPEN_ACL_UNSAFE,
                         ZOO_EPHEMERAL_SEQUENTIAL, l->node, sizeof l->node);
    }
    zrc = zoo_multi(m->zh, m->n, ops, res);
  }
  free(want);
  free(ops);
  free(res);
  if (zrc != ZOK) { /* all or nothing: nothing made */
    for (int i = 0; i < m->n; i++) m->l[i].node[0] = '\0';
    return zrc;
  }
  for (int i = 0; i < m->n && zrc == ZOK; i++)
    zrc = wait_turn(&m->l[i], &deadline);
  if (zrc == ZOK) return 0;
  floor_multilock_release(m);
  return zrc;
}

int floor_multilock_release(floor_multilock_t *m) {
  zoo_op_t *ops = calloc((size_t)m->n, sizeof *ops);
  zoo_op_result_t *res = calloc((size_t)m->n, sizeof *res);
  int zrc = ZSYSTEMERROR;
  if (ops != NULL && res != NULL) {
    for (int i = 0; i < m->n; i++)
      zoo_delete_op_init(&ops[i], m->l[i].node, -1);
    zrc = zoo_multi(m->zh, m->n, ops, res);
  }
  free(ops);
  free(res);
  for (int i = 0; i < m->n; i++) m->l[i].node[0] = '\0';
  return zrc;
}

/* ---- the semaphore by hand (S13) ------------------------------------------------ */

/* Curator's InterProcessSemaphoreV2 protocol, zkl_sem's too, with nothing
 * either adds for safety: the gate is the classic lock; its holder lists
 * the leases with a child watch until one fits, makes its lease with a
 * plain create (zkl checks its gate node in the same multi and reads the
 * node's czxid for the fencing token; Curator makes the lease first and
 * then counts, itself included), and deletes its gate node; the release
 * deletes the lease.  Steady state with the gate queued: the gate's
 * create, list, exists, list; then the leases' list, the lease's create,
 * the gate's delete; later the lease's delete: 8 requests, 4 writes per
 * grant (more lists when MAX are held and the gate's holder waits). */

int floor_sem_init(floor_sem_t *fs, zhandle_t *zh, const char *path,
                   int max) {
  memset(fs, 0, sizeof *fs);
  fs->zh = zh;
  fs->max = max;
  snprintf(fs->locks, sizeof fs->locks, "%s/locks", path);
  snprintf(fs->leases, sizeof fs->leases, "%s/leases", path);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  int rc = pthread_mutex_init(&fs->mu, NULL) || pthread_cond_init(&fs->cv, &ca);
  pthread_condattr_destroy(&ca);
  if (rc) return -1;
  return floor_lock_init(&fs->gate, zh, fs->locks, FLOOR_MUTEX);
}

void floor_sem_fini(floor_sem_t *fs) {
  floor_lock_fini(&fs->gate);
  pthread_cond_destroy(&fs->cv);
  pthread_mutex_destroy(&fs->mu);
}

static void leases_watcher(zhandle_t *zh, int type, int state,
                           const char *path, void *ctx) {
  (void)zh;
  (void)type;
  (void)state;
  (void)path;
  floor_sem_t *fs = ctx;
  pthread_mutex_lock(&fs->mu);
  fs->fired = 1;
  pthread_cond_signal(&fs->cv);
  pthread_mutex_unlock(&fs->mu);
}

/* As the gate's holder: the leases listed (a child watch set) until fewer
 * than max are there.  0, or a ZooKeeper code / -1 (deadline).  A watch
 * of an earlier turn that fires late only costs one more listing. */
static int leases_fit(floor_sem_t *fs, const struct timespec *deadline) {
  for (;;) {
    pthread_mutex_lock(&fs->mu);
    fs->fired = 0;
    pthread_mutex_unlock(&fs->mu);
    struct String_vector kids = {0, NULL};
    int zrc = zoo_wget_children(fs->zh, fs->leases, leases_watcher, fs,
                                &kids);
    if (zrc != ZOK) return zrc;
    int n = kids.count;
    deallocate_String_vector(&kids);
    if (n < fs->max) return 0;
    int rc = 0;
    pthread_mutex_lock(&fs->mu);
    while (!fs->fired && rc == 0)
      if (pthread_cond_timedwait(&fs->cv, &fs->mu, deadline) == ETIMEDOUT)
        rc = -1;
    pthread_mutex_unlock(&fs->mu);
    if (rc != 0) return rc;
  }
}

int floor_sem_acquire(floor_sem_t *fs, int timeout_ms) {
  struct timespec deadline;
  deadline_in(&deadline, timeout_ms);
  int zrc = floor_lock_acquire(&fs->gate, timeout_ms);
  if (zrc != ZOK) return zrc;
  zrc = leases_fit(fs, &deadline);
  if (zrc == ZOK) {
    char want[sizeof fs->leases + 80], prefix[64];
    new_prefix(prefix, sizeof prefix);
    snprintf(want, sizeof want, "%s/%slease-", fs->leases, prefix);
    zrc = zoo_create(fs->zh, want, "floor", 5, &ZOO_OPEN_ACL_UNSAFE,
                     ZOO_EPHEMERAL_SEQUENTIAL, fs->lease, sizeof fs->lease);
  }
  int grc = floor_lock_release(&fs->gate);
  if (zrc == ZOK && grc != ZOK) { /* a gate node left: give the lease back */
    floor_sem_release(fs);
    zrc = grc;
  }
  return zrc;
}

int floor_sem_release(floor_sem_t *fs) {
  int zrc = zoo_delete(fs->zh, fs->lease, -1);
  fs->lease[0] = '\0';
  return zrc;
}

/* ---- the queue recipe by hand (S9, S10) ---------------------------------------- */

/* ZooKeeper's own queue recipe (its Java DistributedQueue and the C
 * recipes): an item is a PERSISTENT_SEQUENTIAL child "qn-<seq>" holding
 * the payload; a take lists the children, and for the lowest reads its
 * data, then deletes it, and has it if the delete was its own.  The claim
 * layout is kazoo's LockingQueue: entries/entry-100-<seq> and an ephemeral
 * taken/<name> per item in process. */

void floor_queue_init(floor_queue_t *fq, zhandle_t *zh, const char *dir,
                      const char *prefix, const char *taken) {
  memset(fq, 0, sizeof *fq);
  fq->zh = zh;
  snprintf(fq->dir, sizeof fq->dir, "%s", dir);
  snprintf(fq->prefix, sizeof fq->prefix, "%s", prefix);
  snprintf(fq->taken, sizeof fq->taken, "%s", taken != NULL ? taken : "");
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_mutex_init(&fq->mu, NULL);
  pthread_cond_init(&fq->cv, &ca);
  pthread_condattr_destroy(&ca);
}

void floor_queue_forget(floor_queue_t *fq) {
  deallocate_String_vector(&fq->kids);
  fq->kids.count = 0;
  fq->kids.data = NULL;
  fq->next = 0;
}

void floor_queue_fini(floor_queue_t *fq) {
  floor_queue_forget(fq);
  pthread_cond_destroy(&fq->cv);
  pthread_mutex_destroy(&fq->mu);
}

/* What a put creates: "<dir>/<prefix>", the server appends the sequence. */
static void fq_item_path(const floor_queue_t *fq, char *buf, size_t len) {
  snprintf(buf, len, "%s/%s", fq->dir, fq->prefix);
}

int floor_queue_put(floor_queue_t *fq, const void *data, int len) {
  char path[300], made[320];
  fq_item_path(fq, path, sizeof path);
  return zoo_create(fq->zh, path, data, len, &ZOO_OPEN_ACL_UNSAFE,
                    ZOO_PERSISTENT_SEQUENTIAL, made, sizeof made);
}

int floor_queue_put_batch(floor_queue_t *fq, const void *data, int len,
                          int n) {
  char path[300];
  fq_item_path(fq, path, sizeof path);
  zoo_op_t *ops = calloc((size_t)n, sizeof *ops);
  zoo_op_result_t *res = calloc((size_t)n, sizeof *res);
  int zrc = ZSYSTEMERROR;
  if (ops != NULL && res != NULL) {
    for (int i = 0; i < n; i++)
      zoo_create_op_init(&ops[i], path, data, len, &ZOO_OPEN_ACL_UNSAFE,
                         ZOO_PERSISTENT_SEQUENTIAL, NULL, 0);
    zrc = zoo_multi(fq->zh, n, ops, res);
  }
  free(ops);
  free(res);
  return zrc;
}

/* A fresh listing of dir (watch: with fq's child watcher), in queue order,
 * the claimed items (taken/) left out.  0 or a ZooKeeper code. */
static void fq_watcher(zhandle_t *zh, int type, int state, const char *path,
                       void *ctx) {
  (void)zh, (void)type, (void)state, (void)path;
  floor_queue_t *fq = ctx;
  pthread_mutex_lock(&fq->mu);
  fq->fired = 1;
  pthread_cond_broadcast(&fq->cv);
  pthread_mutex_unlock(&fq->mu);
}

static int fq_list(floor_queue_t *fq, int watch) {
  floor_queue_forget(fq);
  int zrc = watch ? zoo_wget_children(fq->zh, fq->dir, fq_watcher, fq,
                                      &fq->kids)
                  : zoo_get_children(fq->zh, fq->dir, 0, &fq->kids);
  if (zrc != ZOK) {
    fq->kids.count = 0;
    fq->kids.data = NULL;
    return zrc;
  }
  if (fq->kids.count > 1)
    qsort(fq->kids.data, (size_t)fq->kids.count, sizeof *fq->kids.data,
          by_seq);
  return ZOK;
}

/* The next name of the listing, or NULL when it has run out. */
static const char *fq_next(floor_queue_t *fq) {
  return fq->next < fq->kids.count ? fq->kids.data[fq->next++] : NULL;
}

/* An answer set of pipelined requests, filled on the completion thread. */
typedef struct fq_pipe {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int pending;
  int n;
  int *get_rc, *del_rc, *len;
  char **data;
} fq_pipe_t;

typedef struct fq_slot {
  fq_pipe_t *p;
  int i;
} fq_slot_t;

static int fq_pipe_init(fq_pipe_t *p, int n, fq_slot_t **slots) {
  memset(p, 0, sizeof *p);
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  p->n = n;
  p->get_rc = calloc((size_t)n, sizeof *p->get_rc);
  p->del_rc = calloc((size_t)n, sizeof *p->del_rc);
  p->len = calloc((size_t)n, sizeof *p->len);
  p->data = calloc((size_t)n, sizeof *p->data);
  *slots = calloc((size_t)n, sizeof **slots);
  if (p->get_rc == NULL || p->del_rc == NULL || p->len == NULL ||
      p->data == NULL || *slots == NULL)
    return -1;
  for (int i = 0; i < n; i++) {
    (*slots)[i].p = p;
    (*slots)[i].i = i;
  }
  return 0;
}

static void fq_pipe_fini(fq_pipe_t *p, fq_slot_t *slots) {
  for (int i = 0; p->data != NULL && i < p->n; i++) free(p->data[i]);
  free(p->get_rc);
  free(p->del_rc);
  free(p->len);
  free(p->data);
  free(slots);
  pthread_cond_destroy(&p->cv);
  pthread_mutex_destroy(&p->mu);
}

static void fq_pipe_done(fq_pipe_t *p) {
  pthread_mutex_lock(&p->mu);
  if (--p->pending == 0) pthread_cond_signal(&p->cv);
  pthread_mutex_unlock(&p->mu);
}

static void fq_pipe_wait(fq_pipe_t *p) {
  pthread_mutex_lock(&p->mu);
  while (p->pending > 0) pthread_cond_wait(&p->cv, &p->mu);
  pthread_mutex_unlock(&p->mu);
}

static void fq_got(int rc, const char *value, int value_len,
                   const struct Stat *stat, const void *data) {
  (void)stat;
  const fq_slot_t *s = data;
  s->p->get_rc[s->i] = rc;
  if (rc == ZOK && value_len >= 0) {
    s->p->data[s->i] = malloc((size_t)value_len + 1);
    if (s->p->data[s->i] != NULL) {
      if (value_len > 0) memcpy(s->p->data[s->i], value, (size_t)value_len);
      s->p->data[s->i][value_len] = '\0';
    }
    s->p->len[s->i] = value_len;
  }
  fq_pipe_done(s->p);
}

static void fq_deleted(int rc, const void *data) {
  const fq_slot_t *s = data;
  s->p->del_rc[s->i] = rc;
  fq_pipe_done(s->p);
}

/* The reads and deletes of up to n names sent together; how many of them
 * were ours (*got), their payloads' lengths checked.  0 or a code. */
static int fq_take_pipelined(floor_queue_t *fq, const char **names, int n,
                             int *got) {
  fq_pipe_t p;
  fq_slot_t *slots = NULL;
  *got = 0;
  int zrc = ZOK;
  if (fq_pipe_init(&p, n, &slots) != 0) {
    fq_pipe_fini(&p, slots);
    return ZSYSTEMERROR;
  }
  for (int i = 0; i < n; i++) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", fq->dir, names[i]);
    pthread_mutex_lock(&p.mu);
    p.pending += 2;
    pthread_mutex_unlock(&p.mu);
    int g = zoo_aget(fq->zh, path, 0, fq_got, &slots[i]);
    int d = zoo_adelete(fq->zh, path, -1, fq_deleted, &slots[i]);
    if (g != ZOK || d != ZOK) {
      pthread_mutex_lock(&p.mu);
      p.pending -= (g != ZOK) + (d != ZOK);
      pthread_mutex_unlock(&p.mu);
      zrc = g != ZOK ? g : d;
      break;
    }
  }
  fq_pipe_wait(&p);
  for (int i = 0; i < n; i++) {
    if (p.get_rc[i] == ZOK && p.del_rc[i] == ZOK) (*got)++;
    else if (p.del_rc[i] != ZNONODE && p.del_rc[i] != ZOK && zrc == ZOK)
      zrc = p.del_rc[i];
  }
  fq_pipe_fini(&p, slots);
  return zrc;
}

/* The reads of n names sent together, then ONE multi deleting them all:
 * one write for the batch instead of one per item.  Should an item be
 * gone (another consumer's), the multi fails whole and the rest are
 * deleted one by one.  *got: ours.  0 or a code. */
static int fq_take_multi(floor_queue_t *fq, const char **names, int n,
                         int *got) {
  fq_pipe_t p;
  fq_slot_t *slots = NULL;
  *got = 0;
  char(*paths)[600] = calloc((size_t)n, sizeof *paths);
  zoo_op_t *ops = calloc((size_t)n, sizeof *ops);
  zoo_op_result_t *res = calloc((size_t)n, sizeof *res);
  int zrc = ZOK;
  if (fq_pipe_init(&p, n, &slots) != 0 || paths == NULL || ops == NULL ||
      res == NULL) {
    zrc = ZSYSTEMERROR;
    n = 0;
  }
  for (int i = 0; i < n; i++) {
    snprintf(paths[i], sizeof paths[i], "%s/%s", fq->dir, names[i]);
    pthread_mutex_lock(&p.mu);
    p.pending++;
    pthread_mutex_unlock(&p.mu);
    if ((zrc = zoo_aget(fq->zh, paths[i], 0, fq_got, &slots[i])) != ZOK) {
      pthread_mutex_lock(&p.mu);
      p.pending--;
      pthread_mutex_unlock(&p.mu);
      n = i;
      break;
    }
  }
  if (n > 0) fq_pipe_wait(&p);
  int k = 0;
  for (int i = 0; i < n; i++)
    if (p.get_rc[i] == ZOK) zoo_delete_op_init(&ops[k++], paths[i], -1);
  if (k > 0) {
    int mrc = zoo_multi(fq->zh, k, ops, res);
    if (mrc == ZOK) {
      *got = k;
    } else if (mrc == ZNONODE) { /* one was gone: the rest one by one */
      for (int i = 0; i < k; i++)
        if (zoo_delete(fq->zh, ops[i].delete_op.path, -1) == ZOK) (*got)++;
    } else if (zrc == ZOK) {
      zrc = mrc;
    }
  }
  if (p.get_rc != NULL) fq_pipe_fini(&p, slots);
  else free(slots);
  free(paths);
  free(ops);
  free(res);
  return zrc;
}

int floor_queue_take(floor_queue_t *fq, int pipelined) {
  for (int listed = 0;;) {
    const char *name = fq_next(fq);
    if (name == NULL) {
      if (listed) return 1; /* empty */
      int zrc = fq_list(fq, 0);
      if (zrc != ZOK) return zrc;
      listed = 1;
      continue;
    }
    if (pipelined) {
      int got, zrc = fq_take_pipelined(fq, &name, 1, &got);
      if (zrc != ZOK) return zrc;
      if (got) return 0;
      continue;
    }
    char path[600];
    snprintf(path, sizeof path, "%s/%s", fq->dir, name);
    char buf[1024];
    int len = sizeof buf;
    int zrc = zoo_get(fq->zh, path, 0, buf, &len, NULL);
    if (zrc == ZNONODE) continue; /* another consumer's */
    if (zrc != ZOK) return zrc;
    zrc = zoo_delete(fq->zh, path, -1);
    if (zrc == ZOK) return 0;
    if (zrc != ZNONODE) return zrc;
  }
}

int floor_queue_take_batch(floor_queue_t *fq, int max, int multi, int *n) {
  *n = 0;
  const char **names = calloc((size_t)max, sizeof *names);
  if (names == NULL) return ZSYSTEMERROR;
  int zrc = ZOK;
  for (int listed = 0; *n == 0;) {
    int k = 0;
    for (const char *name; k < max && (name = fq_next(fq)) != NULL;)
      names[k++] = name;
    if (k == 0) {
      if (listed) break; /* empty */
      if ((zrc = fq_list(fq, 0)) != ZOK) break;
      listed = 1;
      continue;
    }
    int got;
    zrc = multi ? fq_take_multi(fq, names, k, &got)
                : fq_take_pipelined(fq, names, k, &got);
    if (zrc != ZOK) break;
    *n = got;
  }
  free(names);
  return zrc != ZOK ? zrc : *n > 0 ? 0 : 1;
}

/* A pipelined claim's create: its answer kept in the slot's del_rc. */
static void fq_claimed(int rc, const char *value, const void *data) {
  (void)value;
  const fq_slot_t *s = data;
  s->p->del_rc[s->i] = rc;
  fq_pipe_done(s->p);
}

int floor_queue_claim_ack(floor_queue_t *fq, int pipelined) {
  for (int listed = 0;;) {
    const char *name = fq_next(fq);
    if (name == NULL) {
      if (listed) return 1;
      int zrc = fq_list(fq, 0);
      if (zrc != ZOK) return zrc;
      listed = 1;
      continue;
    }
    char path[600], claim[600], made[600];
    snprintf(path, sizeof path, "%s/%s", fq->dir, name);
    snprintf(claim, sizeof claim, "%s/%s", fq->taken, name);
    int crc, grc;
    if (pipelined) { /* the claim and the read sent together */
      fq_pipe_t p;
      fq_slot_t *slots = NULL;
      if (fq_pipe_init(&p, 1, &slots) != 0) {
        fq_pipe_fini(&p, slots);
        return ZSYSTEMERROR;
      }
      p.pending = 2;
      crc = zoo_acreate(fq->zh, claim, "floor", 5, &ZOO_OPEN_ACL_UNSAFE,
                        ZOO_EPHEMERAL, fq_claimed, &slots[0]);
      if (crc != ZOK) p.pending--;
      grc = zoo_aget(fq->zh, path, 0, fq_got, &slots[0]);
      if (grc != ZOK) p.pending--;
      fq_pipe_wait(&p);
      if (crc == ZOK) crc = p.del_rc[0]; /* the create's answer, there */
      if (grc == ZOK) grc = p.get_rc[0];
      fq_pipe_fini(&p, slots);
    } else {
      crc = zoo_create(fq->zh, claim, "floor", 5, &ZOO_OPEN_ACL_UNSAFE,
                       ZOO_EPHEMERAL, made, sizeof made);
      char buf[1024];
      int len = sizeof buf;
      grc = crc == ZOK ? zoo_get(fq->zh, path, 0, buf, &len, NULL) : ZOK;
    }
    if (crc == ZNODEEXISTS) continue; /* someone else's claim */
    if (crc != ZOK) return crc;
    if (grc == ZNONODE) { /* gone meanwhile: give the claim back */
      zoo_delete(fq->zh, claim, -1);
      continue;
    }
    if (grc != ZOK) return grc;
    zoo_op_t ops[2];
    zoo_op_result_t res[2];
    zoo_delete_op_init(&ops[0], path, -1);
    zoo_delete_op_init(&ops[1], claim, -1);
    return zoo_multi(fq->zh, 2, ops, res);
  }
}

int floor_queue_take_wait(floor_queue_t *fq, int timeout_ms,
                          const atomic_int *stop, char **data, int *len) {
  *data = NULL;
  *len = 0;
  struct timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += timeout_ms / 1000;
  deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec++;
    deadline.tv_nsec -= 1000000000L;
  }
  while (!atomic_load(stop)) {
    pthread_mutex_lock(&fq->mu);
    fq->fired = 0;
    pthread_mutex_unlock(&fq->mu);
    int zrc = fq_list(fq, 1); /* the recipe lists, with a watch, each time */
    if (zrc != ZOK) return zrc;
    int listed = fq->kids.count;
    for (const char *name; (name = fq_next(fq)) != NULL;) {
      char path[600];
      snprintf(path, sizeof path, "%s/%s", fq->dir, name);
      char buf[1024];
      int n = sizeof buf - 1;
      zrc = zoo_get(fq->zh, path, 0, buf, &n, NULL);
      if (zrc == ZNONODE) continue;
      if (zrc != ZOK) return zrc;
      zrc = zoo_delete(fq->zh, path, -1);
      if (zrc == ZNONODE) continue; /* another consumer's */
      if (zrc != ZOK) return zrc;
      *len = n > 0 ? n : 0;
      *data = malloc((size_t)*len + 1);
      if (*data == NULL) return ZSYSTEMERROR;
      memcpy(*data, buf, (size_t)*len);
      (*data)[*len] = '\0';
      return 0;
    }
    if (listed > 0) continue; /* all taken by others: list again at once */
    int rc = 0;
    pthread_mutex_lock(&fq->mu);
    while (!fq->fired && !atomic_load(stop) && rc == 0)
      if (pthread_cond_timedwait(&fq->cv, &fq->mu, &deadline) == ETIMEDOUT)
        rc = -1;
    pthread_mutex_unlock(&fq->mu);
    if (rc != 0) return -1;
  }
  return -1;
}

void floor_queue_stop(floor_queue_t *fq) {
  pthread_mutex_lock(&fq->mu);
  pthread_cond_broadcast(&fq->cv);
  pthread_mutex_unlock(&fq->mu);
}

/* ---- the counter (S11) ------------------------------------------------------- */

int floor_counter_read(zhandle_t *zh, const char *path, int32_t *value,
                       int32_t *version) {
  unsigned char buf[16];
  int n = sizeof buf;
  struct Stat st;
  int zrc = zoo_get(zh, path, 0, (char *)buf, &n, &st);
  if (zrc != ZOK) return zrc;
  if (n != 4) return ZBADARGUMENTS; /* not a 4-byte counter */
  *value = (int32_t)((uint32_t)buf[0] << 24 | (uint32_t)buf[1] << 16 |
                     (uint32_t)buf[2] << 8 | (uint32_t)buf[3]);
  if (version != NULL) *version = st.version;
  return ZOK;
}

int floor_counter_add(zhandle_t *zh, const char *path, int32_t delta,
                      int *conflicts) {
  for (;;) {
    int32_t v, version;
    int zrc = floor_counter_read(zh, path, &v, &version);
    if (zrc != ZOK) return zrc;
    uint32_t u = (uint32_t)v + (uint32_t)delta; /* the bench never wraps */
    unsigned char buf[4] = {(unsigned char)(u >> 24), (unsigned char)(u >> 16),
                            (unsigned char)(u >> 8), (unsigned char)u};
    zrc = zoo_set(zh, path, (const char *)buf, 4, version);
    if (zrc != ZBADVERSION) return zrc;
    if (conflicts != NULL) (*conflicts)++; /* another writer came first */
  }
}
