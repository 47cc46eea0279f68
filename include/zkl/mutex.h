/* zkl/mutex.h - an exclusive lock shared by every process that uses the same
 * path on the same ZooKeeper ensemble.
 *
 * Protocol: each contender creates an EPHEMERAL_SEQUENTIAL node
 * `<path>/_c_<uuid>-lock-<seq>` (Curator's shape), the lowest sequence holds
 * the lock and every waiter watches only its immediate predecessor.  zkl
 * interoperates on one path with Curator's InterProcessMutex, go-zookeeper's
 * Lock and kazoo's Lock (kazoo must be given extra_lock_patterns=["-lock-"]).
 * zkl makes a missing lock path as a CONTAINER node, which the server
 * deletes once it is empty; a kazoo Lock object makes its path only once,
 * and its next acquire after such a deletion fails with NoNodeError.  Where
 * kazoo shares a path, make the path a persistent node beforehand.
 *
 * Threads: a zkl_mutex_t is reentrant per thread, like a recursive
 * pthread mutex: the holding thread may lock again and must unlock as often.
 * Other threads of the process using the same object wait locally (no
 * ZooKeeper traffic) until it is fully released, then queue on ZooKeeper
 * like any contender.  All functions are thread-safe except
 * zkl_mutex_destroy(), which must be the last call.
 *
 * Asynchronous calls (zkl_mutex_lock_async(), zkl_mutex_unlock_async())
 * are for event loops: they return at once and report through the
 * session's completion queue (zkl_session_fd(), zkl_session_dispatch()).
 * What they acquire is held by the OBJECT, not by a thread: one async
 * call or hold per object at a time, no recursion, released with
 * zkl_mutex_unlock_async() (or by destroy).  token(), holding() and
 * node() answer for it from any thread; while it lasts, blocking calls
 * of every thread treat the object as another thread's (lock waits
 * locally, trylock says ZKL_EBUSY, unlock says ZKL_EPERM).  A pending
 * acquisition holds no thread: one loop may wait for thousands.
 *
 * Deadlines: every request a timed call makes waits for its answer only
 * until the call's deadline, so it returns on time even when the server
 * stops answering unnoticed; giving up a queued node adds at most 0.5 s
 * (the delete is waited for that long, then left to the session's
 * janitor).  No node is left behind either way.
 */
#ifndef ZKL_MUTEX_H
#define ZKL_MUTEX_H

#include <stddef.h>
#include <stdint.h>
#include "zkl/session.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zkl_mutex zkl_mutex_t;

/* Options for zkl_mutex_create().  Start from zkl_mutex_opts_init(). */
typedef struct zkl_mutex_opts {
  const void *data;   /* contender node data; NULL (default) = "host:pid" */
  size_t data_len;    /* bytes of data, at most 1024                       */
} zkl_mutex_opts_t;

/* Fills *opts with the defaults.  Thread-safe. */
ZKL_EXTERN void zkl_mutex_opts_init(zkl_mutex_opts_t *opts);

/* Creates a mutex object for the lock at `path` (absolute, no trailing or
 * double slash, no control characters, at most 900 bytes, valid UTF-8, not
 * under /zookeeper).  No ZooKeeper call is made; the path's missing parents
 * are created on first lock, as CONTAINER nodes.
 *   0           *out is ready; free it with zkl_mutex_destroy().
 *   ZKL_EINVAL  out, s or path is NULL, the path is invalid, or
 *               opts->data_len is too long (zkl_last_error() says which).
 *   ZKL_ENOMEM / ZKL_ESYSTEM  allocation or mutex/condition init failed.
 * On failure *out is NULL.  Ownership: path and data are copied.  The
 * session must outlive the mutex object. */
ZKL_EXTERN int zkl_mutex_create(zkl_mutex_t **out, zkl_session_t *s,
                                const char *path,
                                const zkl_mutex_opts_t *opts);

/* Blocks until the calling thread holds the lock (or returns at once if it
 * already holds it: the recursion count goes up).  While the connection is
 * down it waits for the same session to come back.  It returns 0 only if,
 * at the moment it returns, the hold is valid by zkl_mutex_holding()'s
 * rule: our node was made on the current session and the server was heard
 * from within the session timeout.  Nothing learned before a pause is
 * trusted for that: a call paused while queued (SIGSTOP, a stall) whose
 * session expired meanwhile never returns 0 on the lost session; it queues
 * again on the new one (a new, larger token) or fails with ZKL_ELOST.
 *   0               held.
 *   ZKL_ECANCELED   zkl_mutex_cancel() was called while waiting.
 *   ZKL_ELOST       the session expired or was closed and no new one comes
 *                   (reestablish off), or a recursive call whose earlier
 *                   hold was lost.
 *   ZKL_ESUSPENDED  a recursive call while the connection is down: the
 *                   earlier hold is in doubt; the count is unchanged.
 *   ZKL_EAGAIN      the recursion count would overflow.
 *   ZKL_EINVAL      m is NULL.
 *   ZKL_ENOMEM      allocation failed.
 *   ZKL_EPROTO      our node kept vanishing (someone deletes contender
 *                   nodes under the lock path).
 *   other <0        ZooKeeper's own code, e.g. ZNOAUTH when the path's ACL
 *                   refuses us; zkl_last_error() names the path.
 * On every failure the caller does not hold the lock (a failed recursive
 * call leaves the earlier hold as it was) and no node of this call is left
 * on the server. */
ZKL_EXTERN int zkl_mutex_lock(zkl_mutex_t *m);

/* Takes the lock only if it is free now.  When another contender holds it
 * the cost is one listing and no write: nothing is created.  When it looks
 * free, zkl creates its node and checks again; if it lost that race its node
 * is deleted before returning.
 *   0               held (valid by zkl_mutex_holding()'s rule, as for
 *                   zkl_mutex_lock()).
 *   ZKL_EBUSY       held by another contender (or, locally, another thread
 *                   of this process is using the object).
 *   ZKL_ESUSPENDED  the connection is down: nothing was tried, or the
 *                   connection went down as the lock was granted (the node
 *                   is deleted once it is back); a recursive call on a hold
 *                   in doubt.
 *   others          as for zkl_mutex_lock(). */
ZKL_EXTERN int zkl_mutex_trylock(zkl_mutex_t *m);

/* As zkl_mutex_lock(), giving up after timeout_ms milliseconds (0 behaves as
 * zkl_mutex_trylock(); negative waits forever).  The deadline holds also
 * across a pause: a grant that comes only after it is refused.
 *   ZKL_ETIMEDOUT   not obtained in time (also when the connection was down
 *                   all along, or the deadline passed while the process was
 *                   paused, even if its turn came meanwhile).  The node is deleted before the call
 *                   returns, or, if the connection is down, by the
 *                   session's own thread as soon as it is back.
 *   others          as for zkl_mutex_lock(). */
ZKL_EXTERN int zkl_mutex_timedlock(zkl_mutex_t *m, int64_t timeout_ms);

/* Releases one level of the calling thread's hold; the last level deletes
 * the node and hands the lock to the next waiter.  A connection loss during
 * the delete is retried until the delete succeeds or the session is gone.
 *   0           released (or one recursion level dropped).
 *   ZKL_EPERM   the calling thread does not hold the lock.
 *   ZKL_ELOST   the session was lost while held, or our node had been
 *               deleted by someone else: the lock was already gone before
 *               this call (the hold is cleared all the same).
 *   ZKL_ESUSPENDED  the connection stayed down for a session timeout: the
 *               caller no longer holds, and the session's own thread
 *               deletes the node as soon as the connection is back (if the
 *               session expires instead, the server deletes it).
 *   ZKL_EINVAL  m is NULL.
 *   other <0    ZooKeeper refused the delete (e.g. ZNOAUTH); the server
 *               still removes the node when the session ends.
 * After a failure other than EPERM/EINVAL, the object no longer holds. */
ZKL_EXTERN int zkl_mutex_unlock(zkl_mutex_t *m);

/* Starts acquiring the lock for the object, as zkl_mutex_timedlock(m,
 * timeout_ms) would (0: a try, negative: no deadline), and returns at
 * once.  cb(m, rc, token, arg) runs exactly once, later, from
 * zkl_session_dispatch() on the session's completion queue, with:
 *   0               held by the object; token is its fencing token.  The
 *                   grant is checked again as the completion is
 *                   dispatched: a hold whose connection went down or whose
 *                   session was lost since comes as ZKL_ESUSPENDED or
 *                   ZKL_ELOST instead, given up (its node deleted as soon
 *                   as the connection is back).
 *   ZKL_ECANCELED   zkl_mutex_cancel(), or zkl_mutex_destroy() (then m
 *                   must not be used in the callback: it is freed).
 *   ZKL_ETIMEDOUT, ZKL_EBUSY (a try), ZKL_ELOST, ZKL_ESUSPENDED, ZKL_EPROTO,
 *   ZKL_ENOMEM, ZooKeeper's codes: as zkl_mutex_timedlock().
 * On every failure the object holds nothing and no node of the call is
 * left.  The call itself returns:
 *   0           accepted: the completion will come.
 *   ZKL_EBUSY   the object already holds or is acquiring (an async call
 *               whose completion has not been dispatched yet), or a
 *               thread holds or is acquiring through it.
 *   ZKL_ECANCELED  destroy has begun.
 *   ZKL_EINVAL  m or cb is NULL.  ZKL_ENOMEM.
 * and then cb is never called.  An async call lasts until its completion
 * is dispatched: until then the object takes no other async call, and a
 * hold it granted can be released or watched only once that completion
 * has come.  Thread-safe: from any thread, including from a completion. */
ZKL_EXTERN int zkl_mutex_lock_async(zkl_mutex_t *m, int64_t timeout_ms,
                                    zkl_done_fn cb, void *arg);

/* Releases the object's hold (from zkl_mutex_lock_async()) and returns at
 * once; cb(m, rc, 0, arg) runs once, later, from zkl_session_dispatch(),
 * with the codes of zkl_mutex_unlock() (0, ZKL_ELOST, ZKL_ESUSPENDED,
 * ZooKeeper's).  The object holds nothing from this call on; it may
 * acquire again once the completion has come (ZKL_EBUSY before).
 *   0           accepted.
 *   ZKL_EPERM   the object holds nothing through an async call (or a
 *               thread's blocking hold: release that with
 *               zkl_mutex_unlock()), its release is under way, or the
 *               completion of its acquisition has not been dispatched.
 *   ZKL_ECANCELED, ZKL_EINVAL, ZKL_ENOMEM: as zkl_mutex_lock_async(). */
ZKL_EXTERN int zkl_mutex_unlock_async(zkl_mutex_t *m, zkl_done_fn cb,
                                      void *arg);

/* Asks to be told when the object's async hold (from
 * zkl_mutex_lock_async()) is gone without the object letting go of it:
 * its node deleted by someone else (an operator, a cleanup script), or its
 * session lost.  cb(m, rc, token, arg) runs exactly once, later, from
 * zkl_session_dispatch(), with the hold's token and:
 *   ZKL_ELOST       the hold is gone: stop acting on the lock now.  The
 *                   object still counts as holding (zkl_mutex_holding()
 *                   says ZKL_ELOST) until zkl_mutex_unlock_async(), which
 *                   then completes with ZKL_ELOST.
 *   0               the object let go first: zkl_mutex_unlock_async() was
 *                   accepted (this completion comes before the unlock's),
 *                   or a grant was given up as it was dispatched.
 *   ZKL_ECANCELED   zkl_mutex_destroy() (m must not be used: it is freed).
 *   other <0        ZooKeeper refused to watch the node (e.g. ZNOAUTH).
 * While the connection is down the hold is in doubt, not gone: that is the
 * session's ZKL_SESSION_SUSPENDED (zkl_session_opts_t.on_state, through
 * dispatch with on_state_in_dispatch).  The watch goes on meanwhile, and
 * ends with ZKL_ELOST if the session is then lost or the node is found
 * gone once the connection is back.  It costs one data watch on the node
 * and no thread.  The call returns:
 *   0           accepted: the completion will come.
 *   ZKL_EPERM   the object holds nothing through an async call (a
 *               thread's blocking hold is not watched), or the completion
 *               of its acquisition has not been dispatched.
 *   ZKL_EBUSY   a watch of the hold is already pending.
 *   ZKL_ECANCELED  destroy has begun.
 *   ZKL_EINVAL  m or cb is NULL.  ZKL_ENOMEM.
 * and then cb is never called.  Thread-safe: from any thread, including
 * from a completion. */
ZKL_EXTERN int zkl_mutex_watch_async(zkl_mutex_t *m, zkl_done_fn cb,
                                     void *arg);

/* Makes every lock/timedlock call blocked on m right now, and its async
 * acquisition, return ZKL_ECANCELED (calls made later are not affected).  0, or ZKL_EINVAL for
 * NULL.  Safe from any thread (e.g. a sigwait() thread), but not from a
 * signal handler: it takes mutexes. */
ZKL_EXTERN int zkl_mutex_cancel(zkl_mutex_t *m);

/* The fencing token of the current hold (the calling thread's, or the
 * object's async hold): the ZooKeeper transaction id that
 * created the holder's node (czxid).  It strictly increases from one holder
 * of the lock to the next, across processes and machines, so a resource can
 * refuse writes that carry an older token.
 *   0           *token set.
 *   ZKL_EPERM   the calling thread does not hold the lock.
 *   ZKL_EINVAL  m or token is NULL. */
ZKL_EXTERN int zkl_mutex_token(zkl_mutex_t *m, uint64_t *token);

/* Whether the calling thread (or, through an async call, the object)
 * holds the lock: 1 yes, 0 no,
 * ZKL_ESUSPENDED when it holds it but the connection is down (the hold is in
 * doubt), ZKL_ELOST when it held it and the session is gone, ZKL_EINVAL for
 * NULL.  Makes no ZooKeeper call. */
ZKL_EXTERN int zkl_mutex_holding(zkl_mutex_t *m);

/* Copies the full path of the node through which this object holds the
 * lock into buf (NUL-terminated).  0; ZKL_EPERM if the object does not hold
 * the lock; ZKL_EINVAL for NULL or a buffer too small (1024 bytes are
 * always enough for valid paths). */
ZKL_EXTERN int zkl_mutex_node(zkl_mutex_t *m, char *buf, size_t len);

/* Destroys m: lock calls blocked in it on other threads, and its async
 * acquisition, return ZKL_ECANCELED first (destroy waits for them to
 * leave), then the lock is released if held (whatever the recursion count,
 * or the object's async hold) and memory is freed.  Completions of m not
 * yet dispatched come with ZKL_ECANCELED.  Allowed from a completion.
 * NULL-safe.  Only lock calls waiting in other threads may overlap destroy
 * (they return ZKL_ECANCELED); every other call on m must have returned
 * before destroy begins, none may start after, and a thread holding the
 * lock must not touch m afterwards. */
ZKL_EXTERN void zkl_mutex_destroy(zkl_mutex_t *m);

#ifdef __cplusplus
}
#endif
#endif /* ZKL_MUTEX_H */
