/* lib/core/recipe.c - the recipe base: what every lock-like recipe object
 * does the same way (argument checks, create and destroy, the local
 * ownership of a hold, cancel, the hold's token, health and node), so
 * that a recipe file holds only its driver and what is its own: which
 * contender a call uses and how holds are counted (struct zkl__recipe_ops). */
#include <stdlib.h>
#include <string.h>

#include "core/contend.h"

#define DATA_MAX 1024

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

static int null_arg(const zkl__recipe_ops_t *ops) {
  return zkl__fail(ZKL_EINVAL, "%s is NULL", ops->name);
}

int zkl__recipe_create(void *out, const zkl__recipe_ops_t *ops,
                       zkl_session_t *s, const char *path, const void *data,
                       size_t len) {
  zkl__clear_error();
  if (out == NULL) return zkl__fail(ZKL_EINVAL, "out is NULL");
  /* every pointer to a struct has the same representation (C11 6.2.5) */
  zkl__recipe_t *none = NULL;
  memcpy(out, &none, sizeof none);
  int rc = zkl__check_recipe_args(s, path, data, len);
  if (rc != 0) return rc;
  zkl__recipe_t *r = calloc(1, ops->size);
  if (r == NULL) return zkl__fail(ZKL_ENOMEM, "no memory for a %s", ops->name);
  r->ops = ops;
  r->s = s;
  atomic_init(&r->hold_cancel, 0);
  if ((rc = zkl__owner_init(&r->own)) != 0) {
    free(r);
    return zkl__fail(rc, "cannot make the %s's mutex", ops->name);
  }
  if ((rc = ops->init(r, s, path, data, len)) != 0) {
    zkl__owner_fini(&r->own);
    free(r);
    return rc == ZKL_ENOMEM ? zkl__fail(rc, "no memory for a %s", ops->name)
                            : rc;
  }
  memcpy(out, &r, sizeof r);
  return 0;
}

/* With own.mu held: the hold bits of the calling thread (0: none). */
static int mine(const zkl__recipe_t *r) {
  return zkl__owner_mine(&r->own) ? r->ops->holds(r) : 0;
}

/* With own.mu held: the object's own hold (an async call's), any thread. */
static int objects(const zkl__recipe_t *r) {
  return r->own.busy && r->own.async ? r->ops->holds(r) : 0;
}

/* With own.mu held: what token(), holding() answer for: the calling
 * thread's hold, or the object's. */
static int held_here(const zkl__recipe_t *r) {
  int bits = mine(r);
  return bits != 0 ? bits : objects(r);
}

/* A fresh acquisition, the object claimed for the calling thread. */
static int acquire_claimed(zkl__recipe_t *r, int mode, int64_t deadline,
                           unsigned cancel_seen) {
  zkl__contender_t *c = r->ops->contender(r, mode);
  int rc = zkl__contend_acquire(c, deadline, cancel_seen);
  if (rc == 0 && zkl__owner_dying(&r->own)) { /* granted as destroy began */
    zkl__contend_release(c);
    rc = zkl__fail(ZKL_ECANCELED, "the %s is being destroyed", r->ops->name);
  }
  pthread_mutex_lock(&r->own.mu);
  if (rc == 0) r->ops->granted(r, mode);
  else zkl__owner_free(&r->own);
  pthread_mutex_unlock(&r->own.mu);
  return rc;
}

int zkl__recipe_acquire(zkl__recipe_t *r, const zkl__recipe_ops_t *ops,
                        int mode, int64_t timeout_ms) {
  zkl__clear_error();
  if (r == NULL) return null_arg(ops);
  /* taken now, before any local wait for the object: the caller's time */
  int64_t deadline = timeout_ms == 0 ? ZKL__TRY
                                     : zkl__deadline_after_ms(timeout_ms);
  unsigned cancel_seen;
  int rc = zkl__owner_enter(&r->own, &cancel_seen);
  if (rc != 0)
    return zkl__fail(rc, "the %s is being destroyed", ops->name);
  pthread_mutex_lock(&r->own.mu);
  if (mine(r)) {
    rc = ops->again(r, mode); /* a further hold: counts only */
    pthread_mutex_unlock(&r->own.mu);
  } else {
    rc = zkl__owner_claim(&r->own, deadline, cancel_seen);
    if (rc == 0) ops->granted(r, -1); /* no hold yet: counts reset */
    pthread_mutex_unlock(&r->own.mu);
    if (rc == 0) rc = acquire_claimed(r, mode, deadline, cancel_seen);
  }
  zkl__owner_leave(&r->own);
  return rc;
}

int zkl__recipe_release(zkl__recipe_t *r, const zkl__recipe_ops_t *ops) {
  zkl__clear_error();
  if (r == NULL) return null_arg(ops);
  pthread_mutex_lock(&r->own.mu);
  if (!mine(r)) {
    int async = objects(r) != 0;
    pthread_mutex_unlock(&r->own.mu);
    return zkl__fail(ZKL_EPERM, async ? "%s is held through an async call: "
                                        "release it with the async unlock"
                                      : "the calling thread does not hold %s",
                     r->root);
  }
  zkl__contender_t *c = ops->backing(r);
  int last = ops->unhold(r);
  pthread_mutex_unlock(&r->own.mu);
  if (!last) return 0; /* one level of several */
  /* The object stays the caller's while the node is deleted, so that
   * another local thread cannot start a new acquisition on it meanwhile. */
  int rc = zkl__contend_release(c);
  pthread_mutex_lock(&r->own.mu);
  ops->granted(r, -1);
  zkl__owner_free(&r->own);
  pthread_mutex_unlock(&r->own.mu);
  return rc;
}

int zkl__recipe_cancel(zkl__recipe_t *r, const zkl__recipe_ops_t *ops) {
  zkl__clear_error();
  if (r == NULL) return null_arg(ops);
  zkl__owner_cancel(&r->own);
  ops->kick(r);
  return 0;
}

int zkl__recipe_token(zkl__recipe_t *r, const zkl__recipe_ops_t *ops,
                      uint64_t *token) {
  zkl__clear_error();
  if (r == NULL || token == NULL)
    return zkl__fail(ZKL_EINVAL, "%s or token is NULL", ops->name);
  pthread_mutex_lock(&r->own.mu);
  int rc = held_here(r) ? 0 : ZKL_EPERM;
  if (rc == 0) *token = (uint64_t)ops->backing(r)->czxid;
  pthread_mutex_unlock(&r->own.mu);
  if (rc != 0)
    return zkl__fail(rc, "the calling thread does not hold %s", r->root);
  return 0;
}

int zkl__recipe_holding(zkl__recipe_t *r, const zkl__recipe_ops_t *ops) {
  zkl__clear_error();
  if (r == NULL) return null_arg(ops);
  pthread_mutex_lock(&r->own.mu);
  int bits = held_here(r);
  zkl__contender_t *c = bits != 0 ? ops->backing(r) : NULL;
  int gone = c != NULL && mine(r) == 0 && r->hold_gone;
  pthread_mutex_unlock(&r->own.mu);
  if (c == NULL) return 0;
  if (gone) return ZKL_ELOST;
  int h = zkl__contend_hold_health(c);
  return h == 0 ? bits : h;
}

int zkl__recipe_node(zkl__recipe_t *r, const zkl__recipe_ops_t *ops,
                     int any_thread, char *buf, size_t len) {
  zkl__clear_error();
  if (r == NULL || buf == NULL)
    return zkl__fail(ZKL_EINVAL, "%s or buf is NULL", ops->name);
  pthread_mutex_lock(&r->own.mu);
  int held = any_thread ? r->own.busy && ops->holds(r) : held_here(r);
  const zkl__contender_t *c = held ? ops->backing(r) : NULL;
  int rc = c == NULL || c->node == NULL ? ZKL_EPERM
                                        : zkl__copy_string(buf, len, c->node);
  size_t need = rc == ZKL_EINVAL ? strlen(c->node) + 1 : 0;
  pthread_mutex_unlock(&r->own.mu);
  if (rc == ZKL_EPERM)
    return zkl__fail(rc, c != NULL  ? "the hold of %s has no node now"
                         : any_thread ? "this %s holds nothing"
                                      : "the calling thread holds nothing",
                     c != NULL ? r->root : ops->name);
  if (rc != 0)
    return zkl__fail(rc, "buf has %zu bytes, the node's path needs %zu", len,
                     need);
  return 0;
}

static void watch_end_locked(zkl__recipe_t *r, int by_owner);

static void kick(void *arg) {
  zkl__recipe_t *r = arg;
  r->ops->kick(r);
  pthread_mutex_lock(&r->own.mu);
  watch_end_locked(r, 0);
  pthread_mutex_unlock(&r->own.mu);
}

void zkl__recipe_destroy(zkl__recipe_t *r) {
  if (r == NULL) return;
  /* calls blocked in it return ZKL_ECANCELED; destroy waits for them (an
   * async call's operation ends on the engine: its completion is queued) */
  zkl__owner_drain(&r->own, kick, r);
  /* completions of r not yet dispatched: ZKL_ECANCELED, r not touched */
  zkl__dispatch_orphan(zkl__session_dispatch_queue(r->s), r);
  pthread_mutex_lock(&r->own.mu);
  zkl__contender_t *c = r->own.busy && r->ops->holds(r) ? r->ops->backing(r)
                                                        : NULL;
  pthread_mutex_unlock(&r->own.mu);
  if (c != NULL) zkl__contend_release(c); /* whatever the counts */
  if (r->hold_c != NULL) { /* its watch has ended: drained above */
    zkl__contender_fini(r->hold_c);
    free(r->hold_c);
  }
  r->ops->fini(r);
  zkl__owner_fini(&r->own);
  free(r);
}

/* ---- the asynchronous calls -------------------------------------------------
 * The object, not a thread, holds what an async call acquires: one async
 * call or hold at a time per object, released with the async release (or
 * by destroy).  While it lasts, blocking calls of any thread wait for the
 * object (trylock: ZKL_EBUSY) as for another thread's hold. */

typedef struct arec {
  zkl__done_t d;      /* first: the completion queue's record */
  zkl__recipe_t *r;   /* NULL once destroyed (orphan)         */
  zkl__contender_t *c;
  void *obj;          /* what the callback is given           */
  int mode, release, rc;
  int watch, by_owner; /* a hold's watch; ended by the object's release */
  uint64_t token;
  char *detail;
  zkl_done_fn cb;
  void *arg;
} arec_t;

static void arec_set_detail(arec_t *x, const char *detail) {
  free(x->detail);
  x->detail = detail != NULL && detail[0] != '\0' ? strdup(detail) : NULL;
}

static void arec_run(zkl__done_t *d, int deliver) {
  arec_t *x = (arec_t *)d;
  zkl__recipe_t *r = x->r; /* NULL once orphaned: destroyed */
  if (r != NULL && !x->watch) {
    /* the call ends as its completion is dispatched: from here the
     * object takes the next one (it stays busy while it holds) */
    pthread_mutex_lock(&r->own.mu);
    r->async_pending = 0;
    if (x->release || x->rc != 0) zkl__owner_free(&r->own);
    pthread_mutex_unlock(&r->own.mu);
  }
  if (deliver) {
    if (x->detail != NULL) zkl__fail(x->rc, "%s", x->detail);
    else zkl__clear_error();
    x->cb(x->obj, x->rc, x->token, x->arg);
  }
  free(x->detail);
  free(x);
}

/* The object is destroyed before x was dispatched: whatever x said, it
 * comes with ZKL_ECANCELED (a hold it granted is released by destroy), so
 * that no callback acts on, or retries with, a freed object. */
static void arec_orphan(zkl__done_t *d) {
  arec_t *x = (arec_t *)d;
  x->r = NULL;
  if (x->rc != ZKL_ECANCELED || x->detail == NULL)
    arec_set_detail(x, "the object was destroyed before the completion "
                       "was dispatched");
  x->rc = ZKL_ECANCELED;
  x->token = 0;
}

/* At dispatch: a grant is reported only while its hold is good (the rule
 * of every grant, checked again: the loop may have been slow, or the
 * process paused, since the engine granted it).  A hold in doubt or lost
 * by then is given up (the janitor deletes its node once the connection
 * is back) and reported as ZKL_ESUSPENDED or ZKL_ELOST. */
static void arec_check(zkl__done_t *d) {
  arec_t *x = (arec_t *)d;
  if (x->r == NULL || x->release || x->rc != 0) return;
  int h = zkl__contend_hold_health(x->c);
  if (h == 0) return;
  zkl__recipe_t *r = x->r;
  pthread_mutex_lock(&r->own.mu);
  /* Only a hold the object still has is given up here, with the object
   * kept busy meanwhile: if the caller already released it (an async
   * unlock accepted before this completion came), that release's
   * operation owns the node. */
  if (objects(r) != 0) {
    watch_end_locked(r, 1);
    zkl__contend_forsake(x->c);
    r->ops->granted(r, -1); /* arec_run frees the object (rc != 0) */
  }
  pthread_mutex_unlock(&r->own.mu);
  x->rc = h;
  x->token = 0;
  zkl__session_log(r->s, ZKL_LOG_WARN,
                   "a grant of %s given up at dispatch: %s", r->root,
                   h == ZKL_ELOST ? "its session was lost"
                                  : "its connection went down");
  arec_set_detail(x, h == ZKL_ELOST
                         ? "granted, but the session was lost before the "
                           "completion was dispatched"
                         : "granted, but the connection went down before "
                           "the completion was dispatched");
}

/* With own.mu held, which it releases: queues x's completion (an orphan's
 * if destroy has begun), and the call leaves the object (destroy may go
 * on from here). */
static void arec_queue(zkl__recipe_t *r, arec_t *x) {
  if (r->own.dying) arec_orphan(&x->d);
  pthread_mutex_unlock(&r->own.mu);
  zkl__dispatch_post(zkl__session_dispatch_queue(r->s), &x->d);
  zkl__owner_leave(&r->own);
}

/* An async call's operation ended (on the engine): the object's state
 * follows, the completion is queued, and the call leaves the object. */
static void arec_done(int rc, const char *detail, void *arg) {
  arec_t *x = arg;
  zkl__recipe_t *r = x->r;
  x->rc = rc;
  arec_set_detail(x, detail);
  pthread_mutex_lock(&r->own.mu);
  if (!x->release && rc == 0) {
    x->token = (uint64_t)x->c->czxid;
    r->ops->granted(r, x->mode); /* the object holds (destroy releases) */
    r->async_mode = x->mode;
    r->hold_gone = 0;
  } else {
    r->ops->granted(r, -1); /* holds nothing; busy until dispatched */
  }
  arec_queue(r, x);
}

static arec_t *arec_new(zkl__recipe_t *r, int mode, int release,
                        zkl_done_fn cb, void *arg) {
  arec_t *x = calloc(1, sizeof *x);
  if (x == NULL) return NULL;
  x->d.owner = r;
  x->d.check = arec_check;
  x->d.run = arec_run;
  x->d.orphan = arec_orphan;
  x->r = r;
  x->obj = r;
  x->mode = mode;
  x->release = release;
  x->cb = cb;
  x->arg = arg;
  return x;
}

/* The start every async call shares: arguments, its record, entering the
 * object.  0 with *out set, or the call's code (nothing to undo). */
static int async_begin(zkl__recipe_t *r, const zkl__recipe_ops_t *ops,
                       int mode, int release, zkl_done_fn cb, void *arg,
                       arec_t **out, unsigned *cancel_seen) {
  zkl__clear_error();
  if (r == NULL) return null_arg(ops);
  if (cb == NULL) return zkl__fail(ZKL_EINVAL, "the callback is NULL");
  arec_t *x = arec_new(r, mode, release, cb, arg);
  if (x == NULL) return zkl__fail(ZKL_ENOMEM, "no memory for an async call");
  int rc = zkl__owner_enter(&r->own, cancel_seen);
  if (rc != 0) {
    free(x);
    return zkl__fail(rc, "the %s is being destroyed", ops->name);
  }
  *out = x;
  return 0;
}

/* The end of an async call that was refused after async_begin(). */
static int async_refuse(zkl__recipe_t *r, arec_t *x, int rc) {
  zkl__owner_leave(&r->own);
  free(x);
  return rc;
}

int zkl__recipe_acquire_async(zkl__recipe_t *r, const zkl__recipe_ops_t *ops,
                              int mode, int64_t timeout_ms, zkl_done_fn cb,
                              void *arg) {
  /* taken first: the caller's time */
  int64_t deadline = timeout_ms == 0 ? ZKL__TRY
                                     : zkl__deadline_after_ms(timeout_ms);
  arec_t *x;
  unsigned cancel_seen;
  int rc = async_begin(r, ops, mode, 0, cb, arg, &x, &cancel_seen);
  if (rc != 0) return rc;
  pthread_mutex_lock(&r->own.mu);
  if (r->own.busy) {
    int async = r->own.async;
    pthread_mutex_unlock(&r->own.mu);
    return async_refuse(r, x, zkl__fail(ZKL_EBUSY, async
                            ? "the %s already holds or is acquiring "
                              "through an async call"
                            : "a thread holds or is acquiring through the %s",
                            ops->name));
  }
  r->own.busy = 1;
  r->own.async = 1;
  r->async_pending = 1;
  ops->granted(r, -1);
  pthread_mutex_unlock(&r->own.mu);
  x->c = ops->contender(r, mode);
  rc = zkl__contend_acquire_start(x->c, deadline, cancel_seen, arec_done, x);
  if (rc != 0) {
    pthread_mutex_lock(&r->own.mu);
    r->async_pending = 0;
    zkl__owner_free(&r->own);
    pthread_mutex_unlock(&r->own.mu);
    async_refuse(r, x, rc);
  }
  return rc;
}

int zkl__recipe_release_async(zkl__recipe_t *r, const zkl__recipe_ops_t *ops,
                              zkl_done_fn cb, void *arg) {
  arec_t *x;
  unsigned cancel_seen;
  int rc = async_begin(r, ops, -1, 1, cb, arg, &x, &cancel_seen);
  if (rc != 0) return rc;
  pthread_mutex_lock(&r->own.mu);
  int bits = objects(r);
  if (bits == 0 || r->async_pending) {
    int thread = mine(r) != 0;
    pthread_mutex_unlock(&r->own.mu);
    return async_refuse(r, x, zkl__fail(ZKL_EPERM, thread
                            ? "the calling thread holds %s: release it "
                              "with the blocking unlock"
                            : "%s is not held through an async call (or "
                              "the completion of its acquisition or "
                              "release is not dispatched yet)",
                            r->root));
  }
  x->c = ops->backing(r);
  x->mode = r->async_mode;
  r->async_pending = 1;
  /* its completion (0) is queued before this release's */
  watch_end_locked(r, 1);
  ops->unhold(r); /* an async hold has one level: now it holds nothing */
  pthread_mutex_unlock(&r->own.mu);
  rc = zkl__contend_release_start(x->c, 0, arec_done, x);
  if (rc != 0) { /* still held: as before the call */
    pthread_mutex_lock(&r->own.mu);
    r->async_pending = 0;
    ops->granted(r, r->async_mode);
    pthread_mutex_unlock(&r->own.mu);
    async_refuse(r, x, rc);
  }
  return rc;
}

/* ---- the watch of an async hold -------------------------------------------
 * "Your hold is gone" for a loop program: the hold's node is watched by a
 * shadow contender (same node and session, its own waiter and operation),
 * so the hold itself and its release are not touched. */

/* With own.mu held: ends the pending watch, if any (by_owner: because the
 * object lets go of its hold, reported as 0). */
static void watch_end_locked(zkl__recipe_t *r, int by_owner) {
  arec_t *w = r->watch;
  if (w == NULL) return;
  /* r->watch stays until the operation has ended (watch_done): the shadow
   * is not reused before */
  if (by_owner) w->by_owner = 1;
  atomic_fetch_add(&r->hold_cancel, 1);
  zkl__contend_cancel(r->hold_c);
}

/* The watch's operation ended, on the engine. */
static void watch_done(int rc, const char *detail, void *arg) {
  arec_t *x = arg;
  zkl__recipe_t *r = x->r;
  pthread_mutex_lock(&r->own.mu);
  r->watch = NULL;
  if (x->by_owner) {
    rc = 0;
    detail = NULL;
  } else if (rc == 1 || rc == ZKL_ELOST) {
    /* the object still holds until it releases; holding() tells */
    if (objects(r) != 0 && (uint64_t)r->ops->backing(r)->czxid == x->token)
      r->hold_gone = 1;
    detail = rc == 1 ? "the hold's node was deleted by someone else"
                     : "the session was lost: the hold is gone";
    rc = ZKL_ELOST;
  }
  x->rc = rc;
  arec_set_detail(x, detail);
  arec_queue(r, x);
}

int zkl__recipe_watch_async(zkl__recipe_t *r, const zkl__recipe_ops_t *ops,
                            zkl_done_fn cb, void *arg) {
  arec_t *x;
  unsigned unused;
  int rc = async_begin(r, ops, -1, 1, cb, arg, &x, &unused);
  if (rc != 0) return rc;
  x->watch = 1;
  pthread_mutex_lock(&r->own.mu);
  /* destroy sets dying under own.mu before it ends the watch: a watch
   * started after that would never be ended */
  if (r->own.dying) {
    pthread_mutex_unlock(&r->own.mu);
    return async_refuse(r, x, zkl__fail(ZKL_ECANCELED, "the %s is being "
                                        "destroyed", ops->name));
  }
  zkl__contender_t *c =
      objects(r) != 0 && !r->async_pending ? ops->backing(r) : NULL;
  if (c == NULL || c->node == NULL || r->watch != NULL) {
    pthread_mutex_unlock(&r->own.mu);
    return async_refuse(r, x, c == NULL || c->node == NULL
                            ? zkl__fail(ZKL_EPERM, "%s is not held through "
                                        "an async call", r->root)
                            : zkl__fail(ZKL_EBUSY, "the hold of %s is "
                                        "already watched", r->root));
  }
  if (r->hold_c == NULL) {
    zkl__contender_t *h = malloc(sizeof *h);
    rc = h == NULL ? ZKL_ENOMEM
                   : zkl__contender_init(h, r->s, c->drv, c->root, "", 0,
                                         &r->hold_cancel);
    if (rc != 0) {
      free(h);
      pthread_mutex_unlock(&r->own.mu);
      return async_refuse(r, x, zkl__fail(rc, "cannot watch %s", r->root));
    }
    r->hold_c = h;
  }
  zkl__contender_t *h = r->hold_c;
  char *node = strdup(c->node);
  if (node == NULL) {
    pthread_mutex_unlock(&r->own.mu);
    return async_refuse(r, x, zkl__fail(ZKL_ENOMEM, "no memory for a watch"));
  }
  free(h->node);
  h->node = node;
  h->czxid = c->czxid;
  h->owner = c->owner;
  h->session_id = c->session_id;
  x->c = h;
  x->token = (uint64_t)c->czxid;
  r->watch = x;
  rc = zkl__contend_hold_start(h, atomic_load(&r->hold_cancel), watch_done,
                               x);
  if (rc != 0) r->watch = NULL;
  pthread_mutex_unlock(&r->own.mu);
  return rc != 0 ? async_refuse(r, x, rc) : 0;
}
