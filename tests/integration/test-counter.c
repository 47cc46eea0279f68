/* tests/integration/test-counter.c - the shared counter against a real
 * server: the three wire formats byte for byte, get on a missing node
 * (not made), an empty node read as `initial`, parents made, no lost update
 * under concurrent adds from several sessions (every value handed out
 * once), compare-and-set (stale, create-if-missing, version -1 never a
 * blind write), the range, foreign data refused and untouched, the change
 * notification (woken by another writer, a creation, a deadline, a
 * cancel), a write whose answer is lost reported and never resent, the
 * async forms, and bad input. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"

#define OP_SETDATA 5

static zkl_counter_t *counter(zkl_session_t *s, const char *path, int format,
                              int64_t initial) {
  zkl_counter_opts_t o;
  zkl_counter_opts_init(&o);
  o.format = (zkl_counter_format_t)format;
  o.initial = initial;
  zkl_counter_t *c = NULL;
  ck_assert_int_eq(zkl_counter_create(&c, s, path, &o), 0);
  return c;
}

/* The node's raw data: its length (-1 missing), bytes into buf. */
static int raw(zkl_session_t *s, const char *path, char *buf, int cap) {
  int len = cap;
  struct Stat st;
  int rc = zoo_get(zkl_session_zhandle(s), path, 0, buf, &len, &st);
  if (rc == ZNONODE) return -1;
  ck_assert_int_eq(rc, ZOK);
  return len;
}

static void raw_put(zkl_session_t *s, const char *path, const char *data,
                    int len) {
  zhandle_t *zh = zkl_session_zhandle(s);
  int rc = zoo_create(zh, path, data, len, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  if (rc == ZNODEEXISTS) rc = zoo_set(zh, path, data, len, -1);
  ck_assert_int_eq(rc, ZOK);
}

static void rm(zkl_session_t *s, const char *path) {
  int rc = zoo_delete(zkl_session_zhandle(s), path, -1);
  ck_assert_msg(rc == ZOK || rc == ZNONODE, "delete %s: %d", path, rc);
}

START_TEST(formats_byte_for_byte) {
  char root[128];
  it_root(root, sizeof root, "k-formats");
  zkl_session_t *s = it_session();
  char path[160], buf[64];
  /* INT32: 4 bytes big-endian, signed */
  snprintf(path, sizeof path, "%s/i32", root);
  zkl_counter_t *c = counter(s, path, ZKL_COUNTER_INT32, 0);
  zkl_count_t now;
  ck_assert_int_eq(zkl_counter_set(c, -2, &now), 0);
  ck_assert_int_eq(now.exists, 1);
  ck_assert_int_eq(raw(s, path, buf, sizeof buf), 4);
  ck_assert_int_eq(memcmp(buf, "\xff\xff\xff\xfe", 4), 0);
  ck_assert_int_eq(zkl_counter_set(c, 0x01020304, NULL), 0);
  ck_assert_int_eq(raw(s, path, buf, sizeof buf), 4);
  ck_assert_int_eq(memcmp(buf, "\x01\x02\x03\x04", 4), 0);
  ck_assert_int_eq(zkl_counter_get(c, &now), 0);
  ck_assert_int_eq(now.value, 0x01020304);
  ck_assert_int_eq(now.version, 1);
  ck_assert_uint_gt(now.zxid, 0);
  zkl_counter_destroy(c);
  rm(s, path);
  /* INT64: 8 bytes big-endian */
  snprintf(path, sizeof path, "%s/i64", root);
  c = counter(s, path, ZKL_COUNTER_INT64, 0);
  ck_assert_int_eq(zkl_counter_set(c, INT64_MIN + 5, NULL), 0);
  ck_assert_int_eq(raw(s, path, buf, sizeof buf), 8);
  ck_assert_int_eq(memcmp(buf, "\x80\0\0\0\0\0\0\x05", 8), 0);
  ck_assert_int_eq(zkl_counter_add(c, -5, 5000, &now), 0);
  ck_assert(now.value == INT64_MIN);
  ck_assert_int_eq(zkl_counter_add(c, -1, 5000, NULL), ZKL_ERANGE);
  ck_assert_int_eq(zkl_counter_get(c, &now), 0);
  ck_assert(now.value == INT64_MIN);
  zkl_counter_destroy(c);
  rm(s, path);
  /* TEXT: what kazoo's repr() writes */
  snprintf(path, sizeof path, "%s/txt", root);
  c = counter(s, path, ZKL_COUNTER_TEXT, 0);
  ck_assert_int_eq(zkl_counter_set(c, -1234567890123LL, NULL), 0);
  ck_assert_int_eq(raw(s, path, buf, sizeof buf), 14);
  ck_assert_int_eq(memcmp(buf, "-1234567890123", 14), 0);
  ck_assert_int_eq(zkl_counter_add(c, 1234567890123LL, 5000, &now), 0);
  ck_assert_int_eq(now.value, 0);
  ck_assert_int_eq(raw(s, path, buf, sizeof buf), 1);
  ck_assert_int_eq(buf[0], '0');
  zkl_counter_destroy(c);
  rm(s, path);
  rm(s, root);
  zkl_session_close(s);
}
END_TEST

/* get does not make the node; add makes it (and its parents) with its
 * bytes, never empty; an empty node (kazoo's, zkCli's) reads as initial */
START_TEST(missing_and_empty_nodes) {
  char root[128], path[200], buf[16];
  it_root(root, sizeof root, "k-missing");
  snprintf(path, sizeof path, "%s/a/b/count", root);
  zkl_session_t *s = it_session();
  zkl_counter_t *c = counter(s, path, ZKL_COUNTER_INT32, 7);
  zkl_count_t now;
  ck_assert_int_eq(zkl_counter_get(c, &now), 0);
  ck_assert_int_eq(now.exists, 0);
  ck_assert_int_eq(now.value, 7);
  ck_assert_uint_eq(now.zxid, 0);
  ck_assert_int_eq(raw(s, path, buf, sizeof buf), -1);
  ck_assert_int_eq(zkl_counter_add(c, 3, 5000, &now), 0);
  ck_assert_int_eq(now.value, 10);
  ck_assert_int_eq(now.version, 0);
  ck_assert_int_eq(raw(s, path, buf, sizeof buf), 4);
  ck_assert_int_eq(memcmp(buf, "\0\0\0\x0a", 4), 0);
  rm(s, path);
  /* empty */
  raw_put(s, path, NULL, -1);
  ck_assert_int_eq(zkl_counter_get(c, &now), 0);
  ck_assert_int_eq(now.exists, 1);
  ck_assert_int_eq(now.value, 7);
  ck_assert_int_eq(zkl_counter_add(c, 1, 5000, &now), 0);
  ck_assert_int_eq(now.value, 8);
  ck_assert_int_eq(now.version, 1);
  ck_assert_int_eq(raw(s, path, buf, sizeof buf), 4);
  zkl_counter_destroy(c);
  rm(s, path);
  zkl_session_close(s);
}
END_TEST

/* Foreign data is an error, never a number, and stays as it was. */
START_TEST(foreign_data_refused_and_untouched) {
  char root[128], buf[64];
  it_root(root, sizeof root, "k-foreign");
  zkl_session_t *s = it_session();
  struct {
    int format;
    const char *data;
    int len;
  } bad[] = {
      {ZKL_COUNTER_INT32, "abc", 3},      {ZKL_COUNTER_INT32, "12345678", 8},
      {ZKL_COUNTER_INT64, "\0\0\0\x01", 4}, {ZKL_COUNTER_TEXT, "12a", 3},
      {ZKL_COUNTER_TEXT, " 12", 3},       {ZKL_COUNTER_TEXT, "-", 1},
      {ZKL_COUNTER_TEXT, "+5", 2},
      {ZKL_COUNTER_TEXT, "99999999999999999999", 20},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    raw_put(s, root, bad[i].data, bad[i].len);
    zkl_counter_t *c = counter(s, root, bad[i].format, 0);
    zkl_count_t now;
    ck_assert_int_eq(zkl_counter_get(c, &now), ZKL_EPROTO);
    ck_assert_int_eq(now.exists, 1); /* the version is told */
    ck_assert_int_eq(zkl_counter_add(c, 1, 2000, NULL), ZKL_EPROTO);
    ck_assert_int_eq(raw(s, root, buf, sizeof buf), bad[i].len);
    ck_assert_int_eq(memcmp(buf, bad[i].data, (size_t)bad[i].len), 0);
    /* set and a cas at the version seen overwrite it, on purpose */
    ck_assert_int_eq(zkl_counter_cas(c, &now, 5, &now), 0);
    ck_assert_int_eq(zkl_counter_get(c, &now), 0);
    ck_assert_int_eq(now.value, 5);
    zkl_counter_destroy(c);
  }
  rm(s, root);
  zkl_session_close(s);
}
END_TEST

START_TEST(compare_and_set) {
  char root[128];
  it_root(root, sizeof root, "k-cas");
  zkl_session_t *s = it_session();
  zkl_counter_t *a = counter(s, root, ZKL_COUNTER_INT32, 0);
  zkl_counter_t *b = counter(s, root, ZKL_COUNTER_INT32, 0);
  zkl_count_t seen, now, other;
  /* missing: a cas on "missing" creates it, a second one is stale */
  ck_assert_int_eq(zkl_counter_get(a, &seen), 0);
  ck_assert_int_eq(seen.exists, 0);
  ck_assert_int_eq(zkl_counter_cas(a, &seen, 40, &now), 0);
  ck_assert_int_eq(now.exists, 1);
  ck_assert_int_eq(now.version, 0);
  ck_assert_int_eq(zkl_counter_cas(b, &seen, 99, &other), ZKL_ESTALE);
  ck_assert_int_eq(other.value, 40); /* what it is now */
  ck_assert_int_eq(other.version, 0);
  /* b writes first: a's view is stale */
  ck_assert_int_eq(zkl_counter_cas(b, &other, 41, &other), 0);
  ck_assert_int_eq(zkl_counter_cas(a, &now, 50, &seen), ZKL_ESTALE);
  ck_assert_str_ne(zkl_last_error(), "");
  ck_assert_int_eq(seen.value, 41);
  ck_assert_int_eq(zkl_counter_cas(a, &seen, 50, &now), 0);
  ck_assert_int_eq(now.value, 50);
  ck_assert_int_eq(now.version, 2);
  /* a seen version -1 ("any version" to ZooKeeper) is checked after the
   * write, in one multi: never a blind write */
  zkl_count_t wild = now;
  wild.version = -1;
  ck_assert_int_eq(zkl_counter_cas(a, &wild, 666, &other), ZKL_ESTALE);
  ck_assert_int_eq(zkl_counter_get(b, &other), 0);
  ck_assert_int_eq(other.value, 50);
  ck_assert_int_eq(other.version, 2);
  /* a node deleted since it was seen: stale, not made again */
  rm(s, root);
  ck_assert_int_eq(zkl_counter_cas(a, &now, 51, &other), ZKL_ESTALE);
  ck_assert_int_eq(other.exists, 0);
  zkl_count_t gone;
  ck_assert_int_eq(zkl_counter_get(b, &gone), 0);
  ck_assert_int_eq(gone.exists, 0);
  ck_assert_int_eq(zkl_counter_cas(NULL, &now, 1, NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_counter_cas(a, NULL, 1, NULL), ZKL_EINVAL);
  zkl_counter_destroy(a);
  zkl_counter_destroy(b);
  rm(s, root);
  zkl_session_close(s);
}
END_TEST

START_TEST(range_refused_nothing_written) {
  char root[128];
  it_root(root, sizeof root, "k-range");
  zkl_session_t *s = it_session();
  zkl_counter_t *c = counter(s, root, ZKL_COUNTER_INT32, 0);
  zkl_count_t now;
  ck_assert_int_eq(zkl_counter_set(c, INT32_MAX, NULL), 0);
  ck_assert_int_eq(zkl_counter_add(c, 1, 2000, NULL), ZKL_ERANGE);
  ck_assert_int_eq(zkl_counter_set(c, (int64_t)INT32_MAX + 1, NULL),
                   ZKL_ERANGE);
  ck_assert_int_eq(zkl_counter_set(c, (int64_t)INT32_MIN - 1, NULL),
                   ZKL_ERANGE);
  ck_assert_int_eq(zkl_counter_get(c, &now), 0);
  ck_assert_int_eq(now.value, INT32_MAX);
  ck_assert_int_eq(now.version, 0);
  ck_assert_int_eq(zkl_counter_add(c, INT64_MIN, 2000, NULL), ZKL_ERANGE);
  ck_assert_int_eq(zkl_counter_add(c, -(int64_t)INT32_MAX, 2000, &now), 0);
  ck_assert_int_eq(now.value, 0);
  zkl_counter_destroy(c);
  rm(s, root);
  zkl_session_close(s);
}
END_TEST

/* ---- no lost update ---------------------------------------------------------- */

#define ADDERS 6
#define ADDS 150

struct adder {
  zkl_session_t *s;
  const char *path;
  int64_t *got; /* the values after each add */
  int fails;
  int id;
};

static void *adder_run(void *arg) {
  struct adder *a = arg;
  zkl_counter_t *c = NULL;
  if (zkl_counter_create(&c, a->s, a->path, NULL) != 0) {
    a->fails = ADDS;
    return NULL;
  }
  for (int i = 0; i < ADDS; i++) {
    zkl_count_t now;
    int delta = a->id % 2 == 0 ? 1 : 2;
    if (zkl_counter_add(c, delta, 20000, &now) != 0) a->fails++;
    else a->got[i] = now.value * 4 + delta; /* value and who */
  }
  zkl_counter_destroy(c);
  return NULL;
}

static int cmp64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

START_TEST(concurrent_adds_lose_nothing) {
  char root[128];
  it_root(root, sizeof root, "k-adds");
  zkl_session_t *s[3] = {it_session(), it_session(), it_session()};
  struct adder a[ADDERS];
  pthread_t t[ADDERS];
  int64_t *all = calloc(ADDERS * ADDS, sizeof *all);
  for (int i = 0; i < ADDERS; i++) {
    a[i] = (struct adder){s[i % 3], root, all + i * ADDS, 0, i};
    ck_assert_int_eq(pthread_create(&t[i], NULL, adder_run, &a[i]), 0);
  }
  for (int i = 0; i < ADDERS; i++) {
    pthread_join(t[i], NULL);
    ck_assert_int_eq(a[i].fails, 0);
  }
  zkl_counter_t *c = counter(s[0], root, ZKL_COUNTER_INT32, 0);
  zkl_count_t now;
  ck_assert_int_eq(zkl_counter_get(c, &now), 0);
  int64_t want = (ADDERS / 2) * ADDS * 1 + (ADDERS / 2) * ADDS * 2;
  ck_assert_int_eq(now.value, want);
  ck_assert_int_eq(now.version, ADDERS * ADDS - 1); /* made, then written */
  /* every value after an add was handed out once: no two adds applied
   * on the same value */
  qsort(all, ADDERS * ADDS, sizeof *all, cmp64);
  for (int i = 1; i < ADDERS * ADDS; i++)
    ck_assert_msg(all[i] / 4 != all[i - 1] / 4, "value %lld twice",
                  (long long)(all[i] / 4));
  free(all);
  zkl_counter_destroy(c);
  rm(s[0], root);
  for (int i = 0; i < 3; i++) zkl_session_close(s[i]);
}
END_TEST

/* ---- the change notification --------------------------------------------------- */

struct later {
  zkl_session_t *s;
  const char *path;
  int ms;
  int64_t delta;
};

static void *add_later(void *arg) {
  struct later *l = arg;
  it_sleep_ms(l->ms);
  zkl_counter_t *c = NULL;
  if (zkl_counter_create(&c, l->s, l->path, NULL) == 0) {
    zkl_counter_add(c, l->delta, 10000, NULL);
    zkl_counter_destroy(c);
  }
  return NULL;
}

struct canceler {
  zkl_counter_t *c;
  int ms;
};

static void *cancel_later(void *arg) {
  struct canceler *x = arg;
  it_sleep_ms(x->ms);
  zkl_counter_cancel(x->c);
  return NULL;
}

START_TEST(wait_for_a_change) {
  char root[128];
  it_root(root, sizeof root, "k-wait");
  zkl_session_t *s = it_session(), *o = it_session();
  zkl_counter_t *c = counter(s, root, ZKL_COUNTER_INT32, 0);
  zkl_count_t seen, now;
  /* missing node: woken by its creation (another session's add) */
  ck_assert_int_eq(zkl_counter_get(c, &seen), 0);
  struct later l = {o, root, 200, 5};
  pthread_t t;
  pthread_create(&t, NULL, add_later, &l);
  int64_t t0 = it_now_ms();
  ck_assert_int_eq(zkl_counter_wait(c, &seen, 10000, &now), 0);
  ck_assert_int_ge(it_now_ms() - t0, 150);
  ck_assert_int_eq(now.exists, 1);
  ck_assert_int_eq(now.value, 5);
  pthread_join(t, NULL);
  /* a seen that is already old: at once */
  ck_assert_int_eq(zkl_counter_wait(c, &seen, 0, &now), 0);
  ck_assert_int_eq(now.value, 5);
  /* nothing changes: the deadline, and timeout 0 at once */
  ck_assert_int_eq(zkl_counter_wait(c, &now, 0, &seen), ZKL_ETIMEDOUT);
  t0 = it_now_ms();
  ck_assert_int_eq(zkl_counter_wait(c, &now, 300, &seen), ZKL_ETIMEDOUT);
  ck_assert_int_ge(it_now_ms() - t0, 280);
  /* seen NULL: the next change from now on */
  l.ms = 200;
  l.delta = -2;
  pthread_create(&t, NULL, add_later, &l);
  ck_assert_int_eq(zkl_counter_wait(c, NULL, 10000, &now), 0);
  ck_assert_int_eq(now.value, 3);
  pthread_join(t, NULL);
  /* a cancel from another thread */
  struct canceler x = {c, 200};
  pthread_create(&t, NULL, cancel_later, &x);
  ck_assert_int_eq(zkl_counter_wait(c, &now, 10000, &seen), ZKL_ECANCELED);
  pthread_join(t, NULL);
  /* deleted: a change too */
  pthread_create(&t, NULL, add_later, &(struct later){o, root, 0, 0});
  pthread_join(t, NULL);
  ck_assert_int_eq(zkl_counter_get(c, &seen), 0);
  rm(o, root);
  ck_assert_int_eq(zkl_counter_wait(c, &seen, 5000, &now), 0);
  ck_assert_int_eq(now.exists, 0);
  zkl_counter_destroy(c);
  zkl_session_close(s);
  zkl_session_close(o);
}
END_TEST

/* ---- a write whose answer is lost ------------------------------------------------ */

START_TEST(lost_answer_reported_never_resent) {
  char root[128];
  it_root(root, sizeof root, "k-lost");
  zkl_session_t *o = it_session();
  it_proxy_t *p = it_proxy_start();
  char hosts[64];
  snprintf(hosts, sizeof hosts, "127.0.0.1:%d", it_proxy_port(p));
  zkl_session_t *s = it_session_at(hosts, 6000);
  zkl_counter_t *c = counter(s, root, ZKL_COUNTER_INT32, 0);
  ck_assert_int_eq(zkl_counter_set(c, 10, NULL), 0);
  zkl_count_t now;
  ck_assert_int_eq(zkl_counter_get(c, &now), 0);
  it_proxy_cut_after(p, OP_SETDATA);
  int rc = zkl_counter_add(c, 1, 10000, &now);
  ck_assert_msg(rc == ZKL_ESUSPENDED, "add: %s (%s)", it_code(rc),
                zkl_last_error());
  ck_assert_ptr_nonnull(strstr(zkl_last_error(), "may have been applied"));
  ck_assert_int_eq(it_proxy_cuts(p), 1);
  /* applied once, never twice */
  zkl_counter_t *v = counter(o, root, ZKL_COUNTER_INT32, 0);
  ck_assert_int_eq(zkl_counter_get(v, &now), 0);
  ck_assert_int_eq(now.value, 11);
  ck_assert_int_eq(now.version, 1); /* made by the set, written once */
  /* and the object goes on once reconnected */
  ck_assert_int_eq(zkl_counter_add(c, 1, 10000, &now), 0);
  ck_assert_int_eq(now.value, 12);
  zkl_counter_destroy(c);
  zkl_counter_destroy(v);
  zkl_session_close(s);
  it_proxy_stop(p);
  rm(o, root);
  zkl_session_close(o);
}
END_TEST

/* ---- async ---------------------------------------------------------------------- */

struct tally {
  int done, ok, last_rc;
  int64_t last;
};

static void counted(zkl_counter_t *c, int rc, const zkl_count_t *now,
                    void *arg) {
  (void)c;
  struct tally *t = arg;
  t->done++;
  t->last_rc = rc;
  if (rc == 0) {
    t->ok++;
    t->last = now->value;
  }
}

static void dispatch_until(zkl_session_t *s, struct tally *t, int n) {
  int64_t end = it_now_ms() + 20000;
  while (t->done < n && it_now_ms() < end) {
    zkl_session_dispatch(s);
    it_sleep_ms(1);
  }
  ck_assert_int_eq(t->done, n);
}

START_TEST(async_forms) {
  char root[128];
  it_root(root, sizeof root, "k-async");
  zkl_session_t *s = it_session();
  zkl_counter_t *c = counter(s, root, ZKL_COUNTER_INT64, 100);
  struct tally t = {0};
  for (int i = 0; i < 20; i++) {
    ck_assert_int_eq(zkl_counter_add_async(c, 2, 5000, counted, &t), 0);
    ck_assert_int_eq(t.done, i); /* never from the submitting call */
    /* one call at a time */
    ck_assert_int_eq(zkl_counter_get_async(c, counted, &t), ZKL_EBUSY);
    dispatch_until(s, &t, i + 1);
  }
  ck_assert_int_eq(t.ok, 20);
  ck_assert_int_eq(t.last, 140);
  ck_assert_int_eq(zkl_counter_set_async(c, 7, counted, &t), 0);
  dispatch_until(s, &t, 21);
  ck_assert_int_eq(t.last, 7);
  ck_assert_int_eq(zkl_counter_get_async(c, counted, &t), 0);
  dispatch_until(s, &t, 22);
  ck_assert_int_eq(t.last, 7);
  zkl_count_t stale = {.value = 7, .version = 0, .exists = 1};
  ck_assert_int_eq(zkl_counter_cas_async(c, &stale, 8, counted, &t), 0);
  dispatch_until(s, &t, 23);
  ck_assert_int_eq(t.last_rc, ZKL_ESTALE);
  /* a pending wait, destroyed before dispatch: ZKL_ECANCELED */
  ck_assert_int_eq(zkl_counter_wait_async(c, NULL, 60000, counted, &t), 0);
  it_sleep_ms(100);
  zkl_counter_destroy(c);
  dispatch_until(s, &t, 24);
  ck_assert_int_eq(t.last_rc, ZKL_ECANCELED);
  ck_assert_int_eq(zkl_counter_add_async(NULL, 1, 0, counted, &t), ZKL_EINVAL);
  rm(s, root);
  zkl_session_close(s);
}
END_TEST

START_TEST(bad_input) {
  zkl_session_t *s = it_session();
  zkl_counter_t *c = (zkl_counter_t *)1;
  zkl_counter_opts_t o;
  zkl_counter_opts_init(&o);
  ck_assert_int_eq(o.format, ZKL_COUNTER_INT32);
  ck_assert_int_eq(zkl_counter_create(&c, s, "/", NULL), ZKL_EINVAL);
  ck_assert_ptr_null(c);
  ck_assert_int_eq(zkl_counter_create(&c, s, "rel", NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_counter_create(&c, NULL, "/x", NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_counter_create(NULL, s, "/x", NULL), ZKL_EINVAL);
  o.format = (zkl_counter_format_t)7;
  ck_assert_int_eq(zkl_counter_create(&c, s, "/x", &o), ZKL_EINVAL);
  o.format = ZKL_COUNTER_INT32;
  o.initial = (int64_t)INT32_MAX + 1;
  ck_assert_int_eq(zkl_counter_create(&c, s, "/x", &o), ZKL_EINVAL);
  ck_assert_str_ne(zkl_last_error(), "");
  ck_assert_int_eq(zkl_counter_get(NULL, NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_counter_add(NULL, 1, 0, NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_counter_wait(NULL, NULL, 0, NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_counter_cancel(NULL), ZKL_EINVAL);
  c = counter(s, "/zkl-test/never-made", ZKL_COUNTER_INT32, 0);
  ck_assert_int_eq(zkl_counter_get(c, NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_counter_get_async(c, NULL, NULL), ZKL_EINVAL);
  zkl_counter_destroy(c);
  zkl_counter_destroy(NULL);
  zkl_session_close(s);
}
END_TEST

Suite *counter_suite(void) {
  Suite *su = suite_create("counter");
  TCase *tc = it_tcase("counter");
  tcase_add_test(tc, formats_byte_for_byte);
  tcase_add_test(tc, missing_and_empty_nodes);
  tcase_add_test(tc, foreign_data_refused_and_untouched);
  tcase_add_test(tc, compare_and_set);
  tcase_add_test(tc, range_refused_nothing_written);
  tcase_add_test(tc, concurrent_adds_lose_nothing);
  tcase_add_test(tc, wait_for_a_change);
  tcase_add_test(tc, lost_answer_reported_never_resent);
  tcase_add_test(tc, async_forms);
  tcase_add_test(tc, bad_input);
  suite_add_tcase(su, tc);
  return su;
}
