/* cli/elect.c - `zkl elect PATH CMD...` (run CMD while leader) and
 * `zkl elect --observe PATH` (print who leads).
 *
 * The election object's own thread runs the campaign and the callbacks;
 * the callbacks only post events, and the main thread's loop (cli/loop.h)
 * starts CMD when elected, passes signals on, and stops CMD when
 * leadership is lost for good.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "child.h"
#include "cli.h"
#include "loop.h"
#include "text.h"

#define AWAIT_CHECK_NS (1000 * 1000000LL)

/* ---- callbacks: the election's and the session's threads ------------------------ */

static void on_state(zkl_session_t *s, zkl_session_state_t state, void *arg) {
  (void)s, (void)arg;
  cli_loop_post_arg(CLI_EV_STATE, (int)state);
}

static void on_elected(zkl_election_t *e, uint64_t token, void *arg) {
  (void)e, (void)arg;
  cli_event_t ev;
  memset(&ev, 0, sizeof ev);
  ev.type = CLI_EV_ELECTED;
  ev.token = token;
  cli_loop_post(&ev);
}

static void on_revoked(zkl_election_t *e, zkl_election_reason_t why,
                       void *arg) {
  (void)e, (void)arg;
  cli_loop_post_arg(CLI_EV_REVOKED, (int)why);
}

static void on_leader(zkl_election_t *e, const void *id, size_t len,
                      uint64_t token, void *arg) {
  (void)e, (void)arg;
  cli_event_t ev;
  memset(&ev, 0, sizeof ev);
  ev.type = CLI_EV_LEADER;
  ev.token = token;
  if (id == NULL) {
    ev.len = -1;
  } else {
    ev.len = (int)(len < sizeof ev.data ? len : sizeof ev.data);
    memcpy(ev.data, id, (size_t)ev.len);
  }
  cli_loop_post(&ev);
}

/* ---- shared set-up ------------------------------------------------------------------ */

typedef struct elect_run {
  const cli_opts_t *o;
  zkl_session_t *s;
  zkl_election_t *e;
  char id[CLI_ID_MAX + 1];
  cli_child_t child;
  int lost;
  int done;
  int result;
} elect_run_t;

static void finish(elect_run_t *r, int result) {
  r->result = result;
  r->done = 1;
}

/* Connects and creates the election object (not started yet): 0, or the
 * exit status. */
static int setup(elect_run_t *r, const zkl_election_opts_t *eo) {
  if (cli_loop_init() != 0) {
    perror("zkl: cannot set up signals");
    return CLI_EX_SOFTWARE;
  }
  int rc = cli_connect(r->o, on_state, NULL, &r->s);
  if (rc != 0) return rc;
  cli_loop_connected(r->s);
  rc = zkl_election_create(&r->e, r->s, r->o->path, eo->observer ? NULL : r->id,
                           eo->observer ? 0 : strlen(r->id), eo);
  if (rc == 0) rc = zkl_election_start(r->e);
  if (rc != 0) {
    fprintf(stderr, "zkl: election %s: %s\n", r->o->path, zkl_strerror(rc));
    return cli_exit_code(rc);
  }
  return 0;
}

static void teardown(elect_run_t *r) {
  zkl_election_destroy(r->e); /* resigns: the next candidate takes over */
  cli_session_close(r->s);
}

static void default_id(char *buf, size_t len) {
  char host[256];
  if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "?");
  host[sizeof host - 1] = '\0';
  snprintf(buf, len, "%s:%ld", host, (long)getpid());
}

/* ---- zkl elect PATH CMD ----------------------------------------------------------------- */

static void lose(elect_run_t *r, const char *why) {
  if (r->lost) return;
  r->lost = 1;
  if (r->child.running) {
    fprintf(stderr, "zkl: leadership of %s lost (%s): stopping CMD (pid %ld)\n",
            r->o->path, why, (long)r->child.pid);
    cli_child_stop(&r->child, r->o->grace_ms);
  } else if (r->child.pid == 0) {
    fprintf(stderr, "zkl: %s while waiting to lead %s\n", why, r->o->path);
    finish(r, CLI_EX_LOST);
  }
}

static void start_cmd(elect_run_t *r, uint64_t token) {
  char path_var[1100], id_var[CLI_ID_MAX + 32], token_var[64];
  char node[1024], node_var[1100];
  snprintf(path_var, sizeof path_var, "ZKL_ELECTION_PATH=%s", r->o->path);
  snprintf(id_var, sizeof id_var, "ZKL_ELECTION_ID=%s", r->id);
  snprintf(token_var, sizeof token_var, "ZKL_FENCING_TOKEN=%" PRIu64, token);
  /* Leadership may have changed since it was announced: in doubt (a new
   * announcement follows the reconnection), lost (its REVOKED event ends
   * the wait) or won again through another node (its own event follows).
   * CMD starts only with the node and token of one current leadership. */
  uint64_t now = 0;
  int nrc = zkl_election_node(r->e, node, sizeof node);
  if (nrc == 0) nrc = zkl_election_token(r->e, &now);
  if (nrc != 0 || now != token) {
    cli_verbose(r->o, "leadership of %s changed before CMD started (%s)",
                r->o->path, nrc != 0 ? zkl_strerror(nrc) : "new token");
    return;
  }
  snprintf(node_var, sizeof node_var, "ZKL_ELECTION_NODE=%s", node);
  char *env[] = {path_var, id_var, node_var, token_var, NULL};
  cli_verbose(r->o, "leading %s as %s, token %" PRIu64, r->o->path, r->id,
              token);
  int rc = cli_child_start(&r->child, r->o->cmd, env);
  if (rc != 0) finish(r, rc);
}

static void on_candidate_event(elect_run_t *r, const cli_event_t *ev) {
  switch (ev->type) {
  case CLI_EV_SIGNAL:
    if (r->child.running) cli_child_signal(&r->child, ev->arg);
    else if (r->child.pid == 0) finish(r, CLI_EX_SIGNAL_BASE + ev->arg);
    break;
  case CLI_EV_STATE:
    cli_verbose(r->o, "session %s", cli_state_name(ev->arg));
    if (ev->arg == ZKL_SESSION_LOST) lose(r, "session lost");
    break;
  case CLI_EV_ELECTED:
    if (r->child.pid == 0 && !r->lost) start_cmd(r, ev->token);
    else cli_verbose(r->o, "leading %s again", r->o->path);
    break;
  case CLI_EV_REVOKED:
    if (ev->arg == ZKL_REASON_LOST) lose(r, "session lost or node deleted");
    else if (ev->arg == ZKL_REASON_SUSPENDED)
      cli_verbose(r->o, "connection lost: leadership in doubt, CMD goes on");
    break;
  case CLI_EV_CHILD:
    if (cli_child_reap(&r->child))
      finish(r, r->lost ? CLI_EX_LOST : r->child.code);
    break;
  default:
    break;
  }
}

/* Before CMD starts: has the candidacy ended by itself (e.g. ZNOAUTH)? */
static void check_candidacy(elect_run_t *r) {
  int rc = zkl_election_await(r->e, 0);
  if (rc == 0 || rc == ZKL_ETIMEDOUT) return;
  if (rc == ZKL_ELOST) {
    lose(r, "session lost");
    return;
  }
  fprintf(stderr, "zkl: election %s: %s\n", r->o->path, zkl_strerror(rc));
  finish(r, cli_exit_code(rc));
}

int cli_elect_run(const cli_opts_t *o) {
  elect_run_t r;
  memset(&r, 0, sizeof r);
  r.o = o;
  r.child.kill_at = INT64_MAX;
  if (o->id != NULL) snprintf(r.id, sizeof r.id, "%s", o->id);
  else default_id(r.id, sizeof r.id);
  zkl_election_opts_t eo;
  zkl_election_opts_init(&eo);
  eo.on_elected = on_elected;
  eo.on_revoked = on_revoked;
  eo.callbacks_in_dispatch = 1; /* on the main thread's loop */
  int rc = setup(&r, &eo);
  if (rc != 0) {
    teardown(&r);
    return rc;
  }
  int64_t check_at = cli_now_ns() + AWAIT_CHECK_NS;
  while (!r.done) {
    int waiting = r.child.pid == 0;
    int64_t deadline = waiting ? check_at : r.child.kill_at;
    cli_event_t ev;
    if (cli_loop_next(&ev, deadline)) {
      on_candidate_event(&r, &ev);
      continue;
    }
    cli_child_tick(&r.child);
    if (waiting && cli_now_ns() >= check_at) {
      check_candidacy(&r);
      check_at = cli_now_ns() + AWAIT_CHECK_NS;
    }
  }
  teardown(&r);
  return r.result;
}

/* ---- zkl elect --observe PATH ------------------------------------------------------------ */

int cli_observe_run(const cli_opts_t *o) {
  elect_run_t r;
  memset(&r, 0, sizeof r);
  r.o = o;
  zkl_election_opts_t eo;
  zkl_election_opts_init(&eo);
  eo.observer = 1;
  eo.on_leader = on_leader;
  eo.callbacks_in_dispatch = 1;
  int rc = setup(&r, &eo);
  if (rc != 0) {
    teardown(&r);
    return rc;
  }
  while (!r.done) {
    cli_event_t ev;
    if (!cli_loop_next(&ev, INT64_MAX)) continue;
    if (ev.type == CLI_EV_LEADER) {
      /* one line per change; an empty line: nobody leads */
      if (ev.len > 0) cli_put_escaped(stdout, ev.data, (size_t)ev.len);
      putchar('\n');
      if (fflush(stdout) != 0) finish(&r, CLI_EX_SOFTWARE);
    } else if (ev.type == CLI_EV_SIGNAL) {
      finish(&r, 0);
    } else if (ev.type == CLI_EV_STATE) {
      /* An observer holds nothing: across a lost session (zkl opens a new
       * one) it just follows the election again. */
      cli_verbose(o, "session %s", cli_state_name(ev.arg));
      if (ev.arg == ZKL_SESSION_LOST)
        fprintf(stderr, "zkl: session lost; following %s again on a new "
                        "session\n", o->path);
    }
  }
  teardown(&r);
  return r.result;
}
