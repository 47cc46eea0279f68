/* zkl/rwlock.h - a shared/exclusive lock across processes: many readers at
 * once, or one writer.
 *
 * Protocol: Curator's InterProcessReadWriteLock wire format, in one
 * directory: readers create `_c_<uuid>-__READ__<seq>`, writers
 * `_c_<uuid>-__WRIT__<seq>` (EPHEMERAL_SEQUENTIAL).  Contenders are served
 * in arrival order: a reader waits only for the writers ahead of it and
 * watches the nearest one; a writer waits for everyone ahead and watches
 * its immediate predecessor.  A reader arriving after a waiting writer
 * waits for it, so writers never starve.  kazoo's ReadLock/WriteLock nodes
 * (`__rlock__`/`__lock__`) on the same path are respected as readers and
 * writers.
 *
 * Asynchronous calls: as zkl_mutex_t's (the object holds what they
 * acquire; token, holding and node answer for it from any thread).
 *
 * Threads: as zkl_mutex_t, an object is reentrant per thread (read and
 * write holds are counted separately) and other threads of the process
 * that use the same object wait locally.  All functions are thread-safe
 * except zkl_rwlock_destroy().
 *
 * Downgrade: the write holder may take the read lock and then release the
 * write lock; no other writer can come in between.  Until that read hold
 * ends, the write node stays on the server (other readers keep waiting):
 * a downgrade never lets a queued writer overlap the downgraded reader.
 * Upgrade (read holder asking for the write lock) is refused with
 * ZKL_EDEADLK: release the read lock first.
 */
#ifndef ZKL_RWLOCK_H
#define ZKL_RWLOCK_H

#include <stddef.h>
#include <stdint.h>
#include "zkl/session.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zkl_rwlock zkl_rwlock_t;

/* Options for zkl_rwlock_create().  Start from zkl_rwlock_opts_init(). */
typedef struct zkl_rwlock_opts {
  const void *data;   /* contender node data; NULL (default) = "host:pid" */
  size_t data_len;    /* bytes of data, at most 1024                       */
} zkl_rwlock_opts_t;

/* Fills *opts with the defaults.  Thread-safe. */
ZKL_EXTERN void zkl_rwlock_opts_init(zkl_rwlock_opts_t *opts);

/* Creates a read/write lock object for `path` (the same rules as
 * zkl_mutex_create()).  No ZooKeeper call is made.
 *   0           *out is ready; free it with zkl_rwlock_destroy().
 *   ZKL_EINVAL  out, s or path is NULL, the path is invalid, or the node
 *               data is too long.
 *   ZKL_ENOMEM / ZKL_ESYSTEM  allocation, or mutex/condition
 *               initialisation, failed.
 * On failure *out is NULL.  Ownership: path and data are copied. */
ZKL_EXTERN int zkl_rwlock_create(zkl_rwlock_t **out, zkl_session_t *s,
                                 const char *path,
                                 const zkl_rwlock_opts_t *opts);

/* Takes the read lock (shared), blocking; the timed form gives up after
 * timeout_ms (0: try, negative: forever), the try form at once.  As for
 * zkl_mutex_lock(), 0 only on a hold that is valid when the call returns
 * (zkl_rwlock_holding()'s rule: never on a session lost while the call
 * waited or was paused), and a timed call whose deadline passed fails with
 * ZKL_ETIMEDOUT even if its turn came meanwhile.
 *   0               held for reading (a repeated call counts up; the write
 *                   holder gets it at once: see downgrade above).
 *   ZKL_ESUSPENDED  also: a repeated call or a downgrade while the
 *                   connection is down (the hold is in doubt; nothing
 *                   changes).
 *   ZKL_EBUSY       try: a writer holds it or waits ahead, or another
 *                   thread of this process is using this object (threads
 *                   sharing one object do not share a read hold: give
 *                   each thread its own object to read concurrently).
 *   ZKL_ETIMEDOUT, ZKL_ECANCELED, ZKL_ELOST, ZKL_ESUSPENDED (try only),
 *   ZKL_EAGAIN, ZKL_EINVAL, ZKL_ENOMEM, ZooKeeper's codes: as for
 *                   zkl_mutex_lock(); no node of the call is left behind. */
ZKL_EXTERN int zkl_rwlock_rdlock(zkl_rwlock_t *l);
ZKL_EXTERN int zkl_rwlock_tryrdlock(zkl_rwlock_t *l);
ZKL_EXTERN int zkl_rwlock_timedrdlock(zkl_rwlock_t *l, int64_t timeout_ms);

/* Takes the write lock (exclusive); forms and codes as for the read lock,
 * plus:
 *   ZKL_EDEADLK     the calling thread holds the read lock (no upgrade). */
ZKL_EXTERN int zkl_rwlock_wrlock(zkl_rwlock_t *l);
ZKL_EXTERN int zkl_rwlock_trywrlock(zkl_rwlock_t *l);
ZKL_EXTERN int zkl_rwlock_timedwrlock(zkl_rwlock_t *l, int64_t timeout_ms);

/* Releases one level of the calling thread's write hold if it has one,
 * else one level of its read hold (so wrlock, rdlock, unlock leaves a
 * read hold: the downgrade).  Codes as zkl_mutex_unlock():
 *   0, ZKL_EPERM (holds nothing), ZKL_ELOST, ZKL_ESUSPENDED, ZKL_EINVAL. */
ZKL_EXTERN int zkl_rwlock_unlock(zkl_rwlock_t *l);

/* The asynchronous forms, for event loops: as zkl_mutex_lock_async() and
 * zkl_mutex_unlock_async() (the object holds what they acquire, one async
 * call or hold per object, reported through zkl_session_dispatch()), for
 * the read lock and the write lock.  The completion's token is that of the
 * read or write node, as zkl_rwlock_token() gives it. */
ZKL_EXTERN int zkl_rwlock_rdlock_async(zkl_rwlock_t *l, int64_t timeout_ms,
                                       zkl_done_fn cb, void *arg);
ZKL_EXTERN int zkl_rwlock_wrlock_async(zkl_rwlock_t *l, int64_t timeout_ms,
                                       zkl_done_fn cb, void *arg);
ZKL_EXTERN int zkl_rwlock_unlock_async(zkl_rwlock_t *l, zkl_done_fn cb,
                                       void *arg);
/* As zkl_mutex_watch_async(), for the object's async read or write hold:
 * cb once its node is gone (ZKL_ELOST), the object lets go of it (0) or is
 * destroyed (ZKL_ECANCELED); ZKL_EPERM without an async hold, ZKL_EBUSY
 * with a watch pending. */
ZKL_EXTERN int zkl_rwlock_watch_async(zkl_rwlock_t *l, zkl_done_fn cb,
                                      void *arg);

/* Makes the lock calls blocked on l right now (and its async acquisition)
 * return ZKL_ECANCELED.
 * 0 or ZKL_EINVAL.  Not from a signal handler. */
ZKL_EXTERN int zkl_rwlock_cancel(zkl_rwlock_t *l);

/* The fencing token of the calling thread's hold: the czxid of the node
 * that holds it (the write node while a write hold or a downgrade lasts).
 * A writer's token is larger than that of every hold before it.
 *   0, ZKL_EPERM (holds nothing), ZKL_EINVAL. */
ZKL_EXTERN int zkl_rwlock_token(zkl_rwlock_t *l, uint64_t *token);

/* What the calling thread holds: 0 nothing, ZKL_RWLOCK_READ,
 * ZKL_RWLOCK_WRITE or both (bits); ZKL_ESUSPENDED while the connection is
 * down, ZKL_ELOST once the session is gone; ZKL_EINVAL for NULL.  No
 * ZooKeeper call. */
#define ZKL_RWLOCK_READ 1
#define ZKL_RWLOCK_WRITE 2
ZKL_EXTERN int zkl_rwlock_holding(zkl_rwlock_t *l);

/* Copies the full path of the node that backs the calling thread's hold
 * (the write node while a write hold or a downgrade lasts, else the read
 * node) into buf, NUL-terminated: the node whose czxid zkl_rwlock_token()
 * gives.  0; ZKL_EPERM if the calling thread holds nothing; ZKL_EINVAL for
 * NULL or a buffer too small (1024 bytes are always enough for valid
 * paths).  No ZooKeeper call. */
ZKL_EXTERN int zkl_rwlock_node(zkl_rwlock_t *l, char *buf, size_t len);

/* Destroys l: lock calls blocked in it return ZKL_ECANCELED first (destroy
 * waits for them to leave), then whatever it holds is released.  NULL-safe.
 * Only lock calls waiting in other threads may overlap destroy; every other
 * call on l must have returned before, and none may start after. */
ZKL_EXTERN void zkl_rwlock_destroy(zkl_rwlock_t *l);

#ifdef __cplusplus
}
#endif
#endif /* ZKL_RWLOCK_H */
