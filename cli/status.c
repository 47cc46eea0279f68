/* cli/status.c - `zkl status PATH`: the contenders at PATH in queue order,
 * as a table or as JSON, from the library's zkl_contenders(); and, when
 * PATH holds a queue, its number of items and its head item per format
 * instead of a row per item.
 *
 * Which children are a queue's items is the library's to say: for each
 * format that may be there (qn and kazoo when PATH has children that are
 * no contenders; kazoo's LockingQueue when PATH has the children
 * `entries` and `taken`), a queue object of that format lists them
 * (zkl_queue_list(), through cli_queue_list()), and the children it
 * names are left out of the contenders' table.  The listings are read
 * one after the other: an item put or taken meanwhile may show as a
 * foreign child, or be missing.
 *
 * With --watch, the listing is read again each time a children watch on
 * PATH fires (set through the session's handle, zkl_session_zhandle(),
 * again after each event and after a lost session), and drawn again every
 * second for the WAITED column; on a terminal in place, else one snapshot
 * (or, --json, one JSON array on a line) per change.
 *
 * With --counter, PATH is read as a counter instead (cli/counter.c); with
 * --barrier, as a barrier (cli/barrier.c); with --sem, as a semaphore
 * (cli/sem.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include "cli.h"
#include "loop.h"
#include "statsfile.h"
#include "text.h"

#define DATA_SHOWN 1024 /* bytes of a node's data shown at most */

static size_t shown_len(size_t len) {
  return len < DATA_SHOWN ? len : DATA_SHOWN;
}

/* The queue of one format at PATH. */
typedef struct queue_view {
  int format;
  int present;            /* shown: it has items (LockingQueue: its
                             layout is there, items or not)             */
  zkl_item_t *items;      /* in queue order                             */
  size_t n;
  size_t claimed;         /* of them, claimed (LockingQueue)            */
  const zkl_item_t *head; /* the first unclaimed item, what a take or
                             claim gets next; NULL if none              */
} queue_view_t;

static const int formats[] = {ZKL_QUEUE_QN, ZKL_QUEUE_KAZOO,
                              ZKL_QUEUE_LOCKING};
#define N_FORMATS (sizeof formats / sizeof formats[0])

/* The children of kazoo's LockingQueue (and zkl's ZKL_QUEUE_LOCKING). */
#define LOCKING_ITEMS "entries"
#define LOCKING_CLAIMS "taken"

static int has_child(const zkl_contender_t *v, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(v[i].name, name) == 0) return 1;
  return 0;
}

static int str_cmp(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Lists the queues at path that the children v suggest.  A queue that
 * cannot be listed (an item this session may not read fails the whole
 * listing) is left out with a warning: its children are then shown as
 * they are, foreign ones. */
static void read_queues(zkl_session_t *s, const char *path,
                        const zkl_contender_t *v, size_t n,
                        queue_view_t *views) {
  int foreign = 0;
  for (size_t i = 0; i < n; i++) foreign |= v[i].kind == ZKL_KIND_FOREIGN;
  int locking = has_child(v, n, LOCKING_ITEMS) &&
                has_child(v, n, LOCKING_CLAIMS);
  for (size_t f = 0; f < N_FORMATS; f++) { /* all clean before a failure */
    memset(&views[f], 0, sizeof views[f]);
    views[f].format = formats[f];
  }
  for (size_t f = 0; f < N_FORMATS; f++) {
    queue_view_t *q = &views[f];
    /* items are never contenders: no foreign child, no item */
    int look = formats[f] == ZKL_QUEUE_LOCKING ? locking : foreign;
    if (!look) continue;
    char detail[1024];
    int rc = cli_queue_list(s, path, formats[f], &q->items, &q->n, detail,
                            sizeof detail);
    if (rc != 0) {
      fprintf(stderr, "zkl: warning: cannot list the %s items of %s: %s%s%s "
                      "(shown as children)\n", cli_format_name(formats[f]),
              path, zkl_strerror(rc), detail[0] ? ": " : "", detail);
      continue;
    }
    q->present = q->n > 0 || formats[f] == ZKL_QUEUE_LOCKING;
    for (size_t i = 0; i < q->n; i++) {
      if (q->items[i].claimed) q->claimed++;
      else if (q->head == NULL) q->head = &q->items[i];
    }
  }
}

/* v without the children that are the queues' items (or their layout):
 * into rest (*m), in v's order.  0, or -1 (no memory). */
static int without_queues(const zkl_contender_t *v, size_t n,
                          const queue_view_t *views, zkl_contender_t *rest,
                          size_t *m) {
  size_t total = 0;
  for (size_t f = 0; f < N_FORMATS; f++)
    if (views[f].format != ZKL_QUEUE_LOCKING) total += views[f].n;
  const char **names = malloc((total > 0 ? total : 1) * sizeof *names);
  if (names == NULL) return -1;
  size_t k = 0;
  for (size_t f = 0; f < N_FORMATS; f++) /* the items under PATH itself */
    if (views[f].format != ZKL_QUEUE_LOCKING)
      for (size_t i = 0; i < views[f].n; i++)
        names[k++] = views[f].items[i].name;
  qsort(names, k, sizeof *names, str_cmp);
  int locking = 0;
  for (size_t f = 0; f < N_FORMATS; f++)
    locking |= views[f].format == ZKL_QUEUE_LOCKING && views[f].present;
  *m = 0;
  for (size_t i = 0; i < n; i++) {
    const char *name = v[i].name;
    if (v[i].kind == ZKL_KIND_FOREIGN) {
      if (k > 0 && bsearch(&name, names, k, sizeof *names, str_cmp) != NULL)
        continue;
      if (locking && (strcmp(name, LOCKING_ITEMS) == 0 ||
                      strcmp(name, LOCKING_CLAIMS) == 0))
        continue;
    }
    rest[(*m)++] = v[i];
  }
  free(names);
  return 0;
}

/* "1.5s", "12m03s", "3h07m": how long since ctime_ms (now_ms: the wall
 * clock), for a person; "-" before it (clocks apart). */
static const char *waited(char *buf, size_t len, int64_t ctime_ms,
                          int64_t now_ms) {
  int64_t ms = now_ms - ctime_ms;
  if (ms < 0) ms = 0;
  int64_t s = ms / 1000;
  if (s < 60) snprintf(buf, len, "%" PRId64 ".%" PRId64 "s", s, ms % 1000 / 100);
  else if (s < 3600) snprintf(buf, len, "%" PRId64 "m%02" PRId64 "s", s / 60, s % 60);
  else snprintf(buf, len, "%" PRId64 "h%02" PRId64 "m", s / 3600, s / 60 % 60);
  return buf;
}

/* now_ms > 0: with a WAITED column, how long each node has been there. */
static void print_table(const zkl_contender_t *v, size_t n, int64_t now_ms) {
  int w = (int)strlen("NODE");
  for (size_t i = 0; i < n; i++) {
    int nl = (int)strlen(v[i].name);
    if (nl > w) w = nl;
  }
  printf("%-3s %-8s %-5s ", "POS", "KIND", "HOLDS");
  if (now_ms > 0) printf("%-8s ", "WAITED");
  printf("%-12s %-18s %-*s %s\n", "TOKEN", "SESSION", w, "NODE", "OWNER");
  for (size_t i = 0; i < n; i++) {
    const zkl_contender_t *e = &v[i];
    char pos[16], session[24], since[24];
    if (e->position > 0) snprintf(pos, sizeof pos, "%d", e->position);
    else snprintf(pos, sizeof pos, "-");
    snprintf(session, sizeof session, "0x%" PRIx64, (uint64_t)e->session);
    printf("%-3s %-8s %-5s ", pos, zkl_kind_name(e->kind),
           e->holds ? "yes" : "no");
    if (now_ms > 0)
      printf("%-8s ", waited(since, sizeof since, e->ctime_ms, now_ms));
    printf("%-12" PRIu64 " %-18s %-*s ", e->token, session, w, e->name);
    cli_put_escaped(stdout, e->data, shown_len(e->data_len));
    putchar('\n');
  }
}

/* A line per queue shown: QUEUE ITEMS CLAIMED HEAD TOKEN LEN DATA ("-"
 * for a head when every item is claimed, or there is none). */
static void print_queues(const queue_view_t *views) {
  int w = (int)strlen("HEAD");
  for (size_t f = 0; f < N_FORMATS; f++) {
    if (!views[f].present || views[f].head == NULL) continue;
    int nl = (int)strlen(views[f].head->name);
    if (nl > w) w = nl;
  }
  printf("%-7s %-7s %-7s %-*s %-12s %-7s %s\n", "QUEUE", "ITEMS", "CLAIMED",
         w, "HEAD", "TOKEN", "LEN", "DATA");
  for (size_t f = 0; f < N_FORMATS; f++) {
    const queue_view_t *q = &views[f];
    if (!q->present) continue;
    printf("%-7s %-7zu %-7zu ", cli_format_name(q->format), q->n,
           q->claimed);
    if (q->head == NULL) {
      printf("%-*s %-12s %-7s\n", w, "-", "-", "-");
      continue;
    }
    printf("%-*s %-12" PRIu64 " %-7zu ", w, q->head->name, q->head->token,
           q->head->len);
    if (q->head->data == NULL) fputs("(unreadable: its ACL refuses us)", stdout);
    cli_put_escaped(stdout, q->head->data, shown_len(q->head->len));
    putchar('\n');
  }
}

/* line: all on one line (--watch), with each contender's ctime_ms. */
static void print_json(const zkl_contender_t *v, size_t n,
                       const queue_view_t *views, int line) {
  size_t k = 0; /* elements written */
  const char *first = line ? "{" : "\n  {", *next = line ? ", {" : ",\n  {";
  fputs("[", stdout);
  for (size_t i = 0; i < n; i++, k++) {
    const zkl_contender_t *e = &v[i];
    fputs(k == 0 ? first : next, stdout);
    if (e->position > 0) printf("\"position\": %d", e->position);
    else fputs("\"position\": null", stdout);
    printf(", \"kind\": \"%s\", \"holds\": %s, \"node\": ",
           zkl_kind_name(e->kind), e->holds ? "true" : "false");
    cli_put_json_string(stdout, e->name);
    fputs(", \"owner\": ", stdout);
    cli_put_json_escaped(stdout, e->data, shown_len(e->data_len));
    printf(", \"session\": \"0x%" PRIx64 "\", \"token\": %" PRIu64,
           (uint64_t)e->session, e->token);
    if (line) printf(", \"ctime_ms\": %" PRId64, e->ctime_ms);
    fputs("}", stdout);
  }
  /* a queue: the members of a contender, filled from its head item (null
   * when there is none), and its own */
  for (size_t f = 0; f < N_FORMATS; f++) {
    const queue_view_t *q = &views[f];
    if (!q->present) continue;
    fputs(k++ == 0 ? first : next, stdout);
    fputs("\"position\": null, \"kind\": \"queue\", \"holds\": false, "
          "\"node\": ", stdout);
    if (q->head != NULL) {
      cli_put_json_string(stdout, q->head->name);
      fputs(", \"owner\": ", stdout);
      if (q->head->data == NULL) fputs("null", stdout); /* unreadable */
      else cli_put_json_escaped(stdout, q->head->data, shown_len(q->head->len));
      printf(", \"session\": \"0x0\", \"token\": %" PRIu64, q->head->token);
    } else {
      fputs("null, \"owner\": null, \"session\": \"0x0\", \"token\": null",
            stdout);
    }
    printf(", \"format\": \"%s\", \"items\": %zu, \"claimed\": %zu, "
           "\"len\": ", cli_format_name(q->format), q->n, q->claimed);
    if (q->head != NULL) printf("%zu}", q->head->len);
    else fputs("null}", stdout);
  }
  fputs(k > 0 && !line ? "\n]\n" : "]\n", stdout);
}

static void free_views(queue_view_t *views) {
  for (size_t f = 0; f < N_FORMATS; f++) {
    zkl_items_free(views[f].items, views[f].n);
    views[f].items = NULL;
    views[f].n = 0;
  }
}

/* One look at PATH: its contenders less a queue's items, and the queues. */
typedef struct snapshot {
  zkl_contender_t *v, *rest;
  size_t n, m;
  queue_view_t views[N_FORMATS];
  int queues;
} snapshot_t;

static void snapshot_free(snapshot_t *sn) {
  free(sn->rest);
  free_views(sn->views);
  zkl_contenders_free(sn->v, sn->n);
  memset(sn, 0, sizeof *sn);
}

/* 0, or the zkl code of the listing (a message printed unless quiet), or
 * ZKL_ENOMEM. */
static int snapshot_take(zkl_session_t *s, const cli_opts_t *o, int quiet,
                         snapshot_t *sn) {
  memset(sn, 0, sizeof *sn);
  int rc = zkl_contenders(s, o->path, -1, &sn->v, &sn->n);
  if (rc != 0) {
    if (!quiet)
      fprintf(stderr, "zkl: cannot list %s: %s\n", o->path, zkl_last_error());
    return rc;
  }
  read_queues(s, o->path, sn->v, sn->n, sn->views);
  sn->rest = malloc((sn->n > 0 ? sn->n : 1) * sizeof *sn->rest);
  if (sn->rest == NULL ||
      without_queues(sn->v, sn->n, sn->views, sn->rest, &sn->m) != 0) {
    fprintf(stderr, "zkl: no memory for a listing of %s\n", o->path);
    snapshot_free(sn);
    return ZKL_ENOMEM;
  }
  for (size_t f = 0; f < N_FORMATS; f++) sn->queues |= sn->views[f].present;
  return 0;
}

/* now_ms > 0: the watch's form (WAITED column; JSON on one line). */
static void snapshot_print(const snapshot_t *sn, const cli_opts_t *o,
                           int64_t now_ms) {
  if (o->json) {
    print_json(sn->rest, sn->m, sn->views, now_ms > 0);
  } else if (sn->m == 0 && !sn->queues) {
    puts("no contenders");
  } else {
    if (sn->m > 0) print_table(sn->rest, sn->m, now_ms);
    if (sn->m > 0 && sn->queues) putchar('\n');
    if (sn->queues) print_queues(sn->views);
  }
}

static int flush_stdout(void) {
  if (fflush(stdout) != 0 || ferror(stdout)) {
    perror("zkl: stdout");
    return CLI_EX_SOFTWARE;
  }
  return 0;
}

/* ---- --watch ---------------------------------------------------------------- */

static int64_t wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ZooKeeper's thread: PATH's children changed (or the watch ended with
 * the connection): the main loop looks again. */
static void children_changed(zhandle_t *zh, int type, int state,
                             const char *path, void *ctx) {
  (void)zh, (void)state, (void)path, (void)ctx;
  if (type != ZOO_SESSION_EVENT) cli_loop_post_arg(CLI_EV_CHANGED, type);
}

/* Sets the watch on PATH's children (whether PATH exists or not: an exists
 * watch then, which fires when it is made).  1 if set. */
static int arm_watch(zkl_session_t *s, const char *path) {
  zhandle_t *zh = zkl_session_zhandle(s);
  if (zh == NULL) return 0;
  struct String_vector kids = {0, NULL};
  int zrc = zoo_wget_children(zh, path, children_changed, NULL, &kids);
  deallocate_String_vector(&kids);
  if (zrc == ZNONODE)
    zrc = zoo_wexists(zh, path, children_changed, NULL, NULL) == ZNONODE
              ? ZOK
              : ZCONNECTIONLOSS; /* made meanwhile: look again */
  return zrc == ZOK;
}

/* The whole screen again (terminal), or a snapshot after the last. */
static void draw(const snapshot_t *sn, const cli_opts_t *o, int tty,
                 int64_t now_ms, const char *note) {
  if (tty && !o->json) {
    time_t t = (time_t)(now_ms / 1000);
    struct tm tm;
    char at[32];
    localtime_r(&t, &tm);
    strftime(at, sizeof at, "%H:%M:%S", &tm);
    printf("\033[H\033[2J%s  %s  (zkl status --watch; ^C ends)%s%s\n\n",
           o->path, at, note[0] ? "  " : "", note);
  } else if (!o->json && note[0]) {
    printf("(%s)\n", note);
  }
  snapshot_print(sn, o, now_ms);
  if (!tty && !o->json) putchar('\n');
}

static int status_watch(zkl_session_t *s, const cli_opts_t *o) {
  int tty = isatty(STDOUT_FILENO);
  int64_t end = o->timeout_ms >= 0 ? cli_now_ns() + o->timeout_ms * 1000000
                                   : INT64_MAX;
  snapshot_t sn;
  memset(&sn, 0, sizeof sn);
  int stale = 1, armed = 0, rc = 0;
  char note[96] = "";
  for (;;) {
    if (stale) { /* the watch first: a change after the look fires it */
      armed = arm_watch(s, o->path);
      snapshot_t next;
      int lrc = armed ? snapshot_take(s, o, 1, &next) : ZKL_ESUSPENDED;
      if (lrc == 0) {
        snapshot_free(&sn);
        sn = next;
        stale = 0;
        note[0] = '\0';
      } else {
        snprintf(note, sizeof note, "cannot look: %s; trying again",
                 zkl_strerror(lrc));
        armed = 0;
      }
      /* a change redraws; the clock alone only on a terminal */
      if (lrc == 0 || tty) draw(&sn, o, tty, wall_ms(), note);
      if ((rc = flush_stdout()) != 0) break;
    }
    int64_t next = cli_now_ns() + 1000000000LL;
    if (next > end) next = end;
    cli_event_t ev;
    if (!cli_loop_next(&ev, next)) {
      if (cli_now_ns() >= end) break;
      if (!armed) stale = 1; /* not connected: try again each second */
      else if (tty) {
        draw(&sn, o, tty, wall_ms(), note);
        if ((rc = flush_stdout()) != 0) break;
      }
      continue;
    }
    if (ev.type == CLI_EV_SIGNAL) break;
    if (ev.type == CLI_EV_CHANGED) stale = 1;
    if (ev.type == CLI_EV_STATE && ev.arg == ZKL_SESSION_CONNECTED) stale = 1;
  }
  snapshot_free(&sn);
  return rc;
}

static void state_event(zkl_session_t *s, zkl_session_state_t state,
                        void *arg) {
  (void)s, (void)arg;
  cli_loop_post_arg(CLI_EV_STATE, (int)state);
}

/* ---- status --stats FILE...: counters files, no server ------------------ */

#define STATS_FILE_MAX (1 << 20) /* far above what a counters file holds */

/* The whole file into a NUL-terminated buffer (free it); NULL with errno. */
static char *slurp(const char *name) {
  FILE *f = fopen(name, "re");
  if (f == NULL) return NULL;
  char *buf = malloc(STATS_FILE_MAX + 1);
  errno = 0;
  size_t n = buf != NULL ? fread(buf, 1, STATS_FILE_MAX + 1, f) : 0;
  int err = buf == NULL ? ENOMEM : ferror(f) ? (errno != 0 ? errno : EIO) : 0;
  if (err == 0 && n > STATS_FILE_MAX) err = EFBIG;
  fclose(f);
  if (err != 0) {
    free(buf);
    errno = err;
    return NULL;
  }
  buf[n] = '\0';
  return buf;
}

static int stats_status_run(const cli_opts_t *o) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  double now = (double)ts.tv_sec + ts.tv_nsec / 1e9;
  int rc = 0, shown = 0;
  if (o->json) fputc('[', stdout);
  for (size_t i = 0; i < o->n_files; i++) {
    const char *name = o->files[i];
    char why[256];
    cli_statsfile_t f;
    char *text = slurp(name);
    if (text == NULL) {
      snprintf(why, sizeof why, "%s", strerror(errno));
    } else if (cli_statsfile_parse(text, &f, why, sizeof why) == 0) {
      why[0] = '\0';
    }
    free(text);
    if (why[0] != '\0') {
      fprintf(stderr, "zkl: %s: %s\n", name, why);
      rc = CLI_EX_NOINPUT;
      continue;
    }
    if (o->json) {
      if (shown > 0) fputs(", ", stdout);
      cli_statsfile_json(stdout, name, &f, now);
    } else {
      cli_statsfile_print(stdout, name, &f, now);
    }
    shown++;
  }
  if (o->json) fputs("]\n", stdout);
  return rc;
}

int cli_status_run(const cli_opts_t *o) {
  if (o->status_stats) return stats_status_run(o);
  if (o->status_counter) return cli_counter_status_run(o);
  if (o->status_barrier) return cli_barrier_status_run(o);
  if (o->status_sem) return cli_sem_status_run(o);
  if (o->status_watch && cli_loop_init() != 0) {
    perror("zkl: cannot set up its loop");
    return CLI_EX_SOFTWARE;
  }
  zkl_session_t *s = NULL;
  int rc = cli_connect(o, o->status_watch ? state_event : NULL, NULL, &s);
  if (rc != 0) return rc;
  if (o->status_watch) {
    cli_loop_connected(s);
    rc = status_watch(s, o);
    cli_session_close(s);
    return rc;
  }
  snapshot_t sn;
  rc = snapshot_take(s, o, 0, &sn);
  cli_session_close(s);
  if (rc != 0) return rc == ZKL_ENOMEM ? CLI_EX_SOFTWARE : cli_exit_code(rc);
  snapshot_print(&sn, o, 0);
  snapshot_free(&sn);
  return flush_stdout();
}
