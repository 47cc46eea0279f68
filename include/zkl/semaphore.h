/* zkl/semaphore.h - a counting semaphore: at most MAX leases held at once,
 * across every process that uses the same path.
 *
 * Wire format: Curator's InterProcessSemaphoreV2, with which zkl's
 * semaphores share a path.
 *   <path>/locks   the gate: a mutex queue (`_c_<uuid>-lock-<seq>`), in
 *                  which acquirers line up in arrival order; only its
 *                  holder looks at the leases (no herd).
 *   <path>/leases  one EPHEMERAL_SEQUENTIAL node per lease,
 *                  `_c_<uuid>-lease-<seq>`, its data the holder's (by
 *                  default "host:pid").  Every child counts as a lease.
 * The maximum is given locally (zkl_sem_opts_t.max) or read from a shared
 * count (count_path: 4 bytes big-endian, as Curator's SharedCount and
 * zkl_counter(3)'s INT32), read again and watched while an acquirer
 * waits, so that a raised maximum lets it in.  When both are given they
 * must agree.
 *
 * kazoo's Semaphore (opts.format = ZKL_SEM_KAZOO) lays the same protocol
 * out differently, and zkl shares its paths too:
 *   <path>-__lock__  the gate, a sibling of <path>: a kazoo Lock queue;
 *                  zkl's gate nodes are `_c_<uuid>-__lock__<seq>`, which
 *                  kazoo's Lock counts as its own kind.
 *   <path>         the leases are its children (every child counts as a
 *                  lease); zkl's are `_c_<uuid>-lease-<seq>` as above,
 *                  kazoo's `<32 hex>` (EPHEMERAL, not sequential).
 *   <path>'s data  the maximum in ASCII decimal ("5"), written by whoever
 *                  makes <path> (a PERSISTENT node, as kazoo's, not a
 *                  container: a kazoo client that made it once never
 *                  makes it again).  A local max that disagrees with it
 *                  is ZKL_EINVAL, as kazoo raises ValueError; max 0 takes
 *                  the stored one; data that is not a number is ignored
 *                  (as kazoo does) and the local max is used.  count_path
 *                  has no place in this format.
 *
 * What zkl adds to Curator's protocol:
 *  - qty leases are ATOMIC: while holding the gate, the acquirer waits
 *    until qty fit (leases + qty <= MAX) and then makes all qty lease nodes
 *    in one multi that first writes its gate node (failing if the node
 *    is gone: a check that also gives the token).
 *    Curator takes qty leases one gate turn at a time, so two clients
 *    wanting 3 of 4 can each hold 2 and wait for ever.  A zkl acquirer
 *    holds no lease while it waits (it holds the gate): zkl acquirers
 *    never deadlock one another.  A Curator client that holds part of
 *    its qty (> 1) and waits for the gate can still block a zkl acquirer
 *    in the gate, and be blocked by it, until one's deadline: that is
 *    Curator's one-at-a-time protocol, not avoidable from zkl's side.
 *  - a lease multi whose answer is lost is found again by its prefix (the
 *    leases it made are kept, or deleted if the call gave up), never
 *    applied twice.
 *  - each lease carries a FENCING TOKEN: the czxid of its node.  The
 *    leases of one acquisition share it; later acquisitions get larger
 *    ones.
 * A lease lives as long as the session that made it: once the session is
 * lost its node is gone and it blocks nobody; zkl_sem_lease_health() says
 * whether a lease is still good (0), in doubt (ZKL_ESUSPENDED: the
 * connection is down) or gone (ZKL_ELOST).
 *
 * Threads: one call at a time per object; a blocking call from a second
 * thread waits locally for the first (until its own deadline); an async
 * call while another is underway is refused (ZKL_EBUSY).  The leases an
 * object holds are the object's, released through it from any thread.
 * All functions are thread-safe except zkl_sem_destroy(), which must be
 * the last call.  Async forms complete through zkl_session_dispatch()
 * (zkl_async(3)), exactly once per accepted call, never from the
 * submitting call.
 *
 * Deadlines: timeout_ms 0 = do not wait (try), negative = no deadline.
 */
#ifndef ZKL_SEMAPHORE_H
#define ZKL_SEMAPHORE_H

#include <stddef.h>
#include <stdint.h>
#include "zkl/session.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zkl_sem zkl_sem_t;

/* The most leases one call takes or one object holds. */
#define ZKL_SEM_QTY_MAX 1000

/* Options for zkl_sem_create().  Start from zkl_sem_opts_init(), then set
 * max or count_path (or both). */
/* The wire formats (zkl_sem_opts_t.format). */
#define ZKL_SEM_CURATOR 0 /* Curator's InterProcessSemaphoreV2 (default)  */
#define ZKL_SEM_KAZOO 1   /* kazoo's Semaphore                            */

typedef struct zkl_sem_opts {
  int max;                /* the maximum, >= 1; 0: from count_path (or,
                             ZKL_SEM_KAZOO, from <path>'s data)           */
  const char *count_path; /* a shared count (4-byte big-endian) holding
                             the maximum, or NULL (ZKL_SEM_CURATOR only) */
  const void *data;       /* a lease node's data; NULL: "host:pid"      */
  size_t data_len;        /* bytes of data, at most 1024                */
  int format;             /* ZKL_SEM_CURATOR or ZKL_SEM_KAZOO           */
} zkl_sem_opts_t;

/* Fills *opts with the defaults (Curator's format, no max, no count_path:
 * one of them must be set before zkl_sem_create(); with ZKL_SEM_KAZOO,
 * max 0 means the one stored at <path>).  Thread-safe. */
ZKL_EXTERN void zkl_sem_opts_init(zkl_sem_opts_t *opts);

/* One lease held. */
typedef struct zkl_lease {
  uint64_t token; /* the czxid of its node: the fencing token          */
  char name[64];  /* its node's name under <path>/leases (ZKL_SEM_KAZOO:
                     under <path>)                                      */
} zkl_lease_t;

/* Creates a semaphore object for the semaphore at `path` (absolute, not
 * "/").  No ZooKeeper call is made.
 *   0, or ZKL_EINVAL (out, s, path or opts NULL, the path or count_path
 *   invalid, max < 0, or max 0 with no count_path in Curator's format; an
 *   unknown format, or a count_path with ZKL_SEM_KAZOO; data over 1024
 *   bytes),
 *   ZKL_ENOMEM / ZKL_ESYSTEM; *out NULL on failure. */
ZKL_EXTERN int zkl_sem_create(zkl_sem_t **out, zkl_session_t *s,
                              const char *path, const zkl_sem_opts_t *opts);

/* Takes qty leases at once, waiting in line (arrival order) until they
 * fit; leases[0..qty-1] (the caller's array) are filled.
 *   0           all qty held by the object.
 *   ZKL_EBUSY   timeout 0 and they do not fit now (or the gate is busy).
 *   ZKL_ETIMEDOUT  not before the deadline (or no connection until it).
 *   ZKL_ECANCELED  zkl_sem_cancel().
 *   ZKL_EINVAL  m or leases NULL, qty 0, qty over MAX (as known now) or
 *               ZKL_SEM_QTY_MAX, the object would hold more than
 *               ZKL_SEM_QTY_MAX, or the shared count is not a 4-byte
 *               maximum of 1 or more, disagrees with the local max, or
 *               is missing with no local max (ZKL_SEM_KAZOO: the
 *               maximum in <path>'s data is below 1 or disagrees with
 *               the local max, or there is none and no local max).
 *   ZKL_ESUSPENDED  timeout 0 and no connection, or the connection was
 *               lost as the leases were made (they are deleted, by the
 *               janitor once it is back).
 *   ZKL_ELOST   the session was lost and no new one comes.
 *   ZKL_ENOMEM, or ZooKeeper's code (ZNOAUTH...).
 * On any failure no lease of this call is held and none is left behind
 * (a lease node whose create's answer was lost is deleted, now or by the
 * janitor once the connection is back). */
ZKL_EXTERN int zkl_sem_acquire(zkl_sem_t *m, unsigned qty, int64_t timeout_ms,
                               zkl_lease_t *leases);

/* Gives back n leases the object holds (their deletes sent together,
 * their answers waited for up to a session timeout).  Not a call of
 * the object's: it neither waits for nor holds up an acquire underway in
 * another thread.
 *   0           given back.
 *   ZKL_ELOST   their session was lost: they were gone already (they are
 *               forgotten).
 *   ZKL_ESUSPENDED  the connection is down: they are forgotten and their
 *               nodes deleted by the janitor once it is back (they still
 *               count against MAX until then, or until the session ends).
 *   ZKL_EPERM   a lease given is not held by the object: nothing done.
 *   ZKL_EINVAL  m or leases NULL, n 0, or a lease given twice: nothing
 *               done.
 *   ZKL_ENOMEM  nothing done, or (leases out of the object already) their
 *               nodes deleted by the janitor. */
ZKL_EXTERN int zkl_sem_release(zkl_sem_t *m, const zkl_lease_t *leases,
                               size_t n);

/* Gives back every lease the object holds; the codes of zkl_sem_release()
 * (0 also when it held none). */
ZKL_EXTERN int zkl_sem_release_all(zkl_sem_t *m);

/* zkl_sem_release() without waiting: cb(m, rc, 0, arg) once the answer
 * is in, with its codes; leases NULL and n 0 give back every lease held.
 * The leases are the object's no more as soon as this returns 0.  A
 * release is not a call of the object's: it does not wait for, nor
 * hold up, an acquire underway.  Returns 0 (cb will run) or, cb never
 * run, ZKL_EINVAL, ZKL_EPERM, ZKL_ENOMEM. */
ZKL_EXTERN int zkl_sem_release_async(zkl_sem_t *m, const zkl_lease_t *leases,
                                     size_t n, zkl_done_fn cb, void *arg);

/* Whether a lease the object holds is still good: 0 yes; ZKL_ESUSPENDED
 * in doubt (connection down); ZKL_ELOST gone (its session); ZKL_EPERM
 * not held by the object; ZKL_EINVAL.  No request: the session's state. */
ZKL_EXTERN int zkl_sem_lease_health(zkl_sem_t *m, const zkl_lease_t *lease);

/* How many leases the object holds (0 for NULL). */
ZKL_EXTERN size_t zkl_sem_held(zkl_sem_t *m);

/* The semaphore now: the leases held by anyone (children of
 * <path>/leases, or of <path> with ZKL_SEM_KAZOO) and the maximum (the
 * shared count's, else the local one; ZKL_SEM_KAZOO: the one in <path>'s
 * data, else the local one; max may be NULL).  0, ZKL_EINVAL (also for a shared count as
 * zkl_sem_acquire() refuses it), ZKL_ESUSPENDED (no connection within a
 * session timeout), ZKL_ETIMEDOUT (another thread's acquire lasted that
 * long), ZKL_ECANCELED, ZKL_ELOST or ZooKeeper's code. */
ZKL_EXTERN int zkl_sem_count(zkl_sem_t *m, size_t *leased, int *max);

/* A lease held by anyone, as zkl_sem_holders() lists it. */
typedef struct zkl_sem_holder {
  char name[64];     /* the lease node's name under <path>/leases      */
  char *data;        /* its data: the holder's identity ("host:pid" for
                        zkl's default, Curator's node data); NUL-ended */
  size_t len;        /* bytes of data                                  */
  uint64_t token;    /* the node's czxid (one per acquisition)         */
  int64_t session;   /* the session that holds it (ephemeral owner)    */
} zkl_sem_holder_t;

/* The leases held now, by every process (zkl's, Curator's), in the order
 * they were taken (czxid, then sequence): one listing of <path>/leases
 * and one read per lease, all pipelined.  A lease given back between the
 * listing and its read is left out.  *out (free it with
 * zkl_sem_holders_free()) and *n are set on 0 (NULL and 0 when none),
 * else NULL and 0.  Codes: those of zkl_sem_count(), and ZKL_ENOMEM. */
ZKL_EXTERN int zkl_sem_holders(zkl_sem_t *m, zkl_sem_holder_t **out,
                               size_t *n);
ZKL_EXTERN void zkl_sem_holders_free(zkl_sem_holder_t *v, size_t n);

/* Async acquire: cb(m, rc, leases, n, arg) with the codes above; leases
 * (n == qty on success, else NULL and 0) live only during the callback
 * (the object holds them).  A grant found in doubt or lost when it is
 * dispatched is given back and reported as ZKL_ESUSPENDED / ZKL_ELOST,
 * and one that cannot be reported (ZKL_ENOMEM) is given back too.
 * Returns 0 (cb will run) or, cb never run: ZKL_EINVAL, ZKL_EBUSY,
 * ZKL_ECANCELED (destroy has begun), ZKL_ENOMEM. */
typedef void (*zkl_leases_fn)(zkl_sem_t *m, int rc, const zkl_lease_t *leases,
                              size_t n, void *arg);
ZKL_EXTERN int zkl_sem_acquire_async(zkl_sem_t *m, unsigned qty,
                                     int64_t timeout_ms, zkl_leases_fn cb,
                                     void *arg);

/* Wakes the object's blocked acquire (ZKL_ECANCELED).  0 or ZKL_EINVAL.
 * Thread-safe, also from a completion. */
ZKL_EXTERN int zkl_sem_cancel(zkl_sem_t *m);

/* Cancels what is underway, waits for blocked calls and for the answers
 * of async releases (their completions then report ZKL_ECANCELED), gives
 * back every lease the object holds (through the janitor, without
 * waiting) and frees the object.  NULL-safe; may be called from a
 * completion. */
ZKL_EXTERN void zkl_sem_destroy(zkl_sem_t *m);

#ifdef __cplusplus
}
#endif

#endif /* ZKL_SEMAPHORE_H */
