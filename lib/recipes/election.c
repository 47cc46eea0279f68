/* lib/recipes/election.c - leader election: the latch driver on the
 * contention core, run by a thread of the object's own that also delivers
 * every callback; observers follow the head of the queue. */
#include <stdlib.h>
#include <string.h>
#include <zookeeper/zookeeper.h>

#include "core/contend.h"

/* ---- the driver ---- */

/* Curator's LeaderLatch: the lowest latch node leads; each candidate
 * watches its immediate predecessor. */
static int latch_counts(zkl__kind_t k) { return k == ZKL__KIND_LATCH; }

const zkl__driver_t zkl__driver_latch = {
    .name = "election",
    .marker = "latch-",
    .kind = ZKL__KIND_LATCH,
    /* Curator's LeaderLatch behind us wakes only on NodeDeleted: a plain
     * delete (a handoff of leadership is rare; the one behind a resigning
     * leader mostly has nothing else below it to check) */
    .tells_release = 0,
    .counts = latch_counts,
    .blocks = latch_counts,
    .blocker = zkl__blocker_exclusive,
};

typedef enum {
  E_IDLE,      /* not started, or resigned / ended                     */
  E_CANDIDATE, /* queued                                               */
  E_LEADER,    /* leading                                              */
  E_DOUBT,     /* was leading, connection down (revoked: SUSPENDED)    */
  E_OBSERVING  /* an observer following                                */
} estate_t;

struct zkl_election {
  zkl__contender_t c;
  zkl_election_opts_t opts;
  pthread_mutex_t mu;      /* guards the fields below                      */
  pthread_cond_t cv;       /* state changes: await() and the thread wait   */
  atomic_uint cancel_gen;  /* bumped (under mu) by resign/destroy          */
  pthread_t thread;
  estate_t state;
  int run;                 /* started and not resigned                     */
  unsigned run_id;         /* bumped by every start()                      */
  int quit;                /* destroy: the thread ends                     */
  int self_destroy;        /* destroyed from its own callback: the thread
                              frees the object when the callback returns  */
  int last_rc;             /* why the last run ended by itself             */
  uint64_t token;
  char *lead_node;      /* the path of the node leadership was won with   */
  int64_t lead_session; /* the session id leadership was won on */
  uint64_t skip_token;  /* callbacks_in_dispatch: the leadership whose
                           "elected" was stale when dispatched (its
                           "revoked" is skipped too); guarded by the
                           completion queue's lock                       */
};

/* ---- callbacks through zkl_session_dispatch() (callbacks_in_dispatch) ---- */

typedef struct ecall {
  zkl__done_t d;      /* first */
  zkl_election_t *e;  /* NULL once destroyed */
  char what;          /* 'E' elected, 'R' revoked, 'L' leader changed */
  int skip;
  uint64_t token;
  zkl_election_reason_t why;
  void *id;
  size_t id_len;
} ecall_t;

static int leadership(zkl_election_t *e, uint64_t *token);

/* At dispatch (queue locked): an "elected" is delivered only while that
 * leadership stands (the rule of every grant, checked again: the loop may
 * have been slow, or the process paused); a stale one is dropped with its
 * "revoked", so the pair never reaches the application. */
static void ecall_check(zkl__done_t *d) {
  ecall_t *x = (ecall_t *)d;
  if (x->e == NULL) return;
  if (x->what == 'E') {
    uint64_t t = 0;
    if (leadership(x->e, &t) != 0 || t != x->token) {
      x->skip = 1;
      x->e->skip_token = x->token;
    }
  } else if (x->what == 'R' && x->e->skip_token == x->token) {
    x->skip = 1;
  }
}

static void ecall_run(zkl__done_t *d, int deliver) {
  ecall_t *x = (ecall_t *)d;
  zkl_election_t *e = x->e;
  if (deliver && e != NULL && !x->skip) {
    zkl__clear_error();
    if (x->what == 'E') e->opts.on_elected(e, x->token, e->opts.arg);
    else if (x->what == 'R') e->opts.on_revoked(e, x->why, e->opts.arg);
    else e->opts.on_leader(e, x->id, x->id_len, x->token, e->opts.arg);
  }
  free(x->id);
  free(x);
}

static void ecall_orphan(zkl__done_t *d) { ((ecall_t *)d)->e = NULL; }

/* Queues a callback for the application's dispatch; 0, or ZKL_ENOMEM (the
 * caller then calls it on this thread: late rather than never, and in
 * order for the thread's own events). */
static int ecall_post(zkl_election_t *e, char what, uint64_t token,
                      zkl_election_reason_t why, const void *id,
                      size_t id_len) {
  ecall_t *x = calloc(1, sizeof *x);
  if (x == NULL) return ZKL_ENOMEM;
  if (id != NULL && (x->id = malloc(id_len > 0 ? id_len : 1)) == NULL) {
    free(x);
    return ZKL_ENOMEM;
  }
  if (id != NULL) memcpy(x->id, id, id_len);
  x->d.owner = e;
  x->d.check = ecall_check;
  x->d.run = ecall_run;
  x->d.orphan = ecall_orphan;
  x->e = e;
  x->what = what;
  x->token = token;
  x->why = why;
  x->id_len = id_len;
  zkl__dispatch_post(zkl__session_dispatch_queue(e->c.s), &x->d);
  return 0;
}

void zkl_election_opts_init(zkl_election_opts_t *o) {
  if (o != NULL) memset(o, 0, sizeof *o);
}

static void set_state(zkl_election_t *e, estate_t st) {
  pthread_mutex_lock(&e->mu);
  e->state = st;
  pthread_cond_broadcast(&e->cv);
  pthread_mutex_unlock(&e->mu);
}

/* ---- callbacks (always on the object's thread, never under a lock) ------ */

/* Announces leadership if the grant stands by holding()'s rule (our node
 * made on the current session, the server heard from within the session
 * timeout: nothing learned before a pause is trusted) and no resign came
 * first.  1 announced; 0 a resign came first; ZKL_ESUSPENDED or ZKL_ELOST:
 * not announced (lead() waits for the connection, or campaigns again). */
static int elected(zkl_election_t *e, unsigned cancel_seen) {
  int h = zkl__contend_hold_health(&e->c);
  if (h != 0) return h;
  char *node = e->c.node != NULL ? strdup(e->c.node) : NULL; /* NULL: no
                                               memory; node() says so */
  pthread_mutex_lock(&e->mu);
  int go = atomic_load(&e->cancel_gen) == cancel_seen;
  if (go) {
    e->state = E_LEADER;
    e->token = (uint64_t)e->c.czxid;
    free(e->lead_node);
    e->lead_node = node;
    node = NULL;
    e->lead_session = e->c.session_id;
    pthread_cond_broadcast(&e->cv);
  }
  pthread_mutex_unlock(&e->mu);
  free(node);
  if (go && e->opts.on_elected != NULL &&
      (!e->opts.callbacks_in_dispatch ||
       ecall_post(e, 'E', (uint64_t)e->c.czxid, 0, NULL, 0) != 0))
    e->opts.on_elected(e, (uint64_t)e->c.czxid, e->opts.arg);
  return go;
}

static void revoked(zkl_election_t *e, zkl_election_reason_t why) {
  pthread_mutex_lock(&e->mu);
  int gone = e->self_destroy; /* destroyed from its own callback: silent */
  uint64_t token = e->token;  /* the leadership that ends */
  pthread_mutex_unlock(&e->mu);
  if (!gone && e->opts.on_revoked != NULL &&
      (!e->opts.callbacks_in_dispatch ||
       ecall_post(e, 'R', token, why, NULL, 0) != 0))
    e->opts.on_revoked(e, why, e->opts.arg);
}

/* The state changes first (so that is_leader() stops saying 1 before
 * anyone else can lead), then the node goes, then the callback runs. */
static void step_down(zkl_election_t *e, estate_t next, int announced,
                      zkl_election_reason_t why) {
  set_state(e, next);
  zkl__contend_release_nowait(&e->c);
  if (announced) revoked(e, why);
}

/* ---- a candidate's run ------------------------------------------------------ */

/* Leads until resign (ZKL_ECANCELED), the loss of the session (ZKL_ELOST)
 * or of our node (1: campaign again).  While the connection is down
 * leadership is revoked (SUSPENDED); it is announced (again) if the same
 * session comes back with our node.  `announced`: on_elected has run. */
static int lead(zkl_election_t *e, unsigned cancel_seen, int announced) {
  for (;;) {
    unsigned epoch;
    int h = zkl__session_snapshot(e->c.s, &epoch);
    if (h == 0) h = zkl__contend_hold_health(&e->c);
    if (h == ZKL_ELOST) {
      /* with a new session on its way, campaign again on it */
      int again = zkl__session_renews(e->c.s);
      step_down(e, again ? E_CANDIDATE : E_IDLE, announced, ZKL_REASON_LOST);
      return again ? 1 : ZKL_ELOST;
    }
    if (h == ZKL_ESUSPENDED && announced) {
      announced = 0;
      set_state(e, E_DOUBT);
      revoked(e, ZKL_REASON_SUSPENDED);
      continue;
    }
    if (h == 0 && !announced) { /* back: leading again if still ours */
      int own = zkl__contend_owned(&e->c, 1, cancel_seen);
      if (own == ZKL_ELOST) { /* gone, though not yet told: as above */
        int again = zkl__session_renews(e->c.s);
        step_down(e, again ? E_CANDIDATE : E_IDLE, 0, ZKL_REASON_LOST);
        return again ? 1 : ZKL_ELOST;
      }
      if (own == ZKL_ECANCELED) {
        step_down(e, E_IDLE, 0, ZKL_REASON_RESIGNED);
        return ZKL_ECANCELED;
      }
      if (own != 1) { /* our node is gone */
        step_down(e, E_CANDIDATE, 0, ZKL_REASON_LOST);
        return 1;
      }
      int el = elected(e, cancel_seen);
      if (el == 0) { /* a resign came meanwhile: no look again */
        step_down(e, E_IDLE, 0, ZKL_REASON_RESIGNED);
        return ZKL_ECANCELED;
      }
      /* ESUSPENDED / ELOST: not announced; the session's state moved, so
       * this returns at once and the next turn waits or ends */
      announced = el == 1;
      if (!announced) zkl__contend_hold_wait(&e->c, epoch, cancel_seen);
      continue;
    }
    int w = zkl__contend_hold_wait(&e->c, epoch, cancel_seen);
    if (w == ZKL_ECANCELED) {
      step_down(e, E_IDLE, announced, ZKL_REASON_RESIGNED);
      return ZKL_ECANCELED;
    }
    if (w != 0) { /* our node is gone, or cannot be watched */
      step_down(e, E_CANDIDATE, announced, ZKL_REASON_LOST);
      return 1;
    }
  }
}

static int campaign(zkl_election_t *e, unsigned cancel_seen) {
  for (;;) {
    set_state(e, E_CANDIDATE);
    int rc = zkl__contend_acquire(&e->c, ZKL__FOREVER, cancel_seen);
    if (rc != 0) return rc;
    /* claim only a node our own session owns */
    int own = zkl__contend_owned(&e->c, 0, cancel_seen);
    if (own == 0) {
      zkl__contend_release_nowait(&e->c);
      continue;
    }
    int el = own < 0 ? own : elected(e, cancel_seen);
    if (el == 0 || (el < 0 && el != ZKL_ELOST && el != ZKL_ESUSPENDED)) {
      zkl__contend_release_nowait(&e->c);
      return el == 0 ? ZKL_ECANCELED : el;
    }
    /* not announced (el < 0): lead() waits for the connection, or steps
     * down to campaign again on a new session */
    rc = lead(e, cancel_seen, el == 1);
    if (rc != 1) return rc;
  }
}

/* ---- an observer's run ------------------------------------------------------- */

static int observe(zkl_election_t *e, unsigned cancel_seen) {
  set_state(e, E_OBSERVING);
  int64_t reported = -1; /* czxid of the leader last reported, 0: none */
  for (;;) {
    char *id = NULL;
    int len = 0;
    int64_t czxid = 0;
    int rc = zkl__contend_head(&e->c, 1, &id, &len, &czxid);
    if (rc == 0 || rc == ZKL_ENOENT) {
      int64_t now = rc == 0 ? czxid : 0;
      if (now != reported && e->opts.on_leader != NULL &&
          (!e->opts.callbacks_in_dispatch ||
           ecall_post(e, 'L', (uint64_t)now, 0, rc == 0 ? id : NULL,
                      rc == 0 ? (size_t)len : 0) != 0))
        e->opts.on_leader(e, rc == 0 ? id : NULL, (size_t)len,
                          (uint64_t)now, e->opts.arg);
      reported = now;
    }
    free(id);
    /* a failed look (connection trouble) waits for the next change too */
    if (rc != ZKL_ELOST) rc = zkl__contend_wait_watch(&e->c, cancel_seen);
    if (rc == ZKL_ELOST && zkl__session_renews(e->c.s))
      rc = zkl__contend_await_session(&e->c, cancel_seen); /* watch anew */
    if (rc != 0) return rc;
  }
}

/* ---- the object's thread ------------------------------------------------------ */

static void election_free(zkl_election_t *e) {
  if (e->c.node != NULL) zkl__contend_release_nowait(&e->c);
  zkl__contender_fini(&e->c);
  free(e->lead_node);
  pthread_cond_destroy(&e->cv);
  pthread_mutex_destroy(&e->mu);
  free(e);
}

static void *election_main(void *arg) {
  zkl_election_t *e = arg;
  pthread_mutex_lock(&e->mu);
  for (;;) {
    while (!e->quit && !e->run) pthread_cond_wait(&e->cv, &e->mu);
    if (e->quit) break;
    unsigned run_id = e->run_id;
    unsigned cancel_seen = atomic_load(&e->cancel_gen);
    pthread_mutex_unlock(&e->mu);
    int rc = e->opts.observer ? observe(e, cancel_seen)
                              : campaign(e, cancel_seen);
    pthread_mutex_lock(&e->mu);
    /* ended by itself (session lost, error), unless started again since */
    if (rc != ZKL_ECANCELED && e->run_id == run_id) {
      e->run = 0;
      e->last_rc = rc;
    }
    e->state = E_IDLE;
    pthread_cond_broadcast(&e->cv);
  }
  int self = e->self_destroy;
  pthread_mutex_unlock(&e->mu);
  if (self) { /* destroyed from one of its callbacks: nobody joins us */
    pthread_detach(pthread_self());
    zkl__dispatch_orphan(zkl__session_dispatch_queue(e->c.s), e);
    election_free(e);
  }
  return NULL;
}

/* ---- the API ------------------------------------------------------------------ */

int zkl_election_create(zkl_election_t **out, zkl_session_t *s,
                        const char *path, const void *id, size_t id_len,
                        const zkl_election_opts_t *opts) {
  zkl__clear_error();
  if (out == NULL) return zkl__fail(ZKL_EINVAL, "out is NULL");
  *out = NULL;
  int rc = zkl__check_recipe_args(s, path, id, id_len);
  if (rc != 0) return rc;
  zkl_election_t *e = calloc(1, sizeof *e);
  if (e == NULL) return ZKL_ENOMEM;
  if (opts != NULL) e->opts = *opts;
  atomic_init(&e->cancel_gen, 0);
  if (pthread_mutex_init(&e->mu, NULL) != 0) {
    free(e);
    return ZKL_ESYSTEM;
  }
  if (zkl__cond_init(&e->cv) != 0) {
    pthread_mutex_destroy(&e->mu);
    free(e);
    return ZKL_ESYSTEM;
  }
  rc = zkl__contender_init(&e->c, s, &zkl__driver_latch, path, id, id_len,
                           &e->cancel_gen);
  if (rc == 0 && zkl__thread_start(&e->thread, election_main, e) != 0) {
    zkl__contender_fini(&e->c);
    rc = zkl__fail(ZKL_ESYSTEM, "cannot start the election's thread");
  }
  if (rc != 0) {
    pthread_cond_destroy(&e->cv);
    pthread_mutex_destroy(&e->mu);
    free(e);
    return rc;
  }
  *out = e;
  return 0;
}

int zkl_election_start(zkl_election_t *e) {
  zkl__clear_error();
  if (e == NULL) return zkl__fail(ZKL_EINVAL, "election is NULL");
  if (zkl__session_health(e->c.s) == ZKL_ELOST &&
      !zkl__session_renews(e->c.s))
    return zkl__fail(ZKL_ELOST, "the session is gone");
  pthread_mutex_lock(&e->mu);
  int rc = e->run ? zkl__fail(ZKL_EBUSY, "already started") : 0;
  if (rc == 0) {
    e->run = 1;
    e->run_id++;
    e->last_rc = 0;
    pthread_cond_broadcast(&e->cv);
  }
  pthread_mutex_unlock(&e->mu);
  return rc;
}

int zkl_election_resign(zkl_election_t *e) {
  zkl__clear_error();
  if (e == NULL) return ZKL_EINVAL;
  pthread_mutex_lock(&e->mu);
  e->run = 0;
  /* under mu: the thread announces leadership only if no resign came */
  atomic_fetch_add(&e->cancel_gen, 1);
  if (e->state == E_LEADER || e->state == E_DOUBT) e->state = E_IDLE;
  pthread_cond_broadcast(&e->cv);
  pthread_mutex_unlock(&e->mu);
  zkl__contend_cancel(&e->c);
  return 0;
}

int zkl_election_await(zkl_election_t *e, int64_t timeout_ms) {
  zkl__clear_error();
  if (e == NULL || e->opts.observer)
    return zkl__fail(ZKL_EINVAL, "NULL, or an observer (never leads)");
  if (pthread_equal(pthread_self(), e->thread))
    return zkl__fail(ZKL_EDEADLK, "await from the object's own callback");
  int64_t deadline = zkl__deadline_after_ms(timeout_ms);
  pthread_mutex_lock(&e->mu);
  int rc = 0;
  while (e->state != E_LEADER) {
    if (!e->run) {
      rc = e->last_rc != 0 ? e->last_rc : ZKL_ECANCELED;
      break;
    }
    if (zkl__cond_wait_until(&e->cv, &e->mu, deadline) != 0 &&
        e->state != E_LEADER) {
      rc = ZKL_ETIMEDOUT;
      break;
    }
  }
  pthread_mutex_unlock(&e->mu);
  return rc;
}

/* Leader (0), not (ZKL_EPERM), or in doubt/gone, from the state first
 * and the session after, so a drop in between is not missed.  On 0,
 * *token is set (if not NULL) and, if node is not NULL, *node is a copy of
 * the leader's node path (NULL if out of memory; the caller frees it). */
static int leadership_of(zkl_election_t *e, uint64_t *token, char **node) {
  pthread_mutex_lock(&e->mu);
  estate_t st = e->state;
  uint64_t t = e->token;
  int64_t sid = e->lead_session;
  char *path = node != NULL && st == E_LEADER && e->lead_node != NULL
                   ? strdup(e->lead_node)
                   : NULL;
  pthread_mutex_unlock(&e->mu);
  int h = zkl__session_health(e->c.s), rc = 0;
  if (h == ZKL_ELOST) rc = ZKL_ELOST;
  /* re-established since we were elected: that leadership is gone even
   * before our thread has stepped down */
  else if ((st == E_LEADER || st == E_DOUBT) && h == 0 &&
           zkl_session_id(e->c.s) != sid)
    rc = ZKL_ELOST;
  else if (st == E_DOUBT) rc = ZKL_ESUSPENDED;
  else if (st != E_LEADER) rc = ZKL_EPERM;
  else rc = h;
  if (rc == 0 && token != NULL) *token = t;
  if (node != NULL) *node = rc == 0 ? path : NULL;
  if (rc != 0 || node == NULL) free(path);
  return rc;
}

static int leadership(zkl_election_t *e, uint64_t *token) {
  return leadership_of(e, token, NULL);
}

int zkl_election_is_leader(zkl_election_t *e) {
  zkl__clear_error();
  if (e == NULL) return ZKL_EINVAL;
  int rc = leadership(e, NULL);
  return rc == 0 ? 1 : rc == ZKL_EPERM ? 0 : rc;
}

int zkl_election_token(zkl_election_t *e, uint64_t *token) {
  zkl__clear_error();
  if (e == NULL || token == NULL) return ZKL_EINVAL;
  return leadership(e, token);
}

int zkl_election_node(zkl_election_t *e, char *buf, size_t len) {
  zkl__clear_error();
  if (e == NULL || buf == NULL)
    return zkl__fail(ZKL_EINVAL, "election or buf is NULL");
  char *node = NULL;
  int rc = leadership_of(e, NULL, &node);
  if (rc == 0 && node == NULL)
    rc = zkl__fail(ZKL_ENOMEM, "cannot copy the leader's node path");
  else if (rc == 0 && zkl__copy_string(buf, len, node) != 0)
    rc = zkl__fail(ZKL_EINVAL, "buf has %zu bytes, the node's path needs %zu",
                   len, strlen(node) + 1);
  free(node);
  return rc;
}

int zkl_election_leader(zkl_election_t *e, void *buf, size_t *len) {
  zkl__clear_error();
  if (e == NULL || buf == NULL || len == NULL)
    return zkl__fail(ZKL_EINVAL, "NULL argument");
  int h = zkl__session_health(e->c.s);
  if (h != 0) {
    *len = 0;
    return h;
  }
  char *id = NULL;
  int n = 0;
  int64_t czxid;
  int rc = zkl__contend_head(&e->c, 0, &id, &n, &czxid);
  if (rc == 0 && (size_t)n > *len)
    rc = zkl__fail(ZKL_EINVAL, "the leader's id needs %d bytes", n);
  else if (rc == 0)
    memcpy(buf, id, (size_t)n);
  *len = rc == ZKL_ENOENT ? 0 : (size_t)n;
  free(id);
  return rc;
}

void zkl_election_destroy(zkl_election_t *e) {
  if (e == NULL) return;
  pthread_mutex_lock(&e->mu);
  e->quit = 1;
  int self = e->self_destroy = pthread_equal(pthread_self(), e->thread);
  pthread_mutex_unlock(&e->mu);
  zkl_election_resign(e);
  if (self) return; /* from a callback: the thread frees it on its way out */
  pthread_join(e->thread, NULL);
  /* callbacks queued for dispatch and not run yet: never run now */
  zkl__dispatch_orphan(zkl__session_dispatch_queue(e->c.s), e);
  election_free(e);
}
