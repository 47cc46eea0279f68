/* cli/queue.c - `zkl queue put|take|claim|peek|size|ls|rm PATH ...`: the
 * distributed queue of zkl_queue(3), for shell scripts.
 *
 * peek, size, ls and rm are one blocking call each.  put, take and claim
 * run on the main thread's loop (cli/loop.h) through the async calls, so
 * that SIGINT, SIGTERM or SIGHUP cancel a wait (zkl_queue_cancel()): zkl
 * then exits 128+N with nothing put, taken or claimed, and its place in
 * the producers' or consumers' line given up.
 *
 * claim is `zkl lock` for an item (cli/lock.c): the item claimed, CMD runs
 * with its payload on stdin and is stopped (TERM, then KILL after --grace)
 * when the claim is lost; its exit status decides between ack and nack.
 *
 * ls and `zkl status` list through zkl_queue_list(): which children are
 * items, of which format, in which order, and which are claimed is the
 * library's to say (cli_queue_list()).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "child.h"
#include "cli.h"
#include "loop.h"
#include "text.h"

#define PREVIEW 60 /* bytes of an item's data in ls's table */

/* ---- what was taken or looked at ---------------------------------------------- */

/* How items are written: the bytes of one as they are, each followed by a
 * newline (take --max), or JSON lines. */
typedef enum { OUT_RAW, OUT_LINES, OUT_JSON } out_mode_t;

static out_mode_t out_mode(const cli_opts_t *o) {
  if (o->json) return OUT_JSON;
  return o->max > 0 ? OUT_LINES : OUT_RAW;
}

static void put_item(const zkl_item_t *it, out_mode_t mode) {
  if (mode != OUT_JSON) {
    fwrite(it->data, 1, it->len, stdout);
    if (mode == OUT_LINES) putchar('\n');
    return;
  }
  fputs("{\"name\": ", stdout);
  cli_put_json_string(stdout, it->name);
  printf(", \"token\": %" PRIu64 ", \"len\": %zu, \"data\": ", it->token,
         it->len);
  cli_put_json_escaped(stdout, it->data, it->len);
  fputs("}\n", stdout);
}

/* Writes the items: 0, or CLI_EX_SOFTWARE (message printed; taken items
 * are then lost, and the message says so). */
static int put_items(const cli_opts_t *o, const zkl_item_t *v, size_t n,
                     int taken) {
  out_mode_t mode = out_mode(o);
  for (size_t i = 0; i < n; i++) put_item(&v[i], mode);
  if (fflush(stdout) == 0 && !ferror(stdout)) return 0;
  if (taken)
    fprintf(stderr, "zkl: cannot write the %zu item%s taken from %s: they "
                    "are lost\n", n, n == 1 ? "" : "s", o->path);
  else
    perror("zkl: stdout");
  return CLI_EX_SOFTWARE;
}

/* "zkl: cannot WHAT PATH: <code>: <detail>", and the exit status. */
static int failed_detail(const cli_opts_t *o, const char *what, int rc,
                         const char *detail) {
  fprintf(stderr, "zkl: cannot %s %s: %s%s%s\n", what, o->path,
          zkl_strerror(rc), detail[0] ? ": " : "", detail);
  return cli_exit_code(rc);
}

/* The same with zkl_last_error() as the detail (just after the call). */
static int failed(const cli_opts_t *o, const char *what, int rc) {
  return failed_detail(o, what, rc, zkl_last_error());
}

/* ---- the session and the queue object ------------------------------------------ */

static void on_state(zkl_session_t *s, zkl_session_state_t state, void *arg) {
  (void)s, (void)arg;
  cli_loop_post_arg(CLI_EV_STATE, (int)state);
}

/* The options of a queue object of format at the options' path. */
static void queue_opts(const cli_opts_t *o, int format, zkl_queue_opts_t *qo) {
  zkl_queue_opts_init(qo);
  qo->format = (zkl_queue_format_t)format;
  if (o->priority >= 0) qo->priority = o->priority;
  if (o->max_items >= 0) qo->max_items = (size_t)o->max_items;
  if (o->soft_max > 0) qo->soft_max = (size_t)o->soft_max;
}

/* Connects and makes the queue object as the options say: 0, or the exit
 * status (message printed; nothing to close). */
static int open_queue(const cli_opts_t *o, zkl_session_state_fn on_st,
                      zkl_session_t **s, zkl_queue_t **q) {
  *q = NULL;
  int rc = cli_connect(o, on_st, NULL, s);
  if (rc != 0) return rc;
  zkl_queue_opts_t qo;
  queue_opts(o, o->format, &qo);
  rc = zkl_queue_create(q, *s, o->path, &qo);
  if (rc != 0) {
    rc = failed(o, "use the queue", rc);
    cli_session_close(*s);
    *s = NULL;
  }
  return rc;
}

/* open_queue() for a call run on the CLI's loop: signals set up first,
 * and the loop told of the session.  0, or the exit status. */
static int open_queue_on_loop(const cli_opts_t *o, zkl_session_t **s,
                              zkl_queue_t **q) {
  if (cli_loop_init() != 0) {
    perror("zkl: cannot set up signals");
    return CLI_EX_SOFTWARE;
  }
  int rc = open_queue(o, on_state, s, q);
  if (rc == 0) cli_loop_connected(*s);
  return rc;
}

static void close_queue(zkl_session_t *s, zkl_queue_t *q) {
  zkl_queue_destroy(q);
  cli_session_close(s);
}

int cli_queue_list(zkl_session_t *s, const char *path, int format,
                   zkl_item_t **items, size_t *n, char *detail,
                   size_t detail_len) {
  *items = NULL;
  *n = 0;
  zkl_queue_opts_t qo;
  zkl_queue_opts_init(&qo);
  qo.format = (zkl_queue_format_t)format;
  zkl_queue_t *q = NULL;
  int rc = zkl_queue_create(&q, s, path, &qo);
  if (rc == 0) rc = zkl_queue_list(q, 0, items, n);
  /* the message before destroy can change it */
  snprintf(detail, detail_len, "%s", rc != 0 ? zkl_last_error() : "");
  zkl_queue_destroy(q);
  return rc;
}

/* ---- completions of async calls, on the loop ------------------------------------- */

/* What a put, ack or nack's completion said. */
typedef struct settled {
  int done;
  int rc;
  char detail[1024]; /* zkl_last_error() while it ran */
} settled_t;

static void on_settled(void *obj, int rc, uint64_t token, void *arg) {
  (void)obj, (void)token;
  settled_t *w = arg;
  w->rc = rc;
  snprintf(w->detail, sizeof w->detail, "%s", zkl_last_error());
  w->done = 1;
  cli_loop_post_arg(CLI_EV_SETTLED, rc); /* wakes the loop */
}

/* ---- put ------------------------------------------------------------------------ */

/* Reads all of stdin, at most max bytes: 0 with *data (malloc'ed) and
 * *len, or CLI_EX_SOFTWARE (message printed). */
static int read_stdin(const cli_opts_t *o, size_t max, char **data,
                      size_t *len) {
  char *buf = malloc(max + 1);
  if (buf == NULL) {
    fprintf(stderr, "zkl: no memory for %zu bytes of stdin\n", max + 1);
    return CLI_EX_SOFTWARE;
  }
  size_t n = 0;
  while (n <= max) { /* one byte more than max tells that there is more */
    size_t r = fread(buf + n, 1, max + 1 - n, stdin);
    n += r;
    if (r == 0) break;
  }
  if (ferror(stdin)) {
    perror("zkl: stdin");
    free(buf);
    return CLI_EX_SOFTWARE;
  }
  if (n > max && o->batch) {
    fprintf(stderr, "zkl: cannot put to %s: stdin holds more than %zu bytes, "
                    "more than a batch takes (%d bytes of items, "
                    "ZKL_QUEUE_MAX_BYTES, and their newlines): nothing put\n",
            o->path, max, ZKL_QUEUE_MAX_BYTES);
    free(buf);
    return CLI_EX_SOFTWARE;
  }
  if (n > max) {
    fprintf(stderr, "zkl: cannot put to %s: stdin holds more than %zu bytes "
                    "(ZKL_QUEUE_MAX_BYTES): nothing put\n", o->path, max);
    free(buf);
    return CLI_EX_SOFTWARE;
  }
  *data = buf;
  *len = n;
  return 0;
}

/* Splits data into lines, each without its newline (a last line without
 * one counts; empty input has none): 0 with *bufs (malloc'ed, pointing
 * into data) and *n, or CLI_EX_SOFTWARE (message printed). */
static int split_lines(const cli_opts_t *o, const char *data, size_t len,
                       zkl_buf_t **bufs, size_t *n) {
  zkl_buf_t *v = malloc(CLI_QUEUE_BATCH_MAX * sizeof *v);
  if (v == NULL) {
    fprintf(stderr, "zkl: no memory for a batch\n");
    return CLI_EX_SOFTWARE;
  }
  size_t count = 0, total = 0;
  const char *p = data, *end = data + len;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t l = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
    if (count == CLI_QUEUE_BATCH_MAX) {
      fprintf(stderr, "zkl: cannot put to %s: stdin holds more than %d "
                      "lines, a batch's limit: nothing put\n", o->path,
              CLI_QUEUE_BATCH_MAX);
      free(v);
      return CLI_EX_SOFTWARE;
    }
    v[count].data = p;
    v[count++].len = l;
    total += l;
    p += l + (nl != NULL);
  }
  if (total > ZKL_QUEUE_MAX_BYTES) {
    fprintf(stderr, "zkl: cannot put to %s: the lines of stdin come to %zu "
                    "bytes, more than a batch's %d (ZKL_QUEUE_MAX_BYTES): "
                    "nothing put\n", o->path, total, ZKL_QUEUE_MAX_BYTES);
    free(v);
    return CLI_EX_SOFTWARE;
  }
  *bufs = v;
  *n = count;
  return 0;
}

/* Puts n items on the loop: a signal cancels a put not yet sent (waiting
 * for a connection, or for room below --soft-max); one already sent is
 * waited for, since its outcome is then settled by the library.  The exit
 * status. */
static int put_items_now(const cli_opts_t *o, const zkl_buf_t *bufs,
                         size_t n) {
  zkl_session_t *s;
  zkl_queue_t *q;
  int rc = open_queue_on_loop(o, &s, &q);
  if (rc != 0) return rc;
  settled_t w;
  memset(&w, 0, sizeof w);
  rc = o->batch ? zkl_queue_put_batch_async(q, bufs, n, o->timeout_ms,
                                            on_settled, &w)
                : zkl_queue_put_async(q, bufs[0].data, bufs[0].len,
                                      o->timeout_ms, on_settled, &w);
  if (rc != 0) {
    rc = failed(o, "put to", rc);
    close_queue(s, q);
    return rc;
  }
  int stop_signal = 0;
  while (!w.done) {
    cli_event_t ev;
    if (!cli_loop_next(&ev, INT64_MAX)) continue;
    if (ev.type == CLI_EV_SIGNAL && stop_signal == 0) {
      stop_signal = ev.arg; /* the completion follows */
      zkl_queue_cancel(q);
    } else if (ev.type == CLI_EV_STATE) {
      cli_verbose(o, "session %s", cli_state_name(ev.arg));
    }
  }
  if (w.rc == 0) {
    cli_verbose(o, "put %zu item%s to %s%s", n, n == 1 ? "" : "s", o->path,
                stop_signal != 0 ? " (sent before the signal came)" : "");
    rc = 0;
  } else if (w.rc == ZKL_ECANCELED && stop_signal != 0) {
    cli_verbose(o, "%s: signal %d: nothing put", o->path, stop_signal);
    rc = CLI_EX_SIGNAL_BASE + stop_signal;
  } else if (w.rc == ZKL_EFULL) {
    failed_detail(o, "put to", w.rc, w.detail);
    rc = 1;
  } else if (w.rc == ZKL_ETIMEDOUT) { /* not connected: nothing sent */
    failed_detail(o, "put to", w.rc, w.detail);
    rc = CLI_EX_UNAVAILABLE;
  } else {
    rc = failed_detail(o, "put to", w.rc, w.detail);
  }
  close_queue(s, q);
  return rc;
}

static int put_run(const cli_opts_t *o) {
  char *input = NULL;
  size_t len = 0, n = 1;
  zkl_buf_t one, *bufs = &one;
  int rc = 0;
  /* stdin first: a payload too large fails before any request */
  if (o->data != NULL) {
    one.data = o->data;
    one.len = strlen(o->data);
  } else {
    size_t max = ZKL_QUEUE_MAX_BYTES;
    if (o->batch) max += CLI_QUEUE_BATCH_MAX; /* and the newlines */
    rc = read_stdin(o, max, &input, &len);
    if (rc == 0 && o->batch) rc = split_lines(o, input, len, &bufs, &n);
    one.data = input;
    one.len = len;
  }
  if (rc == 0 && n == 0) cli_verbose(o, "%s: no lines on stdin: nothing put",
                                     o->path);
  if (rc == 0 && n > 0) rc = put_items_now(o, bufs, n);
  if (bufs != &one) free(bufs);
  free(input);
  return rc;
}

/* ---- take: on the loop, so that a signal cancels the wait ---------------------- */

typedef struct taker {
  const cli_opts_t *o;
  int done;             /* the completion came                           */
  int rc;
  zkl_item_t *items;    /* and what it brought                           */
  size_t n;
  char detail[1024];    /* zkl_last_error() while it ran                 */
} taker_t;

/* The take's completion (on the loop, from zkl_session_dispatch()). */
static void on_taken(zkl_queue_t *q, int rc, zkl_item_t *items, size_t n,
                     void *arg) {
  (void)q;
  taker_t *t = arg;
  t->rc = rc;
  t->items = items;
  t->n = n;
  snprintf(t->detail, sizeof t->detail, "%s", zkl_last_error());
  t->done = 1;
  cli_loop_post_arg(CLI_EV_TAKEN, rc); /* wakes the loop */
}

/* The exit status of a take that ended with rc (not 0). */
static int take_failed(const taker_t *t, int stop_signal) {
  const cli_opts_t *o = t->o;
  if (t->rc == ZKL_ECANCELED && stop_signal != 0) {
    cli_verbose(o, "%s: signal %d: nothing taken", o->path, stop_signal);
    return CLI_EX_SIGNAL_BASE + stop_signal;
  }
  if (t->rc == ZKL_EEMPTY || t->rc == ZKL_ETIMEDOUT) {
    cli_verbose(o, "%s: nothing taken: %s", o->path, zkl_strerror(t->rc));
    return 1;
  }
  if (t->rc == ZKL_ELOST) {
    fprintf(stderr, "zkl: session lost while waiting for an item of %s: "
                    "nothing taken\n", o->path);
    return CLI_EX_LOST;
  }
  fprintf(stderr, "zkl: cannot take from %s: %s%s%s\n", o->path,
          zkl_strerror(t->rc), t->detail[0] ? ": " : "", t->detail);
  return cli_exit_code(t->rc);
}

static int take_run(const cli_opts_t *o) {
  zkl_session_t *s;
  zkl_queue_t *q;
  int rc = open_queue_on_loop(o, &s, &q);
  if (rc != 0) return rc;
  taker_t t;
  memset(&t, 0, sizeof t);
  t.o = o;
  size_t max = o->max > 0 ? (size_t)o->max : 1;
  rc = zkl_queue_take_async(q, max, o->timeout_ms, on_taken, &t);
  if (rc != 0) {
    rc = failed(o, "take from", rc);
    close_queue(s, q);
    return rc;
  }
  int stop_signal = 0;
  while (!t.done) {
    cli_event_t ev;
    if (!cli_loop_next(&ev, INT64_MAX)) continue;
    if (ev.type == CLI_EV_SIGNAL && stop_signal == 0) {
      stop_signal = ev.arg; /* the completion follows, ECANCELED */
      zkl_queue_cancel(q);
    } else if (ev.type == CLI_EV_STATE) {
      cli_verbose(o, "session %s", cli_state_name(ev.arg));
    }
  }
  if (t.rc == 0) {
    /* taken, even if a signal came meanwhile: the items are written, or
     * they would be lost */
    cli_verbose(o, "took %zu item%s from %s", t.n, t.n == 1 ? "" : "s",
                o->path);
    rc = put_items(o, t.items, t.n, 1);
  } else {
    rc = take_failed(&t, stop_signal);
  }
  zkl_items_free(t.items, t.n);
  close_queue(s, q);
  return rc;
}

/* ---- claim: `zkl lock` for an item ---------------------------------------------- */

/* How often the claim's health is looked at while CMD runs (no request:
 * what the session knows), besides the session's LOST event. */
#define HEALTH_EVERY_NS 200000000LL

typedef struct claimer {
  const cli_opts_t *o;
  zkl_session_t *s;
  zkl_queue_t *q;
  cli_child_t child;
  int64_t deadline_ns;  /* -t's, monotonic; INT64_MAX: none              */
  /* the claim's completion */
  int claim_done;       /* came (and the item, if any, is in items)      */
  int claim_rc;
  zkl_item_t *items;    /* items[0]: the claimed item (n 1)              */
  size_t n;
  char detail[1024];    /* zkl_last_error() while it ran                 */
  /* the run */
  int held;             /* the item is claimed by us, not yet settled    */
  int start_pending;    /* claimed; CMD waits for the connection         */
  int started;          /* CMD was started (or its start failed)         */
  int stop_signal;      /* a signal before CMD ran, 0 if none            */
  int forwarded;        /* a signal was passed on to CMD                 */
  int lost;             /* the claim (or the session, while waiting) lost */
  int done;
  int result;           /* exit status once done                         */
} claimer_t;

static void finish_claim(claimer_t *c, int result) {
  c->result = result;
  c->done = 1;
}

/* The claim's completion (on the loop, from zkl_session_dispatch()). */
static void on_claimed(zkl_queue_t *q, int rc, zkl_item_t *items, size_t n,
                       void *arg) {
  (void)q;
  claimer_t *c = arg;
  c->claim_rc = rc;
  c->items = items;
  c->n = n;
  snprintf(c->detail, sizeof c->detail, "%s", zkl_last_error());
  c->claim_done = 1;
  cli_loop_post_arg(CLI_EV_TAKEN, rc); /* wakes the loop */
}

/* Starts (again) the claim, with what is left of -t: 0, or the code. */
static int claim_start(claimer_t *c) {
  int64_t t = c->o->timeout_ms; /* <0 for ever, 0 -n */
  if (t > 0) {
    int64_t left = c->deadline_ns - cli_now_ns();
    t = left > 0 ? (left + 999999) / 1000000 : 0;
  }
  c->claim_done = 0;
  c->claim_rc = 0;
  return zkl_queue_claim_async(c->q, t, on_claimed, c);
}

/* A descriptor from which CMD reads the payload: a memory file (or an
 * unlinked temporary one) holding it, at offset 0, close-on-exec.  The
 * descriptor, or -1 (message printed). */
static int payload_fd(const zkl_item_t *it) {
  int fd = -1;
#ifdef MFD_CLOEXEC
  fd = memfd_create("zkl-item", MFD_CLOEXEC);
#endif
  if (fd < 0) {
    const char *dir = getenv("TMPDIR");
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/zkl-item.XXXXXX",
             dir != NULL && dir[0] != '\0' ? dir : "/tmp");
    fd = mkostemp(tmpl, O_CLOEXEC);
    if (fd >= 0) unlink(tmpl);
  }
  if (fd < 0) {
    perror("zkl: cannot hold the item for CMD's stdin");
    return -1;
  }
  for (size_t off = 0; off < it->len;) {
    ssize_t w = write(fd, it->data + off, it->len - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      perror("zkl: cannot hold the item for CMD's stdin");
      close(fd);
      return -1;
    }
    off += (size_t)w;
  }
  if (lseek(fd, 0, SEEK_SET) != 0) {
    perror("zkl: cannot hold the item for CMD's stdin");
    close(fd);
    return -1;
  }
  return fd;
}

static void start_claimed_cmd(claimer_t *c) {
  const zkl_item_t *it = &c->items[0];
  char path_var[1100], name_var[64], token_var[64];
  snprintf(path_var, sizeof path_var, "ZKL_QUEUE_PATH=%s", c->o->path);
  snprintf(name_var, sizeof name_var, "ZKL_ITEM_NAME=%s", it->name);
  snprintf(token_var, sizeof token_var, "ZKL_ITEM_TOKEN=%" PRIu64, it->token);
  char *env[] = {path_var, name_var, token_var, NULL};
  cli_verbose(c->o, "claimed %s/%s: token %" PRIu64 ", %zu bytes",
              c->o->path, it->name, it->token, it->len);
  c->started = 1;
  int fd = payload_fd(it);
  if (fd < 0) {
    finish_claim(c, CLI_EX_SOFTWARE);
    return;
  }
  int rc = cli_child_start_in(&c->child, c->o->cmd, env, fd);
  close(fd);
  if (rc != 0) finish_claim(c, rc);
}

/* The claim is gone (session LOST): stop CMD, or stop waiting. */
static void lose_claim(claimer_t *c, const char *why) {
  if (c->lost || c->done) return;
  c->lost = 1;
  if (c->start_pending) {
    fprintf(stderr, "zkl: claim of %s in %s lost (%s) before CMD started\n",
            c->items[0].name, c->o->path, why);
    finish_claim(c, CLI_EX_LOST);
  } else if (c->child.running) {
    fprintf(stderr, "zkl: claim of %s in %s lost (%s): stopping CMD "
                    "(pid %ld)\n", c->items[0].name, c->o->path, why,
            (long)c->child.pid);
    cli_child_stop(&c->child, c->o->grace_ms);
  } else if (!c->claim_done) {
    zkl_queue_cancel(c->q); /* the completion follows */
  }
}

/* CMD starts only on a claim that holds now: the session that made it is
 * connected and was heard from within its timeout
 * (zkl_queue_claim_health()), as `zkl lock` starts only on a valid hold. */
static void start_if_held(claimer_t *c) {
  int h = zkl_queue_claim_health(c->q, &c->items[0]);
  c->start_pending = 0;
  if (h == 0) {
    start_claimed_cmd(c);
  } else if (h == ZKL_ESUSPENDED) {
    cli_verbose(c->o, "%s: connection down: CMD waits until it is back",
                c->o->path);
    c->start_pending = 1; /* RECONNECTED starts it, LOST ends the run */
  } else {
    c->start_pending = 1;
    lose_claim(c, "session lost");
  }
}

static void on_claim_ended(claimer_t *c) {
  const cli_opts_t *o = c->o;
  int rc = c->claim_rc;
  if (rc == 0) {
    c->held = 1;
    if (c->stop_signal != 0) {
      finish_claim(c, CLI_EX_SIGNAL_BASE + c->stop_signal);
    } else if (c->lost) {
      fprintf(stderr, "zkl: claim of %s in %s lost before CMD started\n",
              c->items[0].name, o->path);
      finish_claim(c, CLI_EX_LOST);
    } else {
      start_if_held(c);
    }
    return;
  }
  if (rc == ZKL_ECANCELED && c->stop_signal != 0) {
    cli_verbose(o, "%s: signal %d: nothing claimed", o->path, c->stop_signal);
    finish_claim(c, CLI_EX_SIGNAL_BASE + c->stop_signal);
  } else if (rc == ZKL_ELOST || c->lost) {
    fprintf(stderr, "zkl: session lost while waiting for an item of %s: "
                    "nothing claimed\n", o->path);
    finish_claim(c, CLI_EX_LOST);
  } else if (rc == ZKL_EEMPTY || rc == ZKL_ETIMEDOUT) {
    cli_verbose(o, "%s: nothing claimed: %s", o->path, zkl_strerror(rc));
    finish_claim(c, 1);
  } else if (rc == ZKL_ESUSPENDED && o->timeout_ms != 0) {
    /* claimed, but the connection went down before the completion was
     * dispatched: given up by the library; claim again */
    cli_verbose(o, "%s: %s: claiming again", o->path, c->detail);
    zkl_items_free(c->items, c->n);
    c->items = NULL;
    c->n = 0;
    int src = claim_start(c);
    if (src != 0) finish_claim(c, failed(o, "claim from", src));
  } else {
    finish_claim(c, failed_detail(o, "claim from", rc, c->detail));
  }
}

static void on_claim_event(claimer_t *c, const cli_event_t *ev) {
  switch (ev->type) {
  case CLI_EV_SIGNAL:
    if (c->child.running) {
      cli_verbose(c->o, "passing signal %d on to CMD", ev->arg);
      cli_child_signal(&c->child, ev->arg);
      c->forwarded = 1;
    } else if (!c->claim_done) {
      if (c->stop_signal == 0) c->stop_signal = ev->arg;
      zkl_queue_cancel(c->q); /* the completion follows, ECANCELED */
    } else if (c->start_pending && !c->done) { /* CMD not started yet */
      c->stop_signal = ev->arg;
      finish_claim(c, CLI_EX_SIGNAL_BASE + ev->arg);
    }
    break;
  case CLI_EV_STATE:
    cli_verbose(c->o, "session %s", cli_state_name(ev->arg));
    if (ev->arg == ZKL_SESSION_LOST) lose_claim(c, "session lost");
    else if (c->start_pending && !c->done) start_if_held(c);
    break;
  case CLI_EV_TAKEN:
    if (c->claim_done && !c->done) on_claim_ended(c);
    break;
  case CLI_EV_CHILD:
    if (cli_child_reap(&c->child))
      finish_claim(c, c->lost ? CLI_EX_LOST : c->child.code);
    break;
  default:
    break;
  }
}

static void claim_loop(claimer_t *c) {
  int64_t next_check = cli_now_ns() + HEALTH_EVERY_NS;
  while (!c->done) {
    int64_t until = c->child.kill_at;
    int watching = c->held && !c->lost;
    if (watching && next_check < until) until = next_check;
    cli_event_t ev;
    if (cli_loop_next(&ev, until)) on_claim_event(c, &ev);
    cli_child_tick(&c->child);
    if (watching && !c->done && cli_now_ns() >= next_check) {
      next_check = cli_now_ns() + HEALTH_EVERY_NS;
      if (zkl_queue_claim_health(c->q, &c->items[0]) == ZKL_ELOST)
        lose_claim(c, "session lost");
    }
  }
}

/* Runs the loop until an ack's or nack's completion came. */
static void settle_wait(settled_t *w) {
  while (!w->done) {
    cli_event_t ev;
    cli_loop_next(&ev, INT64_MAX); /* signals: nothing left to stop */
  }
}

/* The run ended with the item still claimed by us: acked if CMD ran and
 * exited 0 undisturbed, else given back.  The exit status. */
static int settle_claim(claimer_t *c) {
  const cli_opts_t *o = c->o;
  const zkl_item_t *it = &c->items[0];
  settled_t w;
  memset(&w, 0, sizeof w);
  int ack = c->started && !c->child.running && c->child.pid != 0 &&
            c->result == 0 && !c->forwarded;
  int where = o->nack_tail ? ZKL_QUEUE_TAIL : ZKL_QUEUE_HEAD;
  int rc = ack ? zkl_queue_ack_async(c->q, it, on_settled, &w)
               : zkl_queue_nack_async(c->q, it, where, on_settled, &w);
  if (rc == 0) {
    settle_wait(&w);
  } else {
    w.rc = rc;
    snprintf(w.detail, sizeof w.detail, "%s", zkl_last_error());
  }
  if (ack) {
    if (w.rc == 0) {
      cli_verbose(o, "acked %s/%s", o->path, it->name);
      return 0;
    }
    if (w.rc == ZKL_ELOST) { /* the detail tells when it may be acked */
      fprintf(stderr, "zkl: claim of %s in %s lost before CMD's success "
                      "was acked%s%s%s: another consumer may do its work "
                      "again\n", it->name, o->path, w.detail[0] ? " (" : "",
              w.detail, w.detail[0] ? ")" : "");
      return CLI_EX_LOST;
    }
    if (w.rc == ZKL_ENOENT) { /* done, and gone: nothing to do twice */
      fprintf(stderr, "zkl: warning: %s was removed from %s by someone else "
                      "while CMD ran\n", it->name, o->path);
      return 0;
    }
    fprintf(stderr, "zkl: cannot ack %s in %s: %s%s%s: another consumer may "
                    "do its work again\n", it->name, o->path,
            zkl_strerror(w.rc), w.detail[0] ? ": " : "", w.detail);
    return cli_exit_code(w.rc);
  }
  if (w.rc == 0)
    cli_verbose(o, "gave %s/%s back, to the %s", o->path, it->name,
                where == ZKL_QUEUE_TAIL ? "tail" : "head");
  else if (w.rc == ZKL_ELOST)
    cli_verbose(o, "claim of %s/%s lost: claimable again anyway", o->path,
                it->name);
  else if (w.rc != ZKL_ENOENT)
    fprintf(stderr, "zkl: warning: cannot give %s back to %s: %s%s%s (it is "
                    "claimable again once this session ends)\n", it->name,
            o->path, zkl_strerror(w.rc), w.detail[0] ? ": " : "", w.detail);
  return c->result;
}

static int claim_run(const cli_opts_t *o) {
  claimer_t c;
  memset(&c, 0, sizeof c);
  c.o = o;
  c.child.kill_at = INT64_MAX;
  c.deadline_ns = o->timeout_ms > 0 ? cli_now_ns() + o->timeout_ms * 1000000
                                    : INT64_MAX;
  int rc = open_queue_on_loop(o, &c.s, &c.q);
  if (rc != 0) return rc;
  rc = claim_start(&c);
  if (rc != 0) {
    rc = failed(o, "claim from", rc);
    close_queue(c.s, c.q);
    return rc;
  }
  claim_loop(&c);
  if (!c.claim_done) { /* cannot happen: the run ends after the claim */
    zkl_queue_cancel(c.q);
    while (!c.claim_done) {
      cli_event_t ev;
      cli_loop_next(&ev, INT64_MAX);
    }
    c.held = c.claim_rc == 0;
  }
  rc = c.result;
  if (c.held && !c.lost) rc = settle_claim(&c);
  zkl_items_free(c.items, c.n);
  close_queue(c.s, c.q);
  return rc;
}

/* ---- peek, size, rm --------------------------------------------------------------- */

static int peek_run(const cli_opts_t *o) {
  zkl_session_t *s;
  zkl_queue_t *q;
  int rc = open_queue(o, NULL, &s, &q);
  if (rc != 0) return rc;
  zkl_item_t item;
  rc = zkl_queue_peek(q, &item);
  int got = rc == 0;
  if (rc == ZKL_EEMPTY) {
    cli_verbose(o, "%s is empty", o->path);
    rc = 1;
  } else if (rc != 0) {
    rc = failed(o, "peek at", rc);
  }
  close_queue(s, q);
  if (got) {
    rc = put_items(o, &item, 1, 0);
    zkl_item_free(&item);
  }
  return rc;
}

static int size_run(const cli_opts_t *o) {
  zkl_session_t *s;
  zkl_queue_t *q;
  int rc = open_queue(o, NULL, &s, &q);
  if (rc != 0) return rc;
  size_t n = 0;
  rc = zkl_queue_size(q, &n);
  if (rc != 0) rc = failed(o, "count the items of", rc);
  close_queue(s, q);
  if (rc != 0) return rc;
  printf("%zu\n", n);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    perror("zkl: stdout");
    return CLI_EX_SOFTWARE;
  }
  return 0;
}

static int rm_run(const cli_opts_t *o) {
  zkl_session_t *s;
  zkl_queue_t *q;
  int rc = open_queue(o, NULL, &s, &q);
  if (rc != 0) return rc;
  rc = zkl_queue_remove(q, o->name);
  if (rc == 0) {
    cli_verbose(o, "removed %s/%s", o->path, o->name);
  } else if (rc == ZKL_ENOENT) {
    fprintf(stderr, "zkl: %s has no item %s\n", o->path, o->name);
    rc = 1;
  } else if (rc == ZKL_EINVAL) { /* NAME is no item of the format */
    fprintf(stderr, "zkl queue rm: '%s' is not the name of a %s item: %s "
                    "(try 'zkl queue --help')\n", o->name,
            cli_format_name(o->format), zkl_last_error());
    rc = CLI_EX_USAGE;
  } else {
    rc = failed(o, "remove an item of", rc);
  }
  close_queue(s, q);
  return rc;
}

/* ---- ls ------------------------------------------------------------------------------ */

static void ls_table(const zkl_item_t *v, size_t n) {
  if (n == 0) {
    puts("no items");
    return;
  }
  int w = (int)strlen("NAME");
  for (size_t i = 0; i < n; i++) {
    int nl = (int)strlen(v[i].name);
    if (nl > w) w = nl;
  }
  printf("%-5s %-12s %-7s %-7s %-*s %s\n", "POS", "TOKEN", "LEN", "CLAIMED",
         w, "NAME", "DATA");
  for (size_t i = 0; i < n; i++) {
    const zkl_item_t *e = &v[i];
    printf("%-5zu %-12" PRIu64 " %-7zu %-7s %-*s ", i + 1, e->token, e->len,
           e->claimed ? "yes" : "no", w, e->name);
    if (e->data == NULL) fputs("(unreadable: its ACL refuses us)", stdout);
    cli_put_escaped(stdout, e->data, e->len < PREVIEW ? e->len : PREVIEW);
    if (e->len > PREVIEW) fputs("...", stdout);
    putchar('\n');
  }
}

static void ls_json(const zkl_item_t *v, size_t n) {
  fputs("[", stdout);
  for (size_t i = 0; i < n; i++) {
    const zkl_item_t *e = &v[i];
    printf("%s\n  {\"position\": %zu, \"name\": ", i == 0 ? "" : ",", i + 1);
    cli_put_json_string(stdout, e->name);
    printf(", \"token\": %" PRIu64 ", \"len\": %zu, \"claimed\": %s, "
           "\"data\": ", e->token, e->len, e->claimed ? "true" : "false");
    if (e->data == NULL) fputs("null", stdout); /* unreadable: its ACL */
    else cli_put_json_escaped(stdout, e->data, e->len);
    fputs("}", stdout);
  }
  fputs(n > 0 ? "\n]\n" : "]\n", stdout);
}

static int ls_run(const cli_opts_t *o) {
  zkl_session_t *s = NULL;
  int rc = cli_connect(o, NULL, NULL, &s);
  if (rc != 0) return rc;
  zkl_item_t *v = NULL;
  size_t n = 0;
  char detail[1024];
  rc = cli_queue_list(s, o->path, o->format, &v, &n, detail, sizeof detail);
  if (rc != 0) {
    cli_session_close(s);
    fprintf(stderr, "zkl: cannot list the %s items of %s: %s%s%s\n",
            cli_format_name(o->format), o->path, zkl_strerror(rc),
            detail[0] ? ": " : "", detail);
    return cli_exit_code(rc);
  }
  if (o->json) ls_json(v, n);
  else ls_table(v, n);
  zkl_items_free(v, n);
  /* none of this format: say where items of another one are */
  static const int formats[] = {ZKL_QUEUE_QN, ZKL_QUEUE_KAZOO,
                                ZKL_QUEUE_LOCKING};
  for (size_t f = 0; n == 0 && f < sizeof formats / sizeof formats[0]; f++) {
    if (formats[f] == o->format) continue;
    zkl_item_t *ov = NULL;
    size_t on = 0;
    if (cli_queue_list(s, o->path, formats[f], &ov, &on, detail,
                       sizeof detail) == 0 && on > 0)
      fprintf(stderr, "zkl: %s holds %zu item%s of the %s format "
                      "(--format %s)\n", o->path, on, on == 1 ? "" : "s",
              cli_format_name(formats[f]), cli_format_name(formats[f]));
    zkl_items_free(ov, on);
  }
  cli_session_close(s);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    perror("zkl: stdout");
    return CLI_EX_SOFTWARE;
  }
  return 0;
}

int cli_queue_run(const cli_opts_t *o) {
  switch (o->queue_op) {
  case CLI_QUEUE_PUT: return put_run(o);
  case CLI_QUEUE_TAKE: return take_run(o);
  case CLI_QUEUE_PEEK: return peek_run(o);
  case CLI_QUEUE_SIZE: return size_run(o);
  case CLI_QUEUE_LS: return ls_run(o);
  case CLI_QUEUE_RM: return rm_run(o);
  case CLI_QUEUE_CLAIM: return claim_run(o);
  case CLI_QUEUE_NONE: break;
  }
  return CLI_EX_SOFTWARE;
}
