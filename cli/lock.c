/* cli/lock.c - `zkl lock PATH CMD...`: run CMD while holding the lock;
 * `zkl lock --all PATH... -- CMD...`: while holding every PATH's lock.
 *
 * Everything runs on the main thread's loop (cli/loop.h): the lock is
 * taken and released with the asynchronous calls, whose completions the
 * loop dispatches; it cancels the acquisition on a signal, starts CMD once
 * granted, passes signals on, and stops CMD when the session is LOST or
 * our node is deleted.
 *
 * --all holds a multi-lock (zkl/multilock.h): one mutex node per PATH,
 * made in one transaction, all held or none.  It has no watch of its hold
 * (there is no zkl_multilock_watch_async() as there is a mutex's), so zkl
 * watches it itself, as `zkl sem` watches its leases and more:
 *   - the session: its LOST state (an event of the loop) and, five times
 *     a second while CMD runs and at every change of state,
 *     zkl_multilock_holding(), which asks no server: ZKL_ELOST once the
 *     session has been silent for a whole session timeout, or was
 *     replaced by a new one;
 *   - each node: an exists watch of ZooKeeper's own, set through the
 *     session's handle (zkl_session_zhandle()) once granted, which tells a
 *     node deleted by someone else (one event at most, and none once the
 *     release begins: our own deletes are no loss).  A change of a node's
 *     data sets the watch again.
 * Either stops CMD (TERM, KILL after --grace) and zkl exits 75.  In doubt
 * (ZKL_ESUSPENDED) CMD goes on, as for one lock.  A grant that the library
 * gave up as it was dispatched, the connection down by then
 * (ZKL_ESUSPENDED), queues again within what is left of -t, as `zkl sem`
 * does.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zookeeper/zookeeper.h>

#include "child.h"
#include "cli.h"
#include "loop.h"

/* How often a multi-lock's session is looked at while CMD runs, besides
 * its LOST event (no request: what the session knows). */
#define HEALTH_EVERY_NS 200000000LL

typedef struct locker locker_t;

/* --all: the exists watch of one node (ZooKeeper's context). */
typedef struct node_watch {
  locker_t *l;
  size_t i;
} node_watch_t;

struct locker {
  const cli_opts_t *o;
  zkl_session_t *s;
  zkl_mutex_t *m;      /* the exclusive lock, or                          */
  zkl_rwlock_t *rw;    /* the read/write lock, or                         */
  zkl_multilock_t *ml; /* --all's locks                                   */
  int released;        /* the release's completion came                   */
  int unlock_rc;       /* and its code                                    */
  char detail[1024];   /* zkl_last_error() at the last completion         */
  uint64_t token;      /* set before CLI_EV_ACQUIRED(0) is posted         */
  int64_t session_id;  /* the session it was granted on, likewise         */
  int64_t deadline_ns; /* -t's, monotonic; INT64_MAX: none                */
  char node[1024];
  /* --all: o->n_paths of each, filled by the grant */
  char (*nodes)[1024]; /* each PATH's node ("" if it could not be told)   */
  uint64_t *tokens;    /* each PATH's fencing token                       */
  node_watch_t *watches;
  atomic_int watching; /* a node's deletion is to be told                 */
  atomic_int told;     /* and was (one event at most)                     */
};

/* ---- the lock, through the async calls ------------------------------------------ */

static int holding(locker_t *l) {
  if (l->ml != NULL) return zkl_multilock_holding(l->ml);
  return l->m != NULL ? zkl_mutex_holding(l->m) : zkl_rwlock_holding(l->rw);
}

static void lock_cancel(locker_t *l) {
  if (l->ml != NULL) zkl_multilock_cancel(l->ml);
  else if (l->m != NULL) zkl_mutex_cancel(l->m);
  else zkl_rwlock_cancel(l->rw);
}

/* --all: a node is gone (on ZooKeeper's thread): told once, while the
 * hold is CMD's. */
static void node_gone(locker_t *l, size_t i) {
  if (!atomic_load(&l->watching) || atomic_exchange(&l->told, 1)) return;
  cli_event_t ev;
  memset(&ev, 0, sizeof ev);
  ev.type = CLI_EV_NODE;
  ev.arg = ZKL_ELOST;
  snprintf(ev.data, sizeof ev.data, "%s", l->nodes[i]);
  ev.len = (int)strlen(ev.data);
  cli_loop_post(&ev);
}

static void node_seen(int rc, const struct Stat *st, const void *data);

/* --all: a node's exists watch fired (on ZooKeeper's thread). */
static void node_watcher(zhandle_t *zh, int type, int state,
                         const char *path, void *ctx) {
  (void)state, (void)path;
  node_watch_t *w = ctx;
  if (type == ZOO_DELETED_EVENT) {
    node_gone(w->l, w->i);
  } else if (type == ZOO_CHANGED_EVENT && atomic_load(&w->l->watching)) {
    /* the data changed, by someone else (our release, which may write the
     * release mark before it deletes, comes once watching is off): watch
     * on */
    int zrc = zoo_awexists(zh, w->l->nodes[w->i], node_watcher, w, node_seen,
                           w);
    if (zrc != ZOK) node_seen(zrc, NULL, w);
  } /* session events: the loop hears of them from the session */
}

/* --all: the answer to an exists that set a node's watch.  Its czxid is
 * the token the library reported: said if not (CMD has it already). */
static void node_seen(int rc, const struct Stat *st, const void *data) {
  node_watch_t *w = (node_watch_t *)data;
  locker_t *l = w->l;
  if (rc == ZNONODE) {
    node_gone(l, w->i);
  } else if (rc != ZOK) {
    if (atomic_load(&l->watching))
      fprintf(stderr, "zkl: warning: cannot watch the lock's node %s: %s\n",
              l->nodes[w->i], zerror(rc));
  } else if (st != NULL && (uint64_t)st->czxid != l->tokens[w->i] &&
             atomic_load(&l->watching)) {
    fprintf(stderr, "zkl: warning: the lock's node %s was made by "
                    "transaction %" PRIu64 ", not %" PRIu64 " (its fencing "
                    "token)\n", l->nodes[w->i], (uint64_t)st->czxid,
            l->tokens[w->i]);
  }
}

/* --all: watches every node of the hold just taken (on the loop). */
static void watch_nodes(locker_t *l) {
  zhandle_t *zh = zkl_session_zhandle(l->s);
  atomic_store(&l->watching, 1);
  for (size_t i = 0; i < l->o->n_paths; i++) {
    if (l->nodes[i][0] == '\0') continue; /* said already */
    int zrc = zh != NULL ? zoo_awexists(zh, l->nodes[i], node_watcher,
                                        &l->watches[i], node_seen,
                                        &l->watches[i])
                         : ZINVALIDSTATE;
    if (zrc != ZOK)
      fprintf(stderr, "zkl: warning: cannot watch the lock's node %s: %s\n",
              l->nodes[i], zerror(zrc));
  }
}

/* The hold's watch ended (on the loop): ZKL_ELOST when the hold is gone
 * (its node deleted by someone else, or the session lost); 0 or
 * ZKL_ECANCELED when we let go of it first. */
static void on_gone(void *obj, int rc, uint64_t token, void *arg) {
  (void)obj, (void)token, (void)arg;
  if (rc == ZKL_ELOST) cli_loop_post_arg(CLI_EV_NODE, rc);
  else if (rc != 0 && rc != ZKL_ECANCELED) /* the session's state speaks */
    fprintf(stderr, "zkl: warning: cannot watch the lock's node: %s\n",
            zkl_strerror(rc));
}

/* Asks to be told when the hold is gone, so that its node's deletion by
 * someone else stops CMD. */
static void watch_hold(locker_t *l) {
  if (l->ml != NULL) {
    watch_nodes(l);
    return;
  }
  int rc = l->m != NULL ? zkl_mutex_watch_async(l->m, on_gone, l)
                        : zkl_rwlock_watch_async(l->rw, on_gone, l);
  if (rc != 0)
    fprintf(stderr, "zkl: warning: cannot watch the lock's node: %s\n",
            zkl_strerror(rc));
}

/* The node of the hold just taken, for CMD's environment (--all: each
 * node and its token). */
static void describe_hold(locker_t *l) {
  for (size_t i = 0; l->ml != NULL && i < l->o->n_paths; i++) {
    int rc = zkl_multilock_node(l->ml, i, l->nodes[i], sizeof l->nodes[i]);
    if (rc == 0) rc = zkl_multilock_token(l->ml, i, &l->tokens[i]);
    if (rc != 0) {
      l->nodes[i][0] = '\0';
      l->tokens[i] = l->token;
      fprintf(stderr, "zkl: warning: cannot tell the lock's node at %s: %s\n",
              l->o->paths[i], zkl_strerror(rc));
    }
  }
  if (l->ml != NULL) return;
  int rc = l->m != NULL ? zkl_mutex_node(l->m, l->node, sizeof l->node)
                        : zkl_rwlock_node(l->rw, l->node, sizeof l->node);
  if (rc != 0)
    fprintf(stderr, "zkl: warning: cannot tell the lock's node: %s\n",
            zkl_strerror(rc));
}

/* The acquisition's completion (on the loop, from zkl_session_dispatch). */
static void on_locked(void *obj, int rc, uint64_t token, void *arg) {
  (void)obj;
  locker_t *l = arg;
  snprintf(l->detail, sizeof l->detail, "%s", rc != 0 ? zkl_last_error() : "");
  if (rc == 0) {
    /* the id first, then holding(): session ids only move forward, so a
     * hold still valid after the read was granted on that session */
    l->session_id = zkl_session_id(l->s);
    l->token = token;
    int h = holding(l);
    if (h < 0 && h != ZKL_ESUSPENDED) { /* lost already: never start CMD
                                            (destroy lets the hold go) */
      rc = ZKL_ELOST;
    } else {
      describe_hold(l);
      watch_hold(l);
    }
  }
  cli_loop_post_arg(CLI_EV_ACQUIRED, rc);
}

static void on_unlocked(void *obj, int rc, uint64_t token, void *arg) {
  (void)obj, (void)token;
  locker_t *l = arg;
  snprintf(l->detail, sizeof l->detail, "%s", rc != 0 ? zkl_last_error() : "");
  l->unlock_rc = rc;
  l->released = 1;
  cli_loop_post_arg(CLI_EV_RELEASED, rc); /* wakes the loop */
}

/* Starts the acquisition with timeout t (<0 forever, 0 try). */
static int lock_start(locker_t *l, int64_t t) {
  if (l->ml != NULL) return zkl_multilock_lock_async(l->ml, t, on_locked, l);
  switch (l->o->mode) {
  case CLI_LOCK_READ: return zkl_rwlock_rdlock_async(l->rw, t, on_locked, l);
  case CLI_LOCK_WRITE: return zkl_rwlock_wrlock_async(l->rw, t, on_locked, l);
  case CLI_LOCK_EXCLUSIVE: break;
  }
  return zkl_mutex_lock_async(l->m, t, on_locked, l);
}

/* ---- the main thread ---------------------------------------------------------- */

/* The loop's dispatch: every change of state becomes an event. */
static void on_state(zkl_session_t *s, zkl_session_state_t state, void *arg) {
  (void)s, (void)arg;
  cli_loop_post_arg(CLI_EV_STATE, (int)state);
}

typedef struct run {
  const cli_opts_t *o;
  locker_t *l;
  const char *paths; /* for messages: PATH, or --all's PATHs             */
  const char *what;  /* "lock PATH", or "locks PATH..."                  */
  cli_child_t child;
  int acquired;      /* the object holds the lock                        */
  int acquire_done;  /* the acquisition's completion came                */
  int start_pending; /* granted, CMD waits for the connection to be back */
  int stopping;      /* a signal or a loss: the acquisition is canceled  */
  int stop_signal;   /* the signal that stopped us, 0 if none            */
  int lost;          /* the lock was lost                                */
  int done;
  int result;        /* exit status once done                            */
} run_t;

static void stop_waiting(run_t *r) {
  r->stopping = 1;
  lock_cancel(r->l);
}

static void finish(run_t *r, int result) {
  r->result = result;
  r->done = 1;
}

/* The lock is gone (session LOST, node deleted): stop CMD, or stop
 * waiting for the lock. */
static void lose(run_t *r, const char *why) {
  if (r->lost) return;
  r->lost = 1;
  if (r->start_pending) {
    fprintf(stderr, "zkl: %s lost (%s) before CMD started\n", r->what, why);
    finish(r, CLI_EX_LOST);
  } else if (r->child.running) {
    fprintf(stderr, "zkl: %s lost (%s): stopping CMD (pid %ld)\n", r->what,
            why, (long)r->child.pid);
    cli_child_stop(&r->child, r->o->grace_ms);
  } else if (!r->acquired) {
    stop_waiting(r);
  }
}

/* "NAME=" and the n words (at most 1023 bytes each) given by word(i),
 * one per line; NULL without memory. */
static char *lines_var(const char *name, size_t n,
                       void (*word)(const locker_t *l, size_t i, char *buf,
                                    size_t len),
                       const locker_t *l) {
  size_t cap = strlen(name) + 2 + n * 1100;
  char *v = malloc(cap), *p = v;
  if (v == NULL) return NULL;
  p += sprintf(p, "%s=", name);
  for (size_t i = 0; i < n; i++) {
    char buf[1100];
    word(l, i, buf, sizeof buf);
    p += sprintf(p, "%s%s", i > 0 ? "\n" : "", buf);
  }
  return v;
}

static void path_word(const locker_t *l, size_t i, char *buf, size_t len) {
  snprintf(buf, len, "%s", l->o->paths[i]);
}

static void node_word(const locker_t *l, size_t i, char *buf, size_t len) {
  snprintf(buf, len, "%s", l->nodes[i]);
}

static void token_word(const locker_t *l, size_t i, char *buf, size_t len) {
  snprintf(buf, len, "%s=%" PRIu64, l->o->paths[i], l->tokens[i]);
}

/* --all's CMD: ZKL_LOCK_PATHS, ZKL_LOCK_NODES and ZKL_FENCING_TOKENS (one
 * line per PATH, in the order given), ZKL_FENCING_TOKEN (the hold's). */
static void start_all_cmd(run_t *r) {
  locker_t *l = r->l;
  size_t n = r->o->n_paths;
  char *paths = lines_var("ZKL_LOCK_PATHS", n, path_word, l);
  char *nodes = lines_var("ZKL_LOCK_NODES", n, node_word, l);
  char *tokens = lines_var("ZKL_FENCING_TOKENS", n, token_word, l);
  char token_var[64];
  snprintf(token_var, sizeof token_var, "ZKL_FENCING_TOKEN=%" PRIu64,
           l->token);
  if (paths == NULL || nodes == NULL || tokens == NULL) {
    fprintf(stderr, "zkl: no memory for CMD's environment\n");
    finish(r, CLI_EX_SOFTWARE);
  } else {
    char *env[] = {paths, nodes, token_var, tokens, NULL};
    cli_verbose(r->o, "holding %s: token %" PRIu64, r->what, l->token);
    for (size_t i = 0; i < n; i++)
      cli_verbose(r->o, "  %s: node %s, token %" PRIu64, r->o->paths[i],
                  l->nodes[i], l->tokens[i]);
    int rc = cli_child_start(&r->child, r->o->cmd, env);
    if (rc != 0) finish(r, rc);
  }
  free(paths);
  free(nodes);
  free(tokens);
}

static void start_cmd(run_t *r) {
  locker_t *l = r->l;
  if (l->ml != NULL) {
    start_all_cmd(r);
    return;
  }
  char path_var[1100], node_var[1100], token_var[64];
  snprintf(path_var, sizeof path_var, "ZKL_LOCK_PATH=%s", r->o->path);
  snprintf(node_var, sizeof node_var, "ZKL_LOCK_NODE=%s", l->node);
  snprintf(token_var, sizeof token_var, "ZKL_FENCING_TOKEN=%" PRIu64,
           l->token);
  char *env[] = {path_var, node_var, token_var, NULL};
  cli_verbose(r->o, "holding %s: node %s, token %" PRIu64, r->o->path,
              l->node, l->token);
  int rc = cli_child_start(&r->child, r->o->cmd, env);
  if (rc != 0) finish(r, rc);
}

/* CMD starts only on a hold that is valid now, by holding()'s rule: the
 * session it was granted on is connected and was heard from within its
 * timeout (zkl_session_state() tells a silent one LOST).  Time passes
 * between the grant and here, and the process may have been paused. */
static void start_if_valid(run_t *r) {
  int st = zkl_session_state(r->l->s);
  int same = zkl_session_id(r->l->s) == r->l->session_id;
  r->start_pending = 0;
  if (st == ZKL_SESSION_CONNECTED && same) {
    start_cmd(r);
  } else if (st == ZKL_SESSION_SUSPENDED && same) {
    cli_verbose(r->o, "%s: connection down: CMD waits until it is back",
                r->paths);
    r->start_pending = 1; /* RECONNECTED starts it, LOST ends the run */
  } else {
    r->start_pending = 1;
    lose(r, "session lost");
  }
}

/* --all, while CMD runs: the hold's session, as the library knows it. */
static void check_health(run_t *r) {
  if (r->l->ml == NULL || !r->child.running || r->lost) return;
  if (holding(r->l) == ZKL_ELOST) lose(r, "session lost");
}

/* What is left of -t (0: it has passed, and a try is all there is). */
static int64_t time_left(const run_t *r) {
  if (r->o->timeout_ms <= 0) return r->o->timeout_ms;
  int64_t left = r->l->deadline_ns - cli_now_ns();
  return left > 0 ? (left + 999999) / 1000000 : 0;
}

static void on_acquired(run_t *r, int rc) {
  const char *detail = r->l->detail;
  r->acquire_done = 1;
  if (r->done) { /* the run ended meanwhile: only the hold counts */
    r->acquired = rc == 0;
    return;
  }
  if (rc == ZKL_ESUSPENDED && r->l->ml != NULL && r->o->timeout_ms != 0 &&
      !r->lost && r->stop_signal == 0 && cli_now_ns() < r->l->deadline_ns) {
    /* granted as the connection went down: the library gave the locks
     * up; in line again, as a wait goes through a connection down */
    cli_verbose(r->o, "%s: %s: waiting again", r->paths, detail);
    r->acquire_done = 0;
    rc = lock_start(r->l, time_left(r));
    if (rc == 0) return;
    r->acquire_done = 1;
    fprintf(stderr, "zkl: cannot lock %s: %s\n", r->paths, zkl_strerror(rc));
    finish(r, cli_exit_code(rc));
    return;
  }
  if (rc == 0) {
    r->acquired = 1;
    if (r->lost) {
      fprintf(stderr, "zkl: %s lost before CMD started\n", r->what);
      finish(r, CLI_EX_LOST);
    } else if (r->stop_signal != 0) {
      finish(r, CLI_EX_SIGNAL_BASE + r->stop_signal);
    } else {
      start_if_valid(r);
    }
    return;
  }
  if (rc == ZKL_EBUSY || rc == ZKL_ETIMEDOUT) {
    cli_verbose(r->o, "%s: not obtained: %s%s%s", r->paths, zkl_strerror(rc),
                detail[0] ? ": " : "", detail);
    finish(r, r->o->conflict_exit);
  } else if (rc == ZKL_ECANCELED && r->stop_signal != 0) {
    finish(r, CLI_EX_SIGNAL_BASE + r->stop_signal);
  } else if (r->lost || rc == ZKL_ELOST) {
    fprintf(stderr, "zkl: session lost while waiting for %s\n", r->paths);
    finish(r, CLI_EX_LOST);
  } else {
    fprintf(stderr, "zkl: cannot lock %s: %s%s%s\n", r->paths,
            zkl_strerror(rc), detail[0] ? ": " : "", detail);
    finish(r, cli_exit_code(rc));
  }
}

static void on_event(run_t *r, const cli_event_t *ev) {
  switch (ev->type) {
  case CLI_EV_SIGNAL:
    if (r->child.running) {
      cli_verbose(r->o, "passing signal %d on to CMD", ev->arg);
      cli_child_signal(&r->child, ev->arg);
    } else if (!r->acquired) {
      if (r->stop_signal == 0) r->stop_signal = ev->arg;
      stop_waiting(r);
    } else if (r->start_pending) { /* granted, CMD not started yet */
      finish(r, CLI_EX_SIGNAL_BASE + ev->arg);
    }
    break;
  case CLI_EV_STATE:
    cli_verbose(r->o, "session %s", cli_state_name(ev->arg));
    if (ev->arg == ZKL_SESSION_LOST) lose(r, "session lost");
    else if (r->start_pending && !r->done) start_if_valid(r);
    else check_health(r);
    break;
  case CLI_EV_NODE: /* the hold is gone */
    if (!r->acquired) break;
    if (zkl_session_state(r->l->s) == ZKL_SESSION_LOST) {
      lose(r, "session lost");
    } else if (ev->len > 0) { /* --all: which node */
      char why[CLI_ID_MAX + 32];
      snprintf(why, sizeof why, "its node %.*s was deleted", ev->len,
               ev->data);
      lose(r, why);
    } else {
      lose(r, "its node was deleted");
    }
    break;
  case CLI_EV_ACQUIRED:
    on_acquired(r, ev->arg);
    break;
  case CLI_EV_CHILD:
    if (cli_child_reap(&r->child))
      finish(r, r->lost ? CLI_EX_LOST : r->child.code);
    break;
  default:
    break;
  }
}

static void run_loop(run_t *r) {
  int64_t next_check = cli_now_ns() + HEALTH_EVERY_NS;
  while (!r->done) {
    int64_t until = r->child.kill_at;
    int watching = r->l->ml != NULL && r->child.running && !r->lost;
    if (watching && next_check < until) until = next_check;
    cli_event_t ev;
    if (cli_loop_next(&ev, until)) on_event(r, &ev);
    cli_child_tick(&r->child);
    if (watching && !r->done && cli_now_ns() >= next_check) {
      next_check = cli_now_ns() + HEALTH_EVERY_NS;
      check_health(r);
    }
  }
}

static int create_lock(locker_t *l) {
  int rc;
  const char *path = l->o->path;
  if (l->o->all) {
    size_t n = l->o->n_paths;
    l->nodes = calloc(n, sizeof *l->nodes);
    l->tokens = calloc(n, sizeof *l->tokens);
    l->watches = calloc(n, sizeof *l->watches);
    if (l->nodes == NULL || l->tokens == NULL || l->watches == NULL) {
      fprintf(stderr, "zkl: no memory for %zu locks\n", n);
      return ZKL_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) l->watches[i] = (node_watch_t){l, i};
    rc = zkl_multilock_create(&l->ml, l->s, (const char *const *)l->o->paths,
                              n, NULL);
    if (rc != 0) /* the detail names the PATH */
      fprintf(stderr, "zkl: cannot lock the PATHs: %s: %s\n",
              zkl_strerror(rc), zkl_last_error());
    return rc;
  }
  if (l->o->mode == CLI_LOCK_EXCLUSIVE)
    rc = zkl_mutex_create(&l->m, l->s, path, NULL);
  else
    rc = zkl_rwlock_create(&l->rw, l->s, path, NULL);
  if (rc != 0)
    fprintf(stderr, "zkl: %s: %s: %s\n", path, zkl_strerror(rc),
            zkl_last_error());
  return rc;
}

static void destroy_lock(locker_t *l) {
  zkl_mutex_destroy(l->m);
  zkl_rwlock_destroy(l->rw);
  zkl_multilock_destroy(l->ml);
}

/* Releases the hold (if any: an acquisition still under way is canceled
 * and its completion awaited first), running the loop until the release's
 * completion came, and says so if the lock turned out to be lost before
 * CMD ended. */
static void release(run_t *r) {
  locker_t *l = r->l;
  cli_event_t ev;
  atomic_store(&l->watching, 0); /* our own deletes are no loss */
  if (!r->acquired && !r->acquire_done) {
    lock_cancel(l);
    while (!r->acquire_done)
      if (cli_loop_next(&ev, INT64_MAX) && ev.type == CLI_EV_ACQUIRED)
        on_event(r, &ev); /* done already: it only records */
  }
  if (!r->acquired) return;
  int rc = l->ml != NULL ? zkl_multilock_unlock_async(l->ml, on_unlocked, l)
           : l->m != NULL ? zkl_mutex_unlock_async(l->m, on_unlocked, l)
                          : zkl_rwlock_unlock_async(l->rw, on_unlocked, l);
  if (rc == 0) {
    while (!l->released) cli_loop_next(&ev, INT64_MAX);
  } else {
    l->unlock_rc = rc;
    snprintf(l->detail, sizeof l->detail, "%s", zkl_last_error());
  }
  if (l->unlock_rc == 0) cli_verbose(r->o, "released %s", r->paths);
  else if (!r->lost)
    fprintf(stderr, "zkl: warning: releasing %s: %s%s%s\n", r->paths,
            zkl_strerror(l->unlock_rc),
            l->ml != NULL && l->detail[0] ? ": " : "",
            l->ml != NULL ? l->detail : "");
}

/* "PATH PATH ..." (--all's), or NULL without memory. */
static char *join_paths(const cli_opts_t *o, const char *before) {
  size_t len = strlen(before) + 1;
  for (size_t i = 0; i < o->n_paths; i++) len += strlen(o->paths[i]) + 1;
  char *v = malloc(len), *p = v;
  if (v == NULL) return NULL;
  p += sprintf(p, "%s", before);
  for (size_t i = 0; i < o->n_paths; i++)
    p += sprintf(p, "%s%s", i > 0 ? " " : "", o->paths[i]);
  return v;
}

static void free_locker(locker_t *l) {
  free(l->nodes);
  free(l->tokens);
  free(l->watches);
}

int cli_lock_run(const cli_opts_t *o) {
  if (cli_loop_init() != 0) {
    perror("zkl: cannot set up signals");
    return CLI_EX_SOFTWARE;
  }
  run_t r;
  memset(&r, 0, sizeof r);
  r.o = o;
  r.child.kill_at = INT64_MAX;
  char what_one[1100];
  char *paths = NULL, *what = NULL;
  if (o->all) {
    paths = join_paths(o, "");
    what = join_paths(o, "locks ");
    if (paths == NULL || what == NULL) {
      fprintf(stderr, "zkl: no memory for %zu paths\n", o->n_paths);
      free(paths);
      free(what);
      return CLI_EX_SOFTWARE;
    }
    r.paths = paths;
    r.what = what;
  } else {
    snprintf(what_one, sizeof what_one, "lock %s", o->path);
    r.paths = o->path;
    r.what = what_one;
  }
  locker_t l;
  memset(&l, 0, sizeof l);
  l.o = o;
  atomic_init(&l.watching, 0);
  atomic_init(&l.told, 0);
  r.l = &l;
  int rc = cli_connect(o, on_state, NULL, &l.s);
  if (rc != 0) {
    free(paths);
    free(what);
    return rc;
  }
  cli_loop_connected(l.s);
  if (create_lock(&l) != 0) {
    cli_session_close(l.s);
    free_locker(&l);
    free(paths);
    free(what);
    return CLI_EX_SOFTWARE;
  }
  if (o->all)
    cli_verbose(o, "waiting for %s (%zu, all or none)", r.what, o->n_paths);
  l.deadline_ns = o->timeout_ms > 0 ? cli_now_ns() + o->timeout_ms * 1000000
                                     : INT64_MAX;
  rc = lock_start(&l, o->timeout_ms);
  if (rc != 0) {
    fprintf(stderr, "zkl: cannot lock %s: %s\n", r.paths, zkl_strerror(rc));
    r.result = cli_exit_code(rc);
    r.acquire_done = 1;
  } else {
    run_loop(&r);
    release(&r);
  }
  destroy_lock(&l);
  cli_session_close(l.s); /* no watch of ours fires after it */
  free_locker(&l);
  free(paths);
  free(what);
  return r.result;
}
