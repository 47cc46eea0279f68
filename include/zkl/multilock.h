/* zkl/multilock.h - several exclusive locks held together, all or none.
 *
 * Protocol: a multi-lock on paths P1..Pn is n mutex contenders (zkl/mutex.h:
 * `<Pi>/_c_<uuid>-lock-<seq>`, Curator's shape), whose n nodes are made in
 * ONE ZooKeeper transaction (a multi); each then waits in its own queue
 * as a plain mutex waiter does (watching only its predecessor), and the
 * multi-lock is held once every one of them is.  It shares each path with
 * zkl_mutex_t, Curator's InterProcessMutex and kazoo's Lock
 * (extra_lock_patterns=["-lock-"]), whose nodes it queues behind and which
 * queue behind its own.
 *
 * Why no deadlock, whatever order callers list their paths in: every node
 * a contender waits for, in any of its queues, was made before its own;
 * a multi-lock's nodes are all made at one instant (one transaction), and
 * a client that holds one lock at a time has one node.  So each wait
 * points to an older transaction, and waits cannot form a cycle: between
 * multi-locks, and between a multi-lock and such clients (zkl_mutex_t,
 * Curator's InterProcessMutex, kazoo's Lock, each held alone).  The
 * argument needs every client's nodes to be made at one instant.  A
 * client that holds one lock while it queues for another (Curator's
 * InterProcessMultiLock, or code taking two mutexes one after the other)
 * can deadlock with a multi-lock whose transaction falls between its two
 * nodes, and a lock order kept by every client does not prevent it: a
 * multi-lock takes its paths in every order at once.  Give such clients a
 * timeout, or make them multi-locks too.
 *
 * All or none: the call returns 0 holding every path, or fails holding
 * none, with none of its nodes left.  If one node is lost while waiting
 * (deleted by someone else, or its session expired and a new one came),
 * every node is given up and the multi-lock enqueues again, in one new
 * transaction.
 *
 * Fencing: one token per path (zkl_multilock_token()), the czxid of this
 * object's node there.  It increases from holder to holder on that path,
 * whether the holders are multi-locks or plain mutexes.  The n nodes of
 * one acquisition come from one transaction, so they share one czxid; the
 * completion of zkl_multilock_lock_async() reports it.
 *
 * Threads: the hold belongs to the OBJECT, not to a thread: no recursion,
 * and any thread may unlock.  One call at a time per object: a blocking
 * call from a second thread waits for the first one (until its own
 * deadline); an async call while another is underway is refused
 * (ZKL_EBUSY).  All functions are thread-safe except
 * zkl_multilock_destroy(), which must be the last call.
 *
 * Deadlines, the rule for a grant (valid only on a live session: see
 * zkl_mutex_lock()), node clean-up after a lost connection: as for the
 * mutex.
 */
#ifndef ZKL_MULTILOCK_H
#define ZKL_MULTILOCK_H

#include <stddef.h>
#include <stdint.h>
#include "zkl/session.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zkl_multilock zkl_multilock_t;

/* The most paths a multi-lock takes. */
#define ZKL_MULTILOCK_MAX 64

/* Options for zkl_multilock_create().  Start from
 * zkl_multilock_opts_init(). */
typedef struct zkl_multilock_opts {
  const void *data;   /* every node's data; NULL (default) = "host:pid" */
  size_t data_len;    /* bytes of data, at most 1024                   */
} zkl_multilock_opts_t;

/* Fills *opts with the defaults.  Thread-safe. */
ZKL_EXTERN void zkl_multilock_opts_init(zkl_multilock_opts_t *opts);

/* Creates a multi-lock object for the locks at paths[0..n-1] (each valid
 * as for zkl_mutex_create(); in any order; none twice).  No ZooKeeper
 * call is made; missing parents are made on the first lock, as CONTAINER
 * nodes.
 *   0           *out is ready; free it with zkl_multilock_destroy().
 *   ZKL_EINVAL  out, s or paths is NULL, n is 0 or above
 *               ZKL_MULTILOCK_MAX, a path is invalid or given twice, or
 *               opts->data_len is too long (zkl_last_error() says which).
 *   ZKL_ENOMEM / ZKL_ESYSTEM.
 * On failure *out is NULL.  The paths and data are copied.  The session
 * must outlive the object. */
ZKL_EXTERN int zkl_multilock_create(zkl_multilock_t **out, zkl_session_t *s,
                                    const char *const *paths, size_t n,
                                    const zkl_multilock_opts_t *opts);

/* Blocks until the object holds every one of its locks.
 *   0               held, all of them, and valid by the mutex's rule as
 *                   the call returns (every node made on the current
 *                   session, the server heard from within the session
 *                   timeout).
 *   ZKL_EBUSY       the object holds its locks already.
 *   ZKL_ECANCELED   zkl_multilock_cancel() (or destroy) while waiting.
 *   ZKL_ELOST       the session was lost and no new one comes.
 *   ZKL_ESUSPENDED  the connection dropped each time the locks were all
 *                   granted (8 times in a row): nothing is held.
 *   ZKL_EPROTO      its nodes kept vanishing (someone deletes contender
 *                   nodes under the paths).
 *   ZKL_EINVAL      m is NULL.  ZKL_ENOMEM.
 *   other <0        ZooKeeper's own code (e.g. ZNOAUTH on one path);
 *                   zkl_last_error() names the path.
 * On every failure the object holds none of the locks and no node of the
 * call is left on the server (or, if the connection is down, the
 * session's janitor deletes them as soon as it is back). */
ZKL_EXTERN int zkl_multilock_lock(zkl_multilock_t *m);

/* Takes the locks only if every one is free now.  It looks first (a
 * listing of every path, all sent at once) and makes nothing when a path
 * is held or waited for; when all look free, its nodes are made (in one
 * transaction) and, if one of them has to wait after all, all are
 * deleted again.
 *   ZKL_EBUSY       one of the paths is held (or waited for) by another
 *                   contender, or the object holds its locks already.
 *   ZKL_ESUSPENDED  the connection is down.
 *   others          as for zkl_multilock_lock(). */
ZKL_EXTERN int zkl_multilock_trylock(zkl_multilock_t *m);

/* As zkl_multilock_lock(), giving up after timeout_ms milliseconds (0: as
 * zkl_multilock_trylock(); negative: no deadline).
 *   ZKL_ETIMEDOUT   not all held in time; every node is deleted (those
 *                   already granted too) before the call returns.
 *   others          as for zkl_multilock_lock(). */
ZKL_EXTERN int zkl_multilock_timedlock(zkl_multilock_t *m,
                                       int64_t timeout_ms);

/* Releases every lock the object holds: each node deleted (with the
 * release mark where its acquisition saw another child under the path, so
 * that path's next waiter is granted without a look).
 *   0           released.
 *   ZKL_EPERM   the object holds nothing.
 *   ZKL_ELOST   one node or more had already gone (session lost, or
 *               deleted by someone else): those locks were not held any
 *               more; the others are released all the same.
 *   ZKL_ESUSPENDED  the connection stayed down: the session's janitor
 *               deletes the nodes as soon as it is back.
 *   ZKL_EINVAL  m is NULL.
 *   other <0    ZooKeeper refused a delete.
 * After any of these but EPERM and EINVAL the object holds nothing. */
ZKL_EXTERN int zkl_multilock_unlock(zkl_multilock_t *m);

/* Starts zkl_multilock_timedlock(m, timeout_ms) and returns at once;
 * cb(m, rc, token, arg) runs exactly once, later, from
 * zkl_session_dispatch(), with the codes of zkl_multilock_timedlock() and,
 * on 0, the token all the nodes share.  ZKL_ECANCELED also when the
 * object is destroyed (m must not be used then: it is freed).  The
 * call returns 0 (accepted), ZKL_EBUSY (another call of the object is
 * underway), ZKL_ECANCELED (destroy has begun), ZKL_EINVAL (m or cb
 * NULL) or ZKL_ENOMEM, and then cb is never called. */
ZKL_EXTERN int zkl_multilock_lock_async(zkl_multilock_t *m,
                                        int64_t timeout_ms, zkl_done_fn cb,
                                        void *arg);

/* Starts zkl_multilock_unlock(m) and returns at once; cb(m, rc, 0, arg)
 * runs once, later, from zkl_session_dispatch(), with its codes.  The call
 * returns 0, ZKL_EPERM (the object holds nothing), ZKL_EBUSY (another
 * call is underway), ZKL_ECANCELED, ZKL_EINVAL or ZKL_ENOMEM, and then cb
 * is never called. */
ZKL_EXTERN int zkl_multilock_unlock_async(zkl_multilock_t *m,
                                          zkl_done_fn cb, void *arg);

/* Makes the acquisition underway (blocking or async) end with
 * ZKL_ECANCELED; later calls are not affected.  0, or ZKL_EINVAL. */
ZKL_EXTERN int zkl_multilock_cancel(zkl_multilock_t *m);

/* Whether the object holds its locks: 1 yes, 0 no, ZKL_ESUSPENDED held
 * but the connection is down (in doubt), ZKL_ELOST held and the session
 * is gone, ZKL_EINVAL.  No request. */
ZKL_EXTERN int zkl_multilock_holding(zkl_multilock_t *m);

/* The number of paths (as given to create), or 0 for NULL. */
ZKL_EXTERN size_t zkl_multilock_count(const zkl_multilock_t *m);

/* The fencing token of the hold on paths[i] (i as given to create): the
 * czxid of the object's node there.  0; ZKL_EPERM (nothing held);
 * ZKL_EINVAL (NULL, or i out of range). */
ZKL_EXTERN int zkl_multilock_token(zkl_multilock_t *m, size_t i,
                                   uint64_t *token);

/* Copies the full path of the object's node under paths[i] into buf.  0;
 * ZKL_EPERM (nothing held); ZKL_EINVAL (NULL, i out of range, or buf too
 * small: 1024 bytes are always enough). */
ZKL_EXTERN int zkl_multilock_node(zkl_multilock_t *m, size_t i, char *buf,
                                  size_t len);

/* Destroys m: an acquisition underway ends with ZKL_ECANCELED (destroy
 * waits for it), the locks are released if held, and memory is freed.
 * Completions of m not yet dispatched come with ZKL_ECANCELED.  Allowed
 * from a completion.  NULL-safe. */
ZKL_EXTERN void zkl_multilock_destroy(zkl_multilock_t *m);

#ifdef __cplusplus
}
#endif
#endif /* ZKL_MULTILOCK_H */
