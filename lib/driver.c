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
    .exclusive = 1,
    .counts = mutex_counts,
    .blocker = exclusive_blocker,
};
