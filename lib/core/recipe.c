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
    pthread_mutex_unlock(&r->own.mu);
    return zkl__fail(ZKL_EPERM, "the calling thread does not hold %s",
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
  int rc = mine(r) ? 0 : ZKL_EPERM;
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
  int bits = mine(r);
  zkl__contender_t *c = bits != 0 ? ops->backing(r) : NULL;
  pthread_mutex_unlock(&r->own.mu);
  if (c == NULL) return 0;
  int h = zkl__contend_hold_health(c);
  return h == 0 ? bits : h;
}

int zkl__recipe_node(zkl__recipe_t *r, const zkl__recipe_ops_t *ops,
                     int any_thread, char *buf, size_t len) {
  zkl__clear_error();
  if (r == NULL || buf == NULL)
    return zkl__fail(ZKL_EINVAL, "%s or buf is NULL", ops->name);
  pthread_mutex_lock(&r->own.mu);
  int held = any_thread ? r->own.busy && ops->holds(r) : mine(r);
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

static void kick(void *arg) {
  zkl__recipe_t *r = arg;
  r->ops->kick(r);
}

void zkl__recipe_destroy(zkl__recipe_t *r) {
  if (r == NULL) return;
  /* calls blocked in it return ZKL_ECANCELED; destroy waits for them */
  zkl__owner_drain(&r->own, kick, r);
  pthread_mutex_lock(&r->own.mu);
  zkl__contender_t *c = r->own.busy && r->ops->holds(r) ? r->ops->backing(r)
                                                        : NULL;
  pthread_mutex_unlock(&r->own.mu);
  if (c != NULL) zkl__contend_release(c); /* whatever the counts */
  r->ops->fini(r);
  zkl__owner_fini(&r->own);
  free(r);
}
