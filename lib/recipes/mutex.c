/* lib/recipes/mutex.c - the exclusive lock: the mutex driver on the
 * contention core, and a recursion count on the recipe base (recipe.c). */
#include <limits.h>
#include <string.h>

#include "core/contend.h"

/* ---- the driver ------------------------------------------------------------ */

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

/* kazoo's Lock counts only names with its "__lock__" marker (unless told
 * others), so a zkl contender that kazoo's own Lock must respect names its
 * node `_c_<uuid>-__lock__<seq>`: the gate of the semaphore in kazoo's
 * layout (semaphore.c).  It queues exactly as the mutex; its release
 * writes no mark (kazoo's nodes carry none, zkl__kind_marks_release). */
const zkl__driver_t zkl__driver_kazoo_lock = {
    .name = "kazoo lock",
    .marker = "__lock__",
    .kind = ZKL__KIND_KAZOO_LOCK,
    .tells_release = 0,
    .counts = mutex_counts,
    .blocks = mutex_counts,
    .blocker = zkl__blocker_exclusive,
};

/* ---- the object: one contender, a recursion count ------------------------- */

struct zkl_mutex {
  zkl__recipe_t base;
  zkl__contender_t c;
  unsigned count; /* the owner's recursion count (0 while acquiring) */
};

/* The object and its base are one pointer (the base is the first member,
 * and NULL stays NULL: the base says so in its message). */
static zkl_mutex_t *of(const zkl__recipe_t *r) {
  return (zkl_mutex_t *)(void *)r;
}
static zkl__recipe_t *base(zkl_mutex_t *m) { return (zkl__recipe_t *)(void *)m; }

static int init(zkl__recipe_t *r, zkl_session_t *s, const char *path,
                const void *data, size_t len) {
  zkl_mutex_t *m = of(r);
  int rc = zkl__contender_init(&m->c, s, &zkl__driver_mutex, path, data, len,
                               &r->own.cancel_gen);
  r->root = m->c.root;
  return rc;
}

static void fini(zkl__recipe_t *r) { zkl__contender_fini(&of(r)->c); }
static void kick(zkl__recipe_t *r) { zkl__contend_cancel(&of(r)->c); }
static int holds(const zkl__recipe_t *r) { return of(r)->count > 0; }

static int again(zkl__recipe_t *r, int mode) {
  (void)mode;
  zkl_mutex_t *m = of(r);
  int rc = zkl__contend_hold_again(&m->c); /* else the count stays */
  if (rc == 0 && m->count == UINT_MAX)
    rc = zkl__fail(ZKL_EAGAIN, "%s: the recursion count is at its maximum",
                   r->root);
  if (rc == 0) m->count++;
  return rc;
}

static zkl__contender_t *contender(zkl__recipe_t *r, int mode) {
  (void)mode;
  return &of(r)->c;
}

static void granted(zkl__recipe_t *r, int mode) {
  of(r)->count = mode < 0 ? 0 : 1;
}

static zkl__contender_t *backing(zkl__recipe_t *r) { return &of(r)->c; }
static int unhold(zkl__recipe_t *r) { return --of(r)->count == 0; }

static const zkl__recipe_ops_t ops = {
    .name = "mutex",
    .size = sizeof(zkl_mutex_t),
    .init = init,
    .fini = fini,
    .kick = kick,
    .holds = holds,
    .again = again,
    .contender = contender,
    .granted = granted,
    .backing = backing,
    .unhold = unhold,
};

/* ---- the public API ------------------------------------------------------- */

void zkl_mutex_opts_init(zkl_mutex_opts_t *o) {
  if (o != NULL) memset(o, 0, sizeof *o);
}

int zkl_mutex_create(zkl_mutex_t **out, zkl_session_t *s, const char *path,
                     const zkl_mutex_opts_t *opts) {
  return zkl__recipe_create(out, &ops, s, path,
                            opts != NULL ? opts->data : NULL,
                            opts != NULL ? opts->data_len : 0);
}


int zkl_mutex_lock(zkl_mutex_t *m) {
  return zkl__recipe_acquire(base(m), &ops, 0, -1);
}
int zkl_mutex_trylock(zkl_mutex_t *m) {
  return zkl__recipe_acquire(base(m), &ops, 0, 0);
}
int zkl_mutex_timedlock(zkl_mutex_t *m, int64_t timeout_ms) {
  return zkl__recipe_acquire(base(m), &ops, 0, timeout_ms);
}
int zkl_mutex_lock_async(zkl_mutex_t *m, int64_t timeout_ms, zkl_done_fn cb,
                         void *arg) {
  return zkl__recipe_acquire_async(base(m), &ops, 0, timeout_ms, cb, arg);
}
int zkl_mutex_unlock_async(zkl_mutex_t *m, zkl_done_fn cb, void *arg) {
  return zkl__recipe_release_async(base(m), &ops, cb, arg);
}
int zkl_mutex_watch_async(zkl_mutex_t *m, zkl_done_fn cb, void *arg) {
  return zkl__recipe_watch_async(base(m), &ops, cb, arg);
}
int zkl_mutex_unlock(zkl_mutex_t *m) {
  return zkl__recipe_release(base(m), &ops);
}
int zkl_mutex_cancel(zkl_mutex_t *m) {
  return zkl__recipe_cancel(base(m), &ops);
}
int zkl_mutex_token(zkl_mutex_t *m, uint64_t *token) {
  return zkl__recipe_token(base(m), &ops, token);
}
int zkl_mutex_holding(zkl_mutex_t *m) {
  return zkl__recipe_holding(base(m), &ops);
}
int zkl_mutex_node(zkl_mutex_t *m, char *buf, size_t len) {
  return zkl__recipe_node(base(m), &ops, 1, buf, len);
}
void zkl_mutex_destroy(zkl_mutex_t *m) { zkl__recipe_destroy(base(m)); }
