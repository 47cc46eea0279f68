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
 * With --counter, PATH is read as a counter instead (cli/counter.c); with
 * --barrier, as a barrier (cli/barrier.c); with --sem, as a semaphore
 * (cli/sem.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
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

static void print_table(const zkl_contender_t *v, size_t n) {
  int w = (int)strlen("NODE");
  for (size_t i = 0; i < n; i++) {
    int nl = (int)strlen(v[i].name);
    if (nl > w) w = nl;
  }
  printf("%-3s %-8s %-5s %-12s %-18s %-*s %s\n", "POS", "KIND", "HOLDS",
         "TOKEN", "SESSION", w, "NODE", "OWNER");
  for (size_t i = 0; i < n; i++) {
    const zkl_contender_t *e = &v[i];
    char pos[16], session[24];
    if (e->position > 0) snprintf(pos, sizeof pos, "%d", e->position);
    else snprintf(pos, sizeof pos, "-");
    snprintf(session, sizeof session, "0x%" PRIx64, (uint64_t)e->session);
    printf("%-3s %-8s %-5s %-12" PRIu64 " %-18s %-*s ", pos,
           zkl_kind_name(e->kind), e->holds ? "yes" : "no", e->token,
           session, w, e->name);
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

static void print_json(const zkl_contender_t *v, size_t n,
                       const queue_view_t *views) {
  size_t k = 0; /* elements written */
  fputs("[", stdout);
  for (size_t i = 0; i < n; i++, k++) {
    const zkl_contender_t *e = &v[i];
    fputs(k == 0 ? "\n  {" : ",\n  {", stdout);
    if (e->position > 0) printf("\"position\": %d", e->position);
    else fputs("\"position\": null", stdout);
    printf(", \"kind\": \"%s\", \"holds\": %s, \"node\": ",
           zkl_kind_name(e->kind), e->holds ? "true" : "false");
    cli_put_json_string(stdout, e->name);
    fputs(", \"owner\": ", stdout);
    cli_put_json_escaped(stdout, e->data, shown_len(e->data_len));
    printf(", \"session\": \"0x%" PRIx64 "\", \"token\": %" PRIu64 "}",
           (uint64_t)e->session, e->token);
  }
  /* a queue: the members of a contender, filled from its head item (null
   * when there is none), and its own */
  for (size_t f = 0; f < N_FORMATS; f++) {
    const queue_view_t *q = &views[f];
    if (!q->present) continue;
    fputs(k++ == 0 ? "\n  {" : ",\n  {", stdout);
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
  fputs(k > 0 ? "\n]\n" : "]\n", stdout);
}

static void free_views(queue_view_t *views) {
  for (size_t f = 0; f < N_FORMATS; f++) {
    zkl_items_free(views[f].items, views[f].n);
    views[f].items = NULL;
    views[f].n = 0;
  }
}

int cli_status_run(const cli_opts_t *o) {
  if (o->status_counter) return cli_counter_status_run(o);
  if (o->status_barrier) return cli_barrier_status_run(o);
  if (o->status_sem) return cli_sem_status_run(o);
  zkl_session_t *s = NULL;
  int rc = cli_connect(o, NULL, NULL, &s);
  if (rc != 0) return rc;
  zkl_contender_t *v = NULL;
  size_t n = 0;
  rc = zkl_contenders(s, o->path, -1, &v, &n);
  if (rc != 0) {
    fprintf(stderr, "zkl: cannot list %s: %s\n", o->path, zkl_last_error());
    cli_session_close(s);
    return cli_exit_code(rc);
  }
  queue_view_t views[N_FORMATS];
  read_queues(s, o->path, v, n, views);
  cli_session_close(s);
  zkl_contender_t *rest = malloc((n > 0 ? n : 1) * sizeof *rest);
  size_t m = 0;
  if (rest == NULL || without_queues(v, n, views, rest, &m) != 0) {
    fprintf(stderr, "zkl: no memory for a listing of %s\n", o->path);
    free(rest);
    free_views(views);
    zkl_contenders_free(v, n);
    return CLI_EX_SOFTWARE;
  }
  int queues = 0;
  for (size_t f = 0; f < N_FORMATS; f++) queues |= views[f].present;
  if (o->json) {
    print_json(rest, m, views);
  } else if (m == 0 && !queues) {
    puts("no contenders");
  } else {
    if (m > 0) print_table(rest, m);
    if (m > 0 && queues) putchar('\n');
    if (queues) print_queues(views);
  }
  free(rest);
  free_views(views);
  zkl_contenders_free(v, n);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    perror("zkl: stdout");
    return CLI_EX_SOFTWARE;
  }
  return 0;
}
