/* lib/driver.c - the drivers: each recipe's answer to "am I granted, and if
 * not, which node do I watch?".  Pure functions, unit-tested without a
 * server. */
#include "zkl-int.h"

/* The mutex queues behind every exclusive contender of the peers: Curator's
 * and go-zookeeper's "-lock-" nodes and kazoo's "__lock__" nodes (kazoo's
 * read locks do not block kazoo's own Lock either). */
static int mutex_counts(zkl__kind_t k) {
  return k == ZKL__KIND_LOCK || k == ZKL__KIND_KAZOO_LOCK;
}

/* Exclusive: blocked by anything ahead; watch the immediate predecessor. */
static ptrdiff_t exclusive_blocker(const zkl__node_t *lower, size_t n) {
  (void)lower;
  return n == 0 ? -1 : (ptrdiff_t)n - 1;
}

const zkl__driver_t zkl__driver_mutex = {
    .name = "mutex",
    .marker = "lock-",
    .kind = ZKL__KIND_LOCK,
    .tells_release = 1,
    .counts = mutex_counts,
    .blocks = mutex_counts,
    .blocker = exclusive_blocker,
};

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
    .blocker = exclusive_blocker,
};

/* Curator's LeaderLatch: the lowest latch node leads; each candidate
 * watches its immediate predecessor. */
static int latch_counts(zkl__kind_t k) { return k == ZKL__KIND_LATCH; }

const zkl__driver_t zkl__driver_latch = {
    .name = "election",
    .marker = "latch-",
    .kind = ZKL__KIND_LATCH,
    /* Curator's LeaderLatch behind us wakes only on NodeDeleted: a plain
     * delete (a handoff of leadership is rare; the one behind a resigning
     * leader mostly has nothing else below it to check) */
    .tells_release = 0,
    .counts = latch_counts,
    .blocks = latch_counts,
    .blocker = exclusive_blocker,
};

/* Every driver's own kind belongs to it alone: a node of such a kind was
 * created by that driver (or by a peer of the same shape, which never
 * writes it). */
int zkl__kind_marks_release(zkl__kind_t k) {
  static const zkl__driver_t *const all[] = {
      &zkl__driver_mutex, &zkl__driver_reader, &zkl__driver_writer,
      &zkl__driver_latch};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (all[i]->kind == k) return all[i]->tells_release;
  return 0;
}
