/* cli/status.c - `zkl status PATH`: the contenders at PATH in queue order,
 * as a table or as JSON, from the library's zkl_contenders(); and, when
 * PATH holds a queue's items (qn- or kazoo's entry- children), their
 * number and the head item of each format instead of a row per item. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "items.h"
#include "text.h"

#define DATA_SHOWN 1024 /* bytes of a node's data shown at most */

static size_t shown(const zkl_contender_t *e) {
  return e->data_len < DATA_SHOWN ? e->data_len : DATA_SHOWN;
}

/* The items of one format among the children: how many, and the head. */
typedef struct queue_view {
  int format;
  size_t items;
  const zkl_contender_t *head; /* NULL when items is 0 */
} queue_view_t;

static const int formats[] = {ZKL_QUEUE_QN, ZKL_QUEUE_KAZOO};
#define N_FORMATS (sizeof formats / sizeof formats[0])

/* Splits v: its queue items counted into views (one per format, in
 * formats' order), every other child, in v's order, into rest (*m). */
static void split(const zkl_contender_t *v, size_t n, queue_view_t *views,
                  zkl_contender_t *rest, size_t *m) {
  cli_item_key_t heads[N_FORMATS];
  memset(heads, 0, sizeof heads);
  *m = 0;
  for (size_t f = 0; f < N_FORMATS; f++)
    views[f] = (queue_view_t){formats[f], 0, NULL};
  for (size_t i = 0; i < n; i++) {
    int item = 0;
    for (size_t f = 0; f < N_FORMATS && !item; f++) {
      cli_item_key_t k;
      if (cli_item_parse(formats[f], v[i].name, &k) != 0) continue;
      item = 1;
      if (views[f].items++ == 0 || cli_item_cmp(&k, &heads[f]) < 0) {
        heads[f] = k;
        views[f].head = &v[i];
      }
    }
    if (!item) rest[(*m)++] = v[i];
  }
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
    cli_put_escaped(stdout, e->data, shown(e));
    putchar('\n');
  }
}

/* A line per format that has items: QUEUE ITEMS HEAD TOKEN LEN DATA. */
static void print_queues(const queue_view_t *views) {
  int w = (int)strlen("HEAD");
  for (size_t f = 0; f < N_FORMATS; f++) {
    if (views[f].items == 0) continue;
    int nl = (int)strlen(views[f].head->name);
    if (nl > w) w = nl;
  }
  printf("%-5s %-7s %-*s %-12s %-7s %s\n", "QUEUE", "ITEMS", w, "HEAD",
         "TOKEN", "LEN", "DATA");
  for (size_t f = 0; f < N_FORMATS; f++) {
    const queue_view_t *q = &views[f];
    if (q->items == 0) continue;
    printf("%-5s %-7zu %-*s %-12" PRIu64 " %-7zu ",
           cli_format_name(q->format), q->items, w, q->head->name,
           q->head->token, q->head->data_len);
    cli_put_escaped(stdout, q->head->data, shown(q->head));
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
    cli_put_json_escaped(stdout, e->data, shown(e));
    printf(", \"session\": \"0x%" PRIx64 "\", \"token\": %" PRIu64 "}",
           (uint64_t)e->session, e->token);
  }
  /* a queue: the members of a contender, filled from its head item */
  for (size_t f = 0; f < N_FORMATS; f++) {
    const queue_view_t *q = &views[f];
    if (q->items == 0) continue;
    fputs(k++ == 0 ? "\n  {" : ",\n  {", stdout);
    fputs("\"position\": null, \"kind\": \"queue\", \"holds\": false, "
          "\"node\": ", stdout);
    cli_put_json_string(stdout, q->head->name);
    fputs(", \"owner\": ", stdout);
    cli_put_json_escaped(stdout, q->head->data, shown(q->head));
    printf(", \"session\": \"0x%" PRIx64 "\", \"token\": %" PRIu64
           ", \"format\": \"%s\", \"items\": %zu, \"len\": %zu}",
           (uint64_t)q->head->session, q->head->token,
           cli_format_name(q->format), q->items, q->head->data_len);
  }
  fputs(k > 0 ? "\n]\n" : "]\n", stdout);
}

int cli_status_run(const cli_opts_t *o) {
  zkl_session_t *s = NULL;
  int rc = cli_connect(o, NULL, NULL, &s);
  if (rc != 0) return rc;
  zkl_contender_t *v = NULL;
  size_t n = 0;
  rc = zkl_contenders(s, o->path, -1, &v, &n);
  if (rc != 0) {
    fprintf(stderr, "zkl: cannot list %s: %s\n", o->path, zkl_last_error());
    zkl_session_close(s);
    return cli_exit_code(rc);
  }
  zkl_session_close(s);
  zkl_contender_t *rest = malloc((n > 0 ? n : 1) * sizeof *rest);
  if (rest == NULL) {
    fprintf(stderr, "zkl: no memory for a listing of %s\n", o->path);
    zkl_contenders_free(v, n);
    return CLI_EX_SOFTWARE;
  }
  queue_view_t views[N_FORMATS];
  size_t m = 0;
  split(v, n, views, rest, &m);
  int queues = 0;
  for (size_t f = 0; f < N_FORMATS; f++) queues |= views[f].items > 0;
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
  zkl_contenders_free(v, n);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    perror("zkl: stdout");
    return CLI_EX_SOFTWARE;
  }
  return 0;
}
