/* lib/core/contend.c - the contention core every recipe uses.
 *
 * One acquisition: create our EPHEMERAL_SEQUENTIAL node (found again by its
 * uuid prefix after a connection loss), list the children once, and then ask
 * the recipe's driver "granted, or which lower node do I watch?" until
 * granted, the deadline, a cancel or the loss of the session.  A woken waiter
 * never lists the children again: it checks the lower nodes it already knows
 * (none can appear below it later).  A mutex or write-lock holder whose
 * acquisition saw anyone else under the root releases with one multi that
 * changes its node's data and then deletes it, so its watcher hears
 * NodeDataChanged, not NodeDeleted: "left as holder", which proves every
 * lower node gone.  A wake-up thus costs O(1) server work however long the
 * queue, and no request at all after such a release (one read of our own
 * node after a holder that saw nobody else and left with a plain delete).
 * Every exit path that did not grant deletes our node and removes our
 * watch.
 */
#include <errno.h>
#include <stddef.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include "core/contend.h"

/* How often a create may meet a missing parent (a container the server just
 * removed) before giving up: generous, each retry is one round trip. */
#define PARENT_RETRIES 16

/* ---- small helpers ------------------------------------------------------ */

/* wait_turn's verdict when our own node disappeared while we waited */
#define VANISHED ZKL__VANISHED

/* What became of a watched node (watch_and_wait's *left). */
#define STILL_THERE 0 /* or not known: look again                       */
#define GONE 1        /* deleted: a give-up, a lost session, a janitor   */
#define RELEASED 2    /* its data changed: it left as a holder       */

static int retryable(int zrc) {
  return zrc == ZCONNECTIONLOSS || zrc == ZOPERATIONTIMEOUT;
}

/* Maps a ZooKeeper failure to what the caller should hear. */
static int map_zrc(zkl__contender_t *c, int zrc, const char *what) {
  char w[96];
  snprintf(w, sizeof w, "%s on", what);
  return zkl__zrc_fail(c->s, zrc, w, c->root);
}

/* How long an unlock keeps retrying its delete through a connection loss
 * before handing it to the janitor: one session timeout. */
static int64_t cleanup_deadline(zkl__contender_t *c) {
  int t = zkl_session_timeout(c->s);
  return zkl__deadline_after_ms(t > 0 ? t : 10000);
}

/* cancel == NULL: the wait cannot be canceled. */
static int canceled(zkl__contender_t *c, const unsigned *cancel) {
  return cancel != NULL && atomic_load(c->cancel_gen) != *cancel;
}

typedef enum {
  WOKE_NONE, /* still waiting (an operation's look) */
  WOKE_FIRED,
  WOKE_SESSION,
  WOKE_CANCEL,
  WOKE_TIMEOUT
} woke_t;

/* With the session locked: 0 connected, ZKL_ESUSPENDED (to be waited
 * for) or ZKL_ELOST, for c.  With no node of ours yet, a lost session that
 * is being re-established is waited for like a suspended one; a node of
 * ours does not survive it (ZKL_ELOST). */
static int connected_health_locked(zkl__contender_t *c) {
  zkl_session_t *s = c->s;
  int h = zkl__health_locked(s);
  if (h == ZKL_ELOST && c->node == NULL && zkl__session_renews_locked(s))
    h = ZKL_ESUSPENDED;
  else if (h == 0 && c->node != NULL &&
           zkl__session_id_locked(s) != c->session_id)
    h = ZKL_ELOST; /* already re-established: our node went with the old
                      session */
  return h;
}

ptrdiff_t zkl__blocker_exclusive(const zkl__node_t *lower, size_t n) {
  (void)lower;
  return n == 0 ? -1 : (ptrdiff_t)n - 1;
}

/* ---- contender lifetime ---------------------------------------------------- */

int zkl__contender_init(zkl__contender_t *c, zkl_session_t *s,
                        const zkl__driver_t *drv, const char *path,
                        const void *data, size_t data_len,
                        atomic_uint *cancel_gen) {
  memset(c, 0, sizeof *c);
  c->s = s;
  c->drv = drv;
  c->root_len = strlen(path);
  c->root = strdup(path);
  if (data == NULL) {
    char host[256] = "localhost", buf[300];
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    int n = snprintf(buf, sizeof buf, "%s:%ld", host, (long)getpid());
    c->data = malloc((size_t)n + 1);
    if (c->data != NULL) memcpy(c->data, buf, (size_t)n + 1);
    c->data_len = n;
  } else {
    c->data = malloc(data_len > 0 ? data_len : 1);
    if (c->data != NULL && data_len > 0) memcpy(c->data, data, data_len);
    c->data_len = (int)data_len;
  }
  int rc = c->root == NULL || c->data == NULL ? ZKL_ENOMEM
           : zkl__waiter_init(&c->w) != 0        ? ZKL_ESYSTEM
                                                 : 0;
  if (rc != 0) {
    free(c->root);
    free(c->data);
    return rc;
  }
  zkl__prefix_new(c->prefix);
  c->cancel_gen = cancel_gen;
  zkl__session_ref(s);
  return 0;
}

void zkl__contender_fini(zkl__contender_t *c) {
  /* a wait that ended without unregistering (an observer's listing that
   * failed): nobody may reach the waiter once it is freed */
  zkl__session_lock(c->s);
  zkl__waiter_unregister(c->s, &c->w);
  zkl__session_unlock(c->s);
  zkl__waiter_fini(&c->w);
  free(c->node);
  free(c->root);
  free(c->data);
  zkl__session_unref(c->s);
}

void zkl__contend_cancel(zkl__contender_t *c) {
  zkl__session_lock(c->s);
  zkl__waiter_kick(&c->w);
  zkl__session_unlock(c->s);
}

/* ---- our node and the queue below it ---------------------------------------- */

void zkl__contend_adopt(zkl__contender_t *c, char *path,
                        const struct Stat *st) {
  zkl__node_t n;
  free(c->node);
  c->node = path;
  c->czxid = st->czxid;
  c->owner = st->ephemeralOwner;
  c->seq = zkl__name_parse(path + c->root_len + 1, &n) == 0 ? n.seq : 0;
  /* the session the server made it for (an ephemeral node's owner), not
   * the one current when the answer is read: they differ if the session
   * was replaced in between */
  c->session_id = st->ephemeralOwner != 0 ? st->ephemeralOwner
                                          : zkl_session_id(c->s);
  c->contended = 0; /* a new node: no acquisition has seen anyone yet */
}

/* How many of the contenders below us that can block us a waiter keeps:
 * the nearest ones (memory stays flat however long the queue).  Only when
 * all of them gave up, with no release covering the ones below, does it
 * list the children again. */
#define WINDOW 2

/* A tagged contender's name before its sequence: "w-" and the driver's
 * marker ("w-lock-0000000042"). */
#define TAGGED_NAME "w-"
/* From how many blockers ahead at its last listing a tagged contender
 * joins without listing (a short queue is listed with the create, in the
 * same round trip). */
#define PROBE_AHEAD 4

/* The nearest contenders below our node that can block us, in queue order,
 * from ONE listing.  Nodes created later sort after us, so this list only
 * ever shrinks: it is all a woken waiter needs to re-check. */
struct queue {
  zkl__node_t lower[WINDOW]; /* names are our own copies */
  size_t n;
  int more;       /* blockers below lower[0] were left out */
  int self_seen;  /* the listing showed our own node */
  int listed;     /* filled by the listing sent with our create */
};
typedef struct queue queue_t;
static int queue_fill(zkl__contender_t *c, queue_t *q,
                      const struct String_vector *kids);
static void queue_free(queue_t *q);

/* Hands a create of unknown outcome to the janitor: whatever node it made
 * goes once the connection is back. */
static void janitor_unknown(zkl__contender_t *c) {
  if (c->tagged) zkl__janitor_add_tagged(c->s, c->root, c->prefix);
  else zkl__janitor_add(c->s, c->root, c->prefix, NULL);
}

/* Lets go of our node once the session is lost.  If zkl only declared the
 * session lost (silence) the server may still keep it (a partition that
 * heals, an ensemble that lost its quorum): the janitor deletes the node
 * should the same session come back. */
static void forget_node(zkl__contender_t *c) {
  if (c->node == NULL) return;
  if (!zkl__session_gone(c->s))
    zkl__janitor_add(c->s, c->root, c->prefix, c->node);
  free(c->node);
  c->node = NULL;
}

/* Hands our node to the janitor (no request into a dead connection: it
 * deletes the node once the connection is back) and forgets it. */
static void to_janitor(zkl__contender_t *c) {
  zkl__janitor_add(c->s, c->root, c->prefix, c->node);
  free(c->node);
  c->node = NULL;
}

static void queue_drop(queue_t *q, size_t from, size_t count) {
  for (size_t i = from; i < from + count; i++) free((char *)q->lower[i].name);
  memmove(q->lower + from, q->lower + from + count,
          (q->n - from - count) * sizeof *q->lower);
  q->n -= count;
}

static void queue_free(queue_t *q) {
  queue_drop(q, 0, q->n);
  memset(q, 0, sizeof *q);
}

/* Parses a listing into q: the nearest contenders below our sequence that
 * can block us, picked in one pass (no copy of the listing). */
static int queue_fill(zkl__contender_t *c, queue_t *q,
                      const struct String_vector *kids) {
  const char *self = c->node + c->root_len + 1;
  zkl__node_t near[WINDOW]; /* ascending; names borrowed from kids */
  size_t n = 0;
  c->ahead = 0;
  if (kids->count > 1) c->contended = 1; /* someone besides us */
  for (int i = 0; i < kids->count; i++) {
    zkl__node_t x;
    if (strcmp(kids->data[i], self) == 0) {
      q->self_seen = 1;
      continue;
    }
    /* unknown children are ignored, never fatal */
    if (zkl__name_parse(kids->data[i], &x) != 0 || !c->drv->counts(x.kind) ||
        !c->drv->blocks(x.kind) || zkl__seq_cmp(x.seq, c->seq) >= 0)
      continue;
    c->ahead++;
    if (n == WINDOW) { /* full: x replaces the lowest, if above it */
      q->more = 1;
      if (zkl__node_cmp(&x, &near[0]) < 0) continue;
      memmove(near, near + 1, --n * sizeof *near);
    }
    size_t at = n++;
    for (; at > 0 && zkl__node_cmp(&x, &near[at - 1]) < 0; at--)
      near[at] = near[at - 1];
    near[at] = x;
  }
  for (; q->n < n; q->n++) {
    q->lower[q->n] = near[q->n];
    if ((q->lower[q->n].name = strdup(near[q->n].name)) == NULL)
      return ZKL_ENOMEM; /* q->n counts only the names we own */
  }
  return 0;
}

/* A tagged contender's guess at the queue below it, with no listing: the
 * node made just before ours, whose name it knows from our sequence, with
 * `more` set.  The wait then watches it: when it leaves as holder, every
 * node below was gone (granted, no listing); when it gave up or never
 * existed (a node of another name, or of another contender that left),
 * the waiter lists the queue as after any blocker that gave up. */
static int queue_guess(zkl__contender_t *c, queue_t *q) {
  char name[sizeof TAGGED_NAME + 32];
  int32_t below = (int32_t)((uint32_t)c->seq - 1u);
  snprintf(name, sizeof name, "%s%s%010d", TAGGED_NAME, c->drv->marker,
           (int)below);
  memset(q, 0, sizeof *q);
  if (zkl__name_parse(name, &q->lower[0]) != 0 ||
      !c->drv->counts(q->lower[0].kind) || !c->drv->blocks(q->lower[0].kind) ||
      (q->lower[0].name = strdup(name)) == NULL)
    return -1;
  q->n = 1;
  q->more = 1;
  q->self_seen = 1;
  q->listed = 1;
  c->contended = 1; /* a queue too long to list */
  return 0;
}

/* Would a contender coming after every one listed in kids be blocked?
 * ZKL_EBUSY (with a message), 0, or ZKL_ENOMEM. */
int zkl__contend_busy(zkl__contender_t *c, const struct String_vector *kids) {
  zkl__node_t *all = calloc(kids->count > 0 ? (size_t)kids->count : 1,
                            sizeof *all);
  if (all == NULL) return ZKL_ENOMEM;
  size_t n = 0;
  for (int i = 0; i < kids->count; i++)
    if (zkl__name_parse(kids->data[i], &all[n]) == 0 &&
        c->drv->counts(all[n].kind))
      n++;
  zkl__nodes_sort(all, n);
  int rc = c->drv->blocker(all, n) >= 0
               ? zkl__fail(ZKL_EBUSY, "%s is held", c->root)
               : 0;
  free(all);
  return rc;
}

/* ---- watching ------------------------------------------------------------------ */

/* Withdraws a watch we no longer need from the server, without waiting for
 * the answer (a caller giving up must not wait on a dead connection; if the
 * connection is gone, so is the server's watch).  Removing only our
 * watcher would be a client-side removal (ZooKeeper's checkWatches): the
 * server keeps one watch per path and session and drops it only for a
 * remove-all.  Other waiters of this session watching the same path are
 * therefore woken to re-check and re-arm. */
static void drop_watches(zkl__contender_t *c, const char *path,
                         ZooWatcherType type) {
  zkl__zk_unwatch(c->s, path, (int)type);
  zkl__session_lock(c->s);
  zkl__waiters_poke_path(c->s, path);
  zkl__session_unlock(c->s);
}

static void drop_watch(zkl__contender_t *c, const char *path) {
  drop_watches(c, path, ZWATCHTYPE_DATA);
}

/* ---- operations: the protocol as steps the engine runs ---------------------
 *
 * An acquisition or a release is an operation: a record the session's
 * engine (engine.c) runs whenever something it waits for may have
 * happened (an answer, a watch, a session change, a cancel, its timer),
 * on the engine's thread, never blocking there.  A pending operation
 * holds no thread; the blocking calls start one and wait for its end.
 *
 * Each step function below reads as the sequential protocol it is: it is
 * a protothread (Dunkels' technique, hand-written here): AWAIT returns
 * to the engine and the next run resumes at the same line, so whatever
 * must survive a wait lives in the operation, not in locals.  A step
 * function's own line counter says where it stands; it is 0 again
 * whenever the function has returned its result (PT_RETURN). */

/* Sends a request (k = the send) and waits for its answer or c->dl. */
#define PT_REQUEST(o, pt, k, send)                                    \
  do {                                                                \
    (k) = (send);                                                     \
    op_notify((o), (k));                                              \
    PT_AWAIT(o, pt, zkl__zcall_ready(k) || zkl__now_ns() >= (o)->c->dl, \
             (o)->c->dl);                                             \
  } while (0)

enum {
  OP_ACQUIRE,
  OP_RELEASE,
  OP_RELEASE_NOWAIT,
  OP_HOLD,       /* until the hold is gone (a loop's hold watch)         */
  OP_HOLD_TURN,  /* until the hold is gone, or anything else moved       */
  OP_OWNED,      /* is our node still there, and our session's?          */
  OP_CONNECTED,  /* until the session is connected (a new one, after LOST) */
  OP_FIRED,      /* until the registered waiter fires                    */
  OP_CUSTOM      /* a recipe's own step function (zkl__op_run)           */
};

/* Where a blocking call's thread sleeps between its operation's steps
 * (op_run_sync_step). */
struct op_wait {
  pthread_mutex_t mu;
  pthread_cond_t cv; /* CLOCK_MONOTONIC: timed waits for o->wake_at */
  int posted;
};

struct zkl__op {
  zkl__job_t job;           /* first: the engine's record               */
  zkl__contender_t *c;
  zkl__engine_t *e;         /* c's session's: posts reach it without c  */
  int what;                 /* OP_*                                     */
  int64_t deadline;         /* the caller's (ZKL__TRY, ZKL__FOREVER)    */
  int64_t started_ns;       /* OP_ACQUIRE: when it began (its counters) */
  unsigned cancel_seen;
  int64_t wake_at;          /* the timer of the wait in progress        */
  char *detail;             /* the last detail message it recorded      */
  zkl__op_done_fn done;
  void *arg;
  zkl__step_fn step;        /* OP_CUSTOM: the recipe's step and state   */
  void *ctx;
  int rel_nowait;           /* OP_CUSTOM: zkl__op_release()'s kind      */
  /* where each step function stands (0: not running) */
  pt_t pt_main, pt_conn, pt_create, pt_root, pt_recover, pt_find, pt_list,
      pt_peek, pt_self, pt_turn, pt_watch, pt_arm, pt_confirm, pt_abandon,
      pt_delete, pt_once;
  zkl__zcall_t *k, *k2;     /* requests in flight                       */
  zkl__zcall_t *kl;         /* a blocking call's own listing, sent with
                               its create (create_node)                  */
  /* A blocking call's operation runs on the caller's thread (no hop
   * through the engine on the way to the grant): posts wake it here.
   * NULL: the engine runs it. */
  struct op_wait *sync;     /* &wait, or NULL                           */
  struct op_wait wait;
  /* References to o's memory: its owner's (the engine's run, or the
   * blocking caller), and one per answer's post under way (op_notify).
   * The last one frees it (op_put), so that an owner whose operation has
   * ended goes on without waiting for a post to finish. */
  atomic_int refs;
  woke_t why;               /* what ended the last wait                 */
  int fired, fired_type, self_fired; /* the waiter, read as it ended   */
  /* the acquisition */
  queue_t q;
  int attempt, granted, rc;
  /* await_connected */
  int conn_h;
  unsigned conn_epoch;
  /* create_node, ensure_root, recover_create, find_mine */
  char *want_path, *root_path, *found_path;
  char *want_data;          /* a tagged contender's: prefix, then data  */
  int want_len, probe;      /* probe: no listing with the create        */
  int parent_tries, tries, root_tries, create_rc, root_rc, recover_rc,
      find_rc, found, zrc, lrc;
  int ki;
  struct String_vector kids;
  /* wait_turn, watch_and_wait */
  ptrdiff_t idx;
  int self, left, turn_rc, watch_rc, wzrc, wsrc;
  int went;                 /* a blocker went without a release mark    */
  int gone_first;           /* the getData found the target gone         */
  int self_after;           /* our node seen after the blocker was gone  */
  unsigned w_epoch;
  /* hold_turn: the epoch it started from; owned: whether to look even
   * when the acquisition's look is fresh */
  unsigned epoch0;
  int fresh;
  /* delete_node, delete_once */
  int mark, del_attempt, maybe_applied, del_rc, once_rc;
  /* the shared listing our create is answered with (create_node) */
  struct listing *lst;
  zkl__op_t *lst_next;      /* among the listing's waiters              */
  /* admission of an async create (create_node): let in, or waiting; let
   * in by another's answer and not sent yet */
  int admitted, adm_queued, adm_unsent;
  zkl__op_t *adm_next;
};

static const unsigned *op_cancel(zkl__op_t *o) {
  return o->what == OP_RELEASE || o->what == OP_RELEASE_NOWAIT
             ? NULL
             : &o->cancel_seen;
}

/* Does a release through o never wait for a connection? */
static int op_nowait(const zkl__op_t *o) {
  return o->what == OP_RELEASE_NOWAIT ||
         (o->what == OP_CUSTOM && o->rel_nowait);
}

static void op_wait_poke(struct op_wait *w);
static void op_post(void *arg);
static void op_last(void *arg);

/* o's run goes on once k's answer is in.  The post comes after the
 * record's lock is released (the woken thread's first look at k would
 * otherwise wait for it); a reference in o->refs keeps o alive meanwhile,
 * even past the operation's end. */
static void op_notify(zkl__op_t *o, zkl__zcall_t *k) {
  zkl__zcall_notify_ref(k, op_post, o, &o->refs, op_last);
}

/* Posts o to whoever runs it: its engine, or the thread of the blocking
 * call it belongs to (a request's answer is in, a watch fired...).  A post
 * that comes after o's end (op_notify's, late) wakes nobody: the engine
 * ignores a job it has forgotten, and nobody waits on o->wait any more.
 * o->c is not touched: it may be gone by then. */
static void op_post(void *arg) {
  zkl__op_t *o = arg;
  if (o->sync != NULL) op_wait_poke(o->sync);
  else zkl__engine_post(o->e, &o->job);
}

/* The contender's waiter wakes its operation (the session is locked). */
static void op_waiter_wake(zkl__waiter_t *w) {
  zkl__contender_t *c =
      (zkl__contender_t *)(void *)((char *)w - offsetof(zkl__contender_t, w));
  if (c->op != NULL) op_post(c->op);
}

/* Has the wait on c's waiter ended (and why)?  When it has, the waiter's
 * findings are copied into o and it is unregistered, in one look. */
static woke_t op_woke(zkl__op_t *o, unsigned epoch, int64_t deadline,
                      const unsigned *cancel) {
  zkl__contender_t *c = o->c;
  zkl__session_lock(c->s);
  woke_t why = c->w.fired || c->w.self_fired        ? WOKE_FIRED
               : zkl__session_epoch(c->s) != epoch  ? WOKE_SESSION
               : canceled(c, cancel)                ? WOKE_CANCEL
               : deadline == ZKL__TRY || zkl__now_ns() >= deadline
                   ? WOKE_TIMEOUT
                   : WOKE_NONE;
  if (why != WOKE_NONE) {
    o->fired = c->w.fired;
    o->fired_type = c->w.fired_type;
    o->self_fired = c->w.self_fired;
    zkl__waiter_unregister(c->s, &c->w);
  }
  zkl__session_unlock(c->s);
  return why;
}

/* The waiter as it is now, unregistered (a wait that was not waited). */
static void op_unwait(zkl__op_t *o) {
  zkl__contender_t *c = o->c;
  zkl__session_lock(c->s);
  o->fired = c->w.fired;
  o->fired_type = c->w.fired_type;
  o->self_fired = c->w.self_fired;
  zkl__waiter_unregister(c->s, &c->w);
  zkl__session_unlock(c->s);
}

/* The session's epoch, read under its lock. */
static unsigned epoch_now(zkl_session_t *s) {
  zkl__session_lock(s);
  unsigned e = zkl__session_epoch(s);
  zkl__session_unlock(s);
  return e;
}

/* Until the session is connected (connected_health_locked() says 0): 0,
 * ZKL_ELOST, ZKL_ETIMEDOUT (the deadline) or ZKL_ECANCELED. */
static int op_await_connected(zkl__op_t *o, int64_t deadline,
                              const unsigned *cancel) {
  zkl__contender_t *c = o->c;
  pt_t *pt = &o->pt_conn;
  PT_BEGIN(pt);
  for (;;) {
    zkl__session_lock(c->s);
    o->conn_h = connected_health_locked(c);
    if (o->conn_h == ZKL_ESUSPENDED) {
      zkl__waiter_register(c->s, &c->w, NULL);
      o->conn_epoch = zkl__session_epoch(c->s);
    }
    zkl__session_unlock(c->s);
    if (o->conn_h == 0) PT_RETURN(pt, 0);
    if (o->conn_h == ZKL_ELOST) PT_RETURN(pt, ZKL_ELOST);
    PT_AWAIT(o, pt,
             (o->why = op_woke(o, o->conn_epoch, deadline, cancel)) !=
                 WOKE_NONE,
             deadline);
    if (o->why == WOKE_CANCEL) PT_RETURN(pt, ZKL_ECANCELED);
    if (o->why == WOKE_TIMEOUT) PT_RETURN(pt, ZKL_ETIMEDOUT);
  }
  PT_END(pt);
  return 0;
}

/* ---- our node: create, find again, delete (steps) --------------------------- */

/* Creates the root and its missing ancestors as CONTAINER nodes, which the
 * server removes again once they are empty (lock roots do not pile up):
 * the deepest first, going up one level at each ZNONODE. */
static int op_ensure_root(zkl__op_t *o) {
  zkl__contender_t *c = o->c;
  pt_t *pt = &o->pt_root;
  PT_BEGIN(pt);
  if ((o->root_path = strdup(c->root)) == NULL) PT_RETURN(pt, ZSYSTEMERROR);
  o->root_rc = ZNONODE;
  for (o->root_tries = 0; o->root_tries < PARENT_RETRIES * 8;
       o->root_tries++) {
    PT_REQUEST(o, pt, o->k,
               zkl__zk_create_send(c->s, o->root_path, NULL, -1,
                                   ZOO_CONTAINER));
    o->root_rc = zkl__zk_create_wait(o->k, c->dl, NULL, NULL);
    o->k = NULL;
    size_t len = strlen(o->root_path);
    if (o->root_rc == ZOK || o->root_rc == ZNODEEXISTS) {
      o->root_rc = 0;
      if (len == c->root_len) break;
      o->root_path[len] = '/'; /* the level below, cut off before */
      continue;
    }
    if (o->root_rc != ZNONODE) break;
    char *slash = strrchr(o->root_path, '/');
    if (slash == o->root_path) break; /* "/" always exists */
    *slash = '\0';
  }
  free(o->root_path);
  o->root_path = NULL;
  PT_RETURN(pt, o->root_rc);
  PT_END(pt);
  return 0;
}

/* Looks for a child carrying our prefix and adopts it.  1 found, 0 not
 * there (o->find_rc ZOK or ZNONODE: it was never created), or 0 with
 * another o->find_rc when the answer is not known. */
static int op_find_mine(zkl__op_t *o) {
  zkl__contender_t *c = o->c;
  pt_t *pt = &o->pt_find;
  PT_BEGIN(pt);
  o->found = 0;
  /* a lagging follower may not have applied our create yet */
  PT_REQUEST(o, pt, o->k, zkl__zk_sync_send(c->s, c->root));
  o->find_rc = zkl__zk_wait(o->k, c->dl);
  o->k = NULL;
  if (o->find_rc == ZOK) {
    PT_REQUEST(o, pt, o->k, zkl__zk_children_send(c->s, c->root, 0));
    o->find_rc = zkl__zk_children_wait(o->k, c->dl, &o->kids);
    o->k = NULL;
  }
  for (o->ki = 0; o->find_rc == ZOK && o->ki < o->kids.count && !o->found;
       o->ki++) {
    const char *kid = o->kids.data[o->ki];
    if (!(c->tagged ? zkl__name_is_mine(kid, TAGGED_NAME)
                    : zkl__name_is_mine(kid, c->prefix)))
      continue;
    size_t len = c->root_len + 1 + strlen(kid) + 1;
    if ((o->found_path = malloc(len)) == NULL) {
      o->find_rc = ZSYSTEMERROR;
      break;
    }
    snprintf(o->found_path, len, "%s/%s", c->root, kid);
    /* a tagged contender's node is told by its data, read */
    PT_REQUEST(o, pt, o->k,
               c->tagged ? zkl__zk_get_send(c->s, o->found_path, 0)
                         : zkl__zk_exists_send(c->s, o->found_path, 0));
    struct Stat st;
    int erc;
    if (c->tagged) {
      char *data = NULL;
      int dlen = 0;
      erc = zkl__zk_get_wait(o->k, c->dl, &data, &dlen, &st);
      if (erc == ZOK && (data == NULL || dlen < ZKL__PREFIX_LEN ||
                         memcmp(data, c->prefix, ZKL__PREFIX_LEN) != 0))
        erc = ZNONODE; /* another's */
      free(data);
    } else {
      erc = zkl__zk_exists_wait(o->k, c->dl, &st);
    }
    o->k = NULL;
    if (erc == ZOK) {
      zkl__contend_adopt(c, o->found_path, &st);
      o->found = 1;
    } else {
      free(o->found_path);
      o->find_rc = erc == ZNONODE ? ZOK : erc;
    }
    o->found_path = NULL;
  }
  zkl__zk_children_free(&o->kids);
  PT_RETURN(pt, o->found);
  PT_END(pt);
  return 0;
}

/* ---- listings shared by the creates of one engine turn ------------------------
 *
 * A contender lists the root right after its create (the server answers a
 * session's requests in order, so the listing holds its node).  When many
 * contenders of one session queue at once (a loop submitting thousands of
 * async locks), one listing sent after all their creates serves them all:
 * the ops that sent their create join the root's open listing, which the
 * engine sends once they have run (its job is queued behind them), parses
 * and sorts once, and each op finds itself in it by binary search.  N
 * contenders then cost one listing, not N listings of up to N names.
 * Everything here runs on the session's engine thread, except the open
 * listings' registry (one for every session), which has its own lock. */

enum { LST_OPEN, LST_SENT, LST_DONE };

typedef struct listing {
  zkl__job_t job;           /* first: sends it, then wakes its waiters   */
  struct listing *next;     /* in the registry while open                */
  zkl_session_t *s;
  char *root;
  int state, refs, rc;      /* refs: the ops holding it and the job      */
  zkl__zcall_t *k;
  struct String_vector kids;
  zkl__node_t *sorted;      /* the contenders, in queue order (lazily)   */
  size_t n;
  int parsed;
  zkl__op_t *waiters;       /* ops waiting for the answer                */
} listing_t;

static pthread_mutex_t open_mu = PTHREAD_MUTEX_INITIALIZER;
static listing_t *open_listings;

static void listing_unref(listing_t *l) {
  if (--l->refs > 0) return;
  zkl__zk_children_free(&l->kids);
  free(l->sorted);
  free(l->root);
  free(l);
}

static void listing_post(void *arg) {
  listing_t *l = arg;
  zkl__engine_post(zkl__session_engine(l->s), &l->job);
}

static void listing_run(zkl__job_t *j) {
  listing_t *l = (listing_t *)j;
  if (l->state == LST_OPEN) { /* every op queued before it has joined */
    pthread_mutex_lock(&open_mu);
    for (listing_t **p = &open_listings; *p != NULL; p = &(*p)->next)
      if (*p == l) {
        *p = l->next;
        break;
      }
    pthread_mutex_unlock(&open_mu);
    l->state = LST_SENT;
    l->k = zkl__zk_children_send(l->s, l->root, 0);
    zkl__zcall_notify(l->k, listing_post, l);
    return;
  }
  if (l->state != LST_SENT || !zkl__zcall_ready(l->k)) return;
  l->rc = zkl__zk_children_wait(l->k, ZKL__FOREVER, &l->kids);
  l->k = NULL;
  l->state = LST_DONE;
  for (zkl__op_t *o = l->waiters, *next; o != NULL; o = next) {
    next = o->lst_next;
    o->lst_next = NULL;
    op_post(o);
  }
  l->waiters = NULL;
  listing_unref(l); /* the job's */
}

/* Joins the open listing of c's root on c's session (one is made and
 * queued if there is none): it will be sent after o's create, already
 * sent.  NULL without memory (the caller then lists on its own). */
static listing_t *listing_join(zkl__op_t *o) {
  zkl__contender_t *c = o->c;
  pthread_mutex_lock(&open_mu);
  listing_t *l = open_listings;
  while (l != NULL && (l->s != c->s || strcmp(l->root, c->root) != 0))
    l = l->next;
  int made = l == NULL;
  if (made && (l = calloc(1, sizeof *l)) != NULL &&
      (l->root = strdup(c->root)) == NULL) {
    free(l);
    l = NULL;
  }
  if (made && l != NULL) {
    l->job.run = listing_run;
    l->s = c->s;
    l->refs = 1; /* the job's */
    l->next = open_listings;
    open_listings = l;
  }
  if (l != NULL) {
    l->refs++;
    o->lst_next = l->waiters;
    l->waiters = o;
  }
  pthread_mutex_unlock(&open_mu);
  if (made && l != NULL) listing_post(l);
  return l;
}

/* o no longer waits for (or uses) its listing. */
static void listing_leave(zkl__op_t *o) {
  listing_t *l = o->lst;
  if (l == NULL) return;
  for (zkl__op_t **p = &l->waiters; *p != NULL; p = &(*p)->lst_next)
    if (*p == o) {
      *p = o->lst_next;
      break;
    }
  o->lst_next = NULL;
  o->lst = NULL;
  listing_unref(l);
}

/* ---- admission: how many async creates a session has in flight -------------
 * A loop may submit 10,000 acquisitions in one go.  Sent all at once, their
 * creates and the client's buffers for them (about 700 bytes each) would
 * be in flight together, leaving megabytes of holes in the heap once
 * answered, and a burst the server must absorb.  So at most ADMIT_WINDOW
 * async creates of a session are in flight; the others wait in arrival
 * order (FIFO: their nodes are made in the order the calls were made), and
 * are let in by halves, so that each batch still shares one listing.
 * Blocking calls are not counted: each has its own thread. */

#define ADMIT_WINDOW 512

typedef struct admission {
  struct admission *next;
  zkl_session_t *s;
  int inflight;
  int unsent;             /* let in by admit_done, create not sent yet  */
  zkl__op_t *head, *tail; /* waiting, FIFO (adm_next) */
} admission_t;

static admission_t *admissions; /* under open_mu */

static admission_t *admission_of(zkl_session_t *s, int make) {
  admission_t *a = admissions;
  while (a != NULL && a->s != s) a = a->next;
  if (a == NULL && make && (a = calloc(1, sizeof *a)) != NULL) {
    a->s = s;
    a->next = admissions;
    admissions = a;
  }
  return a;
}

static void admission_drop_locked(admission_t *a) {
  if (a->inflight > 0 || a->unsent > 0 || a->head != NULL) return;
  for (admission_t **p = &admissions; *p != NULL; p = &(*p)->next)
    if (*p == a) {
      *p = a->next;
      break;
    }
  free(a);
}

/* 1: o may send its create now; 0: o waits (o->admitted once let in). */
static int admit(zkl__op_t *o) {
  pthread_mutex_lock(&open_mu);
  admission_t *a = admission_of(o->c->s, 1);
  /* nobody waiting, nobody let in before and not yet sent: FIFO */
  int now = a == NULL || (a->head == NULL && a->unsent == 0 &&
                          a->inflight < ADMIT_WINDOW);
  if (a != NULL && now) a->inflight++;
  else if (a != NULL) {
    o->adm_queued = 1;
    o->adm_next = NULL;
    if (a->tail != NULL) a->tail->adm_next = o;
    else a->head = o;
    a->tail = o;
  }
  o->admitted = now && a != NULL;
  pthread_mutex_unlock(&open_mu);
  return now;
}

/* o's create was answered (or o ends): the next ones may go, by halves. */
static void admit_done(zkl__op_t *o) {
  if (!o->admitted) return;
  o->admitted = 0;
  zkl__op_t *go = NULL;
  pthread_mutex_lock(&open_mu);
  admission_t *a = admission_of(o->c->s, 0);
  if (a != NULL) {
    a->inflight--;
    if (a->inflight <= ADMIT_WINDOW / 2)
      while (a->head != NULL && a->inflight < ADMIT_WINDOW) {
        zkl__op_t *x = a->head;
        a->head = x->adm_next;
        if (a->head == NULL) a->tail = NULL;
        x->adm_queued = 0;
        x->admitted = 1;
        x->adm_unsent = 1;
        a->unsent++;
        a->inflight++;
        x->adm_next = go; /* reversed: put back in order below */
        go = x;
      }
    admission_drop_locked(a);
  }
  pthread_mutex_unlock(&open_mu);
  zkl__op_t *in_order = NULL;
  while (go != NULL) {
    zkl__op_t *x = go;
    go = x->adm_next;
    x->adm_next = in_order;
    in_order = x;
  }
  while (in_order != NULL) { /* posted together: they share a listing */
    zkl__op_t *x = in_order;
    in_order = x->adm_next;
    x->adm_next = NULL;
    op_post(x);
  }
}

/* o, let in by admit_done(), sends its create now (or ends). */
static void admit_sent(zkl__op_t *o) {
  if (!o->adm_unsent) return;
  o->adm_unsent = 0;
  pthread_mutex_lock(&open_mu);
  admission_t *a = admission_of(o->c->s, 0);
  if (a != NULL) {
    a->unsent--;
    admission_drop_locked(a);
  }
  pthread_mutex_unlock(&open_mu);
}

/* o no longer waits to be let in (canceled, timed out, freed). */
static void admit_leave(zkl__op_t *o) {
  if (!o->adm_queued) return;
  pthread_mutex_lock(&open_mu);
  admission_t *a = admission_of(o->c->s, 0);
  if (a != NULL) {
    zkl__op_t *prev = NULL;
    for (zkl__op_t *x = a->head; x != NULL; prev = x, x = x->adm_next)
      if (x == o) {
        if (prev != NULL) prev->adm_next = o->adm_next;
        else a->head = o->adm_next;
        if (a->tail == o) a->tail = prev;
        break;
      }
    admission_drop_locked(a);
  }
  o->adm_queued = 0;
  o->adm_next = NULL;
  pthread_mutex_unlock(&open_mu);
}

/* Fills o's queue from its (answered) listing: the contenders sorted
 * once, our node found by binary search, the blockers below it collected
 * as queue_fill() does.  0, or -1 to list on our own (no memory, or an
 * order the search cannot trust: a sequence counter that wrapped). */
static int listing_fill(zkl__op_t *o) {
  zkl__contender_t *c = o->c;
  listing_t *l = o->lst;
  queue_t *q = &o->q;
  if (!l->parsed) {
    l->parsed = 1;
    l->sorted = calloc(l->kids.count > 0 ? (size_t)l->kids.count : 1,
                       sizeof *l->sorted);
    for (int i = 0; l->sorted != NULL && i < l->kids.count; i++)
      if (zkl__name_parse(l->kids.data[i], &l->sorted[l->n]) == 0) l->n++;
    if (l->sorted != NULL) zkl__nodes_sort(l->sorted, l->n);
  }
  zkl__node_t self;
  if (l->sorted == NULL ||
      zkl__name_parse(c->node + c->root_len + 1, &self) != 0)
    return -1;
  size_t lo = 0, hi = l->n; /* the first entry not below us */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (zkl__node_cmp(&l->sorted[mid], &self) < 0) lo = mid + 1;
    else hi = mid;
  }
  if (lo == l->n || strcmp(l->sorted[lo].name, self.name) != 0) return -1;
  memset(q, 0, sizeof *q);
  q->self_seen = 1;
  zkl__node_t near[WINDOW];
  size_t n = 0;
  int ahead = 0; /* counted up to PROBE_AHEAD */
  for (size_t i = lo; i-- > 0 && ahead < PROBE_AHEAD;) {
    const zkl__node_t *x = &l->sorted[i];
    if (!c->drv->counts(x->kind) || !c->drv->blocks(x->kind)) continue;
    if (zkl__seq_cmp(x->seq, c->seq) >= 0) return -1; /* not sorted below */
    ahead++;
    if (n == WINDOW) q->more = 1;
    else near[n++] = *x; /* nearest first */
  }
  c->ahead = ahead;
  for (; q->n < n; q->n++) { /* ascending, as queue_fill() keeps them */
    q->lower[q->n] = near[n - 1 - q->n];
    if ((q->lower[q->n].name = strdup(near[n - 1 - q->n].name)) == NULL) {
      queue_free(q);
      return -1;
    }
  }
  if (l->kids.count > 1) c->contended = 1; /* someone besides us */
  q->listed = 1;
  return 0;
}

/* After a create whose reply was lost: did it happen?  0 adopted our node,
 * 1 it did not happen (create again), <0 gave up: the janitor deletes the
 * node if it exists once the connection is back.  Never a second node. */
static int op_recover_create(zkl__op_t *o) {
  zkl__contender_t *c = o->c;
  pt_t *pt = &o->pt_recover;
  PT_BEGIN(pt);
  for (;;) {
    PT_CALL(pt, o->recover_rc,
            op_await_connected(o, o->deadline, op_cancel(o)));
    if (o->recover_rc != 0) { /* a lost session zkl only declared may live */
      if (o->recover_rc != ZKL_ELOST || !zkl__session_gone(c->s))
        janitor_unknown(c);
      PT_RETURN(pt, o->recover_rc);
    }
    PT_CALL(pt, o->found, op_find_mine(o));
    if (o->found) PT_RETURN(pt, 0);
    if (o->find_rc == ZOK || o->find_rc == ZNONODE) PT_RETURN(pt, 1);
    if (!retryable(o->find_rc)) { /* refused, or no answer in time */
      janitor_unknown(c);
      PT_RETURN(pt, map_zrc(c, o->find_rc, "create"));
    }
  }
  PT_END(pt);
  return 0;
}

/* Are the answers to o's create and to what lists with it in?  A blocking
 * caller is woken once for its create and listing, at the listing's
 * answer: the server answers a session's requests in order and the client
 * completes them in order on one thread, so the create's is in by then,
 * and a wake-up and a sleep per acquisition are saved.  Should the
 * listing's come first all the same (it failed as it was sent, or the
 * handle was replaced between the two sends and the new one answered
 * first), the caller waits for the create's too. */
static int op_create_answered(zkl__op_t *o) {
  if (!zkl__zcall_ready(o->k)) {
    if (o->kl != NULL && zkl__zcall_ready(o->kl)) op_notify(o, o->k);
    return 0;
  }
  return (o->lst == NULL || o->lst->state == LST_DONE) &&
         (o->kl == NULL || zkl__zcall_ready(o->kl));
}

/* Creates our contender node under a fresh prefix (so that a create handed
 * to the janitor can never be mistaken for a later one).  0 or an error; on
 * error no node of ours is left, or the janitor will delete it.
 * The first try sends the listing of the root right behind the create,
 * without waiting: the server answers a session's requests in order, so it
 * already holds our node, and the uncontended path costs one round trip
 * less.  When that listing came back, o->q.listed says so. */
static int op_create_node(zkl__op_t *o) {
  zkl__contender_t *c = o->c;
  pt_t *pt = &o->pt_create;
  PT_BEGIN(pt);
  memset(&o->q, 0, sizeof o->q);
  /* a try is not held back: it sends a create only if the lock is free */
  if (o->sync == NULL && o->deadline != ZKL__TRY && !admit(o)) {
    PT_AWAIT(o, pt,
             o->admitted || canceled(c, op_cancel(o)) ||
                 zkl__now_ns() >= c->dl ||
                 (o->deadline != ZKL__TRY && zkl__now_ns() >= o->deadline),
             o->deadline != ZKL__TRY && o->deadline < c->dl ? o->deadline
                                                             : c->dl);
    admit_sent(o);
    if (!o->admitted) {
      admit_leave(o);
      PT_RETURN(pt, canceled(c, op_cancel(o))
                        ? zkl__fail(ZKL_ECANCELED, "%s: canceled", c->root)
                        : zkl__fail(ZKL_ETIMEDOUT, "%s: not queued in time "
                                    "(waiting to send its create)", c->root));
    }
  }
  zkl__prefix_new(c->prefix);
  size_t want = c->root_len + 1 + ZKL__PREFIX_LEN + strlen(c->drv->marker) + 1;
  if ((o->want_path = malloc(want)) == NULL) PT_RETURN(pt, ZKL_ENOMEM);
  snprintf(o->want_path, want, "%s/%s%s", c->root,
           c->tagged ? TAGGED_NAME : c->prefix, c->drv->marker);
  o->want_len = c->data_len;
  if (c->tagged) { /* the prefix leads the data */
    o->want_len += ZKL__PREFIX_LEN;
    if ((o->want_data = malloc((size_t)o->want_len)) == NULL)
      PT_RETURN(pt, ZKL_ENOMEM); /* want_path: freed with o */
    memcpy(o->want_data, c->prefix, ZKL__PREFIX_LEN);
    memcpy(o->want_data + ZKL__PREFIX_LEN, c->data, (size_t)c->data_len);
  }
  /* a tagged contender that found a long queue last time finds its
   * predecessor by name instead of listing them all (a try lists) */
  o->probe = c->tagged && c->ahead >= PROBE_AHEAD && o->deadline != ZKL__TRY;
  for (o->parent_tries = 0, o->tries = 0;; o->tries++) {
    o->k = zkl__zk_create_send(c->s, o->want_path,
                               c->tagged ? o->want_data : c->data,
                               o->want_len, ZOO_EPHEMERAL_SEQUENTIAL);
    /* the first try is answered with a listing too: shared with the other
     * creates of this engine turn, or a blocking call's own */
    o->lst = o->tries == 0 && o->k != NULL && o->sync == NULL && !o->probe
                 ? listing_join(o)
                 : NULL;
    o->kl = o->tries == 0 && o->k != NULL && o->sync != NULL && !o->probe
                ? zkl__zk_children_send(c->s, c->root, 0)
                : NULL;
    op_notify(o, o->kl != NULL ? o->kl : o->k);
    PT_AWAIT(o, pt, op_create_answered(o) || zkl__now_ns() >= c->dl, c->dl);
    {
      char *made = NULL;
      struct Stat st;
      int zrc = zkl__zk_create_wait(o->k, c->dl, &made, &st);
      o->k = NULL;
      admit_done(o); /* answered (or given up): the next may go */
      if (zrc == ZOK) {
        zkl__contend_adopt(c, made, &st);
        if (o->probe) {
          if (queue_guess(c, &o->q) != 0) queue_free(&o->q); /* lists */
        } else if (o->kl != NULL) {
          struct String_vector kids = {0, NULL};
          if (zkl__zk_children_wait(o->kl, ZKL__TRY, &kids) != ZOK ||
              queue_fill(c, &o->q, &kids) != 0)
            queue_free(&o->q); /* the caller lists on its own */
          else
            o->q.listed = 1;
          zkl__zk_children_free(&kids);
          o->kl = NULL;
        } else if (o->lst == NULL || o->lst->state != LST_DONE ||
                   o->lst->rc != ZOK || listing_fill(o) != 0) {
          queue_free(&o->q); /* the caller lists on its own */
        }
        listing_leave(o);
        o->create_rc = 0;
        break;
      }
      listing_leave(o);
      if (o->kl != NULL) { /* its answer is nobody's */
        struct String_vector none = {0, NULL};
        zkl__zk_children_wait(o->kl, ZKL__TRY, &none);
        zkl__zk_children_free(&none);
        o->kl = NULL;
      }
      if (zrc == ZKL__ZTIMEDOUT) { /* it may still be made: not ours */
        janitor_unknown(c);
        o->create_rc = map_zrc(c, zrc, "create");
        break;
      }
      o->zrc = zrc;
    }
    if (o->zrc == ZNONODE && o->parent_tries++ < PARENT_RETRIES) {
      PT_CALL(pt, o->zrc, op_ensure_root(o)); /* may race the reaper */
      if (o->zrc == ZOK || o->zrc == ZNONODE) continue;
    }
    if (retryable(o->zrc)) {
      PT_CALL(pt, o->create_rc, op_recover_create(o));
      if (o->create_rc == 1) continue;
      break;
    }
    o->create_rc = map_zrc(c, o->zrc, "create");
    break;
  }
  free(o->want_path);
  o->want_path = NULL;
  free(o->want_data);
  o->want_data = NULL;
  PT_RETURN(pt, o->create_rc);
  PT_END(pt);
  return 0;
}

/* One attempt at deleting our node; with `mark` (a holder's release),
 * changing its data first in the same multi, which tells the node's
 * watcher that it left as holder.  A ZooKeeper code. */
static int op_delete_once(zkl__op_t *o, int mark) {
  zkl__contender_t *c = o->c;
  pt_t *pt = &o->pt_once;
  PT_BEGIN(pt);
  if (mark && !c->no_mark) {
    PT_REQUEST(o, pt, o->k, zkl__zk_release_send(c->s, c->node));
    o->once_rc = zkl__zk_wait(o->k, c->dl);
    o->k = NULL;
    if (o->once_rc == ZOK || o->once_rc == ZNONODE ||
        retryable(o->once_rc) || o->once_rc == ZKL__ZTIMEDOUT ||
        zkl__session_health(c->s) == ZKL_ELOST)
      PT_RETURN(pt, o->once_rc);
    /* our node's ACL does not let us write it: plain deletes from now on
     * (the waiter behind then checks the nodes below one by one) */
    c->no_mark = 1;
  }
  PT_REQUEST(o, pt, o->k, zkl__zk_delete_send(c->s, c->node));
  o->once_rc = zkl__zk_wait(o->k, c->dl);
  o->k = NULL;
  PT_RETURN(pt, o->once_rc);
  PT_END(pt);
  return 0;
}

/* Deletes our node, retrying through connection losses until `deadline`;
 * past it the janitor takes over.  Frees c->node in every case.
 *   0               deleted.
 *   ZKL_ELOST       it was already gone (deleted by someone else, or the
 *                   session is lost, which deletes it).
 *   ZKL_ESUSPENDED  the connection is down: the janitor deletes it when
 *                   the connection is back.
 *   other <0        ZooKeeper refused; it goes when the session ends. */
static int op_delete_node(zkl__op_t *o, int mark, int64_t deadline) {
  zkl__contender_t *c = o->c;
  pt_t *pt = &o->pt_delete;
  PT_BEGIN(pt);
  o->del_rc = 0;
  o->maybe_applied = 0;
  for (o->del_attempt = 0; c->node != NULL; o->del_attempt++) {
    PT_CALL(pt, o->zrc, op_delete_once(o, mark));
    if (o->zrc == ZOK) break;
    if (o->zrc == ZNONODE) {
      o->del_rc = o->maybe_applied
                      ? 0
                      : zkl__fail(ZKL_ELOST, "%s was already deleted",
                                  c->node);
      break;
    }
    if (o->zrc == ZKL__ZTIMEDOUT) { /* no answer in time: the janitor's */
      zkl__janitor_add(c->s, c->root, c->prefix, c->node);
      o->del_rc = zkl__fail(ZKL_ESUSPENDED, "no answer from ZooKeeper: %s "
                            "will be deleted by the session's janitor",
                            c->node);
      break;
    }
    if (!retryable(o->zrc)) {
      o->del_rc = map_zrc(c, o->zrc, "delete");
      break;
    }
    o->maybe_applied = 1;
    o->del_rc = ZKL_ETIMEDOUT;
    if (o->del_attempt < 8)
      PT_CALL(pt, o->del_rc, op_await_connected(o, deadline, NULL));
    if (o->del_rc == ZKL_ELOST) {
      forget_node(c);
      break;
    }
    if (o->del_rc != 0) {
      zkl__janitor_add(c->s, c->root, c->prefix, c->node);
      o->del_rc = zkl__fail(ZKL_ESUSPENDED, "connection down: %s will be "
                            "deleted when it is back", c->node);
      break;
    }
  }
  free(c->node);
  c->node = NULL;
  PT_RETURN(pt, o->del_rc);
  PT_END(pt);
  return 0;
}

/* ---- the queue below us (steps) ----------------------------------------------- */

static int op_queue_list(zkl__op_t *o) {
  zkl__contender_t *c = o->c;
  pt_t *pt = &o->pt_list;
  PT_BEGIN(pt);
  for (;;) {
    memset(&o->q, 0, sizeof o->q);
    PT_REQUEST(o, pt, o->k, zkl__zk_children_send(c->s, c->root, 0));
    {
      struct String_vector kids = {0, NULL};
      int zrc = zkl__zk_children_wait(o->k, c->dl, &kids);
      o->k = NULL;
      if (zrc == ZOK) {
        int rc = queue_fill(c, &o->q, &kids);
        zkl__zk_children_free(&kids);
        if (rc != 0) queue_free(&o->q);
        PT_RETURN(pt, rc);
      }
      if (!retryable(zrc)) PT_RETURN(pt, map_zrc(c, zrc, "list"));
    }
    PT_CALL(pt, o->lrc, op_await_connected(o, o->deadline, op_cancel(o)));
    if (o->lrc != 0) PT_RETURN(pt, o->lrc);
  }
  PT_END(pt);
  return 0;
}

/* Trylock's first look, with no write: would we be granted if we queued
 * now?  Asks the driver as if our node came after every contender. */
static int op_peek_busy(zkl__op_t *o) {
  zkl__contender_t *c = o->c;
  pt_t *pt = &o->pt_peek;
  PT_BEGIN(pt);
  for (o->attempt = 0;; o->attempt++) {
    PT_REQUEST(o, pt, o->k, zkl__zk_children_send(c->s, c->root, 0));
    o->zrc = zkl__zk_children_wait(o->k, c->dl, &o->kids);
    o->k = NULL;
    /* the connection dropped under the look: look once more if it is
     * already back (a trylock does not wait for it), else "in doubt" */
    if (!retryable(o->zrc)) break;
    if (o->attempt > 0 || zkl__session_health(c->s) != 0)
      PT_RETURN(pt, zkl__fail(ZKL_ESUSPENDED, "%s: the connection dropped "
                              "while looking", c->root));
  }
  {
    struct String_vector kids = o->kids;
    int zrc = o->zrc;
    o->kids.count = 0;
    o->kids.data = NULL;
    if (zrc == ZNONODE) PT_RETURN(pt, 0); /* no root yet: free */
    if (zrc != ZOK) PT_RETURN(pt, map_zrc(c, zrc, "list"));
    int rc = zkl__contend_busy(c, &kids);
    zkl__zk_children_free(&kids);
    PT_RETURN(pt, rc);
  }
  PT_END(pt);
  return 0;
}

/* Is our node still there?  1 yes, 0 no, or a negative code. */
static int op_self_present(zkl__op_t *o) {
  zkl__contender_t *c = o->c;
  pt_t *pt = &o->pt_self;
  PT_BEGIN(pt);
  for (;;) {
    PT_REQUEST(o, pt, o->k, zkl__zk_exists_send(c->s, c->node, 0));
    {
      struct Stat st;
      int zrc = zkl__zk_exists_wait(o->k, c->dl, &st);
      o->k = NULL;
      if (zrc == ZOK) {
        c->owner = st.ephemeralOwner;
        PT_RETURN(pt, 1);
      }
      if (zrc == ZNONODE) PT_RETURN(pt, 0);
      if (!retryable(zrc)) PT_RETURN(pt, map_zrc(c, zrc, "exists"));
    }
    PT_CALL(pt, o->zrc, op_await_connected(o, o->deadline, op_cancel(o)));
    if (o->zrc != 0) PT_RETURN(pt, o->zrc);
  }
  PT_END(pt);
  return 0;
}

/* root/name into buf: the path, or NULL if it does not fit. */
static const char *child_path(const zkl__contender_t *c, const char *name,
                              char *buf, size_t len) {
  int n = snprintf(buf, len, "%s/%s", c->root, name);
  return n > 0 && (size_t)n < len ? buf : NULL;
}

#define CHILD_PATH_MAX 2048

static void drop_child_watch(zkl__contender_t *c, const char *name) {
  char buf[CHILD_PATH_MAX];
  const char *path = child_path(c, name, buf, sizeof buf);
  if (path != NULL) drop_watch(c, path);
}

/* Sets a data watch on the node `name` under the root: getData, which
 * sets none on a missing node, and right behind it, in the same round
 * trip, an exists watch on our own node (o->k2, for the caller to wait
 * for): the server answers a session's requests in order, so an answer
 * about our node comes from after the look at the predecessor
 * (o->gone_first: that getData found it gone).  A predecessor whose ACL
 * refuses us READ is watched with exists instead, whose watch on a missing
 * node must then be withdrawn. */
static int op_arm_watch(zkl__op_t *o, const char *name) {
  zkl__contender_t *c = o->c;
  pt_t *pt = &o->pt_arm;
  char buf[CHILD_PATH_MAX]; /* (made again at every resumption) */
  const char *target = child_path(c, name, buf, sizeof buf);
  PT_BEGIN(pt);
  o->k = zkl__zk_get_send(c->s, target, 1);
  op_notify(o, o->k);
  o->k2 = zkl__zk_exists_send(c->s, c->node, 1);
  op_notify(o, o->k2);
  PT_AWAIT(o, pt, zkl__zcall_ready(o->k) || zkl__now_ns() >= c->dl, c->dl);
  o->wzrc = zkl__zk_get_wait(o->k, c->dl, NULL, NULL, NULL);
  o->k = NULL;
  o->gone_first = o->wzrc == ZNONODE;
  if (o->wzrc == ZNOAUTH) { /* (this look comes after ours) */
    PT_REQUEST(o, pt, o->k, zkl__zk_exists_send(c->s, target, 1));
    o->wzrc = zkl__zk_exists_wait(o->k, c->dl, NULL);
    o->k = NULL;
    if (o->wzrc == ZNONODE) drop_watch(c, target);
  }
  if (o->wzrc == ZKL__ZTIMEDOUT) drop_watch(c, target); /* may still be set */
  PT_RETURN(pt, o->wzrc);
  PT_END(pt);
  return 0;
}

/* Arms a data watch on the node `name` under the root and waits.  0 with
 * o->left telling what
 * became of the target (STILL_THERE, GONE, RELEASED: its data changed,
 * which only the caller can tell to be a release), or a negative code.
 * Our own node is watched too, in the same round trip: should it go while
 * we wait, we wake; o->self says what is known of it on return (1 there
 * all along, 0 gone, -1 not known), so that a wake-up needs no look at it,
 * and o->self_after that it was there after the target was found gone
 * (the server answered that look first), so that neither does a target
 * that left before we looked. */
static int op_watch_and_wait(zkl__op_t *o, const char *name) {
  zkl__contender_t *c = o->c;
  zkl_session_t *s = c->s;
  pt_t *pt = &o->pt_watch;
  PT_BEGIN(pt);
  o->self = -1;
  o->self_after = o->gone_first = 0;
  /* no request into a dead connection */
  PT_CALL(pt, o->watch_rc, op_await_connected(o, o->deadline, op_cancel(o)));
  if (o->watch_rc != 0) PT_RETURN(pt, o->watch_rc);
  {
    char buf[CHILD_PATH_MAX];
    if (child_path(c, name, buf, sizeof buf) == NULL)
      PT_RETURN(pt, zkl__fail(ZKL_EINVAL, "%s/%s: the path is too long",
                              c->root, name));
  }
  zkl__session_lock(s);
  zkl__waiter_register_child(s, &c->w, c->root, name);
  zkl__waiter_watch_self(s, &c->w, c->node);
  o->w_epoch = zkl__session_epoch(s);
  zkl__session_unlock(s);

  PT_CALL(pt, o->wzrc, op_arm_watch(o, name));
  PT_AWAIT(o, pt, zkl__zcall_ready(o->k2) || zkl__now_ns() >= c->dl, c->dl);
  {
    struct Stat own;
    o->wsrc = zkl__zk_exists_wait(o->k2, c->dl, &own);
    o->k2 = NULL;
    if (o->wsrc == ZOK) c->owner = own.ephemeralOwner;
    else if (o->wsrc == ZNONODE || o->wsrc == ZKL__ZTIMEDOUT)
      drop_watch(c, c->node); /* a watch on a missing node, or maybe set */
  }
  o->left = o->wzrc == ZNONODE ? GONE : STILL_THERE;
  o->why = WOKE_SESSION;
  if (o->wzrc == ZOK && o->wsrc != ZNONODE) {
    PT_AWAIT(o, pt,
             (o->why = op_woke(o, o->w_epoch, o->deadline, op_cancel(o))) !=
                 WOKE_NONE,
             o->deadline);
    if (o->why == WOKE_FIRED && o->fired)
      o->left = o->fired_type == ZOO_DELETED_EVENT   ? GONE
                : o->fired_type == ZOO_CHANGED_EVENT ? RELEASED
                                                     : STILL_THERE;
  } else {
    op_unwait(o);
  }
  o->self = o->wsrc == ZNONODE                  ? 0
            : o->wsrc == ZOK && !o->self_fired ? 1
                                                : -1;
  /* the predecessor was found gone, and our node there after that */
  o->self_after = o->self == 1 && o->gone_first;
  if (o->self == 0) { /* our node is gone: no use watching for our turn */
    if (o->wzrc == ZOK) drop_child_watch(c, name);
    PT_RETURN(pt, 0);
  }
  if (o->wzrc != ZOK && o->wzrc != ZNONODE && !retryable(o->wzrc))
    PT_RETURN(pt, map_zrc(c, o->wzrc, "watch"));
  if (o->why == WOKE_CANCEL || o->why == WOKE_TIMEOUT) {
    drop_child_watch(c, name); /* not our own node's: it goes with the node */
    PT_RETURN(pt, o->why == WOKE_CANCEL ? ZKL_ECANCELED : ZKL_ETIMEDOUT);
  }
  if (o->left == STILL_THERE && (o->wzrc != ZOK || o->why == WOKE_SESSION)) {
    /* connection trouble: wait it out, then look again (the same session
     * keeps its watches; a new one has no node of ours anyway) */
    PT_CALL(pt, o->watch_rc,
            op_await_connected(o, o->deadline, op_cancel(o)));
    if (o->watch_rc == ZKL_ETIMEDOUT || o->watch_rc == ZKL_ECANCELED)
      drop_child_watch(c, name);
    PT_RETURN(pt, o->watch_rc);
  }
  PT_RETURN(pt, 0);
  PT_END(pt);
  return 0;
}

/* Waits until the driver grants us, given the queue below us.  0 granted,
 * VANISHED if our own node disappeared meanwhile, or a negative code. */
static int op_wait_turn(zkl__op_t *o) {
  zkl__contender_t *c = o->c;
  queue_t *q = &o->q;
  pt_t *pt = &o->pt_turn;
  PT_BEGIN(pt);
  o->turn_rc = 0;
  o->went = 0;
  o->self = 1; /* our node: 1 known there since the last wait, -1 not
                  known (0: gone) */
  for (;;) {
    o->idx = c->drv->blocker(q->lower, q->n);
    if (o->idx < 0 && q->more) {
      /* every blocker we kept gave up, and no release covered the ones
       * below them: list again (rare) */
      queue_free(q);
      PT_CALL(pt, o->turn_rc, op_queue_list(o));
      if (o->turn_rc != 0) break;
      if (!(o->self = q->self_seen)) {
        o->turn_rc = VANISHED;
        break;
      }
      o->went = 0; /* the server's answer showed our node */
      continue;
    }
    if (o->idx < 0) {
      /* After a wait, make sure nobody deleted our node meanwhile: the
       * ones behind us would already have passed us.  And when a blocker
       * went without a release mark, read our node whatever the wait saw:
       * a session's end deletes its nodes together, and the deletion of
       * a blocker of ours may be told before ours (a session closed by
       * another handle, whose old connection still brings the events
       * but answers nothing): only an answer of the server says our node
       * is still there. */
      if (o->self < 0 || o->went) {
        PT_CALL(pt, o->turn_rc, op_self_present(o));
        if (o->turn_rc >= 0) o->turn_rc = o->turn_rc == 1 ? 0 : VANISHED;
      }
      break;
    }
    if (o->deadline == ZKL__TRY) {
      o->turn_rc = zkl__fail(ZKL_EBUSY, "%s is held", c->root);
      break;
    }
    o->left = STILL_THERE;
    c->contended = 1;
    /* the name stays in the queue (and valid) until the wait is over */
    PT_CALL(pt, o->turn_rc,
            op_watch_and_wait(o, q->lower[o->idx].name));
    if (o->turn_rc != 0) break;
    if (o->self == 0) {
      o->turn_rc = VANISHED;
      break;
    }
    /* A data change is a release only from a kind of node whose zkl
     * holders leave that way; from any other it means nothing. */
    if (o->left == RELEASED &&
        !zkl__kind_marks_release(q->lower[o->idx].kind))
      o->left = STILL_THERE;
    if (o->left == STILL_THERE) continue; /* reconnected, ...: look again */
    if (o->left == RELEASED) {
      /* it held the lock, so every node below it, kept or left out, was
       * gone when it did (and none can appear below later) */
      queue_drop(q, 0, (size_t)o->idx + 1);
      q->more = 0;
    } else { /* it gave up or its session ended: the next one down */
      /* a node of a kind that marks its release went unmarked: read our
       * own node before any grant (below); a kind that never marks
       * (latch, kazoo, ...) leaves that way at every handoff, and the
       * watch on our own node stands as before.  Not needed when our
       * look found it gone already and the exists sent behind that look
       * found our node: answered after it, that answer is the read.  (A
       * `went` set earlier stays: a departure told by an event moves no
       * answer's zxid, so a later read could come from a lagging server
       * that has not seen it yet.) */
      if (zkl__kind_marks_release(q->lower[o->idx].kind) && !o->self_after)
        o->went = 1;
      queue_drop(q, (size_t)o->idx, 1);
    }
  }
  PT_RETURN(pt, o->turn_rc);
  PT_END(pt);
  return 0;
}

/* ---- acquire / release (steps) ------------------------------------------------ */

/* How long a caller giving up waits for its node's delete to be answered
 * before returning anyway (the server may be frozen without the client
 * knowing yet); normally the answer takes one round trip. */
#define ABANDON_GRACE_MS 500

/* Gives up our node after a failed acquisition without depending on the
 * server: the delete is sent and waited for briefly; should it not be
 * answered in time or the connection fail, the session's janitor deletes
 * the node (again: a late first delete only makes its one a no-op). */
static int op_abandon(zkl__op_t *o) {
  zkl__contender_t *c = o->c;
  pt_t *pt = &o->pt_abandon;
  PT_BEGIN(pt);
  if (c->node == NULL) PT_RETURN(pt, 0);
  if (zkl__session_health(c->s) == ZKL_ESUSPENDED) {
    to_janitor(c);
    PT_RETURN(pt, 0);
  }
  c->dl = zkl__deadline_after_ms(ABANDON_GRACE_MS);
  /* refused after the grant (a deadline that passed, a cancel): it leaves
   * as a holder would, so that the waiter behind needs no look below */
  PT_CALL(pt, o->zrc, op_delete_once(o, o->granted && c->drv->tells_release));
  if ((retryable(o->zrc) || o->zrc == ZKL__ZTIMEDOUT) &&
      !zkl__session_gone(c->s))
    zkl__janitor_add(c->s, c->root, c->prefix, c->node);
  free(c->node);
  c->node = NULL;
  PT_RETURN(pt, 0);
  PT_END(pt);
  return 0;
}

/* The rule for a grant, checked right before an acquisition reports
 * success: our node was made on the session we are on now, and the server
 * was heard from within the session timeout (what holding() asks), and the
 * caller's deadline has not passed.  Nothing the wait learned is trusted
 * for it: a process paused while queued finds its wake-up (the release of
 * the node ahead) waiting in its socket when it runs again, while on the
 * server its session has expired and someone else holds the lock.
 * While the connection is down the grant stands only if the same session
 * comes back with our node.  0 (granted), ZKL_ELOST, VANISHED,
 * ZKL_ETIMEDOUT, ZKL_ESUSPENDED (a trylock) or ZKL_ECANCELED. */
static int op_confirm_grant(zkl__op_t *o) {
  zkl__contender_t *c = o->c;
  pt_t *pt = &o->pt_confirm;
  PT_BEGIN(pt);
  for (;;) {
    if (o->deadline != ZKL__TRY && zkl__now_ns() >= o->deadline)
      PT_RETURN(pt, zkl__fail(ZKL_ETIMEDOUT, "%s: granted only after the "
                              "deadline", c->root));
    int h = zkl__contend_hold_health(c);
    if (h == 0) PT_RETURN(pt, 0);
    if (h == ZKL_ELOST) PT_RETURN(pt, ZKL_ELOST);
    if (o->deadline == ZKL__TRY)
      PT_RETURN(pt, zkl__fail(ZKL_ESUSPENDED, "%s: granted, but the "
                              "connection is down", c->root));
    /* ELOST: another session */
    PT_CALL(pt, o->zrc, op_await_connected(o, o->deadline, op_cancel(o)));
    if (o->zrc != 0) PT_RETURN(pt, o->zrc);
    PT_CALL(pt, o->zrc, op_self_present(o));
    if (o->zrc != 1) PT_RETURN(pt, o->zrc == 0 ? VANISHED : o->zrc);
  }
  PT_END(pt);
  return 0;
}

static int op_acquire(zkl__op_t *o) {
  zkl__contender_t *c = o->c;
  pt_t *pt = &o->pt_main;
  PT_BEGIN(pt);
  /* every request waits for its answer until the caller's deadline; a
   * trylock's until the client itself gives up */
  c->dl = o->deadline == ZKL__TRY ? ZKL__FOREVER : o->deadline;
  PT_CALL(pt, o->rc, op_await_connected(o, o->deadline, op_cancel(o)));
  if (o->rc == ZKL_ETIMEDOUT)
    PT_RETURN(pt, zkl__fail(o->deadline == ZKL__TRY ? ZKL_ESUSPENDED
                                                    : ZKL_ETIMEDOUT,
                            "not connected to ZooKeeper"));
  if (o->rc != 0) PT_RETURN(pt, o->rc);
  if (o->deadline == ZKL__TRY && !c->premade) {
    PT_CALL(pt, o->rc, op_peek_busy(o));
    if (o->rc != 0) PT_RETURN(pt, o->rc);
  }
  o->granted = 0;
  c->contended = 0; /* set by what the acquisition sees (queue_fill, ...) */
  for (o->attempt = 0; o->attempt < 3;) {
    if (c->premade) { /* made by the recipe: queued already, or gone */
      memset(&o->q, 0, sizeof o->q);
      o->rc = c->node != NULL ? 0 : VANISHED;
    } else {
      PT_CALL(pt, o->rc, op_create_node(o));
    }
    if (o->rc == 0 && !o->q.listed) PT_CALL(pt, o->rc, op_queue_list(o));
    if (o->rc == 0) {
      o->rc = VANISHED;
      if (o->q.self_seen) PT_CALL(pt, o->rc, op_wait_turn(o));
    }
    queue_free(&o->q);
    o->granted = o->rc == 0;
    if (o->rc == 0) PT_CALL(pt, o->rc, op_confirm_grant(o));
    if (o->rc == VANISHED && zkl__session_health(c->s) == ZKL_ELOST)
      o->rc = ZKL_ELOST;
    if (o->rc == ZKL_ELOST && zkl__session_renews(c->s) && c->premade) {
      forget_node(c); /* the recipe queues again, all its nodes at once */
      o->rc = VANISHED;
      break;
    }
    if (o->rc == ZKL_ELOST && zkl__session_renews(c->s)) {
      /* The session was lost while we queued: its nodes are gone and a
       * new session is on its way.  Queue again on it. */
      forget_node(c);
      PT_CALL(pt, o->rc, op_await_connected(o, o->deadline, op_cancel(o)));
      if (o->rc != 0) break;
      continue;
    }
    if (o->rc != VANISHED) break;
    /* Our node vanished under us (deleted by someone else): start over
     * with a new node (a recipe's own node: it starts over). */
    free(c->node);
    c->node = NULL;
    if (c->premade) break;
    o->attempt++;
  }
  if (o->rc == VANISHED && c->premade) PT_RETURN(pt, ZKL__VANISHED);
  if (o->rc == VANISHED)
    o->rc = zkl__fail(ZKL_EPROTO, "our node under %s keeps vanishing",
                      c->root);
  /* ungranted: a node released later (a multi-lock's give-up) never marks */
  if (o->rc != 0) c->contended = 0;
  if (o->rc != 0) PT_CALL(pt, o->zrc, op_abandon(o));
  if (o->rc == ZKL_ETIMEDOUT && o->deadline == ZKL__TRY)
    o->rc = ZKL_ESUSPENDED;
  PT_RETURN(pt, o->rc);
  PT_END(pt);
  return 0;
}

static int op_release(zkl__op_t *o) {
  zkl__contender_t *c = o->c;
  pt_t *pt = &o->pt_main;
  PT_BEGIN(pt);
  if (c->node == NULL) PT_RETURN(pt, ZKL_ELOST);
  if (!op_nowait(o)) {
    if (zkl__session_health(c->s) == ZKL_ELOST ||
        zkl_session_id(c->s) != c->session_id) {
      forget_node(c);
      PT_RETURN(pt, zkl__fail(ZKL_ELOST, "session lost while holding %s",
                              c->root));
    }
    c->dl = cleanup_deadline(c);
    o->deadline = c->dl;
  } else { /* never waits for a connection */
    int h = zkl__contend_hold_health(c);
    if (h == ZKL_ELOST) {
      forget_node(c);
      PT_RETURN(pt, ZKL_ELOST);
    }
    if (h != 0) {
      to_janitor(c);
      PT_RETURN(pt, ZKL_ESUSPENDED);
    }
    c->dl = zkl__deadline_after_ms(zkl_session_timeout(c->s));
    o->deadline = ZKL__TRY;
  }
  /* The mark spares the waiter behind us a read of its own node (it
   * tells that we left as holder).  A hold whose acquisition saw nobody
   * else under the root leaves with a plain delete, as the floor's: a
   * smaller request and less work for the server.  A waiter that came
   * during the hold sees a departure without a mark and reads its own
   * node once before its grant (op_wait_turn), as after a holder whose
   * session ended: a missing mark is never unsafe. */
  PT_CALL(pt, o->rc,
          op_delete_node(o, c->drv->tells_release && c->contended,
                         o->deadline));
  PT_RETURN(pt, o->rc);
  PT_END(pt);
  return 0;
}

/* Watches a hold's node until the hold is gone: 1 when the node was
 * deleted (or belongs to another session now), ZKL_ELOST when the session
 * is lost, ZKL_ECANCELED, or ZooKeeper's refusal.  A connection that goes
 * down is waited through: the hold is in doubt then, not gone (the
 * session's state says so), and the node is looked at again once the
 * connection is back (a watch set before may have missed the delete). */
static int op_hold(zkl__op_t *o) {
  zkl__contender_t *c = o->c;
  pt_t *pt = &o->pt_main;
  PT_BEGIN(pt);
  c->dl = ZKL__FOREVER;
  for (;;) {
    if (c->node == NULL) PT_RETURN(pt, GONE);
    PT_CALL(pt, o->rc, op_await_connected(o, ZKL__FOREVER, op_cancel(o)));
    if (o->rc != 0) PT_RETURN(pt, o->rc);
    zkl__session_lock(c->s);
    zkl__waiter_register(c->s, &c->w, c->node);
    o->w_epoch = zkl__session_epoch(c->s);
    zkl__session_unlock(c->s);
    o->k = zkl__zk_exists_send(c->s, c->node, 1);
    op_notify(o, o->k);
    /* a cancel does not wait for the answer (nor a session change) */
    PT_AWAIT(o, pt,
             zkl__zcall_ready(o->k) || canceled(c, op_cancel(o)) ||
                 epoch_now(c->s) != o->w_epoch,
             ZKL__FOREVER);
    {
      struct Stat st;
      o->zrc = zkl__zk_exists_wait(o->k, ZKL__TRY, &st);
      o->k = NULL;
      if (o->zrc == ZOK && st.ephemeralOwner != c->session_id)
        o->zrc = ZNONODE; /* another session's node of the same name */
    }
    o->why = WOKE_SESSION;
    if (o->zrc == ZOK)
      PT_AWAIT(o, pt,
               (o->why = op_woke(o, o->w_epoch, ZKL__FOREVER,
                                 op_cancel(o))) != WOKE_NONE,
               ZKL__FOREVER);
    else op_unwait(o);
    if (o->zrc == ZNONODE) drop_watch(c, c->node); /* set on no node */
    if (canceled(c, op_cancel(o))) PT_RETURN(pt, ZKL_ECANCELED);
    if (o->zrc == ZNONODE) PT_RETURN(pt, GONE);
    if (o->zrc != ZOK && o->zrc != ZKL__ZTIMEDOUT && !retryable(o->zrc))
      PT_RETURN(pt, map_zrc(c, o->zrc, "watch"));
    if (o->why == WOKE_FIRED && o->fired_type == ZOO_DELETED_EVENT)
      PT_RETURN(pt, GONE);
    /* its data changed, or the connection or session did: look again */
  }
  PT_END(pt);
  return 0;
}

/* One turn of a leader's watch on its node (the election's thread): 1
 * when the node is gone, 0 when anything else moved (the session's state
 * since o->epoch0, the node's data), ZKL_ECANCELED, or ZooKeeper's code.
 * While the connection is down nothing is sent: it waits for the session
 * to change. */
static int op_hold_turn(zkl__op_t *o) {
  zkl__contender_t *c = o->c;
  pt_t *pt = &o->pt_main;
  PT_BEGIN(pt);
  if (c->node == NULL) PT_RETURN(pt, GONE);
  c->dl = ZKL__FOREVER;
  zkl__session_lock(c->s);
  int moved = zkl__session_epoch(c->s) != o->epoch0;
  if (!moved) zkl__waiter_register(c->s, &c->w, c->node);
  zkl__session_unlock(c->s);
  if (moved) PT_RETURN(pt, 0);
  o->self = zkl__session_health(c->s);
  if (o->self == 0) {
    o->k = zkl__zk_exists_send(c->s, c->node, 1);
    op_notify(o, o->k);
    PT_AWAIT(o, pt,
             zkl__zcall_ready(o->k) || canceled(c, op_cancel(o)) ||
                 epoch_now(c->s) != o->epoch0,
             ZKL__FOREVER);
    o->zrc = zkl__zk_exists_wait(o->k, ZKL__TRY, NULL);
    o->k = NULL;
  } else {
    o->zrc = o->self == ZKL_ESUSPENDED ? ZCONNECTIONLOSS : ZSESSIONEXPIRED;
  }
  o->why = WOKE_SESSION;
  if (o->zrc == ZOK || retryable(o->zrc) || o->zrc == ZKL__ZTIMEDOUT)
    PT_AWAIT(o, pt,
             (o->why = op_woke(o, o->epoch0, ZKL__FOREVER, op_cancel(o))) !=
                 WOKE_NONE,
             ZKL__FOREVER);
  else op_unwait(o);
  if (o->zrc == ZNONODE) {
    drop_watch(c, c->node); /* an exists watch is set on no node too */
    PT_RETURN(pt, GONE);
  }
  /* The watch on our node is not withdrawn: a caller canceling a hold
   * deletes the node next, which ends the watch on the server. */
  if (o->why == WOKE_CANCEL || canceled(c, op_cancel(o)))
    PT_RETURN(pt, ZKL_ECANCELED);
  if (o->zrc != ZOK && !retryable(o->zrc) && o->zrc != ZKL__ZTIMEDOUT &&
      o->zrc != ZSESSIONEXPIRED)
    PT_RETURN(pt, map_zrc(c, o->zrc, "watch"));
  PT_RETURN(pt, o->why == WOKE_FIRED && o->fired_type == ZOO_DELETED_EVENT
                    ? GONE
                    : 0);
  PT_END(pt);
  return 0;
}

/* Is our node still there, made by the session we are on?  1 yes, 0 no
 * (a node of another session is forgotten, never deleted), or ZKL_ELOST,
 * ZKL_ECANCELED, ZooKeeper's code.  Waits through a connection that is
 * down.  Without o->fresh, what the acquisition saw last will do. */
static int op_owned(zkl__op_t *o) {
  zkl__contender_t *c = o->c;
  pt_t *pt = &o->pt_main;
  PT_BEGIN(pt);
  c->dl = ZKL__FOREVER;
  if (!o->fresh && c->node != NULL && c->owner != 0 &&
      c->owner == c->session_id && c->owner == zkl_session_id(c->s))
    PT_RETURN(pt, 1);
  if (c->node == NULL) PT_RETURN(pt, 0);
  PT_CALL(pt, o->rc, op_self_present(o));
  if (o->rc != 1) PT_RETURN(pt, o->rc);
  if (c->owner == zkl_session_id(c->s)) PT_RETURN(pt, 1);
  free(c->node); /* not ours to delete */
  c->node = NULL;
  PT_RETURN(pt, 0);
  PT_END(pt);
  return 0;
}

/* Until the session is connected: 0, ZKL_ELOST (final) or ZKL_ECANCELED.
 * Our node, if any, is let go first (the session it was made on is gone). */
static int op_connected(zkl__op_t *o) {
  pt_t *pt = &o->pt_main;
  PT_BEGIN(pt);
  forget_node(o->c);
  PT_CALL(pt, o->rc, op_await_connected(o, ZKL__FOREVER, op_cancel(o)));
  PT_RETURN(pt, o->rc);
  PT_END(pt);
  return 0;
}

/* Until the waiter registered before fires (or was fired already): 0, or
 * ZKL_ELOST, ZKL_ECANCELED. */
static int op_fired(zkl__op_t *o) {
  zkl__contender_t *c = o->c;
  pt_t *pt = &o->pt_main;
  PT_BEGIN(pt);
  if (zkl__session_health(c->s) == ZKL_ELOST) {
    op_unwait(o);
    PT_RETURN(pt, ZKL_ELOST);
  }
  PT_AWAIT(o, pt,
           (o->why = op_woke(o, c->w.epoch, ZKL__FOREVER, op_cancel(o))) !=
               WOKE_NONE,
           ZKL__FOREVER);
  if (o->why != WOKE_CANCEL) PT_RETURN(pt, 0);
  drop_watches(c, c->root, ZWATCHTYPE_ANY); /* the child/exists watch */
  PT_RETURN(pt, ZKL_ECANCELED);
  PT_END(pt);
  return 0;
}

/* ---- running operations ------------------------------------------------------- */

/* o's memory, once the last reference has gone. */
static void op_last(void *arg) {
  zkl__op_t *o = arg;
  if (o->sync != NULL) {
    pthread_cond_destroy(&o->sync->cv);
    pthread_mutex_destroy(&o->sync->mu);
  }
  free(o);
}

/* Drops a reference to o's memory (see o->refs). */
static void op_put(zkl__op_t *o) {
  if (atomic_fetch_sub_explicit(&o->refs, 1, memory_order_acq_rel) == 1)
    op_last(o);
}

/* The operation has ended (op_end gave back what it held of the
 * session's) and its owner lets it go: its buffers now, its memory once
 * no post is under way any more. */
static void op_free(zkl__op_t *o) {
  queue_free(&o->q);
  free(o->want_path);
  free(o->want_data);
  free(o->root_path);
  free(o->found_path);
  zkl__zk_children_free(&o->kids);
  free(o->detail);
  o->detail = NULL;
  op_put(o);
}

/* Runs o's next step (on the engine's thread, or a blocking caller's):
 * its result, or PT_WAIT with o->wake_at set for the wait it stopped at.
 * The step's last detail message is kept in o. */
static int op_step(zkl__op_t *o) {
  zkl__clear_error(); /* the engine's thread runs everyone's steps */
  o->wake_at = ZKL__FOREVER;
  int rc;
  switch (o->what) {
  case OP_ACQUIRE: rc = op_acquire(o); break;
  case OP_HOLD: rc = op_hold(o); break;
  case OP_HOLD_TURN: rc = op_hold_turn(o); break;
  case OP_OWNED: rc = op_owned(o); break;
  case OP_CONNECTED: rc = op_connected(o); break;
  case OP_FIRED: rc = op_fired(o); break;
  case OP_CUSTOM: rc = o->step(o, o->ctx); break;
  default: rc = op_release(o); break;
  }
  if (zkl_last_error()[0] != '\0') { /* this step's; the last one stands */
    free(o->detail);
    o->detail = strdup(zkl_last_error());
  }
  return rc;
}

/* o has ended with rc: nothing wakes it any more, and c may start
 * another. */
static void op_end(zkl__op_t *o, int rc) {
  zkl__contender_t *c = o->c;
  /* an answer's post may still be on its way to o (op_notify): it holds
   * a reference to o's memory, and finds o forgotten or unwatched */
  if (o->what == OP_ACQUIRE) zkl__stats_acquire_end(c->s, rc, o->started_ns);
  zkl__session_lock(c->s);
  zkl__waiter_unregister(c->s, &c->w);
  c->op = NULL;
  c->w.wake = NULL;
  zkl__session_unlock(c->s);
  /* what o holds of the session's, given back while c (and its session)
   * is sure to be there: an async operation's completion, which runs
   * next, may let the object be destroyed */
  admit_leave(o);
  admit_sent(o);
  admit_done(o);
  listing_leave(o);
}

/* The engine runs o: one step, then a timer for the wait it stopped at,
 * or its end. */
static void op_run(zkl__job_t *j) {
  zkl__op_t *o = (zkl__op_t *)j;
  zkl__engine_t *e = o->e;
  int rc = op_step(o);
  if (rc == PT_WAIT) {
    zkl__engine_arm(e, j, o->wake_at); /* no memory: no timer, woken on
                                          any other event */
    return;
  }
  op_end(o, rc);
  zkl__engine_forget(e, j); /* a late post does not queue it again */
  o->done(rc, rc != 0 && o->detail != NULL ? o->detail : "", o->arg);
  op_free(o);
}

static zkl__op_t *op_new(zkl__contender_t *c, int what, int64_t deadline,
                         unsigned cancel_seen) {
  zkl__op_t *o = calloc(1, sizeof *o);
  if (o == NULL) {
    zkl__fail(ZKL_ENOMEM, "no memory for an operation");
    return NULL;
  }
  o->job.run = op_run;
  o->c = c;
  o->e = zkl__session_engine(c->s);
  atomic_init(&o->refs, 1); /* its owner's */
  o->what = what;
  o->deadline = deadline;
  o->cancel_seen = cancel_seen;
  if (what == OP_ACQUIRE) o->started_ns = zkl__now_ns();
  return o;
}

/* Makes o the operation of c (one at a time), posted to the engine unless
 * a blocking caller runs it.  0, or ZKL_EBUSY (o is freed). */
static int op_claim(zkl__contender_t *c, zkl__op_t *o) {
  zkl__session_lock(c->s);
  int busy = c->op != NULL;
  if (!busy) {
    c->op = o;
    c->w.wake = op_waiter_wake;
    if (o->what == OP_ACQUIRE) zkl__stats_acquire_begin(c->s);
    /* posted before the lock goes: once c->op is visible a cancel may post
     * o too, and the engine may run it to its end (and free it) at once */
    if (o->sync == NULL)
      zkl__engine_post(o->e, &o->job);
  }
  zkl__session_unlock(c->s);
  if (busy) {
    op_last(o); /* nothing else has seen it */
    return zkl__fail(ZKL_EBUSY, "an operation on %s is in progress", c->root);
  }
  return 0;
}

static int op_start(zkl__contender_t *c, int what, int64_t deadline,
                    unsigned cancel_seen, zkl__op_done_fn done, void *arg) {
  zkl__op_t *o = op_new(c, what, deadline, cancel_seen);
  if (o == NULL) return ZKL_ENOMEM;
  o->done = done;
  o->arg = arg;
  return op_claim(c, o);
}

int zkl__contend_acquire_start(zkl__contender_t *c, int64_t deadline,
                               unsigned cancel_seen, zkl__op_done_fn done,
                               void *arg) {
  return op_start(c, OP_ACQUIRE, deadline, cancel_seen, done, arg);
}

int zkl__contend_release_start(zkl__contender_t *c, int nowait,
                               zkl__op_done_fn done, void *arg) {
  return op_start(c, nowait ? OP_RELEASE_NOWAIT : OP_RELEASE, 0, 0, done,
                  arg);
}

int zkl__contend_hold_start(zkl__contender_t *c, unsigned cancel_seen,
                            zkl__op_done_fn done, void *arg) {
  return op_start(c, OP_HOLD, ZKL__FOREVER, cancel_seen, done, arg);
}

/* ---- the blocking forms: the same operation, run by the caller ---------------
 * The caller's thread runs the steps itself and sleeps between them until
 * something posts the operation or its timer is due: the same protocol as
 * an async call's, with no hop through the engine's thread on the way from
 * ZooKeeper's answer to the caller (the one ZooKeeper's completion thread
 * wakes is the thread that goes on). */

/* The signal goes after the unlock, so that the woken caller does not
 * sleep again on w->mu.  w (in its operation) stays alive meanwhile: a
 * poster holds the session's lock (op_end takes it, before the caller
 * lets the operation go) or a reference to the operation (op_notify). */
static void op_wait_poke(struct op_wait *w) {
  pthread_mutex_lock(&w->mu);
  w->posted = 1;
  pthread_mutex_unlock(&w->mu);
  pthread_cond_signal(&w->cv);
}

static int op_run_sync_step(zkl__contender_t *c, int what, zkl__step_fn step,
                            void *ctx, int64_t deadline, unsigned cancel_seen,
                            unsigned epoch0, int fresh);

static int op_run_sync(zkl__contender_t *c, int what, int64_t deadline,
                       unsigned cancel_seen, unsigned epoch0, int fresh) {
  return op_run_sync_step(c, what, NULL, NULL, deadline, cancel_seen, epoch0,
                          fresh);
}

static int op_run_sync_step(zkl__contender_t *c, int what, zkl__step_fn step,
                            void *ctx, int64_t deadline, unsigned cancel_seen,
                            unsigned epoch0, int fresh) {
  zkl__op_t *o = op_new(c, what, deadline, cancel_seen);
  if (o == NULL) return ZKL_ENOMEM;
  struct op_wait *w = &o->wait;
  if (pthread_mutex_init(&w->mu, NULL) != 0) {
    free(o);
    return zkl__fail(ZKL_ESYSTEM, "no mutex for a blocking call");
  }
  if (zkl__cond_init(&w->cv) != 0) {
    pthread_mutex_destroy(&w->mu);
    free(o);
    return zkl__fail(ZKL_ESYSTEM, "no condition variable for a blocking call");
  }
  o->sync = w; /* op_last destroys w with o */
  o->epoch0 = epoch0;
  o->fresh = fresh;
  o->step = step;
  o->ctx = ctx;
  int rc = op_claim(c, o);
  if (rc != 0) return rc; /* o is freed */
  for (;;) {
    pthread_mutex_lock(&w->mu);
    w->posted = 0; /* a post from here on wakes the wait below */
    pthread_mutex_unlock(&w->mu);
    rc = op_step(o);
    if (rc != PT_WAIT) break;
    pthread_mutex_lock(&w->mu);
    while (!w->posted &&
           zkl__cond_wait_until(&w->cv, &w->mu, o->wake_at) == 0) {
    }
    pthread_mutex_unlock(&w->mu);
  }
  op_end(o, rc); /* nothing but a late answer's post reaches it now */
  if (rc != 0 && o->detail != NULL) zkl__fail(rc, "%s", o->detail);
  else zkl__clear_error();
  op_free(o);
  return rc;
}

int zkl__contend_acquire(zkl__contender_t *c, int64_t deadline,
                         unsigned cancel_seen) {
  return op_run_sync(c, OP_ACQUIRE, deadline, cancel_seen, 0, 0);
}

int zkl__contend_release(zkl__contender_t *c) {
  return op_run_sync(c, OP_RELEASE, 0, 0, 0, 0);
}

int zkl__contend_release_nowait(zkl__contender_t *c) {
  int rc = op_run_sync(c, OP_RELEASE_NOWAIT, 0, 0, 0, 0);
  /* the operation could not even start (no memory, no condition
   * variable): the janitor deletes the node, which must not be left
   * behind us (the election queues again right after) */
  if ((rc == ZKL_ENOMEM || rc == ZKL_ESYSTEM) && c->node != NULL)
    to_janitor(c);
  return rc;
}

/* ---- holding and observing (election) ------------------------------------------ */

int zkl__contend_hold_wait(zkl__contender_t *c, unsigned epoch,
                           unsigned cancel_seen) {
  return op_run_sync(c, OP_HOLD_TURN, ZKL__FOREVER, cancel_seen, epoch, 0);
}

int zkl__contend_owned(zkl__contender_t *c, int fresh, unsigned cancel_seen) {
  return op_run_sync(c, OP_OWNED, ZKL__FOREVER, cancel_seen, 0, fresh);
}

int zkl__contend_head(zkl__contender_t *c, int watch, char **data, int *len,
                      int64_t *czxid) {
  /* not c->dl: zkl_election_leader() asks from the caller's thread while
   * the election's thread uses the same contender */
  const int64_t dl = ZKL__FOREVER;
  *data = NULL;
  *len = 0;
  if (watch) {
    zkl__session_lock(c->s);
    zkl__waiter_register(c->s, &c->w, c->root);
    zkl__session_unlock(c->s);
  }
  for (int tries = 0; tries < 8; tries++) {
    struct String_vector kids = {0, NULL};
    int zrc = zkl__zk_children(c->s, dl, c->root, watch, &kids);
    if (zrc == ZNONODE) {
      /* no root: nobody leads; an exists watch tells us when it appears
       * (and if it appeared meanwhile, list again with a child watch) */
      if (watch && zkl__zk_exists(c->s, dl, c->root, 1, NULL) == ZOK)
        continue;
      return ZKL_ENOENT;
    }
    if (zrc != ZOK) return map_zrc(c, zrc, "list");
    zkl__node_t head = {NULL, 0, ZKL__KIND_NONE};
    for (int i = 0; i < kids.count; i++) {
      zkl__node_t n;
      if (zkl__name_parse(kids.data[i], &n) == 0 && c->drv->counts(n.kind) &&
          (head.name == NULL || zkl__seq_cmp(n.seq, head.seq) < 0))
        head = n;
    }
    if (head.name == NULL) {
      zkl__zk_children_free(&kids);
      return ZKL_ENOENT;
    }
    size_t plen = c->root_len + strlen(head.name) + 2;
    char *path = malloc(plen), *buf = NULL;
    if (path != NULL) snprintf(path, plen, "%s/%s", c->root, head.name);
    zkl__zk_children_free(&kids);
    int blen = 0;
    struct Stat st;
    if (path == NULL) return ZKL_ENOMEM;
    zrc = zkl__zk_get(c->s, dl, path, 0, &buf, &blen, &st);
    free(path);
    if (zrc == ZNONODE) { /* the head left meanwhile: look again */
      free(buf);
      continue;
    }
    if (zrc != ZOK) {
      free(buf);
      return map_zrc(c, zrc, "read");
    }
    *data = buf;
    *len = blen < 0 ? 0 : blen;
    *czxid = st.czxid;
    return 0;
  }
  return zkl__fail(ZKL_EPROTO, "the head of %s keeps changing", c->root);
}

int zkl__contend_wait_watch(zkl__contender_t *c, unsigned cancel_seen) {
  return op_run_sync(c, OP_FIRED, ZKL__FOREVER, cancel_seen, 0, 0);
}

int zkl__contend_await_session(zkl__contender_t *c, unsigned cancel_seen) {
  return op_run_sync(c, OP_CONNECTED, ZKL__FOREVER, cancel_seen, 0, 0);
}

void zkl__contend_forsake(zkl__contender_t *c) {
  if (c->node == NULL) return;
  if (zkl__contend_hold_health(c) == ZKL_ELOST) forget_node(c);
  else to_janitor(c);
}

int zkl__contend_hold_health(zkl__contender_t *c) {
  int h = zkl__session_health(c->s);
  if (h == 0 && zkl_session_id(c->s) != c->session_id) h = ZKL_ELOST;
  return h;
}

int zkl__contend_hold_again(zkl__contender_t *c) {
  int h = zkl__contend_hold_health(c);
  if (h == ZKL_ESUSPENDED)
    return zkl__fail(h, "the connection is down: the hold of %s is in doubt",
                     c->root);
  return h;
}

/* ---- a recipe's own operations ------------------------------------------------ */

int zkl__op_run(zkl__contender_t *c, zkl__step_fn step, void *ctx,
                int64_t deadline, unsigned cancel_seen) {
  return op_run_sync_step(c, OP_CUSTOM, step, ctx, deadline, cancel_seen, 0,
                          0);
}

int zkl__op_start(zkl__contender_t *c, zkl__step_fn step, void *ctx,
                  int64_t deadline, unsigned cancel_seen,
                  zkl__op_done_fn done, void *arg) {
  zkl__op_t *o = op_new(c, OP_CUSTOM, deadline, cancel_seen);
  if (o == NULL) return ZKL_ENOMEM;
  o->step = step;
  o->ctx = ctx;
  o->done = done;
  o->arg = arg;
  return op_claim(c, o);
}

void zkl__op_sleep(zkl__op_t *o, int64_t when) { o->wake_at = when; }

void zkl__op_notify(zkl__op_t *o, zkl__zcall_t *k) {
  op_notify(o, k);
}

int64_t zkl__op_deadline(const zkl__op_t *o) { return o->deadline; }

zkl__contender_t *zkl__op_contender(const zkl__op_t *o) { return o->c; }

int zkl__op_canceled(zkl__op_t *o) { return canceled(o->c, op_cancel(o)); }

int zkl__op_connected(zkl__op_t *o, int64_t deadline) {
  return op_await_connected(o, deadline, op_cancel(o));
}

int zkl__op_acquire(zkl__op_t *o) { return op_acquire(o); }

int zkl__op_release(zkl__op_t *o, int nowait) {
  o->rel_nowait = nowait;
  return op_release(o);
}

int zkl__op_await(zkl__op_t *o, unsigned epoch, int64_t deadline) {
  pt_t *pt = &o->pt_watch;
  PT_BEGIN(pt);
  PT_AWAIT(o, pt,
           (o->why = op_woke(o, epoch, deadline, op_cancel(o))) != WOKE_NONE,
           deadline);
  switch (o->why) {
  case WOKE_FIRED: PT_RETURN(pt, 1);
  case WOKE_CANCEL: PT_RETURN(pt, ZKL_ECANCELED);
  case WOKE_TIMEOUT: PT_RETURN(pt, ZKL_ETIMEDOUT);
  default: PT_RETURN(pt, 0);
  }
  PT_END(pt);
  return 0;
}

void zkl__op_unwait(zkl__op_t *o) { op_unwait(o); }
