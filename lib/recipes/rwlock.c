/* lib/recipes/rwlock.c - the read/write lock: the reader and writer drivers
 * on the contention core, one contender each, plus per-thread
 * reentrancy (owner.c) with downgrade and a refused upgrade. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/contend.h"

/* ---- the drivers ---- */

/* The read/write lock's queue: Curator's __READ__/__WRIT__ nodes, and
 * kazoo's ReadLock (__rlock__) and WriteLock (__lock__) nodes. */
static int rw_counts(zkl__kind_t k) {
  return k == ZKL__KIND_READ || k == ZKL__KIND_WRITE ||
         k == ZKL__KIND_KAZOO_RLOCK || k == ZKL__KIND_KAZOO_LOCK;
}

static int is_writer(zkl__kind_t k) {
  return k == ZKL__KIND_WRITE || k == ZKL__KIND_KAZOO_LOCK;
}

/* A reader shares with readers: it is blocked only by the nearest writer
 * ahead of it (waiting or holding), which is also the one it watches.  So
 * a reader that arrives after a waiting writer waits for it: writers are
 * served in arrival order and never starve. */
static ptrdiff_t reader_blocker(const zkl__node_t *lower, size_t n) {
  for (size_t i = n; i-- > 0;)
    if (is_writer(lower[i].kind)) return (ptrdiff_t)i;
  return -1;
}

const zkl__driver_t zkl__driver_reader = {
    .name = "read lock",
    .marker = "__READ__",
    .kind = ZKL__KIND_READ,
    .tells_release = 0, /* a reader's hold proves nothing of the others */
    .counts = rw_counts,
    .blocks = is_writer,
    .blocker = reader_blocker,
};

/* A writer is alone: blocked by anything ahead, watching its immediate
 * predecessor; its release proves every lower node of the queue gone. */
const zkl__driver_t zkl__driver_writer = {
    .name = "write lock",
    .marker = "__WRIT__",
    .kind = ZKL__KIND_WRITE,
    .tells_release = 1,
    .counts = rw_counts,
    .blocks = rw_counts,
    .blocker = zkl__blocker_exclusive,
};

struct zkl_rwlock {
  zkl__contender_t rd, wr;
  zkl__owner_t own;  /* own.mu guards the fields below                    */
  unsigned rcount;   /* the owner's read holds                             */
  unsigned wcount;   /* the owner's write holds                            */
  int rd_via_wr;     /* the read hold is covered by the write node (taken
                        while holding the write lock: a downgrade)         */
};

void zkl_rwlock_opts_init(zkl_rwlock_opts_t *o) {
  if (o != NULL) memset(o, 0, sizeof *o);
}

int zkl_rwlock_create(zkl_rwlock_t **out, zkl_session_t *s, const char *path,
                      const zkl_rwlock_opts_t *opts) {
  zkl__clear_error();
  if (out == NULL) return zkl__fail(ZKL_EINVAL, "out is NULL");
  *out = NULL;
  int rc = zkl__check_recipe_args(s, path, opts != NULL ? opts->data : NULL,
                                  opts != NULL ? opts->data_len : 0);
  if (rc != 0) return rc;
  zkl_rwlock_t *l = calloc(1, sizeof *l);
  if (l == NULL) return ZKL_ENOMEM;
  if ((rc = zkl__owner_init(&l->own)) != 0) {
    free(l);
    return rc;
  }
  const void *data = opts != NULL ? opts->data : NULL;
  size_t len = opts != NULL ? opts->data_len : 0;
  rc = zkl__contender_init(&l->rd, s, &zkl__driver_reader, path, data, len,
                           &l->own.cancel_gen);
  if (rc == 0) {
    rc = zkl__contender_init(&l->wr, s, &zkl__driver_writer, path, data, len,
                             &l->own.cancel_gen);
    if (rc != 0) zkl__contender_fini(&l->rd);
  }
  if (rc != 0) {
    zkl__owner_fini(&l->own);
    free(l);
    return rc;
  }
  *out = l;
  return 0;
}

static int holds_any(const zkl_rwlock_t *l) {
  return zkl__owner_mine(&l->own) && (l->rcount > 0 || l->wcount > 0);
}

/* The contender whose node backs the calling thread's hold. */
static zkl__contender_t *backing(zkl_rwlock_t *l) {
  return l->wcount > 0 || l->rd_via_wr ? &l->wr : &l->rd;
}

/* A further hold by a thread that already holds: counts only.  With
 * own.mu held. */
static int hold_again(zkl_rwlock_t *l, int write) {
  if (write && l->wcount == 0)
    return zkl__fail(ZKL_EDEADLK, "the calling thread holds the read lock "
                     "of %s: release it before taking the write lock",
                     l->wr.root);
  int rc = zkl__contend_hold_again(backing(l)); /* a downgrade too */
  unsigned *count = write ? &l->wcount : &l->rcount;
  if (rc == 0 && *count == UINT_MAX) rc = ZKL_EAGAIN;
  if (rc != 0) return rc;
  if (!write && l->rcount == 0) l->rd_via_wr = 1; /* downgrade begins */
  (*count)++;
  return 0;
}

static int acquire_in(zkl_rwlock_t *l, int write, int64_t deadline,
                      unsigned cancel_seen);

static int acquire(zkl_rwlock_t *l, int write, int64_t deadline) {
  zkl__clear_error();
  if (l == NULL) return zkl__fail(ZKL_EINVAL, "rwlock is NULL");
  unsigned cancel_seen;
  int rc = zkl__owner_enter(&l->own, &cancel_seen);
  if (rc != 0) return rc;
  rc = acquire_in(l, write, deadline, cancel_seen);
  zkl__owner_leave(&l->own);
  return rc;
}

static int acquire_in(zkl_rwlock_t *l, int write, int64_t deadline,
                      unsigned cancel_seen) {
  pthread_mutex_lock(&l->own.mu);
  if (holds_any(l)) {
    int rc = hold_again(l, write);
    pthread_mutex_unlock(&l->own.mu);
    return rc;
  }
  int rc = zkl__owner_claim(&l->own, deadline, cancel_seen);
  if (rc == 0) l->rcount = l->wcount = 0, l->rd_via_wr = 0;
  pthread_mutex_unlock(&l->own.mu);
  if (rc != 0) return rc;

  zkl__contender_t *c = write ? &l->wr : &l->rd;
  rc = zkl__contend_acquire(c, deadline, cancel_seen);
  if (rc == 0 && zkl__owner_dying(&l->own)) { /* granted as destroy began */
    zkl__contend_release(c);
    rc = ZKL_ECANCELED;
  }

  pthread_mutex_lock(&l->own.mu);
  if (rc != 0) zkl__owner_free(&l->own);
  else if (write) l->wcount = 1;
  else l->rcount = 1;
  pthread_mutex_unlock(&l->own.mu);
  return rc;
}

static int64_t deadline_of(int64_t timeout_ms) {
  return timeout_ms == 0 ? ZKL__TRY : zkl__deadline_after_ms(timeout_ms);
}

int zkl_rwlock_rdlock(zkl_rwlock_t *l) { return acquire(l, 0, ZKL__FOREVER); }
int zkl_rwlock_tryrdlock(zkl_rwlock_t *l) { return acquire(l, 0, ZKL__TRY); }
int zkl_rwlock_timedrdlock(zkl_rwlock_t *l, int64_t timeout_ms) {
  return acquire(l, 0, deadline_of(timeout_ms));
}
int zkl_rwlock_wrlock(zkl_rwlock_t *l) { return acquire(l, 1, ZKL__FOREVER); }
int zkl_rwlock_trywrlock(zkl_rwlock_t *l) { return acquire(l, 1, ZKL__TRY); }
int zkl_rwlock_timedwrlock(zkl_rwlock_t *l, int64_t timeout_ms) {
  return acquire(l, 1, deadline_of(timeout_ms));
}

int zkl_rwlock_unlock(zkl_rwlock_t *l) {
  zkl__clear_error();
  if (l == NULL) return zkl__fail(ZKL_EINVAL, "rwlock is NULL");
  pthread_mutex_lock(&l->own.mu);
  if (!holds_any(l)) {
    pthread_mutex_unlock(&l->own.mu);
    return zkl__fail(ZKL_EPERM, "the calling thread does not hold %s",
                     l->rd.root);
  }
  /* the write hold goes first: wrlock, rdlock, unlock is a downgrade */
  unsigned *count = l->wcount > 0 ? &l->wcount : &l->rcount;
  if (--*count > 0 || l->wcount + l->rcount > 0) {
    pthread_mutex_unlock(&l->own.mu);
    return 0; /* still holding (a downgraded read keeps the write node) */
  }
  zkl__contender_t *c = l->rd_via_wr || count == &l->wcount ? &l->wr : &l->rd;
  pthread_mutex_unlock(&l->own.mu);
  int rc = zkl__contend_release(c);
  pthread_mutex_lock(&l->own.mu);
  l->rd_via_wr = 0;
  zkl__owner_free(&l->own);
  pthread_mutex_unlock(&l->own.mu);
  return rc;
}

int zkl_rwlock_cancel(zkl_rwlock_t *l) {
  zkl__clear_error();
  if (l == NULL) return ZKL_EINVAL;
  zkl__owner_cancel(&l->own);
  zkl__contend_cancel(&l->rd);
  zkl__contend_cancel(&l->wr);
  return 0;
}

int zkl_rwlock_token(zkl_rwlock_t *l, uint64_t *token) {
  zkl__clear_error();
  if (l == NULL || token == NULL)
    return zkl__fail(ZKL_EINVAL, "rwlock or token is NULL");
  pthread_mutex_lock(&l->own.mu);
  int rc = holds_any(l) ? 0 : ZKL_EPERM;
  if (rc == 0) *token = (uint64_t)backing(l)->czxid;
  pthread_mutex_unlock(&l->own.mu);
  return rc;
}

int zkl_rwlock_holding(zkl_rwlock_t *l) {
  zkl__clear_error();
  if (l == NULL) return ZKL_EINVAL;
  pthread_mutex_lock(&l->own.mu);
  int bits = 0;
  zkl__contender_t *c = NULL;
  if (holds_any(l)) {
    bits = (l->rcount > 0 ? ZKL_RWLOCK_READ : 0) |
           (l->wcount > 0 ? ZKL_RWLOCK_WRITE : 0);
    c = backing(l);
  }
  pthread_mutex_unlock(&l->own.mu);
  if (c == NULL) return 0;
  int h = zkl__contend_hold_health(c);
  return h == 0 ? bits : h;
}

int zkl_rwlock_node(zkl_rwlock_t *l, char *buf, size_t len) {
  zkl__clear_error();
  if (l == NULL || buf == NULL)
    return zkl__fail(ZKL_EINVAL, "rwlock or buf is NULL");
  pthread_mutex_lock(&l->own.mu);
  const zkl__contender_t *c = holds_any(l) ? backing(l) : NULL;
  int rc = c == NULL || c->node == NULL ? ZKL_EPERM
                                        : zkl__copy_string(buf, len, c->node);
  size_t need = rc == ZKL_EINVAL ? strlen(c->node) + 1 : 0;
  pthread_mutex_unlock(&l->own.mu);
  if (rc == ZKL_EPERM)
    return zkl__fail(rc, c == NULL ? "the calling thread holds nothing"
                                   : "the hold has no node now");
  if (rc != 0)
    return zkl__fail(rc, "buf has %zu bytes, the node's path needs %zu", len,
                     need);
  return 0;
}

static void kick(void *arg) {
  zkl_rwlock_t *l = arg;
  zkl__contend_cancel(&l->rd);
  zkl__contend_cancel(&l->wr);
}

void zkl_rwlock_destroy(zkl_rwlock_t *l) {
  if (l == NULL) return;
  zkl__owner_drain(&l->own, kick, l); /* waits in flight: ECANCELED */
  pthread_mutex_lock(&l->own.mu);
  int held = l->own.busy && (l->rcount > 0 || l->wcount > 0);
  zkl__contender_t *c = held ? backing(l) : NULL;
  pthread_mutex_unlock(&l->own.mu);
  if (c != NULL) zkl__contend_release(c);
  zkl__contender_fini(&l->rd);
  zkl__contender_fini(&l->wr);
  zkl__owner_fini(&l->own);
  free(l);
}
