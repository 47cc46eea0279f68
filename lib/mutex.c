/* lib/mutex.c - the exclusive lock: the mutex driver (driver.c) on the
 * contention core, plus per-thread reentrancy and local hand-over between
 * the threads of this process that share one object. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "zkl-int.h"

#define DATA_MAX 1024

struct zkl_mutex {
  zkl__contender_t c;
  pthread_mutex_t mu;  /* guards the fields below                        */
  pthread_cond_t cv;   /* the object became free, or a cancel            */
  int busy;            /* a thread holds it or is acquiring it           */
  pthread_t owner;     /* that thread                                    */
  unsigned count;      /* its recursion count (0 while acquiring)        */
};

void zkl_mutex_opts_init(zkl_mutex_opts_t *o) {
  if (o != NULL) memset(o, 0, sizeof *o);
}

int zkl_mutex_create(zkl_mutex_t **out, zkl_session_t *s, const char *path,
                     const zkl_mutex_opts_t *opts) {
  zkl__clear_error();
  if (out == NULL) return zkl__fail(ZKL_EINVAL, "out is NULL");
  *out = NULL;
  if (s == NULL) return zkl__fail(ZKL_EINVAL, "session is NULL");
  int rc = zkl__path_validate(path);
  if (rc != 0) return rc;
  if (opts != NULL && opts->data_len > DATA_MAX)
    return zkl__fail(ZKL_EINVAL, "node data is %zu bytes, more than %d",
                     opts->data_len, DATA_MAX);
  if (opts != NULL && opts->data == NULL && opts->data_len > 0)
    return zkl__fail(ZKL_EINVAL, "data_len without data");
  zkl_mutex_t *m = calloc(1, sizeof *m);
  if (m == NULL) return ZKL_ENOMEM;
  if (pthread_mutex_init(&m->mu, NULL) != 0) {
    free(m);
    return ZKL_ESYSTEM;
  }
  if (zkl__cond_init(&m->cv) != 0) {
    pthread_mutex_destroy(&m->mu);
    free(m);
    return ZKL_ESYSTEM;
  }
  rc = zkl__contender_init(&m->c, s, &zkl__driver_mutex, path,
                           opts != NULL ? opts->data : NULL,
                           opts != NULL ? opts->data_len : 0);
  if (rc != 0) {
    pthread_cond_destroy(&m->cv);
    pthread_mutex_destroy(&m->mu);
    free(m);
    return rc;
  }
  *out = m;
  return 0;
}

static int held_by_me(const zkl_mutex_t *m) {
  return m->busy && m->count > 0 && pthread_equal(m->owner, pthread_self());
}

/* 0 while the hold is good, ZKL_ESUSPENDED while in doubt, ZKL_ELOST once
 * the session that made the node is gone. */
static int hold_health(zkl_mutex_t *m) {
  int h = zkl__session_health(m->c.s);
  if (h == ZKL_ESUSPENDED) return 0; /* still ours if it comes back */
  if (h == 0 && zkl_session_id(m->c.s) != m->c.session_id) h = ZKL_ELOST;
  return h;
}

/* Waits until no other thread of this process uses the object, then claims
 * it for the calling thread.  With m->mu held. */
static int claim_locally(zkl_mutex_t *m, int64_t deadline,
                         unsigned cancel_seen) {
  while (m->busy) {
    if (deadline == ZKL__TRY)
      return zkl__fail(ZKL_EBUSY, "another thread uses this mutex object");
    if (atomic_load(&m->c.cancel_gen) != cancel_seen) return ZKL_ECANCELED;
    if (zkl__cond_wait_until(&m->cv, &m->mu, deadline) != 0 && m->busy)
      return ZKL_ETIMEDOUT;
  }
  m->busy = 1;
  m->owner = pthread_self();
  m->count = 0;
  return 0;
}

static int acquire(zkl_mutex_t *m, int64_t deadline) {
  zkl__clear_error();
  if (m == NULL) return zkl__fail(ZKL_EINVAL, "mutex is NULL");
  unsigned cancel_seen = atomic_load(&m->c.cancel_gen);
  pthread_mutex_lock(&m->mu);
  if (held_by_me(m)) {
    int rc = hold_health(m);
    if (rc == 0 && m->count == UINT_MAX) rc = ZKL_EAGAIN;
    if (rc == 0) m->count++;
    pthread_mutex_unlock(&m->mu);
    return rc;
  }
  int rc = claim_locally(m, deadline, cancel_seen);
  pthread_mutex_unlock(&m->mu);
  if (rc != 0) return rc;

  rc = zkl__contend_acquire(&m->c, deadline, cancel_seen);

  pthread_mutex_lock(&m->mu);
  if (rc == 0) {
    m->count = 1;
  } else {
    m->busy = 0;
    pthread_cond_broadcast(&m->cv);
  }
  pthread_mutex_unlock(&m->mu);
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
  pthread_mutex_lock(&m->mu);
  if (!held_by_me(m)) {
    pthread_mutex_unlock(&m->mu);
    return zkl__fail(ZKL_EPERM, "the calling thread does not hold %s",
                     m->c.root);
  }
  if (--m->count > 0) {
    pthread_mutex_unlock(&m->mu);
    return 0;
  }
  /* Keep the object busy while the node is deleted, so that another local
   * thread cannot start a new acquisition on it meanwhile. */
  pthread_mutex_unlock(&m->mu);
  int rc = zkl__contend_release(&m->c);
  pthread_mutex_lock(&m->mu);
  m->busy = 0;
  pthread_cond_broadcast(&m->cv);
  pthread_mutex_unlock(&m->mu);
  return rc;
}

int zkl_mutex_cancel(zkl_mutex_t *m) {
  if (m == NULL) return ZKL_EINVAL;
  zkl__contend_cancel(&m->c); /* bumps the generation first */
  pthread_mutex_lock(&m->mu);
  pthread_cond_broadcast(&m->cv);
  pthread_mutex_unlock(&m->mu);
  return 0;
}

int zkl_mutex_token(zkl_mutex_t *m, uint64_t *token) {
  zkl__clear_error();
  if (m == NULL || token == NULL)
    return zkl__fail(ZKL_EINVAL, "mutex or token is NULL");
  pthread_mutex_lock(&m->mu);
  int rc = held_by_me(m) ? 0 : ZKL_EPERM;
  if (rc == 0) *token = (uint64_t)m->c.czxid;
  pthread_mutex_unlock(&m->mu);
  return rc;
}

int zkl_mutex_holding(zkl_mutex_t *m) {
  if (m == NULL) return ZKL_EINVAL;
  pthread_mutex_lock(&m->mu);
  int mine = held_by_me(m);
  pthread_mutex_unlock(&m->mu);
  if (!mine) return 0;
  int h = zkl__session_health(m->c.s);
  if (h == ZKL_ESUSPENDED) return ZKL_ESUSPENDED;
  h = hold_health(m);
  return h == 0 ? 1 : h;
}

int zkl_mutex_node(zkl_mutex_t *m, char *buf, size_t len) {
  if (m == NULL || buf == NULL) return ZKL_EINVAL;
  pthread_mutex_lock(&m->mu);
  int rc = ZKL_EPERM;
  if (m->busy && m->count > 0 && m->c.node != NULL) {
    size_t n = strlen(m->c.node);
    rc = n < len ? 0 : ZKL_EINVAL;
    if (rc == 0) memcpy(buf, m->c.node, n + 1);
  }
  pthread_mutex_unlock(&m->mu);
  return rc;
}

void zkl_mutex_destroy(zkl_mutex_t *m) {
  if (m == NULL) return;
  pthread_mutex_lock(&m->mu);
  int held = m->busy && m->count > 0;
  pthread_mutex_unlock(&m->mu);
  if (held) zkl__contend_release(&m->c);
  zkl__contender_fini(&m->c);
  pthread_cond_destroy(&m->cv);
  pthread_mutex_destroy(&m->mu);
  free(m);
}
