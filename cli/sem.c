/* cli/sem.c - `zkl sem [-n MAX] [--qty Q] [--count-path P | --kazoo] PATH
 * CMD...` and `zkl status --sem [--kazoo] PATH`: the counting semaphore of
 * zkl/semaphore.h, for shell scripts; in Curator's layout, or with --kazoo
 * in kazoo's (ZKL_SEM_KAZOO: the gate at PATH-__lock__, the leases PATH's
 * children, MAX in PATH's data, which zkl writes when it makes PATH).
 *
 * sem is `zkl lock` for Q leases, and runs on the main thread's loop
 * (cli/loop.h) the same way: the leases are taken with the async acquire,
 * whose completion the loop dispatches; a signal while waiting cancels it
 * (the library leaves nothing behind: no lease, and its place in the
 * gate's line given up); CMD starts once granted, on leases that hold now;
 * signals are passed on to CMD; the leases are given back (async release)
 * once CMD has ended.
 *
 * Watching the hold.  A semaphore has no watch on its leases (there is no
 * zkl_mutex_watch_async() for it), and needs none for the one way a lease
 * goes while zkl runs: a lease lives exactly as long as its session.  So
 * zkl watches the session: its LOST state (an event of the loop), and,
 * five times a second while CMD runs and at every change of state,
 * zkl_sem_lease_health(), which asks no server: it says ZKL_ELOST once
 * the session has been silent for a whole session timeout, or was replaced
 * by a new one (by then the server may have let the leases go to others).
 * Either stops CMD (TERM, KILL after --grace) and zkl exits 75.  In doubt
 * (ZKL_ESUSPENDED: the connection down, the session maybe back in time)
 * CMD goes on, as under `zkl lock`.  A lease node deleted by someone else
 * while its session lives is not noticed: nothing watches it.
 *
 * The library refuses a shared count that does not fit (ZKL_EINVAL:
 * missing without -n, not a 4-byte maximum of 1 or more, disagreeing with
 * -n, less than --qty) with one code; zkl reads the count once more
 * (zkl_counter(3), INT32: its format) to tell them apart: a command line
 * that does not fit the count is a usage error (64, as `zkl queue rm` of
 * a name that is no item), a count that is none is 70.  With --kazoo the
 * same goes for the maximum stored in PATH's data (missing without -n:
 * PATH missing, its data empty or no number; below 1 or past an int,
 * whatever -n; disagreeing with -n; less than --qty): it is read once more
 * by the library itself (zkl_sem_count() of an object with no local max)
 * and, when that finds none, as kazoo's Counter reads it (zkl_counter(3),
 * TEXT) to say why: -n or --qty that do not fit it are 64, none (without
 * -n) or one below 1 is 70, as for a shared count.
 *
 * status --sem reads with the blocking zkl_sem_count(), as `zkl status`
 * does; with --kazoo and no maximum stored at PATH (PATH missing, its data
 * empty or no number, which kazoo ignores too) it shows none, as without
 * a shared count, and one below 1 exits 70.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "child.h"
#include "cli.h"
#include "loop.h"
#include "text.h"

/* How often the leases' session is looked at while CMD runs, besides its
 * LOST event (no request: what the session knows). */
#define HEALTH_EVERY_NS 200000000LL

typedef struct holder {
  const cli_opts_t *o;
  zkl_session_t *s;
  zkl_sem_t *m;
  cli_child_t child;
  zkl_lease_t *leases;  /* o->qty of them, filled by the grant            */
  int acquire_done;     /* the acquire's completion came                  */
  int acquire_rc;       /* and its code (0: the object holds the leases)  */
  char detail[1024];    /* zkl_last_error() at the completion             */
  int acquire_seen;     /* its event was handled                          */
  int64_t deadline_ns;  /* -t's, monotonic; INT64_MAX: none               */
  int released;         /* the release's completion came                  */
  int release_rc;       /* and its code                                   */
  char release_detail[1024];
  int start_pending;    /* granted, CMD waits for the connection          */
  int stop_signal;      /* the signal that stopped the wait, 0 if none    */
  int lost;             /* the leases' session was lost                   */
  int done;
  int result;           /* exit status once done                          */
} holder_t;

/* ---- the session, the object and its async calls -------------------------------- */

static void on_state(zkl_session_t *s, zkl_session_state_t state, void *arg) {
  (void)s, (void)arg;
  cli_loop_post_arg(CLI_EV_STATE, (int)state);
}

/* The acquire's completion (on the loop, from zkl_session_dispatch()):
 * the leases live only during the call, the names and token are copied.
 * A grant in doubt or lost by then was given back by the library and
 * comes as ZKL_ESUSPENDED / ZKL_ELOST. */
static void on_leases(zkl_sem_t *m, int rc, const zkl_lease_t *leases,
                      size_t n, void *arg) {
  (void)m;
  holder_t *h = arg;
  if (rc == 0) memcpy(h->leases, leases, n * sizeof *leases);
  h->acquire_rc = rc;
  snprintf(h->detail, sizeof h->detail, "%s", zkl_last_error());
  h->acquire_done = 1;
  cli_loop_post_arg(CLI_EV_ACQUIRED, rc); /* wakes the loop */
}

static void on_released(void *obj, int rc, uint64_t token, void *arg) {
  (void)obj, (void)token;
  holder_t *h = arg;
  h->release_rc = rc;
  snprintf(h->release_detail, sizeof h->release_detail, "%s",
           zkl_last_error());
  h->released = 1;
  cli_loop_post_arg(CLI_EV_RELEASED, rc); /* wakes the loop */
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

/* "Q lease(s)", for messages. */
static const char *leases_word(const cli_opts_t *o) {
  return o->qty == 1 ? "lease" : "leases";
}

/* ---- a shared count the library refused ----------------------------------------- */

/* The acquire said ZKL_EINVAL: which of the shared count's refusals it
 * was, told by a read of the count (a change since may make it none of
 * them: the library's detail is told then).  Prints the message; the exit
 * status. */
static int count_refused(holder_t *h) {
  const cli_opts_t *o = h->o;
  zkl_counter_t *c = NULL;
  zkl_counter_opts_t co;
  zkl_counter_opts_init(&co); /* INT32, a missing or empty node reads 0 */
  zkl_count_t now;
  memset(&now, 0, sizeof now);
  int rc = o->count_path != NULL ? zkl_counter_create(&c, h->s, o->count_path,
                                                      &co)
                                 : ZKL_EINVAL;
  if (rc == 0) rc = zkl_counter_get(c, &now);
  zkl_counter_destroy(c);
  if (rc == ZKL_EPROTO || (rc == 0 && now.exists && now.value < 1)) {
    fprintf(stderr, "zkl: cannot take leases of %s: the shared count at %s "
                    "is not a 4-byte maximum of 1 or more (%s)\n", o->path,
            o->count_path,
            rc == ZKL_EPROTO ? "its data is not 4 bytes"
            : now.value == 0 ? "it is empty, or holds 0"
                             : "it holds a negative number");
    return CLI_EX_SOFTWARE;
  }
  if (rc == 0 && !now.exists && o->sem_max == 0) {
    fprintf(stderr, "zkl: cannot take leases of %s: there is no shared count "
                    "at %s (write one with 'zkl counter set %s MAX', or give "
                    "-n)\n", o->path, o->count_path, o->count_path);
    return CLI_EX_SOFTWARE;
  }
  if (rc == 0 && now.exists && o->sem_max > 0 && now.value != o->sem_max) {
    fprintf(stderr, "zkl sem: -n %d disagrees with the shared count at %s, "
                    "which holds %" PRId64 ": nothing taken (try 'zkl sem "
                    "--help')\n", o->sem_max, o->count_path, now.value);
    return CLI_EX_USAGE;
  }
  if (rc == 0 && now.exists && o->qty > now.value) {
    fprintf(stderr, "zkl sem: --qty %d is more than the maximum in the "
                    "shared count at %s, %" PRId64 ": nothing taken (try 'zkl "
                    "sem --help')\n", o->qty, o->count_path, now.value);
    return CLI_EX_USAGE;
  }
  fprintf(stderr, "zkl: cannot take leases of %s: %s%s%s\n", o->path,
          code_text(ZKL_EINVAL), h->detail[0] ? ": " : "", h->detail);
  return CLI_EX_SOFTWARE;
}

/* ---- the maximum stored at PATH (kazoo's layout) --------------------------------- */

/* What stored_max() found. */
enum {
  STORED_MAX,     /* a maximum of 1 or more                               */
  STORED_NONE,    /* none: PATH missing, its data empty or no number (a
                     local max is then used, as kazoo does)              */
  STORED_REFUSED, /* a number below 1 or past an int: refused whatever -n */
  STORED_UNKNOWN  /* not read (why: the code and the library's detail)    */
};

/* The maximum kazoo's layout keeps in path's data, read by the library
 * (zkl_sem_count() of an object with no local max: its reading, Python's
 * int()); when that finds none, the data read as kazoo's Counter writes it
 * (zkl_counter(3), TEXT) says why.  One of the STORED_* with *max (0 but
 * for STORED_MAX) and, but for STORED_MAX, why (a phrase: "there is no
 * such node", "its data is not a number"...). */
static int stored_max(zkl_session_t *s, const char *path, int *max,
                      char *why, size_t len) {
  zkl_sem_t *m = NULL;
  zkl_sem_opts_t so;
  zkl_sem_opts_init(&so);
  so.format = ZKL_SEM_KAZOO; /* max 0: the stored one */
  size_t leased = 0;
  *max = 0;
  int rc = zkl_sem_create(&m, s, path, &so);
  if (rc == 0) rc = zkl_sem_count(m, &leased, max);
  if (rc != 0) snprintf(why, len, "%s: %s", code_text(rc), zkl_last_error());
  zkl_sem_destroy(m);
  if (rc == 0 && *max >= 1) return STORED_MAX;
  *max = 0;
  if (rc != ZKL_EINVAL) return STORED_UNKNOWN;
  zkl_counter_t *c = NULL;
  zkl_counter_opts_t co;
  zkl_counter_opts_init(&co);
  co.format = ZKL_COUNTER_TEXT;
  co.initial = INT64_MIN; /* what an empty node reads as */
  zkl_count_t now;
  memset(&now, 0, sizeof now);
  rc = zkl_counter_create(&c, s, path, &co);
  if (rc == 0) rc = zkl_counter_get(c, &now);
  if (rc != 0 && rc != ZKL_EPROTO)
    snprintf(why, len, "%s: %s", code_text(rc), zkl_last_error());
  zkl_counter_destroy(c);
  if (rc == ZKL_EPROTO) {
    snprintf(why, len, "its data is not a number");
    return STORED_NONE;
  }
  if (rc != 0) return STORED_UNKNOWN;
  if (!now.exists) {
    snprintf(why, len, "there is no such node");
    return STORED_NONE;
  }
  if (now.value == INT64_MIN) {
    snprintf(why, len, "its data is empty");
    return STORED_NONE;
  }
  if (now.value < 1 || now.value > INT_MAX) {
    snprintf(why, len, "its data holds %" PRId64, now.value);
    return STORED_REFUSED;
  }
  /* a number the library took: changed since its read */
  snprintf(why, len, "its data holds %" PRId64 " now", now.value);
  return STORED_UNKNOWN;
}

/* The acquire said ZKL_EINVAL in kazoo's layout: which of the stored
 * maximum's refusals it was, told by stored_max() (a change since may make
 * it none of them: the library's detail is told then).  Prints the
 * message; the exit status. */
static int stored_refused(holder_t *h) {
  const cli_opts_t *o = h->o;
  int max = 0;
  char why[1100] = "";
  int st = stored_max(h->s, o->path, &max, why, sizeof why);
  if (st == STORED_MAX && o->sem_max > 0 && max != o->sem_max) {
    fprintf(stderr, "zkl sem: -n %d disagrees with the maximum stored at %s "
                    "(kazoo's layout), which is %d: nothing taken (try 'zkl "
                    "sem --help')\n", o->sem_max, o->path, max);
    return CLI_EX_USAGE;
  }
  if (st == STORED_MAX && o->qty > max) {
    fprintf(stderr, "zkl sem: --qty %d is more than the maximum stored at %s "
                    "(kazoo's layout), %d: nothing taken (try 'zkl sem "
                    "--help')\n", o->qty, o->path, max);
    return CLI_EX_USAGE;
  }
  if (st == STORED_NONE && o->sem_max == 0) {
    fprintf(stderr, "zkl: cannot take leases of %s: no maximum is stored "
                    "there (%s), and no -n (in kazoo's layout the user that "
                    "makes PATH writes MAX into its data: give -n MAX)\n",
            o->path, why);
    return CLI_EX_SOFTWARE;
  }
  if (st == STORED_REFUSED) {
    fprintf(stderr, "zkl: cannot take leases of %s: the maximum stored there "
                    "(kazoo's layout) is not 1..2147483647 (%s)\n", o->path,
            why);
    return CLI_EX_SOFTWARE;
  }
  fprintf(stderr, "zkl: cannot take leases of %s: %s%s%s\n", o->path,
          code_text(ZKL_EINVAL), h->detail[0] ? ": " : "", h->detail);
  return CLI_EX_SOFTWARE;
}

/* ---- the run ---------------------------------------------------------------------- */

static void finish(holder_t *h, int result) {
  h->result = result;
  h->done = 1;
}

static void stop_waiting(holder_t *h) { zkl_sem_cancel(h->m); }

/* The leases are gone (their session lost): stop CMD, or stop waiting
 * for them. */
static void lose(holder_t *h, const char *why) {
  if (h->lost || h->done) return;
  h->lost = 1;
  if (h->start_pending) {
    fprintf(stderr, "zkl: leases of %s lost (%s) before CMD started\n",
            h->o->path, why);
    finish(h, CLI_EX_LOST);
  } else if (h->child.running) {
    fprintf(stderr, "zkl: leases of %s lost (%s): stopping CMD (pid %ld)\n",
            h->o->path, why, (long)h->child.pid);
    cli_child_stop(&h->child, h->o->grace_ms);
  } else if (!h->acquire_done) {
    stop_waiting(h); /* the completion follows */
  }
}

/* "NAME NAME ...": the leases' names, separated by spaces; NULL without
 * memory. */
static char *lease_names(const holder_t *h) {
  size_t n = (size_t)h->o->qty, len = 1;
  for (size_t i = 0; i < n; i++) len += strlen(h->leases[i].name) + 1;
  char *v = malloc(len), *p = v;
  if (v == NULL) return NULL;
  for (size_t i = 0; i < n; i++)
    p += sprintf(p, "%s%s", i > 0 ? " " : "", h->leases[i].name);
  *p = '\0';
  return v;
}

static void start_cmd(holder_t *h) {
  const cli_opts_t *o = h->o;
  char *names = lease_names(h);
  char *leases_var = names != NULL ? malloc(strlen(names) + 16) : NULL;
  if (leases_var == NULL) {
    fprintf(stderr, "zkl: no memory for CMD's environment\n");
    free(names);
    finish(h, CLI_EX_SOFTWARE);
    return;
  }
  sprintf(leases_var, "ZKL_SEM_LEASES=%s", names);
  char path_var[1100], token_var[64];
  snprintf(path_var, sizeof path_var, "ZKL_SEM_PATH=%s", o->path);
  snprintf(token_var, sizeof token_var, "ZKL_SEM_TOKEN=%" PRIu64,
           h->leases[0].token);
  char *env[] = {path_var, leases_var, token_var, NULL};
  cli_verbose(o, "holding %d %s of %s: token %" PRIu64 ", %s", o->qty,
              leases_word(o), o->path, h->leases[0].token, names);
  int rc = cli_child_start(&h->child, o->cmd, env);
  free(leases_var);
  free(names);
  if (rc != 0) finish(h, rc);
}

/* CMD starts only on leases that hold now (zkl_sem_lease_health() 0:
 * their session connected and heard from within its timeout).  Time
 * passes between the grant and here, and the process may have been
 * paused. */
static void start_if_valid(holder_t *h) {
  int st = zkl_sem_lease_health(h->m, &h->leases[0]);
  h->start_pending = 0;
  if (st == 0) {
    start_cmd(h);
  } else if (st == ZKL_ESUSPENDED) {
    cli_verbose(h->o, "%s: connection down: CMD waits until it is back",
                h->o->path);
    h->start_pending = 1; /* RECONNECTED starts it, LOST ends the run */
  } else {
    h->start_pending = 1;
    lose(h, "session lost");
  }
}

/* While CMD runs: the leases' session, as the library knows it.  The Q
 * leases of one acquire share their session: the first tells for all. */
static void check_health(holder_t *h) {
  if (!h->child.running || h->lost) return;
  if (zkl_sem_lease_health(h->m, &h->leases[0]) == ZKL_ELOST)
    lose(h, "session lost");
}

/* Starts the acquire, with what is left of -t: 0, or the code it was
 * refused with (message printed). */
static int acquire_start(holder_t *h) {
  const cli_opts_t *o = h->o;
  int64_t t = o->timeout_ms; /* <0 for ever, 0 try */
  if (t > 0) {
    int64_t left = h->deadline_ns - cli_now_ns();
    t = left > 0 ? (left + 999999) / 1000000 : 0;
  }
  h->acquire_done = h->acquire_seen = 0;
  h->acquire_rc = 0;
  h->detail[0] = '\0';
  int rc = zkl_sem_acquire_async(h->m, (unsigned)o->qty, t, on_leases, h);
  if (rc != 0)
    fprintf(stderr, "zkl: cannot take %d %s of %s: %s: %s\n", o->qty,
            leases_word(o), o->path, code_text(rc), zkl_last_error());
  return rc;
}

static void on_acquired(holder_t *h) {
  const cli_opts_t *o = h->o;
  int rc = h->acquire_rc;
  h->acquire_seen = 1;
  if (h->done) return; /* the run ended meanwhile: release() sees rc */
  if (rc == ZKL_ESUSPENDED && o->timeout_ms != 0 && !h->lost &&
      h->stop_signal == 0 && cli_now_ns() < h->deadline_ns) {
    /* granted as the connection went down: the library gave the leases
     * back; in line again, as a wait goes through a connection down */
    cli_verbose(o, "%s: %s: waiting again", o->path, h->detail);
    rc = acquire_start(h);
    if (rc == 0) return;
    h->acquire_done = h->acquire_seen = 1;
    h->acquire_rc = rc;
    finish(h, cli_exit_code(rc));
    return;
  }
  if (rc == 0) {
    if (h->lost) {
      fprintf(stderr, "zkl: leases of %s lost before CMD started\n",
              o->path);
      finish(h, CLI_EX_LOST);
    } else if (h->stop_signal != 0) {
      finish(h, CLI_EX_SIGNAL_BASE + h->stop_signal);
    } else {
      start_if_valid(h);
    }
    return;
  }
  if (rc == ZKL_EBUSY || rc == ZKL_ETIMEDOUT) {
    cli_verbose(o, "%s: not obtained %s%s%s: CMD not run", o->path,
                o->timeout_ms > 0 ? "within -t" : "now",
                h->detail[0] ? ": " : "", h->detail);
    finish(h, o->conflict_exit);
  } else if (rc == ZKL_ECANCELED && h->stop_signal != 0) {
    cli_verbose(o, "%s: signal %d: nothing taken, CMD not run", o->path,
                h->stop_signal);
    finish(h, CLI_EX_SIGNAL_BASE + h->stop_signal);
  } else if (h->lost || rc == ZKL_ELOST) {
    fprintf(stderr, "zkl: session lost while waiting for %s\n", o->path);
    finish(h, CLI_EX_LOST);
  } else if (rc == ZKL_EINVAL) {
    finish(h, o->sem_format == ZKL_SEM_KAZOO ? stored_refused(h)
                                             : count_refused(h));
  } else {
    fprintf(stderr, "zkl: cannot take %d %s of %s: %s%s%s\n", o->qty,
            leases_word(o), o->path, code_text(rc), h->detail[0] ? ": " : "",
            h->detail);
    finish(h, cli_exit_code(rc));
  }
}

static void on_event(holder_t *h, const cli_event_t *ev) {
  switch (ev->type) {
  case CLI_EV_SIGNAL:
    if (h->child.running) {
      cli_verbose(h->o, "passing signal %d on to CMD", ev->arg);
      cli_child_signal(&h->child, ev->arg);
    } else if (!h->acquire_seen) {
      if (h->stop_signal == 0) h->stop_signal = ev->arg;
      stop_waiting(h); /* the completion (or its event) follows */
    } else if (h->start_pending && !h->done) { /* CMD not started yet */
      finish(h, CLI_EX_SIGNAL_BASE + ev->arg);
    }
    break;
  case CLI_EV_STATE:
    cli_verbose(h->o, "session %s", cli_state_name(ev->arg));
    if (ev->arg == ZKL_SESSION_LOST) lose(h, "session lost");
    else if (h->start_pending && !h->done) start_if_valid(h);
    else check_health(h);
    break;
  case CLI_EV_ACQUIRED:
    if (h->acquire_done && !h->acquire_seen) on_acquired(h);
    break;
  case CLI_EV_CHILD:
    if (cli_child_reap(&h->child))
      finish(h, h->lost ? CLI_EX_LOST : h->child.code);
    break;
  default:
    break;
  }
}

/* Waits for the leases and runs CMD: until the run ended. */
static void run_loop(holder_t *h) {
  int64_t next_check = cli_now_ns() + HEALTH_EVERY_NS;
  while (!h->done) {
    int64_t until = h->child.kill_at;
    int watching = h->child.running && !h->lost;
    if (watching && next_check < until) until = next_check;
    cli_event_t ev;
    if (cli_loop_next(&ev, until)) on_event(h, &ev);
    cli_child_tick(&h->child);
    if (watching && !h->done && cli_now_ns() >= next_check) {
      next_check = cli_now_ns() + HEALTH_EVERY_NS;
      check_health(h);
    }
  }
}

/* Gives the leases back (if any: an acquire still under way is canceled
 * and its completion awaited first), running the loop until the release's
 * completion came. */
static void release(holder_t *h) {
  const cli_opts_t *o = h->o;
  cli_event_t ev;
  if (!h->acquire_done) {
    zkl_sem_cancel(h->m);
    while (!h->acquire_done) cli_loop_next(&ev, INT64_MAX);
  }
  if (h->acquire_rc != 0) return; /* nothing held */
  int rc = zkl_sem_release_async(h->m, NULL, 0, on_released, h);
  if (rc == 0) {
    while (!h->released) cli_loop_next(&ev, INT64_MAX);
  } else {
    h->release_rc = rc;
    snprintf(h->release_detail, sizeof h->release_detail, "%s",
             zkl_last_error());
  }
  if (h->release_rc == 0)
    cli_verbose(o, "gave back %d %s of %s", o->qty, leases_word(o), o->path);
  else if (!h->lost && h->release_rc != ZKL_ELOST)
    fprintf(stderr, "zkl: warning: giving back the leases of %s: %s%s%s\n",
            o->path, code_text(h->release_rc),
            h->release_detail[0] ? ": " : "", h->release_detail);
}

/* Connects and makes the semaphore object as the options say (max: the
 * local maximum, 0 for the shared count's or the stored one; the format,
 * --kazoo's).  0, or the exit status (message printed; nothing to
 * close). */
static int open_sem(const cli_opts_t *o, zkl_session_state_fn state_fn,
                    int max, zkl_session_t **s, zkl_sem_t **m) {
  int rc = cli_connect(o, state_fn, NULL, s);
  if (rc != 0) return rc;
  zkl_sem_opts_t so;
  zkl_sem_opts_init(&so);
  so.max = max;
  so.count_path = o->count_path;
  so.format = o->sem_format;
  rc = zkl_sem_create(m, *s, o->path, &so);
  if (rc != 0) {
    fprintf(stderr, "zkl: cannot use the semaphore %s: %s: %s\n", o->path,
            zkl_strerror(rc), zkl_last_error());
    cli_session_close(*s);
    return cli_exit_code(rc);
  }
  return 0;
}

int cli_sem_run(const cli_opts_t *o) {
  if (cli_loop_init() != 0) {
    perror("zkl: cannot set up signals");
    return CLI_EX_SOFTWARE;
  }
  holder_t h;
  memset(&h, 0, sizeof h);
  h.o = o;
  h.child.kill_at = INT64_MAX;
  h.leases = calloc((size_t)o->qty, sizeof *h.leases);
  if (h.leases == NULL) {
    fprintf(stderr, "zkl: no memory for %d leases\n", o->qty);
    return CLI_EX_SOFTWARE;
  }
  int rc = open_sem(o, on_state, o->sem_max, &h.s, &h.m);
  if (rc != 0) {
    free(h.leases);
    return rc;
  }
  cli_loop_connected(h.s);
  const char *layout = o->sem_format == ZKL_SEM_KAZOO ? ", kazoo's layout"
                                                      : "";
  if (o->sem_max > 0)
    cli_verbose(o, "waiting for %d %s of %s (max %d%s%s%s)", o->qty,
                leases_word(o), o->path, o->sem_max,
                o->count_path != NULL ? ", the shared count at " : "",
                o->count_path != NULL ? o->count_path : "", layout);
  else if (o->count_path != NULL)
    cli_verbose(o, "waiting for %d %s of %s (max: the shared count at %s)",
                o->qty, leases_word(o), o->path, o->count_path);
  else
    cli_verbose(o, "waiting for %d %s of %s (max: the one stored there%s)",
                o->qty, leases_word(o), o->path, layout);
  h.deadline_ns = o->timeout_ms > 0 ? cli_now_ns() + o->timeout_ms * 1000000
                                     : INT64_MAX;
  rc = acquire_start(&h);
  if (rc != 0) {
    h.result = cli_exit_code(rc);
  } else {
    run_loop(&h);
    release(&h);
  }
  zkl_sem_destroy(h.m);
  cli_session_close(h.s);
  free(h.leases);
  return h.result;
}

/* ---- status --sem -------------------------------------------------------------------- */

/* The status: the count and maximum (max 0: none known, "-"), then a line
 * per lease held. */
static int put_status(const cli_opts_t *o, const zkl_sem_holder_t *v,
                      size_t n, int max) {
  if (o->json) {
    fputs("[{\"kind\": \"semaphore\", \"path\": ", stdout);
    cli_put_json_string(stdout, o->path);
    printf(", \"format\": \"%s\", \"leases\": %zu, \"max\": ",
           o->sem_format == ZKL_SEM_KAZOO ? "kazoo" : "curator", n);
    if (max > 0) printf("%d", max);
    else fputs("null", stdout);
    fputs(", \"count_path\": ", stdout);
    if (o->count_path != NULL) cli_put_json_string(stdout, o->count_path);
    else fputs("null", stdout);
    fputs(", \"holders\": [", stdout);
    for (size_t i = 0; i < n; i++) {
      fputs(i > 0 ? ", {\"name\": " : "{\"name\": ", stdout);
      cli_put_json_string(stdout, v[i].name);
      printf(", \"token\": %" PRIu64 ", \"session\": \"0x%" PRIx64
             "\", \"data\": ", v[i].token, (uint64_t)v[i].session);
      cli_put_json_escaped(stdout, v[i].data, v[i].len);
      fputs("}", stdout);
    }
    fputs("]}]\n", stdout);
  } else {
    int w = (int)strlen(o->path) > 9 ? (int)strlen(o->path) : 9;
    char max_text[16] = "-";
    if (max > 0) snprintf(max_text, sizeof max_text, "%d", max);
    printf("%-*s %-6s %s\n", w, "SEMAPHORE", "LEASES", "MAX");
    printf("%-*s %-6zu %s\n", w, o->path, n, max_text);
    if (n > 0) printf("  %-56s %-12s %-18s %s\n", "LEASE", "TOKEN",
                      "SESSION", "HOLDER");
    for (size_t i = 0; i < n; i++) {
      printf("  %-56s %-12" PRIu64 " 0x%-16" PRIx64 " ", v[i].name,
             v[i].token, (uint64_t)v[i].session);
      cli_put_escaped(stdout, v[i].data, v[i].len);
      putchar('\n');
    }
  }
  if (fflush(stdout) == 0 && !ferror(stdout)) return 0;
  perror("zkl: stdout");
  return CLI_EX_SOFTWARE;
}

int cli_sem_status_run(const cli_opts_t *o) {
  zkl_session_t *s = NULL;
  zkl_sem_t *m = NULL;
  int kazoo = o->sem_format == ZKL_SEM_KAZOO;
  /* without a shared count, any maximum will do: nobody acquires; in
   * kazoo's layout, none: the one stored at PATH is read */
  int rc = open_sem(o, NULL, o->count_path != NULL || kazoo ? 0 : 1, &s, &m);
  if (rc != 0) return rc;
  size_t leases = 0, n = 0;
  int max = 0;
  zkl_sem_holder_t *v = NULL;
  char detail[1100] = "";
  rc = zkl_sem_count(m, &leases, &max);
  if (rc != 0) snprintf(detail, sizeof detail, "%s", zkl_last_error());
  if (rc == ZKL_EINVAL && kazoo) {
    /* no maximum stored (shown as none, max 0), or one refused: which */
    char why[512] = "";
    int st = stored_max(s, o->path, &max, why, sizeof why);
    if (st == STORED_MAX || st == STORED_NONE) rc = 0;
    else if (st == STORED_REFUSED)
      snprintf(detail, sizeof detail, "the maximum stored there (kazoo's "
               "layout) is not 1..2147483647 (%s)", why);
  }
  if (rc == 0 && o->count_path == NULL && !kazoo) max = 0; /* -n's: none */
  if (rc == 0) {
    rc = zkl_sem_holders(m, &v, &n);
    if (rc != 0) snprintf(detail, sizeof detail, "%s", zkl_last_error());
  }
  zkl_sem_destroy(m);
  cli_session_close(s);
  if (rc != 0) {
    fprintf(stderr, "zkl: cannot read the semaphore %s: %s%s%s\n", o->path,
            code_text(rc), detail[0] ? ": " : "", detail);
    return cli_exit_code(rc);
  }
  rc = put_status(o, v, n, max);
  zkl_sem_holders_free(v, n);
  return rc;
}
