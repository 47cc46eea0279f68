/* tests/integration/test-multilock-interop.c - the multi-lock beside
 * Curator's, kazoo's and zkl's plain mutexes on the same paths, live and
 * both ways.  The peers: Curator 5.4 (InterProcessMutex and
 * InterProcessMultiLock, java/CuratorLockPeer.java, compiled here) and
 * python3-kazoo (Lock with extra_lock_patterns=["-lock-"], kazoo_peer.py's
 * "serve" mode); both take the same commands, and zkl's own plain mutexes
 * are driven through the same interface here (a thread per client, each
 * its own session), so one script runs against all three.
 *  - FIFO across kinds (Curator, kazoo, zkl_mutex_t): a plain client holds
 *    B; the multi-lock on [A,B] queues (its A node first on A, its B node
 *    behind the holder); a second plain client queues on A after it.  When
 *    B is let go the multi-lock gets both, and only after its unlock does
 *    the second client get A; while it holds, timed acquires of the plain
 *    kind on A and on B fail.  Then the multi-lock holds, plain clients
 *    wait on B and on A and get them right after its unlock.  The peer
 *    library's own view of each queue (Curator's getParticipantNodes(),
 *    kazoo's contenders()) lists the multi-lock's nodes in place.
 *  - Sequential peers (one client holding one lock while it waits for the
 *    other): THE MULTI-LOCK CAN DEADLOCK WITH ONE, whatever the orders; driven
 *    into it step by step here, broken by whichever timeout comes first
 *    (see "sequential peers" below for the argument); the interleavings
 *    that are safe are shown too; then 30 rounds of Curator (A then B)
 *    and of kazoo (B then A), each beside a zkl multi-lock on [B,A], with
 *    timeouts and retries: exclusion always, every round done, and how
 *    often a timeout had to break a deadlock is printed.
 *  - Curator's InterProcessMultiLock (one by one, in list order) beside a
 *    zkl multi-lock on the reversed list: the same hazard, driven into and
 *    broken by Curator's timeout; then 30 rounds each with timeouts:
 *    exclusion always and progress.
 * Exclusion, in every test: each client (peer or zkl) logs each hold of
 * each path, from just after its acquire returned to just before its
 * release was called, on CLOCK_MONOTONIC (Java's System.nanoTime(),
 * Python's time.monotonic_ns(), ours - one clock): no two holds of one path
 * overlap, and the order of holders on each path is checked where the
 * script fixes it.  Every node's data names its client, so the queues are
 * read, in sequence order, straight from the server; at the end of every
 * test no node is left under any path.  The tcase's teardown sweeps what a
 * failed test left (/zkl-test/mli-<run>-...). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"

static void suite_setup(void) {
  it_peer_setup("multilock-interop", "mli", "CuratorLockPeer");
}

/* Under valgrind (or ZKL_TEST_SLOW) zkl's side takes longer. */
static int slow(void) {
  const char *w = getenv("ZKL_TEST_WRAPPER");
  int wrapped = w != NULL && w[0] != '\0';
  return wrapped || getenv("ZKL_TEST_SLOW") != NULL ? 2 : 1;
}

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t mono_us(void) { return mono_ns() / 1000; }

/* ---- the server's view --------------------------------------------------- */

static int by_seq(const void *x, const void *y) {
  const char *a = *(char *const *)x, *b = *(char *const *)y;
  size_t la = strlen(a), lb = strlen(b);
  return strcmp(a + (la > 10 ? la - 10 : 0), b + (lb > 10 ? lb - 10 : 0));
}

/* The nodes under path by sequence, each shown as its data (its client's
 * name), space-separated into who ("" for none or no path).  Listed again
 * if a node goes between the listing and its read. */
static void owners(zkl_session_t *s, const char *path, char *who, size_t len) {
  zhandle_t *zh = zkl_session_zhandle(s);
  for (int tries = 0;; tries++) {
    ck_assert_int_lt(tries, 100);
    struct String_vector v = {0, NULL};
    who[0] = '\0';
    int rc = zoo_get_children(zh, path, 0, &v);
    if (rc == ZNONODE) return;
    ck_assert_msg(rc == ZOK, "get_children %s: %s", path, zerror(rc));
    qsort(v.data, (size_t)v.count, sizeof *v.data, by_seq);
    int again = 0;
    size_t at = 0;
    for (int i = 0; i < v.count && !again; i++) {
      char p[1024], data[64];
      int dl = sizeof data - 1;
      snprintf(p, sizeof p, "%s/%s", path, v.data[i]);
      rc = zoo_get(zh, p, 0, data, &dl, NULL);
      if (rc == ZNONODE) {
        again = 1;
        break;
      }
      ck_assert_msg(rc == ZOK, "get %s: %s", p, zerror(rc));
      data[dl < 0 ? 0 : dl] = '\0';
      at += (size_t)snprintf(who + at, at < len ? len - at : 0, "%s%s",
                             i > 0 ? " " : "", data);
    }
    deallocate_String_vector(&v);
    if (!again) return;
  }
}

/* Waits (10 s at most) until the queue on path is `want`. */
static void owners_are(zkl_session_t *s, const char *path, const char *want) {
  char who[1024] = "";
  int64_t end = it_now_ms() + 10000;
  for (;;) {
    owners(s, path, who, sizeof who);
    if (strcmp(who, want) == 0) return;
    ck_assert_msg(it_now_ms() < end, "%s is \"%s\", not \"%s\"", path, who,
                  want);
    it_sleep_ms(2);
  }
}

/* The queue on path is `want` now (a state that must hold still). */
static void owners_still(zkl_session_t *s, const char *path,
                         const char *want) {
  char who[1024] = "";
  owners(s, path, who, sizeof who);
  ck_assert_msg(strcmp(who, want) == 0, "%s is \"%s\", not still \"%s\"",
                path, who, want);
}

static void drop_tree(zkl_session_t *s, const char *path) {
  zhandle_t *zh = zkl_session_zhandle(s);
  it_peer_delete_tree(zh, path);
  int rc = zoo_exists(zh, path, 0, NULL);
  ck_assert_msg(rc == ZNONODE, "%s still there: %s", path, zerror(rc));
}

/* ---- holds: path labels and spans ---------------------------------------- */

/* The test's paths, by label ("A", "B", ...): the peers are told them. */
#define MAX_PATHS 4
static char lbl[MAX_PATHS][8];
static char lpath[MAX_PATHS][256];
static int nlbl;

static void labels_reset(void) { nlbl = 0; }

/* A new path, /zkl-test/mli-<run>-<tag>-<label>-..., labelled label. */
static const char *label_new(const char *label, const char *tag) {
  ck_assert_int_lt(nlbl, MAX_PATHS);
  char t[64];
  snprintf(t, sizeof t, "%s-%s", tag, label);
  snprintf(lbl[nlbl], sizeof lbl[nlbl], "%s", label);
  it_peer_node(lpath[nlbl], sizeof lpath[nlbl], t);
  return lpath[nlbl++];
}

static int label_index(const char *label) {
  for (int i = 0; i < nlbl; i++)
    if (strcmp(lbl[i], label) == 0) return i;
  ck_assert_msg(0, "no path labelled %s", label);
  return -1;
}

/* One hold of one path by one client, CLOCK_MONOTONIC ns: from just after
 * its acquire returned to just before its release was called. */
typedef struct span {
  int path;
  char who[8];
  int64_t t0, t1;
} span_t;

#define MAX_SPANS 1024
typedef struct spans {
  span_t v[MAX_SPANS];
  int n;
} spans_t;

static spans_t all; /* every hold of the test underway */

static void span_add(spans_t *sp, int path, const char *who, int64_t t0,
                     int64_t t1) {
  ck_assert_int_lt(sp->n, MAX_SPANS);
  ck_assert_int_le(t0, t1);
  span_t *x = &sp->v[sp->n++];
  x->path = path;
  snprintf(x->who, sizeof x->who, "%s", who);
  x->t0 = t0;
  x->t1 = t1;
}

static int by_start(const void *x, const void *y) {
  const span_t *a = x, *b = y;
  if (a->path != b->path) return a->path - b->path;
  return (a->t0 > b->t0) - (a->t0 < b->t0);
}

/* No two holds of one path overlap: each starts after the one before it
 * ended.  The holders of path `label`, in order, into seq (if not NULL);
 * the number of its holds is returned. */
static int exclusive(const char *label, char *seq, size_t len) {
  qsort(all.v, (size_t)all.n, sizeof *all.v, by_start);
  for (int i = 1; i < all.n; i++) {
    const span_t *p = &all.v[i - 1], *q = &all.v[i];
    ck_assert_msg(p->path != q->path || q->t0 >= p->t1,
                  "%s held by %s and %s at once (%lld ns overlap)",
                  lbl[q->path], p->who, q->who, (long long)(p->t1 - q->t0));
  }
  int want = label_index(label), n = 0;
  size_t at = 0;
  if (seq != NULL) seq[0] = '\0';
  for (int i = 0; i < all.n; i++) {
    if (all.v[i].path != want) continue;
    if (seq != NULL)
      at += (size_t)snprintf(seq + at, at < len ? len - at : 0, "%s%s",
                             n > 0 ? " " : "", all.v[i].who);
    n++;
  }
  return n;
}

/* How many holds of path `label` `who` had (in `all`). */
static int holds_of(const char *label, const char *who) {
  int want = label_index(label), n = 0;
  for (int i = 0; i < all.n; i++)
    n += all.v[i].path == want && strcmp(all.v[i].who, who) == 0;
  return n;
}

/* ---- plain clients: Curator, kazoo or zkl, through one interface ------------
 * A client (ID) has its own session and one thread, which runs its
 * acquires and releases in the order given; its node data is its ID.
 * Peers: the commands of CuratorLockPeer.java and kazoo_peer.py serve. */

enum { CURATOR, KAZOO, ZKL };
static const char *const kind_name[] = {"Curator", "kazoo", "zkl"};

typedef struct zlk {
  char name[16];
  int path;
  zkl_mutex_t *m;
  int64_t since; /* ns; 0: not held */
} zlk_t;

typedef struct zjob {
  int release;
  char tag[32];
  zlk_t *l;
  int64_t ms;
  int done, rc;   /* under the client's mu */
  int64_t t0, t1; /* us */
  struct zjob *next, *all;
} zjob_t;

typedef struct zcli {
  char id[8];
  zkl_session_t *s;
  zlk_t locks[4];
  int nlocks;
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  zjob_t *head, *tail;
  int stop;
  spans_t log; /* under mu */
} zcli_t;

typedef struct pl {
  int kind;
  it_peer_t *p; /* Curator, kazoo */
  zcli_t *z[4]; /* zkl */
  int nz;
  zjob_t *jobs; /* zkl, every job, by ->all */
} pl_t;

static void *zcli_main(void *arg) {
  zcli_t *c = arg;
  pthread_mutex_lock(&c->mu);
  for (;;) {
    while (c->head == NULL && !c->stop) pthread_cond_wait(&c->cv, &c->mu);
    zjob_t *j = c->head;
    if (j == NULL) break;
    c->head = j->next;
    if (c->head == NULL) c->tail = NULL;
    pthread_mutex_unlock(&c->mu);
    int64_t t0 = mono_us(), since = 0, t1n = 0;
    int rc;
    if (j->release) {
      t1n = mono_ns();
      rc = zkl_mutex_unlock(j->l->m);
    } else {
      rc = j->ms < 0 ? zkl_mutex_lock(j->l->m)
                     : zkl_mutex_timedlock(j->l->m, j->ms);
      since = mono_ns();
    }
    int64_t t1 = mono_us();
    pthread_mutex_lock(&c->mu);
    if (j->release && j->l->since != 0) {
      span_add(&c->log, j->l->path, c->id, j->l->since, t1n);
      j->l->since = 0;
    } else if (!j->release && rc == 0) {
      j->l->since = since;
    }
    j->rc = rc;
    j->t0 = t0;
    j->t1 = t1;
    j->done = 1;
    pthread_cond_broadcast(&c->cv);
  }
  pthread_mutex_unlock(&c->mu);
  return NULL;
}

static zcli_t *zcli_of(pl_t *k, const char *id) {
  for (int i = 0; i < k->nz; i++)
    if (strcmp(k->z[i]->id, id) == 0) return k->z[i];
  ck_assert_msg(0, "no zkl client %s", id);
  return NULL;
}

static zlk_t *zlk_of(zcli_t *c, const char *name) {
  for (int i = 0; i < c->nlocks; i++)
    if (strcmp(c->locks[i].name, name) == 0) return &c->locks[i];
  ck_assert_msg(0, "zkl client %s has no lock %s", c->id, name);
  return NULL;
}

static zjob_t *zjob_post(pl_t *k, const char *id, const char *name,
                         const char *tag, int release, int64_t ms) {
  zcli_t *c = zcli_of(k, id);
  zjob_t *j = calloc(1, sizeof *j);
  ck_assert_ptr_nonnull(j);
  j->release = release;
  snprintf(j->tag, sizeof j->tag, "%s", tag);
  j->l = zlk_of(c, name);
  j->ms = ms;
  j->all = k->jobs;
  k->jobs = j;
  pthread_mutex_lock(&c->mu);
  if (c->tail != NULL)
    c->tail->next = j;
  else
    c->head = j;
  c->tail = j;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
  return j;
}

static zjob_t *zjob_of(pl_t *k, const char *tag) {
  for (zjob_t *j = k->jobs; j != NULL; j = j->all)
    if (!j->release && strcmp(j->tag, tag) == 0) return j;
  ck_assert_msg(0, "no zkl call %s", tag);
  return NULL;
}

static int zjob_done(pl_t *k, zjob_t *j) {
  zcli_t *c = NULL;
  for (int i = 0; i < k->nz && c == NULL; i++)
    for (int n = 0; n < k->z[i]->nlocks; n++)
      if (&k->z[i]->locks[n] == j->l) c = k->z[i];
  pthread_mutex_lock(&c->mu);
  int d = j->done;
  pthread_mutex_unlock(&c->mu);
  return d;
}

/* kazoo's Lock makes its path once per Lock object (ensure_path, then
 * cached); a path made as a CONTAINER - zkl's way, and Curator's - is
 * reaped by the server whenever it is found empty (the harness checks
 * every second), and that kazoo Lock's next acquire then fails with
 * NoNodeError (this suite's loop hit it).  So with kazoo the paths are
 * made first, persistent, as kazoo's own ensure_path makes them. */
static void paths_persistent(void) {
  zkl_session_t *s = it_session();
  zhandle_t *zh = zkl_session_zhandle(s);
  for (int i = 0; i < nlbl; i++) {
    char p[256];
    snprintf(p, sizeof p, "%s", lpath[i]);
    for (char *at = p + 1;; at++) {
      if (*at != '/' && *at != '\0') continue;
      char c = *at;
      *at = '\0';
      int rc = zoo_create(zh, p, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
      ck_assert_msg(rc == ZOK || rc == ZNODEEXISTS, "create %s: %s", p,
                    zerror(rc));
      *at = c;
      if (c == '\0') break;
    }
  }
  zkl_session_close(s);
}

static void pl_start(pl_t *k, int kind) {
  memset(k, 0, sizeof *k);
  k->kind = kind;
  if (kind == ZKL) return;
  if (kind == KAZOO) paths_persistent();
  k->p = calloc(1, sizeof *k->p);
  ck_assert_ptr_nonnull(k->p);
  if (kind == CURATOR) {
    it_peer_curator(k->p, "CuratorLockPeer");
  } else {
    char secs[16];
    snprintf(secs, sizeof secs, "%d", it_peer_secs());
    it_peer_python(k->p, "kazoo_peer.py",
                   (char *const[]){(char *)it_hosts(), secs, "serve", NULL},
                   0);
  }
  for (int i = 0; i < nlbl; i++)
    it_peer_ask(k->p, "ok", "path %s %s", lbl[i], lpath[i]);
}

static void pl_open(pl_t *k, const char *id) {
  if (k->kind != ZKL) {
    char line[256];
    it_peer_query(k->p, line, sizeof line, "open %s 10000", id);
    ck_assert_msg(strncmp(line, "ok 0x", 5) == 0, "open %s: %s", id, line);
    return;
  }
  ck_assert_int_lt(k->nz, 4);
  zcli_t *c = calloc(1, sizeof *c);
  ck_assert_ptr_nonnull(c);
  snprintf(c->id, sizeof c->id, "%s", id);
  c->s = it_session();
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->cv, NULL);
  ck_assert_int_eq(pthread_create(&c->th, NULL, zcli_main, c), 0);
  k->z[k->nz++] = c;
}

/* A plain mutex of client id on path `label`, known as name. */
static void pl_mutex(pl_t *k, const char *id, const char *name,
                     const char *label) {
  if (k->kind != ZKL) {
    it_peer_ask(k->p, "ok", "mutex %s %s %s", id, name, label);
    return;
  }
  zcli_t *c = zcli_of(k, id);
  ck_assert_int_lt(c->nlocks, 4);
  zlk_t *l = &c->locks[c->nlocks++];
  snprintf(l->name, sizeof l->name, "%s", name);
  l->path = label_index(label);
  zkl_mutex_opts_t o;
  zkl_mutex_opts_init(&o);
  o.data = c->id;
  o.data_len = strlen(c->id);
  int rc = zkl_mutex_create(&l->m, c->s, lpath[l->path], &o);
  ck_assert_msg(rc == 0, "mutex_create: %s", it_code(rc));
}

/* Starts client id's acquire of name (ms < 0: no deadline), as call tag. */
static void pl_acquire(pl_t *k, const char *tag, const char *id,
                       const char *name, int ms) {
  if (k->kind != ZKL)
    it_peer_say(k->p, "acquire %s %s %s %d", tag, id, name, ms);
  else
    zjob_post(k, id, name, tag, 0, ms);
}

/* The result of call tag, within timeout_ms: 1 acquired, 0 timed out (any
 * other outcome fails the test); its start and end (us) if asked. */
static int pl_result(pl_t *k, const char *tag, int timeout_ms, int64_t *t0,
                     int64_t *t1) {
  if (k->kind != ZKL) {
    it_peer_result_t r = it_peer_result(k->p, tag, timeout_ms);
    ck_assert_msg(strcmp(r.what, "true") == 0 || strcmp(r.what, "false") == 0,
                  "%s %s: %s", kind_name[k->kind], tag, r.what);
    if (t0 != NULL) *t0 = r.t0;
    if (t1 != NULL) *t1 = r.t1;
    return strcmp(r.what, "true") == 0;
  }
  zjob_t *j = zjob_of(k, tag);
  int64_t end = it_now_ms() + timeout_ms;
  while (!zjob_done(k, j)) {
    ck_assert_msg(it_now_ms() < end, "zkl: no result for %s in %d ms", tag,
                  timeout_ms);
    it_sleep_ms(1);
  }
  ck_assert_msg(j->rc == 0 || j->rc == ZKL_ETIMEDOUT, "zkl %s: %s", tag,
                it_code(j->rc));
  if (t0 != NULL) *t0 = j->t0;
  if (t1 != NULL) *t1 = j->t1;
  return j->rc == 0;
}

/* Whether call tag is still underway. */
static int pl_pending(pl_t *k, const char *tag) {
  if (k->kind != ZKL) return it_peer_pending(k->p, tag);
  return !zjob_done(k, zjob_of(k, tag));
}

/* Client id releases name (after what is queued on its thread). */
static void pl_release(pl_t *k, const char *id, const char *name) {
  if (k->kind != ZKL) {
    it_peer_ask(k->p, "ok", "release %s %s", id, name);
    return;
  }
  zjob_t *j = zjob_post(k, id, name, "", 1, -1);
  int64_t end = it_now_ms() + 10000;
  while (!zjob_done(k, j)) {
    ck_assert_msg(it_now_ms() < end, "zkl: %s's release of %s stuck", id,
                  name);
    it_sleep_ms(1);
  }
  ck_assert_msg(j->rc == 0, "zkl %s: unlock %s: %s", id, name,
                it_code(j->rc));
}

/* Client id's holds ended since the last time, into `all`; its loops'
 * retries. */
static int pl_log(pl_t *k, const char *id) {
  if (k->kind == ZKL) {
    zcli_t *c = zcli_of(k, id);
    pthread_mutex_lock(&c->mu);
    for (int i = 0; i < c->log.n; i++)
      span_add(&all, c->log.v[i].path, c->id, c->log.v[i].t0,
               c->log.v[i].t1);
    c->log.n = 0;
    pthread_mutex_unlock(&c->mu);
    return 0;
  }
  static char line[1 << 16];
  it_peer_query(k->p, line, sizeof line, "log %s", id);
  ck_assert_msg(strncmp(line, "ok ", 3) == 0, "log %s: %.300s", id, line);
  char *save = NULL, *w = strtok_r(line + 3, " ", &save);
  ck_assert_ptr_nonnull(w);
  int retries = atoi(w);
  while ((w = strtok_r(NULL, " ", &save)) != NULL) {
    int path = label_index(w);
    char *a = strtok_r(NULL, " ", &save), *b = strtok_r(NULL, " ", &save);
    ck_assert_msg(a != NULL && b != NULL, "log %s: a hold cut short", id);
    span_add(&all, path, id, strtoll(a, NULL, 10), strtoll(b, NULL, 10));
  }
  return retries;
}

/* The peer library's own view of the queue on `label`, its nodes' data in
 * its order, is want (zkl: nothing to ask). */
static void pl_queue_is(pl_t *k, const char *id, const char *label,
                        const char *want) {
  if (k->kind == ZKL) return;
  char w[512];
  snprintf(w, sizeof w, "ok %s", want);
  it_peer_ask(k->p, w, "queue %s %s", id, label);
}

static void pl_stop(pl_t *k) {
  if (k->kind != ZKL) {
    it_peer_quit(k->p);
    free(k->p);
    return;
  }
  for (int i = 0; i < k->nz; i++) {
    zcli_t *c = k->z[i];
    pthread_mutex_lock(&c->mu);
    c->stop = 1;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    pthread_join(c->th, NULL);
    for (int n = 0; n < c->nlocks; n++) zkl_mutex_destroy(c->locks[n].m);
    zkl_session_close(c->s);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c);
  }
  while (k->jobs != NULL) {
    zjob_t *j = k->jobs;
    k->jobs = j->all;
    free(j);
  }
}

/* Curator runs only with a JDK and Curator's jars (see peer.c). */
static int kind_here(int kind) {
  return kind != CURATOR || it_peer_curator_here();
}

/* ---- the zkl multi-lock -------------------------------------------------- */

typedef struct zml {
  zkl_multilock_t *m;
  int path[MAX_PATHS];
  int n;
  int64_t since; /* ns */
} zml_t;

/* A multi-lock on the labelled paths, in the order given, nodes' data
 * "zM". */
static void zml_new(zml_t *x, zkl_session_t *s, const char *const *labels,
                    int n) {
  memset(x, 0, sizeof *x);
  const char *p[MAX_PATHS];
  for (int i = 0; i < n; i++) {
    x->path[i] = label_index(labels[i]);
    p[i] = lpath[x->path[i]];
  }
  x->n = n;
  zkl_multilock_opts_t o;
  zkl_multilock_opts_init(&o);
  o.data = "zM";
  o.data_len = 2;
  int rc = zkl_multilock_create(&x->m, s, p, (size_t)n, &o);
  ck_assert_msg(rc == 0, "multilock_create: %s", it_code(rc));
}

static int zml_lock(zml_t *x, int64_t ms) {
  int rc = zkl_multilock_timedlock(x->m, ms);
  if (rc == 0) x->since = mono_ns();
  return rc;
}

/* Its holds logged into spans (`all` if NULL), then the unlock. */
static void zml_unlock(zml_t *x, spans_t *sp, const char *who) {
  int64_t t1 = mono_ns();
  for (int i = 0; i < x->n; i++)
    span_add(sp != NULL ? sp : &all, x->path[i], who, x->since, t1);
  int rc = zkl_multilock_unlock(x->m);
  ck_assert_msg(rc == 0, "multilock_unlock: %s", it_code(rc));
}

/* All its paths' tokens are one (one transaction) and each is above the
 * last holder's: the fencing the plain holders see too. */
static uint64_t zml_token(zml_t *x) {
  uint64_t t0 = 0, t = 0;
  for (int i = 0; i < x->n; i++) {
    ck_assert_int_eq(zkl_multilock_token(x->m, (size_t)i, &t), 0);
    if (i == 0) t0 = t;
    ck_assert_uint_eq(t, t0);
  }
  return t0;
}

/* A timed lock of it in a thread. */
typedef struct zwait {
  zml_t *x;
  int64_t ms;
  pthread_t th;
  int rc;        /* 99 while underway */
  int64_t start; /* ms */
} zwait_t;

static void *zwait_main(void *arg) {
  zwait_t *w = arg;
  int rc = zml_lock(w->x, w->ms);
  __atomic_store_n(&w->rc, rc, __ATOMIC_SEQ_CST);
  return NULL;
}

static void zwait_start(zwait_t *w, zml_t *x, int64_t ms) {
  *w = (zwait_t){.x = x, .ms = ms, .rc = 99, .start = it_now_ms()};
  ck_assert_int_eq(pthread_create(&w->th, NULL, zwait_main, w), 0);
}

static int zwait_rc(zwait_t *w) {
  return __atomic_load_n(&w->rc, __ATOMIC_SEQ_CST);
}

/* It ends within timeout_ms with rc (and is joined); how long it took. */
static int64_t zwait_ends(zwait_t *w, int rc, int timeout_ms) {
  int64_t end = it_now_ms() + timeout_ms;
  while (zwait_rc(w) == 99 && it_now_ms() < end) it_sleep_ms(1);
  ck_assert_msg(zwait_rc(w) != 99, "zkl multi-lock still waiting after %d ms",
                timeout_ms);
  pthread_join(w->th, NULL);
  ck_assert_msg(w->rc == rc, "zkl multi-lock: %s, not %s", it_code(w->rc),
                it_code(rc));
  return it_now_ms() - w->start;
}

/* The multi-lock looping in a thread: rounds timed locks (ms each), held
 * hold_ms; a timeout (a deadlock broken, or a long wait) is a retry. */
typedef struct zloop {
  zml_t *x;
  int rounds, hold_ms;
  int64_t ms;
  pthread_t th;
  int done, retries, fails, last_rc;
  spans_t sp;
} zloop_t;

static void *zloop_main(void *arg) {
  zloop_t *z = arg;
  for (int i = 0; i < z->rounds && z->fails == 0; i++) {
    int rc;
    for (int tries = 0; (rc = zml_lock(z->x, z->ms)) == ZKL_ETIMEDOUT &&
                        tries < 200;
         tries++) {
      z->retries++;
      it_sleep_ms(1 + rand() % 10);
    }
    if (rc != 0) {
      z->fails++;
      z->last_rc = rc;
      break;
    }
    if (z->hold_ms > 0) it_sleep_ms(z->hold_ms);
    int64_t t1 = mono_ns();
    for (int p = 0; p < z->x->n; p++) {
      if (z->sp.n >= MAX_SPANS) break;
      span_t *s = &z->sp.v[z->sp.n++];
      *s = (span_t){.path = z->x->path[p], .t0 = z->x->since, .t1 = t1};
      snprintf(s->who, sizeof s->who, "zM");
    }
    if ((rc = zkl_multilock_unlock(z->x->m)) != 0) {
      z->fails++;
      z->last_rc = rc;
    }
    z->done++;
  }
  return NULL;
}

static void zloop_start(zloop_t *z, zml_t *x, int rounds, int hold_ms,
                        int64_t ms) {
  memset(z, 0, sizeof *z);
  z->x = x;
  z->rounds = rounds;
  z->hold_ms = hold_ms;
  z->ms = ms;
  ck_assert_int_eq(pthread_create(&z->th, NULL, zloop_main, z), 0);
}

static void zloop_join(zloop_t *z) {
  pthread_join(z->th, NULL);
  ck_assert_msg(z->fails == 0, "zkl multi-lock loop: %s after %d rounds",
                it_code(z->last_rc), z->done);
  ck_assert_int_eq(z->done, z->rounds);
  for (int i = 0; i < z->sp.n; i++)
    span_add(&all, z->sp.v[i].path, z->sp.v[i].who, z->sp.v[i].t0,
             z->sp.v[i].t1);
}

/* ---- FIFO across kinds, both ways ---------------------------------------- */

/* See the top.  Clients P1 (a mutex on B), P2 (on A), P3 (on A and B) of
 * one kind; the multi-lock zM on [A,B]. */
static void fifo_both_ways(int kind) {
  if (!kind_here(kind)) return;
  int64_t t_start = it_now_ms();
  labels_reset();
  all.n = 0;
  const char *a = label_new("A", "fifo"), *b = label_new("B", "fifo");
  zkl_session_t *s = it_session();
  pl_t k;
  pl_start(&k, kind);
  const char *kn = kind_name[kind];
  pl_open(&k, "P1");
  pl_open(&k, "P2");
  pl_open(&k, "P3");
  pl_mutex(&k, "P1", "b", "B");
  pl_mutex(&k, "P2", "a", "A");
  pl_mutex(&k, "P3", "a", "A");
  pl_mutex(&k, "P3", "b", "B");
  zml_t m;
  zml_new(&m, s, (const char *const[]){"A", "B"}, 2);

  /* P1 holds B; the multi-lock queues: first on A, behind P1 on B */
  pl_acquire(&k, "h1", "P1", "b", -1);
  ck_assert(pl_result(&k, "h1", 10000, NULL, NULL));
  owners_are(s, b, "P1");
  zwait_t w;
  zwait_start(&w, &m, 20000);
  owners_are(s, a, "zM");
  owners_are(s, b, "P1 zM");
  /* P2 queues on A after it: behind its node, though A is not held */
  pl_acquire(&k, "w2", "P2", "a", -1);
  owners_are(s, a, "zM P2");
  pl_queue_is(&k, "P3", "A", "zM P2");
  pl_queue_is(&k, "P3", "B", "P1 zM");
  it_sleep_ms(200);
  ck_assert_int_eq(zwait_rc(&w), 99);
  ck_assert(pl_pending(&k, "w2"));
  owners_still(s, a, "zM P2");
  owners_still(s, b, "P1 zM");
  /* P1 lets B go: the multi-lock has both, P2 still waits */
  pl_release(&k, "P1", "b");
  zwait_ends(&w, 0, 10000);
  uint64_t tok = zml_token(&m);
  owners_are(s, a, "zM P2");
  owners_are(s, b, "zM");
  /* while it holds, the plain kind's timed acquires fail, on A and on B,
   * and leave no node */
  int64_t t0, t1;
  pl_acquire(&k, "t3a", "P3", "a", 300);
  ck_assert_msg(!pl_result(&k, "t3a", 10000, &t0, &t1),
                "%s got A while the multi-lock held it", kn);
  ck_assert_int_ge(t1 - t0, 250000);
  pl_acquire(&k, "t3b", "P3", "b", 300);
  ck_assert_msg(!pl_result(&k, "t3b", 10000, &t0, &t1),
                "%s got B while the multi-lock held it", kn);
  ck_assert_int_ge(t1 - t0, 250000);
  owners_are(s, a, "zM P2");
  owners_are(s, b, "zM");
  ck_assert(pl_pending(&k, "w2"));
  ck_assert_int_eq(zkl_multilock_holding(m.m), 1);
  /* its unlock: P2 gets A right after */
  int64_t t_unlock = mono_us();
  zml_unlock(&m, NULL, "zM");
  ck_assert(pl_result(&k, "w2", 10000, NULL, &t1));
  int64_t lat1 = t1 - t_unlock;
  ck_assert_int_ge(lat1, 0);
  owners_are(s, a, "P2");
  owners_are(s, b, "");
  pl_release(&k, "P2", "a");
  owners_are(s, a, "");

  /* the other way: the multi-lock holds, P1 waits on B and P2 on A, and
   * each gets it right after the unlock */
  ck_assert_int_eq(zml_lock(&m, 10000), 0);
  ck_assert_uint_gt(zml_token(&m), tok);
  owners_are(s, a, "zM");
  owners_are(s, b, "zM");
  pl_acquire(&k, "r1", "P1", "b", -1);
  pl_acquire(&k, "r2", "P2", "a", -1);
  owners_are(s, b, "zM P1");
  owners_are(s, a, "zM P2");
  pl_queue_is(&k, "P3", "B", "zM P1");
  it_sleep_ms(200);
  ck_assert(pl_pending(&k, "r1"));
  ck_assert(pl_pending(&k, "r2"));
  t_unlock = mono_us();
  zml_unlock(&m, NULL, "zM");
  int64_t t2;
  ck_assert(pl_result(&k, "r1", 10000, NULL, &t1));
  ck_assert(pl_result(&k, "r2", 10000, NULL, &t2));
  ck_assert_int_ge(t1, t_unlock);
  ck_assert_int_ge(t2, t_unlock);
  int64_t lat2 = (t1 > t2 ? t1 : t2) - t_unlock;
  /* "right after": nothing but the unlock's deletes and the watches */
  ck_assert_int_lt(lat2, 3000000 * slow());
  pl_release(&k, "P1", "b");
  pl_release(&k, "P2", "a");
  owners_are(s, a, "");
  owners_are(s, b, "");

  /* exclusion, and the order of holders per path */
  pl_log(&k, "P1");
  pl_log(&k, "P2");
  pl_log(&k, "P3");
  char seq[256];
  ck_assert_int_eq(exclusive("A", seq, sizeof seq), 4);
  ck_assert_str_eq(seq, "zM P2 zM P2");
  ck_assert_int_eq(exclusive("B", seq, sizeof seq), 4);
  ck_assert_str_eq(seq, "P1 zM zM P1");
  pl_stop(&k);
  zkl_multilock_destroy(m.m);
  owners_are(s, a, "");
  owners_are(s, b, "");
  drop_tree(s, a);
  drop_tree(s, b);
  zkl_session_close(s);
  fprintf(stderr,
          "multilock-interop: FIFO with %s: %s waiter after the unlock in "
          "%lld us, both waiters in %lld us; %lld ms\n",
          kn, kn, (long long)lat1, (long long)lat2,
          (long long)(it_now_ms() - t_start));
}

START_TEST(curator_fifo_both_ways) { fifo_both_ways(CURATOR); }
END_TEST

START_TEST(kazoo_fifo_both_ways) { fifo_both_ways(KAZOO); }
END_TEST

START_TEST(zkl_mutex_fifo_both_ways) { fifo_both_ways(ZKL); }
END_TEST

/* ---- sequential peers -------------------------------------------------------
 * A sequential peer S takes X, then - holding X - Y, with two plain
 * mutexes.  The header's argument ("every wait of a multi-lock points to
 * an older transaction") counts each plain node as a transaction of its
 * own; but S's two nodes are ONE party made at two instants, and S holds
 * the older while its younger waits.  Let sX be made at t1, the multi-lock
 * M's nodes (mX, mY, one multi) at tM, and sY at t2 > t1:
 *   t2 < tM   both of S's nodes are older: M waits for S, S never for M;
 *   tM < t1   both younger: S waits for M, M never for S;
 *   t1 < tM < t2   M's mX waits for sX (S holds X until it has Y) and S's
 *             sY waits for mY (M holds its place on Y, the head of that
 *             queue, until it has X): a cycle - a DEADLOCK, until a
 *             timeout breaks it.  M taken between S's two nodes is all it
 *             takes: S need only hold X when M queues, and the order of
 *             M's list (or S's order relative to it) does not matter - M's
 *             nodes are made at one instant, so M behaves as if it took
 *             every path in every order.
 * So a lock ordering that every client keeps does not help: the
 * multi-lock is safe beside clients that hold one lock at a time (and
 * other multi-locks), not beside clients that hold one while they wait for
 * another - the same hazard the header names for Curator's
 * InterProcessMultiLock, which is such a client.  Here: that window driven
 * into step by step, for Curator (A then B, beside zM on [B,A]), kazoo (B
 * then A, zM on [B,A]) and zkl's plain mutexes (A then B, zM on [A,B]: the
 * same order), broken by whichever timeout comes first (the peer's or
 * zM's); then the two safe interleavings; then the loops, with timeouts
 * and retries. */

/* S (client P1, mutexes "a" on A and "b" on B) takes x ("A" or "B") and
 * then the other, zM on `order` lists both; the peer's timeout on the
 * second is peer_ms, zM's ml_ms: the shorter breaks the deadlock. */
static void seq_deadlock(int kind, const char *x, const char *const *order,
                         int peer_ms, int ml_ms) {
  int64_t t_start = it_now_ms();
  labels_reset();
  all.n = 0;
  const char *pa = label_new("A", "seq"), *pb = label_new("B", "seq");
  const char *y = strcmp(x, "A") == 0 ? "B" : "A";
  const char *px = strcmp(x, "A") == 0 ? pa : pb;
  const char *py = strcmp(x, "A") == 0 ? pb : pa;
  const char *nx = strcmp(x, "A") == 0 ? "a" : "b";
  const char *ny = strcmp(x, "A") == 0 ? "b" : "a";
  const char *kn = kind_name[kind];
  zkl_session_t *s = it_session();
  pl_t k;
  pl_start(&k, kind);
  pl_open(&k, "P1");
  pl_mutex(&k, "P1", "a", "A");
  pl_mutex(&k, "P1", "b", "B");
  zml_t m;
  zml_new(&m, s, order, 2);

  /* the window: S holds X (t1), zM queues (tM), S queues on Y (t2) */
  pl_acquire(&k, "sx", "P1", nx, -1);
  ck_assert(pl_result(&k, "sx", 10000, NULL, NULL));
  owners_are(s, px, "P1");
  zwait_t w;
  zwait_start(&w, &m, ml_ms);
  owners_are(s, px, "P1 zM");
  owners_are(s, py, "zM");
  int64_t t_cycle = it_now_ms();
  pl_acquire(&k, "sy", "P1", ny, peer_ms);
  owners_are(s, py, "zM P1");
  /* the cycle: zM waits for P1 on X, P1 for zM on Y; nothing moves */
  pl_queue_is(&k, "P1", x, "P1 zM");
  pl_queue_is(&k, "P1", y, "zM P1");
  it_sleep_ms(300);
  ck_assert_int_eq(zwait_rc(&w), 99);
  ck_assert(pl_pending(&k, "sy"));
  owners_still(s, px, "P1 zM");
  owners_still(s, py, "zM P1");
  int64_t t0, t1, stuck;
  const char *broke;
  if (peer_ms < ml_ms) {
    /* S's timeout breaks it: S gives up Y (its node goes) and lets X go;
     * zM gets both */
    ck_assert(!pl_result(&k, "sy", peer_ms + 10000, &t0, &t1));
    stuck = it_now_ms() - t_cycle;
    ck_assert_int_ge(t1 - t0, (peer_ms - 50) * 1000);
    owners_are(s, py, "zM");
    owners_still(s, px, "P1 zM");
    ck_assert_int_eq(zwait_rc(&w), 99); /* X is still S's */
    pl_release(&k, "P1", nx);
    zwait_ends(&w, 0, 10000);
    owners_are(s, px, "zM");
    owners_are(s, py, "zM");
    zml_unlock(&m, NULL, "zM");
    broke = kn;
  } else {
    /* zM's timeout breaks it: ETIMEDOUT, none of its nodes left, and S
     * gets Y at once */
    int64_t took = zwait_ends(&w, ZKL_ETIMEDOUT, ml_ms + 10000);
    stuck = it_now_ms() - t_cycle;
    ck_assert_int_ge(took, ml_ms - 50);
    ck_assert_int_eq(zkl_multilock_holding(m.m), 0);
    ck_assert(pl_result(&k, "sy", 10000, NULL, NULL));
    owners_are(s, px, "P1");
    owners_are(s, py, "P1");
    pl_release(&k, "P1", ny);
    pl_release(&k, "P1", nx);
    broke = "the zkl multi-lock";
  }
  owners_are(s, pa, "");
  owners_are(s, pb, "");
  fprintf(stderr,
          "multilock-interop: %s holding %s, then waiting for %s, and zM "
          "on [%s,%s] queued in between: DEADLOCKED for %lld ms, until "
          "%s's timeout (%d ms)\n",
          kn, x, y, order[0], order[1], (long long)stuck, broke,
          peer_ms < ml_ms ? peer_ms : ml_ms);

  /* the safe interleavings.  Both of S's nodes older than zM's: zM waits
   * for S, and gets both only once S let both go */
  pl_acquire(&k, "ox", "P1", nx, -1);
  ck_assert(pl_result(&k, "ox", 10000, NULL, NULL));
  pl_acquire(&k, "oy", "P1", ny, -1);
  ck_assert(pl_result(&k, "oy", 10000, NULL, NULL));
  zwait_start(&w, &m, 20000);
  owners_are(s, px, "P1 zM");
  owners_are(s, py, "P1 zM");
  pl_release(&k, "P1", ny);
  owners_are(s, py, "zM");
  it_sleep_ms(100);
  ck_assert_int_eq(zwait_rc(&w), 99); /* X is still S's */
  pl_release(&k, "P1", nx);
  zwait_ends(&w, 0, 10000);
  /* both younger: S waits for zM on X, zM never for S; S then has X and
   * takes Y, free */
  pl_acquire(&k, "yx", "P1", nx, -1);
  owners_are(s, px, "zM P1");
  it_sleep_ms(100);
  ck_assert(pl_pending(&k, "yx"));
  zml_unlock(&m, NULL, "zM");
  ck_assert(pl_result(&k, "yx", 10000, NULL, NULL));
  pl_acquire(&k, "yy", "P1", ny, -1);
  ck_assert(pl_result(&k, "yy", 10000, NULL, NULL));
  owners_are(s, px, "P1");
  owners_are(s, py, "P1");
  pl_release(&k, "P1", ny);
  pl_release(&k, "P1", nx);

  pl_log(&k, "P1");
  /* X: S, [zM if S broke the cycle], S, zM, S; Y: [S or zM], S, zM, S */
  char seq[256], want[256];
  snprintf(want, sizeof want, "P1%s P1 zM P1",
           peer_ms < ml_ms ? " zM" : "");
  exclusive(x, seq, sizeof seq);
  ck_assert_str_eq(seq, want);
  snprintf(want, sizeof want, "%s P1 zM P1", peer_ms < ml_ms ? "zM" : "P1");
  exclusive(y, seq, sizeof seq);
  ck_assert_str_eq(seq, want);
  pl_stop(&k);
  zkl_multilock_destroy(m.m);
  owners_are(s, pa, "");
  owners_are(s, pb, "");
  drop_tree(s, pa);
  drop_tree(s, pb);
  zkl_session_close(s);
  fprintf(stderr, "multilock-interop: sequential %s, %lld ms\n", kn,
          (long long)(it_now_ms() - t_start));
}

START_TEST(sequential_peers_can_deadlock) {
  /* the timeout that breaks the cycle outlasts the checks that it holds
   * (the queues read, the peer's own view, 300 ms of nothing moving) */
  const int brk = 2000 * slow(), never = 15000 * slow();
  /* Curator A then B, zM on [B,A]; Curator's timeout breaks it */
  if (it_peer_curator_here())
    seq_deadlock(CURATOR, "A", (const char *const[]){"B", "A"}, brk, never);
  /* kazoo B then A, zM on [B,A]; zM's timeout breaks it */
  seq_deadlock(KAZOO, "B", (const char *const[]){"B", "A"}, never, brk);
  /* zkl's plain mutexes A then B, zM on [A,B] - the same order */
  seq_deadlock(ZKL, "A", (const char *const[]){"A", "B"}, never, brk);
}
END_TEST

#define SEQ_ROUNDS 30
#define SEQ_HOLD_MS 2
#define SEQ_SHORT_MS 400 /* the timeout that breaks the cycles   */
#define SEQ_LONG_MS 3000 /* the other side's                     */

/* Two pairs at once, on paths of their own: Curator P (A1 then B1, holding
 * A1 while it waits for B1) beside zM1 on [B1,A1], and kazoo K (B2 then
 * A2) beside zM2 on [B2,A2], SEQ_ROUNDS each.  Each client takes every
 * lock with a timeout; one that times out lets go what it holds and tries
 * the round again.  In the first pair Curator's timeout is the short one
 * (it breaks the cycles: its InterProcessMutex gives up its node), in the
 * second zM's (its all-or-none give-up, round after round).  What is
 * guaranteed, and checked: exclusion on every path, and every round of
 * every client done (a timeout only ever breaks a cycle; nothing is stuck
 * for good).  What is not: that no round hits the deadlock - how many
 * retries it took is printed. */
START_TEST(sequential_peers_loop) {
  int64_t t_start = it_now_ms();
  int cur = it_peer_curator_here();
  labels_reset();
  all.n = 0;
  const char *a1 = label_new("A1", "sloop"), *b1 = label_new("B1", "sloop");
  const char *a2 = label_new("A2", "sloop"), *b2 = label_new("B2", "sloop");
  zkl_session_t *s1 = it_session(), *s2 = it_session();
  pl_t kc, kk;
  memset(&kc, 0, sizeof kc);
  if (cur) {
    pl_start(&kc, CURATOR);
    pl_open(&kc, "P");
    pl_mutex(&kc, "P", "a", "A1");
    pl_mutex(&kc, "P", "b", "B1");
  }
  pl_start(&kk, KAZOO);
  pl_open(&kk, "K");
  pl_mutex(&kk, "K", "a", "A2");
  pl_mutex(&kk, "K", "b", "B2");
  zml_t m1, m2;
  zml_new(&m1, s1, (const char *const[]){"B1", "A1"}, 2);
  zml_new(&m2, s2, (const char *const[]){"B2", "A2"}, 2);
  static zloop_t z1, z2;
  int64_t t0 = it_now_ms();
  if (cur) {
    it_peer_say(kc.p, "loop L P %d %d %d a b", SEQ_ROUNDS, SEQ_HOLD_MS,
                SEQ_SHORT_MS);
    zloop_start(&z1, &m1, SEQ_ROUNDS, SEQ_HOLD_MS, SEQ_LONG_MS * slow());
  }
  it_peer_say(kk.p, "loop L K %d %d %d b a", SEQ_ROUNDS, SEQ_HOLD_MS,
              SEQ_LONG_MS);
  zloop_start(&z2, &m2, SEQ_ROUNDS, SEQ_HOLD_MS, SEQ_SHORT_MS * slow());
  int limit = (it_peer_secs() - 15) * 1000;
  int rc_retries = 0, rk_retries = 0;
  if (cur) {
    ck_assert_msg(pl_result(&kc, "L", limit, NULL, NULL),
                  "Curator: a round took over 200 tries");
    zloop_join(&z1);
    rc_retries = pl_log(&kc, "P");
  }
  ck_assert_msg(pl_result(&kk, "L", limit, NULL, NULL),
                "kazoo: a round took over 200 tries");
  zloop_join(&z2);
  rk_retries = pl_log(&kk, "K");
  int64_t took = it_now_ms() - t0;
  /* every path: zM's holds and the peer's, never two at once; the peer
   * held its second lock once a round, its first once a round and once
   * a retry at most (a retry may have timed out on the first) */
  const char *lb[4] = {"A1", "B1", "A2", "B2"};
  for (int i = cur ? 0 : 2; i < 4; i++) {
    exclusive(lb[i], NULL, 0);
    ck_assert_int_eq(holds_of(lb[i], "zM"), SEQ_ROUNDS);
  }
  if (cur) {
    ck_assert_int_eq(holds_of("B1", "P"), SEQ_ROUNDS);
    ck_assert_int_ge(holds_of("A1", "P"), SEQ_ROUNDS);
    ck_assert_int_le(holds_of("A1", "P"), SEQ_ROUNDS + rc_retries);
  }
  ck_assert_int_eq(holds_of("A2", "K"), SEQ_ROUNDS);
  ck_assert_int_ge(holds_of("B2", "K"), SEQ_ROUNDS);
  ck_assert_int_le(holds_of("B2", "K"), SEQ_ROUNDS + rk_retries);
  fprintf(stderr,
          "multilock-interop: sequential peers, %d rounds each in %lld ms: "
          "Curator (A1 then B1, %d ms) %d retries, zM1 on [B1,A1] (%d ms) "
          "%d; kazoo (B2 then A2, %d ms) %d retries, zM2 on [B2,A2] (%d ms) "
          "%d - each retry a timeout, where holds last %d ms: nearly all a "
          "deadlock broken\n",
          SEQ_ROUNDS, (long long)took, SEQ_SHORT_MS, rc_retries,
          SEQ_LONG_MS * slow(), z1.retries, SEQ_LONG_MS, rk_retries,
          SEQ_SHORT_MS * slow(), z2.retries, SEQ_HOLD_MS);
  /* nothing left, while every client's session still lives */
  const char *ps[4] = {a1, b1, a2, b2};
  for (int i = 0; i < 4; i++) owners_are(s1, ps[i], "");
  if (cur) pl_stop(&kc);
  pl_stop(&kk);
  zkl_multilock_destroy(m1.m);
  zkl_multilock_destroy(m2.m);
  for (int i = 0; i < 4; i++) {
    owners_are(s1, ps[i], "");
    drop_tree(s1, ps[i]);
  }
  zkl_session_close(s1);
  zkl_session_close(s2);
  fprintf(stderr, "multilock-interop: sequential loop %lld ms\n",
          (long long)(it_now_ms() - t_start));
}
END_TEST

/* ---- Curator's InterProcessMultiLock ----------------------------------------
 * It takes its InterProcessMutexes one by one, in list order, each with
 * the whole timeout, holding those it has; on a failure it releases them.
 * So it is a sequential peer (above): zM taken after its first node and
 * before its second deadlocks with it.  Driven into here: a zkl mutex zZ
 * holds A so that Curator's multi-lock (on [A,B], 2.5 s a lock) queues on
 * A; zM on [B,A] queues (behind it on A, first on B); zZ lets A go:
 * Curator has A and queues on B behind zM - stuck until Curator's
 * timeout, when it releases A and zM gets both.  Then 30 rounds of each
 * side, with timeouts and retries: exclusion always (Curator's holds
 * logged once its multi-lock has both; a lock it holds inside a failed
 * acquire is not seen), and every round done. */
#define CML_ROUNDS 30
#define CML_MS 400

START_TEST(curator_multilock_beside) {
  if (!it_peer_curator_here()) return;
  int64_t t_start = it_now_ms();
  labels_reset();
  all.n = 0;
  const char *a = label_new("A", "cml"), *b = label_new("B", "cml");
  zkl_session_t *s = it_session(), *s2 = it_session();
  pl_t k;
  pl_start(&k, CURATOR);
  pl_open(&k, "C");
  it_peer_ask(k.p, "ok", "multi C ml A B");
  zml_t m;
  zml_new(&m, s, (const char *const[]){"B", "A"}, 2);
  zkl_mutex_opts_t o;
  zkl_mutex_opts_init(&o);
  o.data = "zZ";
  o.data_len = 2;
  zkl_mutex_t *z = NULL;
  ck_assert_int_eq(zkl_mutex_create(&z, s2, a, &o), 0);
  ck_assert_int_eq(zkl_mutex_lock(z), 0);
  int64_t z_since = mono_ns();

  const int cur_ms = 2500 * slow(); /* outlasts the staging and checks */
  pl_acquire(&k, "c1", "C", "ml", cur_ms);
  owners_are(s, a, "zZ C");
  zwait_t w;
  zwait_start(&w, &m, 20000 * slow());
  owners_are(s, a, "zZ C zM");
  owners_are(s, b, "zM");
  int64_t t_z = mono_ns();
  span_add(&all, label_index("A"), "zZ", z_since, t_z);
  ck_assert_int_eq(zkl_mutex_unlock(z), 0);
  int64_t t_cycle = it_now_ms();
  /* Curator has A, and queues on B behind zM: the cycle */
  owners_are(s, a, "C zM");
  owners_are(s, b, "zM C");
  pl_queue_is(&k, "C", "B", "zM C");
  it_sleep_ms(300);
  owners_still(s, a, "C zM");
  owners_still(s, b, "zM C");
  ck_assert_int_eq(zwait_rc(&w), 99);
  ck_assert(pl_pending(&k, "c1"));
  /* Curator's timeout on B: it releases A; zM gets both */
  int64_t t0, t1;
  ck_assert(!pl_result(&k, "c1", cur_ms + 10000, &t0, &t1));
  int64_t stuck = it_now_ms() - t_cycle;
  zwait_ends(&w, 0, 10000);
  owners_are(s, a, "zM");
  owners_are(s, b, "zM");
  zml_unlock(&m, NULL, "zM");
  owners_are(s, a, "");
  owners_are(s, b, "");
  fprintf(stderr,
          "multilock-interop: Curator's InterProcessMultiLock holding A, "
          "waiting for B, zM on [B,A] queued in between: DEADLOCKED for "
          "%lld ms, until Curator's timeout (%d ms per lock)\n",
          (long long)stuck, cur_ms);

  /* the loops */
  static zloop_t zl;
  int64_t tl = it_now_ms();
  it_peer_say(k.p, "loop L C %d %d %d ml", CML_ROUNDS, SEQ_HOLD_MS, CML_MS);
  zloop_start(&zl, &m, CML_ROUNDS, SEQ_HOLD_MS, SEQ_LONG_MS * slow());
  ck_assert_msg(pl_result(&k, "L", (it_peer_secs() - 15) * 1000, NULL, NULL),
                "Curator: a round took over 200 tries");
  zloop_join(&zl);
  int cretries = pl_log(&k, "C");
  int64_t took = it_now_ms() - tl;
  /* Curator's multi-lock logs a hold only when it has both: once a round
   * on each path; zM once a round, and once before the loops */
  ck_assert_int_eq(exclusive("A", NULL, 0), 1 + 1 + 2 * CML_ROUNDS);
  ck_assert_int_eq(exclusive("B", NULL, 0), 1 + 2 * CML_ROUNDS);
  ck_assert_int_eq(holds_of("A", "C"), CML_ROUNDS);
  ck_assert_int_eq(holds_of("B", "C"), CML_ROUNDS);
  fprintf(stderr,
          "multilock-interop: Curator's InterProcessMultiLock on [A,B] and "
          "zM on [B,A], %d rounds each in %lld ms: Curator %d retries, zM "
          "%d (timeouts %d ms and %d ms)\n",
          CML_ROUNDS, (long long)took, cretries, zl.retries, CML_MS,
          SEQ_LONG_MS * slow());
  owners_are(s, a, ""); /* nothing left, while the peer still lives */
  owners_are(s, b, "");
  pl_stop(&k);
  zkl_multilock_destroy(m.m);
  zkl_mutex_destroy(z);
  owners_are(s, a, "");
  owners_are(s, b, "");
  drop_tree(s, a);
  drop_tree(s, b);
  zkl_session_close(s);
  zkl_session_close(s2);
  fprintf(stderr, "multilock-interop: Curator's multi-lock %lld ms\n",
          (long long)(it_now_ms() - t_start));
}
END_TEST

Suite *multilock_interop_suite(void) {
  Suite *su = suite_create("multilock-interop");
  TCase *tc = it_tcase("multilock-interop");
  tcase_add_unchecked_fixture(tc, suite_setup, it_peer_teardown);
  tcase_add_test(tc, curator_fifo_both_ways);
  tcase_add_test(tc, kazoo_fifo_both_ways);
  tcase_add_test(tc, zkl_mutex_fifo_both_ways);
  tcase_add_test(tc, sequential_peers_can_deadlock);
  tcase_add_test(tc, sequential_peers_loop);
  tcase_add_test(tc, curator_multilock_beside);
  suite_add_tcase(su, tc);
  return su;
}
