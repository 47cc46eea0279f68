/* lib/recipes/rwlock.c - the read/write lock: the reader and writer drivers
 * on the contention core, one contender each, and read and write counts
 * on the recipe base (recipe.c), with a downgrade and a refused upgrade. */
#include <limits.h>
#include <string.h>

#include "core/contend.h"

/* ---- the drivers ---------------------------------------------------------- */

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

/* ---- the object: two contenders, read and write counts ------------------- */

#define MODE_READ 0
#define MODE_WRITE 1

struct zkl_rwlock {
  zkl__recipe_t base; /* base.own.mu guards the fields below             */
  zkl__contender_t rd, wr;
  unsigned rcount;    /* the owner's read holds                           */
  unsigned wcount;    /* the owner's write holds                          */
  int rd_via_wr;      /* the read hold is covered by the write node (taken
                         while holding the write lock: a downgrade)       */
};

/* The object and its base are one pointer (see mutex.c). */
static zkl_rwlock_t *of(const zkl__recipe_t *r) {
  return (zkl_rwlock_t *)(void *)r;
}
static zkl__recipe_t *base(zkl_rwlock_t *l) {
  return (zkl__recipe_t *)(void *)l;
}

static int init(zkl__recipe_t *r, zkl_session_t *s, const char *path,
                const void *data, size_t len) {
  zkl_rwlock_t *l = of(r);
  int rc = zkl__contender_init(&l->rd, s, &zkl__driver_reader, path, data,
                               len, &r->own.cancel_gen);
  if (rc != 0) return rc;
  rc = zkl__contender_init(&l->wr, s, &zkl__driver_writer, path, data, len,
                           &r->own.cancel_gen);
  if (rc != 0) zkl__contender_fini(&l->rd);
  r->root = l->rd.root;
  return rc;
}

static void fini(zkl__recipe_t *r) {
  zkl__contender_fini(&of(r)->rd);
  zkl__contender_fini(&of(r)->wr);
}

static void kick(zkl__recipe_t *r) {
  zkl__contend_cancel(&of(r)->rd);
  zkl__contend_cancel(&of(r)->wr);
}

static int holds(const zkl__recipe_t *r) {
  const zkl_rwlock_t *l = of(r);
  return (l->rcount > 0 ? ZKL_RWLOCK_READ : 0) |
         (l->wcount > 0 ? ZKL_RWLOCK_WRITE : 0);
}

/* The contender whose node backs the owner's hold. */
static zkl__contender_t *backing(zkl__recipe_t *r) {
  zkl_rwlock_t *l = of(r);
  return l->wcount > 0 || l->rd_via_wr ? &l->wr : &l->rd;
}

/* A further hold by a thread that already holds: counts only. */
static int again(zkl__recipe_t *r, int mode) {
  zkl_rwlock_t *l = of(r);
  if (mode == MODE_WRITE && l->wcount == 0)
    return zkl__fail(ZKL_EDEADLK, "the calling thread holds the read lock "
                     "of %s: release it before taking the write lock",
                     r->root);
  int rc = zkl__contend_hold_again(backing(r)); /* a downgrade too */
  unsigned *count = mode == MODE_WRITE ? &l->wcount : &l->rcount;
  if (rc == 0 && *count == UINT_MAX)
    rc = zkl__fail(ZKL_EAGAIN, "%s: the hold count is at its maximum",
                   r->root);
  if (rc != 0) return rc;
  if (mode == MODE_READ && l->rcount == 0) l->rd_via_wr = 1; /* downgrade */
  (*count)++;
  return 0;
}

static zkl__contender_t *contender(zkl__recipe_t *r, int mode) {
  return mode == MODE_WRITE ? &of(r)->wr : &of(r)->rd;
}

static void granted(zkl__recipe_t *r, int mode) {
  zkl_rwlock_t *l = of(r);
  l->rcount = mode == MODE_READ;
  l->wcount = mode == MODE_WRITE;
  l->rd_via_wr = 0;
}

/* The write hold goes first: wrlock, rdlock, unlock is a downgrade, which
 * keeps the write node until the read hold ends too. */
static int unhold(zkl__recipe_t *r) {
  zkl_rwlock_t *l = of(r);
  unsigned *count = l->wcount > 0 ? &l->wcount : &l->rcount;
  --*count;
  return l->wcount + l->rcount == 0;
}

static const zkl__recipe_ops_t ops = {
    .name = "rwlock",
    .size = sizeof(zkl_rwlock_t),
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

void zkl_rwlock_opts_init(zkl_rwlock_opts_t *o) {
  if (o != NULL) memset(o, 0, sizeof *o);
}

int zkl_rwlock_create(zkl_rwlock_t **out, zkl_session_t *s, const char *path,
                      const zkl_rwlock_opts_t *opts) {
  return zkl__recipe_create(out, &ops, s, path,
                            opts != NULL ? opts->data : NULL,
                            opts != NULL ? opts->data_len : 0);
}

static int acquire(zkl_rwlock_t *l, int mode, int64_t timeout_ms) {
  return zkl__recipe_acquire(base(l), &ops, mode, timeout_ms);
}


int zkl_rwlock_rdlock(zkl_rwlock_t *l) {
  return acquire(l, MODE_READ, -1);
}
int zkl_rwlock_tryrdlock(zkl_rwlock_t *l) {
  return acquire(l, MODE_READ, 0);
}
int zkl_rwlock_timedrdlock(zkl_rwlock_t *l, int64_t timeout_ms) {
  return acquire(l, MODE_READ, timeout_ms);
}
int zkl_rwlock_wrlock(zkl_rwlock_t *l) {
  return acquire(l, MODE_WRITE, -1);
}
int zkl_rwlock_trywrlock(zkl_rwlock_t *l) {
  return acquire(l, MODE_WRITE, 0);
}
int zkl_rwlock_timedwrlock(zkl_rwlock_t *l, int64_t timeout_ms) {
  return acquire(l, MODE_WRITE, timeout_ms);
}
int zkl_rwlock_rdlock_async(zkl_rwlock_t *l, int64_t timeout_ms,
                            zkl_done_fn cb, void *arg) {
  return zkl__recipe_acquire_async(base(l), &ops, MODE_READ, timeout_ms, cb,
                                   arg);
}
int zkl_rwlock_wrlock_async(zkl_rwlock_t *l, int64_t timeout_ms,
                            zkl_done_fn cb, void *arg) {
  return zkl__recipe_acquire_async(base(l), &ops, MODE_WRITE, timeout_ms, cb,
                                   arg);
}
int zkl_rwlock_unlock_async(zkl_rwlock_t *l, zkl_done_fn cb, void *arg) {
  return zkl__recipe_release_async(base(l), &ops, cb, arg);
}
int zkl_rwlock_watch_async(zkl_rwlock_t *l, zkl_done_fn cb, void *arg) {
  return zkl__recipe_watch_async(base(l), &ops, cb, arg);
}
int zkl_rwlock_unlock(zkl_rwlock_t *l) {
  return zkl__recipe_release(base(l), &ops);
}
int zkl_rwlock_cancel(zkl_rwlock_t *l) {
  return zkl__recipe_cancel(base(l), &ops);
}
int zkl_rwlock_token(zkl_rwlock_t *l, uint64_t *token) {
  return zkl__recipe_token(base(l), &ops, token);
}
int zkl_rwlock_holding(zkl_rwlock_t *l) {
  return zkl__recipe_holding(base(l), &ops);
}
int zkl_rwlock_node(zkl_rwlock_t *l, char *buf, size_t len) {
  return zkl__recipe_node(base(l), &ops, 0, buf, len);
}
void zkl_rwlock_destroy(zkl_rwlock_t *l) { zkl__recipe_destroy(base(l)); }
