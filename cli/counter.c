/* cli/counter.c - `zkl counter get|set|add|cas|wait PATH ...` and `zkl
 * status --counter PATH`: the shared counter of zkl_counter(3), for shell
 * scripts.
 *
 * Every subcommand runs on the main thread's loop (cli/loop.h) through
 * the async calls, one call at a time.  SIGINT, SIGTERM or SIGHUP cancel
 * the call (zkl_counter_cancel(): an add while other writers keep coming
 * first or the connection is down, a wait, a write not yet sent), and zkl
 * exits 128+N with nothing written; a call that completes all the same
 * (a write already applied) is reported as it is, with its exit status.
 *
 * wait is a get, then zkl_counter_wait() from what the get saw: a change
 * made between the two is not missed, and -v says when the get is done
 * (the tests change the counter only after that line).
 *
 * Each subcommand prints the counter as it left it: the value, or with
 * --json the object {"path", "value", "version", "exists", "zxid"}.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "loop.h"
#include "text.h"

/* One async call of the counter and what its completion said. */
typedef struct call {
  int done;
  int rc;
  int seen;          /* now holds the counter the completion gave       */
  zkl_count_t now;
  char detail[1024]; /* zkl_last_error() while it ran                   */
} call_t;

/* The run of a subcommand. */
typedef struct counting {
  const cli_opts_t *o;
  zkl_session_t *s;
  zkl_counter_t *c;
  int stop_signal; /* the first SIGINT, SIGTERM or SIGHUP, 0 if none     */
} counting_t;

/* ---- output ---------------------------------------------------------------------- */

static void put_json(const cli_opts_t *o, const zkl_count_t *n, int status) {
  fputs(status ? "[{\"kind\": \"counter\", \"path\": " : "{\"path\": ",
        stdout);
  cli_put_json_string(stdout, o->path);
  if (status)
    printf(", \"format\": \"%s\"", cli_counter_format_name(o->counter_format));
  printf(", \"value\": %" PRId64 ", \"version\": %" PRId32 ", \"exists\": %s, "
         "\"zxid\": %" PRIu64 "}%s\n", n->value, n->version,
         n->exists ? "true" : "false", n->zxid, status ? "]" : "");
}

/* Writes the counter as a subcommand prints it: 0, or CLI_EX_SOFTWARE
 * (message printed). */
static int put_count(const cli_opts_t *o, const zkl_count_t *n) {
  if (o->json) put_json(o, n, 0);
  else printf("%" PRId64 "\n", n->value);
  if (fflush(stdout) == 0 && !ferror(stdout)) return 0;
  perror("zkl: stdout");
  return CLI_EX_SOFTWARE;
}

/* `zkl status --counter`: a header and a line, or a JSON array of one
 * object.  0, or CLI_EX_SOFTWARE (message printed). */
static int put_status(const cli_opts_t *o, const zkl_count_t *n) {
  if (o->json) {
    put_json(o, n, 1);
  } else {
    int w = (int)strlen(o->path) > 7 ? (int)strlen(o->path) : 7;
    printf("%-*s %-6s %-20s %-11s %-6s %s\n", w, "COUNTER", "FORMAT", "VALUE",
           "VERSION", "EXISTS", "ZXID");
    char version[16] = "-", zxid[24] = "-"; /* a missing node has neither */
    if (n->exists) {
      snprintf(version, sizeof version, "%" PRId32, n->version);
      snprintf(zxid, sizeof zxid, "%" PRIu64, n->zxid);
    }
    printf("%-*s %-6s %-20" PRId64 " %-11s %-6s %s\n", w, o->path,
           cli_counter_format_name(o->counter_format), n->value, version,
           n->exists ? "yes" : "no", zxid);
  }
  if (fflush(stdout) == 0 && !ferror(stdout)) return 0;
  perror("zkl: stdout");
  return CLI_EX_SOFTWARE;
}

/* ---- the session, the counter object and its calls ---------------------------------- */

static void on_state(zkl_session_t *s, zkl_session_state_t state, void *arg) {
  (void)s, (void)arg;
  cli_loop_post_arg(CLI_EV_STATE, (int)state);
}

/* Sets up signals, connects and makes the counter object as the options
 * say, and tells the loop of the session: 0, or the exit status (message
 * printed; nothing to close). */
static int open_counter(counting_t *k) {
  const cli_opts_t *o = k->o;
  if (cli_loop_init() != 0) {
    perror("zkl: cannot set up signals");
    return CLI_EX_SOFTWARE;
  }
  int rc = cli_connect(o, on_state, NULL, &k->s);
  if (rc != 0) return rc;
  zkl_counter_opts_t co;
  zkl_counter_opts_init(&co);
  co.format = (zkl_counter_format_t)o->counter_format;
  co.initial = o->initial;
  rc = zkl_counter_create(&k->c, k->s, o->path, &co);
  if (rc != 0) {
    fprintf(stderr, "zkl: cannot use the counter %s: %s: %s\n", o->path,
            zkl_strerror(rc), zkl_last_error());
    cli_session_close(k->s);
    return cli_exit_code(rc);
  }
  cli_loop_connected(k->s);
  return 0;
}

static void close_counter(counting_t *k) {
  zkl_counter_destroy(k->c);
  cli_session_close(k->s);
}

/* The completion of every call (on the loop, from zkl_session_dispatch()). */
static void on_count(zkl_counter_t *c, int rc, const zkl_count_t *now,
                     void *arg) {
  (void)c;
  call_t *w = arg;
  w->rc = rc;
  w->seen = now != NULL;
  if (now != NULL) w->now = *now;
  snprintf(w->detail, sizeof w->detail, "%s", zkl_last_error());
  w->done = 1;
  cli_loop_post_arg(CLI_EV_COUNTED, rc); /* wakes the loop */
}

/* Starts the call op (seen: for cas and wait) with w for its completion:
 * 0, or the code it was refused with (w->detail says why). */
static int start(counting_t *k, cli_counter_op_t op, const zkl_count_t *seen,
                 call_t *w) {
  const cli_opts_t *o = k->o;
  int rc = ZKL_EINVAL;
  memset(w, 0, sizeof *w);
  switch (op) {
  case CLI_COUNTER_GET: rc = zkl_counter_get_async(k->c, on_count, w); break;
  case CLI_COUNTER_SET:
    rc = zkl_counter_set_async(k->c, o->number, on_count, w);
    break;
  case CLI_COUNTER_ADD:
    rc = zkl_counter_add_async(k->c, o->number, o->timeout_ms, on_count, w);
    break;
  case CLI_COUNTER_CAS:
    rc = zkl_counter_cas_async(k->c, seen, o->number, on_count, w);
    break;
  case CLI_COUNTER_WAIT:
    rc = zkl_counter_wait_async(k->c, seen, o->timeout_ms, on_count, w);
    break;
  case CLI_COUNTER_NONE: break;
  }
  if (rc != 0) snprintf(w->detail, sizeof w->detail, "%s", zkl_last_error());
  return rc;
}

/* Runs the loop until w's completion; the first signal cancels the call
 * (k->stop_signal).  The completion's code. */
static int await(counting_t *k, call_t *w) {
  while (!w->done) {
    cli_event_t ev;
    if (!cli_loop_next(&ev, INT64_MAX)) continue;
    if (ev.type == CLI_EV_SIGNAL && k->stop_signal == 0) {
      k->stop_signal = ev.arg; /* the completion follows */
      zkl_counter_cancel(k->c);
    } else if (ev.type == CLI_EV_STATE) {
      cli_verbose(k->o, "session %s", cli_state_name(ev.arg));
    }
  }
  return w->rc;
}

/* start() and await(): the code of the call, refused or completed. */
static int call(counting_t *k, cli_counter_op_t op, const zkl_count_t *seen,
                call_t *w) {
  int rc = start(k, op, seen, w);
  if (rc != 0) {
    w->rc = rc;
    return rc;
  }
  return await(k, w);
}

/* ---- outcomes ------------------------------------------------------------------------- */

/* What a subcommand does, for messages: "add 5 to" the path. */
static void what_of(const cli_opts_t *o, cli_counter_op_t op, char *buf,
                    size_t len) {
  switch (op) {
  case CLI_COUNTER_SET:
    snprintf(buf, len, "set %" PRId64 " at", o->number);
    break;
  case CLI_COUNTER_ADD:
    snprintf(buf, len, "add %" PRId64 " to", o->number);
    break;
  case CLI_COUNTER_CAS:
    snprintf(buf, len, "write %" PRId64 " at", o->number);
    break;
  case CLI_COUNTER_WAIT: snprintf(buf, len, "wait for a change of"); break;
  default: snprintf(buf, len, "read"); break;
  }
}

/* The words for a code in messages: zkl_strerror()'s, but for the codes
 * whose text there speaks of a lock's hold, and EPROTO's, whose detail
 * says it all ("" then). */
static const char *code_text(int rc) {
  switch (rc) {
  case ZKL_ESUSPENDED: return "connection suspended";
  case ZKL_ELOST: return "session lost";
  case ZKL_EPROTO: return "";
  default: return zkl_strerror(rc);
  }
}

/* "zkl: cannot WHAT PATH: <code>: <detail>[: more]", and the exit status.
 * The library's detail says whether a write may have been applied
 * (ZKL_ESUSPENDED: the answer lost, or nothing sent). */
static int failed(const cli_opts_t *o, cli_counter_op_t op, const call_t *w,
                  const char *more) {
  char what[64];
  what_of(o, op, what, sizeof what);
  const char *code = code_text(w->rc);
  fprintf(stderr, "zkl: cannot %s %s: %s%s%s%s%s\n", what, o->path, code,
          code[0] && w->detail[0] ? ": " : "", w->detail,
          more[0] ? ": " : "", more);
  return cli_exit_code(w->rc);
}

/* cas found the counter changed since VERSION (w->now, when given, the
 * counter as it is): exit 1, the counter as it is printed. */
static int stale(const cli_opts_t *o, const call_t *w) {
  char was[32];
  if (o->version_none) snprintf(was, sizeof was, "missing");
  else snprintf(was, sizeof was, "at version %" PRId32, o->version);
  if (!w->seen) {
    cli_verbose(o, "%s is no longer %s: nothing written", o->path, was);
    return 1;
  }
  if (w->now.exists && !o->version_none && w->now.version == o->version)
    cli_verbose(o, "%s", w->detail); /* version -1: it says why */
  else if (w->now.exists)
    cli_verbose(o, "%s is no longer %s: it is %" PRId64 " at version %" PRId32
                   ": nothing written", o->path, was, w->now.value,
                w->now.version);
  else
    cli_verbose(o, "%s is no longer %s: it is missing: nothing written",
                o->path, was);
  return put_count(o, &w->now) != 0 ? CLI_EX_SOFTWARE : 1;
}

/* add or wait gave up at -t: exit 1, nothing printed. */
static int gave_up(const cli_opts_t *o, cli_counter_op_t op, const call_t *w) {
  cli_verbose(o, "%s: %s: %s%s%s", o->path,
              op == CLI_COUNTER_ADD ? "nothing added" : "no change",
              zkl_strerror(w->rc), w->detail[0] ? ": " : "", w->detail);
  return 1;
}

/* The exit status of the call op that completed as w says (printing the
 * counter when it succeeded). */
static int outcome(const counting_t *k, cli_counter_op_t op, const call_t *w) {
  const cli_opts_t *o = k->o;
  int writes = op == CLI_COUNTER_SET || op == CLI_COUNTER_ADD ||
               op == CLI_COUNTER_CAS;
  switch (w->rc) {
  case 0:
    if (writes)
      cli_verbose(o, "%s: %" PRId64 " at version %" PRId32 " (zxid %" PRIu64
                     ")%s", o->path, w->now.value, w->now.version,
                  w->now.zxid, k->stop_signal != 0
                                   ? " (written before the signal came)" : "");
    return put_count(o, &w->now);
  case ZKL_ECANCELED:
    if (k->stop_signal == 0) break;
    cli_verbose(o, "%s: signal %d: %s", o->path, k->stop_signal,
                writes ? "nothing written" : "stopped");
    return CLI_EX_SIGNAL_BASE + k->stop_signal;
  case ZKL_ESTALE: /* add -t 0: another writer came first */
    if (op == CLI_COUNTER_CAS) return stale(o, w);
    if (op == CLI_COUNTER_ADD) return gave_up(o, op, w);
    break;
  case ZKL_ETIMEDOUT:
    if (op == CLI_COUNTER_ADD || op == CLI_COUNTER_WAIT)
      return gave_up(o, op, w);
    break;
  case ZKL_EPROTO: {
    char more[96];
    snprintf(more, sizeof more, "is it of another --format than %s?",
             cli_counter_format_name(o->counter_format));
    failed(o, op, w, more);
    return CLI_EX_SOFTWARE;
  }
  case ZKL_ERANGE: /* the detail says that nothing was written */
    failed(o, op, w, "");
    return CLI_EX_SOFTWARE;
  default: break;
  }
  return failed(o, op, w, "");
}

/* ---- the subcommands ----------------------------------------------------------------- */

/* What cas compares with: VERSION on an existing node, or 'none'. */
static void seen_of(const cli_opts_t *o, zkl_count_t *seen) {
  memset(seen, 0, sizeof *seen);
  seen->exists = !o->version_none;
  seen->version = o->version;
}

/* wait: a get, then a wait from what it saw. */
static int wait_run(counting_t *k) {
  call_t w;
  if (call(k, CLI_COUNTER_GET, NULL, &w) != 0 || k->stop_signal != 0)
    return w.rc != 0 ? outcome(k, CLI_COUNTER_GET, &w)
                     : CLI_EX_SIGNAL_BASE + k->stop_signal;
  zkl_count_t seen = w.now;
  if (seen.exists)
    cli_verbose(k->o, "%s: %" PRId64 " at version %" PRId32 ": waiting for a "
                      "change", k->o->path, seen.value, seen.version);
  else
    cli_verbose(k->o, "%s: missing: waiting for a change", k->o->path);
  call(k, CLI_COUNTER_WAIT, &seen, &w);
  return outcome(k, CLI_COUNTER_WAIT, &w);
}

int cli_counter_run(const cli_opts_t *o) {
  counting_t k;
  memset(&k, 0, sizeof k);
  k.o = o;
  int rc = open_counter(&k);
  if (rc != 0) return rc;
  if (o->counter_op == CLI_COUNTER_WAIT) {
    rc = wait_run(&k);
  } else {
    zkl_count_t seen;
    seen_of(o, &seen);
    call_t w;
    call(&k, o->counter_op, &seen, &w);
    rc = outcome(&k, o->counter_op, &w);
  }
  close_counter(&k);
  return rc;
}

int cli_counter_status_run(const cli_opts_t *o) {
  counting_t k;
  memset(&k, 0, sizeof k);
  k.o = o;
  int rc = open_counter(&k);
  if (rc != 0) return rc;
  call_t w;
  call(&k, CLI_COUNTER_GET, NULL, &w);
  if (w.rc == 0) rc = put_status(o, &w.now);
  else rc = outcome(&k, CLI_COUNTER_GET, &w);
  close_counter(&k);
  return rc;
}
