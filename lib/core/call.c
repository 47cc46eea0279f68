/* lib/core/call.c - a recipe's own calls: one call at a time per object,
 * run as an operation of one of its contenders, blocking (on the caller's
 * thread) or async (on the session's engine, its completion dispatched).
 * The queue, the counter and the barriers are made of such calls; the
 * lock-like recipes have the recipe base (recipe.c) instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/contend.h"

int zkl__calls_init(zkl__calls_t *h, zkl_session_t *s, const char *what) {
  memset(h, 0, sizeof *h);
  h->s = s;
  h->what = what;
  return zkl__owner_init(&h->own);
}

void zkl__calls_fini(zkl__calls_t *h) { zkl__owner_fini(&h->own); }

void zkl__calls_drain(zkl__calls_t *h, void (*kick)(void *), void *arg) {
  zkl__owner_drain(&h->own, kick, arg);
  zkl__dispatch_orphan(zkl__session_dispatch_queue(h->s), h);
}

void zkl__call_init(zkl__call_t *x, zkl__calls_t *h, void *obj,
                    int64_t timeout_ms) {
  x->home = h;
  x->obj = obj;
  x->d.owner = h;
  x->deadline = timeout_ms == 0 ? ZKL__TRY : zkl__deadline_after_ms(timeout_ms);
  x->dl = x->deadline == ZKL__TRY ? ZKL__FOREVER : x->deadline;
}

void zkl__call_report(zkl__call_t *x, int rc, const char *detail) {
  x->rc = rc;
  free(x->detail);
  x->detail = detail != NULL && detail[0] != '\0' ? strdup(detail) : NULL;
}

int zkl__call_blocking(zkl__call_t *x, zkl__contender_t *c,
                       zkl__step_fn step) {
  zkl__calls_t *h = x->home;
  unsigned cancel_seen;
  int rc = zkl__owner_enter(&h->own, &cancel_seen);
  if (rc != 0) return zkl__fail(rc, "the %s is being destroyed", h->what);
  pthread_mutex_lock(&h->own.mu);
  rc = zkl__owner_claim(&h->own, x->deadline, cancel_seen);
  pthread_mutex_unlock(&h->own.mu);
  if (rc == ZKL_EBUSY)
    rc = zkl__fail(rc, "another call of this %s object is underway",
                   h->what);
  else if (rc != 0)
    rc = zkl__fail(rc, rc == ZKL_ETIMEDOUT ? "another call of this %s "
                       "object lasted past the deadline"
                                           : "canceled (%s)", h->what);
  if (rc == 0) {
    rc = zkl__op_run(c, step, x, x->deadline, cancel_seen);
    pthread_mutex_lock(&h->own.mu);
    zkl__owner_free(&h->own);
    pthread_mutex_unlock(&h->own.mu);
  }
  zkl__owner_leave(&h->own);
  return rc;
}

static void call_run(zkl__done_t *d, int deliver) {
  zkl__call_t *x = (zkl__call_t *)d;
  zkl__calls_t *h = x->home;
  if (h != NULL) {
    pthread_mutex_lock(&h->own.mu);
    h->async_pending = 0;
    zkl__owner_free(&h->own);
    pthread_mutex_unlock(&h->own.mu);
  }
  if (deliver) {
    if (x->detail != NULL) zkl__fail(x->rc, "%s", x->detail);
    else zkl__clear_error();
    if (x->deliver != NULL) x->deliver(x);
    else x->cb(x->obj, x->rc, 0, x->arg);
  }
  x->release(x);
}

static void call_check(zkl__done_t *d) {
  zkl__call_t *x = (zkl__call_t *)d;
  if (x->home != NULL && x->check != NULL) x->check(x);
}

static void call_orphan(zkl__done_t *d) {
  zkl__call_t *x = (zkl__call_t *)d;
  if (x->home == NULL) return; /* at its end already (call_done) */
  const char *why = x->orphaned != NULL ? x->orphaned(x) : NULL;
  char buf[128];
  if (why == NULL) {
    snprintf(buf, sizeof buf, "the %s object was destroyed before the "
             "completion was dispatched", x->home->what);
    why = buf;
  }
  x->home = NULL;
  zkl__call_report(x, ZKL_ECANCELED, why);
}

/* The operation ended, on the engine. */
static void call_done(int rc, const char *detail, void *arg) {
  zkl__call_t *x = arg;
  zkl__calls_t *h = x->home;
  zkl__call_report(x, rc, detail);
  pthread_mutex_lock(&h->own.mu);
  if (h->own.dying) call_orphan(&x->d);
  pthread_mutex_unlock(&h->own.mu);
  zkl__dispatch_post(zkl__session_dispatch_queue(h->s), &x->d);
  zkl__owner_leave(&h->own);
}

int zkl__call_async(zkl__call_t *x, zkl__contender_t *c, zkl__step_fn step) {
  zkl__calls_t *h = x->home;
  x->d.run = call_run;
  x->d.check = call_check;
  x->d.orphan = call_orphan;
  unsigned cancel_seen;
  int rc = zkl__owner_enter(&h->own, &cancel_seen);
  if (rc != 0) {
    x->release(x);
    return zkl__fail(rc, "the %s is being destroyed", h->what);
  }
  pthread_mutex_lock(&h->own.mu);
  if (h->own.busy) {
    pthread_mutex_unlock(&h->own.mu);
    zkl__owner_leave(&h->own);
    x->release(x);
    return zkl__fail(ZKL_EBUSY, "a call of this %s object is underway",
                     h->what);
  }
  h->own.busy = 1;
  h->own.async = 1;
  h->async_pending = 1;
  pthread_mutex_unlock(&h->own.mu);
  rc = zkl__op_start(c, step, x, x->deadline, cancel_seen, call_done, x);
  if (rc != 0) {
    pthread_mutex_lock(&h->own.mu);
    h->async_pending = 0;
    zkl__owner_free(&h->own);
    pthread_mutex_unlock(&h->own.mu);
    zkl__owner_leave(&h->own);
    x->release(x);
    rc = zkl__fail(rc, rc == ZKL_ENOMEM ? "no memory for a %s call"
                                        : "a call of this %s object is "
                                          "underway", h->what);
  }
  return rc;
}
