/* cli/queue.c - `zkl queue put|take|peek|size|ls|rm PATH ...`: the
 * distributed queue of zkl_queue(3), for shell scripts.
 *
 * put, peek, size and rm are one blocking call each.  take waits on the
 * main thread's loop (cli/loop.h) through the async take, so that SIGINT,
 * SIGTERM or SIGHUP cancel it (zkl_queue_cancel()): zkl then exits 128+N
 * with nothing taken and its place in the consumers' line given up.
 *
 * ls: the library has no public call that lists a queue's items, so the
 * children are read with zkl_contenders() (name, czxid and data of each)
 * and put in queue order by the library's rule, restated in cli/items.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "items.h"
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
static int failed(const cli_opts_t *o, const char *what, int rc) {
  const char *detail = zkl_last_error();
  fprintf(stderr, "zkl: cannot %s %s: %s%s%s\n", what, o->path,
          zkl_strerror(rc), detail[0] ? ": " : "", detail);
  return cli_exit_code(rc);
}

/* ---- the session and the queue object ------------------------------------------ */

static void on_state(zkl_session_t *s, zkl_session_state_t state, void *arg) {
  (void)s, (void)arg;
  cli_loop_post_arg(CLI_EV_STATE, (int)state);
}

/* Connects and makes the queue object as the options say: 0, or the exit
 * status (message printed; nothing to close). */
static int open_queue(const cli_opts_t *o, zkl_session_state_fn on_st,
                      zkl_session_t **s, zkl_queue_t **q) {
  *q = NULL;
  int rc = cli_connect(o, on_st, NULL, s);
  if (rc != 0) return rc;
  zkl_queue_opts_t qo;
  zkl_queue_opts_init(&qo);
  qo.format = (zkl_queue_format_t)o->format;
  if (o->priority >= 0) qo.priority = o->priority;
  if (o->max_items >= 0) qo.max_items = (size_t)o->max_items;
  rc = zkl_queue_create(q, *s, o->path, &qo);
  if (rc != 0) {
    rc = failed(o, "use the queue", rc);
    zkl_session_close(*s);
    *s = NULL;
  }
  return rc;
}

static void close_queue(zkl_session_t *s, zkl_queue_t *q) {
  zkl_queue_destroy(q);
  zkl_session_close(s);
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
  zkl_session_t *s = NULL;
  zkl_queue_t *q = NULL;
  if (rc == 0 && n > 0) rc = open_queue(o, NULL, &s, &q);
  if (rc == 0 && n > 0) {
    rc = o->batch ? zkl_queue_put_batch(q, bufs, n, o->timeout_ms)
                  : zkl_queue_put(q, bufs[0].data, bufs[0].len, o->timeout_ms);
    if (rc == 0) {
      cli_verbose(o, "put %zu item%s to %s", n, n == 1 ? "" : "s", o->path);
    } else if (rc == ZKL_EFULL) {
      failed(o, "put to", rc);
      rc = 1;
    } else if (rc == ZKL_ETIMEDOUT) { /* not connected in time: not sent */
      failed(o, "put to", rc);
      rc = CLI_EX_UNAVAILABLE;
    } else {
      rc = failed(o, "put to", rc);
    }
    close_queue(s, q);
  }
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
  if (cli_loop_init() != 0) {
    perror("zkl: cannot set up signals");
    return CLI_EX_SOFTWARE;
  }
  zkl_session_t *s;
  zkl_queue_t *q;
  int rc = open_queue(o, on_state, &s, &q);
  if (rc != 0) return rc;
  cli_loop_connected(s);
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
  } else {
    rc = failed(o, "remove an item of", rc);
  }
  close_queue(s, q);
  return rc;
}

/* ---- ls ------------------------------------------------------------------------------ */

/* The children of v that are items of format, in queue order (keys'
 * index: into v): 0 with *out (malloc'ed) and *n, or -1 (no memory). */
static int items_of(const zkl_contender_t *v, size_t count, int format,
                    cli_item_key_t **out, size_t *n) {
  cli_item_key_t *k = malloc((count > 0 ? count : 1) * sizeof *k);
  if (k == NULL) return -1;
  size_t m = 0;
  for (size_t i = 0; i < count; i++)
    if (cli_item_parse(format, v[i].name, &k[m]) == 0) k[m++].index = i;
  cli_items_sort(k, m);
  *out = k;
  *n = m;
  return 0;
}

static void ls_table(const zkl_contender_t *v, const cli_item_key_t *k,
                     size_t n) {
  if (n == 0) {
    puts("no items");
    return;
  }
  int w = (int)strlen("NAME");
  for (size_t i = 0; i < n; i++) {
    int nl = (int)strlen(k[i].name);
    if (nl > w) w = nl;
  }
  printf("%-5s %-12s %-7s %-*s %s\n", "POS", "TOKEN", "LEN", w, "NAME",
         "DATA");
  for (size_t i = 0; i < n; i++) {
    const zkl_contender_t *e = &v[k[i].index];
    char len[24];
    if (e->data != NULL) snprintf(len, sizeof len, "%zu", e->data_len);
    else snprintf(len, sizeof len, "-"); /* its ACL hides it */
    printf("%-5zu %-12" PRIu64 " %-7s %-*s ", i + 1, e->token, len, w,
           e->name);
    if (e->data != NULL) {
      cli_put_escaped(stdout, e->data,
                      e->data_len < PREVIEW ? e->data_len : PREVIEW);
      if (e->data_len > PREVIEW) fputs("...", stdout);
    }
    putchar('\n');
  }
}

static void ls_json(const zkl_contender_t *v, const cli_item_key_t *k,
                    size_t n) {
  fputs("[", stdout);
  for (size_t i = 0; i < n; i++) {
    const zkl_contender_t *e = &v[k[i].index];
    printf("%s\n  {\"position\": %zu, \"name\": ", i == 0 ? "" : ",", i + 1);
    cli_put_json_string(stdout, e->name);
    printf(", \"token\": %" PRIu64 ", ", e->token);
    if (e->data != NULL) {
      printf("\"len\": %zu, \"data\": ", e->data_len);
      cli_put_json_escaped(stdout, e->data, e->data_len);
    } else {
      fputs("\"len\": null, \"data\": null", stdout);
    }
    fputs("}", stdout);
  }
  fputs(n > 0 ? "\n]\n" : "]\n", stdout);
}

static int ls_run(const cli_opts_t *o) {
  zkl_session_t *s = NULL;
  int rc = cli_connect(o, NULL, NULL, &s);
  if (rc != 0) return rc;
  zkl_contender_t *v = NULL;
  size_t count = 0;
  rc = zkl_contenders(s, o->path, -1, &v, &count);
  zkl_session_close(s);
  if (rc != 0) {
    fprintf(stderr, "zkl: cannot list %s: %s\n", o->path, zkl_last_error());
    return cli_exit_code(rc);
  }
  cli_item_key_t *k = NULL;
  size_t n = 0;
  if (items_of(v, count, o->format, &k, &n) != 0) {
    fprintf(stderr, "zkl: no memory for a listing of %s\n", o->path);
    zkl_contenders_free(v, count);
    return CLI_EX_SOFTWARE;
  }
  if (o->json) ls_json(v, k, n);
  else ls_table(v, k, n);
  if (n == 0) { /* items of the other format: say where they are */
    int other = o->format == ZKL_QUEUE_QN ? ZKL_QUEUE_KAZOO : ZKL_QUEUE_QN;
    cli_item_key_t *ko = NULL;
    size_t no = 0;
    if (items_of(v, count, other, &ko, &no) == 0 && no > 0)
      fprintf(stderr, "zkl: %s holds %zu item%s of the %s format "
                      "(--format %s)\n", o->path, no, no == 1 ? "" : "s",
              cli_format_name(other), cli_format_name(other));
    free(ko);
  }
  free(k);
  zkl_contenders_free(v, count);
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
  case CLI_QUEUE_NONE: break;
  }
  return CLI_EX_SOFTWARE;
}
