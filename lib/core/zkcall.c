/* lib/core/zkcall.c - ZooKeeper requests that honour a deadline.
 *
 * ZooKeeper's synchronous calls return only when the server answers or the
 * client gives the connection up (up to 2/3 of the session timeout later
 * when the server is frozen).  Every request of the contention core goes
 * through here instead: it is sent with the asynchronous API and waited for
 * until the caller's deadline.  A caller that gives up leaves the request's
 * record to its completion, which frees it; the session wakes and frees what
 * is left if the handle is closed before the answer comes (its completions
 * then never run).  Completions run on ZooKeeper's completion thread and
 * only copy the answer and signal.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zookeeper/zookeeper.h>

#include "core/core.h"

#define MAX_OPS 2

struct zcall {
  zkl__inflight_t link; /* first: the session's discard casts back */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int refs, rc;
  atomic_int done; /* set under mu; read without it by _ready() */
  zkl_session_t *s;
  struct Stat st;
  int have_st;
  struct String_vector kids; /* owned copy */
  char *value;               /* get: the data; create: the path made */
  int value_len;
  zoo_op_result_t res[MAX_OPS];
  /* a multi of the caller's (zkl__zk_multi_send): its results and the
   * buffers its creates write the made paths into, owned by the record
   * (the answer may come after its waiter gave up) */
  zoo_op_result_t *mres;
  char *mbuf;
  struct Stat *mstat; /* each op's; a setData's written by the client */
  int mcount;
  void (*notify)(void *); /* an operation on the engine waits for it */
  void *notify_arg;
  atomic_int *notify_refs; /* not NULL: notify runs after the unlock */
  void (*notify_last)(void *);
};

static void zcall_free(struct zcall *k) {
  free(k->mres);
  free(k->mbuf);
  free(k->mstat);
  zkl__zk_children_free(&k->kids);
  free(k->value);
  pthread_cond_destroy(&k->cv);
  pthread_mutex_destroy(&k->mu);
  free(k);
}

static void zcall_unref(struct zcall *k) {
  pthread_mutex_lock(&k->mu);
  int last = --k->refs == 0;
  pthread_mutex_unlock(&k->mu);
  if (last) zcall_free(k);
}

/* A notification taken out of a record whose answer is in, to be run once
 * the record's lock is gone (zcall_post_run). */
typedef struct {
  void (*fn)(void *);
  void *arg;
  atomic_int *refs;
  void (*last)(void *);
} zcall_post_t;

/* With k->mu held: the answer is in.  A notification registered with a
 * reference count is handed back in *post, to run after the unlock:
 * whoever it wakes then finds the record's lock free, instead of waking
 * only to sleep on it again while this thread still holds it.  The
 * reference it takes keeps the notification's target alive until it has
 * run.  One without runs here, under the lock, as it always did. */
static void zcall_done_locked(struct zcall *k, int rc, zcall_post_t *post) {
  k->rc = rc;
  post->fn = NULL;
  if (k->notify != NULL && k->notify_refs != NULL) {
    /* taken before the answer shows: the target's owner, who may see it
     * (ready() reads it without the lock) and let the target go at once,
     * then leaves the memory to this post */
    atomic_fetch_add_explicit(k->notify_refs, 1, memory_order_relaxed);
    *post = (zcall_post_t){k->notify, k->notify_arg, k->notify_refs,
                           k->notify_last};
    k->notify = NULL;
  }
  atomic_store(&k->done, 1);
  pthread_cond_signal(&k->cv);
  if (k->notify != NULL) k->notify(k->notify_arg); /* only posts */
  k->notify = NULL;
  k->notify_refs = NULL;
}

/* Runs what zcall_done_locked() handed back, with no lock of the record's
 * held, then drops its reference: the last one frees the target. */
static void zcall_post_run(const zcall_post_t *post) {
  if (post->fn == NULL) return;
  post->fn(post->arg);
  if (atomic_fetch_sub_explicit(post->refs, 1, memory_order_acq_rel) == 1)
    post->last(post->arg);
}

void zkl__zcall_notify(zkl__zcall_t *k, void (*fn)(void *), void *arg) {
  zkl__zcall_notify_ref(k, fn, arg, NULL, NULL);
}

void zkl__zcall_notify_ref(zkl__zcall_t *k, void (*fn)(void *), void *arg,
                           atomic_int *refs, void (*last)(void *)) {
  if (k == NULL) {
    fn(arg);
    return;
  }
  pthread_mutex_lock(&k->mu);
  if (atomic_load(&k->done)) fn(arg);
  else {
    k->notify = fn;
    k->notify_arg = arg;
    k->notify_refs = refs;
    k->notify_last = last;
  }
  pthread_mutex_unlock(&k->mu);
}

int zkl__zcall_ready(zkl__zcall_t *k) {
  /* no lock: a caller woken by the answer finds it without waiting for
   * the completion thread to let the record go */
  return k == NULL || atomic_load(&k->done);
}

/* The answer is in (st: its stat, or NULL), and the completion's
 * reference dropped, in one hold of the lock; the waiter is woken after
 * it. */
static void zcall_finish(struct zcall *k, int rc, const struct Stat *st) {
  zcall_post_t post;
  pthread_mutex_lock(&k->mu);
  if (st != NULL) {
    k->st = *st;
    k->have_st = 1;
  }
  zcall_done_locked(k, rc, &post);
  int last = --k->refs == 0;
  pthread_mutex_unlock(&k->mu);
  zcall_post_run(&post);
  if (last) zcall_free(k);
}

/* The handle was closed before the answer came: the request failed. */
static void zcall_discard(zkl__inflight_t *op) {
  zcall_finish((struct zcall *)op, ZCLOSING, NULL);
}

static struct zcall *zcall_new(zkl_session_t *s) {
  struct zcall *k = calloc(1, sizeof *k);
  if (k == NULL) return NULL;
  if (pthread_mutex_init(&k->mu, NULL) != 0) {
    free(k);
    return NULL;
  }
  if (zkl__cond_init(&k->cv) != 0) {
    pthread_mutex_destroy(&k->mu);
    free(k);
    return NULL;
  }
  k->refs = 2; /* the caller and the completion */
  k->s = s;
  k->link.discard = zcall_discard;
  return k;
}

/* After the send: a request that was not sent gets no completion. */
static void zcall_sent(struct zcall *k, int zrc) {
  /* a request that was not sent leaves the in-flight list while the
   * handle is pinned: a retirement waiting for the pin would otherwise
   * discard it too (a second completion) */
  if (zrc != ZOK) zkl__inflight_remove(k->s, &k->link);
  zkl__zh_unpin(k->s);
  if (zrc == ZOK) return;
  zcall_post_t post;
  pthread_mutex_lock(&k->mu);
  k->refs--;
  zcall_done_locked(k, zrc, &post);
  pthread_mutex_unlock(&k->mu);
  zcall_post_run(&post);
}

/* Waits for the answer until the deadline.  The answer's code, or
 * ZKL__ZTIMEDOUT (the record then stays with the completion).  With the
 * answer in, k->mu is left held for the caller to copy results. */
static int zcall_wait(struct zcall *k, int64_t deadline) {
  pthread_mutex_lock(&k->mu);
  while (!k->done && zkl__cond_wait_until(&k->cv, &k->mu, deadline) == 0) {
  }
  if (!k->done) {
    k->notify = NULL; /* its waiter gave up: the answer is nobody's */
    k->notify_refs = NULL;
    pthread_mutex_unlock(&k->mu);
    return ZKL__ZTIMEDOUT;
  }
  return k->rc;
}

/* Releases the caller's hold after zcall_wait(). */
static void zcall_end(struct zcall *k, int zrc) {
  if (zrc == ZKL__ZTIMEDOUT) {
    zcall_unref(k);
    return;
  }
  int last = --k->refs == 0; /* k->mu is still held */
  pthread_mutex_unlock(&k->mu);
  if (last) zcall_free(k);
}

/* The common ending of a completion. */
static void zcall_complete(struct zcall *k, int rc, const struct Stat *st) {
  zkl__inflight_remove(k->s, &k->link);
  zcall_finish(k, rc, st);
}

/* ---- completions -------------------------------------------------------- */

static void stat_done(int rc, const struct Stat *st, const void *data) {
  zcall_complete((struct zcall *)data, rc, rc == ZOK ? st : NULL);
}

static void void_done(int rc, const void *data) {
  zcall_complete((struct zcall *)data, rc, NULL);
}

static void sync_done(int rc, const char *value, const void *data) {
  (void)value;
  zcall_complete((struct zcall *)data, rc, NULL);
}

static char *copy_bytes(const char *p, int len) {
  char *out = malloc(len > 0 ? (size_t)len + 1 : 1);
  if (out == NULL) return NULL;
  if (len > 0) memcpy(out, p, (size_t)len);
  out[len > 0 ? len : 0] = '\0';
  return out;
}

static void data_done(int rc, const char *value, int len, const struct Stat *st,
                      const void *data) {
  struct zcall *k = (struct zcall *)data;
  if (rc == ZOK) {
    k->value = copy_bytes(value, value != NULL ? len : 0);
    k->value_len = value != NULL && len > 0 ? len : 0;
    if (k->value == NULL) rc = ZSYSTEMERROR;
  }
  zcall_complete(k, rc, rc == ZOK ? st : NULL);
}

static void create_done(int rc, const char *path, const struct Stat *st,
                        const void *data) {
  struct zcall *k = (struct zcall *)data;
  if (rc == ZOK && path != NULL) {
    k->value = copy_bytes(path, (int)strlen(path));
    /* made but not known to the caller: the caller's problem to find it
     * again by its prefix, as after a connection loss */
    if (k->value == NULL) rc = ZCONNECTIONLOSS;
  }
  zcall_complete(k, rc, rc == ZOK ? st : NULL);
}

/* A listing is copied into ONE block (the pointers, then the names): a
 * waiter's listing of thousands of names is one allocation, not
 * thousands, so that it leaves no trail of small holes in the heap once
 * freed (zkl__zk_children_free). */
static void children_done(int rc, const struct String_vector *v,
                          const void *data) {
  struct zcall *k = (struct zcall *)data;
  if (rc == ZOK && v != NULL && v->count > 0) {
    size_t names = 0, n = (size_t)v->count;
    for (size_t i = 0; i < n; i++) names += strlen(v->data[i]) + 1;
    char **block = malloc(n * sizeof *block + names);
    if (block == NULL) {
      rc = ZSYSTEMERROR;
    } else {
      char *at = (char *)(block + n);
      for (size_t i = 0; i < n; i++) {
        size_t len = strlen(v->data[i]) + 1;
        memcpy(at, v->data[i], len);
        block[i] = at;
        at += len;
      }
      k->kids.data = block;
      k->kids.count = v->count;
    }
  }
  zcall_complete(k, rc, NULL);
}

void zkl__zk_children_free(struct String_vector *v) {
  free(v->data);
  v->data = NULL;
  v->count = 0;
}

/* ---- requests ------------------------------------------------------------ */

/* Sends a request through `send` with the handle pinned; the record, or
 * NULL without memory. */
/* A request sent (not one the client refused): its kind, and a watch. */
static void count_sent(zkl_session_t *s, int zrc, atomic_uint_least64_t *kind,
                       int watch) {
  if (zrc != ZOK) return;
  zkl__count(kind);
  if (watch) zkl__count(&zkl__session_stats(s)->watches);
}

/* Sends a request of `kind` (a counter of zkl__stats_t), arming a watch or
 * not, through `send` with the handle pinned; the record, or NULL without
 * memory. */
#define ZCALL_SEND(s, k, zh, kind, watch, send)                   \
  struct zcall *k = zcall_new(s);                                  \
  if (k == NULL) return NULL;                                      \
  zhandle_t *zh = zkl__zh_pin(s, &k->link);                        \
  int zrc_ = zh == NULL ? ZCLOSING : (send);                       \
  count_sent(s, zrc_, &zkl__session_stats(s)->kind, watch);        \
  zcall_sent(k, zrc_);                                             \
  return k

zkl__zcall_t *zkl__zk_exists_send(zkl_session_t *s, const char *path,
                                  int watch) {
  ZCALL_SEND(s, k, zh, exists, watch,
             watch ? zoo_awexists(zh, path, zkl__watcher, s, stat_done, k)
                   : zoo_aexists(zh, path, 0, stat_done, k));
}

int zkl__zk_exists_wait(zkl__zcall_t *k, int64_t deadline, struct Stat *st) {
  if (k == NULL) return ZSYSTEMERROR;
  int zrc = zcall_wait(k, deadline);
  if (zrc == ZOK && st != NULL) *st = k->st;
  zcall_end(k, zrc);
  return zrc;
}

zkl__zcall_t *zkl__zk_set_send(zkl_session_t *s, const char *path,
                               const char *data, int len, int version) {
  ZCALL_SEND(s, k, zh, sets, 0, zoo_aset(zh, path, data, len, version, stat_done, k));
}

int zkl__zk_set_wait(zkl__zcall_t *k, int64_t deadline, struct Stat *st) {
  return zkl__zk_exists_wait(k, deadline, st);
}

zkl__zcall_t **zkl__zk_parents_send(zkl_session_t *s, const char *path,
                                     size_t *n) {
  size_t len = strlen(path), parts = 1;
  for (size_t i = 1; i < len; i++) parts += path[i] == '/';
  zkl__zcall_t **zs = calloc(parts, sizeof *zs);
  char *p = malloc(len + 1);
  if (zs == NULL || p == NULL) {
    free(p);
    free(zs);
    return NULL;
  }
  *n = 0;
  for (size_t i = 1; i < len; i++)
    if (path[i] == '/') {
      memcpy(p, path, i);
      p[i] = '\0';
      zs[(*n)++] = zkl__zk_create_send(s, p, "", 0, ZOO_CONTAINER);
    }
  free(p);
  return zs;
}

void zkl__zk_parents_end(zkl__zcall_t **zs, size_t n) {
  if (zs == NULL) return;
  for (size_t i = 0; i < n; i++)
    zkl__zk_create_wait(zs[i], ZKL__TRY, NULL, NULL);
  free(zs);
}

int zkl__zk_exists(zkl_session_t *s, int64_t deadline, const char *path,
                   int watch, struct Stat *st) {
  return zkl__zk_exists_wait(zkl__zk_exists_send(s, path, watch), deadline,
                             st);
}

zkl__zcall_t *zkl__zk_get_send(zkl_session_t *s, const char *path,
                               int watch) {
  ZCALL_SEND(s, k, zh, gets, watch,
             watch ? zoo_awget(zh, path, zkl__watcher, s, data_done, k)
                   : zoo_aget(zh, path, 0, data_done, k));
}

int zkl__zk_get_wait(zkl__zcall_t *k, int64_t deadline, char **value,
                     int *len, struct Stat *st) {
  if (k == NULL) return ZSYSTEMERROR;
  int zrc = zcall_wait(k, deadline);
  if (zrc == ZOK) {
    if (st != NULL) *st = k->st;
    if (len != NULL) *len = k->value_len;
    if (value != NULL) {
      *value = k->value;
      k->value = NULL;
    }
  }
  zcall_end(k, zrc);
  return zrc;
}

int zkl__zk_get(zkl_session_t *s, int64_t deadline, const char *path,
                int watch, char **value, int *len, struct Stat *st) {
  return zkl__zk_get_wait(zkl__zk_get_send(s, path, watch), deadline, value,
                         len, st);
}

zkl__zcall_t *zkl__zk_children_send(zkl_session_t *s, const char *path,
                                    int watch) {
  ZCALL_SEND(s, k, zh, children, watch,
             watch ? zoo_awget_children(zh, path, zkl__watcher, s,
                                        children_done, k)
                   : zoo_aget_children(zh, path, 0, children_done, k));
}

int zkl__zk_children_wait(zkl__zcall_t *k, int64_t deadline,
                          struct String_vector *out) {
  out->count = 0;
  out->data = NULL;
  if (k == NULL) return ZSYSTEMERROR;
  int zrc = zcall_wait(k, deadline);
  if (zrc == ZOK) {
    *out = k->kids;
    k->kids.count = 0;
    k->kids.data = NULL;
  }
  zcall_end(k, zrc);
  return zrc;
}

int zkl__zk_children(zkl_session_t *s, int64_t deadline, const char *path,
                     int watch, struct String_vector *out) {
  return zkl__zk_children_wait(zkl__zk_children_send(s, path, watch),
                               deadline, out);
}

zkl__zcall_t *zkl__zk_create_send(zkl_session_t *s, const char *path,
                                  const char *data, int len, int flags) {
  ZCALL_SEND(s, k, zh, creates, 0,
             zoo_acreate2(zh, path, data, len, zkl__session_acl(s), flags,
                          create_done, k));
}

int zkl__zk_create_wait(zkl__zcall_t *k, int64_t deadline, char **made,
                        struct Stat *st) {
  if (k == NULL) return ZSYSTEMERROR;
  int zrc = zcall_wait(k, deadline);
  if (zrc == ZOK) {
    if (st != NULL) { /* an old server may send none: zeros */
      if (k->have_st) *st = k->st;
      else memset(st, 0, sizeof *st);
    }
    /* copied on the caller's thread: the completion thread's memory is
     * for what is short-lived */
    if (made != NULL &&
        (k->value == NULL || (*made = strdup(k->value)) == NULL))
      zrc = ZCONNECTIONLOSS; /* made but not known: found by its prefix */
  }
  zcall_end(k, zrc);
  return zrc;
}

int zkl__zk_create(zkl_session_t *s, int64_t deadline, const char *path,
                   const char *data, int len, int flags, char **made,
                   struct Stat *st) {
  return zkl__zk_create_wait(zkl__zk_create_send(s, path, data, len, flags),
                             deadline, made, st);
}

zkl__zcall_t *zkl__zk_delete_send(zkl_session_t *s, const char *path) {
  ZCALL_SEND(s, k, zh, deletes, 0, zoo_adelete(zh, path, -1, void_done, k));
}

zkl__zcall_t *zkl__zk_delete_version_send(zkl_session_t *s, const char *path,
                                          int version) {
  ZCALL_SEND(s, k, zh, deletes, 0, zoo_adelete(zh, path, version, void_done, k));
}

zkl__zcall_t *zkl__zk_release_send(zkl_session_t *s, const char *node) {
  zoo_op_t ops[MAX_OPS];
  zoo_set_op_init(&ops[0], node, "", 0, -1, NULL);
  zoo_delete_op_init(&ops[1], node, -1);
  /* the request is serialized at once; the results land in the record */
  ZCALL_SEND(s, k, zh, multis, 0, zoo_amulti(zh, MAX_OPS, ops, k->res, void_done, k));
}

/* room for a made path in a multi's answer: a path's most (the client's
 * own limit is the same order) */
#define MADE_MAX 1024

zkl__zcall_t *zkl__zk_multi_send(zkl_session_t *s, const zkl__mop_t *mops,
                                 int n) {
  if (n <= 0) return NULL;
  struct zcall *k = zcall_new(s);
  if (k == NULL) return NULL;
  zoo_op_t *ops = calloc((size_t)n, sizeof *ops);
  k->mres = calloc((size_t)n, sizeof *k->mres);
  k->mstat = calloc((size_t)n, sizeof *k->mstat);
  int creates = 0;
  for (int i = 0; i < n; i++) creates += mops[i].type == ZOO_CREATE_OP;
  k->mbuf = creates > 0 ? calloc((size_t)creates, MADE_MAX) : NULL;
  if (ops == NULL || k->mres == NULL || k->mstat == NULL ||
      (creates > 0 && k->mbuf == NULL)) {
    free(ops);
    zcall_free(k);
    return NULL;
  }
  k->mcount = n;
  const struct ACL_vector *acl = zkl__session_acl(s);
  for (int i = 0, c = 0; i < n; i++) {
    const zkl__mop_t *m = &mops[i];
    if (m->type == ZOO_CREATE_OP) {
      zoo_create_op_init(&ops[i], m->path, m->data, m->len, acl, m->flags,
                         k->mbuf + (size_t)c * MADE_MAX, MADE_MAX);
      c++;
    } else if (m->type == ZOO_DELETE_OP) {
      zoo_delete_op_init(&ops[i], m->path, m->version);
    } else if (m->type == ZOO_SETDATA_OP) {
      zoo_set_op_init(&ops[i], m->path, m->data, m->len, m->version,
                      &k->mstat[i]);
    } else {
      zoo_check_op_init(&ops[i], m->path, m->version);
    }
  }
  zhandle_t *zh = zkl__zh_pin(s, &k->link);
  /* serialized at once: ops may go; results land in the record */
  int zrc = zh == NULL ? ZCLOSING
                       : zoo_amulti(zh, n, ops, k->mres, void_done, k);
  count_sent(s, zrc, &zkl__session_stats(s)->multis, 0);
  zcall_sent(k, zrc);
  free(ops);
  return k;
}

int zkl__zk_multi_wait(zkl__zcall_t *k, int64_t deadline, int *errs,
                       char **made) {
  return zkl__zk_multi_wait_stat(k, deadline, errs, made, NULL);
}

int zkl__zk_multi_wait_stat(zkl__zcall_t *k, int64_t deadline, int *errs,
                            char **made, struct Stat *stats) {
  if (k == NULL) return ZSYSTEMERROR;
  int zrc = zcall_wait(k, deadline);
  if (zrc == ZOK && stats != NULL)
    memcpy(stats, k->mstat, (size_t)k->mcount * sizeof *stats);
  if (zrc != ZKL__ZTIMEDOUT) {
    for (int i = 0; i < k->mcount; i++) {
      if (errs != NULL)
        errs[i] = zrc == ZOK || k->mres[i].err != 0 ? k->mres[i].err : zrc;
      if (made != NULL)
        made[i] = zrc == ZOK && k->mres[i].err == ZOK &&
                          k->mres[i].value != NULL
                      ? strdup(k->mres[i].value)
                      : NULL;
    }
  }
  zcall_end(k, zrc);
  return zrc;
}

zkl__zcall_t *zkl__zk_sync_send(zkl_session_t *s, const char *path) {
  ZCALL_SEND(s, k, zh, syncs, 0, zoo_async(zh, path, sync_done, k));
}

int zkl__zk_wait(zkl__zcall_t *k, int64_t deadline) {
  if (k == NULL) return ZSYSTEMERROR;
  int zrc = zcall_wait(k, deadline);
  zcall_end(k, zrc);
  return zrc;
}

int zkl__zk_delete(zkl_session_t *s, int64_t deadline, const char *path) {
  return zkl__zk_wait(zkl__zk_delete_send(s, path), deadline);
}

int zkl__zk_release(zkl_session_t *s, int64_t deadline, const char *node) {
  return zkl__zk_wait(zkl__zk_release_send(s, node), deadline);
}

int zkl__zk_sync(zkl_session_t *s, int64_t deadline, const char *path) {
  return zkl__zk_wait(zkl__zk_sync_send(s, path), deadline);
}

static void ignore_done(int rc, const void *data) {
  (void)rc;
  (void)data;
}

void zkl__zk_unwatch(zkl_session_t *s, const char *path, int type) {
  zhandle_t *zh = zkl__zh_pin(s, NULL);
  /* zookeeper.h declares the completion as void_completion_t *, but the
   * client stores and calls it as a plain void_completion_t. */
  if (zh != NULL)
    zoo_aremove_all_watches(zh, path, (ZooWatcherType)type, 0,
                            (void_completion_t *)(void *)ignore_done, NULL);
  zkl__zh_unpin(s);
}
