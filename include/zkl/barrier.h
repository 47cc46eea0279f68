/* zkl/barrier.h - barriers: a barrier that holds every waiter until it is
 * removed, and a double barrier that lets N members start together and
 * finish together.
 *
 * THE BARRIER (zkl_barrier_t): the barrier is closed while its node
 * exists, open when it does not; the format of Curator's
 * DistributedBarrier and kazoo's Barrier, which wait on the same node.
 * zkl_barrier_set() makes the node (PERSISTENT, empty data, its missing
 * parents as CONTAINER nodes), zkl_barrier_remove() deletes it, and
 * zkl_barrier_wait() waits (one existence watch, no polling) until it is
 * gone.
 *
 * THE DOUBLE BARRIER (zkl_dbarrier_t): the format of Curator's
 * DistributedDoubleBarrier and kazoo's DoubleBarrier.  Each member that
 * enters makes an EPHEMERAL node `<path>/<uuid>` (36 characters, as
 * Curator's; kazoo's 32 hex digits are members too; the data is the
 * member's, by default "host:pid"); once `members` of them are there, the
 * node `<path>/ready` is made and every member is let through.  `<path>`
 * is made as a CONTAINER, as Curator makes it.  Leaving is the mirror
 * image: a member that leaves waits until every member node is gone (the
 * lowest member waits for the highest, the others delete their node and
 * wait for the lowest: Curator's and kazoo's protocol, with which zkl's
 * members mix); the last one out deletes `ready`.
 * What zkl adds:
 *  - members are counted without `ready` (kazoo counts it, so a kazoo
 *    member may go through one member early once `ready` exists);
 *  - `ready` is made only with every member counted still there: in one
 *    multi that checks each of their nodes (up to 4096 of them), so a
 *    member that gave up in the meantime is never counted (no early
 *    release);
 *  - a timed enter or leave that gives up deletes the member's node before
 *    it returns (ZKL_ETIMEDOUT), and an enter that gives up just as the
 *    barrier opened with it counted enters after all (0, its node kept),
 *    so that nobody went through counting a member that is not there:
 *    its delete is checked against the path's data version, which every
 *    zkl member's `ready` multi moves (a Curator or kazoo member making
 *    `ready` does not: against them a narrow window remains);
 *  - Curator 5.4's timed enter returned true after any event of its
 *    watch, so it could let one member through alone; zkl lets a member
 *    through only once `ready` exists.
 * A member whose session is lost is no member any more (its node went
 * with the session): its leave says ZKL_ELOST.  An enter underway when
 * the session is lost says ZKL_ELOST if no new session comes
 * (zkl_session_opts_t.reestablish off); with a new one it goes on, as a
 * new member on the new session.
 *
 * Threads: one call at a time per object; a blocking call from a second
 * thread waits locally for the first (until its own deadline); an async
 * call while another is underway is refused (ZKL_EBUSY).  All functions
 * are thread-safe except the destroys, which must be the last call on
 * their object.  The async forms complete through zkl_session_dispatch()
 * (zkl_async(3)), exactly once per accepted call, never from the
 * submitting call; their callback's token is 0.
 *
 * Deadlines: timeout_ms 0 = do not wait, negative = no deadline.  While
 * the connection is down a call waits for it until its deadline
 * (ZKL_ETIMEDOUT; ZKL_ESUSPENDED with timeout 0); set and remove wait up
 * to a session timeout (then ZKL_ESUSPENDED).
 */
#ifndef ZKL_BARRIER_H
#define ZKL_BARRIER_H

#include <stddef.h>
#include <stdint.h>
#include "zkl/session.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the barrier ------------------------------------------------------------ */

typedef struct zkl_barrier zkl_barrier_t;

/* Creates a barrier object for the node at `path` (absolute, not "/").  No
 * ZooKeeper call is made.
 *   0, or ZKL_EINVAL (out, s or path NULL, or the path invalid),
 *   ZKL_ENOMEM / ZKL_ESYSTEM; *out NULL on failure. */
ZKL_EXTERN int zkl_barrier_create(zkl_barrier_t **out, zkl_session_t *s,
                                  const char *path);

/* Closes the barrier: makes its node.  0 (also when it was closed
 * already), ZKL_ESUSPENDED (no connection within a session timeout, or the
 * answer was lost: it may be closed), ZKL_ECANCELED (zkl_barrier_cancel()
 * while it waited for a connection), ZKL_ELOST, or ZooKeeper's code
 * (ZNOAUTH...). */
ZKL_EXTERN int zkl_barrier_set(zkl_barrier_t *b);

/* Opens the barrier: deletes its node, which wakes every waiter.
 *   0, ZKL_ENOENT (it was open), ZKL_ESUSPENDED (as for set),
 *   ZKL_ECANCELED (zkl_barrier_cancel() while it waited for a connection),
 *   ZKL_ELOST, or ZooKeeper's code (ZNOTEMPTY: the node has children,
 *   so it is not a barrier zkl will delete). */
ZKL_EXTERN int zkl_barrier_remove(zkl_barrier_t *b);

/* Waits until the barrier is open (its node is gone).
 *   0 (open; at once if it was), ZKL_ETIMEDOUT (still closed at the
 *   deadline; with timeout 0: closed now), ZKL_ECANCELED, ZKL_ESUSPENDED
 *   (timeout 0 and no connection), ZKL_ELOST, or ZooKeeper's code. */
ZKL_EXTERN int zkl_barrier_wait(zkl_barrier_t *b, int64_t timeout_ms);

/* The async forms; cb(b, rc, 0, arg) with the codes above.  They return 0
 * (cb will run) or, cb never run: ZKL_EINVAL (b or cb NULL), ZKL_EBUSY,
 * ZKL_ECANCELED (destroy has begun), ZKL_ENOMEM. */
ZKL_EXTERN int zkl_barrier_set_async(zkl_barrier_t *b, zkl_done_fn cb,
                                     void *arg);
ZKL_EXTERN int zkl_barrier_remove_async(zkl_barrier_t *b, zkl_done_fn cb,
                                        void *arg);
ZKL_EXTERN int zkl_barrier_wait_async(zkl_barrier_t *b, int64_t timeout_ms,
                                      zkl_done_fn cb, void *arg);

/* Wakes the object's blocked call (ZKL_ECANCELED); an async one completes
 * with it.  0 or ZKL_EINVAL.  Thread-safe, also from a completion. */
ZKL_EXTERN int zkl_barrier_cancel(zkl_barrier_t *b);

/* Cancels what is underway (its completion comes with ZKL_ECANCELED),
 * waits for blocked calls and frees the object.  NULL-safe; may be called
 * from a completion.  The node is left as it is. */
ZKL_EXTERN void zkl_barrier_destroy(zkl_barrier_t *b);

/* ---- the double barrier ------------------------------------------------------- */

typedef struct zkl_dbarrier zkl_dbarrier_t;

/* Options for zkl_dbarrier_create().  Start from zkl_dbarrier_opts_init()
 * (or pass NULL for the defaults). */
typedef struct zkl_dbarrier_opts {
  const void *data; /* the member node's data; NULL: "host:pid"    */
  size_t data_len;  /* bytes of data, at most 1024                  */
} zkl_dbarrier_opts_t;

/* Fills *opts with the defaults.  Thread-safe. */
ZKL_EXTERN void zkl_dbarrier_opts_init(zkl_dbarrier_opts_t *opts);

/* Creates a double barrier object: one member of the barrier at `path`,
 * which opens once `members` members (>= 1) have entered.  No ZooKeeper
 * call is made.  Every member must be given the same count.
 *   0, or ZKL_EINVAL (out, s or path NULL, the path invalid, members < 1,
 *   data over 1024 bytes), ZKL_ENOMEM / ZKL_ESYSTEM; *out NULL on
 *   failure. */
ZKL_EXTERN int zkl_dbarrier_create(zkl_dbarrier_t **out, zkl_session_t *s,
                                   const char *path, int members,
                                   const zkl_dbarrier_opts_t *opts);

/* Enters: makes the member node and waits until the barrier opens
 * (`members` members entered, counted without `ready`; or `ready` exists
 * already).
 *   0           in: the member node stays until zkl_dbarrier_leave().
 *   ZKL_ETIMEDOUT  not open at the deadline (timeout 0: not open now);
 *               the member node is deleted.
 *   ZKL_ECANCELED  zkl_dbarrier_cancel(); the member node is deleted.
 *   ZKL_EBUSY   the object is in already (leave first).
 *   ZKL_ELOST   the session was lost and no new one comes: the member
 *               node went with it.
 *   ZKL_ESUSPENDED  timeout 0 and no connection, or the connection went
 *               down as the member node was deleted: the janitor deletes
 *               it once the connection is back.  Also a give-up (deadline,
 *               cancel) that could not make the checked delete telling
 *               whether an opening counted this member: in doubt, the
 *               others may have gone through counting it.  ETIMEDOUT and
 *               ECANCELED mean that no opening counted it.
 *   ZKL_EINVAL, ZKL_ENOMEM, or ZooKeeper's code (ZNOAUTH...): not in; a
 *   member node that may have been made is deleted (now or by the
 *   janitor).  A member node an earlier session of the object left (its
 *   create's answer lost) is deleted before the member enters again. */
ZKL_EXTERN int zkl_dbarrier_enter(zkl_dbarrier_t *b, int64_t timeout_ms);

/* Leaves: deletes the member node once every member may (see above) and
 * waits until every member node is gone; the last one out deletes
 * `ready` (by the janitor if the connection is down then).
 *   0           out: every member left.
 *   ZKL_ETIMEDOUT  others were still in at the deadline; this member's
 *               node is deleted (it is out; the others will not wait for
 *               it).
 *   ZKL_ECANCELED  as ZKL_ETIMEDOUT, by zkl_dbarrier_cancel().
 *   ZKL_EPERM   the object is not in.
 *   ZKL_ELOST   the session was lost (the member node with it); out.
 *   ZKL_ESUSPENDED or ZooKeeper's code: out, the member node deleted now
 *   or by the janitor once the connection is back.
 *   ZKL_ENOMEM  the leave could not start: still in. */
ZKL_EXTERN int zkl_dbarrier_leave(zkl_dbarrier_t *b, int64_t timeout_ms);

/* How many members are in the barrier now (its children but `ready`),
 * and whether `ready` exists (ready may be NULL).  It waits for a
 * connection up to a session timeout.  0, ZKL_ESUSPENDED, ZKL_ELOST,
 * ZKL_EINVAL, ZKL_ETIMEDOUT (another thread's call of the object lasted
 * that long), or ZooKeeper's code; a missing path has 0 members. */
ZKL_EXTERN int zkl_dbarrier_count(zkl_dbarrier_t *b, size_t *members,
                                  int *ready);

/* The async forms of enter and leave; cb(b, rc, 0, arg) with the codes
 * above.  They return 0 (cb will run) or, cb never run: ZKL_EINVAL,
 * ZKL_EBUSY (a call is underway, or in already: enter), ZKL_EPERM (not
 * in: leave), ZKL_ECANCELED (destroy has begun), ZKL_ENOMEM. */
ZKL_EXTERN int zkl_dbarrier_enter_async(zkl_dbarrier_t *b, int64_t timeout_ms,
                                        zkl_done_fn cb, void *arg);
ZKL_EXTERN int zkl_dbarrier_leave_async(zkl_dbarrier_t *b, int64_t timeout_ms,
                                        zkl_done_fn cb, void *arg);

/* Wakes the object's blocked call (ZKL_ECANCELED).  0 or ZKL_EINVAL.
 * Thread-safe, also from a completion. */
ZKL_EXTERN int zkl_dbarrier_cancel(zkl_dbarrier_t *b);

/* Cancels what is underway, waits for blocked calls, deletes the member
 * node if the object is in (through the janitor, without waiting) and
 * frees the object.  NULL-safe; may be called from a completion. */
ZKL_EXTERN void zkl_dbarrier_destroy(zkl_dbarrier_t *b);

#ifdef __cplusplus
}
#endif

#endif /* ZKL_BARRIER_H */
