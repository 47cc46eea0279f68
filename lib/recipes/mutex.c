/* lib/recipes/mutex.c - the exclusive lock: the mutex driver on the
 * contention core, plus per-thread reentrancy (owner.c). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/contend.h"

/* ---- the driver ---- */

/* The mutex queues behind every exclusive contender of the peers: Curator's
 * and go-zookeeper's "-lock-" nodes and kazoo's "__lock__" nodes (kazoo's
 * read locks do not block kazoo's own Lock either). */
static int mutex_counts(zkl__kind_t k) {
  return k == ZKL__KIND_LOCK || k == ZKL__KIND_KAZOO_LOCK;
}


const zkl__driver_t zkl__driver_mutex = {
    .name = "mutex",
    .marker = "lock-",
    .kind = ZKL__KIND_LOCK,
    .tells_release = 1,
    .counts = mutex_counts,
    .blocks = mutex_counts,
    .blocker = zkl__blocker_exclusive,
};

#define DATA_MAX 1024

struct zkl_mutex {
  zkl__contender_t c;
  zkl__owner_t own;  /* own.mu guards count                          */
  unsigned count;    /* the owner's recursion count (0 while acquiring) */
};

void zkl_mutex_opts_init(zkl_mutex_opts_t *o) {
  if (o != NULL) memset(o, 0, sizeof *o);
}

int zkl__check_recipe_args(zkl_session_t *s, const char *path,
                           const void *data, size_t len) {
  if (s == NULL) return zkl__fail(ZKL_EINVAL, "session is NULL");
  int rc = zkl__path_validate(path);
  if (rc != 0) return rc;
  if (len > DATA_MAX)
    return zkl__fail(ZKL_EINVAL, "node data is %zu bytes, more than %d", len,
                     DATA_MAX);
  if (data == NULL && len > 0)
    return zkl__fail(ZKL_EINVAL, "data_len without data");
  return 0;
}

int zkl_mutex_create(zkl_mutex_t **out, zkl_session_t *s, const char *path,
                     const zkl_mutex_opts_t *opts) {
  zkl__clear_error();
  if (out == NULL) return zkl__fail(ZKL_EINVAL, "out is NULL");
  *out = NULL;
  int rc = zkl__check_recipe_args(s, path, opts != NULL ? opts->data : NULL,
                                  opts != NULL ? opts->data_len : 0);
  if (rc != 0) return rc;
  zkl_mutex_t *m = calloc(1, sizeof *m);
  if (m == NULL) return ZKL_ENOMEM;
  if ((rc = zkl__owner_init(&m->own)) != 0) {
    free(m);
    return rc;
  }
  rc = zkl__contender_init(&m->c, s, &zkl__driver_mutex, path,
                           opts != NULL ? opts->data : NULL,
                           opts != NULL ? opts->data_len : 0,
                           &m->own.cancel_gen);
  if (rc != 0) {
    zkl__owner_fini(&m->own);
    free(m);
    return rc;
  }
  *out = m;
  return 0;
}

static int held_by_me(const zkl_mutex_t *m) {
  return zkl__owner_mine(&m->own) && m->count > 0;
}

static int acquire_in(zkl_mutex_t *m, int64_t deadline,
                      unsigned cancel_seen);

static int acquire(zkl_mutex_t *m, int64_t deadline) {
  zkl__clear_error();
  if (m == NULL) return zkl__fail(ZKL_EINVAL, "mutex is NULL");
  unsigned cancel_seen;
  int rc = zkl__owner_enter(&m->own, &cancel_seen);
  if (rc != 0) return rc;
  rc = acquire_in(m, deadline, cancel_seen);
  zkl__owner_leave(&m->own);
  return rc;
}

static int acquire_in(zkl_mutex_t *m, int64_t deadline,
                      unsigned cancel_seen) {
  pthread_mutex_lock(&m->own.mu);
  if (held_by_me(m)) {
    int rc = zkl__contend_hold_again(&m->c); /* else the count stays */
    if (rc == 0 && m->count == UINT_MAX) rc = ZKL_EAGAIN;
    if (rc == 0) m->count++;
    pthread_mutex_unlock(&m->own.mu);
    return rc;
  }
  int rc = zkl__owner_claim(&m->own, deadline, cancel_seen);
  if (rc == 0) m->count = 0;
  pthread_mutex_unlock(&m->own.mu);
  if (rc != 0) return rc;

  rc = zkl__contend_acquire(&m->c, deadline, cancel_seen);
  if (rc == 0 && zkl__owner_dying(&m->own)) { /* granted as destroy began */
    zkl__contend_release(&m->c);
    rc = ZKL_ECANCELED;
  }

  pthread_mutex_lock(&m->own.mu);
  if (rc == 0) m->count = 1;
  else zkl__owner_free(&m->own);
  pthread_mutex_unlock(&m->own.mu);
  return rc;
}

int zkl_mutex_lock(zkl_mutex_t *m) { return acquire(m, ZKL__FOREVER); }

int zkl_mutex_trylock(zkl_mutex_t *m) { return acquire(m, ZKL__TRY); }

int zkl_mutex_timedlock(zkl_mutex_t *m, int64_t timeout_ms) {
  if (timeout_ms == 0) return acquire(m, ZKL__TRY);
  return acquire(m, zkl__deadline_after_ms(timeout_ms));
}

int zkl_mutex_unlock(zkl_mutex_t *m) {
  zkl__clear_error();
  if (m == NULL) return zkl__fail(ZKL_EINVAL, "mutex is NULL");
  pthread_mutex_lock(&m->own.mu);
  if (!held_by_me(m)) {
    pthread_mutex_unlock(&m->own.mu);
    return zkl__fail(ZKL_EPERM, "the calling thread does not hold %s",
                     m->c.root);
  }
  if (--m->count > 0) {
    pthread_mutex_unlock(&m->own.mu);
    return 0;
  }
  /* The object stays ours while the node is deleted, so that another local
   * thread cannot start a new acquisition on it meanwhile. */
  pthread_mutex_unlock(&m->own.mu);
  int rc = zkl__contend_release(&m->c);
  pthread_mutex_lock(&m->own.mu);
  zkl__owner_free(&m->own);
  pthread_mutex_unlock(&m->own.mu);
  return rc;
}

int zkl_mutex_cancel(zkl_mutex_t *m) {
  if (m == NULL) return ZKL_EINVAL;
  zkl__owner_cancel(&m->own);
  zkl__contend_cancel(&m->c);
  return 0;
}

int zkl_mutex_token(zkl_mutex_t *m, uint64_t *token) {
  zkl__clear_error();
  if (m == NULL || token == NULL)
    return zkl__fail(ZKL_EINVAL, "mutex or token is NULL");
  pthread_mutex_lock(&m->own.mu);
  int rc = held_by_me(m) ? 0 : ZKL_EPERM;
  if (rc == 0) *token = (uint64_t)m->c.czxid;
  pthread_mutex_unlock(&m->own.mu);
  return rc;
}

int zkl_mutex_holding(zkl_mutex_t *m) {
  if (m == NULL) return ZKL_EINVAL;
  pthread_mutex_lock(&m->own.mu);
  int mine = held_by_me(m);
  pthread_mutex_unlock(&m->own.mu);
  if (!mine) return 0;
  int h = zkl__contend_hold_health(&m->c);
  return h == 0 ? 1 : h;
}

int zkl_mutex_node(zkl_mutex_t *m, char *buf, size_t len) {
  if (m == NULL || buf == NULL) return ZKL_EINVAL;
  pthread_mutex_lock(&m->own.mu);
  int rc = ZKL_EPERM;
  if (m->own.busy && m->count > 0 && m->c.node != NULL)
    rc = zkl__copy_string(buf, len, m->c.node);
  pthread_mutex_unlock(&m->own.mu);
  return rc;
}

static void kick(void *arg) { zkl__contend_cancel(arg); }

void zkl_mutex_destroy(zkl_mutex_t *m) {
  if (m == NULL) return;
  zkl__owner_drain(&m->own, kick, &m->c); /* waits in flight: ECANCELED */
  pthread_mutex_lock(&m->own.mu);
  int held = m->own.busy && m->count > 0;
  pthread_mutex_unlock(&m->own.mu);
  if (held) zkl__contend_release(&m->c);
  zkl__contender_fini(&m->c);
  zkl__owner_fini(&m->own);
  free(m);
}
