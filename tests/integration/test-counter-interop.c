/* tests/integration/test-counter-interop.c - zkl's counter with the peers,
 * live and both ways, on the same nodes: Curator 5.4's
 * DistributedAtomicInteger / DistributedAtomicLong / SharedCount (a small
 * Java program, CuratorCounterPeer, compiled here) and python3-kazoo's
 * Counter (counter_peer.py), in the three formats: INT32 (SharedCount,
 * DistributedAtomicInteger, kazoo's support_curator), INT64
 * (DistributedAtomicLong) and TEXT (kazoo's default).  Concurrent
 * increments from every side lose and double nothing; each side reads the
 * other's writes and refuses a stale compare-and-set after the other's
 * write; kazoo's empty node reads as `initial`; a write of either peer
 * wakes zkl_counter_wait() and a zkl write reaches SharedCount's listener;
 * data of another format is ZKL_EPROTO and stays as it was.
 *
 * The tcase "counter-interop" needs Curator (a JDK and Debian's
 * libcurator-recipes-java; the tests that mix the two peers need kazoo
 * too); "counter-interop-kazoo" runs kazoo's Counter tests (TEXT and
 * support_curator) whenever python3-kazoo is there, Curator or not.
 *
 * The peers are driven through their stdin, one command a line, each
 * answered with one line on their stdout; they exit by themselves (a
 * watchdog) shortly before the test's own timeout.  Every test works on
 * its own nodes (/zkl-test/cix-<run>-<tag>-..., cixk-... for the kazoo
 * tcase) and deletes them at its end; each tcase's teardown sweeps what a
 * failed test left. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"

/* Increments per writer in the concurrent tests. */
#define N_INC 100

/* ---- the peers (peer.c) ------------------------------------------------- */

static void suite_setup(void) {
  it_peer_setup("counter-interop", "cix", "CuratorCounterPeer");
}

/* The kazoo tcase: no Java peer to compile, nodes of its own prefix. */
static void kazoo_setup(void) {
  it_peer_setup("counter-interop", "cixk", NULL);
}

static void curator(it_peer_t *p) { it_peer_curator(p, "CuratorCounterPeer"); }

static void kazoo(it_peer_t *p) { it_peer_kazoo(p, "counter_peer.py"); }

/* Reads "ok V1 V2 ..." (n values) into v. */
static void peer_values(it_peer_t *p, int64_t *v, int n) {
  char line[16384];
  it_peer_line(p, line, sizeof line);
  ck_assert_msg(strncmp(line, "ok", 2) == 0, "%s answered \"%.200s\"",
                p->name, line);
  char *at = line + 2, *end;
  for (int i = 0; i < n; i++) {
    v[i] = strtoll(at, &end, 10);
    ck_assert_msg(end != at, "peer gave %d values, not %d", i, n);
    at = end;
  }
  ck_assert_msg(*at == '\0', "peer gave more than %d values", n);
}

/* ---- nodes ---------------------------------------------------------------- */

/* Deletes a test's node (which must be there). */
static void drop(zkl_session_t *s, const char *path) {
  int rc = zoo_delete(zkl_session_zhandle(s), path, -1);
  ck_assert_msg(rc == ZOK, "delete %s: %s", path, zerror(rc));
}

/* The node's data is `hex` ("-": empty); its data version is returned. */
static int32_t raw_is(zkl_session_t *s, const char *path, const char *hex) {
  char data[64], got[160] = "-";
  int len = sizeof data;
  struct Stat st;
  int rc = zoo_get(zkl_session_zhandle(s), path, 0, data, &len, &st);
  ck_assert_msg(rc == ZOK, "get %s: %s", path, zerror(rc));
  for (int i = 0; i < len; i++)
    sprintf(got + 2 * i, "%02x", (unsigned char)data[i]);
  ck_assert_msg(strcmp(got, hex) == 0, "%s holds %s, not %s", path, got, hex);
  return st.version;
}

/* ---- zkl side --------------------------------------------------------------- */

static zkl_counter_t *counter(zkl_session_t *s, const char *path, int format,
                              int64_t initial) {
  zkl_counter_opts_t o;
  zkl_counter_opts_init(&o);
  o.format = format;
  o.initial = initial;
  zkl_counter_t *c = NULL;
  int rc = zkl_counter_create(&c, s, path, &o);
  ck_assert_msg(rc == 0, "counter_create %s: %s", path, it_code(rc));
  return c;
}

/* get succeeds and sees (value, version) on an existing node. */
static zkl_count_t get_is(zkl_counter_t *c, int64_t value, int32_t version) {
  zkl_count_t now;
  int rc = zkl_counter_get(c, &now);
  ck_assert_msg(rc == 0, "get: %s", it_code(rc));
  ck_assert_int_eq(now.exists, 1);
  ck_assert_int_eq(now.value, value);
  ck_assert_int_eq(now.version, version);
  return now;
}

static zkl_count_t add_is(zkl_counter_t *c, int64_t delta, int64_t value,
                          int32_t version) {
  zkl_count_t now;
  int rc = zkl_counter_add(c, delta, 10000, &now);
  ck_assert_msg(rc == 0, "add %lld: %s", (long long)delta, it_code(rc));
  ck_assert_int_eq(now.exists, 1);
  ck_assert_int_eq(now.value, value);
  ck_assert_int_eq(now.version, version);
  return now;
}

static zkl_count_t set_is(zkl_counter_t *c, int64_t value, int32_t version) {
  zkl_count_t now;
  int rc = zkl_counter_set(c, value, &now);
  ck_assert_msg(rc == 0, "set %lld: %s", (long long)value, it_code(rc));
  ck_assert_int_eq(now.exists, 1);
  ck_assert_int_eq(now.value, value);
  ck_assert_int_eq(now.version, version);
  return now;
}

/* A writer thread: n zkl_counter_add(+1), each's value kept. */
typedef struct adder {
  zkl_counter_t *c;
  pthread_t th;
  int n, rc;
  int64_t posts[N_INC];
} adder_t;

static void *adder_main(void *arg) {
  adder_t *a = arg;
  for (int i = 0; i < a->n; i++) {
    zkl_count_t now;
    if ((a->rc = zkl_counter_add(a->c, 1, 20000, &now)) != 0) return NULL;
    a->posts[i] = now.value;
  }
  return NULL;
}

static void adder_start(adder_t *a, zkl_counter_t *c) {
  a->c = c;
  a->n = N_INC;
  a->rc = 99;
  ck_assert_int_eq(pthread_create(&a->th, NULL, adder_main, a), 0);
}

static void adder_join(adder_t *a, int64_t *posts) {
  pthread_join(a->th, NULL);
  ck_assert_msg(a->rc == 0, "zkl add: %s", it_code(a->rc));
  memcpy(posts, a->posts, sizeof a->posts);
}

static int cmp64(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

/* The values the n increments of +1 saw after their writes are exactly
 * base+1 .. base+n: none lost, none counted twice, each reported right. */
static void posts_are(int64_t *v, int n, int64_t base) {
  qsort(v, (size_t)n, sizeof *v, cmp64);
  for (int i = 0; i < n; i++)
    ck_assert_msg(v[i] == base + 1 + i,
                  "increment %d of %d saw %lld, not %lld (a lost or doubled "
                  "update)",
                  i + 1, n, (long long)v[i], (long long)(base + 1 + i));
}

/* Two zkl objects (threads, one session) add 1 N_INC times each while
 * the np peers (at most 2), already told to, do the same: every value one
 * of them saw is one of base+1 .. base+(2+np)*N_INC, each once, and the
 * counter ends at the last.  Its state then. */
static zkl_count_t increments_beside(zkl_counter_t *a, zkl_counter_t *b,
                                     it_peer_t *const *peers, int np,
                                     int64_t base) {
  static int64_t posts[4 * N_INC];
  static adder_t x, y;
  adder_start(&x, a);
  adder_start(&y, b);
  adder_join(&x, posts);
  adder_join(&y, posts + N_INC);
  for (int i = 0; i < np; i++)
    peer_values(peers[i], posts + (2 + i) * N_INC, N_INC);
  int n = (2 + np) * N_INC;
  posts_are(posts, n, base);
  zkl_count_t now;
  ck_assert_int_eq(zkl_counter_get(b, &now), 0);
  ck_assert_int_eq(now.value, base + n);
  return now;
}

/* A zkl_counter_wait() blocked in a thread, for a peer's write to wake. */
typedef struct waiter {
  zkl_counter_t *c;
  zkl_count_t seen, now;
  pthread_t th;
  int rc;
} waiter_t;

static void *wait_main(void *arg) {
  waiter_t *w = arg;
  int rc = zkl_counter_wait(w->c, &w->seen, 20000, &w->now);
  __atomic_store_n(&w->rc, rc, __ATOMIC_SEQ_CST); /* read while it runs */
  return NULL;
}

typedef struct watched {
  zkl_session_t *s;
  const char *path;
} watched_t;

/* The session watches path (per the server: wchp). */
static int session_watches(void *arg) {
  watched_t *w = arg;
  char *wchp = it_4lw("wchp");
  int64_t sid = zkl_session_id(w->s);
  int n = it_watchers_of(wchp, w->path, 0) - it_watchers_of(wchp, w->path, sid);
  free(wchp);
  return n > 0;
}

/* Starts a wait from `seen` and returns once the server has its watch:
 * the wait is blocked before the peer writes. */
static void waiter_start(waiter_t *w, zkl_session_t *s, zkl_counter_t *c,
                         const char *path, zkl_count_t seen) {
  *w = (waiter_t){.c = c, .seen = seen, .rc = 99};
  ck_assert_int_eq(pthread_create(&w->th, NULL, wait_main, w), 0);
  watched_t x = {s, path};
  ck_assert_msg(it_wait_until(session_watches, &x, 10000),
                "zkl_counter_wait set no watch on %s", path);
  ck_assert_int_eq(__atomic_load_n(&w->rc, __ATOMIC_SEQ_CST), 99);
}

/* The wait ended with the counter at (value, version). */
static void waiter_got(waiter_t *w, int64_t value, int32_t version) {
  pthread_join(w->th, NULL);
  ck_assert_msg(w->rc == 0, "wait: %s", it_code(w->rc));
  ck_assert_int_eq(w->now.exists, 1);
  ck_assert_int_eq(w->now.value, value);
  ck_assert_int_eq(w->now.version, version);
}

/* ---- concurrent increments --------------------------------------------------- */

/* INT32: two zkl objects (threads, one session), Curator's
 * DistributedAtomicInteger and kazoo's Counter(support_curator=True), N_INC
 * increments each on one missing node (kazoo may make it empty, the others
 * with data). */
START_TEST(int32_increments_zkl_curator_kazoo) {
  if (!it_peer_curator_here() || !it_peer_kazoo_here()) return;
  char path[256];
  it_peer_node(path, sizeof path, "inc32");
  zkl_session_t *s = it_session();
  zkl_counter_t *a = counter(s, path, ZKL_COUNTER_INT32, 0);
  zkl_counter_t *b = counter(s, path, ZKL_COUNTER_INT32, 0);
  it_peer_t j, k;
  curator(&j);
  kazoo(&k);
  it_peer_say(&j, "dai-inc %s %d", path, N_INC);
  it_peer_say(&k, "inc %s curator %d", path, N_INC);
  zkl_count_t now = increments_beside(a, b, (it_peer_t *[]){&j, &k}, 2, 0);
  char hex[16];
  snprintf(hex, sizeof hex, "%08x", 4 * N_INC);
  ck_assert_int_eq(raw_is(s, path, hex), now.version);
  char want[32];
  snprintf(want, sizeof want, "ok %d", 4 * N_INC);
  it_peer_ask(&j, want, "dai-get %s", path);
  it_peer_ask(&k, want, "value %s curator 0", path);
  it_peer_quit(&j);
  it_peer_quit(&k);
  zkl_counter_destroy(a);
  zkl_counter_destroy(b);
  drop(s, path);
  zkl_session_close(s);
}
END_TEST

/* The same without Curator: two zkl objects and kazoo's
 * Counter(support_curator=True), N_INC increments each on one missing
 * node. */
START_TEST(int32_increments_zkl_kazoo) {
  if (!it_peer_kazoo_here()) return;
  char path[256];
  it_peer_node(path, sizeof path, "inc32k");
  zkl_session_t *s = it_session();
  zkl_counter_t *a = counter(s, path, ZKL_COUNTER_INT32, 0);
  zkl_counter_t *b = counter(s, path, ZKL_COUNTER_INT32, 0);
  it_peer_t k;
  kazoo(&k);
  it_peer_say(&k, "inc %s curator %d", path, N_INC);
  zkl_count_t now = increments_beside(a, b, (it_peer_t *[]){&k}, 1, 0);
  char hex[16];
  snprintf(hex, sizeof hex, "%08x", 3 * N_INC);
  ck_assert_int_eq(raw_is(s, path, hex), now.version);
  char want[32];
  snprintf(want, sizeof want, "ok %d", 3 * N_INC);
  it_peer_ask(&k, want, "value %s curator 0", path);
  it_peer_quit(&k);
  zkl_counter_destroy(a);
  zkl_counter_destroy(b);
  drop(s, path);
  zkl_session_close(s);
}
END_TEST

/* INT64: zkl sets a value past 32 bits, DistributedAtomicLong reads it;
 * two zkl objects and DistributedAtomicLong increment concurrently; then a
 * Curator add takes it negative and zkl reads that. */
START_TEST(int64_increments_zkl_curator) {
  if (!it_peer_curator_here()) return;
  char path[256];
  it_peer_node(path, sizeof path, "inc64");
  const int64_t base = 5000000000LL; /* 0x12a05f200 */
  zkl_session_t *s = it_session();
  zkl_counter_t *a = counter(s, path, ZKL_COUNTER_INT64, 0);
  zkl_counter_t *b = counter(s, path, ZKL_COUNTER_INT64, 0);
  set_is(a, base, 0);
  raw_is(s, path, "000000012a05f200");
  it_peer_t j;
  curator(&j);
  it_peer_ask(&j, "ok 5000000000", "dal-get %s", path);
  it_peer_say(&j, "dal-inc %s %d", path, N_INC);
  zkl_count_t now = increments_beside(a, b, (it_peer_t *[]){&j}, 1, base);
  const int64_t sum = base + 3 * N_INC;
  char hex[32], want[64];
  snprintf(hex, sizeof hex, "%016llx", (unsigned long long)sum);
  ck_assert_int_eq(raw_is(s, path, hex), now.version);
  snprintf(want, sizeof want, "ok %lld", (long long)sum);
  it_peer_ask(&j, want, "dal-get %s", path);
  /* Curator takes it below zero, zkl reads it */
  const int64_t neg = sum - 6000000000LL;
  snprintf(want, sizeof want, "ok %lld %lld", (long long)sum, (long long)neg);
  it_peer_ask(&j, want, "dal-add %s -6000000000", path);
  get_is(a, neg, now.version + 1);
  snprintf(hex, sizeof hex, "%016llx", (unsigned long long)neg);
  raw_is(s, path, hex);
  it_peer_quit(&j);
  zkl_counter_destroy(a);
  zkl_counter_destroy(b);
  drop(s, path);
  zkl_session_close(s);
}
END_TEST

/* TEXT: two zkl objects and kazoo's Counter() concurrently on one missing
 * node; then zkl takes it negative, kazoo reads and adds, zkl reads. */
START_TEST(text_increments_zkl_kazoo) {
  if (!it_peer_kazoo_here()) return;
  char path[256];
  it_peer_node(path, sizeof path, "inctxt");
  zkl_session_t *s = it_session();
  zkl_counter_t *a = counter(s, path, ZKL_COUNTER_TEXT, 0);
  zkl_counter_t *b = counter(s, path, ZKL_COUNTER_TEXT, 0);
  it_peer_t k;
  kazoo(&k);
  it_peer_say(&k, "inc %s text %d", path, N_INC);
  zkl_count_t now = increments_beside(a, b, (it_peer_t *[]){&k}, 1, 0);
  char text[32], hex[80], want[64];
  snprintf(text, sizeof text, "%d", 3 * N_INC);
  for (size_t i = 0; text[i] != '\0'; i++)
    sprintf(hex + 2 * i, "%02x", (unsigned char)text[i]);
  ck_assert_int_eq(raw_is(s, path, hex), now.version);
  snprintf(want, sizeof want, "ok %d", 3 * N_INC);
  it_peer_ask(&k, want, "value %s text 0", path);
  /* zkl to -5 ("-5"), kazoo reads it and adds 12, zkl reads 7 */
  add_is(b, -(3 * N_INC + 5), -5, now.version + 1);
  raw_is(s, path, "2d35");
  it_peer_ask(&k, "ok -5", "value %s text 0", path);
  it_peer_ask(&k, "ok -5 7", "add %s text 12", path);
  get_is(a, 7, now.version + 2);
  it_peer_quit(&k);
  zkl_counter_destroy(a);
  zkl_counter_destroy(b);
  drop(s, path);
  zkl_session_close(s);
}
END_TEST

/* ---- Curator's SharedCount ---------------------------------------------------- */

/* zkl makes the node (4 bytes, by an add on a missing node) and
 * SharedCount starts on it; each side reads the other's writes; a stale
 * VersionedValue fails trySetCount after a zkl write, and a stale
 * zkl_count_t fails zkl_counter_cas (ZKL_ESTALE) after a Curator write;
 * fresh ones succeed on both sides. */
START_TEST(sharedcount_and_zkl_both_ways) {
  if (!it_peer_curator_here()) return;
  char path[256];
  it_peer_node(path, sizeof path, "shared");
  zkl_session_t *s = it_session();
  zkl_counter_t *c = counter(s, path, ZKL_COUNTER_INT32, 0);
  zkl_count_t now;
  ck_assert_int_eq(zkl_counter_get(c, &now), 0);
  ck_assert_int_eq(now.exists, 0);
  add_is(c, 42, 42, 0);
  raw_is(s, path, "0000002a");
  it_peer_t j;
  curator(&j);
  it_peer_ask(&j, "ok 42 0", "sc-start %s 999", path); /* the seed not used */
  /* Curator writes, zkl reads (negative too) */
  it_peer_ask(&j, "ok", "sc-set -2");
  get_is(c, -2, 1);
  raw_is(s, path, "fffffffe");
  it_peer_ask(&j, "ok", "sc-set 100");
  get_is(c, 100, 2);
  /* Curator's VersionedValue goes stale by a zkl write */
  it_peer_ask(&j, "ok 100 2", "sc-keep");
  add_is(c, 1, 101, 3);
  it_peer_ask(&j, "ok false", "sc-tryset-kept 500");
  get_is(c, 101, 3);
  raw_is(s, path, "00000065");
  it_peer_ask(&j, "ok 101 3", "sc-get");
  /* zkl's count goes stale by a Curator write */
  zkl_count_t seen = get_is(c, 101, 3);
  it_peer_ask(&j, "ok", "sc-set 7");
  int rc = zkl_counter_cas(c, &seen, 55, &now);
  ck_assert_msg(rc == ZKL_ESTALE, "stale cas: %s", it_code(rc));
  ck_assert_int_eq(now.exists, 1);
  ck_assert_int_eq(now.value, 7);
  ck_assert_int_eq(now.version, 4);
  seen = get_is(c, 7, 4);
  raw_is(s, path, "00000007");
  /* fresh ones apply, both ways */
  rc = zkl_counter_cas(c, &seen, 55, &now);
  ck_assert_msg(rc == 0, "fresh cas: %s", it_code(rc));
  ck_assert_int_eq(now.value, 55);
  ck_assert_int_eq(now.version, 5);
  it_peer_ask(&j, "ok 55", "sc-await 55 10");
  it_peer_ask(&j, "ok 55 5", "sc-keep");
  it_peer_ask(&j, "ok true", "sc-tryset-kept 60");
  get_is(c, 60, 6);
  it_peer_quit(&j);
  zkl_counter_destroy(c);
  drop(s, path);
  zkl_session_close(s);
}
END_TEST

/* SharedCount makes the node with its seed; zkl reads it; SharedCount's
 * listener (countHasChanged) hears zkl's add, set and cas. */
START_TEST(sharedcount_listener_hears_zkl) {
  if (!it_peer_curator_here()) return;
  char path[256];
  it_peer_node(path, sizeof path, "listen");
  zkl_session_t *s = it_session();
  zkl_counter_t *c = counter(s, path, ZKL_COUNTER_INT32, 0);
  it_peer_t j;
  curator(&j);
  it_peer_ask(&j, "ok 3 0", "sc-start %s 3", path);
  get_is(c, 3, 0);
  raw_is(s, path, "00000003");
  add_is(c, 4, 7, 1);
  it_peer_ask(&j, "ok 7", "sc-await 7 10");
  zkl_count_t now = set_is(c, -9, 2);
  it_peer_ask(&j, "ok -9", "sc-await -9 10");
  ck_assert_int_eq(zkl_counter_cas(c, &now, 1000, &now), 0);
  ck_assert_int_eq(now.value, 1000);
  it_peer_ask(&j, "ok 1000", "sc-await 1000 10");
  it_peer_ask(&j, "ok 1000 3", "sc-get");
  it_peer_quit(&j);
  zkl_counter_destroy(c);
  drop(s, path);
  zkl_session_close(s);
}
END_TEST

/* ---- zkl_counter_wait woken by the peers ------------------------------------- */

/* A zkl wait on a missing node is woken by DistributedAtomicInteger making
 * it; the next wait by SharedCount.setCount. */
START_TEST(curator_write_wakes_zkl_wait) {
  if (!it_peer_curator_here()) return;
  char path[256];
  it_peer_node(path, sizeof path, "wcur");
  zkl_session_t *s = it_session();
  zkl_counter_t *c = counter(s, path, ZKL_COUNTER_INT32, 0);
  it_peer_t j;
  curator(&j);
  zkl_count_t seen;
  ck_assert_int_eq(zkl_counter_get(c, &seen), 0);
  ck_assert_int_eq(seen.exists, 0);
  waiter_t w;
  waiter_start(&w, s, c, path, seen);
  it_peer_ask(&j, "ok 0 5", "dai-add %s 5", path);
  waiter_got(&w, 5, 0);
  raw_is(s, path, "00000005");
  it_peer_ask(&j, "ok 5 0", "sc-start %s 0", path);
  waiter_start(&w, s, c, path, w.now);
  it_peer_ask(&j, "ok", "sc-set 9");
  waiter_got(&w, 9, 1);
  it_peer_quit(&j);
  zkl_counter_destroy(c);
  drop(s, path);
  zkl_session_close(s);
}
END_TEST

/* A zkl wait is woken by kazoo's Counter, in both of kazoo's formats. */
START_TEST(kazoo_write_wakes_zkl_wait) {
  if (!it_peer_kazoo_here()) return;
  char text[256], bin[256];
  it_peer_node(text, sizeof text, "wkzt");
  it_peer_node(bin, sizeof bin, "wkzb");
  zkl_session_t *s = it_session();
  zkl_counter_t *t = counter(s, text, ZKL_COUNTER_TEXT, 0);
  zkl_counter_t *b = counter(s, bin, ZKL_COUNTER_INT32, 0);
  it_peer_t k;
  kazoo(&k);
  waiter_t w;
  waiter_start(&w, s, t, text, set_is(t, 10, 0));
  it_peer_ask(&k, "ok 10 15", "add %s text 5", text);
  waiter_got(&w, 15, 1);
  raw_is(s, text, "3135");
  waiter_start(&w, s, b, bin, set_is(b, 10, 0));
  it_peer_ask(&k, "ok 10 6", "add %s curator -4", bin);
  waiter_got(&w, 6, 1);
  raw_is(s, bin, "00000006");
  it_peer_quit(&k);
  zkl_counter_destroy(t);
  zkl_counter_destroy(b);
  drop(s, text);
  drop(s, bin);
  zkl_session_close(s);
}
END_TEST

/* ---- kazoo's empty node ---------------------------------------------------------- */

/* kazoo's Counter makes its node empty (ensure_path) before its first
 * write: zkl reads it as `initial` (exists 1, version 0), writes it (add,
 * cas) with data, and kazoo reads zkl's value; kazoo's next write zkl
 * reads.  In both kazoo formats. */
START_TEST(kazoo_empty_node_reads_initial) {
  if (!it_peer_kazoo_here()) return;
  char text[256], bin[256];
  it_peer_node(text, sizeof text, "emptyt");
  it_peer_node(bin, sizeof bin, "emptyb");
  zkl_session_t *s = it_session();
  it_peer_t k;
  kazoo(&k);
  /* TEXT, initial 7 */
  it_peer_ask(&k, "ok 0", "value %s text 0", text);
  raw_is(s, text, "-");
  zkl_counter_t *t = counter(s, text, ZKL_COUNTER_TEXT, 7);
  get_is(t, 7, 0);
  add_is(t, 5, 12, 1);
  raw_is(s, text, "3132");
  it_peer_ask(&k, "ok 12", "value %s text 0", text);
  it_peer_ask(&k, "ok 12 -8", "add %s text -20", text);
  get_is(t, -8, 2);
  /* INT32 (support_curator), initial -3 */
  it_peer_ask(&k, "ok 0", "value %s curator 0", bin);
  raw_is(s, bin, "-");
  zkl_counter_t *b = counter(s, bin, ZKL_COUNTER_INT32, -3);
  zkl_count_t seen = get_is(b, -3, 0), now;
  int rc = zkl_counter_cas(b, &seen, 7, &now);
  ck_assert_msg(rc == 0, "cas on the empty node: %s", it_code(rc));
  ck_assert_int_eq(now.value, 7);
  ck_assert_int_eq(now.version, 1);
  raw_is(s, bin, "00000007");
  it_peer_ask(&k, "ok 7", "value %s curator 0", bin);
  it_peer_ask(&k, "ok 7 -3", "add %s curator -10", bin);
  get_is(b, -3, 2);
  raw_is(s, bin, "fffffffd");
  it_peer_quit(&k);
  zkl_counter_destroy(t);
  zkl_counter_destroy(b);
  drop(s, text);
  drop(s, bin);
  zkl_session_close(s);
}
END_TEST

/* ---- data of another format ---------------------------------------------------------- */

/* A zkl object of `format` on path: get, add and a zero-timeout add all
 * answer ZKL_EPROTO with the node's version, and the node keeps its data
 * (`hex`) and version. */
static void eproto_on(zkl_session_t *s, const char *path, int format,
                      const char *hex) {
  int32_t version = raw_is(s, path, hex);
  zkl_counter_t *c = counter(s, path, format, 0);
  zkl_count_t now = {.version = -77};
  int rc = zkl_counter_get(c, &now);
  ck_assert_msg(rc == ZKL_EPROTO, "format %d get on %s: %s (value %lld)",
                format, hex, it_code(rc), (long long)now.value);
  ck_assert_int_eq(now.version, version);
  rc = zkl_counter_add(c, 1, 2000, &now);
  ck_assert_msg(rc == ZKL_EPROTO, "format %d add on %s: %s (value %lld)",
                format, hex, it_code(rc), (long long)now.value);
  rc = zkl_counter_add(c, 1, 0, NULL);
  ck_assert_msg(rc == ZKL_EPROTO, "format %d add(0) on %s: %s", format, hex,
                it_code(rc));
  ck_assert_int_eq(raw_is(s, path, hex), version);
  zkl_counter_destroy(c);
}

/* kazoo's text "12" and float "2.5" and kazoo's/Curator's 4 bytes, each
 * read by zkl objects of the other formats: ZKL_EPROTO, never a number,
 * the node untouched and still read by its writer; a zkl wait woken by a
 * kazoo write of text to an INT32 object's node says ZKL_EPROTO too;
 * kazoo's text 2^63 (its ints have no bound) is ZKL_EPROTO for TEXT, not
 * a clamped INT64_MAX.  (DistributedAtomicLong's 8 bytes:
 * curator_other_format_is_eproto.) */
START_TEST(other_format_is_eproto) {
  if (!it_peer_kazoo_here()) return;
  char text[256], flt[256], bin[256], big[256];
  it_peer_node(big, sizeof big, "fmtbig");
  it_peer_node(text, sizeof text, "fmtt");
  it_peer_node(flt, sizeof flt, "fmtf");
  it_peer_node(bin, sizeof bin, "fmtb");
  zkl_session_t *s = it_session();
  it_peer_t k;
  kazoo(&k);
  it_peer_ask(&k, "ok 0 12", "add %s text 12", text);
  eproto_on(s, text, ZKL_COUNTER_INT32, "3132");
  eproto_on(s, text, ZKL_COUNTER_INT64, "3132");
  it_peer_ask(&k, "ok 12", "value %s text 0", text);
  it_peer_ask(&k, "ok 0.0 2.5", "add %s float 2.5", flt);
  eproto_on(s, flt, ZKL_COUNTER_TEXT, "322e35");
  eproto_on(s, flt, ZKL_COUNTER_INT32, "322e35");
  it_peer_ask(&k, "ok 2.5", "value %s float 0", flt);
  it_peer_ask(&k, "ok 0 12", "add %s curator 12", bin);
  eproto_on(s, bin, ZKL_COUNTER_TEXT, "0000000c");
  eproto_on(s, bin, ZKL_COUNTER_INT64, "0000000c");
  it_peer_ask(&k, "ok 12", "value %s curator 0", bin);
  /* a kazoo text write wakes an INT32 wait: EPROTO with its version */
  zkl_counter_t *c = counter(s, text, ZKL_COUNTER_INT32, 0);
  zkl_count_t seen;
  ck_assert_int_eq(zkl_counter_get(c, &seen), ZKL_EPROTO);
  ck_assert_int_eq(seen.version, 1);
  waiter_t w;
  waiter_start(&w, s, c, text, seen);
  it_peer_ask(&k, "ok 12 13", "add %s text 1", text);
  pthread_join(w.th, NULL);
  ck_assert_msg(w.rc == ZKL_EPROTO, "wait: %s (value %lld)", it_code(w.rc),
                (long long)w.now.value);
  ck_assert_int_eq(w.now.version, 2);
  raw_is(s, text, "3133");
  zkl_counter_destroy(c);
  /* kazoo's ints have no bound: 2^63 is no TEXT value (not INT64_MAX);
   * one less is, and zkl's add past it is ZKL_ERANGE, nothing written */
  it_peer_ask(&k, "ok 0 9223372036854775808", "add %s text 9223372036854775808",
           big);
  eproto_on(s, big, ZKL_COUNTER_TEXT, "39323233333732303336383534373735383038");
  it_peer_ask(&k, "ok 9223372036854775808 9223372036854775807",
           "add %s text -1", big);
  c = counter(s, big, ZKL_COUNTER_TEXT, 0);
  get_is(c, INT64_MAX, 2);
  int rc = zkl_counter_add(c, 1, 2000, NULL);
  ck_assert_msg(rc == ZKL_ERANGE, "add past INT64_MAX: %s", it_code(rc));
  raw_is(s, big, "39323233333732303336383534373735383037");
  zkl_counter_destroy(c);
  it_peer_quit(&k);
  drop(s, text);
  drop(s, flt);
  drop(s, bin);
  drop(s, big);
  zkl_session_close(s);
}
END_TEST

/* Curator's side of the above: DistributedAtomicLong's 8 bytes read by zkl
 * objects of the other formats, and kazoo's 4 bytes (support_curator) by
 * an INT64 one: ZKL_EPROTO, the nodes untouched and still read by
 * DistributedAtomicLong and DistributedAtomicInteger. */
START_TEST(curator_other_format_is_eproto) {
  if (!it_peer_curator_here() || !it_peer_kazoo_here()) return;
  char bin[256], lng[256];
  it_peer_node(bin, sizeof bin, "fmtb");
  it_peer_node(lng, sizeof lng, "fmtl");
  zkl_session_t *s = it_session();
  it_peer_t k;
  kazoo(&k);
  it_peer_ask(&k, "ok 0 12", "add %s curator 12", bin);
  it_peer_quit(&k);
  it_peer_t j;
  curator(&j);
  it_peer_ask(&j, "ok 0 12", "dal-add %s 12", lng);
  eproto_on(s, lng, ZKL_COUNTER_INT32, "000000000000000c");
  eproto_on(s, lng, ZKL_COUNTER_TEXT, "000000000000000c");
  it_peer_ask(&j, "ok 12", "dal-get %s", lng);
  eproto_on(s, bin, ZKL_COUNTER_INT64, "0000000c");
  it_peer_ask(&j, "ok 12", "dai-get %s", bin);
  it_peer_quit(&j);
  drop(s, lng);
  drop(s, bin);
  zkl_session_close(s);
}
END_TEST

Suite *counter_interop_suite(void) {
  Suite *su = suite_create("counter-interop");
  TCase *tc = it_tcase("counter-interop");
  tcase_add_unchecked_fixture(tc, suite_setup, it_peer_teardown);
  tcase_add_test(tc, int32_increments_zkl_curator_kazoo);
  tcase_add_test(tc, int64_increments_zkl_curator);
  tcase_add_test(tc, sharedcount_and_zkl_both_ways);
  tcase_add_test(tc, sharedcount_listener_hears_zkl);
  tcase_add_test(tc, curator_write_wakes_zkl_wait);
  tcase_add_test(tc, curator_other_format_is_eproto);
  suite_add_tcase(su, tc);
  /* kazoo's Counter with zkl: no Java, no Curator */
  tc = it_tcase("counter-interop-kazoo");
  tcase_add_unchecked_fixture(tc, kazoo_setup, it_peer_teardown);
  tcase_add_test(tc, int32_increments_zkl_kazoo);
  tcase_add_test(tc, text_increments_zkl_kazoo);
  tcase_add_test(tc, kazoo_write_wakes_zkl_wait);
  tcase_add_test(tc, kazoo_empty_node_reads_initial);
  tcase_add_test(tc, other_format_is_eproto);
  suite_add_tcase(su, tc);
  return su;
}
