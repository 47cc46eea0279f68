/* tests/integration/test-barrier-interop.c - zkl's barriers with the peers,
 * live and both ways, on the same nodes: Curator 5.4's DistributedBarrier
 * and DistributedDoubleBarrier (a small Java program, CuratorBarrierPeer,
 * compiled here) and python3-kazoo's Barrier and DoubleBarrier
 * (barrier_peer.py).
 *  - The barrier: Curator sets it, zkl waits (really) and kazoo's remove
 *    releases it; zkl sets it, Curator and kazoo wait and zkl's remove
 *    releases both; a remove of a barrier nobody set (or Curator removed)
 *    is ZKL_ENOENT.
 *  - The double barrier with members of all three on one path: nobody
 *    gets through enter before the last member arrived, nobody's leave
 *    returns before the last leaver began (the order of leaving picked so
 *    that Curator's and kazoo's leave can keep that too), nothing is left
 *    behind; zkl_dbarrier_count() agrees with the peers' view all along.
 *  - A zkl timed enter that gives up takes its member node away (Curator's
 *    keeps it), and lets nobody through; Curator 5.4's timed enter returns
 *    true after any event of its watch, which a connection blip provides:
 *    it goes through alone; zkl, in the same blip and with members coming
 *    and going, goes through only once `ready` exists.
 *
 * The tcase "barrier-interop" needs Curator (a JDK and Debian's
 * libcurator-recipes-java; its tests that mix the two peers need kazoo
 * too); "barrier-interop-kazoo" runs kazoo's steps whenever python3-kazoo
 * is there, Curator or not: kazoo sets and removes the barrier zkl waits
 * on, waits on zkl's, says False removing one never set, and is a member
 * of the double barrier with two zkl members (each side last in turn).
 *
 * The peers are driven through their stdin, one command a line; a blocking
 * call runs on a thread of the peer and reports later on a line of its own
 * ("@TAG RESULT T0 T1", wall-clock microseconds, comparable across the
 * processes).  They exit by themselves (a watchdog) shortly before the
 * test's own timeout.  Every test works on its own nodes
 * (/zkl-test/bix-<run>-<tag>-..., bixk-... for the kazoo tcase) and deletes
 * them at its end; each tcase's teardown sweeps what a failed test left. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "itest.h"

/* How long a peer's answer may take (ms): a JVM's first call is slow. */
#define ANSWER_MS 30000
/* How long we watch a waiter that must not get through (ms). */
#define STILL_MS 300

/* The wall clock in microseconds: the peers' clock too. */
static int64_t wall_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---- the peers (peer.c) -------------------------------------------------- */

static void suite_setup(void) {
  it_peer_setup("barrier-interop", "bix", "CuratorBarrierPeer");
}

/* The kazoo tcase: no Java peer to compile, nodes of its own prefix. */
static void kazoo_setup(void) {
  it_peer_setup("barrier-interop", "bixk", NULL);
}

static void curator(it_peer_t *p) {
  it_peer_curator(p, "CuratorBarrierPeer");
  p->answer_ms = ANSWER_MS;
}

static void kazoo(it_peer_t *p) {
  it_peer_kazoo(p, "barrier_peer.py");
  p->answer_ms = ANSWER_MS;
}

/* ---- nodes --------------------------------------------------------------- */

/* The double barrier at path ended empty: no member node, no `ready` (the
 * path itself, a container, may be gone already); it is deleted. */
static void dbarrier_gone(zkl_session_t *s, const char *path) {
  zhandle_t *zh = zkl_session_zhandle(s);
  struct String_vector kids = {0, NULL};
  int rc = zoo_get_children(zh, path, 0, &kids);
  ck_assert_msg(rc == ZOK || rc == ZNONODE, "children of %s: %s", path,
                zerror(rc));
  if (rc == ZOK) {
    int n = kids.count;
    char first[128];
    snprintf(first, sizeof first, "%s", n > 0 ? kids.data[0] : "");
    deallocate_String_vector(&kids);
    ck_assert_msg(n == 0, "%s keeps %d nodes (%s...)", path, n, first);
    rc = zoo_delete(zh, path, -1);
    ck_assert_msg(rc == ZOK || rc == ZNONODE, "delete %s: %s", path,
                  zerror(rc));
  }
}

/* ---- the double barrier's members: zkl objects in threads, or a peer's --- */

typedef struct member {
  const char *label;   /* its node's data: "zkl-1", "curator-c", "kazoo-k" */
  it_peer_t *peer;     /* the peer's member (label = "<peer>-<tag>"), or */
  zkl_dbarrier_t *d;   /* a zkl object on a thread */
  const char *tag;     /* the peer's name of it */
  pthread_t th;
  int leaving, started;
  int64_t timeout_ms;
  int rc;              /* zkl: 99 while underway */
  int64_t t0, t1;      /* wall clock (us) around the last call */
  char detail[256];    /* zkl: zkl_last_error() of a failed call */
} member_t;

static zkl_dbarrier_t *dbar(zkl_session_t *s, const char *path, int members,
                            const char *data) {
  zkl_dbarrier_opts_t o = {.data = data, .data_len = strlen(data)};
  zkl_dbarrier_t *d = NULL;
  int rc = zkl_dbarrier_create(&d, s, path, members, &o);
  ck_assert_msg(rc == 0, "dbarrier_create %s: %s", path, it_code(rc));
  return d;
}

static void zkl_member(member_t *m, zkl_session_t *s, const char *path,
                       int members, const char *label) {
  memset(m, 0, sizeof *m);
  m->label = label;
  m->d = dbar(s, path, members, label);
}

/* The peer's member `tag` (a Curator member: a session of its own, to
 * `hosts` if not NULL). */
static void peer_member(member_t *m, it_peer_t *p, const char *path,
                        int members, const char *label, const char *hosts) {
  memset(m, 0, sizeof *m);
  m->label = label;
  m->peer = p;
  m->tag = strchr(label, '-') + 1;
  if (hosts != NULL)
    it_peer_ask(p, "ok", "member %s %s %d %s", m->tag, path, members, hosts);
  else
    it_peer_ask(p, "ok", "member %s %s %d", m->tag, path, members);
}

static int is_curator(const member_t *m) {
  return strncmp(m->label, "curator", 7) == 0;
}

static void *member_main(void *arg) {
  member_t *m = arg;
  m->t0 = wall_us();
  int rc = m->leaving ? zkl_dbarrier_leave(m->d, m->timeout_ms)
                      : zkl_dbarrier_enter(m->d, m->timeout_ms);
  m->t1 = wall_us();
  snprintf(m->detail, sizeof m->detail, "%s",
           rc != 0 && zkl_last_error() != NULL ? zkl_last_error() : "");
  __atomic_store_n(&m->rc, rc, __ATOMIC_SEQ_CST);
  return NULL;
}

/* Starts the member's enter (leaving 0) or leave, with that timeout (kazoo
 * has none). */
static void member_start(member_t *m, int leaving, int64_t timeout_ms) {
  m->leaving = leaving;
  m->timeout_ms = timeout_ms;
  m->started = 1;
  if (m->peer != NULL) {
    if (is_curator(m))
      it_peer_say(m->peer, "%s %s %lld", leaving ? "leave" : "enter", m->tag,
               (long long)timeout_ms);
    else
      it_peer_say(m->peer, "%s %s", leaving ? "leave" : "enter", m->tag);
    return;
  }
  m->rc = 99;
  ck_assert_int_eq(pthread_create(&m->th, NULL, member_main, m), 0);
}

/* Whether the member's call is still underway. */
static int member_pending(member_t *m) {
  if (m->peer != NULL) return it_peer_pending(m->peer, m->tag);
  return __atomic_load_n(&m->rc, __ATOMIC_SEQ_CST) == 99;
}

/* Waits for the member's call (a peer's: up to timeout_ms; zkl's ends by
 * its own deadline) and returns what it said: "ok" (zkl 0, a peer's
 * "true"), or zkl's code / the peer's word; t0/t1 are filled. */
static const char *member_finish(member_t *m, int timeout_ms) {
  static __thread char what[384];
  m->started = 0;
  if (m->peer != NULL) {
    it_peer_result_t r = it_peer_result(m->peer, m->tag, timeout_ms);
    m->t0 = r.t0;
    m->t1 = r.t1;
    snprintf(what, sizeof what, "%s",
             strcmp(r.what, "true") == 0 ? "ok" : r.what);
    return what;
  }
  pthread_join(m->th, NULL);
  m->rc = __atomic_load_n(&m->rc, __ATOMIC_SEQ_CST);
  if (m->rc == 0) snprintf(what, sizeof what, "ok");
  else snprintf(what, sizeof what, "%s: %s", it_code(m->rc), m->detail);
  return what;
}

static void member_ok(member_t *m, int timeout_ms) {
  const char *what = member_finish(m, timeout_ms);
  ck_assert_msg(strcmp(what, "ok") == 0, "%s's %s: %s", m->label,
                m->leaving ? "leave" : "enter", what);
}

/* A zkl member must be joined before the test ends (its thread uses it). */
static void member_end(member_t *m) {
  if (m->peer == NULL && m->started) member_finish(m, 0);
  if (m->d != NULL) zkl_dbarrier_destroy(m->d);
  m->d = NULL;
}

/* ---- counting ------------------------------------------------------------ */

typedef struct count_arg {
  zkl_dbarrier_t *obs;
  size_t n;
  int ready;
} count_arg_t;

static int count_now_is(void *arg) {
  count_arg_t *c = arg;
  size_t n = 0;
  int ready = -1;
  return zkl_dbarrier_count(c->obs, &n, &ready) == 0 && n == c->n &&
         ready == c->ready;
}

/* zkl_dbarrier_count() says (n, ready) within 10 s, and so do the peers
 * (each NULL-terminated peer's view of the path's children). */
static void count_is(zkl_dbarrier_t *obs, const char *path, size_t n,
                     int ready, it_peer_t *const *peers) {
  count_arg_t c = {obs, n, ready};
  if (!it_wait_until(count_now_is, &c, 10000)) {
    size_t got = 0;
    int r = -1;
    int rc = zkl_dbarrier_count(obs, &got, &r);
    ck_abort_msg("count %s: %s, %zu members, ready %d; not %zu, ready %d",
                 path, it_code(rc), got, r, n, ready);
  }
  char want[64];
  snprintf(want, sizeof want, "ok %zu %d", n, ready);
  for (int i = 0; peers != NULL && peers[i] != NULL; i++)
    it_peer_ask(peers[i], want, "count %s", path);
}

/* The label (the data) of the lowest member node of path. */
static void lowest_label(zkl_session_t *s, const char *path, char *label,
                         size_t len) {
  zhandle_t *zh = zkl_session_zhandle(s);
  struct String_vector kids = {0, NULL};
  int rc = zoo_get_children(zh, path, 0, &kids);
  ck_assert_msg(rc == ZOK, "children of %s: %s", path, zerror(rc));
  const char *low = NULL;
  for (int i = 0; i < kids.count; i++)
    if (strcmp(kids.data[i], "ready") != 0 &&
        (low == NULL || strcmp(kids.data[i], low) < 0))
      low = kids.data[i];
  ck_assert_ptr_nonnull(low);
  char node[1024];
  snprintf(node, sizeof node, "%s/%s", path, low);
  deallocate_String_vector(&kids); /* low is gone with it: node has it */
  int l = (int)len - 1;
  rc = zoo_get(zh, node, 0, label, &l, NULL);
  ck_assert_msg(rc == ZOK, "get %s: %s", node, zerror(rc));
  label[l < 0 ? 0 : l] = '\0';
}

/* ---- entering and leaving together --------------------------------------- */

/* ms[0..n-1] enter in that order, each counted before the next comes; the
 * first n-1 still wait STILL_MS later, nobody through and `ready` absent;
 * then the last arrives and everyone gets through, none of them before
 * the last one's enter began. */
static void enter_together(zkl_dbarrier_t *obs, const char *path,
                           member_t *const *ms, int n,
                           it_peer_t *const *peers) {
  for (int a = 0; a < n - 1; a++) {
    member_start(ms[a], 0, 30000);
    count_is(obs, path, (size_t)a + 1, 0, peers);
  }
  it_sleep_ms(STILL_MS);
  for (int a = 0; a < n - 1; a++)
    ck_assert_msg(member_pending(ms[a]),
                  "%s got through enter with %d of %d members",
                  ms[a]->label, n - 1, n);
  count_is(obs, path, (size_t)n - 1, 0, peers);
  member_t *last = ms[n - 1];
  int64_t arrived = wall_us();
  member_start(last, 0, 30000);
  for (int a = 0; a < n; a++) member_ok(ms[a], ANSWER_MS);
  if (last->peer == NULL) arrived = last->t0; /* its own, not ours */
  else if (last->t0 > arrived) arrived = last->t0;
  for (int a = 0; a < n - 1; a++)
    ck_assert_msg(ms[a]->t1 >= arrived,
                  "%s got through enter %lld us before %s arrived",
                  ms[a]->label, (long long)(arrived - ms[a]->t1),
                  last->label);
  count_is(obs, path, (size_t)n, 1, peers);
}

/* Everyone leaves, `last` last: the others first, who still wait STILL_MS
 * later; none of them returns before last's leave began; nothing is left
 * (no member node, no `ready`).  `remaining`: the member nodes left while
 * they wait; ready_kept: whether `ready` is still there then. */
static void leave_together(zkl_dbarrier_t *obs, const char *path,
                           member_t *const *ms, int n, member_t *last,
                           size_t remaining, int ready_kept,
                           it_peer_t *const *peers) {
  for (int a = 0; a < n; a++)
    if (ms[a] != last) member_start(ms[a], 1, 30000);
  count_is(obs, path, remaining, ready_kept, peers);
  it_sleep_ms(STILL_MS);
  for (int a = 0; a < n; a++)
    ck_assert_msg(ms[a] == last || member_pending(ms[a]),
                  "%s's leave returned before %s began to leave",
                  ms[a]->label, last->label);
  count_is(obs, path, remaining, ready_kept, peers);
  int64_t began = wall_us();
  member_start(last, 1, 30000);
  for (int a = 0; a < n; a++) member_ok(ms[a], ANSWER_MS);
  if (last->peer == NULL || last->t0 > began) began = last->t0;
  for (int a = 0; a < n; a++)
    ck_assert_msg(ms[a]->t1 >= began,
                  "%s's leave returned %lld us before %s's began",
                  ms[a]->label, (long long)(began - ms[a]->t1),
                  last->label);
  count_is(obs, path, 0, 0, peers);
}

/* Who leaves last, so that each side's protocol holds beside the others':
 * Curator's leave deletes its node at once and returns as soon as a single
 * member node is left, whoever's; kazoo's returns (on an error it
 * swallows) as soon as the lowest node is gone; zkl's and kazoo's lowest
 * member keeps its node until it is alone.  So if the lowest node is
 * Curator's, that member leaves last (the others wait for it); otherwise
 * any member but the lowest may, the lowest holding everyone until the
 * last one has begun: `prefer` unless it is the lowest, else the first of
 * ms that is not.  *remaining and *ready_kept: what leave_together() sees
 * while the others wait. */
static member_t *last_leaver(zkl_session_t *s, const char *path,
                             member_t *const *ms, int n, member_t *prefer,
                             size_t *remaining, int *ready_kept) {
  char low[64];
  lowest_label(s, path, low, sizeof low);
  member_t *lowest = NULL;
  for (int a = 0; a < n; a++)
    if (strcmp(ms[a]->label, low) == 0) lowest = ms[a];
  ck_assert_msg(lowest != NULL, "the lowest member node holds \"%s\"", low);
  member_t *last = prefer;
  if (is_curator(lowest)) last = lowest;
  for (int a = 0; last == lowest && !is_curator(lowest) && a < n; a++)
    last = ms[a];
  *remaining = last == lowest ? 1 : 2;
  /* kazoo's leave deletes `ready` as it begins; Curator's and zkl's once
   * they are out */
  *ready_kept = 1;
  for (int a = 0; a < n; a++)
    if (ms[a] != last && ms[a]->peer != NULL && !is_curator(ms[a]))
      *ready_kept = 0;
  fprintf(stderr, "barrier-interop: lowest %s, %s leaves last\n", low,
          last->label);
  return last;
}

/* ---- the barrier --------------------------------------------------------- */

static zkl_barrier_t *barrier(zkl_session_t *s, const char *path) {
  zkl_barrier_t *b = NULL;
  int rc = zkl_barrier_create(&b, s, path);
  ck_assert_msg(rc == 0, "barrier_create %s: %s", path, it_code(rc));
  return b;
}

/* A zkl_barrier_wait() on a thread. */
typedef struct waiter {
  zkl_barrier_t *b;
  pthread_t th;
  int rc; /* 99 while underway */
  int64_t t0, t1;
} waiter_t;

static void *wait_main(void *arg) {
  waiter_t *w = arg;
  w->t0 = wall_us();
  int rc = zkl_barrier_wait(w->b, 20000);
  w->t1 = wall_us();
  __atomic_store_n(&w->rc, rc, __ATOMIC_SEQ_CST);
  return NULL;
}

typedef struct watched {
  const char *path;
  int64_t except;
  int n;
} watched_t;

/* At least n sessions (but `except`) watch path, per the server. */
static int watched_by(void *arg) {
  watched_t *w = arg;
  char *wchp = it_4lw("wchp");
  int n = it_watchers_of(wchp, w->path, w->except);
  free(wchp);
  return n >= w->n;
}

static void watchers_wait(const char *path, int64_t except, int n) {
  watched_t w = {path, except, n};
  ck_assert_msg(it_wait_until(watched_by, &w, 10000),
                "%s: not %d sessions watching it", path, n);
}

static int exists(zkl_session_t *s, const char *path, struct Stat *st) {
  struct Stat dummy;
  return zoo_exists(zkl_session_zhandle(s), path, 0,
                    st != NULL ? st : &dummy) == ZOK;
}

/* A peer sets the barrier (Curator with with_curator, else kazoo); zkl
 * waits and really waits (its watch on the server, still blocked STILL_MS
 * later, and a zero-timeout wait says closed); kazoo's remove() releases
 * it. */
static void peer_sets_zkl_waits_kazoo_removes(int with_curator) {
  const char *setter = with_curator ? "Curator" : "kazoo";
  char path[256];
  it_peer_node(path, sizeof path, with_curator ? "bset" : "bsetk");
  zkl_session_t *s = it_session();
  zkl_barrier_t *b = barrier(s, path);
  it_peer_t j, k;
  if (with_curator) curator(&j);
  kazoo(&k);
  int rc = zkl_barrier_wait(b, 0);
  ck_assert_msg(rc == 0, "wait on a barrier never set: %s", it_code(rc));
  it_peer_ask(with_curator ? &j : &k, "ok", "b-set %s", path);
  ck_assert(exists(s, path, NULL));
  rc = zkl_barrier_wait(b, 0);
  ck_assert_msg(rc == ZKL_ETIMEDOUT, "wait(0) on %s's barrier: %s", setter,
                it_code(rc));
  waiter_t w = {.b = b, .rc = 99};
  ck_assert_int_eq(pthread_create(&w.th, NULL, wait_main, &w), 0);
  watchers_wait(path, 0, 1);
  it_sleep_ms(STILL_MS);
  ck_assert_msg(__atomic_load_n(&w.rc, __ATOMIC_SEQ_CST) == 99,
                "zkl's wait returned %s on a closed barrier",
                it_code(w.rc));
  int64_t removed = wall_us();
  it_peer_ask(&k, "ok True", "b-remove %s", path);
  pthread_join(w.th, NULL);
  ck_assert_msg(w.rc == 0, "wait: %s", it_code(w.rc));
  ck_assert_msg(w.t1 >= removed, "zkl's wait returned before kazoo removed");
  ck_assert(!exists(s, path, NULL));
  ck_assert_int_eq(zkl_barrier_wait(b, 0), 0);
  if (with_curator) it_peer_quit(&j);
  it_peer_quit(&k);
  zkl_barrier_destroy(b);
  zkl_session_close(s);
}

START_TEST(barrier_curator_sets_zkl_waits_kazoo_removes) {
  if (it_peer_curator_here() && it_peer_kazoo_here())
    peer_sets_zkl_waits_kazoo_removes(1);
}
END_TEST

/* The same with kazoo alone (no Curator needed). */
START_TEST(barrier_kazoo_sets_zkl_waits_kazoo_removes) {
  if (it_peer_kazoo_here()) peer_sets_zkl_waits_kazoo_removes(0);
}
END_TEST

/* zkl sets the barrier (a persistent empty node); the peer's wait -
 * Curator's waitOnBarrier(ms) (curator 1) or kazoo's wait(timeout) - blocks
 * on it (its watch on the server, still waiting STILL_MS later);
 * zkl_barrier_remove() releases it, true. */
static void zkl_sets_peer_waits_zkl_removes(int curator_peer) {
  char path[256];
  it_peer_node(path, sizeof path, curator_peer ? "bzkl" : "bzklk");
  zkl_session_t *s = it_session();
  zkl_barrier_t *b = barrier(s, path);
  it_peer_t p;
  const char *tag = curator_peer ? "cw" : "kw";
  const char *who = curator_peer ? "Curator" : "kazoo";
  if (curator_peer) curator(&p);
  else kazoo(&p);
  int rc = zkl_barrier_set(b);
  ck_assert_msg(rc == 0, "set: %s", it_code(rc));
  struct Stat st;
  ck_assert(exists(s, path, &st));
  ck_assert_int_eq(st.ephemeralOwner, 0);
  ck_assert_int_eq(st.dataLength, 0);
  ck_assert_int_eq(zkl_barrier_set(b), 0); /* closed already: fine */
  it_peer_say(&p, "b-wait %s %s 20000", tag, path);
  watchers_wait(path, zkl_session_id(s), 1);
  it_sleep_ms(STILL_MS);
  ck_assert_msg(it_peer_pending(&p, tag), "%s's wait ended: %s", who,
                it_peer_result(&p, tag, 0).what);
  int64_t removed = wall_us();
  rc = zkl_barrier_remove(b);
  ck_assert_msg(rc == 0, "remove: %s", it_code(rc));
  it_peer_result_t pw = it_peer_result(&p, tag, 10000);
  ck_assert_msg(strcmp(pw.what, "true") == 0, "%s's wait: %s", who, pw.what);
  ck_assert_msg(pw.t1 >= removed,
                "%s's wait returned before zkl removed the barrier", who);
  ck_assert_msg(pw.t1 - pw.t0 >= STILL_MS * 1000, "%s waited %lld us", who,
                (long long)(pw.t1 - pw.t0));
  ck_assert(!exists(s, path, NULL));
  it_peer_quit(&p);
  zkl_barrier_destroy(b);
  zkl_session_close(s);
}

START_TEST(barrier_zkl_sets_curator_waits_zkl_removes) {
  if (!it_peer_curator_here()) return;
  zkl_sets_peer_waits_zkl_removes(1);
}
END_TEST

START_TEST(barrier_zkl_sets_kazoo_waits_zkl_removes) {
  if (!it_peer_kazoo_here()) return;
  zkl_sets_peer_waits_zkl_removes(0);
}
END_TEST

/* A barrier nobody set: the peer's wait passes at once, zkl's remove is
 * ZKL_ENOENT and the peer's says so in its way (Curator's removeBarrier is
 * silent, kazoo's remove says False); the same once the peer set it and
 * removed it again (kazoo's remove then says True). */
static void remove_never_set_is_enoent(int with_kazoo) {
  const char *who = with_kazoo ? "kazoo" : "Curator";
  char path[256];
  it_peer_node(path, sizeof path, with_kazoo ? "bnonek" : "bnone");
  zkl_session_t *s = it_session();
  zkl_barrier_t *b = barrier(s, path);
  it_peer_t p;
  if (with_kazoo) kazoo(&p);
  else curator(&p);
  it_peer_say(&p, "b-wait w %s 5000", path);
  it_peer_result_t r = it_peer_result(&p, "w", 10000);
  ck_assert_msg(strcmp(r.what, "true") == 0, "%s's wait: %s", who, r.what);
  int rc = zkl_barrier_remove(b);
  ck_assert_msg(rc == ZKL_ENOENT, "remove of a barrier never set: %s",
                it_code(rc));
  it_peer_ask(&p, with_kazoo ? "ok False" : "ok", "b-remove %s", path);
  it_peer_ask(&p, "ok", "b-set %s", path);
  ck_assert_int_eq(zkl_barrier_wait(b, 0), ZKL_ETIMEDOUT);
  it_peer_ask(&p, with_kazoo ? "ok True" : "ok", "b-remove %s", path);
  ck_assert_int_eq(zkl_barrier_wait(b, 0), 0);
  rc = zkl_barrier_remove(b);
  ck_assert_msg(rc == ZKL_ENOENT, "remove of a barrier %s removed: %s", who,
                it_code(rc));
  ck_assert(!exists(s, path, NULL));
  it_peer_quit(&p);
  zkl_barrier_destroy(b);
  zkl_session_close(s);
}

START_TEST(barrier_remove_never_set_is_enoent) {
  if (it_peer_curator_here()) remove_never_set_is_enoent(0);
}
END_TEST

START_TEST(barrier_kazoo_remove_never_set_is_enoent) {
  if (it_peer_kazoo_here()) remove_never_set_is_enoent(1);
}
END_TEST

/* ---- the double barrier, mixed ------------------------------------------- */

/* Members on one path: two zkl objects (threads of one session), a Curator
 * member (if curator_too) and a kazoo member; the last to arrive is zkl
 * (last 0), Curator (1) or kazoo (2).  Nobody gets through before the last
 * one arrives; nobody's leave returns before the last leaver's began (the
 * last leaver chosen by last_leaver() from where the member nodes sort);
 * the count agrees with the peers' all along; nothing is left. */
static void dbarrier_members(int curator_too, int last_kind) {
  const int members = curator_too ? 4 : 3;
  char path[256];
  it_peer_node(path, sizeof path, curator_too ? "mixed" : "mixedk");
  zkl_session_t *s = it_session();
  zkl_dbarrier_t *obs = dbar(s, path, members, "zkl-observer");
  it_peer_t j, k;
  if (curator_too) curator(&j);
  kazoo(&k);
  it_peer_t *const both[] = {&j, &k, NULL}, *const konly[] = {&k, NULL};
  it_peer_t *const *peers = curator_too ? both : konly;
  count_is(obs, path, 0, 0, peers);
  member_t z1, z2, c, kz;
  zkl_member(&z1, s, path, members, "zkl-1");
  zkl_member(&z2, s, path, members, "zkl-2");
  if (curator_too) peer_member(&c, &j, path, members, "curator-c", NULL);
  peer_member(&kz, &k, path, members, "kazoo-k", NULL);
  /* zkl-1 first (zkl makes the path, a container), the chosen one last */
  member_t *last = last_kind == 0 ? &z2 : last_kind == 1 ? &c : &kz;
  member_t *order[4] = {&z1};
  int n = 1;
  member_t *others[] = {&z2, &c, &kz};
  for (int a = 0; a < 3; a++)
    if (others[a] != last && (curator_too || others[a] != &c))
      order[n++] = others[a];
  order[n++] = last;
  enter_together(obs, path, order, n, peers);
  size_t remaining;
  int ready_kept;
  member_t *out = last_leaver(s, path, order, n, last, &remaining,
                              &ready_kept);
  leave_together(obs, path, order, n, out, remaining, ready_kept, peers);
  if (curator_too) it_peer_quit(&j);
  it_peer_quit(&k);
  for (int a = 0; a < n; a++) member_end(order[a]);
  zkl_dbarrier_destroy(obs);
  dbarrier_gone(s, path);
  zkl_session_close(s);
}

/* Four members: zkl, zkl, Curator, kazoo; _i: who arrives last (zkl,
 * Curator, kazoo). */
START_TEST(dbarrier_mixed_members) {
  if (!it_peer_curator_here() || !it_peer_kazoo_here()) return;
  dbarrier_members(1, _i);
}
END_TEST

/* Three members without Curator: zkl, zkl, kazoo; _i: who arrives last
 * (zkl, kazoo). */
START_TEST(dbarrier_kazoo_members) {
  if (!it_peer_kazoo_here()) return;
  dbarrier_members(0, _i == 0 ? 0 : 2);
}
END_TEST

/* ---- timed enters -------------------------------------------------------- */

/* members 3, two arrive: a Curator member, then zkl with a timeout.  zkl
 * gives up at its deadline (ZKL_ETIMEDOUT), its node gone at once; the
 * Curator member still waits and does not get through (false at its own
 * deadline; its node stays: Curator 5.4's timed enter leaves it). */
START_TEST(zkl_timed_enter_gives_up_curator_stays_out) {
  if (!it_peer_curator_here()) return;
  char path[256];
  it_peer_node(path, sizeof path, "tmo");
  zkl_session_t *s = it_session();
  zkl_dbarrier_t *obs = dbar(s, path, 3, "zkl-observer");
  it_peer_t j;
  curator(&j);
  it_peer_t *const peers[] = {&j, NULL};
  member_t c;
  peer_member(&c, &j, path, 3, "curator-c", NULL);
  member_start(&c, 0, 4000);
  count_is(obs, path, 1, 0, peers);
  zkl_dbarrier_t *z = dbar(s, path, 3, "zkl-1");
  int64_t t0 = it_now_ms();
  int rc = zkl_dbarrier_enter(z, 1000);
  int64_t took = it_now_ms() - t0;
  ck_assert_msg(rc == ZKL_ETIMEDOUT, "enter with 2 of 3: %s", it_code(rc));
  ck_assert_msg(took >= 990 && took < 3500, "gave up after %lld ms",
                (long long)took);
  size_t n = 99;
  int ready = -1;
  ck_assert_int_eq(zkl_dbarrier_count(obs, &n, &ready), 0);
  ck_assert_msg(n == 1 && ready == 0,
                "after zkl gave up: %zu members, ready %d", n, ready);
  count_is(obs, path, 1, 0, peers);
  ck_assert_msg(member_pending(&c), "Curator got through with 1 of 3");
  const char *what = member_finish(&c, 10000);
  ck_assert_msg(strcmp(what, "false") == 0,
                "Curator's enter with 1 of 3: %s", what);
  ck_assert_msg(c.t1 - c.t0 >= 3900000, "Curator gave up after %lld us",
                (long long)(c.t1 - c.t0));
  /* Curator 5.4 leaves its node when its timed enter gives up */
  count_is(obs, path, 1, 0, peers);
  it_peer_ask(&j, "ok", "close c");
  count_is(obs, path, 0, 0, peers);
  it_peer_quit(&j);
  zkl_dbarrier_destroy(z);
  zkl_dbarrier_destroy(obs);
  dbarrier_gone(s, path);
  zkl_session_close(s);
}
END_TEST

/* Curator 5.4's DistributedDoubleBarrier.enter(ms) waits once for an
 * event of its one watch (an existence watch on `ready`, set before its
 * node is made) and then returns true whatever the event was.
 *  - zkl members that arrive and give up (their nodes made and deleted)
 *    are no event of that watch: a Curator member waiting with them stays
 *    in (members 3: Curator and one zkl at a time never make 3).
 *  - A connection blip is: its client's connection cut just after its
 *    getChildren went out (Curator retries it once reconnected), the
 *    Disconnected and SyncConnected events wake the wait that follows and
 *    Curator's enter returns true, alone (1 member of 3, no `ready`).
 * zkl in the same place: zkl_timed_enter_passes_only_with_ready. */
START_TEST(curator_timed_enter_through_alone) {
  if (!it_peer_curator_here()) return;
  char path[256], alone[256];
  it_peer_node(path, sizeof path, "cbug");
  it_peer_node(alone, sizeof alone, "calone");
  zkl_session_t *s = it_session();
  zkl_dbarrier_t *obs = dbar(s, path, 3, "zkl-observer");
  it_peer_t j;
  curator(&j);
  it_peer_t *const peers[] = {&j, NULL};
  /* zkl members come and go: Curator's watch hears nothing */
  member_t c1;
  peer_member(&c1, &j, path, 3, "curator-c1", NULL);
  member_start(&c1, 0, 2500);
  count_is(obs, path, 1, 0, peers);
  for (int i = 0; i < 2; i++) {
    zkl_dbarrier_t *z = dbar(s, path, 3, i == 0 ? "zkl-1" : "zkl-2");
    int rc = zkl_dbarrier_enter(z, 300);
    ck_assert_msg(rc == ZKL_ETIMEDOUT, "zkl enter with 2 of 3: %s",
                  it_code(rc));
    zkl_dbarrier_destroy(z);
    count_is(obs, path, 1, 0, peers);
    ck_assert_msg(member_pending(&c1),
                  "Curator got through as a zkl member gave up");
  }
  const char *what = member_finish(&c1, 10000);
  ck_assert_msg(strcmp(what, "false") == 0, "Curator's enter alone: %s",
                what);
  it_peer_ask(&j, "ok", "close c1");
  count_is(obs, path, 0, 0, peers);
  /* a connection blip: through alone */
  it_proxy_t *x = it_proxy_start();
  char hosts[64];
  snprintf(hosts, sizeof hosts, "127.0.0.1:%d", it_proxy_port(x));
  zkl_dbarrier_t *obs2 = dbar(s, alone, 3, "zkl-observer");
  member_t c2;
  peer_member(&c2, &j, alone, 3, "curator-c2", hosts);
  it_proxy_cut_after(x, ZOO_GETCHILDREN2_OP);
  member_start(&c2, 0, 8000);
  what = member_finish(&c2, 15000);
  ck_assert_int_eq(it_proxy_cuts(x), 1);
  size_t n = 99;
  int ready = -1;
  ck_assert_int_eq(zkl_dbarrier_count(obs2, &n, &ready), 0);
  fprintf(stderr,
          "barrier-interop: Curator's timed enter, 1 member of 3, through a "
          "connection blip: %s after %lld ms (%zu members, ready %d)\n",
          what, (long long)(c2.t1 - c2.t0) / 1000, n, ready);
  ck_assert_msg(strcmp(what, "ok") == 0 && n == 1 && ready == 0,
                "Curator 5.4's timed enter did not go through alone (%s, "
                "%zu members, ready %d): not the Curator this test knows",
                what, n, ready);
  it_peer_ask(&j, "ok", "close c2");
  count_is(obs2, alone, 0, 0, peers);
  it_peer_quit(&j);
  it_proxy_stop(x);
  zkl_dbarrier_destroy(obs);
  zkl_dbarrier_destroy(obs2);
  dbarrier_gone(s, path);
  dbarrier_gone(s, alone);
  zkl_session_close(s);
}
END_TEST

/* The proxy has cut n connections (within 5 s). */
static void cuts_wait(it_proxy_t *x, int n) {
  for (int64_t end = it_now_ms() + 5000;
       it_proxy_cuts(x) < n && it_now_ms() < end;)
    it_sleep_ms(5);
  ck_assert_msg(it_proxy_cuts(x) == n, "the proxy cut %d connections, not %d",
                it_proxy_cuts(x), n);
}

/* zkl where Curator went through alone: a zkl member (members 3) whose
 * session's connection is cut just after its getChildren went out waits
 * on; meanwhile a zkl member and a Curator member arrive and give up, one
 * at a time (so never 3 at once); it gives up at its deadline
 * (ZKL_ETIMEDOUT), `ready` never made, its node gone.  Entering again, cut
 * again, it gets through once the two others arrive: not before the last
 * one's enter began, with `ready` there; all leave. */
START_TEST(zkl_timed_enter_passes_only_with_ready) {
  if (!it_peer_curator_here()) return;
  char path[256];
  it_peer_node(path, sizeof path, "zblip");
  zkl_session_t *s = it_session();
  zkl_dbarrier_t *obs = dbar(s, path, 3, "zkl-observer");
  it_peer_t j;
  curator(&j); /* first: it must not hold the proxied connection open */
  it_proxy_t *x = it_proxy_start();
  char hosts[64];
  snprintf(hosts, sizeof hosts, "127.0.0.1:%d", it_proxy_port(x));
  zkl_session_t *sp = it_session_at(hosts, 10000);
  it_peer_t *const peers[] = {&j, NULL};
  member_t p;
  zkl_member(&p, sp, path, 3, "zkl-p");
  it_proxy_cut_after(x, ZOO_GETCHILDREN_OP);
  member_start(&p, 0, 4000);
  int64_t t0 = it_now_ms();
  count_is(obs, path, 1, 0, peers);
  cuts_wait(x, 1);
  /* a zkl member comes and gives up */
  zkl_dbarrier_t *q = dbar(s, path, 3, "zkl-q");
  int rc = zkl_dbarrier_enter(q, 300);
  ck_assert_msg(rc == ZKL_ETIMEDOUT, "zkl-q's enter with 2 of 3: %s",
                it_code(rc));
  count_is(obs, path, 1, 0, peers);
  ck_assert_msg(member_pending(&p), "zkl-p got through as zkl-q gave up: %s",
                it_code(p.rc));
  /* a Curator member comes, gives up (its node stays) and goes */
  member_t c;
  peer_member(&c, &j, path, 3, "curator-c", NULL);
  member_start(&c, 0, 300);
  const char *what = member_finish(&c, 10000);
  ck_assert_msg(strcmp(what, "false") == 0, "Curator's enter with 2 of 3: %s",
                what);
  count_is(obs, path, 2, 0, peers);
  it_peer_ask(&j, "ok", "close c");
  count_is(obs, path, 1, 0, peers);
  ck_assert_msg(it_now_ms() - t0 < 3700,
                "the others took too long to come and go (%lld ms)",
                (long long)(it_now_ms() - t0));
  ck_assert_msg(member_pending(&p), "zkl-p got through as Curator left: %s",
                it_code(p.rc));
  what = member_finish(&p, 0);
  ck_assert_msg(p.rc == ZKL_ETIMEDOUT, "zkl-p's enter alone through a blip: "
                "%s", what);
  ck_assert_msg(p.t1 - p.t0 >= 3990000, "zkl-p gave up after %lld us",
                (long long)(p.t1 - p.t0));
  count_is(obs, path, 0, 0, peers);
  /* again, and this time the others come */
  it_proxy_cut_after(x, ZOO_GETCHILDREN_OP);
  member_t q2, c2;
  zkl_member(&q2, s, path, 3, "zkl-q2");
  peer_member(&c2, &j, path, 3, "curator-c2", NULL);
  member_t *order[] = {&p, &q2, &c2};
  member_start(&p, 0, 20000);
  count_is(obs, path, 1, 0, peers);
  cuts_wait(x, 2);
  /* enter_together starts p again: it is underway already */
  member_start(&q2, 0, 30000);
  count_is(obs, path, 2, 0, peers);
  it_sleep_ms(STILL_MS);
  ck_assert(member_pending(&p) && member_pending(&q2));
  int64_t arrived = wall_us();
  member_start(&c2, 0, 30000);
  for (int a = 0; a < 3; a++) member_ok(order[a], ANSWER_MS);
  if (c2.t0 > arrived) arrived = c2.t0;
  ck_assert_msg(p.t1 >= arrived && q2.t1 >= arrived,
                "a zkl member got through before the last one arrived");
  count_is(obs, path, 3, 1, peers);
  size_t remaining;
  int ready_kept;
  member_t *out = last_leaver(s, path, order, 3, &c2, &remaining,
                              &ready_kept);
  leave_together(obs, path, order, 3, out, remaining, ready_kept, peers);
  it_peer_quit(&j);
  member_end(&p);
  member_end(&q2);
  member_end(&c2);
  zkl_dbarrier_destroy(q);
  zkl_dbarrier_destroy(obs);
  zkl_session_close(sp);
  it_proxy_stop(x);
  dbarrier_gone(s, path);
  zkl_session_close(s);
}
END_TEST

Suite *barrier_interop_suite(void) {
  Suite *su = suite_create("barrier-interop");
  TCase *tc = it_tcase("barrier-interop");
  tcase_add_unchecked_fixture(tc, suite_setup, it_peer_teardown);
  tcase_add_test(tc, barrier_curator_sets_zkl_waits_kazoo_removes);
  tcase_add_test(tc, barrier_zkl_sets_curator_waits_zkl_removes);
  tcase_add_test(tc, barrier_remove_never_set_is_enoent);
  tcase_add_loop_test(tc, dbarrier_mixed_members, 0, 3);
  tcase_add_test(tc, zkl_timed_enter_gives_up_curator_stays_out);
  tcase_add_test(tc, curator_timed_enter_through_alone);
  tcase_add_test(tc, zkl_timed_enter_passes_only_with_ready);
  suite_add_tcase(su, tc);
  /* kazoo's Barrier and DoubleBarrier with zkl: no Java, no Curator */
  tc = it_tcase("barrier-interop-kazoo");
  tcase_add_unchecked_fixture(tc, kazoo_setup, it_peer_teardown);
  tcase_add_test(tc, barrier_kazoo_sets_zkl_waits_kazoo_removes);
  tcase_add_test(tc, barrier_zkl_sets_kazoo_waits_zkl_removes);
  tcase_add_test(tc, barrier_kazoo_remove_never_set_is_enoent);
  tcase_add_loop_test(tc, dbarrier_kazoo_members, 0, 2);
  suite_add_tcase(su, tc);
  return su;
}
