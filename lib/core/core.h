/* lib/core/core.h - PRIVATE to libzkl: not installed, not part of the API.
 *
 * The core every recipe stands on, lowest layer first: errors, time,
 * paths, node names, local ownership, the session (its connection, state
 * and background work) and requests with a deadline.  The contention core
 * and the recipe base sit on top of it (core/contend.h); the recipes, one
 * file each, on top of those (lib/recipes/).  A lower layer reaches a
 * higher one only through callbacks it is given.
 *
 * Internal non-static functions are named zkl__*; they are hidden by
 * -fvisibility=hidden, and unit tests reach them through the static
 * convenience library.
 */
#ifndef ZKL_CORE_H
#define ZKL_CORE_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "zkl.h"

/* ---- errors (errors.c) ------------------------------------------------ */

/* Records a detail message for zkl_last_error() and returns err, so that
 * `return zkl__fail(ZKL_EINVAL, "path %s ...", p);` reads naturally. */
int zkl__fail(int err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Clears the detail message (called on entry of public functions). */
void zkl__clear_error(void);

/* Copies src into buf: 0, or ZKL_EINVAL if it does not fit. */
int zkl__copy_string(char *buf, size_t len, const char *src);

/* ---- log (log.c) ------------------------------------------------------ */

#include <stdio.h>

/* One of zkl's own messages (printf format), about session sid (0: none):
 * to the process's handler (zkl_log_set) if one is installed, else to
 * `fallback` (a session's log_stream; NULL: nowhere) when level <=
 * fallback_max.  Formats nothing when nobody would take it.  Any thread;
 * never on ZooKeeper's completion thread (the handler is user code). */
void zkl__log(FILE *fallback, int fallback_max, int level, int64_t sid,
              const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void zkl__vlog(FILE *fallback, int fallback_max, int level, int64_t sid,
               const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));
/* The ZooKeeper client's log callback (zookeeper_init2) of every handle
 * whose session has no log_stream: to the handler, or nowhere. */
void zkl__log_zookeeper(const char *line);
/* The level of one of the ZooKeeper client's lines, and in *rest where its
 * text starts after the level (the line itself if its shape is unknown). */
int zkl__log_parse_zookeeper(const char *line, const char **rest);

/* ---- time (time.c) ---------------------------------------------------- */

#define ZKL__FOREVER INT64_MAX
#define ZKL__TRY 0   /* deadline value meaning "do not wait at all" */
int64_t zkl__now_ns(void);                      /* CLOCK_MONOTONIC */
/* Absolute deadline for a relative timeout; <0 = forever. */
int64_t zkl__deadline_after_ms(int64_t timeout_ms);
/* Waits on cv until signalled or the monotonic deadline; ETIMEDOUT at the
 * deadline.  cv must have been made by zkl__cond_init(). */
int zkl__cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu,
                         int64_t deadline_ns);
int zkl__cond_init(pthread_cond_t *cv);         /* CLOCK_MONOTONIC cond */

/* ---- paths (path.c) --------------------------------------------------- */

#define ZKL__PATH_MAX 900   /* room left for "/_c_<uuid>-__WRIT__<seq>" */
/* 0 if `path` may be a lock root, else ZKL_EINVAL with a detail message. */
int zkl__path_validate(const char *path);

/* ---- contender node names (names.c) ------------------------------------ */

/* What kind of contender a child's name says it is. */
typedef enum zkl__kind {
  ZKL__KIND_NONE = 0,    /* not a contender: ignored                     */
  ZKL__KIND_LOCK,        /* ...-lock-<seq>   Curator, go-zookeeper, zkl  */
  ZKL__KIND_KAZOO_LOCK,  /* ...__lock__<seq> kazoo Lock / WriteLock      */
  ZKL__KIND_KAZOO_RLOCK, /* ...__rlock__<seq> kazoo ReadLock             */
  ZKL__KIND_READ,        /* ..._c_<uuid>-__READ__<seq> Curator rwlock    */
  ZKL__KIND_WRITE,       /* ..._c_<uuid>-__WRIT__<seq> Curator rwlock    */
  ZKL__KIND_LATCH        /* ...latch-<seq>   Curator LeaderLatch         */
} zkl__kind_t;

typedef struct zkl__node {
  const char *name;  /* child name (borrowed from the listing)            */
  int32_t seq;       /* ZooKeeper's signed 32-bit sequence counter         */
  zkl__kind_t kind;
} zkl__node_t;

/* Parses a child name.  0 and *out filled for a contender; ZKL_EINVAL for
 * anything else (other children are ignored, never fatal). */
int zkl__name_parse(const char *name, zkl__node_t *out);
/* Orders sequence numbers with serial-number arithmetic, so the order stays
 * right when ZooKeeper's counter wraps from 2^31-1 to -2^31. */
int zkl__seq_cmp(int32_t a, int32_t b);
/* queue order: by sequence, then by name */
int zkl__node_cmp(const zkl__node_t *a, const zkl__node_t *b);
void zkl__nodes_sort(zkl__node_t *v, size_t n);
/* Whether `name` was created by the contender whose prefix is `prefix`
 * ("_c_<uuid>-"). */
int zkl__name_is_mine(const char *name, const char *prefix);
/* Queue items: the shapes of the queue recipe's wire formats. */
#define ZKL__ITEM_QN 0    /* qn-<seq>: ZooKeeper's recipe, Curator       */
#define ZKL__ITEM_ENTRY 1 /* entry-<prio: 3 digits>-<seq>: kazoo         */
typedef struct zkl__item_name {
  const char *name; /* borrowed */
  int prio;         /* 0..999 (entry-); 0 for qn- */
  int32_t seq;
} zkl__item_name_t;
/* 0 and *out for an item of that shape (the sequence as ZooKeeper prints
 * it: ten digits, or a minus sign and nine or ten once wrapped); ZKL_EINVAL
 * for anything else (ignored by the queue). */
int zkl__item_parse(int shape, const char *name, zkl__item_name_t *out);
/* Queue order: priority, then sequence (wrap handled), then name. */
int zkl__item_cmp(const zkl__item_name_t *a, const zkl__item_name_t *b);
/* Fills a fresh random prefix "_c_<uuid>-" (41 bytes with NUL). */
#define ZKL__PREFIX_LEN 40
void zkl__prefix_new(char out[ZKL__PREFIX_LEN + 1]);
/* Does a change of the data of a node of kind k mean that it left as a
 * holder whose hold proved every lower node gone?  Only zkl's mutex and
 * write-lock holders release that way (their drivers' tells_release);
 * the peers never write their lock nodes' data, and zkl's readers and
 * election candidates release with a plain delete.  Each kind belongs to
 * one driver, so the kind alone tells. */
int zkl__kind_marks_release(zkl__kind_t k);

/* ---- local ownership (owner.c) ------------------------------------------- */

/* Which thread of this process uses a recipe object now.  Fields other
 * than cancel_gen are guarded by mu. */
typedef struct zkl__owner {
  pthread_mutex_t mu;
  pthread_cond_t cv;        /* the object became free, or a cancel       */
  int busy;                 /* a thread holds or is acquiring through it */
  pthread_t thread;         /* that thread                               */
  atomic_uint cancel_gen;   /* bumped by zkl__owner_cancel()             */
  int async;                /* busy for the object itself (an async call
                               or its hold), no thread's                 */
  int active;               /* calls in flight through the object        */
  int dying;                /* destroy has begun: new calls are refused  */
} zkl__owner_t;

int zkl__owner_init(zkl__owner_t *o);
void zkl__owner_fini(zkl__owner_t *o);
int zkl__owner_mine(const zkl__owner_t *o);          /* with mu held */
/* With mu held: waits until no other thread uses the object, then claims
 * it for the caller.  0, ZKL_EBUSY (ZKL__TRY), ZKL_ETIMEDOUT, or
 * ZKL_ECANCELED if the generation moved past cancel_seen. */
int zkl__owner_claim(zkl__owner_t *o, int64_t deadline, unsigned cancel_seen);
void zkl__owner_free(zkl__owner_t *o);               /* with mu held */
/* Bumps the cancel generation and wakes local waiters (takes mu). */
void zkl__owner_cancel(zkl__owner_t *o);
/* A call enters/leaves the object (takes mu).  enter: 0 and the cancel
 * generation the call must watch, or ZKL_ECANCELED once destroy began. */
int zkl__owner_enter(zkl__owner_t *o, unsigned *cancel_seen);
int zkl__owner_dying(zkl__owner_t *o);
void zkl__owner_leave(zkl__owner_t *o);
/* Destroy's first step: refuses new calls, then waits until the calls in
 * flight have returned (the caller cancels them first, and again here). */
void zkl__owner_drain(zkl__owner_t *o, void (*kick)(void *), void *arg);
/* Starts a thread of zkl's own, with every signal blocked in it.  0 or
 * ZKL_ESYSTEM. */
int zkl__thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

/* ---- the engine (engine.c): one thread that runs a session's operations ----
 * A job is run on the engine's thread whenever it was posted or its timer
 * came; it never blocks there (it sends requests and returns).  Posting
 * only links and signals: ZooKeeper's completion thread may post. */
typedef struct zkl__job {
  struct zkl__job *prev, *next; /* in the run queue (guarded by the engine) */
  int queued;
  int forgotten;                /* zkl__engine_forget(): posts ignored     */
  size_t slot;                  /* in the timer heap + 1; 0 not there     */
  int64_t when;                 /* the timer, monotonic ns                */
  void (*run)(struct zkl__job *j);
} zkl__job_t;
typedef struct zkl__engine zkl__engine_t;
zkl__engine_t *zkl__engine_new(void); /* NULL: no memory or no thread */
/* Stops the thread (the jobs queued run first; timers do not fire) and
 * frees the engine. */
void zkl__engine_free(zkl__engine_t *e);
/* Queues j to run (once, however often it is posted before it runs). */
void zkl__engine_post(zkl__engine_t *e, zkl__job_t *j);
/* Sets j's timer to `when` (ZKL__FOREVER: none).  0 or ZKL_ENOMEM. */
int zkl__engine_arm(zkl__engine_t *e, zkl__job_t *j, int64_t when);
/* Takes j off the run queue and the timers for good: it is not run again,
 * and a post that comes after (a late one, whose poster keeps j's memory
 * alive) is ignored. */
void zkl__engine_forget(zkl__engine_t *e, zkl__job_t *j);
/* Is the calling thread the engine's? */
int zkl__engine_on_thread(zkl__engine_t *e);

/* ---- completions for the user's thread (dispatch.c) ----------------------- */

/* A completion waiting for zkl_session_dispatch(). */
typedef struct zkl__done {
  struct zkl__done *next;
  const void *owner; /* the object it reports on (NULL: none, or gone)   */
  /* At dispatch, with the queue locked: a last look that may change what
   * is reported (a grant found in doubt).  May be NULL. */
  void (*check)(struct zkl__done *x);
  /* deliver: runs the user's callback; then (always) frees x */
  void (*run)(struct zkl__done *x, int deliver);
  /* The owner is being destroyed (queue locked): x must not touch it. */
  void (*orphan)(struct zkl__done *x);
} zkl__done_t;
typedef struct zkl__dispatch zkl__dispatch_t;
zkl__dispatch_t *zkl__dispatch_new(void); /* NULL: no memory or no fd */
/* Frees the queue; records left are freed undelivered. */
void zkl__dispatch_free(zkl__dispatch_t *d);
int zkl__dispatch_fd(zkl__dispatch_t *d);
/* Queues x (any thread; only links and signals the fd). */
void zkl__dispatch_post(zkl__dispatch_t *d, zkl__done_t *x);
/* Runs what is queued now, on the calling thread: how many ran. */
int zkl__dispatch_run(zkl__dispatch_t *d);
/* Calls orphan() on every queued record of `owner`. */
void zkl__dispatch_orphan(zkl__dispatch_t *d, const void *owner);

/* ---- session internals (session.c) -------------------------------------- */

/* An operation waiting for a node event or a session change.  Lives inside
 * a contender; registered with the session only while waiting.  Guarded by
 * the session's mutex.  What happened is recorded in it (fired, epoch...),
 * so a wait registered before its operation runs misses nothing. */
typedef struct zkl__waiter {
  struct zkl__waiter *prev, *next;
  const char *watch_path;     /* node watched now, or NULL; with
                                 watch_name, the parent of that node      */
  const char *watch_name;     /* NULL, or the watched node's name under
                                 watch_path (no joined copy is kept)      */
  int fired;                  /* event on the watched node since armed    */
  const char *self_path;      /* our own node, watched too, or NULL       */
  int self_fired;             /* event on self_path since armed: our node
                                 may be gone (it wakes the waiter too)    */
  int fired_type;             /* ZOO_DELETED_EVENT, ZOO_CHANGED_EVENT ... */
  unsigned epoch;             /* session epoch when registered            */
  /* Posts the waiting operation to whoever runs it (the engine, or a
   * blocking caller); NULL while no operation runs.  Called with the
   * session locked. */
  void (*wake)(struct zkl__waiter *w);
  /* the session's path tables (session.c): a watch event finds the
   * waiters of its path without looking at the others */
  struct zkl__waiter *watch_hnext, *self_hnext;
  size_t watch_hash, self_hash;
  int in_watch_table, in_self_table;
} zkl__waiter_t;

int zkl__waiter_init(zkl__waiter_t *w);
void zkl__waiter_fini(zkl__waiter_t *w);

struct _zhandle;
struct ACL_vector;
const struct ACL_vector *zkl__session_acl(zkl_session_t *s);
void zkl__session_ref(zkl_session_t *s);
void zkl__session_unref(zkl_session_t *s);
/* 0 when usable, ZKL_ELOST when expired/closed, ZKL_ESUSPENDED when the
 * connection is down. */
int zkl__session_health(zkl_session_t *s);
/* The code a recipe's request ends with when ZooKeeper answered zrc (not
 * ZOK), its detail message "<what> <path>: why": ZKL_ETIMEDOUT (no answer
 * before the request's deadline, ZKL__ZTIMEDOUT), ZKL_ELOST (the session
 * expired, closed, or is lost now), ZKL_ESUSPENDED (the connection went
 * before the answer came), else zrc itself (ZNOAUTH...). */
int zkl__zrc_fail(zkl_session_t *s, int zrc, const char *what,
                  const char *path);
/* Whether the server surely deleted the session's nodes (it said the
 * session expired, or we closed it).  A session zkl declared LOST on its
 * own may still be alive on the server. */
int zkl__session_gone(zkl_session_t *s);
/* The engine that runs the session's operations. */
zkl__engine_t *zkl__session_engine(zkl_session_t *s);
/* The queue of its completions (zkl_session_dispatch()). */
zkl__dispatch_t *zkl__session_dispatch_queue(zkl_session_t *s);
/* The health and the epoch it belongs to, read together. */
int zkl__session_snapshot(zkl_session_t *s, unsigned *epoch);
/* The watcher every zkl watch uses (ctx = the session). */
void zkl__watcher(struct _zhandle *zh, int type, int state, const char *path,
                  void *ctx);

void zkl__session_lock(zkl_session_t *s);
void zkl__session_unlock(zkl_session_t *s);
/* With the session locked: add/remove w, point its watch at path. */
void zkl__waiter_register(zkl_session_t *s, zkl__waiter_t *w,
                          const char *path);
/* The same for the node `name` under `parent` (both must stay valid
 * while registered). */
void zkl__waiter_register_child(zkl_session_t *s, zkl__waiter_t *w,
                                const char *parent, const char *name);
/* With the session locked, w registered: also wake w for events on
 * `path` (our own node: self_fired). */
void zkl__waiter_watch_self(zkl_session_t *s, zkl__waiter_t *w,
                            const char *path);
void zkl__waiter_unregister(zkl_session_t *s, zkl__waiter_t *w);
unsigned zkl__session_epoch(zkl_session_t *s); /* with the session locked */
int zkl__health_locked(zkl_session_t *s);        /* with the session locked */
/* Will a LOST session be replaced by a new one (the reestablish option,
 * and not closing)?  With and without the session locked. */
int zkl__session_renews_locked(zkl_session_t *s);
int zkl__session_renews(zkl_session_t *s);
int64_t zkl__session_id_locked(zkl_session_t *s);
/* With the session locked: wakes every waiter watching path, as if its
 * watch had fired (it re-checks and re-arms). */
void zkl__waiters_poke_path(zkl_session_t *s, const char *path);
/* Wakes a registered waiter (cancel); with the session locked. */
void zkl__waiter_kick(zkl__waiter_t *w);

/* One of zkl's messages about the session (its current id), to the log
 * handler or the session's log_stream (zkl__log).  Not with the session
 * locked (the handler is user code). */
void zkl__session_log(zkl_session_t *s, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The session's counters (zkl_session_stats): the public struct's fields,
 * each an atomic, in the same order. */
typedef struct zkl__stats {
  atomic_uint_least64_t creates, deletes, exists, gets, sets, children,
      multis, syncs, heartbeats, watches, events, wakeups;
  atomic_uint_least64_t acquisitions, grants, timeouts, cancels, failures,
      waiting;
  atomic_uint_least64_t wait_hist[ZKL_STATS_WAIT_BUCKETS];
  atomic_uint_least64_t wait_us_total, wait_us_max;
  atomic_uint_least64_t connects, suspensions, reconnects, losses;
} zkl__stats_t;
zkl__stats_t *zkl__session_stats(zkl_session_t *s);
/* The hosts the session was opened with (fixed for its life). */
const char *zkl__session_hosts(zkl_session_t *s);

/* ---- the counters' file (export.c) ------------------------------------ */
/* export.c sits above the session: the session holds its export only as a
 * stop hook, stop(arg), which ends it (its thread joined, its file
 * removed, arg freed) and is called with no lock held. */
typedef void zkl__stop_fn(void *arg);
/* Makes stop(arg) the session's export (it has none), under its lock: 0,
 * or -1 when the session is closing or already has one (nothing kept: the
 * caller still owns arg and ends it). */
int zkl__session_export_set(zkl_session_t *s, zkl__stop_fn *stop, void *arg);
/* Takes the session's export away under its lock and ends it (its hook
 * called unlocked, before this returns); none: a no-op.  Afterwards the
 * session has no export. */
void zkl__session_export_end(zkl_session_t *s);
static inline void zkl__count(atomic_uint_least64_t *c) {
  atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}
/* An acquisition of the contention core began / ended with rc (0:
 * granted, started_ns: when its call began). */
void zkl__stats_acquire_begin(zkl_session_t *s);
void zkl__stats_acquire_end(zkl_session_t *s, int rc, int64_t started_ns);

/* Work a layer above the session (the janitor) has the session's thread
 * do once the connection is up.  run() is called with no lock held: 0
 * done, ZKL_EAGAIN to be run again after the next reconnection (while the
 * same session lives), anything else gives up.  drop() frees the task:
 * after its last run, or unrun when the session's nodes are gone (it
 * expired, was replaced, or is closing). */
typedef struct zkl__task {
  struct zkl__task *next;
  int (*run)(zkl_session_t *s, struct zkl__task *t);
  void (*drop)(struct zkl__task *t);
} zkl__task_t;
/* Queues t (it may run at once on the session's thread).  Only queues and
 * signals, so it may be called from a ZooKeeper completion. */
void zkl__session_defer(zkl_session_t *s, zkl__task_t *t);

/* An asynchronous request whose completion may still be pending.  A
 * completion still pending when the session closes never runs (the client
 * drops it), so the session discards what is left after zookeeper_close. */
typedef struct zkl__inflight {
  struct zkl__inflight *prev, *next;
  struct _zhandle *zh; /* the handle it was sent on */
  void (*discard)(struct zkl__inflight *op);
} zkl__inflight_t;
void zkl__inflight_remove(zkl_session_t *s, zkl__inflight_t *op);
/* Pins the session's current handle while a request is sent on it (a
 * handle replaced after LOST is closed only when nobody is sending on
 * it); with op, records op as in flight on it.  NULL once closing.
 * Always followed by zkl__zh_unpin(), with no other pin in between. */
struct _zhandle *zkl__zh_pin(zkl_session_t *s, zkl__inflight_t *op);
void zkl__zh_unpin(zkl_session_t *s);

/* ---- requests with a deadline (zkcall.c) ---------------------------------
 * Each sends one request with ZooKeeper's asynchronous API and waits for
 * the answer until the absolute monotonic deadline (ZKL__FOREVER: until the
 * client answers, which it always does, with ZCONNECTIONLOSS at worst).
 * They return ZooKeeper's code, or ZKL__ZTIMEDOUT when the deadline came
 * first: the request may still be applied later.  Watches use
 * zkl__watcher with the session as context. */
#define ZKL__ZTIMEDOUT (-990)
struct Stat;
struct String_vector;
int zkl__zk_exists(zkl_session_t *s, int64_t deadline, const char *path,
                   int watch, struct Stat *st);
/* *value (malloc'ed, NUL-terminated, *len bytes) when value != NULL */
int zkl__zk_get(zkl_session_t *s, int64_t deadline, const char *path,
                int watch, char **value, int *len, struct Stat *st);
int zkl__zk_children(zkl_session_t *s, int64_t deadline, const char *path,
                     int watch, struct String_vector *out);
/* with the session's ACL; *made (malloc'ed) the path the server made */
int zkl__zk_create(zkl_session_t *s, int64_t deadline, const char *path,
                   const char *data, int len, int flags, char **made,
                   struct Stat *st);
int zkl__zk_delete(zkl_session_t *s, int64_t deadline, const char *path);
/* The same as a request sent now and its answer waited for later, so
 * that several requests travel together (the server answers one session's
 * requests in order).  *_send returns NULL only without memory; every
 * record sent must be waited for exactly once. */
typedef struct zcall zkl__zcall_t;
zkl__zcall_t *zkl__zk_create_send(zkl_session_t *s, const char *path,
                                  const char *data, int len, int flags);
int zkl__zk_create_wait(zkl__zcall_t *k, int64_t deadline, char **made,
                        struct Stat *st);
zkl__zcall_t *zkl__zk_get_send(zkl_session_t *s, const char *path,
                               int watch);
int zkl__zk_get_wait(zkl__zcall_t *k, int64_t deadline, char **value,
                     int *len, struct Stat *st);
zkl__zcall_t *zkl__zk_exists_send(zkl_session_t *s, const char *path,
                                  int watch);
int zkl__zk_exists_wait(zkl__zcall_t *k, int64_t deadline, struct Stat *st);
/* Sends the creates of path's missing ancestors (CONTAINER nodes, each
 * its own request: one that exists fails alone); a request sent after
 * them is applied after them.  The records (*n), or NULL without memory;
 * zkl__zk_parents_end() takes their answers (ignored) and frees them, once
 * a later request's answer is in. */
zkl__zcall_t **zkl__zk_parents_send(zkl_session_t *s, const char *path,
                                     size_t *n);
void zkl__zk_parents_end(zkl__zcall_t **zs, size_t n);
/* setData of that version (-1: any); the wait gives the node's new stat */
zkl__zcall_t *zkl__zk_set_send(zkl_session_t *s, const char *path,
                               const char *data, int len, int version);
int zkl__zk_set_wait(zkl__zcall_t *k, int64_t deadline, struct Stat *st);
zkl__zcall_t *zkl__zk_delete_send(zkl_session_t *s, const char *path);
/* A delete of that version only (ZBADVERSION otherwise). */
zkl__zcall_t *zkl__zk_delete_version_send(zkl_session_t *s, const char *path,
                                          int version);
zkl__zcall_t *zkl__zk_release_send(zkl_session_t *s, const char *node);
zkl__zcall_t *zkl__zk_sync_send(zkl_session_t *s, const char *path);
/* The answer's ZooKeeper code (delete, release, sync) */
int zkl__zk_wait(zkl__zcall_t *k, int64_t deadline);
/* For an operation on the engine: fn(arg) is called once the answer is in
 * (at once if it is), on whatever thread brings it, with the record's
 * lock held: it may only post.  It is not called after the record was
 * waited for (a *_wait that timed out detaches it).  k may be NULL. */
void zkl__zcall_notify(zkl__zcall_t *k, void (*fn)(void *), void *arg);
/* The same, but when the answer comes later, fn(arg) runs after the
 * record's lock is released, so that the thread it wakes finds the lock
 * free.  *refs counts the references to arg's memory: the answer takes
 * one before it shows (zkl__zcall_ready()) and drops it once fn has
 * returned; whoever drops the last one calls last(arg) to free it, so
 * arg's owner drops its own (which it holds from the start) instead of
 * waiting for the call to end.  An answer already in (or k NULL): fn(arg)
 * runs at once, on the calling thread, with no reference taken, as
 * zkl__zcall_notify() runs it. */
void zkl__zcall_notify_ref(zkl__zcall_t *k, void (*fn)(void *), void *arg,
                           atomic_int *refs, void (*last)(void *));
/* Is the answer in (or was k never sent)?  Then *_wait returns at once. */
int zkl__zcall_ready(zkl__zcall_t *k);
zkl__zcall_t *zkl__zk_children_send(zkl_session_t *s, const char *path,
                                    int watch);
int zkl__zk_children_wait(zkl__zcall_t *k, int64_t deadline,
                          struct String_vector *out);
/* Frees a listing the two calls above returned (not with ZooKeeper's
 * deallocate_String_vector: the names share one block). */
void zkl__zk_children_free(struct String_vector *v);
/* A holder's release, one multi: setData(node, empty) and then
 * delete(node), atomically; the node's watcher hears NodeDataChanged. */
int zkl__zk_release(zkl_session_t *s, int64_t deadline, const char *node);
/* A multi of the caller's making: creates (with the session's ACL; data
 * and flags as given), deletes and version checks, applied all or none.
 * The ops and what they point to need live only during the send. */
typedef struct zkl__mop {
  int type;         /* ZOO_CREATE_OP, ZOO_DELETE_OP, ZOO_SETDATA_OP or
                       ZOO_CHECK_OP                                    */
  const char *path;
  const char *data; /* create, setData: the data, len bytes            */
  int len;
  int flags;        /* create: ZOO_SEQUENCE, ZOO_EPHEMERAL...          */
  int version;      /* delete, setData, check: -1 any                  */
} zkl__mop_t;
zkl__zcall_t *zkl__zk_multi_send(zkl_session_t *s, const zkl__mop_t *ops,
                                 int n);
/* The multi's code; errs[i] (may be NULL) each op's code; made[i] (may be
 * NULL) the path a create made (malloc'ed) or NULL.  When the multi
 * failed, the op that failed has its own code, the ops after it
 * ZRUNTIMEINCONSISTENCY, and the ops before it (not applied either) the
 * multi's code: the failing op is the last not marked so. */
int zkl__zk_multi_wait(zkl__zcall_t *k, int64_t deadline, int *errs,
                       char **made);
/* The same; when the multi was applied, stats[i] (n entries) is the stat
 * a setData op left (the others' are zero). */
int zkl__zk_multi_wait_stat(zkl__zcall_t *k, int64_t deadline, int *errs,
                            char **made, struct Stat *stats);
/* ZooKeeper's `sync`: afterwards this client's reads see everything the
 * leader had committed when it was sent, even on a lagging follower. */
int zkl__zk_sync(zkl_session_t *s, int64_t deadline, const char *path);
/* Withdraws every watch of `type` (ZooWatcherType) this session has on
 * path, without waiting for the answer. */
void zkl__zk_unwatch(zkl_session_t *s, const char *path, int type);

/* ---- the janitor (janitor.c): nodes nobody else can delete now -------- */

/* Hands the deletion of `node` (or, with node NULL, of every child of root
 * whose name starts with prefix) to the janitor, which does it on the
 * session's thread once the connection is back; dropped if the session is
 * lost (the nodes go with it).  prefix may be NULL when node is given.
 * Only queues and signals, so it may be called from a ZooKeeper
 * completion.  0 or ZKL_ENOMEM. */
int zkl__janitor_add(zkl_session_t *s, const char *root, const char *prefix,
                     const char *node);
/* The same for one node that is to go only while it is an ephemeral node
 * of the session's current session whose data is `data` (len bytes; NULL:
 * any): a queue's claim, whose name another consumer (another session, or
 * another object of this one) may use once ours is gone. */
int zkl__janitor_add_owned(zkl_session_t *s, const char *node,
                           const char *data, int len);
/* The same for a create of unknown outcome whose name says nothing (a
 * tagged contender's): every child of root whose data starts with `tag`
 * (a prefix from zkl__prefix_new(), unique) goes. */
int zkl__janitor_add_tagged(zkl_session_t *s, const char *root,
                            const char *tag);

#endif /* ZKL_CORE_H */
