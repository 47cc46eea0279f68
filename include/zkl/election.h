/* zkl/election.h - leader election among processes: at most one leader at
 * a time per path, a fencing token per leadership, and observers that
 * follow who leads without standing.
 *
 * Protocol: Curator's LeaderLatch wire format.  Each candidate creates
 * `<path>/_c_<uuid>-latch-<seq>` (EPHEMERAL_SEQUENTIAL, data = its id); the
 * lowest sequence leads, and a candidate claims leadership only once it
 * has checked that the lowest node's ephemeral owner is its own session.
 * Each candidate watches only its immediate predecessor: a change of
 * leader wakes only the next candidate.  Observers watch the path's
 * children.
 *
 * Threads: each election object runs one thread of zkl's own (started by
 * zkl_election_create()).  It does the waiting and runs EVERY callback, one
 * at a time and in order, never on ZooKeeper's threads (or, with the
 * option callbacks_in_dispatch, queues them for zkl_session_dispatch() on
 * an event loop's thread).  A callback may
 * call any zkl function, including zkl_election_resign(),
 * zkl_election_start() and zkl_election_destroy() on its own object
 * (zkl_election_await() on its own object refuses with ZKL_EDEADLK).
 * Callbacks should return promptly: the next event waits for them.  All functions are
 * thread-safe except zkl_election_destroy().
 */
#ifndef ZKL_ELECTION_H
#define ZKL_ELECTION_H

#include <stddef.h>
#include <stdint.h>
#include "zkl/session.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zkl_election zkl_election_t;

/* Why a leader stopped leading. */
typedef enum zkl_election_reason {
  ZKL_REASON_RESIGNED = 1,  /* zkl_election_resign() or destroy           */
  ZKL_REASON_SUSPENDED = 2, /* connection lost: leadership in doubt; if the
                               same session comes back and the node is
                               still there, leadership is given back (a
                               new "elected" callback)                    */
  ZKL_REASON_LOST = 3       /* session expired or closed, or our node was
                               deleted by someone else                    */
} zkl_election_reason_t;

typedef struct zkl_election_opts {
  /* Candidates: this object became leader; token = its fencing token.
   * Called only on a leadership valid at that moment by
   * zkl_election_is_leader()'s rule (our node made on the current session,
   * the server heard from within the session timeout): never on a session
   * lost while the candidate waited or was paused. */
  void (*on_elected)(zkl_election_t *e, uint64_t token, void *arg);
  /* Candidates: this object is no longer leader.  Exactly once per
   * leadership, after its on_elected. */
  void (*on_revoked)(zkl_election_t *e, zkl_election_reason_t why,
                     void *arg);
  /* Observers: the leader changed.  id is the new leader's id (valid
   * during the call only), or NULL with id_len 0 when nobody leads.  It
   * follows the current leader: one that comes and goes before the
   * observer could look again (one round trip) is not reported. */
  void (*on_leader)(zkl_election_t *e, const void *id, size_t id_len,
                    uint64_t token, void *arg);
  void *arg;      /* passed to every callback                            */
  int observer;   /* 1: follow who leads, never stand as a candidate     */
  /* 0 (default): the callbacks run on the object's thread.  1: they run
   * from zkl_session_dispatch() on the caller's thread (an event loop's),
   * in order, through the session's completion queue (zkl_session_fd()).
   * An on_elected whose leadership no longer stands when it is dispatched
   * (a slow loop, a paused process) is dropped together with its
   * on_revoked; callbacks not yet dispatched when the object is destroyed
   * never run. */
  int callbacks_in_dispatch;
} zkl_election_opts_t;

/* Fills *opts with the defaults (no callbacks, candidate).  Thread-safe. */
ZKL_EXTERN void zkl_election_opts_init(zkl_election_opts_t *opts);

/* Creates an election object on `path` (the rules of zkl_mutex_create())
 * with this candidate's id (at most 1024 bytes; NULL/0 = "host:pid"; not
 * used by observers) and starts its thread.  Makes no ZooKeeper call.
 *   0           *out is ready; free it with zkl_election_destroy().
 *   ZKL_EINVAL  out, s or path NULL, invalid path, id too long.
 *   ZKL_ENOMEM / ZKL_ESYSTEM  allocation or thread creation failed.
 * Ownership: path, id and the options are copied. */
ZKL_EXTERN int zkl_election_create(zkl_election_t **out, zkl_session_t *s,
                                   const char *path, const void *id,
                                   size_t id_len,
                                   const zkl_election_opts_t *opts);

/* Joins the election (a candidate) or starts following it (an observer);
 * returns at once, the object's thread does the rest.
 *   0, or ZKL_EBUSY if already started, ZKL_ELOST if the session is gone,
 *   ZKL_EINVAL for NULL. */
ZKL_EXTERN int zkl_election_start(zkl_election_t *e);

/* Waits until this candidate leads, up to timeout_ms (negative: forever).
 *   0               leader now.
 *   ZKL_ETIMEDOUT   not leader in time (still a candidate).
 *   ZKL_ECANCELED   not started, or resigned/destroyed meanwhile.
 *   ZKL_ELOST       the session is gone.
 *   ZKL_EDEADLK     called from one of this object's own callbacks.
 *   ZKL_EINVAL      NULL, or an observer.
 *   other <0        the candidacy ended by itself with this error (e.g.
 *                   ZNOAUTH on the path); start() again to retry. */
ZKL_EXTERN int zkl_election_await(zkl_election_t *e, int64_t timeout_ms);

/* 1 leader, 0 not leader, ZKL_ESUSPENDED while the connection is down
 * (a leader's leadership is in doubt), ZKL_ELOST once the session is gone,
 * ZKL_EINVAL for NULL.  No ZooKeeper call. */
ZKL_EXTERN int zkl_election_is_leader(zkl_election_t *e);

/* The fencing token of this leader's leadership: the czxid of its node,
 * larger for every new leader.  0; ZKL_EPERM (not leader);
 * ZKL_ESUSPENDED (leadership in doubt: connection down); ZKL_ELOST;
 * ZKL_EINVAL. */
ZKL_EXTERN int zkl_election_token(zkl_election_t *e, uint64_t *token);

/* Copies the full path of the node this leader leads with (the node whose
 * czxid zkl_election_token() gives) into buf, NUL-terminated.  0;
 * ZKL_EPERM (not leader); ZKL_ESUSPENDED; ZKL_ELOST; ZKL_ENOMEM; ZKL_EINVAL
 * for NULL or a buffer too small (1024 bytes are always enough for valid
 * paths).  No ZooKeeper call. */
ZKL_EXTERN int zkl_election_node(zkl_election_t *e, char *buf, size_t len);

/* Copies the current leader's id into buf (asks the server; works for
 * candidates and observers, started or not).  *len is the buffer's size on
 * entry and the id's length on return.
 *   0           copied.
 *   ZKL_ENOENT  nobody leads now (*len = 0).
 *   ZKL_EINVAL  NULL arguments, or buf too small (then *len is the size
 *               needed and nothing is copied).
 *   ZKL_ESUSPENDED / ZKL_ELOST, ZKL_ENOMEM, ZKL_EPROTO (the head kept
 *   changing), or ZooKeeper's code: could not ask (*len = 0). */
ZKL_EXTERN int zkl_election_leader(zkl_election_t *e, void *buf, size_t *len);

/* Gives up leadership (its node is deleted, the next candidate takes
 * over) or withdraws a candidacy that was still waiting; stops an
 * observer.  Returns at once, and zkl_election_is_leader() says 0 from
 * then on; on_revoked(RESIGNED) follows on the object's thread if it was
 * leading.  zkl_election_start() may be called again.
 *   0, or ZKL_EINVAL for NULL. */
ZKL_EXTERN int zkl_election_resign(zkl_election_t *e);

/* Resigns, waits for the object's thread to finish (its last callbacks
 * included), frees everything.  NULL-safe.  From one of the object's own
 * callbacks it returns at once and the object is freed when the callback
 * returns (no callback of it runs after that one).  Must not race with
 * other calls on e. */
ZKL_EXTERN void zkl_election_destroy(zkl_election_t *e);

#ifdef __cplusplus
}
#endif
#endif /* ZKL_ELECTION_H */
