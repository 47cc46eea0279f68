/* zkl/inspect.h - looking at a recipe path without taking part: who
 * queues there, in which order, who holds, with which token.
 *
 * What zkl_contenders() reports is decided by the same node-name parser,
 * order (sequence numbers compared with the wrap handled) and recipe rules
 * the locks and the election use, so it says exactly whom each recipe
 * grants now: the first exclusive lock node, the readers ahead of the
 * first writer (or that writer), the leader.  Nodes of Curator, kazoo and
 * go-zookeeper of the same shapes count like zkl's own.
 *
 * Thread model: every function here may be called from any thread; the
 * results belong to the caller.
 */
#ifndef ZKL_INSPECT_H
#define ZKL_INSPECT_H

#include <stddef.h>
#include <stdint.h>

#include "zkl/errors.h"
#include "zkl/session.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a child of a recipe path is. */
typedef enum zkl_kind {
  ZKL_KIND_LOCK = 0, /* exclusive lock: "-lock-" (zkl, Curator,
                        go-zookeeper), kazoo's "__lock__"                  */
  ZKL_KIND_READ,     /* read side: "__READ__" (zkl, Curator), kazoo's
                        "__rlock__"                                        */
  ZKL_KIND_WRITE,    /* write side: "__WRIT__", and kazoo's "__lock__" when
                        read nodes are beside it (kazoo's WriteLock)       */
  ZKL_KIND_ELECTION, /* election candidate: "latch-" (zkl, Curator's
                        LeaderLatch)                                       */
  ZKL_KIND_FOREIGN   /* any other child: no recipe queues behind it        */
} zkl_kind_t;

/* One child of the path.  Everything it points to belongs to the array
 * and is freed by zkl_contenders_free(). */
typedef struct zkl_contender {
  const char *name;   /* the child's name (not the full path)              */
  zkl_kind_t kind;
  int position;       /* 1, 2, ... in queue order; 0 for a foreign child   */
  int holds;          /* 1: its recipe grants it now (holder or leader)    */
  uint64_t token;     /* its czxid: the fencing token of its hold          */
  int64_t session;    /* the session that owns it (ephemeralOwner), 0 for
                         a persistent node                                 */
  const void *data;   /* its data (for zkl's nodes: "host:pid" or the
                         caller's), data_len bytes and then a NUL; NULL
                         when the ACL does not let this session read it   */
  size_t data_len;
  int64_t ctime_ms;   /* when it was created, by the server's clock, in
                         milliseconds since the epoch: how long a waiter
                         has waited, or a holder held (with the waiting)  */
} zkl_contender_t;

/* Lists the children of path with their kind, queue position, holder flag,
 * token, owning session and data: contenders first, in queue order, then
 * foreign children by name.  A child that vanishes while it is read is left
 * out; a path that does not exist gives an empty list.  The listing is read
 * after a `sync`, so it is at least as new as anything this client saw
 * before the call, even on a lagging follower; it is a snapshot, never a
 * lock: it may be stale the moment it returns.
 * Requests: a sync, one listing, and one read per child, sent together.
 *   0              *out (malloc'ed, free with zkl_contenders_free();
 *                  NULL when *count is 0) and *count are set.
 *   ZKL_EINVAL     s, out or count is NULL, or path is not a valid lock
 *                  path (see zkl_path_check()).
 *   ZKL_ETIMEDOUT  no complete answer within timeout_ms (negative: wait as
 *                  long as the client does, about 2/3 of the session
 *                  timeout at worst).
 *   ZKL_ESUSPENDED the connection is down; ZKL_ELOST the session is gone.
 *   ZKL_ENOMEM     out of memory.
 *   other <0       ZooKeeper refused the listing (e.g. ZNOAUTH).
 * On failure *out is NULL and *count 0. */
ZKL_EXTERN int zkl_contenders(zkl_session_t *s, const char *path,
                              int64_t timeout_ms, zkl_contender_t **out,
                              size_t *count);

/* Frees what zkl_contenders() returned.  NULL-safe. */
ZKL_EXTERN void zkl_contenders_free(zkl_contender_t *v, size_t count);

/* Puts v in queue order and fills kind, position and holds from the names
 * alone (no server; v[i].name must be set, the other fields are ignored on
 * entry): what zkl_contenders() does after reading.  For a listing read by
 * other means, and for tests. */
ZKL_EXTERN void zkl_contenders_order(zkl_contender_t *v, size_t count);

/* "lock", "read", "write", "election" or "foreign" (also for a value
 * outside the enum). */
ZKL_EXTERN const char *zkl_kind_name(zkl_kind_t kind);

/* Whether path may be a recipe path (what every *_create() checks):
 * absolute, not "/", no trailing '/', no empty, "." or ".." component, no
 * control character, valid UTF-8, not under /zookeeper, at most 900 bytes.
 * 0, or ZKL_EINVAL with the reason in zkl_last_error(). */
ZKL_EXTERN int zkl_path_check(const char *path);

#ifdef __cplusplus
}
#endif
#endif /* ZKL_INSPECT_H */
