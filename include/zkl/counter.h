/* zkl/counter.h - a shared counter: one integer in one persistent node,
 * read and changed atomically by every process that uses the same path.
 *
 * Wire formats, chosen per object (zkl_counter_opts_t.format), all of them
 * the node's data and nothing else:
 *   ZKL_COUNTER_INT32  4 bytes, big-endian, signed: Curator's SharedCount
 *                      and DistributedAtomicInteger, and kazoo's
 *                      Counter(support_curator=True).
 *   ZKL_COUNTER_INT64  8 bytes, big-endian, signed: Curator's
 *                      DistributedAtomicLong.
 *   ZKL_COUNTER_TEXT   ASCII decimal ("42"): kazoo's Counter() with an
 *                      int default.
 * A node with no data (kazoo's Counter makes its node empty, and so does
 * `zkCli create`) reads as the object's `initial` value; a node whose data
 * is not of the object's format is an error (ZKL_EPROTO), never read as a
 * number.  zkl creates the node (its missing parents as CONTAINER nodes)
 * always with its bytes, never empty: Curator's SharedCount cannot read an
 * empty node.
 *
 * Every change is a compare-and-set on the node's data version
 * (ZooKeeper's dataVersion), so that no update is lost: zkl_counter_add()
 * reads, computes and writes "if the version is still the one read", and
 * tries again when another writer came first.  The version is compared
 * for equality only, so it keeps working after it wraps past 2^31-1 to
 * negative values (Curator's SharedCount compared it by order and stopped
 * updating there, CURATOR-688).  Version -1 is the one version a plain
 * conditional write cannot name (ZooKeeper reads -1 as "any version",
 * and Curator and kazoo then write blindly): at -1 zkl writes and checks
 * in one multi, setData at any version and then a check that the version
 * is now 0, which holds only if it was -1 before, so the write is still
 * conditional.  A version names no node: a node deleted and made again
 * counts its versions from 0 anew, and a compare-and-set cannot tell it
 * from the node it saw.
 *
 * TEXT holds what kazoo writes for an int: an optional minus sign and
 * decimal digits, nothing else; zkl reads and writes it within int64.
 *
 * Outcomes: a write whose answer was lost with the connection (ZooKeeper's
 * connection loss) may or may not have been applied; it returns
 * ZKL_ESUSPENDED and says so, and is never sent again by zkl (a resend of
 * an add could count twice).  Once sent, a write waits for its answer
 * whatever the deadline (the client gives one at the latest when it gives
 * the connection up, within a session timeout).  An async write whose
 * completion the object's destruction turned into ZKL_ECANCELED may have
 * been applied too.  Every other failure leaves the counter as it was.
 *
 * Threads: one call at a time per object.  A blocking call from a second
 * thread waits locally for the first (until its own deadline); an async
 * call while another is underway is refused (ZKL_EBUSY).  Use one object
 * per thread for parallel writers; they may share the session.  All
 * functions are thread-safe except zkl_counter_destroy(), which must be
 * the last call on the object.  The async forms complete through
 * zkl_session_dispatch() (zkl_async(3)).
 *
 * Connection: get, set and cas wait for a connection up to the session
 * timeout, then return ZKL_ESUSPENDED; add and wait wait until their own
 * deadline, then return ZKL_ETIMEDOUT (ZKL_ESUSPENDED with timeout 0).
 * Across a new session (zkl_session_opts_t.reestablish) a call goes on;
 * once the session is gone for good, ZKL_ELOST.  Every blocking call may
 * also return ZKL_ENOMEM, and ZKL_ETIMEDOUT / ZKL_EBUSY (timeout 0) when
 * another thread's call of the object lasts past its deadline.
 */
#ifndef ZKL_COUNTER_H
#define ZKL_COUNTER_H

#include <stdint.h>
#include "zkl/session.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zkl_counter zkl_counter_t;

/* The node's data format. */
typedef enum zkl_counter_format {
  ZKL_COUNTER_INT32 = 0, /* 4 bytes BE: Curator SharedCount, kazoo curator */
  ZKL_COUNTER_INT64 = 1, /* 8 bytes BE: Curator DistributedAtomicLong      */
  ZKL_COUNTER_TEXT = 2   /* ASCII decimal: kazoo Counter()                 */
} zkl_counter_format_t;

/* Options for zkl_counter_create().  Start from zkl_counter_opts_init(). */
typedef struct zkl_counter_opts {
  zkl_counter_format_t format; /* default ZKL_COUNTER_INT32               */
  int64_t initial; /* the value of a missing or empty node, and the value a
                      missing node is created with by a write that needs
                      it (add); default 0; within the format's range      */
} zkl_counter_opts_t;

/* The counter as one call saw it. */
typedef struct zkl_count {
  int64_t value;   /* the value (initial if the node is missing or empty) */
  int32_t version; /* the node's data version, for zkl_counter_cas()      */
  int exists;      /* 0: the node is missing (value is initial)           */
  uint64_t zxid;   /* the zxid of the write that made this value (mzxid);
                      0 if missing: larger for every later write          */
} zkl_count_t;

/* Fills *opts with the defaults.  Thread-safe. */
ZKL_EXTERN void zkl_counter_opts_init(zkl_counter_opts_t *opts);

/* Creates a counter object for the node at `path` (absolute, as for
 * zkl_mutex_create(), not "/").  No ZooKeeper call is made.
 *   0           *out is ready; free it with zkl_counter_destroy().
 *   ZKL_EINVAL  out, s or path is NULL, the path is invalid, the format
 *               is unknown or initial is outside its range.
 *   ZKL_ENOMEM / ZKL_ESYSTEM  allocation or mutex init failed.
 * On failure *out is NULL.  The path is copied; the session must outlive
 * the object. */
ZKL_EXTERN int zkl_counter_create(zkl_counter_t **out, zkl_session_t *s,
                                  const char *path,
                                  const zkl_counter_opts_t *opts);

/* Reads the counter into *now (not NULL; a missing node: exists 0, value
 * initial, version 0; the node is not created).
 *   0, ZKL_EPROTO (the data is not of the format: *now has the version),
 *   ZKL_ESUSPENDED, ZKL_ELOST, ZKL_EBUSY (only async), ZKL_EINVAL, or
 *   ZooKeeper's code (ZNOAUTH...). */
ZKL_EXTERN int zkl_counter_get(zkl_counter_t *c, zkl_count_t *now);

/* Writes `value` whatever the counter holds (creating the node if it is
 * missing); *now (may be NULL) the counter as written.
 *   0, ZKL_ERANGE (value outside the format's range), ZKL_ESUSPENDED
 *   (not connected, or the answer was lost: it may have been applied),
 *   ZKL_ELOST, ZKL_EINVAL, or ZooKeeper's code. */
ZKL_EXTERN int zkl_counter_set(zkl_counter_t *c, int64_t value,
                               zkl_count_t *now);

/* Writes `value` only if the counter is still as `seen` says (from
 * get, wait or an earlier write): the same data version, or still missing
 * when seen->exists is 0, in which case the node is created.  A version
 * names no node: one deleted and made again since counts its versions from
 * 0 anew, and a cas cannot tell it from the node seen (add reads just
 * before it writes, so its window is one round trip).
 *   0           written; *now (may be NULL) the counter as written.
 *   ZKL_ESTALE  another write came first (or the node was deleted):
 *               nothing written; *now the counter as it is (it may be
 *               passed back as seen).
 *   ZKL_ERANGE, ZKL_ESUSPENDED, ZKL_ELOST, ZKL_EINVAL (seen NULL), or
 *   ZooKeeper's code, as zkl_counter_set(). */
ZKL_EXTERN int zkl_counter_cas(zkl_counter_t *c, const zkl_count_t *seen,
                               int64_t value, zkl_count_t *now);

/* Adds delta (may be negative) atomically: compare-and-set until it
 * applies, or the deadline (timeout_ms: 0 one try, <0 none); after a
 * conflict it pauses a random moment (up to 2 ms, doubling to 16 ms)
 * before it reads again, so that contenders spread out.  *now (may
 * be NULL) the counter as written; the value before is now->value - delta.
 * A missing node is created with initial + delta.
 *   0, ZKL_ETIMEDOUT (other writers kept coming first, or no connection
 *   until the deadline: nothing written), ZKL_ESTALE (timeout 0: another
 *   writer came first, nothing written), ZKL_ERANGE (the sum would leave
 *   the format's range: nothing written), ZKL_EPROTO (the node's data is
 *   not of the format), ZKL_ECANCELED (zkl_counter_cancel()),
 *   ZKL_ESUSPENDED (the answer to the write was lost: it may have been
 *   applied), ZKL_ELOST, ZKL_EINVAL, or ZooKeeper's code. */
ZKL_EXTERN int zkl_counter_add(zkl_counter_t *c, int64_t delta,
                               int64_t timeout_ms, zkl_count_t *now);

/* The change notification: waits until the counter differs from `seen`
 * (another version, or the node made or deleted), then *now (may be NULL)
 * is the counter as it is.  One ZooKeeper data watch, no polling.  With seen
 * NULL, waits for the next change from now on.
 *   0, ZKL_ETIMEDOUT (no change until the deadline), ZKL_ECANCELED,
 *   ZKL_EPROTO (it changed to data not of the format: *now has the
 *   version), ZKL_ESUSPENDED (only with timeout 0: not connected),
 *   ZKL_ELOST, ZKL_EINVAL, or ZooKeeper's code.
 * A connection that is down is waited through (until the deadline): a
 * change made meanwhile is seen when it is back. */
ZKL_EXTERN int zkl_counter_wait(zkl_counter_t *c, const zkl_count_t *seen,
                                int64_t timeout_ms, zkl_count_t *now);

/* Wakes the object's blocked call (add, wait, or any call waiting for a
 * connection), which returns ZKL_ECANCELED (a write already sent still
 * waits for its answer); an async one completes with it.  0 or ZKL_EINVAL.
 * Thread-safe, may be called from a completion. */
ZKL_EXTERN int zkl_counter_cancel(zkl_counter_t *c);

/* The async forms: the same calls, completed by cb on the thread that
 * calls zkl_session_dispatch(), exactly once per accepted call, never
 * from the submitting call.  now is the counter (NULL when rc is an error
 * that saw nothing); it lives only during the callback.  They return 0
 * (cb will run) or, with cb never run, ZKL_EINVAL (c or cb NULL, or an
 * argument the blocking form refuses), ZKL_EBUSY (a call of the object is
 * underway), ZKL_ECANCELED (the object is being destroyed) or
 * ZKL_ENOMEM.  A completion not yet dispatched when the object is
 * destroyed reports ZKL_ECANCELED with c as given (do not use it). */
typedef void (*zkl_count_fn)(zkl_counter_t *c, int rc, const zkl_count_t *now,
                             void *arg);
ZKL_EXTERN int zkl_counter_get_async(zkl_counter_t *c, zkl_count_fn cb,
                                     void *arg);
ZKL_EXTERN int zkl_counter_set_async(zkl_counter_t *c, int64_t value,
                                     zkl_count_fn cb, void *arg);
ZKL_EXTERN int zkl_counter_cas_async(zkl_counter_t *c,
                                     const zkl_count_t *seen, int64_t value,
                                     zkl_count_fn cb, void *arg);
ZKL_EXTERN int zkl_counter_add_async(zkl_counter_t *c, int64_t delta,
                                     int64_t timeout_ms, zkl_count_fn cb,
                                     void *arg);
ZKL_EXTERN int zkl_counter_wait_async(zkl_counter_t *c,
                                      const zkl_count_t *seen,
                                      int64_t timeout_ms, zkl_count_fn cb,
                                      void *arg);

/* Cancels what is underway (its completion comes with ZKL_ECANCELED),
 * waits for blocked calls to return and frees the object.  NULL-safe; may
 * be called from a completion.  The node stays (it is shared). */
ZKL_EXTERN void zkl_counter_destroy(zkl_counter_t *c);

#ifdef __cplusplus
}
#endif

#endif /* ZKL_COUNTER_H */
