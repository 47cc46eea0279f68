/* cli/lock.c - `zkl lock PATH CMD...`: run CMD while holding the lock.
 *
 * Everything runs on the main thread's loop (cli/loop.h): the lock is
 * taken and released with the asynchronous calls, whose completions the
 * loop dispatches; it cancels the acquisition on a signal, starts CMD once
 * granted, passes signals on, and stops CMD when the session is LOST or
 * our node is deleted.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "child.h"
#include "cli.h"
#include "loop.h"

typedef struct locker {
  const cli_opts_t *o;
  zkl_session_t *s;
  zkl_mutex_t *m;      /* the exclusive lock, or                          */
  zkl_rwlock_t *rw;    /* the read/write lock                             */
  int released;        /* the release's completion came                   */
  int unlock_rc;       /* and its code                                    */
  uint64_t token;      /* set before CLI_EV_ACQUIRED(0) is posted         */
  int64_t session_id;  /* the session it was granted on, likewise         */
  char node[1024];
} locker_t;

/* ---- the lock, through the async calls ------------------------------------------ */

static int holding(locker_t *l) {
  return l->m != NULL ? zkl_mutex_holding(l->m) : zkl_rwlock_holding(l->rw);
}

static void lock_cancel(locker_t *l) {
  if (l->m != NULL) zkl_mutex_cancel(l->m);
  else zkl_rwlock_cancel(l->rw);
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
  int rc = l->m != NULL ? zkl_mutex_watch_async(l->m, on_gone, l)
                        : zkl_rwlock_watch_async(l->rw, on_gone, l);
  if (rc != 0)
    fprintf(stderr, "zkl: warning: cannot watch the lock's node: %s\n",
            zkl_strerror(rc));
}

/* The node of the hold just taken, for CMD's environment. */
static void describe_hold(locker_t *l) {
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
  l->unlock_rc = rc;
  l->released = 1;
  cli_loop_post_arg(CLI_EV_RELEASED, rc); /* wakes the loop */
}

static int lock_start(locker_t *l) {
  int64_t t = l->o->timeout_ms; /* <0 forever, 0 try */
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
    fprintf(stderr, "zkl: lock %s lost (%s) before CMD started\n",
            r->o->path, why);
    finish(r, CLI_EX_LOST);
  } else if (r->child.running) {
    fprintf(stderr, "zkl: lock %s lost (%s): stopping CMD (pid %ld)\n",
            r->o->path, why, (long)r->child.pid);
    cli_child_stop(&r->child, r->o->grace_ms);
  } else if (!r->acquired) {
    stop_waiting(r);
  }
}

static void start_cmd(run_t *r) {
  locker_t *l = r->l;
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
                r->o->path);
    r->start_pending = 1; /* RECONNECTED starts it, LOST ends the run */
  } else {
    r->start_pending = 1;
    lose(r, "session lost");
  }
}

static void on_acquired(run_t *r, int rc) {
  r->acquire_done = 1;
  if (r->done) { /* the run ended meanwhile: only the hold counts */
    r->acquired = rc == 0;
    return;
  }
  if (rc == 0) {
    r->acquired = 1;
    if (r->lost) {
      fprintf(stderr, "zkl: lock %s lost before CMD started\n", r->o->path);
      finish(r, CLI_EX_LOST);
    } else if (r->stop_signal != 0) {
      finish(r, CLI_EX_SIGNAL_BASE + r->stop_signal);
    } else {
      start_if_valid(r);
    }
    return;
  }
  if (rc == ZKL_EBUSY || rc == ZKL_ETIMEDOUT) {
    cli_verbose(r->o, "%s: not obtained: %s", r->o->path, zkl_strerror(rc));
    finish(r, r->o->conflict_exit);
  } else if (rc == ZKL_ECANCELED && r->stop_signal != 0) {
    finish(r, CLI_EX_SIGNAL_BASE + r->stop_signal);
  } else if (r->lost || rc == ZKL_ELOST) {
    fprintf(stderr, "zkl: session lost while waiting for %s\n", r->o->path);
    finish(r, CLI_EX_LOST);
  } else {
    fprintf(stderr, "zkl: cannot lock %s: %s\n", r->o->path,
            zkl_strerror(rc));
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
    break;
  case CLI_EV_NODE: /* the hold is gone */
    if (!r->acquired) break;
    lose(r, zkl_session_state(r->l->s) == ZKL_SESSION_LOST
                ? "session lost"
                : "its node was deleted");
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
  while (!r->done) {
    cli_event_t ev;
    if (cli_loop_next(&ev, r->child.kill_at)) {
      on_event(r, &ev);
      continue;
    }
    cli_child_tick(&r->child);
  }
}

static int create_lock(locker_t *l) {
  int rc;
  if (l->o->mode == CLI_LOCK_EXCLUSIVE)
    rc = zkl_mutex_create(&l->m, l->s, l->o->path, NULL);
  else
    rc = zkl_rwlock_create(&l->rw, l->s, l->o->path, NULL);
  if (rc != 0)
    fprintf(stderr, "zkl: %s: %s: %s\n", l->o->path, zkl_strerror(rc),
            zkl_last_error());
  return rc;
}

static void destroy_lock(locker_t *l) {
  zkl_mutex_destroy(l->m);
  zkl_rwlock_destroy(l->rw);
}

/* Releases the hold (if any: an acquisition still under way is canceled
 * and its completion awaited first), running the loop until the release's
 * completion came, and says so if the lock turned out to be lost before
 * CMD ended. */
static void release(run_t *r) {
  locker_t *l = r->l;
  cli_event_t ev;
  if (!r->acquired && !r->acquire_done) {
    lock_cancel(l);
    while (!r->acquire_done)
      if (cli_loop_next(&ev, INT64_MAX) && ev.type == CLI_EV_ACQUIRED)
        on_event(r, &ev); /* done already: it only records */
  }
  if (!r->acquired) return;
  int rc = l->m != NULL ? zkl_mutex_unlock_async(l->m, on_unlocked, l)
                        : zkl_rwlock_unlock_async(l->rw, on_unlocked, l);
  if (rc == 0)
    while (!l->released) cli_loop_next(&ev, INT64_MAX);
  else
    l->unlock_rc = rc;
  if (l->unlock_rc == 0) cli_verbose(r->o, "released %s", r->o->path);
  else if (!r->lost)
    fprintf(stderr, "zkl: warning: releasing %s: %s\n", r->o->path,
            zkl_strerror(l->unlock_rc));
}

int cli_lock_run(const cli_opts_t *o) {
  if (cli_loop_init() != 0) {
    perror("zkl: cannot set up signals");
    return CLI_EX_SOFTWARE;
  }
  locker_t l;
  memset(&l, 0, sizeof l);
  l.o = o;
  int rc = cli_connect(o, on_state, NULL, &l.s);
  if (rc != 0) return rc;
  cli_loop_connected(l.s);
  if (create_lock(&l) != 0) {
    zkl_session_close(l.s);
    return CLI_EX_SOFTWARE;
  }
  run_t r;
  memset(&r, 0, sizeof r);
  r.o = o;
  r.l = &l;
  r.child.kill_at = INT64_MAX;
  rc = lock_start(&l);
  if (rc != 0) {
    fprintf(stderr, "zkl: cannot lock %s: %s\n", o->path, zkl_strerror(rc));
    r.result = cli_exit_code(rc);
    r.acquire_done = 1;
  } else {
    run_loop(&r);
    release(&r);
  }
  destroy_lock(&l);
  zkl_session_close(l.s);
  return r.result;
}
