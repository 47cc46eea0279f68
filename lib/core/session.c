/* lib/core/session.c - one ZooKeeper connection: open/close, its state, and the
 * single watcher that turns ZooKeeper events into condition-variable
 * signals.  The watcher runs on ZooKeeper's completion thread and does
 * nothing else: no ZooKeeper call, no user code. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zookeeper/zookeeper.h>

#include "core/core.h"

struct zkl_session {
  zhandle_t *zh;            /* the current handle; replaced when the
                               session is re-established after LOST      */
  pthread_rwlock_t zh_rw;   /* read-held while sending on zh: a retired
                               handle is closed once nobody is sending   */
  pthread_mutex_t mu;       /* guards everything below                  */
  pthread_cond_t cv;        /* state changes (zkl_session_open waits)   */
  int state;                /* zkl_session_state_t, as users see it     */
  int zk_connected;         /* the client's connection is up (raw)      */
  int gone;                 /* the server said expired (or auth failed):
                               our nodes are surely deleted             */
  int64_t last_heard_ns;    /* the server answered a request sent then  */
  int64_t beat_sent_ns;     /* send time of the heartbeat in flight     */
  int beat_inflight;
  int64_t beat_at_ns;       /* next heartbeat                           */
  zkl_session_state_fn on_state;
  void *state_arg;
  struct state_event {      /* a state change not yet reported          */
    int state;
    int64_t id;             /* the session it is about                  */
    const char *why;        /* LOST: its cause (static text)             */
  } events[16];             /* a ring                                   */
  unsigned ev_head, ev_count;
  const char *lost_why;     /* the cause of the next LOST (static text) */
  int auth_failed;
  unsigned epoch;           /* bumped on every session event            */
  int timeout_ms;           /* negotiated                               */
  int64_t id;
  int zh_dead;              /* the current handle's session is LOST: its
                               late events and reconnects are ignored    */
  int reestablish;          /* open a new session after LOST            */
  int64_t renew_at_ns;      /* next try when opening one failed         */
  int requested_timeout_ms;
  char *auth;               /* digest credentials, re-added on renewal   */
  int quiet_log;            /* the client logs through zkl's route       */
  FILE *log_stream;         /* the caller's, for zkl's own messages too  */
  int log_max;              /* what of them goes to log_stream           */
  zkl__waiter_t *waiters;   /* threads blocked in the contention core   */
  /* the same waiters by the path they watch, and by their own node's:
   * hash tables with chains through the waiters (watch_hnext, self_hnext) */
  zkl__waiter_t **watch_tab, **self_tab;
  size_t tab_size;          /* buckets in each (a power of two, or 0)    */
  size_t tab_count;         /* entries in both                          */
  int refs;                 /* live recipe objects                      */
  int close_pending;        /* zkl_session_close() waits for refs == 0  */
  struct ACL_vector acl;    /* owned copy, for every node we create     */
  char *hosts;
  /* Work for the layers above, done on the session's thread once the
   * connection is up (the janitor's: janitor.c). */
  zkl__task_t *tasks;       /* pending, guarded by mu                   */
  zkl__inflight_t *inflight; /* async requests not yet completed        */
  pthread_t thread;         /* session_main: callbacks, renewal, tasks  */
  int thread_running;
  int stopping;             /* close: the threads end                   */
  unsigned tasks_blocked;   /* conn_gen + 1 at which a task met a dead
                               connection: retry after the next change  */
  unsigned conn_gen;        /* bumped on every connect and disconnect   */
  pthread_t beater;         /* heartbeats and the LOST deadline: never
                               blocked by callbacks or tasks            */
  int beater_running;
  zkl__engine_t *engine;    /* runs the recipes' operations (engine.c)  */
  zkl__dispatch_t *dq;      /* completions for zkl_session_dispatch()   */
  int state_in_dispatch;    /* on_state runs from zkl_session_dispatch() */
  zkl__stats_t stats;       /* zkl_session_stats(); atomics, no lock    */
  /* zkl_session_stats_export()'s export as a stop hook export.c gave it
   * (session.c sits below export.c and never names it): NULL, or
   * export_stop(export_arg) ends it */
  zkl__stop_fn *export_stop;
  void *export_arg;
};

void zkl_session_opts_init(zkl_session_opts_t *o) {
  if (o == NULL) return;
  memset(o, 0, sizeof *o);
  o->session_timeout_ms = 10000;
  o->connect_timeout_ms = 10000;
  o->acl = ZKL_ACL_OPEN;
  o->reestablish = 1;
}

/* The session whose completions the calling thread is running now
 * (zkl_session_dispatch). */
static _Thread_local zkl_session_t *dispatching;

/* ---- ACLs ------------------------------------------------------------- */

static int acl_copy(struct ACL_vector *dst, const struct ACL_vector *src) {
  dst->count = 0;
  dst->data = calloc(src->count > 0 ? (size_t)src->count : 1, sizeof *dst->data);
  if (dst->data == NULL) return ZKL_ENOMEM;
  for (int i = 0; i < src->count; i++) {
    struct ACL *a = &dst->data[i];
    a->perms = src->data[i].perms;
    a->id.scheme = strdup(src->data[i].id.scheme ? src->data[i].id.scheme : "");
    a->id.id = strdup(src->data[i].id.id ? src->data[i].id.id : "");
    dst->count = i + 1;
    if (a->id.scheme == NULL || a->id.id == NULL) return ZKL_ENOMEM;
  }
  return 0;
}

static void acl_free(struct ACL_vector *v) {
  for (int i = 0; i < v->count; i++) {
    free(v->data[i].id.scheme);
    free(v->data[i].id.id);
  }
  free(v->data);
  v->data = NULL;
  v->count = 0;
}

static int acl_choose(struct ACL_vector *dst, const zkl_session_opts_t *o) {
  struct ACL read_all[] = {{ZOO_PERM_READ, {"world", "anyone"}},
                           {ZOO_PERM_ALL, {"auth", ""}}};
  struct ACL_vector read_all_v = {2, read_all};
  switch (o->acl) {
    case ZKL_ACL_OPEN: return acl_copy(dst, &ZOO_OPEN_ACL_UNSAFE);
    case ZKL_ACL_CREATOR_ALL: return acl_copy(dst, &ZOO_CREATOR_ALL_ACL);
    case ZKL_ACL_READ_ALL: return acl_copy(dst, &read_all_v);
    case ZKL_ACL_CUSTOM: return acl_copy(dst, o->custom_acl);
  }
  return ZKL_EINVAL;
}

static int opts_check(const zkl_session_opts_t *o) {
  if (o->session_timeout_ms <= 0 || o->connect_timeout_ms <= 0)
    return zkl__fail(ZKL_EINVAL, "timeouts must be positive");
  if (o->acl < ZKL_ACL_OPEN || o->acl > ZKL_ACL_CUSTOM)
    return zkl__fail(ZKL_EINVAL, "unknown ACL choice %d", (int)o->acl);
  if (o->acl == ZKL_ACL_CUSTOM &&
      (o->custom_acl == NULL || o->custom_acl->count <= 0 ||
       o->custom_acl->data == NULL))
    return zkl__fail(ZKL_EINVAL, "ZKL_ACL_CUSTOM needs a non-empty custom_acl");
  if (o->acl != ZKL_ACL_OPEN && o->acl != ZKL_ACL_CUSTOM && o->auth == NULL)
    return zkl__fail(ZKL_EINVAL, "a creator ACL needs auth \"user:password\"");
  if (o->auth != NULL && (strchr(o->auth, ':') == NULL || o->auth[0] == ':'))
    return zkl__fail(ZKL_EINVAL, "auth must be \"user:password\"");
  if (o->log_level < 0 || o->log_level > 4)
    return zkl__fail(ZKL_EINVAL, "log_level must be 0..4");
  return 0;
}

/* ---- the watcher -------------------------------------------------------- */

/* Wakes a waiter: its operation is posted to whoever runs it (none yet: it
 * finds what happened in the waiter when it runs).  With s->mu held. */
static void waiter_wake(zkl__waiter_t *w) {
  if (w->wake != NULL) w->wake(w);
}

/* ---- the path tables: waiters by the path they watch ---------------------- */

/* FNV-1a over the bytes of a, then of b (NULL: none) */
static size_t path_hash(const char *a, const char *b) {
  uint64_t h = 1469598103934665603ULL;
  for (; *a != '\0'; a++) h = (h ^ (unsigned char)*a) * 1099511628211ULL;
  if (b != NULL) {
    h = (h ^ (unsigned char)'/') * 1099511628211ULL;
    for (; *b != '\0'; b++) h = (h ^ (unsigned char)*b) * 1099511628211ULL;
  }
  return (size_t)h;
}

/* Is `path` the node w watches? */
static int watches(const zkl__waiter_t *w, const char *path) {
  if (w->watch_name == NULL) return strcmp(w->watch_path, path) == 0;
  size_t n = strlen(w->watch_path);
  return strncmp(w->watch_path, path, n) == 0 && path[n] == '/' &&
         strcmp(path + n + 1, w->watch_name) == 0;
}

static zkl__waiter_t **bucket(zkl__waiter_t **tab, size_t size, size_t h) {
  return &tab[h & (size - 1)];
}

/* Doubles the tables (both: one size) when they fill; without memory
 * the chains just grow. */
static void tables_grow(zkl_session_t *s) {
  if (s->tab_count < s->tab_size) return;
  size_t size = s->tab_size ? s->tab_size * 2 : 64;
  zkl__waiter_t **wt = calloc(size, sizeof *wt), **st = calloc(size, sizeof *st);
  if (wt == NULL || st == NULL) {
    free(wt);
    free(st);
    return;
  }
  for (size_t i = 0; i < s->tab_size; i++) {
    for (zkl__waiter_t *w = s->watch_tab[i], *next; w != NULL; w = next) {
      next = w->watch_hnext;
      zkl__waiter_t **b = bucket(wt, size, w->watch_hash);
      w->watch_hnext = *b;
      *b = w;
    }
    for (zkl__waiter_t *w = s->self_tab[i], *next; w != NULL; w = next) {
      next = w->self_hnext;
      zkl__waiter_t **b = bucket(st, size, w->self_hash);
      w->self_hnext = *b;
      *b = w;
    }
  }
  free(s->watch_tab);
  free(s->self_tab);
  int first = s->tab_size == 0;
  s->watch_tab = wt;
  s->self_tab = st;
  s->tab_size = size;
  if (!first) return;
  /* waiters registered while there was no memory for the tables */
  for (zkl__waiter_t *w = s->waiters; w != NULL; w = w->next) {
    if (w->watch_path != NULL && !w->in_watch_table) {
      w->watch_hash = path_hash(w->watch_path, w->watch_name);
      zkl__waiter_t **b = bucket(wt, size, w->watch_hash);
      w->watch_hnext = *b;
      *b = w;
      w->in_watch_table = 1;
      s->tab_count++;
    }
    if (w->self_path != NULL && !w->in_self_table) {
      w->self_hash = path_hash(w->self_path, NULL);
      zkl__waiter_t **b = bucket(st, size, w->self_hash);
      w->self_hnext = *b;
      *b = w;
      w->in_self_table = 1;
      s->tab_count++;
    }
  }
}

static void watch_unlink(zkl_session_t *s, zkl__waiter_t *w) {
  if (!w->in_watch_table) return;
  for (zkl__waiter_t **p = bucket(s->watch_tab, s->tab_size, w->watch_hash);
       *p != NULL; p = &(*p)->watch_hnext)
    if (*p == w) {
      *p = w->watch_hnext;
      break;
    }
  w->in_watch_table = 0;
  s->tab_count--;
}

static void self_unlink(zkl_session_t *s, zkl__waiter_t *w) {
  if (!w->in_self_table) return;
  for (zkl__waiter_t **p = bucket(s->self_tab, s->tab_size, w->self_hash);
       *p != NULL; p = &(*p)->self_hnext)
    if (*p == w) {
      *p = w->self_hnext;
      break;
    }
  w->in_self_table = 0;
  s->tab_count--;
}

static void watch_link(zkl_session_t *s, zkl__waiter_t *w) {
  tables_grow(s); /* the first tables take every registered waiter, w too */
  if (s->tab_size == 0 || w->in_watch_table) return; /* none yet: the scan */
  w->watch_hash = path_hash(w->watch_path, w->watch_name);
  zkl__waiter_t **b = bucket(s->watch_tab, s->tab_size, w->watch_hash);
  w->watch_hnext = *b;
  *b = w;
  w->in_watch_table = 1;
  s->tab_count++;
}

static void self_link(zkl_session_t *s, zkl__waiter_t *w) {
  tables_grow(s);
  if (s->tab_size == 0 || w->in_self_table) return;
  w->self_hash = path_hash(w->self_path, NULL);
  zkl__waiter_t **b = bucket(s->self_tab, s->tab_size, w->self_hash);
  w->self_hnext = *b;
  *b = w;
  w->in_self_table = 1;
  s->tab_count++;
}

/* With s->mu held: an event on `path` (type; ZOO_NOTWATCHING_EVENT for a
 * watch withdrawn) wakes the waiters watching it or whose node it is.
 * Until the tables exist (no memory for them yet), a scan finds them. */
static void fire_path(zkl_session_t *s, const char *path, int type) {
  size_t h = path_hash(path, NULL);
  uint64_t woke = 0;
  if (s->tab_size > 0) { /* every waiter is in the tables */
    for (zkl__waiter_t *w = *bucket(s->watch_tab, s->tab_size, h); w != NULL;
         w = w->watch_hnext)
      if (w->watch_hash == h && watches(w, path)) {
        w->fired = 1;
        w->fired_type = type;
        waiter_wake(w);
        woke++;
      }
    for (zkl__waiter_t *w = *bucket(s->self_tab, s->tab_size, h); w != NULL;
         w = w->self_hnext)
      if (w->self_hash == h && strcmp(w->self_path, path) == 0) {
        w->self_fired = 1;
        waiter_wake(w);
        woke++;
      }
  } else {
    for (zkl__waiter_t *w = s->waiters; w != NULL; w = w->next) {
      if (w->watch_path != NULL && !w->in_watch_table && watches(w, path)) {
        w->fired = 1;
        w->fired_type = type;
        waiter_wake(w);
        woke++;
      }
      if (w->self_path != NULL && !w->in_self_table &&
          strcmp(w->self_path, path) == 0) {
        w->self_fired = 1;
        waiter_wake(w);
        woke++;
      }
    }
  }
  zkl__count(&s->stats.events);
  atomic_fetch_add_explicit(&s->stats.wakeups, woke, memory_order_relaxed);
}

/* Queues a state change for the session's thread, which logs it and
 * calls on_state (with s->mu held; runs on ZooKeeper's completion thread:
 * no allocation, no I/O).  When the ring is full the two oldest entries
 * are dropped: the sequence reported stays a real one, missing only the
 * oldest changes. */
static void push_event(zkl_session_t *s, int state) {
  const unsigned cap = sizeof s->events / sizeof s->events[0];
  if (s->ev_count == cap) {
    s->ev_head = (s->ev_head + 2) % cap;
    s->ev_count -= 2;
  }
  struct state_event *e = &s->events[(s->ev_head + s->ev_count++) % cap];
  e->state = state;
  e->id = s->id;
  e->why = state == ZKL_SESSION_LOST ? s->lost_why : NULL;
}

/* The counter of a state change as on_state reports it. */
static atomic_uint_least64_t *state_counter(zkl_session_t *s, int event) {
  switch (event) {
  case ZKL_SESSION_CONNECTED: return &s->stats.connects;
  case ZKL_SESSION_SUSPENDED: return &s->stats.suspensions;
  case ZKL_SESSION_RECONNECTED: return &s->stats.reconnects;
  case ZKL_SESSION_LOST: return &s->stats.losses;
  default: return NULL;
  }
}

static void set_state_locked(zkl_session_t *s, int state, int event) {
  if (s->state == state && event == state) return;
  atomic_uint_least64_t *counter = state_counter(s, event);
  if (counter != NULL) zkl__count(counter);
  s->state = state;
  if (state == ZKL_SESSION_LOST) s->zh_dead = 1; /* for good: that session */
  s->epoch++;
  pthread_cond_broadcast(&s->cv);
  for (zkl__waiter_t *w = s->waiters; w != NULL; w = w->next)
    waiter_wake(w);
  push_event(s, event);
}

static void note_session_event(zkl_session_t *s, int state) {
  if (state == ZOO_CONNECTED_STATE) {
    /* Not "heard" yet: the event may be processed long after the server
     * answered (a paused process).  Only an answered heartbeat moves
     * last_heard; send one at once. */
    if (!s->zk_connected) s->conn_gen++;
    s->zk_connected = 1;
    s->beat_at_ns = 0;
    pthread_cond_broadcast(&s->cv); /* the threads: tasks, heartbeat */
    if (s->zh_dead) return; /* that session was declared lost: final */
    s->timeout_ms = zoo_recv_timeout(s->zh);
    const clientid_t *cid = zoo_client_id(s->zh);
    s->id = cid != NULL ? cid->client_id : 0;
    /* CONNECTED after CONNECTING or LOST: a new session; after SUSPENDED
     * the same one is back.  A new session was heard from now: the server
     * has just made it, and "last heard" must not still count from when
     * its handle was made (during an outage, maybe long ago), or it would
     * be declared LOST the moment it connects.  Safe even if this event
     * is handled late (a pause): no request of ours was sent on the new
     * handle before it (zkl__zh_pin), so no node of ours lives on the new
     * session yet, and a create sent later is answered only while the
     * session is alive, after this moment. */
    if (s->state != ZKL_SESSION_CONNECTED &&
        s->state != ZKL_SESSION_SUSPENDED)
      s->last_heard_ns = zkl__now_ns();
    if (s->state != ZKL_SESSION_CONNECTED)
      set_state_locked(s, ZKL_SESSION_CONNECTED,
                       s->state == ZKL_SESSION_SUSPENDED
                           ? ZKL_SESSION_RECONNECTED
                           : ZKL_SESSION_CONNECTED);
  } else if (state == ZOO_EXPIRED_SESSION_STATE ||
             state == ZOO_AUTH_FAILED_STATE) {
    if (s->zk_connected) s->conn_gen++;
    s->zk_connected = 0;
    s->gone = 1;
    pthread_cond_broadcast(&s->cv);
    if (state == ZOO_AUTH_FAILED_STATE) s->auth_failed = 1;
    s->lost_why = state == ZOO_AUTH_FAILED_STATE
                      ? "the server refused the credentials"
                      : "the server expired it";
    if (s->state != ZKL_SESSION_LOST)
      set_state_locked(s, ZKL_SESSION_LOST, ZKL_SESSION_LOST);
    else
      pthread_cond_broadcast(&s->cv); /* the tasks are dropped */
  } else {
    /* CONNECTING, ASSOCIATING, READONLY: the session may still be alive */
    if (s->zk_connected) s->conn_gen++;
    s->zk_connected = 0;
    if (s->state == ZKL_SESSION_CONNECTED)
      set_state_locked(s, ZKL_SESSION_SUSPENDED, ZKL_SESSION_SUSPENDED);
  }
}

/* With s->mu held: has the server been silent for a whole session
 * timeout?  Then it may have expired the session: declare it LOST. */
static int silent_too_long(zkl_session_t *s, int64_t now) {
  if ((s->state != ZKL_SESSION_CONNECTED &&
       s->state != ZKL_SESSION_SUSPENDED) ||
      s->timeout_ms <= 0)
    return 0;
  if (now - s->last_heard_ns < (int64_t)s->timeout_ms * 1000000) return 0;
  s->lost_why = "no answer from the server for a whole session timeout";
  set_state_locked(s, ZKL_SESSION_LOST, ZKL_SESSION_LOST);
  return 1;
}

void zkl__watcher(zhandle_t *zh, int type, int state, const char *path,
                  void *ctx) {
  zkl_session_t *s = ctx;
  pthread_mutex_lock(&s->mu);
  if (type == ZOO_SESSION_EVENT) {
    /* The client repeats a session event for every watched path: only a
     * real change of state wakes anybody (set_state_locked).  A retired
     * handle (its session was lost and replaced) has nothing to say. */
    if (s->state != ZKL_SESSION_CLOSED && zh == s->zh)
      note_session_event(s, state);
  } else if (path != NULL) {
    fire_path(s, path, type);
  }
  pthread_mutex_unlock(&s->mu);
}

/* ---- the session's threads: heartbeats, renewal, deferred tasks ---------- */

/* The heartbeat's answer: the server was alive when it was sent. */
static void beat_done(int rc, const struct Stat *st, const void *data) {
  (void)st;
  zkl_session_t *s = (zkl_session_t *)data;
  /* any answer of the server counts (ZNONODE if a chroot is missing), not
   * the client's own failures */
  int answered = rc != ZCONNECTIONLOSS && rc != ZOPERATIONTIMEOUT &&
                 rc != ZSESSIONEXPIRED && rc != ZCLOSING &&
                 rc != ZINVALIDSTATE;
  pthread_mutex_lock(&s->mu);
  s->beat_inflight = 0;
  if (answered && s->beat_sent_ns > s->last_heard_ns)
    s->last_heard_ns = s->beat_sent_ns;
  pthread_cond_broadcast(&s->cv); /* the beater: next one on time */
  pthread_mutex_unlock(&s->mu);
}

/* The heartbeat thread: a tiny request every fifth of the session timeout
 * while connected, and the LOST deadline.  Nothing else runs on it, so no
 * callback or task can delay it. */
static void *beat_main(void *arg) {
  zkl_session_t *s = arg;
  pthread_mutex_lock(&s->mu);
  while (!s->stopping) {
    int64_t now = zkl__now_ns();
    if (silent_too_long(s, now)) continue;
    int64_t every = (int64_t)(s->timeout_ms > 0 ? s->timeout_ms : 10000) *
                    200000; /* a fifth of the timeout, in ns */
    if (s->zk_connected && s->state == ZKL_SESSION_CONNECTED &&
        !s->beat_inflight && now >= s->beat_at_ns) {
      s->beat_at_ns = now + every;
      s->beat_inflight = 1;
      s->beat_sent_ns = now;
      pthread_mutex_unlock(&s->mu);
      zhandle_t *zh = zkl__zh_pin(s, NULL);
      int zrc = zh != NULL ? zoo_aexists(zh, "/", 0, beat_done, s) : ZCLOSING;
      zkl__zh_unpin(s);
      if (zrc == ZOK) zkl__count(&s->stats.heartbeats);
      pthread_mutex_lock(&s->mu);
      if (zrc != ZOK) s->beat_inflight = 0;
      continue;
    }
    int64_t wake = ZKL__FOREVER;
    if (s->zk_connected && s->state == ZKL_SESSION_CONNECTED)
      wake = s->beat_inflight ? now + every : s->beat_at_ns;
    if ((s->state == ZKL_SESSION_CONNECTED ||
         s->state == ZKL_SESSION_SUSPENDED) && s->timeout_ms > 0) {
      int64_t lost_at = s->last_heard_ns + (int64_t)s->timeout_ms * 1000000;
      if (lost_at < wake) wake = lost_at;
    }
    zkl__cond_wait_until(&s->cv, &s->mu, wake);
  }
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

/* With s->mu held: drops every pending task (its connection's session is
 * gone, or closing).  The drops run without the lock. */
static void drop_tasks(zkl_session_t *s) {
  zkl__task_t *t = s->tasks;
  s->tasks = NULL;
  if (t == NULL) return;
  pthread_mutex_unlock(&s->mu);
  while (t != NULL) {
    zkl__task_t *next = t->next;
    t->drop(t);
    t = next;
  }
  pthread_mutex_lock(&s->mu);
}

static void ignore_auth(int rc, const void *data) {
  (void)rc;
  (void)data;
}

/* Fails the requests a closed handle still owed an answer: its
 * completions never run now.  Called without s->mu. */
static void discard_owed(zkl_session_t *s, zhandle_t *old) {
  pthread_mutex_lock(&s->mu);
  zkl__inflight_t *owed = NULL;
  for (zkl__inflight_t *op = s->inflight, *next; op != NULL; op = next) {
    next = op->next;
    if (op->zh != old) continue;
    if (op->prev != NULL) op->prev->next = op->next;
    else s->inflight = op->next;
    if (op->next != NULL) op->next->prev = op->prev;
    op->prev = NULL;
    op->next = owed;
    owed = op;
  }
  pthread_mutex_unlock(&s->mu);
  while (owed != NULL) {
    zkl__inflight_t *op = owed;
    owed = op->next;
    op->next = NULL;
    op->discard(op);
  }
}

/* Closes a handle once nobody is sending on it (senders pinned it before
 * it was swapped out), and fails the requests it still owed an answer.
 * Called without s->mu. */
static void retire(zkl_session_t *s, zhandle_t *old) {
  pthread_rwlock_wrlock(&s->zh_rw);
  pthread_rwlock_unlock(&s->zh_rw);
  /* If the old session is in fact still alive and reachable, this ends
   * it on the server: its nodes go at once instead of lingering. */
  zookeeper_close(old);
  discard_owed(s, old);
}

/* By default the C client resolves the hosts again (getaddrinfo, and with it
 * a netlink query of the interfaces) every time its I/O thread checks the
 * socket: between every answer and the next request.  Once a minute is
 * plenty to follow DNS changes; a lost connection resolves at once anyway.
 * (The Java client resolves when it connects.) */
#define RESOLVE_DELAY_MS 60000

/* With s->mu held, on the session's thread: the session is LOST; open a new
 * one on the same hosts.  Holds, queued nodes and tasks of the old
 * session are gone with it (recipes find out by the session id). */
static void renew(zkl_session_t *s) {
  /* s->mu is held across init so that the new handle's first events wait
   * until it is the current one */
  zhandle_t *nzh = zookeeper_init2(s->hosts, zkl__watcher,
                                   s->requested_timeout_ms, NULL, s, 0,
                                   s->quiet_log ? zkl__log_zookeeper : NULL);
  /* at most one new session a second: a session refused at once (bad
   * credentials) must not turn into a storm of them */
  s->renew_at_ns = zkl__now_ns() + 1000000000LL;
  if (nzh == NULL) { /* out of memory, or no name resolves now */
    int err = errno;
    pthread_mutex_unlock(&s->mu); /* the handler is not called under it */
    zkl__log(s->log_stream, s->log_max, ZKL_LOG_WARN, 0,
             "cannot open a new session on %s: %s (again in a second)",
             s->hosts, strerror(err));
    pthread_mutex_lock(&s->mu);
    return;
  }
  zoo_set_servers_resolution_delay(nzh, RESOLVE_DELAY_MS);
  zhandle_t *old = s->zh;
  s->zh = nzh;
  s->zh_dead = 0;
  s->gone = 0;
  s->auth_failed = 0;
  s->zk_connected = 0;
  s->beat_inflight = 0;
  s->beat_at_ns = 0;
  s->last_heard_ns = zkl__now_ns();
  drop_tasks(s);
  pthread_mutex_unlock(&s->mu);
  zkl__log(s->log_stream, s->log_max, ZKL_LOG_INFO, 0,
           "opening a new session on %s (the last one was lost)", s->hosts);
  /* sent first thing once connected, before any request of ours */
  if (s->auth != NULL)
    zoo_add_auth(nzh, "digest", s->auth, (int)strlen(s->auth), ignore_auth,
                 NULL);
  retire(s, old);
  pthread_mutex_lock(&s->mu);
}

/* A state change for zkl_session_dispatch() (option on_state_in_dispatch). */
struct state_done {
  zkl__done_t d; /* first */
  zkl_session_t *s;
  int state;
};

static void state_run(zkl__done_t *x, int deliver) {
  struct state_done *sd = (struct state_done *)x;
  if (deliver)
    sd->s->on_state(sd->s, (zkl_session_state_t)sd->state, sd->s->state_arg);
  free(sd);
}

/* Reports a state change: on this thread, or queued for the user's
 * dispatch (without memory for the record: here, late rather than never). */
static void report_state(zkl_session_t *s, int state) {
  struct state_done *sd = s->state_in_dispatch ? calloc(1, sizeof *sd) : NULL;
  if (sd == NULL) {
    s->on_state(s, (zkl_session_state_t)state, s->state_arg);
    return;
  }
  sd->d.run = state_run;
  sd->s = s;
  sd->state = state;
  zkl__dispatch_post(s->dq, &sd->d);
}

/* Says a state change in the log (on the session's thread). */
static void log_state(zkl_session_t *s, const struct state_event *e) {
  switch (e->state) {
  case ZKL_SESSION_CONNECTED:
    zkl__log(s->log_stream, s->log_max, ZKL_LOG_INFO, e->id,
             "connected to %s (a new session)", s->hosts);
    break;
  case ZKL_SESSION_RECONNECTED:
    zkl__log(s->log_stream, s->log_max, ZKL_LOG_INFO, e->id,
             "reconnected: the same session, holds are valid again");
    break;
  case ZKL_SESSION_SUSPENDED:
    zkl__log(s->log_stream, s->log_max, ZKL_LOG_WARN, e->id,
             "SUSPENDED: connection lost, every hold is in doubt until "
             "the session reconnects or is lost");
    break;
  case ZKL_SESSION_LOST:
    zkl__log(s->log_stream, s->log_max, ZKL_LOG_ERROR, e->id,
             "LOST (%s): every hold and queued node of it is gone%s",
             e->why != NULL ? e->why : "closed",
             s->reestablish ? "; a new session will be opened" : "");
    break;
  default: break;
  }
}

/* The session's thread: state callbacks (which may call into zkl), the
 * renewal of a lost session, and the deferred tasks.  Never holds s->mu
 * across a callback, a task or a ZooKeeper call. */
static void *session_main(void *arg) {
  zkl_session_t *s = arg;
  pthread_mutex_lock(&s->mu);
  for (;;) {
    if (s->stopping) break;
    if (s->ev_count > 0) { /* report a state change */
      struct state_event e = s->events[s->ev_head];
      s->ev_head = (s->ev_head + 1) % (sizeof s->events / sizeof s->events[0]);
      s->ev_count--;
      pthread_mutex_unlock(&s->mu);
      log_state(s, &e);
      if (s->on_state != NULL) report_state(s, e.state);
      pthread_mutex_lock(&s->mu);
      continue;
    }
    if (s->gone && s->tasks != NULL) { /* the nodes went with the session */
      drop_tasks(s);
      continue;
    }
    if (s->zh_dead && s->reestablish) {
      int64_t now = zkl__now_ns();
      if (now < s->renew_at_ns) {
        zkl__cond_wait_until(&s->cv, &s->mu, s->renew_at_ns);
        continue;
      }
      renew(s);
      continue;
    }
    if (s->tasks != NULL && s->zk_connected &&
        s->tasks_blocked != s->conn_gen + 1) {
      zkl__task_t *t = s->tasks;
      s->tasks = t->next;
      t->next = NULL;
      unsigned gen = s->conn_gen;
      pthread_mutex_unlock(&s->mu);
      int rc = t->run(s, t);
      pthread_mutex_lock(&s->mu);
      if (rc == ZKL_EAGAIN && !s->zh_dead && !s->stopping) {
        t->next = s->tasks; /* again after the next (re)connection */
        s->tasks = t;
        s->tasks_blocked = gen + 1;
      } else {
        pthread_mutex_unlock(&s->mu);
        t->drop(t); /* done, or refused for good */
        pthread_mutex_lock(&s->mu);
      }
      continue;
    }
    pthread_cond_wait(&s->cv, &s->mu);
  }
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

void zkl__session_defer(zkl_session_t *s, zkl__task_t *t) {
  /* May run on ZooKeeper's completion thread: only queue and signal. */
  pthread_mutex_lock(&s->mu);
  int closing = s->stopping; /* the session's end does it */
  if (!closing) {
    t->next = s->tasks;
    s->tasks = t;
    pthread_cond_broadcast(&s->cv);
  }
  pthread_mutex_unlock(&s->mu);
  if (closing) t->drop(t);
}

static void threads_stop(zkl_session_t *s) {
  pthread_mutex_lock(&s->mu);
  int running = s->thread_running, beating = s->beater_running;
  s->stopping = 1;
  s->thread_running = 0;
  s->beater_running = 0;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  if (running) pthread_join(s->thread, NULL);
  if (beating) pthread_join(s->beater, NULL);
  /* What is left goes with the session (at once if it is connected, else
   * when it expires).  Detached under the lock: a completion may still be
   * adding until zookeeper_close has joined ZooKeeper's threads. */
  pthread_mutex_lock(&s->mu);
  drop_tasks(s);
  pthread_mutex_unlock(&s->mu);
}

void zkl__inflight_remove(zkl_session_t *s, zkl__inflight_t *op) {
  pthread_mutex_lock(&s->mu);
  if (op->prev != NULL) op->prev->next = op->next;
  else if (s->inflight == op) s->inflight = op->next;
  if (op->next != NULL) op->next->prev = op->prev;
  op->prev = op->next = NULL;
  pthread_mutex_unlock(&s->mu);
}

/* Pins the current handle for sending (with op: records the request as
 * in flight on it); NULL once the session is closing. */
zhandle_t *zkl__zh_pin(zkl_session_t *s, zkl__inflight_t *op) {
  pthread_rwlock_rdlock(&s->zh_rw);
  pthread_mutex_lock(&s->mu);
  /* A handle made after LOST (renew) takes no request until its CONNECTED
   * has been handled: the client would queue one and send it right after
   * the handshake, and a create answered before that event counts as
   * made on a session heard from only when the event is handled (maybe
   * after a pause that outlived the session).  The caller hears ZCLOSING,
   * a loss, and queues again once the new session is connected. */
  int renewing = s->state == ZKL_SESSION_LOST && !s->zh_dead;
  zhandle_t *zh = s->state == ZKL_SESSION_CLOSED || renewing ? NULL : s->zh;
  if (op != NULL && zh != NULL) {
    op->zh = zh;
    op->prev = NULL;
    op->next = s->inflight;
    if (s->inflight != NULL) s->inflight->prev = op;
    s->inflight = op;
  }
  pthread_mutex_unlock(&s->mu);
  return zh;
}

void zkl__zh_unpin(zkl_session_t *s) { pthread_rwlock_unlock(&s->zh_rw); }

/* ---- open / close ------------------------------------------------------- */

static void threads_stop(zkl_session_t *s);

static void session_free(zkl_session_t *s) {
  threads_stop(s);
  zkl__session_export_end(s);
  if (s->zh != NULL) zookeeper_close(s->zh); /* joins ZooKeeper's threads */
  /* completions still pending at close never run: discard their state */
  while (s->inflight != NULL) {
    zkl__inflight_t *op = s->inflight;
    s->inflight = op->next;
    op->discard(op);
  }
  zkl__engine_free(s->engine); /* after the discards: they post */
  zkl__dispatch_free(s->dq);
  acl_free(&s->acl);
  free(s->hosts);
  free(s->auth);
  free(s->watch_tab);
  free(s->self_tab);
  pthread_rwlock_destroy(&s->zh_rw);
  pthread_cond_destroy(&s->cv);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

/* Shared between add_auth() and its completion; on add_auth()'s stack, which
 * it never leaves before the completion has run. */
struct auth_wait {
  zkl_session_t *s;
  int rc, done;
};

static void auth_done(int rc, const void *data) {
  struct auth_wait *aw = (struct auth_wait *)data;
  pthread_mutex_lock(&aw->s->mu);
  aw->rc = rc;
  aw->done = 1;
  pthread_cond_broadcast(&aw->s->cv);
  pthread_mutex_unlock(&aw->s->mu);
}

/* Adds digest credentials and waits for the server's verdict.  The client
 * always completes the request (with an error on disconnect or close), so
 * waiting without a deadline cannot hang past the connection's own fate. */
static int add_auth(zkl_session_t *s, const char *auth) {
  struct auth_wait aw = {s, 0, 0};
  int rc = zoo_add_auth(s->zh, "digest", auth, (int)strlen(auth), auth_done,
                        &aw);
  if (rc != ZOK) return zkl__fail(ZKL_EAUTH, "add_auth: %s", zerror(rc));
  pthread_mutex_lock(&s->mu);
  while (!aw.done) pthread_cond_wait(&s->cv, &s->mu);
  int failed = s->auth_failed;
  pthread_mutex_unlock(&s->mu);
  if (aw.rc == ZAUTHFAILED || failed)
    return zkl__fail(ZKL_EAUTH, "server refused the digest credentials");
  if (aw.rc != ZOK)
    return zkl__fail(ZKL_ECONNECT, "add_auth: %s", zerror(aw.rc));
  return 0;
}

static int wait_connected(zkl_session_t *s, int64_t deadline) {
  pthread_mutex_lock(&s->mu);
  while (s->state == ZKL_SESSION_CONNECTING &&
         zkl__cond_wait_until(&s->cv, &s->mu, deadline) != ETIMEDOUT) {
  }
  int state = s->state, auth_failed = s->auth_failed;
  pthread_mutex_unlock(&s->mu);
  if (state == ZKL_SESSION_CONNECTED) return 0;
  if (auth_failed) return zkl__fail(ZKL_EAUTH, "authentication failed");
  return ZKL_ECONNECT;
}

int zkl_session_open(zkl_session_t **out, const char *hosts,
                     const zkl_session_opts_t *opts) {
  zkl__clear_error();
  if (out == NULL) return zkl__fail(ZKL_EINVAL, "out is NULL");
  *out = NULL;
  if (hosts == NULL || hosts[0] == '\0')
    return zkl__fail(ZKL_EINVAL, "hosts is NULL or empty");
  zkl_session_opts_t defaults;
  zkl_session_opts_init(&defaults);
  const zkl_session_opts_t *o = opts != NULL ? opts : &defaults;
  int rc = opts_check(o);
  if (rc != 0) return rc;

  zkl_session_t *s = calloc(1, sizeof *s);
  if (s == NULL) return ZKL_ENOMEM;
  if (pthread_mutex_init(&s->mu, NULL) != 0) {
    free(s);
    return ZKL_ESYSTEM;
  }
  if (zkl__cond_init(&s->cv) != 0) {
    pthread_mutex_destroy(&s->mu);
    free(s);
    return ZKL_ESYSTEM;
  }
  /* writers first: a retirement must not wait behind a stream of senders */
  pthread_rwlockattr_t rwa;
  pthread_rwlockattr_init(&rwa);
  pthread_rwlockattr_setkind_np(&rwa,
                                PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
  int rwrc = pthread_rwlock_init(&s->zh_rw, &rwa);
  pthread_rwlockattr_destroy(&rwa);
  if (rwrc != 0) {
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
    return ZKL_ESYSTEM;
  }
  s->state = ZKL_SESSION_CONNECTING;
  s->on_state = o->on_state;
  s->state_arg = o->state_arg;
  s->state_in_dispatch = o->on_state_in_dispatch != 0;
  s->hosts = strdup(hosts);
  s->reestablish = o->reestablish != 0;
  s->requested_timeout_ms = o->session_timeout_ms;
  s->quiet_log = o->log_stream == NULL;
  s->log_stream = o->log_stream;
  s->log_max = o->log_level > 0 ? o->log_level : ZKL_LOG_INFO;
  if (o->auth != NULL) s->auth = strdup(o->auth);
  if (s->hosts == NULL || (o->auth != NULL && s->auth == NULL) ||
      (rc = acl_choose(&s->acl, o)) != 0) {
    session_free(s);
    return ZKL_ENOMEM;
  }
  if (o->log_level > 0) zoo_set_debug_level((ZooLogLevel)o->log_level);
  if (o->log_stream != NULL) zoo_set_log_stream(o->log_stream);

  int64_t deadline = zkl__deadline_after_ms(o->connect_timeout_ms);
  /* Hold the lock across init so the watcher cannot run before s->zh is
   * set (it reads zoo_recv_timeout(s->zh) on connect). */
  pthread_mutex_lock(&s->mu);
  /* the session cannot have been touched before this: a safe start for
   * "last heard" until the first heartbeat is answered */
  s->last_heard_ns = zkl__now_ns();
  s->zh = zookeeper_init2(hosts, zkl__watcher, o->session_timeout_ms, NULL, s,
                          0, o->log_stream != NULL ? NULL : zkl__log_zookeeper);
  int err = errno;
  if (s->zh != NULL) zoo_set_servers_resolution_delay(s->zh, RESOLVE_DELAY_MS);
  pthread_mutex_unlock(&s->mu);
  if (s->zh == NULL) {
    session_free(s);
    return zkl__fail(err == ENOMEM ? ZKL_ENOMEM : ZKL_ECONNECT,
                     "cannot use ZooKeeper hosts \"%s\": %s", hosts,
                     strerror(err));
  }
  if ((s->dq = zkl__dispatch_new()) == NULL) {
    session_free(s);
    return zkl__fail(ZKL_ESYSTEM, "cannot make the session's eventfd");
  }
  if ((s->engine = zkl__engine_new()) == NULL) {
    session_free(s);
    return zkl__fail(ZKL_ESYSTEM, "cannot start the session's engine");
  }
  if (zkl__thread_start(&s->thread, session_main, s) != 0) {
    session_free(s);
    return zkl__fail(ZKL_ESYSTEM, "cannot start the session's thread");
  }
  s->thread_running = 1;
  if (zkl__thread_start(&s->beater, beat_main, s) != 0) {
    session_free(s);
    return zkl__fail(ZKL_ESYSTEM, "cannot start the session's thread");
  }
  s->beater_running = 1;
  rc = wait_connected(s, deadline);
  if (rc == ZKL_ECONNECT)
    zkl__fail(rc, "cannot connect to ZooKeeper at %s within %d ms", hosts,
              (int)o->connect_timeout_ms);
  if (rc == 0 && o->auth != NULL) rc = add_auth(s, o->auth);
  if (rc != 0) {
    zkl__log(o->log_stream, ZKL_LOG_ERROR, ZKL_LOG_ERROR, 0,
             "cannot open a session: %s", zkl_last_error());
    session_free(s);
    return rc;
  }
  *out = s;
  return 0;
}

void zkl_session_close(zkl_session_t *s) {
  if (s == NULL) return;
  if (s->thread_running && pthread_equal(pthread_self(), s->thread)) {
    /* from an on_state callback: it would join itself */
    zkl__fail(ZKL_EDEADLK, "zkl_session_close() from an on_state callback");
    return;
  }
  if (dispatching == s) { /* the completions after this one need it */
    zkl__fail(ZKL_EDEADLK, "zkl_session_close() from a completion");
    return;
  }
  /* the threads first: once stopping is set no callback can start an
   * export, then the one running ends (its file goes) */
  threads_stop(s);
  zkl__session_export_end(s);
  pthread_mutex_lock(&s->mu);
  s->state = ZKL_SESSION_CLOSED;
  s->epoch++;
  for (zkl__waiter_t *w = s->waiters; w != NULL; w = w->next)
    waiter_wake(w);
  zhandle_t *zh = s->zh;
  s->zh = NULL;
  pthread_mutex_unlock(&s->mu);
  /* Ends the session on the server now: every ephemeral node goes at once.
   * Joins ZooKeeper's threads, so no watcher runs after this.  Unlocked,
   * because the watcher may be waiting for s->mu; after every sender that
   * pinned the handle before it went has let go (as retire() does), and
   * the requests still owed an answer fail (operations of objects that
   * outlive the close end on them). */
  if (zh != NULL) retire(s, zh);
  pthread_mutex_lock(&s->mu);
  int defer = s->refs > 0;
  s->close_pending = defer;
  pthread_mutex_unlock(&s->mu);
  if (!defer) session_free(s);
}

void zkl__session_ref(zkl_session_t *s) {
  pthread_mutex_lock(&s->mu);
  s->refs++;
  pthread_mutex_unlock(&s->mu);
}

void zkl__session_unref(zkl_session_t *s) {
  pthread_mutex_lock(&s->mu);
  int last = --s->refs == 0 && s->close_pending;
  pthread_mutex_unlock(&s->mu);
  if (last) session_free(s);
}

/* ---- queries -------------------------------------------------------------- */

int zkl_session_state(zkl_session_t *s) {
  if (s == NULL) return ZKL_EINVAL;
  pthread_mutex_lock(&s->mu);
  silent_too_long(s, zkl__now_ns());
  int st = s->state;
  pthread_mutex_unlock(&s->mu);
  return st;
}

int zkl_session_timeout(zkl_session_t *s) {
  if (s == NULL) return ZKL_EINVAL;
  pthread_mutex_lock(&s->mu);
  int t = s->timeout_ms;
  pthread_mutex_unlock(&s->mu);
  return t;
}

zkl__stats_t *zkl__session_stats(zkl_session_t *s) { return &s->stats; }

const char *zkl__session_hosts(zkl_session_t *s) { return s->hosts; }

void zkl__session_export_end(zkl_session_t *s) {
  pthread_mutex_lock(&s->mu);
  zkl__stop_fn *stop = s->export_stop;
  void *arg = s->export_arg;
  s->export_stop = NULL;
  s->export_arg = NULL;
  pthread_mutex_unlock(&s->mu);
  /* unlocked: the hook joins a thread that takes s->mu to read the state */
  if (stop != NULL) stop(arg);
}

int zkl__session_export_set(zkl_session_t *s, zkl__stop_fn *stop,
                            void *arg) {
  pthread_mutex_lock(&s->mu);
  /* once close has begun (stopping), nothing may outlive it */
  int ok = !s->stopping && s->export_stop == NULL;
  if (ok) {
    s->export_stop = stop;
    s->export_arg = arg;
  }
  pthread_mutex_unlock(&s->mu);
  return ok ? 0 : -1;
}

/* The scalar counters, by name (the histogram is copied apart). */
#define STATS_SCALARS(X)                                                     \
  X(creates) X(deletes) X(exists) X(gets) X(sets) X(children) X(multis)      \
  X(syncs) X(heartbeats) X(watches) X(events) X(wakeups) X(acquisitions)     \
  X(grants) X(timeouts) X(cancels) X(failures) X(waiting) X(wait_us_total)   \
  X(wait_us_max) X(connects) X(suspensions) X(reconnects) X(losses)

int zkl_session_stats(zkl_session_t *s, zkl_session_stats_t *out,
                      size_t size) {
  zkl__clear_error();
  if (s == NULL || out == NULL || size == 0)
    return zkl__fail(ZKL_EINVAL, "session or out is NULL, or size is 0");
  zkl_session_stats_t v;
#define STATS_COPY(f) \
  v.f = atomic_load_explicit(&s->stats.f, memory_order_relaxed);
  STATS_SCALARS(STATS_COPY)
#undef STATS_COPY
  for (int i = 0; i < ZKL_STATS_WAIT_BUCKETS; i++)
    v.wait_hist[i] =
        atomic_load_explicit(&s->stats.wait_hist[i], memory_order_relaxed);
  memcpy(out, &v, size < sizeof v ? size : sizeof v);
  return 0;
}

/* The bucket of a wait of us microseconds (ZKL_STATS_WAIT_BUCKETS). */
static int wait_bucket(uint64_t us) {
  int b = 0;
  for (uint64_t bound = 1000; b < ZKL_STATS_WAIT_BUCKETS - 1 && us >= bound;
       bound *= 10)
    b++;
  return b;
}

void zkl__stats_acquire_begin(zkl_session_t *s) {
  zkl__count(&s->stats.acquisitions);
  zkl__count(&s->stats.waiting);
}

void zkl__stats_acquire_end(zkl_session_t *s, int rc, int64_t started_ns) {
  zkl__stats_t *st = &s->stats;
  atomic_fetch_sub_explicit(&st->waiting, 1, memory_order_relaxed);
  if (rc == ZKL_ETIMEDOUT || rc == ZKL_EBUSY) {
    zkl__count(&st->timeouts);
  } else if (rc == ZKL_ECANCELED) {
    zkl__count(&st->cancels);
  } else if (rc != 0) {
    zkl__count(&st->failures);
  } else {
    int64_t ns = zkl__now_ns() - started_ns;
    uint64_t us = ns > 0 ? (uint64_t)ns / 1000 : 0;
    zkl__count(&st->grants);
    zkl__count(&st->wait_hist[wait_bucket(us)]);
    atomic_fetch_add_explicit(&st->wait_us_total, us, memory_order_relaxed);
    uint64_t max = atomic_load_explicit(&st->wait_us_max, memory_order_relaxed);
    while (us > max &&
           !atomic_compare_exchange_weak_explicit(&st->wait_us_max, &max, us,
                                                  memory_order_relaxed,
                                                  memory_order_relaxed)) {
    }
  }
}

void zkl__session_log(zkl_session_t *s, int level, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  zkl__vlog(s->log_stream, s->log_max, level, zkl_session_id(s), fmt, ap);
  va_end(ap);
}

int64_t zkl_session_id(zkl_session_t *s) {
  if (s == NULL) return 0;
  pthread_mutex_lock(&s->mu);
  int64_t id = s->id;
  pthread_mutex_unlock(&s->mu);
  return id;
}

zhandle_t *zkl_session_zhandle(zkl_session_t *s) {
  if (s == NULL) return NULL;
  pthread_mutex_lock(&s->mu); /* replaced when the session is renewed */
  zhandle_t *zh = s->zh;
  pthread_mutex_unlock(&s->mu);
  return zh;
}

zkl__engine_t *zkl__session_engine(zkl_session_t *s) { return s->engine; }

zkl__dispatch_t *zkl__session_dispatch_queue(zkl_session_t *s) {
  return s->dq;
}

int zkl_session_fd(zkl_session_t *s) {
  zkl__clear_error();
  if (s == NULL) return zkl__fail(ZKL_EINVAL, "session is NULL");
  return zkl__dispatch_fd(s->dq);
}

int zkl_session_dispatch(zkl_session_t *s) {
  zkl__clear_error();
  if (s == NULL) return zkl__fail(ZKL_EINVAL, "session is NULL");
  zkl_session_t *outer = dispatching;
  dispatching = s;
  int n = zkl__dispatch_run(s->dq);
  dispatching = outer;
  return n;
}

const struct ACL_vector *zkl__session_acl(zkl_session_t *s) {
  return &s->acl;
}

int zkl__health_locked(zkl_session_t *s) {
  /* a process that was paused (SIGSTOP, a long stall) learns it here,
   * before its own I/O thread has even noticed */
  silent_too_long(s, zkl__now_ns());
  if (s->state == ZKL_SESSION_LOST || s->state == ZKL_SESSION_CLOSED)
    return ZKL_ELOST;
  if (s->state == ZKL_SESSION_SUSPENDED) return ZKL_ESUSPENDED;
  return 0;
}

int zkl__session_renews_locked(zkl_session_t *s) {
  return s->reestablish && s->state != ZKL_SESSION_CLOSED;
}

int zkl__session_renews(zkl_session_t *s) {
  pthread_mutex_lock(&s->mu);
  int r = zkl__session_renews_locked(s);
  pthread_mutex_unlock(&s->mu);
  return r;
}

int64_t zkl__session_id_locked(zkl_session_t *s) { return s->id; }

int zkl__session_gone(zkl_session_t *s) {
  pthread_mutex_lock(&s->mu);
  int gone = s->gone || s->state == ZKL_SESSION_CLOSED;
  pthread_mutex_unlock(&s->mu);
  return gone;
}

int zkl__session_snapshot(zkl_session_t *s, unsigned *epoch) {
  pthread_mutex_lock(&s->mu);
  int h = zkl__health_locked(s);
  *epoch = s->epoch;
  pthread_mutex_unlock(&s->mu);
  return h;
}

int zkl__session_health(zkl_session_t *s) {
  pthread_mutex_lock(&s->mu);
  int h = zkl__health_locked(s);
  pthread_mutex_unlock(&s->mu);
  return h;
}

int zkl__zrc_fail(zkl_session_t *s, int zrc, const char *what,
                  const char *path) {
  if (zrc == ZKL__ZTIMEDOUT)
    return zkl__fail(ZKL_ETIMEDOUT, "%s %s: no answer before the deadline",
                     what, path);
  if (zrc == ZSESSIONEXPIRED || zrc == ZINVALIDSTATE || zrc == ZCLOSING ||
      zkl__session_health(s) == ZKL_ELOST)
    return zkl__fail(ZKL_ELOST, "%s %s: session lost", what, path);
  if (zrc == ZCONNECTIONLOSS || zrc == ZOPERATIONTIMEOUT)
    return zkl__fail(ZKL_ESUSPENDED, "%s %s: the connection was lost before "
                     "the answer came", what, path);
  if (zrc == ZNOAUTH)
    return zkl__fail(ZNOAUTH, "%s %s: not authorised", what, path);
  return zkl__fail(zrc, "%s %s: %s", what, path, zerror(zrc));
}

/* ---- waiters ---------------------------------------------------------------- */

int zkl__waiter_init(zkl__waiter_t *w) {
  memset(w, 0, sizeof *w);
  return 0;
}

void zkl__waiter_fini(zkl__waiter_t *w) { (void)w; }

void zkl__session_lock(zkl_session_t *s) { pthread_mutex_lock(&s->mu); }
void zkl__session_unlock(zkl_session_t *s) { pthread_mutex_unlock(&s->mu); }
unsigned zkl__session_epoch(zkl_session_t *s) { return s->epoch; }
void zkl__waiter_kick(zkl__waiter_t *w) { waiter_wake(w); }

static void register_as(zkl_session_t *s, zkl__waiter_t *w, const char *path,
                        const char *name) {
  if (w->prev == NULL && s->waiters != w) {
    w->next = s->waiters;
    if (s->waiters != NULL) s->waiters->prev = w;
    s->waiters = w;
  }
  watch_unlink(s, w);
  self_unlink(s, w);
  w->watch_path = path;
  w->watch_name = path != NULL ? name : NULL;
  w->fired = 0;
  w->fired_type = 0;
  w->self_path = NULL;
  w->self_fired = 0;
  w->epoch = s->epoch;
  if (path != NULL) watch_link(s, w);
}

void zkl__waiter_register(zkl_session_t *s, zkl__waiter_t *w,
                          const char *path) {
  register_as(s, w, path, NULL);
}

void zkl__waiter_register_child(zkl_session_t *s, zkl__waiter_t *w,
                                const char *parent, const char *name) {
  register_as(s, w, parent, name);
}

void zkl__waiter_watch_self(zkl_session_t *s, zkl__waiter_t *w,
                            const char *path) {
  self_unlink(s, w);
  w->self_path = path;
  if (path != NULL) self_link(s, w);
}

void zkl__waiter_unregister(zkl_session_t *s, zkl__waiter_t *w) {
  if (w->prev != NULL) w->prev->next = w->next;
  else if (s->waiters == w) s->waiters = w->next;
  else return; /* not registered */
  if (w->next != NULL) w->next->prev = w->prev;
  w->prev = w->next = NULL;
  watch_unlink(s, w);
  self_unlink(s, w);
  w->watch_path = NULL;
  w->watch_name = NULL;
  w->self_path = NULL;
}

void zkl__waiters_poke_path(zkl_session_t *s, const char *path) {
  fire_path(s, path, ZOO_NOTWATCHING_EVENT);
}
