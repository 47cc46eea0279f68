/* lib/core/contend.h - PRIVATE to libzkl: the contention core and what a
 * recipe is made of, on top of core/core.h.
 *
 * A recipe is a driver (its answer to "granted, or which node do I
 * watch?") on the contention core, which runs the protocol every recipe
 * shares: an EPHEMERAL_SEQUENTIAL node, a look at the nodes below it, a
 * watch on the one that blocks it, a grant only on a live session.  Each
 * recipe is one file in lib/recipes/ holding its driver and its public
 * API.
 */
#ifndef ZKL_CONTEND_H
#define ZKL_CONTEND_H

#include <limits.h>

#include "core/core.h"

/* ---- drivers: what makes a recipe a recipe (one per recipe file) -------------------- */

typedef struct zkl__driver {
  const char *name;       /* for messages: "mutex", "read lock", ...      */
  const char *marker;     /* between prefix and sequence: "lock-", ...   */
  zkl__kind_t kind;       /* the kind of our own nodes                    */
  int tells_release;      /* a hold proves every lower node gone, and its
                             release says so: it changes the node's data
                             before deleting it (see contend.c)          */
  /* Does a node of kind k take part in this recipe's queue? */
  int (*counts)(zkl__kind_t k);
  /* Can a counted node of kind k below ours ever block us?  A waiter
   * keeps only those (e.g. a reader only the writers ahead of it). */
  int (*blocks)(zkl__kind_t k);
  /* Given the contenders below us in queue order (believed present),
   * returns -1 when we are granted, else the index of the one to watch. */
  ptrdiff_t (*blocker)(const zkl__node_t *lower, size_t n);
} zkl__driver_t;

/* The blocker of every exclusive contender: blocked by anything counted
 * below it, it watches its immediate predecessor. */
ptrdiff_t zkl__blocker_exclusive(const zkl__node_t *lower, size_t n);

/* The drivers, each defined in its recipe's file (lib/recipes/).  A
 * driver's tells_release must equal zkl__kind_marks_release(kind): the
 * unit tests check it. */
extern const zkl__driver_t zkl__driver_mutex;   /* mutex.c    */
extern const zkl__driver_t zkl__driver_kazoo_lock; /* mutex.c: kazoo's
                                                      names, as a gate */
extern const zkl__driver_t zkl__driver_reader;  /* rwlock.c   */
extern const zkl__driver_t zkl__driver_writer;  /* rwlock.c   */
extern const zkl__driver_t zkl__driver_latch;   /* election.c */

/* ---- the contention core (contend.c) ------------------------------------- */

typedef struct zkl__op zkl__op_t; /* an acquisition or release underway */

typedef struct zkl__contender {
  zkl_session_t *s;
  const zkl__driver_t *drv;
  char *root;                   /* lock root path                        */
  size_t root_len;
  char prefix[ZKL__PREFIX_LEN + 1]; /* "_c_<uuid>-": finds our node after
                                       a connection loss                  */
  char *data;                   /* contender node data                   */
  int data_len;
  char *node;                   /* full path of our node, or NULL        */
  int32_t seq;
  int64_t czxid;                /* fencing token                         */
  int64_t session_id;           /* session that created node             */
  int64_t owner;                /* ephemeral owner of node as last seen
                                   by the acquisition, 0 unknown          */
  int64_t dl;                   /* deadline of each request of the call
                                   in progress                            */
  int no_mark;                  /* our node refused the release's write   */
  int contended;                /* the acquisition of the hold saw another
                                   child under the root, guessed its queue
                                   or waited: its release marks (else a
                                   plain delete, as the floor's; a waiter
                                   come since reads its own node once) */
  int tagged;                   /* names "w-<marker><seq>", computable from
                                   the sequence, and the prefix leads the
                                   data instead: a contender joins a long
                                   queue without listing it (see
                                   op_create_node); set after init       */
  int ahead;                    /* blockers below our node at the last
                                   listing that showed it (tagged)        */
  int premade;                  /* the recipe makes the node (several in
                                   one multi: the multi-lock) and adopts
                                   it (zkl__contend_adopt): an acquisition
                                   never makes or remakes it, and ends
                                   with ZKL__VANISHED when it is gone    */
  atomic_uint *cancel_gen;      /* the owning object's cancel generation  */
  zkl__waiter_t w;
  zkl__op_t *op;                /* the operation using it (at most one);
                                   guarded by the session's lock          */
} zkl__contender_t;

int zkl__contender_init(zkl__contender_t *c, zkl_session_t *s,
                        const zkl__driver_t *drv, const char *path,
                        const void *data, size_t data_len,
                        atomic_uint *cancel_gen);
void zkl__contender_fini(zkl__contender_t *c);
/* Makes path (malloc'd: c owns it from now on) c's node, as its create
 * answered (st: the node's stat).  Frees a node c had. */
void zkl__contend_adopt(zkl__contender_t *c, char *path,
                        const struct Stat *st);
/* What an acquisition through a premade contender returns when its node
 * is gone (deleted by someone else, or with a lost session that a new one
 * replaces): c->node is NULL then, and the recipe starts over. */
#define ZKL__VANISHED 1
/* Would a contender of c's driver that queued after every one of kids (a
 * listing of c's path) have to wait?  0 no, ZKL_EBUSY (with a detail
 * message), ZKL_ENOMEM.  A trylock's look before it writes. */
int zkl__contend_busy(zkl__contender_t *c, const struct String_vector *kids);

/* How an operation ends, on the engine's thread: rc and its detail
 * message ("" if none).  It must not block (it signals a waiting thread,
 * or queues a completion for the user's dispatch). */
typedef void (*zkl__op_done_fn)(int rc, const char *detail, void *arg);
/* Starts acquiring through c, as zkl__contend_acquire() does, on the
 * session's engine; done() reports the end, never from this call.  0, or
 * ZKL_ENOMEM / ZKL_EBUSY (an operation on c is underway) and done() is
 * never called. */
int zkl__contend_acquire_start(zkl__contender_t *c, int64_t deadline,
                               unsigned cancel_seen, zkl__op_done_fn done,
                               void *arg);
/* Starts zkl__contend_release() (nowait: zkl__contend_release_nowait()). */
int zkl__contend_release_start(zkl__contender_t *c, int nowait,
                               zkl__op_done_fn done, void *arg);
/* Watches the hold c has (c->node, made on c->session_id; c is only
 * read, its node never deleted) until it is gone: done() gets 1 (GONE: the
 * node was deleted, or is another session's), ZKL_ELOST (the session),
 * ZKL_ECANCELED (a cancel newer than cancel_seen), or ZooKeeper's code.
 * A connection that is down is waited through. */
int zkl__contend_hold_start(zkl__contender_t *c, unsigned cancel_seen,
                            zkl__op_done_fn done, void *arg);
/* The blocking forms below start the operation and wait for its end. */

/* ---- a recipe's own operations ---------------------------------------------
 * A recipe whose protocol is more than a lock's (the queue) writes its own
 * step function and runs it as an operation of one of its contenders: on
 * the session's engine (zkl__op_start: done() reports its end) or on the
 * caller's thread (zkl__op_run: blocking), exactly as the lock's own
 * operations run.  The step is a protothread (the macros below): whatever
 * must survive a wait lives in ctx, never in locals.  Inside it, the
 * contender's own sub-steps may be called with PT_CALL (the lock protocol
 * through that contender, with the operation's deadline and cancel). */
#define PT_WAIT INT_MIN /* "not yet": no result uses it */
typedef unsigned short pt_t; /* a source line (a file is far shorter) */
#define PT_BEGIN(pt) switch (*(pt)) { case 0:;
#define PT_END(pt) } *(pt) = 0
#define PT_RETURN(pt, v) do { *(pt) = 0; return (v); } while (0)
/* Resumes here until cond holds; the operation runs again on any wake
 * (zkl__op_notify, its waiter, a cancel) and at `when` (ZKL__FOREVER: no
 * timer). */
#define PT_AWAIT(o, pt, cond, when)                \
  do {                                             \
    *(pt) = __LINE__;                              \
    __attribute__((fallthrough));                  \
    case __LINE__:                                 \
    if (!(cond)) {                                 \
      zkl__op_sleep((o), (when));                  \
      return PT_WAIT;                              \
    }                                              \
  } while (0)
/* Runs a step function to its end: var = its result (set only then: the
 * callee may use var's field meanwhile). */
#define PT_CALL(pt, var, call)                     \
  do {                                             \
    *(pt) = __LINE__;                              \
    __attribute__((fallthrough));                  \
    case __LINE__:;                                \
    int pt_r_ = (call);                            \
    if (pt_r_ == PT_WAIT) return PT_WAIT;          \
    (var) = pt_r_;                                 \
  } while (0)

/* Waits for the answer to request z (run again at its answer), or until
 * `until` (ZKL__FOREVER: no timer); the answer is then taken with the
 * request's wait function (ZKL__TRY, or a deadline). */
#define PT_AWAIT_ANSWER(o, pt, z, until)                             \
  do {                                                               \
    zkl__op_notify((o), (z));                                        \
    PT_AWAIT(o, pt, zkl__zcall_ready(z) || zkl__now_ns() >= (until), \
             (until));                                               \
  } while (0)

/* A step: its result (0 or an error), or PT_WAIT. */
typedef int (*zkl__step_fn)(zkl__op_t *o, void *ctx);
/* Runs step as an operation of c on the calling thread until it ends: its
 * result.  ZKL_EBUSY if c has an operation underway. */
int zkl__op_run(zkl__contender_t *c, zkl__step_fn step, void *ctx,
                int64_t deadline, unsigned cancel_seen);
/* The same on the session's engine; done() reports the end, never from
 * this call.  0, or ZKL_ENOMEM / ZKL_EBUSY and done() is never called. */
int zkl__op_start(zkl__contender_t *c, zkl__step_fn step, void *ctx,
                  int64_t deadline, unsigned cancel_seen,
                  zkl__op_done_fn done, void *arg);
/* Inside a step: */
void zkl__op_sleep(zkl__op_t *o, int64_t when);      /* PT_AWAIT's timer */
void zkl__op_notify(zkl__op_t *o, zkl__zcall_t *k);  /* run o at k's answer */
int64_t zkl__op_deadline(const zkl__op_t *o);        /* the caller's     */
zkl__contender_t *zkl__op_contender(const zkl__op_t *o);
int zkl__op_canceled(zkl__op_t *o); /* a cancel newer than the op's */
/* Sub-steps (PT_CALL them).  Until the session is connected: 0, ZKL_ELOST,
 * ZKL_ETIMEDOUT (deadline) or ZKL_ECANCELED. */
int zkl__op_connected(zkl__op_t *o, int64_t deadline);
/* zkl__contend_acquire() through the op's contender, with its deadline
 * and cancel. */
int zkl__op_acquire(zkl__op_t *o);
/* zkl__contend_release() (nowait: zkl__contend_release_nowait()). */
int zkl__op_release(zkl__op_t *o, int nowait);
/* Waits for the contender's waiter (registered by the caller, its epoch
 * from zkl__session_epoch): 1 it fired, 0 the session changed since
 * epoch, ZKL_ECANCELED, ZKL_ETIMEDOUT (deadline).  The waiter is
 * unregistered when this returns. */
int zkl__op_await(zkl__op_t *o, unsigned epoch, int64_t deadline);
/* Unregisters the contender's waiter (a wait not waited). */
void zkl__op_unwait(zkl__op_t *o);

/* ---- a recipe's own calls (call.c) ---------------------------------------
 * An object whose calls are its own steps (the queue, the counter, the
 * barriers) embeds a zkl__calls_t, and each call is a record that starts
 * with a zkl__call_t, handed to the step as its ctx.  One call at a time
 * per object: a blocking call from a second thread waits for the first
 * until its deadline; an async call while another is underway is refused
 * (ZKL_EBUSY) and lasts until its completion is dispatched. */
typedef struct zkl__calls {
  zkl__owner_t own;   /* own.mu may guard the object's own state too     */
  zkl_session_t *s;
  const char *what;   /* "queue", "counter": in messages                  */
  int async_pending;  /* an async call's completion is not dispatched     */
} zkl__calls_t;

typedef struct zkl__call {
  zkl__done_t d;         /* first: the completion queue's record          */
  zkl__calls_t *home;    /* NULL once the object is destroyed (orphan)    */
  void *obj;             /* what the callback is given                    */
  int64_t deadline;      /* the caller's (ZKL__TRY, ZKL__FOREVER)         */
  int64_t dl;            /* each request's: the deadline, or none (try)   */
  int rc;                /* async: the result, and its detail message     */
  char *detail;
  zkl_done_fn cb;        /* async: the callback (unless deliver is set)   */
  void *arg;
  /* The recipe's hooks.  release (required) frees the record.  deliver
   * (NULL: cb(obj, rc, 0, arg)) runs the user's callback at dispatch.
   * check (may be NULL) takes a last look at dispatch, with the queue
   * locked, and may change what is reported (zkl__call_report).  orphaned
   * (may be NULL) returns the detail an orphaned call reports. */
  void (*release)(struct zkl__call *x);
  void (*deliver)(struct zkl__call *x);
  void (*check)(struct zkl__call *x);
  const char *(*orphaned)(struct zkl__call *x);
} zkl__call_t;

int zkl__calls_init(zkl__calls_t *h, zkl_session_t *s, const char *what);
void zkl__calls_fini(zkl__calls_t *h);
/* Destroy's first step: refuses new calls, kick(arg) cancels those in
 * flight, waits for them, and orphans the undispatched completions. */
void zkl__calls_drain(zkl__calls_t *h, void (*kick)(void *), void *arg);
/* Fills the base of a fresh (zeroed) call: timeout_ms 0 try, <0 forever. */
void zkl__call_init(zkl__call_t *x, zkl__calls_t *h, void *obj,
                    int64_t timeout_ms);
/* Sets what an async call reports. */
void zkl__call_report(zkl__call_t *x, int rc, const char *detail);
/* Runs step through c on the calling thread: its result.  x stays the
 * caller's. */
int zkl__call_blocking(zkl__call_t *x, zkl__contender_t *c, zkl__step_fn step);
/* Starts step through c on the engine: 0 (the completion will come), or
 * an error and x has been released. */
int zkl__call_async(zkl__call_t *x, zkl__contender_t *c, zkl__step_fn step);

/* Creates our node and waits until granted, the absolute monotonic
 * deadline (ZKL__TRY: no wait, ZKL__FOREVER), a cancel newer than
 * cancel_seen, or session loss.  On any failure no node is left. */
int zkl__contend_acquire(zkl__contender_t *c, int64_t deadline_ns,
                         unsigned cancel_seen);
/* Deletes our node (for drivers that tell their release, changing its data
 * first in the
 * same multi: see zkl__zk_release).
 * 0, or ZKL_ELOST if the session had already lost it. */
int zkl__contend_release(zkl__contender_t *c);
/* Wakes a blocked zkl__contend_acquire() (or its operation) so that it sees the cancel
 * generation has moved (bump it first). */
void zkl__contend_cancel(zkl__contender_t *c);
/* While holding: watches our own node and waits until it is deleted or
 * changed, the session state moves past `epoch` (from
 * zkl__session_snapshot(), so no change between the caller's look and
 * this wait is missed), or a cancel newer than cancel_seen.
 * 1: our node is gone; 0: something changed (look again); ZKL_ECANCELED;
 * another negative code: the watch cannot be set. */
int zkl__contend_hold_wait(zkl__contender_t *c, unsigned epoch,
                           unsigned cancel_seen);
/* As zkl__contend_release(), but never waits for a connection: when it is
 * down the janitor deletes the node once it is back. */
int zkl__contend_release_nowait(zkl__contender_t *c);
/* Is our node there and owned by our session?  1 yes; 0 no (gone, or
 * another session's: then c->node is forgotten without deleting it); or
 * ZKL_ECANCELED / ZKL_ELOST / another code if it cannot be told.  With
 * fresh == 0, what the acquisition just saw of the node (its create, or
 * its check after the last wait) answers without a request when it says
 * ours. */
int zkl__contend_owned(zkl__contender_t *c, int fresh, unsigned cancel_seen);
/* The head of the queue (the lowest contender the driver counts): its
 * data (malloc'ed, *len bytes) and czxid.  With `watch`, first registers
 * c's waiter and leaves a child watch on the root, to be waited for with
 * zkl__contend_wait_watch().  0, ZKL_ENOENT (nobody), or an error. */
int zkl__contend_head(zkl__contender_t *c, int watch, char **data, int *len,
                      int64_t *czxid);
/* Waits for the watch zkl__contend_head() left, a session change or a
 * cancel.  0 (look again), ZKL_ECANCELED, or ZKL_ELOST. */
int zkl__contend_wait_watch(zkl__contender_t *c, unsigned cancel_seen);
/* Forgets our node (it went with a lost session) and waits until the
 * session is usable again (re-established).  0, ZKL_ELOST (no new session
 * will come) or ZKL_ECANCELED. */
int zkl__contend_await_session(zkl__contender_t *c, unsigned cancel_seen);
/* Gives up the hold through c without a request: its node is forgotten
 * (the session is lost) or left to the janitor (the connection is down). */
void zkl__contend_forsake(zkl__contender_t *c);
/* Whether the hold through c is still good: 0, ZKL_ESUSPENDED (connection
 * down: in doubt), or ZKL_ELOST (the session that made the node is gone). */
int zkl__contend_hold_health(zkl__contender_t *c);
/* May a further hold (a recursive lock, a downgrade) be counted on the
 * hold through c?  Only on one holding() vouches for: 0; ZKL_ESUSPENDED
 * (in doubt) or ZKL_ELOST, with a detail message. */
int zkl__contend_hold_again(zkl__contender_t *c);

/* ---- the recipe base (recipe.c) ----------------------------------------
 * A lock-like recipe object starts with a zkl__recipe_t and gives the base
 * a table of what is its own.  The base does the rest the same way for
 * every recipe: argument checks and detail messages, create and destroy,
 * per-thread ownership and reentrancy (owner.c), cancel, token, holding()
 * and node().  Hooks marked "own.mu held" run with the object's mutex
 * held and must not block. */

/* The checks every recipe's create makes (session, path, contender node
 * data): 0 or ZKL_EINVAL with a detail message. */
int zkl__check_recipe_args(zkl_session_t *s, const char *path,
                           const void *data, size_t len);

struct zkl__recipe;
typedef struct zkl__recipe_ops {
  const char *name; /* "mutex", "rwlock": in messages            */
  size_t size;      /* of the whole object, the base first      */
  /* Makes the recipe's contenders: 0 or an error (nothing to undo). */
  int (*init)(struct zkl__recipe *r, zkl_session_t *s, const char *path,
              const void *data, size_t len);
  void (*fini)(struct zkl__recipe *r); /* frees what init made */
  void (*kick)(struct zkl__recipe *r); /* wakes blocked acquisitions */
  /* own.mu held: what the owner holds, as holding() reports it (bits;
   * 0 nothing) */
  int (*holds)(const struct zkl__recipe *r);
  /* own.mu held, the caller holds: a further hold of `mode` (reentrant,
   * or a downgrade): 0 counted, or an error and nothing changes */
  int (*again)(struct zkl__recipe *r, int mode);
  /* The contender a fresh acquisition of `mode` uses. */
  zkl__contender_t *(*contender)(struct zkl__recipe *r, int mode);
  /* own.mu held: the first hold of `mode` was granted; mode -1: holds
   * nothing (counts reset) */
  void (*granted)(struct zkl__recipe *r, int mode);
  /* own.mu held, something held: the contender whose node backs it */
  zkl__contender_t *(*backing)(struct zkl__recipe *r);
  /* own.mu held, something held: drops one level; 1 if that was the
   * last (the node behind backing() is to be released) */
  int (*unhold)(struct zkl__recipe *r);
} zkl__recipe_ops_t;

typedef struct zkl__recipe {
  const zkl__recipe_ops_t *ops;
  zkl__owner_t own;  /* own.mu guards the recipe's counts too */
  const char *root;  /* the path (a contender's copy), for messages */
  zkl_session_t *s;
  int async_mode;    /* the mode of the object's async hold (own.async) */
  /* The watch of the async hold (zkl__recipe_watch_async), all under
   * own.mu: a contender that shadows the backing one (same node and
   * session) to watch the node without touching the hold, made at the
   * first watch; its cancel generation; the pending watch's record. */
  zkl__contender_t *hold_c;
  atomic_uint hold_cancel;
  void *watch;
  int hold_gone;     /* the async hold's node is known to be gone */
  /* An async acquisition or release whose completion has not been
   * dispatched yet: the call lasts until then (own.busy stays set, a
   * hold it granted is not the caller's to release or watch yet). */
  int async_pending;
} zkl__recipe_t;

/* The public calls of a lock-like recipe, with their documented codes.
 * r may be NULL (ZKL_EINVAL naming ops->name). */
/* out: the caller's `zkl_<recipe>_t **`, set to the new object (ops->size
 * bytes, the base first) or to NULL. */
int zkl__recipe_create(void *out, const zkl__recipe_ops_t *ops,
                       zkl_session_t *s, const char *path, const void *data,
                       size_t len);
/* timeout_ms: 0 try, <0 forever, else a deadline from now */
int zkl__recipe_acquire(zkl__recipe_t *r, const zkl__recipe_ops_t *ops,
                        int mode, int64_t timeout_ms);
int zkl__recipe_release(zkl__recipe_t *r, const zkl__recipe_ops_t *ops);
int zkl__recipe_cancel(zkl__recipe_t *r, const zkl__recipe_ops_t *ops);
int zkl__recipe_token(zkl__recipe_t *r, const zkl__recipe_ops_t *ops,
                      uint64_t *token);
int zkl__recipe_holding(zkl__recipe_t *r, const zkl__recipe_ops_t *ops);
/* any_thread: the object's hold, whichever thread has it; else only the
 * calling thread's */
int zkl__recipe_node(zkl__recipe_t *r, const zkl__recipe_ops_t *ops,
                     int any_thread, char *buf, size_t len);
void zkl__recipe_destroy(zkl__recipe_t *r);
/* The asynchronous forms (timeout_ms as above), with the codes of the
 * public *_async calls: the object holds what they acquire. */
int zkl__recipe_acquire_async(zkl__recipe_t *r, const zkl__recipe_ops_t *ops,
                              int mode, int64_t timeout_ms, zkl_done_fn cb,
                              void *arg);
int zkl__recipe_release_async(zkl__recipe_t *r, const zkl__recipe_ops_t *ops,
                              zkl_done_fn cb, void *arg);
/* cb once the object's async hold is gone (ZKL_ELOST), let go by the
 * object (0) or destroyed (ZKL_ECANCELED); the codes of the public
 * *_watch_async calls. */
int zkl__recipe_watch_async(zkl__recipe_t *r, const zkl__recipe_ops_t *ops,
                            zkl_done_fn cb, void *arg);

#endif /* ZKL_CONTEND_H */
