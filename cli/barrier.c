/* cli/barrier.c - `zkl barrier set|remove|wait PATH`, `zkl barrier enter
 * -n MEMBERS PATH CMD...` and `zkl status --barrier PATH`: the barrier and
 * the double barrier of zkl/barrier.h, for shell scripts.
 *
 * Everything but status runs on the main thread's loop (cli/loop.h)
 * through the async calls, one call at a time.
 *
 * set, remove, wait: SIGINT, SIGTERM or SIGHUP cancel the call
 * (zkl_barrier_cancel()) and zkl exits 128+N; a call that completes all
 * the same (a node already made or deleted) is reported as it is.  wait
 * is a look (timeout 0), then the wait: -v says when the look found the
 * barrier set (the tests remove it only after that line).
 *
 * enter is `zkl lock` for a double barrier: the enter (a signal cancels
 * it, and the library takes the member out again); CMD started only while
 * the session that entered is connected; signals passed on to CMD; CMD
 * stopped (TERM, KILL after --grace) when that session is LOST, and then
 * no leave (the member went with the session); once CMD has ended, the
 * leave (a signal cancels it; the library takes the member out).  -t
 * bounds the enter, and again the leave (--leave-timeout the leave
 * alone): CMD's run counts for neither.  After a signal was passed on to
 * CMD the leave does not wait for the others (timeout 0: the member is
 * taken out, and nobody waits for it).
 *
 * status --barrier reads with the blocking calls, as `zkl status` does.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <zookeeper/zookeeper.h>

#include "child.h"
#include "cli.h"
#include "loop.h"
#include "text.h"

/* How often the session is looked at while CMD runs (no request: what it
 * knows; zkl_session_state() tells a session silent for a whole timeout
 * LOST), besides its LOST event. */
#define HEALTH_EVERY_NS 200000000LL

/* One async call and what its completion said. */
typedef struct call {
  zkl_session_t *s;   /* the session, to note its id at the completion  */
  int done;
  int rc;
  int64_t session_id; /* the session's id when it completed             */
  char detail[1024];  /* zkl_last_error() while it ran                  */
} call_t;

/* The run of a subcommand. */
typedef struct barring {
  const cli_opts_t *o;
  zkl_session_t *s;
  zkl_barrier_t *b;  /* set, remove, wait                               */
  zkl_dbarrier_t *d; /* enter                                           */
} barring_t;

/* ---- the session, the objects and their calls --------------------------------------- */

static void on_state(zkl_session_t *s, zkl_session_state_t state, void *arg) {
  (void)s, (void)arg;
  cli_loop_post_arg(CLI_EV_STATE, (int)state);
}

/* The completion of every call (on the loop, from zkl_session_dispatch()). */
static void on_done(void *obj, int rc, uint64_t token, void *arg) {
  (void)obj, (void)token;
  call_t *w = arg;
  w->rc = rc;
  w->session_id = zkl_session_id(w->s);
  snprintf(w->detail, sizeof w->detail, "%s", zkl_last_error());
  w->done = 1;
  cli_loop_post_arg(CLI_EV_BARRIER, rc); /* wakes the loop */
}

static void call_init(call_t *w, zkl_session_t *s) {
  memset(w, 0, sizeof *w);
  w->s = s;
}

/* The call was refused (rc): w says so, as a completion would. */
static int refused(call_t *w, int rc) {
  w->rc = rc;
  w->done = 1;
  snprintf(w->detail, sizeof w->detail, "%s", zkl_last_error());
  return rc;
}

/* Sets up signals, connects, makes the object the subcommand uses, and
 * tells the loop of the session: 0, or the exit status (message printed;
 * nothing to close). */
static int open_barrier(barring_t *k) {
  const cli_opts_t *o = k->o;
  if (cli_loop_init() != 0) {
    perror("zkl: cannot set up signals");
    return CLI_EX_SOFTWARE;
  }
  int rc = cli_connect(o, on_state, NULL, &k->s);
  if (rc != 0) return rc;
  if (o->barrier_op == CLI_BARRIER_ENTER)
    rc = zkl_dbarrier_create(&k->d, k->s, o->path, o->members, NULL);
  else
    rc = zkl_barrier_create(&k->b, k->s, o->path);
  if (rc != 0) {
    fprintf(stderr, "zkl: cannot use the barrier %s: %s: %s\n", o->path,
            zkl_strerror(rc), zkl_last_error());
    cli_session_close(k->s);
    return cli_exit_code(rc);
  }
  cli_loop_connected(k->s);
  return 0;
}

/* A double barrier still in (a run that ended before its leave) is taken
 * out by its destroy, and at the latest by the session's close. */
static void close_barrier(barring_t *k) {
  zkl_barrier_destroy(k->b);
  zkl_dbarrier_destroy(k->d);
  cli_session_close(k->s);
}

/* The words for a code in messages: zkl_strerror()'s, but for the codes
 * whose text there speaks of a lock's hold. */
static const char *code_text(int rc) {
  switch (rc) {
  case ZKL_ESUSPENDED: return "connection suspended";
  case ZKL_ELOST: return "session lost";
  default: return zkl_strerror(rc);
  }
}

/* "zkl: cannot WHAT PATH: <code>: <detail>", and the exit status. */
static int failed(const cli_opts_t *o, const char *what, const call_t *w) {
  fprintf(stderr, "zkl: cannot %s %s: %s%s%s\n", what, o->path,
          code_text(w->rc), w->detail[0] ? ": " : "", w->detail);
  return cli_exit_code(w->rc);
}

/* ---- set, remove, wait ----------------------------------------------------------------- */

static const char *what_of(cli_barrier_op_t op) {
  switch (op) {
  case CLI_BARRIER_SET: return "set the barrier";
  case CLI_BARRIER_REMOVE: return "remove the barrier";
  default: return "wait on the barrier";
  }
}

/* Starts op (wait: with timeout_ms) with w for its completion: 0, or the
 * code it was refused with (w says so). */
static int start(barring_t *k, cli_barrier_op_t op, int64_t timeout_ms,
                 call_t *w) {
  call_init(w, k->s);
  int rc = ZKL_EINVAL;
  switch (op) {
  case CLI_BARRIER_SET: rc = zkl_barrier_set_async(k->b, on_done, w); break;
  case CLI_BARRIER_REMOVE:
    rc = zkl_barrier_remove_async(k->b, on_done, w);
    break;
  case CLI_BARRIER_WAIT:
    rc = zkl_barrier_wait_async(k->b, timeout_ms, on_done, w);
    break;
  default: break;
  }
  return rc != 0 ? refused(w, rc) : 0;
}

/* Runs the loop until w's completion; the first signal cancels the call
 * (*stop_signal).  The completion's code. */
static int await(barring_t *k, call_t *w, int *stop_signal) {
  while (!w->done) {
    cli_event_t ev;
    if (!cli_loop_next(&ev, INT64_MAX)) continue;
    if (ev.type == CLI_EV_SIGNAL && *stop_signal == 0) {
      *stop_signal = ev.arg; /* the completion follows */
      zkl_barrier_cancel(k->b);
    } else if (ev.type == CLI_EV_STATE) {
      cli_verbose(k->o, "session %s", cli_state_name(ev.arg));
    }
  }
  return w->rc;
}

/* start() and await(): the code of the call, refused or completed. */
static int call(barring_t *k, cli_barrier_op_t op, int64_t timeout_ms,
                call_t *w, int *stop_signal) {
  int rc = start(k, op, timeout_ms, w);
  return rc != 0 ? rc : await(k, w, stop_signal);
}

/* The exit status of op, which completed as w says. */
static int outcome(const barring_t *k, cli_barrier_op_t op, const call_t *w,
                   int stop_signal) {
  const cli_opts_t *o = k->o;
  switch (w->rc) {
  case 0:
    cli_verbose(o, "%s: %s%s", o->path,
                op == CLI_BARRIER_SET      ? "set"
                : op == CLI_BARRIER_REMOVE ? "removed"
                                           : "not set",
                stop_signal != 0 ? " (before the signal came)" : "");
    return 0;
  case ZKL_ECANCELED:
    if (stop_signal == 0) break;
    cli_verbose(o, "%s: signal %d: stopped", o->path, stop_signal);
    return CLI_EX_SIGNAL_BASE + stop_signal;
  case ZKL_ENOENT: /* the detail says it was not set */
    if (op != CLI_BARRIER_REMOVE) break;
    cli_verbose(o, "%s", w->detail);
    return 1;
  case ZKL_ETIMEDOUT:
    if (op != CLI_BARRIER_WAIT) break;
    cli_verbose(o, "%s: still set%s", o->path,
                o->timeout_ms > 0 ? " after -t" : "");
    return 1;
  case ZNOTEMPTY: /* the library's detail says no more */
    if (op != CLI_BARRIER_REMOVE) break;
    fprintf(stderr, "zkl: cannot remove the barrier %s: its node has "
                    "children (a double barrier's?): nothing removed\n",
            o->path);
    return CLI_EX_SOFTWARE;
  default: break;
  }
  return failed(o, what_of(op), w);
}

/* wait: a look, then (the barrier set, or no connection) the wait, with
 * what is left of -t. */
static int wait_run(barring_t *k) {
  const cli_opts_t *o = k->o;
  int64_t t = o->timeout_ms; /* <0 for ever, 0 look once */
  int64_t deadline = t > 0 ? cli_now_ns() + t * 1000000 : INT64_MAX;
  int stop_signal = 0;
  call_t w;
  int rc = call(k, CLI_BARRIER_WAIT, 0, &w, &stop_signal);
  if (t == 0 || stop_signal != 0 ||
      (rc != ZKL_ETIMEDOUT && rc != ZKL_ESUSPENDED))
    return outcome(k, CLI_BARRIER_WAIT, &w, stop_signal);
  if (rc == ZKL_ETIMEDOUT)
    cli_verbose(o, "%s is set: waiting until it is removed", o->path);
  else
    cli_verbose(o, "%s: not connected: waiting", o->path);
  if (t > 0) {
    int64_t left = deadline - cli_now_ns();
    t = left > 0 ? (left + 999999) / 1000000 : 0;
  }
  call(k, CLI_BARRIER_WAIT, t, &w, &stop_signal);
  return outcome(k, CLI_BARRIER_WAIT, &w, stop_signal);
}

/* ---- enter: the double barrier around CMD ------------------------------------------- */

typedef struct member {
  const cli_opts_t *o;
  barring_t *k;
  cli_child_t child;
  call_t enter, leave;
  int entering;      /* the enter's completion has not come yet          */
  int in;            /* entered: the member counts for the others        */
  int start_pending; /* in; CMD waits for the connection to be back      */
  int cmd_ended;     /* CMD ran and ended, or could not be started:
                        cmd_status says how                              */
  int cmd_status;
  int forwarded;     /* a signal was passed on to CMD                    */
  int stop_signal;   /* the signal that stopped a wait, 0 if none        */
  int lost;          /* the session that entered was lost                */
  int done;          /* the run ended before a leave: result says how    */
  int result;
} member_t;

static void finish(member_t *m, int result) {
  m->result = result;
  m->done = 1;
}

/* The session that entered is lost (the member went with it): stop CMD,
 * or stop waiting to enter. */
static void lose(member_t *m, const char *why) {
  if (m->lost || m->done) return;
  m->lost = 1;
  const char *path = m->o->path;
  if (m->start_pending) {
    fprintf(stderr, "zkl: barrier %s: %s before CMD started\n", path, why);
    finish(m, CLI_EX_LOST);
  } else if (m->child.running) {
    fprintf(stderr, "zkl: barrier %s: %s: stopping CMD (pid %ld)\n", path,
            why, (long)m->child.pid);
    cli_child_stop(&m->child, m->o->grace_ms);
  } else if (m->entering) {
    zkl_dbarrier_cancel(m->k->d); /* the completion follows */
  }
}

/* Whether the session that entered is still there (connected, or
 * suspended and heard from within its timeout). */
static int session_alive(const member_t *m) {
  int st = zkl_session_state(m->k->s);
  return (st == ZKL_SESSION_CONNECTED || st == ZKL_SESSION_SUSPENDED) &&
         zkl_session_id(m->k->s) == m->enter.session_id;
}

static void start_cmd(member_t *m) {
  const cli_opts_t *o = m->o;
  char path_var[1100], members_var[64];
  snprintf(path_var, sizeof path_var, "ZKL_BARRIER_PATH=%s", o->path);
  snprintf(members_var, sizeof members_var, "ZKL_BARRIER_MEMBERS=%d",
           o->members);
  char *env[] = {path_var, members_var, NULL};
  cli_verbose(o, "in %s with %d member%s: starting CMD", o->path, o->members,
              o->members == 1 ? "" : "s");
  int rc = cli_child_start(&m->child, o->cmd, env);
  if (rc != 0) { /* told; the member leaves as after a failed CMD */
    m->cmd_status = rc;
    m->cmd_ended = 1;
  }
}

/* CMD starts only while the session that entered is connected now, as
 * `zkl lock` starts on a valid hold only. */
static void start_if_valid(member_t *m) {
  int st = zkl_session_state(m->k->s);
  int same = zkl_session_id(m->k->s) == m->enter.session_id;
  m->start_pending = 0;
  if (st == ZKL_SESSION_CONNECTED && same) {
    start_cmd(m);
  } else if (st == ZKL_SESSION_SUSPENDED && same) {
    cli_verbose(m->o, "%s: connection down: CMD waits until it is back",
                m->o->path);
    m->start_pending = 1; /* RECONNECTED starts it, LOST ends the run */
  } else {
    m->start_pending = 1;
    lose(m, "session lost");
  }
}

static void on_entered(member_t *m) {
  const cli_opts_t *o = m->o;
  int rc = m->enter.rc;
  m->entering = 0;
  if (rc == 0) {
    m->in = 1;
    if (m->stop_signal != 0) {
      cli_verbose(o, "%s: in, but signal %d came: CMD not run", o->path,
                  m->stop_signal);
      finish(m, CLI_EX_SIGNAL_BASE + m->stop_signal);
    } else if (m->lost) {
      fprintf(stderr, "zkl: barrier %s: session lost before CMD started\n",
              o->path);
      finish(m, CLI_EX_LOST);
    } else {
      start_if_valid(m);
    }
    return;
  }
  if (rc == ZKL_ECANCELED && m->stop_signal != 0) {
    cli_verbose(o, "%s: signal %d: not entered, CMD not run", o->path,
                m->stop_signal);
    finish(m, CLI_EX_SIGNAL_BASE + m->stop_signal);
  } else if (rc == ZKL_ELOST || m->lost) {
    fprintf(stderr, "zkl: session lost while waiting to enter %s: CMD not "
                    "run\n", o->path);
    finish(m, CLI_EX_LOST);
  } else if (rc == ZKL_ETIMEDOUT) {
    cli_verbose(o, "%s: not open %s: CMD not run", o->path,
                o->timeout_ms > 0 ? "within -t" : "now");
    finish(m, o->conflict_exit);
  } else {
    finish(m, failed(o, "enter the barrier", &m->enter));
  }
}

static void on_event(member_t *m, const cli_event_t *ev) {
  switch (ev->type) {
  case CLI_EV_SIGNAL:
    if (m->child.running) {
      cli_verbose(m->o, "passing signal %d on to CMD", ev->arg);
      cli_child_signal(&m->child, ev->arg);
      m->forwarded = 1;
    } else if (m->entering) {
      if (m->stop_signal == 0) m->stop_signal = ev->arg;
      zkl_dbarrier_cancel(m->k->d); /* the completion follows */
    } else if (m->start_pending && !m->done) { /* CMD not started yet */
      m->stop_signal = ev->arg;
      finish(m, CLI_EX_SIGNAL_BASE + ev->arg);
    }
    break;
  case CLI_EV_STATE:
    cli_verbose(m->o, "session %s", cli_state_name(ev->arg));
    if (ev->arg == ZKL_SESSION_LOST) lose(m, "session lost");
    else if (m->start_pending && !m->done) start_if_valid(m);
    break;
  case CLI_EV_BARRIER:
    if (m->enter.done && m->entering) on_entered(m);
    break;
  case CLI_EV_CHILD:
    if (!m->child.running || !cli_child_reap(&m->child)) break;
    if (m->lost) {
      finish(m, CLI_EX_LOST);
    } else {
      m->cmd_status = m->child.code;
      m->cmd_ended = 1;
    }
    break;
  default: break;
  }
}

/* Runs the enter and CMD: until the run ended (m->done) or CMD did. */
static void enter_loop(member_t *m) {
  int64_t next_check = cli_now_ns() + HEALTH_EVERY_NS;
  while (!m->done && !m->cmd_ended) {
    int64_t until = m->child.kill_at;
    int watching = m->child.running && !m->lost;
    if (watching && next_check < until) until = next_check;
    cli_event_t ev;
    if (cli_loop_next(&ev, until)) on_event(m, &ev);
    cli_child_tick(&m->child);
    if (watching && !m->done && !m->cmd_ended &&
        cli_now_ns() >= next_check) {
      next_check = cli_now_ns() + HEALTH_EVERY_NS;
      if (!session_alive(m)) lose(m, "session lost");
    }
  }
}

/* Leaves once CMD has ended, and the exit status: CMD's when it failed,
 * whatever the leave says; once it succeeded, the leave's outcome. */
static int leave_run(member_t *m) {
  const cli_opts_t *o = m->o;
  int status = m->cmd_status;
  int64_t t = m->forwarded ? 0 : o->leave_timeout_ms;
  if (m->forwarded)
    cli_verbose(o, "CMD exited %d after a signal: leaving %s without waiting "
                   "for the others", status, o->path);
  else
    cli_verbose(o, "CMD exited %d: leaving %s", status, o->path);
  call_init(&m->leave, m->k->s);
  int rc = zkl_dbarrier_leave_async(m->k->d, t, on_done, &m->leave);
  if (rc != 0) refused(&m->leave, rc);
  while (!m->leave.done) {
    cli_event_t ev;
    if (!cli_loop_next(&ev, INT64_MAX)) continue;
    if (ev.type == CLI_EV_SIGNAL && m->stop_signal == 0) {
      m->stop_signal = ev.arg; /* the completion follows */
      zkl_dbarrier_cancel(m->k->d);
    } else if (ev.type == CLI_EV_STATE) {
      cli_verbose(o, "session %s", cli_state_name(ev.arg));
      if (ev.arg == ZKL_SESSION_LOST && !m->lost) {
        m->lost = 1; /* the member went with it: nothing to wait for */
        zkl_dbarrier_cancel(m->k->d);
      }
    }
  }
  rc = m->leave.rc;
  if (rc == 0) {
    m->in = 0;
    cli_verbose(o, "left %s: every member is out", o->path);
    return status;
  }
  if (rc == ZKL_ETIMEDOUT && m->forwarded) { /* as asked: out, not waited */
    cli_verbose(o, "left %s: other members are still in", o->path);
    return status;
  }
  if (status != 0) { /* CMD's failure says more than the leave's */
    if (rc == ZKL_ECANCELED && m->stop_signal != 0)
      cli_verbose(o, "%s: signal %d: left without waiting for the others",
                  o->path, m->stop_signal);
    else
      fprintf(stderr, "zkl: warning: leaving %s: %s%s%s\n", o->path,
              code_text(rc), m->leave.detail[0] ? ": " : "",
              m->leave.detail);
    return status;
  }
  if (rc == ZKL_ETIMEDOUT) {
    fprintf(stderr, "zkl: barrier %s: other members were still in at the "
                    "deadline: left without them\n", o->path);
    return o->conflict_exit;
  }
  if (rc == ZKL_ECANCELED && m->stop_signal != 0) {
    cli_verbose(o, "%s: signal %d: left without waiting for the others",
                o->path, m->stop_signal);
    return CLI_EX_SIGNAL_BASE + m->stop_signal;
  }
  if (rc == ZKL_ELOST || m->lost) {
    fprintf(stderr, "zkl: session lost while leaving %s (CMD had "
                    "succeeded)\n", o->path);
    return CLI_EX_LOST;
  }
  return failed(o, "leave the barrier", &m->leave);
}

static int enter_run(barring_t *k) {
  const cli_opts_t *o = k->o;
  member_t m;
  memset(&m, 0, sizeof m);
  m.o = o;
  m.k = k;
  m.child.kill_at = INT64_MAX;
  call_init(&m.enter, k->s);
  int rc = zkl_dbarrier_enter_async(k->d, o->timeout_ms, on_done, &m.enter);
  if (rc != 0) {
    refused(&m.enter, rc);
    return failed(o, "enter the barrier", &m.enter);
  }
  m.entering = 1;
  cli_verbose(o, "entering %s: waiting for %d member%s", o->path, o->members,
              o->members == 1 ? "" : "s");
  enter_loop(&m);
  if (m.done) return m.result; /* still in: the destroy takes it out */
  return leave_run(&m);
}

int cli_barrier_run(const cli_opts_t *o) {
  barring_t k;
  memset(&k, 0, sizeof k);
  k.o = o;
  int rc = open_barrier(&k);
  if (rc != 0) return rc;
  if (o->barrier_op == CLI_BARRIER_ENTER) {
    rc = enter_run(&k);
  } else if (o->barrier_op == CLI_BARRIER_WAIT) {
    rc = wait_run(&k);
  } else {
    int stop_signal = 0;
    call_t w;
    call(&k, o->barrier_op, 0, &w, &stop_signal);
    rc = outcome(&k, o->barrier_op, &w, stop_signal);
  }
  close_barrier(&k);
  return rc;
}

/* ---- status --barrier ------------------------------------------------------------------ */

static int put_status(const cli_opts_t *o, int exists, size_t members,
                      int ready) {
  if (o->json) {
    fputs("[{\"kind\": \"barrier\", \"path\": ", stdout);
    cli_put_json_string(stdout, o->path);
    printf(", \"exists\": %s, \"members\": %zu, \"ready\": %s}]\n",
           exists ? "true" : "false", members, ready ? "true" : "false");
  } else {
    int w = (int)strlen(o->path) > 7 ? (int)strlen(o->path) : 7;
    printf("%-*s %-6s %-7s %s\n", w, "BARRIER", "EXISTS", "MEMBERS",
           "READY");
    printf("%-*s %-6s %-7zu %s\n", w, o->path, exists ? "yes" : "no",
           members, ready ? "yes" : "no");
  }
  if (fflush(stdout) == 0 && !ferror(stdout)) return 0;
  perror("zkl: stdout");
  return CLI_EX_SOFTWARE;
}

int cli_barrier_status_run(const cli_opts_t *o) {
  zkl_session_t *s = NULL;
  int rc = cli_connect(o, NULL, NULL, &s);
  if (rc != 0) return rc;
  zkl_barrier_t *b = NULL;
  zkl_dbarrier_t *d = NULL;
  size_t members = 0;
  int ready = 0, exists = 0;
  /* two reads, one after the other: a change between them shows half */
  rc = zkl_barrier_create(&b, s, o->path);
  if (rc == 0) {
    rc = zkl_barrier_wait(b, 0); /* open now: no node */
    exists = rc == ZKL_ETIMEDOUT;
    if (exists) rc = 0;
  }
  /* any count will do: nobody enters */
  if (rc == 0) rc = zkl_dbarrier_create(&d, s, o->path, 1, NULL);
  if (rc == 0) rc = zkl_dbarrier_count(d, &members, &ready);
  char detail[1024] = "";
  if (rc != 0) snprintf(detail, sizeof detail, "%s", zkl_last_error());
  zkl_barrier_destroy(b);
  zkl_dbarrier_destroy(d);
  cli_session_close(s);
  if (rc != 0) {
    fprintf(stderr, "zkl: cannot read the barrier %s: %s%s%s\n", o->path,
            code_text(rc), detail[0] ? ": " : "", detail);
    return cli_exit_code(rc);
  }
  return put_status(o, exists, members, ready);
}
