/* tests/integration/test-queue.c - the distributed queue against a real
 * server: FIFO order and binary payloads, batches, kazoo's priority
 * format, foreign children ignored, blocking takes (deadline, cancel),
 * waiting consumers served in arrival order and herd-free (one watcher of
 * the queue however many wait), a put whose answer is lost applied once,
 * a line node whose create's answer is lost found again (or deleted by the
 * janitor), never another's, the bound, the async calls, bad input, and no
 * node left behind. */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"

#define OP_MULTI 14
#define PREFIX_LEN 40 /* "_c_<uuid>-": a contender's protected prefix */

static zkl_queue_t *queue(zkl_session_t *s, const char *path) {
  return it_queue(s, path, ZKL_QUEUE_QN, 100);
}

/* The markers of confirmed puts under <root>.zkl/puts once the objects
 * are gone: none (the janitor deletes them; a few ms). */
static void assert_no_markers(zkl_session_t *s, const char *root) {
  char puts[512];
  snprintf(puts, sizeof puts, "%s.zkl/puts", root);
  ck_assert_msg(it_wait_children(s, puts, 0, 5000), "markers left in %s",
                puts);
}

START_TEST(fifo_and_binary_payloads) {
  char root[128];
  it_root(root, sizeof root, "q-fifo");
  zkl_session_t *s = it_session();
  zkl_queue_t *q = queue(s, root);
  zkl_item_t it;
  ck_assert_int_eq(zkl_queue_take(q, 0, &it), ZKL_EEMPTY); /* no path yet */
  for (int i = 0; i < 20; i++) {
    char buf[8] = {'x', 0, (char)i, (char)0xff, 'y'};
    ck_assert_int_eq(zkl_queue_put(q, buf, 5, 5000), 0);
  }
  ck_assert_int_eq(zkl_queue_put(q, NULL, 0, 5000), 0); /* empty payload */
  size_t n = 0;
  ck_assert_int_eq(zkl_queue_size(q, &n), 0);
  ck_assert_uint_eq(n, 21);
  zkl_item_t *all = NULL;
  ck_assert_int_eq(zkl_queue_list(q, 0, &all, &n), 0);
  ck_assert_uint_eq(n, 21);
  for (size_t i = 0; i < n; i++) {
    ck_assert_int_eq(all[i].claimed, 0);
    ck_assert_uint_eq(all[i].len, i < 20 ? 5 : 0);
    if (i < 20) ck_assert_int_eq(all[i].data[2], (char)i);
    if (i > 0) ck_assert_uint_gt(all[i].token, all[i - 1].token);
  }
  zkl_items_free(all, n);
  ck_assert_int_eq(zkl_queue_list(q, 5, &all, &n), 0);
  ck_assert_uint_eq(n, 5);
  zkl_items_free(all, n);
  ck_assert_int_eq(zkl_queue_peek(q, &it), 0);
  ck_assert_uint_eq(it.len, 5);
  ck_assert_int_eq(it.data[2], 0);
  char head[32];
  snprintf(head, sizeof head, "%s", it.name);
  zkl_item_free(&it);
  uint64_t last = 0;
  for (int i = 0; i < 20; i++) {
    ck_assert_int_eq(zkl_queue_take(q, 0, &it), 0);
    if (i == 0) ck_assert_str_eq(it.name, head);
    ck_assert_uint_eq(it.len, 5);
    ck_assert_int_eq(memcmp(it.data, (char[]){'x', 0, (char)i, (char)0xff,
                                               'y'}, 5), 0);
    ck_assert_int_eq(it.data[5], 0); /* a NUL follows */
    ck_assert_uint_gt(it.token, last);
    ck_assert(strncmp(it.name, "qn-", 3) == 0);
    last = it.token;
    zkl_item_free(&it);
  }
  ck_assert_int_eq(zkl_queue_take(q, 1000, &it), 0);
  ck_assert_uint_eq(it.len, 0);
  zkl_item_free(&it);
  ck_assert_int_eq(zkl_queue_take(q, 0, &it), ZKL_EEMPTY);
  ck_assert_int_eq(zkl_queue_peek(q, &it), ZKL_EEMPTY);
  ck_assert_int_eq(zkl_queue_size(q, &n), 0);
  ck_assert_uint_eq(n, 0);
  zkl_queue_destroy(q);
  assert_no_markers(s, root);
  zkl_session_close(s);
}
END_TEST

START_TEST(batches_are_atomic_and_in_order) {
  char root[128];
  it_root(root, sizeof root, "q-batch");
  zkl_session_t *s = it_session();
  zkl_queue_t *q = queue(s, root), *r = queue(s, root);
  char data[300][8];
  zkl_buf_t b[300];
  for (int i = 0; i < 300; i++) {
    snprintf(data[i], sizeof data[i], "%d", i);
    b[i] = (zkl_buf_t){data[i], strlen(data[i])};
  }
  ck_assert_int_eq(zkl_queue_put_batch(q, b, 300, 5000), 0);
  zkl_item_t *v = NULL;
  size_t n = 0;
  ck_assert_int_eq(zkl_queue_take_batch(r, 1000, 5000, &v, &n), 0);
  ck_assert_uint_eq(n, 300);
  for (size_t i = 0; i < n; i++) {
    ck_assert_str_eq(v[i].data, data[i]);
    if (i > 0) ck_assert_int_lt(strcmp(v[i - 1].name, v[i].name), 0);
  }
  zkl_items_free(v, n);
  /* a batch that cannot be applied is applied not at all: one payload
   * too many bytes is refused before anything is sent */
  static char big[ZKL_QUEUE_MAX_BYTES / 2 + 1];
  zkl_buf_t two[2] = {{big, sizeof big}, {big, sizeof big}};
  ck_assert_int_eq(zkl_queue_put_batch(q, two, 2, 5000), ZKL_EINVAL);
  ck_assert_ptr_nonnull(strstr(zkl_last_error(), "jute.maxbuffer"));
  size_t size = 9;
  ck_assert_int_eq(zkl_queue_size(q, &size), 0);
  ck_assert_uint_eq(size, 0);
  /* one payload as big as allowed goes through */
  static char one[ZKL_QUEUE_MAX_BYTES];
  memset(one, 'z', sizeof one);
  ck_assert_int_eq(zkl_queue_put(q, one, sizeof one, 10000), 0);
  zkl_item_t it;
  ck_assert_int_eq(zkl_queue_take(r, 5000, &it), 0);
  ck_assert_uint_eq(it.len, sizeof one);
  ck_assert_int_eq(it.data[sizeof one - 1], 'z');
  zkl_item_free(&it);
  zkl_queue_destroy(q);
  zkl_queue_destroy(r);
  assert_no_markers(s, root);
  zkl_session_close(s);
}
END_TEST

/* kazoo's format: entry-<prio>-<seq>, lower priority first; children of
 * another shape are ignored (never taken, never deleted). */
/* A batch take is one transaction; when it fails on an item it cannot
 * delete (here: an item with a child), the items before it are still
 * taken, in order, and the item and those after it stay, for the next
 * take: the failing op is found in the multi's answer. */
START_TEST(batch_take_stops_at_an_item_it_cannot_delete) {
  const int formats[2] = {ZKL_QUEUE_QN, ZKL_QUEUE_LOCKING};
  for (int f = 0; f < 2; f++) {
    char root[128], dir[256], child[512];
    it_root(root, sizeof root, "q-stuck");
    zkl_session_t *s = it_session();
    zkl_queue_t *q = it_queue(s, root, formats[f], 100),
                *r = it_queue(s, root, formats[f], 100);
    zkl_buf_t b[5];
    char data[5][2] = {"0", "1", "2", "3", "4"};
    for (int i = 0; i < 5; i++) b[i] = (zkl_buf_t){data[i], 1};
    ck_assert_int_eq(zkl_queue_put_batch(q, b, 5, 5000), 0);
    snprintf(dir, sizeof dir, "%s%s", root,
             formats[f] == ZKL_QUEUE_LOCKING ? "/entries" : "");
    struct String_vector v = {0, NULL};
    ck_assert_int_eq(it_children(s, dir, &v), 5);
    const char *third = NULL; /* the third item in queue order */
    for (int i = 0, below; i < v.count && third == NULL; i++) {
      below = 0;
      for (int j = 0; j < v.count; j++) below += strcmp(v.data[j], v.data[i]) < 0;
      if (below == 2) third = v.data[i];
    }
    snprintf(child, sizeof child, "%s/%s/stuck", dir, third);
    deallocate_String_vector(&v);
    ck_assert_int_eq(zoo_create(zkl_session_zhandle(s), child, NULL, -1,
                                &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
    zkl_item_t *got = NULL;
    size_t n = 9;
    ck_assert_int_eq(zkl_queue_take_batch(r, 10, 0, &got, &n), 0);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(got[0].data, "0");
    ck_assert_str_eq(got[1].data, "1");
    zkl_items_free(got, n);
    /* the stuck item heads the queue: told, nothing skipped */
    got = NULL;
    n = 9;
    ck_assert_int_eq(zkl_queue_take_batch(r, 10, 0, &got, &n), ZNOTEMPTY);
    ck_assert_uint_eq(n, 0);
    size_t size = 0;
    ck_assert_int_eq(zkl_queue_size(r, &size), 0);
    ck_assert_uint_eq(size, 3);
    ck_assert_int_eq(zoo_delete(zkl_session_zhandle(s), child, -1), ZOK);
    ck_assert_int_eq(zkl_queue_take_batch(r, 10, 0, &got, &n), 0);
    ck_assert_uint_eq(n, 3);
    for (size_t i = 0; i < n; i++) ck_assert_str_eq(got[i].data, data[2 + i]);
    zkl_items_free(got, n);
    zkl_queue_destroy(q);
    zkl_queue_destroy(r);
    assert_no_markers(s, root);
    zkl_session_close(s);
  }
}
END_TEST

START_TEST(kazoo_priorities_and_foreign_children) {
  char root[128], path[256];
  it_root(root, sizeof root, "q-prio");
  zkl_session_t *s = it_session();
  zkl_queue_t *lo = it_queue(s, root, ZKL_QUEUE_KAZOO, 500);
  zkl_queue_t *hi = it_queue(s, root, ZKL_QUEUE_KAZOO, 7);
  ck_assert_int_eq(zkl_queue_put(lo, "a", 1, 5000), 0);
  ck_assert_int_eq(zkl_queue_put(lo, "b", 1, 5000), 0);
  ck_assert_int_eq(zkl_queue_put(hi, "c", 1, 5000), 0);
  zhandle_t *zh = zkl_session_zhandle(s);
  const char *foreign[] = {"foo", "entry-1x0-0000000001", "qn-0000000001",
                           "entry-100-", "entry-100-00000000012"};
  for (size_t i = 0; i < sizeof foreign / sizeof *foreign; i++) {
    snprintf(path, sizeof path, "%s/%s", root, foreign[i]);
    ck_assert_int_eq(zoo_create(zh, path, "f", 1, &ZOO_OPEN_ACL_UNSAFE, 0,
                                NULL, 0), ZOK);
  }
  zkl_item_t it;
  const char *want[] = {"c", "a", "b"};
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(zkl_queue_take(lo, 0, &it), 0);
    ck_assert_str_eq(it.data, want[i]);
    ck_assert(strncmp(it.name, i == 0 ? "entry-007-" : "entry-500-", 10) == 0);
    zkl_item_free(&it);
  }
  ck_assert_int_eq(zkl_queue_take(lo, 0, &it), ZKL_EEMPTY);
  ck_assert_int_eq(zkl_queue_remove(lo, "foo"), ZKL_EINVAL);
  ck_assert_int_eq(zkl_queue_remove(lo, "entry-100-0000000099"), ZKL_ENOENT);
  size_t n = 0;
  ck_assert_int_eq(zkl_queue_size(lo, &n), 0);
  ck_assert_uint_eq(n, 5); /* the foreign children, untouched */
  ck_assert_int_eq(it_children(s, root, NULL), 5);
  zkl_queue_destroy(lo);
  zkl_queue_destroy(hi);
  zkl_session_close(s);
}
END_TEST

/* An item this session may not read (its ACL) is never deleted unread: the
 * take says ZNOAUTH and the item stays; remove can take it out of the way,
 * and items behind it are taken as usual. */
START_TEST(unreadable_item_is_not_taken) {
  char root[128], path[256];
  it_root(root, sizeof root, "q-acl");
  zkl_session_t *s = it_session();
  zkl_queue_t *q = queue(s, root);
  ck_assert_int_eq(zkl_queue_put(q, "first", 5, 5000), 0);
  zkl_item_t it;
  ck_assert_int_eq(zkl_queue_take(q, 0, &it), 0);
  zkl_item_free(&it);
  /* a digest-only ACL: this (unauthenticated) session may not read it */
  struct ACL acl = {ZOO_PERM_ALL, {"digest", "u:AAAAAAAAAAAAAAAAAAAAAAAAAAA="}};
  struct ACL_vector v = {1, &acl};
  snprintf(path, sizeof path, "%s/qn-0000000001", root);
  ck_assert_int_eq(zoo_create(zkl_session_zhandle(s), path, "secret", 6, &v,
                              0, NULL, 0), ZOK);
  ck_assert_int_eq(zkl_queue_take(q, 0, &it), ZNOAUTH);
  ck_assert_ptr_nonnull(strstr(zkl_last_error(), "zkl_queue_remove"));
  ck_assert_int_eq(it_children(s, root, NULL), 1); /* still there */
  ck_assert_int_eq(zkl_queue_put(q, "next", 4, 5000), 0);
  zkl_item_t *all = NULL;
  size_t n = 0;
  ck_assert_int_eq(zkl_queue_list(q, 0, &all, &n), 0); /* listed, no data */
  ck_assert_uint_eq(n, 2);
  ck_assert_ptr_null(all[0].data);
  ck_assert_str_eq(all[0].name, "qn-0000000001");
  ck_assert_str_eq(all[1].data, "next");
  zkl_items_free(all, n);
  ck_assert_int_eq(zkl_queue_take(q, 0, &it), 0); /* behind it: taken */
  ck_assert_str_eq(it.data, "next");
  zkl_item_free(&it);
  ck_assert_int_eq(zkl_queue_remove(q, "qn-0000000001"), 0);
  ck_assert_int_eq(zkl_queue_take(q, 0, &it), ZKL_EEMPTY);
  zkl_queue_destroy(q);
  zkl_session_close(s);
}
END_TEST

START_TEST(remove_by_name) {
  char root[128];
  it_root(root, sizeof root, "q-remove");
  zkl_session_t *s = it_session();
  zkl_queue_t *q = queue(s, root);
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq(zkl_queue_put(q, "abc" + i, 1, 5000), 0);
  zkl_item_t it;
  ck_assert_int_eq(zkl_queue_peek(q, &it), 0);
  ck_assert_str_eq(it.data, "a");
  ck_assert_int_eq(zkl_queue_remove(q, it.name), 0);
  ck_assert_int_eq(zkl_queue_remove(q, it.name), ZKL_ENOENT);
  zkl_item_free(&it);
  ck_assert_int_eq(zkl_queue_take(q, 0, &it), 0);
  ck_assert_str_eq(it.data, "b");
  zkl_item_free(&it);
  zkl_queue_destroy(q);
  zkl_session_close(s);
}
END_TEST

/* ---- blocking takes ---------------------------------------------------- */

typedef struct taker {
  zkl_queue_t *q;
  int64_t timeout_ms;
  int rc;
  char data[64];
  int64_t took_ms;
} taker_t;

static void *take_main(void *arg) {
  taker_t *t = arg;
  zkl_item_t it;
  t->rc = zkl_queue_take(t->q, t->timeout_ms, &it);
  if (t->rc == 0) {
    snprintf(t->data, sizeof t->data, "%s", it.data);
    zkl_item_free(&it);
  }
  t->took_ms = it_now_ms();
  return NULL;
}

START_TEST(take_waits_times_out_and_cancels) {
  char root[128];
  it_root(root, sizeof root, "q-wait");
  zkl_session_t *s = it_session();
  zkl_queue_t *q = queue(s, root), *p = queue(s, root);
  int64_t t0 = it_now_ms();
  zkl_item_t it;
  ck_assert_int_eq(zkl_queue_take(q, 300, &it), ZKL_ETIMEDOUT);
  int64_t took = it_now_ms() - t0;
  ck_assert_int_ge(took, 290);
  ck_assert_int_lt(took, 2000);
  /* a put wakes a blocked take (the path did not exist: it appears) */
  taker_t t = {q, -1, 99, "", 0};
  pthread_t th;
  pthread_create(&th, NULL, take_main, &t);
  usleep(200 * 1000);
  ck_assert_int_eq(zkl_queue_put(p, "hello", 5, 5000), 0);
  pthread_join(th, NULL);
  ck_assert_int_eq(t.rc, 0);
  ck_assert_str_eq(t.data, "hello");
  /* cancel */
  t.rc = 99;
  pthread_create(&th, NULL, take_main, &t);
  usleep(300 * 1000);
  ck_assert_int_eq(zkl_queue_cancel(q), 0);
  pthread_join(th, NULL);
  ck_assert_int_eq(t.rc, ZKL_ECANCELED);
  /* it left the line */
  char wait[256];
  snprintf(wait, sizeof wait, "%s.zkl/wait", root);
  ck_assert(it_wait_children(s, wait, 0, 5000));
  zkl_queue_destroy(q);
  zkl_queue_destroy(p);
  zkl_session_close(s);
}
END_TEST

/* Consumers that must wait are served in the order they came, and only
 * the line's head watches the queue: a put wakes one consumer. */
/* The child watches on the servers: mntr's zk_watch_count counts every
 * watch, wchs's total only the data and exists watches. */
static long sum_of(const char *text, const char *key) {
  long sum = 0;
  for (const char *at = text; (at = strstr(at, key)) != NULL;) {
    at += strlen(key);
    sum += strtol(at, NULL, 10);
  }
  return sum;
}

static long child_watches(void) {
  char *mntr = it_4lw("mntr"), *wchs = it_4lw("wchs");
  long n = sum_of(mntr, "zk_watch_count\t") - sum_of(wchs, "Total watches:");
  free(mntr);
  free(wchs);
  return n;
}

#define WAITERS 12
START_TEST(waiting_consumers_in_order_and_herd_free) {
  char root[128], wait[256];
  it_root(root, sizeof root, "q-line");
  snprintf(wait, sizeof wait, "%s.zkl/wait", root);
  zkl_session_t *s[WAITERS], *ps = it_session();
  zkl_queue_t *p = queue(ps, root);
  ck_assert_int_eq(zkl_queue_put(p, "x", 1, 5000), 0); /* make the path */
  zkl_item_t it;
  ck_assert_int_eq(zkl_queue_take(p, 0, &it), 0);
  zkl_item_free(&it);
  taker_t t[WAITERS];
  pthread_t th[WAITERS];
  for (int i = 0; i < WAITERS; i++) {
    s[i] = it_session();
    t[i] = (taker_t){queue(s[i], root), 30000, 99, "", 0};
    pthread_create(&th[i], NULL, take_main, &t[i]);
    ck_assert_msg(it_wait_children(ps, wait, i + 1, 5000),
                  "consumer %d did not join the line", i);
  }
  /* one watcher of the queue's children (the head), whatever waits */
  usleep(100 * 1000);
  ck_assert_int_eq(child_watches(), 1);
  for (int i = 0; i < WAITERS; i++) {
    char d[16];
    snprintf(d, sizeof d, "%d", i);
    ck_assert_int_eq(zkl_queue_put(p, d, strlen(d), 5000), 0);
    pthread_join(th[i], NULL); /* the i-th to come gets the i-th item */
    ck_assert_int_eq(t[i].rc, 0);
    ck_assert_str_eq(t[i].data, d);
  }
  for (int i = 0; i < WAITERS; i++) {
    zkl_queue_destroy(t[i].q);
    zkl_session_close(s[i]);
  }
  ck_assert(it_wait_children(ps, wait, 0, 5000));
  zkl_queue_destroy(p);
  zkl_session_close(ps);
}
END_TEST

/* Consumers that take again and again, each on its own session: every
 * item it took, in order; it stops at an item "end". */
#define ROUNDS 4
#define LOOPERS 24
typedef struct looper {
  zkl_queue_t *q;
  int got[ROUNDS * 2], n, canceled, rc;
  int *taken; /* atomic: the items every looper's take returned */
} looper_t;

static void *loop_main(void *arg) {
  looper_t *l = arg;
  for (;;) {
    zkl_item_t it;
    int rc = zkl_queue_take(l->q, 30000, &it);
    if (rc == ZKL_ECANCELED) { /* told to leave its place: join again */
      __atomic_add_fetch(&l->canceled, 1, __ATOMIC_SEQ_CST);
      continue;
    }
    if (rc != 0) {
      l->rc = rc;
      return NULL;
    }
    int end = strcmp(it.data, "end") == 0;
    if (!end && l->n < ROUNDS * 2) l->got[l->n++] = atoi(it.data);
    zkl_item_free(&it);
    __atomic_add_fetch(l->taken, 1, __ATOMIC_SEQ_CST);
    if (end) return NULL;
  }
}

static long response_bytes(void) {
  char *mntr = it_4lw("mntr");
  long n = sum_of(mntr, "zk_response_bytes\t");
  free(mntr);
  return n;
}

static void seen_fn(zhandle_t *zh, int type, int state, const char *path,
                    void *ctx) {
  (void)zh, (void)state, (void)path;
  if (type != ZOO_SESSION_EVENT) __atomic_add_fetch((int *)ctx, 1,
                                                    __ATOMIC_SEQ_CST);
}

/* Waits until the line node of sequence seq is there (want 1) or gone:
 * one exists with a watch, and its notification if it has to wait (the
 * same server work however long the line).  seen outlives the session
 * (a watch left set may fire later). */
static void await_node(zkl_session_t *s, const char *wait, int seq, int want,
                       int *seen) {
  char path[320];
  snprintf(path, sizeof path, "%s/w-lock-%010d", wait, seq);
  struct Stat st;
  int rc = zoo_wexists(zkl_session_zhandle(s), path, seen_fn, seen, &st);
  ck_assert_msg(rc == ZOK || rc == ZNONODE, "exists %s: %s", path,
                zerror(rc));
  if ((rc == ZOK) == want) return;
  int64_t until = it_now_ms() + 10000;
  while (__atomic_load_n(seen, __ATOMIC_SEQ_CST) == 0 && it_now_ms() < until)
    it_sleep_ms(1);
  ck_assert_msg(*seen > 0, "%s did not %s", path, want ? "come" : "go");
}

/* The line as the test expects it: consumers and their node's sequence,
 * head first. */
typedef struct line_model {
  int who[LOOPERS], seq[LOOPERS], w, next_seq;
  int expect[LOOPERS][ROUNDS * 2], nexp[LOOPERS];
  int seen[ROUNDS * 2 * LOOPERS * 2 + 8], nseen;
} line_model_t;

/* Puts item `no` (the no-th) and waits until the head's take has
 * returned it, its node is gone, and it is back at the tail with the
 * next sequence (a take that finds an item as it comes takes it without
 * waiting in the line: the next put waits for that). */
static void put_and_settle(zkl_queue_t *p, zkl_session_t *ps,
                           const char *wait, int no, line_model_t *m,
                           int *taken) {
  char d[16];
  snprintf(d, sizeof d, "%d", no);
  ck_assert_int_eq(zkl_queue_put(p, d, strlen(d), 5000), 0);
  int64_t until = it_now_ms() + 10000;
  while (__atomic_load_n(taken, __ATOMIC_SEQ_CST) <= no &&
         it_now_ms() < until)
    it_sleep_ms(1);
  ck_assert_msg(*taken == no + 1, "item %d was not taken", no);
  int head = m->who[0];
  m->expect[head][m->nexp[head]++] = no;
  await_node(ps, wait, m->seq[0], 0, &m->seen[m->nseen++]);
  memmove(m->who, m->who + 1, (size_t)(m->w - 1) * sizeof *m->who);
  memmove(m->seq, m->seq + 1, (size_t)(m->w - 1) * sizeof *m->seq);
  m->who[m->w - 1] = head;
  m->seq[m->w - 1] = m->next_seq++;
  await_node(ps, wait, m->seq[m->w - 1], 1, &m->seen[m->nseen++]);
}

static int int_cmp(const void *a, const void *b) {
  return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* Consumers that come back to the line join it at its tail without
 * listing it (their names are computable: they watch the node made just
 * before theirs), so the server's work per put does not grow with the
 * line; arrival order holds, also when a consumer in the middle leaves
 * (the one behind it then lists).  The server's bytes per put from the
 * second round on. */
static long rejoin_rounds(int w) {
  char root[128], wait[256];
  it_root(root, sizeof root, "q-rejoin");
  snprintf(wait, sizeof wait, "%s.zkl/wait", root);
  zkl_session_t *ps = it_session(), *s[LOOPERS];
  zkl_queue_t *p = queue(ps, root);
  ck_assert_int_eq(zkl_queue_put(p, "x", 1, 5000), 0); /* make the path */
  zkl_item_t it;
  ck_assert_int_eq(zkl_queue_take(p, 0, &it), 0);
  zkl_item_free(&it);
  looper_t l[LOOPERS];
  pthread_t th[LOOPERS];
  static line_model_t m;
  memset(&m, 0, sizeof m);
  m.w = w;
  int taken = 0;
  for (int i = 0; i < w; i++) {
    s[i] = it_session();
    memset(&l[i], 0, sizeof l[i]);
    l[i].taken = &taken;
    l[i].q = queue(s[i], root);
    pthread_create(&th[i], NULL, loop_main, &l[i]);
    ck_assert_msg(it_wait_children(ps, wait, i + 1, 5000),
                  "consumer %d did not join the line", i);
    m.who[i] = i;
  }
  struct String_vector v = {0, NULL};
  ck_assert_int_eq(it_children(ps, wait, &v), w);
  for (int i = 0; i < w; i++) {
    ck_assert_msg(strncmp(v.data[i], "w-lock-", 7) == 0 &&
                      strlen(v.data[i]) == 17,
                  "line node %s", v.data[i]);
    m.seq[i] = atoi(v.data[i] + 7);
  }
  deallocate_String_vector(&v);
  qsort(m.seq, (size_t)w, sizeof *m.seq, int_cmp);
  m.next_seq = m.seq[w - 1] + 1;
  long before = 0;
  int no = 0;
  for (int r = 0; r < ROUNDS; r++) {
    if (r == 1) before = response_bytes(); /* round 0 is the warm-up */
    for (int k = 0; k < w; k++, no++)
      put_and_settle(p, ps, wait, no, &m, &taken);
  }
  long per_put = (response_bytes() - before) / ((ROUNDS - 1) * w);
  /* one in the middle leaves and comes back: the one behind it finds the
   * node it watched gone and lists the line */
  int mid = w / 2, who = m.who[mid];
  ck_assert_int_eq(zkl_queue_cancel(l[who].q), 0);
  await_node(ps, wait, m.seq[mid], 0, &m.seen[m.nseen++]);
  memmove(m.who + mid, m.who + mid + 1, (size_t)(w - mid - 1) * sizeof *m.who);
  memmove(m.seq + mid, m.seq + mid + 1, (size_t)(w - mid - 1) * sizeof *m.seq);
  m.who[w - 1] = who;
  m.seq[w - 1] = m.next_seq++;
  await_node(ps, wait, m.seq[w - 1], 1, &m.seen[m.nseen++]);
  ck_assert_int_eq(l[who].canceled, 1);
  for (int k = 0; k < w; k++, no++)
    put_and_settle(p, ps, wait, no, &m, &taken);
  for (int i = 0; i < w; i++)
    ck_assert_int_eq(zkl_queue_put(p, "end", 3, 5000), 0);
  for (int i = 0; i < w; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < w; i++) {
    ck_assert_int_eq(l[i].rc, 0);
    ck_assert_int_eq(l[i].n, m.nexp[i]);
    for (int j = 0; j < m.nexp[i]; j++)
      ck_assert_msg(l[i].got[j] == m.expect[i][j],
                    "consumer %d's item %d: %d, not %d (arrival order)", i, j,
                    l[i].got[j], m.expect[i][j]);
    zkl_queue_destroy(l[i].q);
    zkl_session_close(s[i]);
  }
  ck_assert(it_wait_children(ps, wait, 0, 5000));
  zkl_queue_destroy(p);
  zkl_session_close(ps);
  return per_put;
}

START_TEST(rejoining_consumers_need_no_listing) {
  long few = rejoin_rounds(2), many = rejoin_rounds(LOOPERS);
  /* a listing of the line would cost 21 bytes per waiter (a name
   * "w-lock-0000000042" and its length): 460 bytes more per put */
  ck_assert_msg(many - few < 22 * 8,
                "server bytes per put: %ld with %d consumers, %ld with 2",
                many, LOOPERS, few);
}
END_TEST

/* ---- faults ------------------------------------------------------------ */

static int connected(void *s) {
  return zkl_session_state(s) == ZKL_SESSION_CONNECTED;
}

static zkl_queue_t *locking(zkl_session_t *s, const char *path);

static int single_server(void) { return strchr(it_hosts(), ',') == NULL; }

/* The put's multi is applied but its answer is lost: the marker tells,
 * the put reports success, and the item is there once. */
START_TEST(put_answer_lost_is_applied_once) {
  if (!single_server()) return;
  char root[128], hosts[64];
  it_root(root, sizeof root, "q-cut");
  it_proxy_t *x = it_proxy_start();
  snprintf(hosts, sizeof hosts, "127.0.0.1:%d", it_proxy_port(x));
  zkl_session_t *s = it_session_at(hosts, 10000), *d = it_session();
  zkl_queue_t *q = queue(s, root), *r = queue(d, root);
  ck_assert_int_eq(zkl_queue_put(q, "first", 5, 5000), 0); /* paths made */
  for (int round = 0; round < 3; round++) {
    it_proxy_cut_after(x, OP_MULTI);
    ck_assert_int_eq(zkl_queue_put(q, "once", 4, 20000), 0);
    ck_assert_int_eq(it_proxy_cuts(x), round + 1);
  }
  zkl_item_t *v = NULL;
  size_t n = 0;
  ck_assert_int_eq(zkl_queue_take_batch(r, 100, 5000, &v, &n), 0);
  ck_assert_uint_eq(n, 4);
  ck_assert_str_eq(v[0].data, "first");
  for (size_t i = 1; i < n; i++) ck_assert_str_eq(v[i].data, "once");
  zkl_items_free(v, n);
  zkl_queue_destroy(q);
  zkl_queue_destroy(r);
  assert_no_markers(d, root);
  zkl_session_close(s);
  zkl_session_close(d);
  it_proxy_stop(x);
}
END_TEST

/* ---- a line node whose create's answer is lost -------------------------- */

#define OP_CREATE2 15 /* a line node's create (zoo_acreate2) */
#define AHEAD 5       /* consumers on plain sessions, ahead in the line */
#define LINE_MAX 16

/* The line at `wait` as another session sees it. */
typedef struct line_look {
  zkl_session_t *d;     /* the session that reads                       */
  const char *wait;
  int64_t sid;          /* the proxied consumer's session               */
  int want_n, want_mine; /* what line_is() waits for                    */
  int n, mine;          /* its nodes, and those sid owns                */
  char own[32];         /* the (last) node sid owns                     */
  char others[LINE_MAX][32]; /* the other nodes' names, in line order   */
} line_look_t;

static int name_cmp(const void *a, const void *b) { return strcmp(a, b); }

/* Reads the line: 0, or -1 if a node went while it was read.  Every
 * child but "keeper" is a node "w-lock-<seq>" whose data starts with a
 * protected prefix "_c_<uuid>-" of its own (no two nodes share one). */
static int line_read(line_look_t *l) {
  zhandle_t *zh = zkl_session_zhandle(l->d);
  struct String_vector v = {0, NULL};
  int count = it_children(l->d, l->wait, &v), rc = 0, np = 0, no = 0;
  char prefix[LINE_MAX][PREFIX_LEN + 1];
  l->n = l->mine = 0;
  for (int i = 0; i < count && rc == 0; i++) {
    if (strcmp(v.data[i], "keeper") == 0) continue;
    ck_assert_msg(strncmp(v.data[i], "w-lock-", 7) == 0 &&
                      strlen(v.data[i]) == 17,
                  "line node %s", v.data[i]);
    ck_assert_msg(l->n < LINE_MAX, "%s: more than %d nodes", l->wait,
                  LINE_MAX);
    char path[320], data[256];
    int len = sizeof data - 1;
    struct Stat st;
    snprintf(path, sizeof path, "%s/%s", l->wait, v.data[i]);
    int zrc = zoo_get(zh, path, 0, data, &len, &st);
    if (zrc == ZNONODE) {
      rc = -1;
      break;
    }
    ck_assert_msg(zrc == ZOK, "get %s: %s", path, zerror(zrc));
    data[len < 0 ? 0 : len] = '\0';
    ck_assert_msg(len > PREFIX_LEN && strncmp(data, "_c_", 3) == 0 &&
                      data[PREFIX_LEN - 1] == '-',
                  "line node %s: data \"%s\"", v.data[i], data);
    for (int j = 0; j < np; j++)
      ck_assert_msg(memcmp(prefix[j], data, PREFIX_LEN) != 0,
                    "two line nodes carry the prefix %.40s", data);
    memcpy(prefix[np++], data, PREFIX_LEN);
    l->n++;
    if (st.ephemeralOwner == l->sid) {
      l->mine++;
      snprintf(l->own, sizeof l->own, "%s", v.data[i]);
    } else snprintf(l->others[no++], sizeof l->others[0], "%s", v.data[i]);
  }
  deallocate_String_vector(&v);
  qsort(l->others, (size_t)no, sizeof l->others[0], name_cmp);
  return rc;
}

static int line_is(void *arg) {
  line_look_t *l = arg;
  return line_read(l) == 0 && l->n == l->want_n && l->mine == l->want_mine;
}

/* Waits until the line has n nodes, `mine` of them the proxied
 * consumer's. */
static void await_line(line_look_t *l, int n, int mine, int timeout_ms,
                       const char *what) {
  l->want_n = n;
  l->want_mine = mine;
  ck_assert_msg(it_wait_until(line_is, l, timeout_ms),
                "%s: the line has %d nodes, %d of the proxied consumer's "
                "(not %d, %d)", what, l->n, l->mine, n, mine);
}

/* The proxied consumer has one node and waits in the line: its session
 * watches that node (a waiter watches its own node), so it is done with
 * finding its node again. */
static int waits_in_line(void *arg) {
  line_look_t *l = arg;
  if (line_read(l) != 0 || l->mine != 1) return 0;
  char path[320];
  snprintf(path, sizeof path, "%s/%s", l->wait, l->own);
  char *wchp = it_4lw("wchp");
  int n = it_watchers_of(wchp, path, 0) - it_watchers_of(wchp, path, l->sid);
  free(wchp);
  return n > 0;
}

/* Holds the line's path with a child that is no line node (as zkl makes
 * it: containers), so that a create finds it however long the line was
 * empty (the server reaps an empty container within a second here). */
static void keep_line(zkl_session_t *s, const char *wait) {
  zhandle_t *zh = zkl_session_zhandle(s);
  char p[320];
  int rc = ZNONODE;
  for (int attempt = 0; attempt < 5 && rc == ZNONODE; attempt++) {
    snprintf(p, sizeof p, "%s", wait);
    for (char *slash = strchr(p + 1, '/');; slash = strchr(slash + 1, '/')) {
      if (slash != NULL) *slash = '\0';
      rc = zoo_create(zh, p, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, ZOO_CONTAINER,
                      NULL, 0);
      if (slash == NULL || (rc != ZOK && rc != ZNODEEXISTS)) break;
      *slash = '/';
    }
    if (rc != ZOK && rc != ZNODEEXISTS) continue; /* reaped meanwhile */
    snprintf(p, sizeof p, "%s/keeper", wait);
    rc = zoo_create(zh, p, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL,
                    NULL, 0);
  }
  ck_assert_msg(rc == ZOK, "create %s: %s", p, zerror(rc));
}

/* Starts n takes (of pq[0..n-1], one thread each) that join the line one
 * after the other, in that order. */
static void join_ahead(taker_t *t, pthread_t *th, zkl_queue_t **pq, int n,
                       int64_t timeout_ms, line_look_t *l) {
  for (int i = 0; i < n; i++) {
    t[i] = (taker_t){pq[i], timeout_ms, 99, "", 0};
    pthread_create(&th[i], NULL, take_main, &t[i]);
    await_line(l, i + 1, 0, 5000, "a consumer ahead joins");
  }
}

/* Waits until the proxy has cut the connection after the armed create
 * (forwarded: the server applies it), the cuts so far being `cuts`. */
static void await_cut(it_proxy_t *x, int cuts) {
  int64_t until = it_now_ms() + 10000;
  while (it_proxy_cuts(x) == cuts && it_now_ms() < until) usleep(200);
  ck_assert_int_eq(it_proxy_cuts(x), cuts + 1);
}

/* A consumer waiting on a proxied session whose line node's create is
 * applied but answered by a lost connection: it finds its node again by
 * the prefix leading the data of the w- nodes, and never takes another's
 * (the consumers ahead of it keep their nodes and their turns).  One node
 * of it while it waits, none once its take returned; the item it waited
 * for, in arrival order; alone in the line, behind others (its create
 * listing the line, and then finding its predecessor by name), and
 * giving up at its deadline before it could look: then the janitor
 * deletes its node once the connection is back, and no other. */
START_TEST(line_create_answer_lost_keeps_one_node) {
  if (!single_server()) return;
  char root[128], wait[256], hosts[64], keeper[320];
  it_root(root, sizeof root, "q-linecut");
  snprintf(wait, sizeof wait, "%s.zkl/wait", root);
  snprintf(keeper, sizeof keeper, "%s/keeper", wait);
  int slow = getenv("ZKL_TEST_SLOW") != NULL ? 3 : 1;
  it_proxy_t *x = it_proxy_start();
  snprintf(hosts, sizeof hosts, "127.0.0.1:%d", it_proxy_port(x));
  zkl_session_t *s = it_session_at(hosts, 10000), *d = it_session();
  zkl_session_t *ps[AHEAD + 1];
  zkl_queue_t *c = queue(s, root), *p = queue(d, root), *pq[AHEAD + 1];
  for (int i = 0; i <= AHEAD; i++) {
    ps[i] = it_session();
    pq[i] = queue(ps[i], root);
  }
  keep_line(d, wait);
  line_look_t l = {.d = d, .wait = wait, .sid = zkl_session_id(s)};
  char before[AHEAD][32];
  taker_t t[AHEAD + 1], ct;
  pthread_t th[AHEAD + 1], cth;
  /* round 0: alone; 1: behind AHEAD (its create lists the line); 2: the
   * same (it saw AHEAD: it finds its predecessor by name); a consumer
   * behind it in rounds 1 and 2 */
  for (int r = 0; r < 3; r++) {
    int ahead = r == 0 ? 0 : AHEAD;
    join_ahead(t, th, pq, ahead, 10000 * slow, &l);
    memcpy(before, l.others, sizeof before);
    it_proxy_cut_after(x, OP_CREATE2);
    ct = (taker_t){c, 10000 * slow, 99, "", 0};
    pthread_create(&cth, NULL, take_main, &ct);
    await_cut(x, r);
    /* behind others, its wait has begun once it watches its node (so it
     * settled which node is its); alone, as head, it watches the queue */
    if (ahead > 0)
      ck_assert_msg(it_wait_until(waits_in_line, &l, 5000),
                    "round %d: the proxied consumer does not wait in the "
                    "line (%d nodes, %d of it)", r, l.n, l.mine);
    await_line(&l, ahead + 1, 1, 5000, "after the lost answer");
    for (int i = 0; i < ahead; i++) /* the ones ahead kept theirs */
      ck_assert_str_eq(l.others[i], before[i]);
    if (ahead > 0) {
      t[ahead] = (taker_t){pq[AHEAD], 10000 * slow, 99, "", 0};
      pthread_create(&th[ahead], NULL, take_main, &t[ahead]);
      await_line(&l, ahead + 2, 1, 5000, "one more joins behind");
    }
    /* in line: t[0 .. ahead-1], the proxied consumer, then t[ahead] */
    for (int i = 0; i <= ahead + (ahead > 0); i++) {
      char want[16];
      snprintf(want, sizeof want, "%d-%d", r, i);
      ck_assert_int_eq(zkl_queue_put(p, want, strlen(want), 5000), 0);
      int proxied = i == ahead, k = i < ahead ? i : ahead;
      taker_t *who = proxied ? &ct : &t[k];
      pthread_join(proxied ? cth : th[k], NULL);
      ck_assert_msg(who->rc == 0 && strcmp(who->data, want) == 0,
                    "round %d: the %s %d-th in line got %s \"%s\", not "
                    "\"%s\"", r, proxied ? "proxied consumer," : "consumer",
                    i, zkl_err_name(who->rc), who->data, want);
      if (proxied) /* its node goes with its take (nothing else of it) */
        await_line(&l, ahead > 0 ? 1 : 0, 0, 5000, "its take returned");
    }
    await_line(&l, 0, 0, 5000, "every take returned");
  }
  /* round 3: it gives up (its deadline) right after such a create, before
   * the connection is back: its node goes to the janitor */
  join_ahead(t, th, pq, AHEAD, 10000 * slow, &l);
  memcpy(before, l.others, sizeof before);
  it_proxy_cut_after(x, OP_CREATE2);
  ct = (taker_t){c, 1500 * slow, 99, "", 0};
  pthread_create(&cth, NULL, take_main, &ct);
  await_cut(x, 3);
  it_proxy_blackhole(x, 1); /* no reconnection before its deadline */
  await_line(&l, AHEAD + 1, 1, 5000, "the create was applied");
  pthread_join(cth, NULL);
  ck_assert_msg(ct.rc == ZKL_ETIMEDOUT, "the take that gave up: %s",
                zkl_err_name(ct.rc));
  it_proxy_blackhole(x, 0);
  await_line(&l, AHEAD, 0, 15000, "the janitor deleted its node");
  for (int i = 0; i < AHEAD; i++) /* and no other */
    ck_assert_str_eq(l.others[i], before[i]);
  for (int i = 0; i < AHEAD; i++) {
    char want[16];
    snprintf(want, sizeof want, "3-%d", i);
    ck_assert_int_eq(zkl_queue_put(p, want, strlen(want), 5000), 0);
    pthread_join(th[i], NULL);
    ck_assert_int_eq(t[i].rc, 0);
    ck_assert_str_eq(t[i].data, want);
  }
  zkl_item_t it; /* and it takes as before */
  ck_assert_int_eq(zkl_queue_put(p, "last", 4, 5000), 0);
  ck_assert_int_eq(zkl_queue_take(c, 5000, &it), 0);
  ck_assert_str_eq(it.data, "last");
  zkl_item_free(&it);
  ck_assert_int_eq(it_proxy_cuts(x), 4);
  /* the objects gone, every session still open: nothing left */
  for (int i = 0; i <= AHEAD; i++) zkl_queue_destroy(pq[i]);
  zkl_queue_destroy(c);
  zkl_queue_destroy(p);
  ck_assert_int_eq(zoo_delete(zkl_session_zhandle(d), keeper, -1), ZOK);
  ck_assert(it_wait_children(d, wait, 0, 5000));
  assert_no_markers(d, root);
  for (int i = 0; i <= AHEAD; i++) zkl_session_close(ps[i]);
  zkl_session_close(s);
  zkl_session_close(d);
  it_proxy_stop(x);
}
END_TEST

static int taken_count(zkl_session_t *s, const char *root);

typedef struct acker {
  zkl_queue_t *q;
  zkl_item_t *it;
  int rc;
  char err[512];
} acker_t;

static void *ack_main(void *arg) {
  acker_t *a = arg;
  a->rc = zkl_queue_ack(a->q, a->it);
  snprintf(a->err, sizeof a->err, "%s", zkl_last_error());
  return NULL;
}

/* One item put through s0's queue p, and claimed (it; the test frees it)
 * through cq, a queue on a session of that timeout that reaches the
 * server through the proxy px. */
typedef struct {
  zkl_session_t *s0, *cs;
  zkl_queue_t *p, *cq;
  it_proxy_t *px;
  zkl_item_t it;
} proxied_claim_t;

static void proxied_claim(proxied_claim_t *c, const char *root,
                          int session_timeout_ms) {
  char hosts[64];
  c->s0 = it_session();
  c->p = locking(c->s0, root);
  ck_assert_int_eq(zkl_queue_put(c->p, "x", 1, 5000), 0);
  c->px = it_proxy_start();
  snprintf(hosts, sizeof hosts, "127.0.0.1:%d", it_proxy_port(c->px));
  c->cs = it_session_at(hosts, session_timeout_ms);
  c->cq = locking(c->cs, root);
  ck_assert_int_eq(zkl_queue_claim(c->cq, 5000, &c->it), 0);
}

static void proxied_claim_end(proxied_claim_t *c) {
  zkl_queue_destroy(c->cq);
  zkl_session_close(c->cs);
  it_proxy_stop(c->px);
  zkl_queue_destroy(c->p);
  zkl_session_close(c->s0);
}

/* An ack whose multi is applied but whose answer is lost, and then the
 * session (found by the queue fault suite's author): the ack must not say
 * "nothing was deleted".  The first call cannot know (ESUSPENDED, outcome
 * unknown, the claim kept); the next says the outcome is unknown, and the
 * item is indeed gone. */
START_TEST(ack_answer_lost_then_session_expires) {
  if (!single_server()) return;
  char root[128], entries[160];
  it_root(root, sizeof root, "q-acklost");
  snprintf(entries, sizeof entries, "%s/entries", root);
  proxied_claim_t pc;
  proxied_claim(&pc, root, 2000);
  zkl_session_t *s0 = pc.s0, *cs = pc.cs;
  zkl_queue_t *cq = pc.cq;
  it_proxy_t *px = pc.px;
  zkl_item_t it = pc.it;
  it_proxy_cut_after(px, OP_MULTI); /* forwarded, its answer lost */
  acker_t a = {cq, &it, 99, ""};
  pthread_t th;
  pthread_create(&th, NULL, ack_main, &a);
  while (it_proxy_cuts(px) == 0) usleep(200);
  it_proxy_blackhole(px, 1); /* no reconnection before the session expires */
  it_sleep_ms(4000);
  it_proxy_blackhole(px, 0);
  pthread_join(th, NULL);
  ck_assert_int_eq(it_children(s0, entries, NULL), 0); /* it was applied */
  ck_assert_msg(a.rc == ZKL_ESUSPENDED || a.rc == 0, "first ack: %s (%s)",
                zkl_err_name(a.rc), a.err);
  if (a.rc == ZKL_ESUSPENDED) {
    ck_assert_ptr_nonnull(strstr(a.err, "outcome is unknown"));
    ck_assert(it_wait_until(connected, cs, 10000));
    int rc = zkl_queue_ack(cq, &it);
    ck_assert_msg(rc == ZKL_ELOST && strstr(zkl_last_error(), "outcome is "
                                              "unknown") != NULL,
                  "second ack: %s (%s)", zkl_err_name(rc), zkl_last_error());
  }
  zkl_item_free(&it);
  proxied_claim_end(&pc);
}
END_TEST

/* An ack whose claim someone deletes after the ack's look at it, and
 * whose item another consumer then takes, before the ack's multi runs.
 * The multi names only its first op to fail, the item's delete, but the
 * claim went first: the ack must say ZKL_ELOST (the claim is gone), not
 * ZKL_ENOENT (the item removed under a claim).  queue-random caught it. */
START_TEST(ack_after_its_claim_went_and_the_item_was_taken) {
  if (!single_server()) return;
  char root[128], cpath[256];
  it_root(root, sizeof root, "q-ackgone");
  proxied_claim_t pc;
  proxied_claim(&pc, root, 10000);
  zkl_session_t *s0 = pc.s0;
  zkl_queue_t *p = pc.p, *cq = pc.cq;
  it_proxy_t *px = pc.px;
  zkl_item_t it = pc.it;
  snprintf(cpath, sizeof cpath, "%s/taken/%s", root, it.name);
  it_proxy_hold_at(px, OP_MULTI); /* the look goes by, the multi waits */
  acker_t a = {cq, &it, 99, ""};
  pthread_t th;
  pthread_create(&th, NULL, ack_main, &a);
  for (int i = 0; i < 500 && !it_proxy_holding(px); i++) it_sleep_ms(10);
  ck_assert_msg(it_proxy_holding(px), "the ack never sent its multi");
  ck_assert_int_eq(zoo_delete(zkl_session_zhandle(s0), cpath, -1), ZOK);
  zkl_item_t got;
  ck_assert_int_eq(zkl_queue_take(p, 0, &got), 0); /* free again: taken */
  ck_assert_str_eq(got.data, "x");
  zkl_item_free(&got);
  it_proxy_release(px);
  pthread_join(th, NULL);
  ck_assert_msg(a.rc == ZKL_ELOST, "ack: %s (%s)", zkl_err_name(a.rc),
                a.err);
  /* the claim is forgotten: no longer this object's */
  ck_assert_int_eq(zkl_queue_claim_health(cq, &it), ZKL_EPERM);
  ck_assert_int_eq(taken_count(s0, root), 0);
  zkl_item_free(&it);
  proxied_claim_end(&pc);
}
END_TEST

START_TEST(bound_refuses_puts) {
  char root[128];
  it_root(root, sizeof root, "q-bound");
  zkl_session_t *s = it_session();
  zkl_queue_opts_t o;
  zkl_queue_opts_init(&o);
  ck_assert_uint_eq(o.max_items, 50000);
  o.max_items = 5;
  zkl_queue_t *q = NULL;
  ck_assert_int_eq(zkl_queue_create(&q, s, root, &o), 0);
  for (int i = 0; i < 5; i++) ck_assert_int_eq(zkl_queue_put(q, "i", 1, 5000), 0);
  ck_assert_int_eq(zkl_queue_put(q, "i", 1, 5000), ZKL_EFULL);
  ck_assert_ptr_nonnull(strstr(zkl_last_error(), "Java"));
  zkl_buf_t b[2] = {{"a", 1}, {"b", 1}};
  zkl_item_t it;
  ck_assert_int_eq(zkl_queue_take(q, 0, &it), 0);
  zkl_item_free(&it);
  ck_assert_int_eq(zkl_queue_put_batch(q, b, 2, 5000), ZKL_EFULL);
  ck_assert_int_eq(zkl_queue_put(q, "i", 1, 5000), 0);
  zkl_queue_destroy(q);
  zkl_session_close(s);
}
END_TEST

typedef struct putter {
  zkl_queue_t *q;
  int rc;
  int64_t done_ms;
} putter_t;

static void *put_main(void *arg) {
  putter_t *p = arg;
  p->rc = zkl_queue_put(p->q, "w", 1, 10000);
  p->done_ms = it_now_ms();
  return NULL;
}

/* The soft bound: puts wait while the queue is full (timeout 0: EFULL, a
 * deadline: ETIMEDOUT), in a line whose head alone counts; a take makes
 * room for the head, and the queue never grows past the bound. */
START_TEST(soft_bound_makes_producers_wait) {
  char root[128], full[256];
  it_root(root, sizeof root, "q-soft");
  snprintf(full, sizeof full, "%s.zkl/full", root);
  zkl_session_t *s = it_session();
  zkl_queue_opts_t o;
  zkl_queue_opts_init(&o);
  ck_assert_uint_eq(o.soft_max, 0);
  o.soft_max = 3;
  zkl_queue_t *q = NULL, *c = queue(s, root);
  ck_assert_int_eq(zkl_queue_create(&q, s, root, &o), 0);
  for (int i = 0; i < 3; i++) ck_assert_int_eq(zkl_queue_put(q, "i", 1, 5000), 0);
  ck_assert_int_eq(zkl_queue_put(q, "i", 1, 0), ZKL_EFULL);
  int64_t t0 = it_now_ms();
  ck_assert_int_eq(zkl_queue_put(q, "i", 1, 300), ZKL_EFULL);
  ck_assert_int_ge(it_now_ms() - t0, 290);
  ck_assert_int_lt(it_now_ms() - t0, 2000);
  zkl_session_t *ps[3];
  putter_t p[3];
  pthread_t th[3];
  for (int i = 0; i < 3; i++) {
    ps[i] = it_session();
    ck_assert_int_eq(zkl_queue_create(&p[i].q, ps[i], root, &o), 0);
    p[i].rc = 99;
    pthread_create(&th[i], NULL, put_main, &p[i]);
    ck_assert(it_wait_children(s, full, i + 1, 5000)); /* in line, in order */
  }
  usleep(200 * 1000);
  for (int i = 0; i < 3; i++) ck_assert_int_eq(p[i].rc, 99);
  for (int i = 0; i < 3; i++) {
    zkl_item_t it;
    ck_assert_int_eq(zkl_queue_take(c, 0, &it), 0);
    zkl_item_free(&it);
    int64_t took = it_now_ms();
    pthread_join(th[i], NULL); /* the head of the line puts, only it */
    ck_assert_int_eq(p[i].rc, 0);
    ck_assert_int_lt(p[i].done_ms - took, 2000);
    size_t n = 0;
    ck_assert_int_eq(zkl_queue_size(c, &n), 0);
    ck_assert_uint_eq(n, 3);
  }
  ck_assert(it_wait_children(s, full, 0, 5000));
  for (int i = 0; i < 3; i++) {
    zkl_queue_destroy(p[i].q);
    zkl_session_close(ps[i]);
  }
  zkl_queue_destroy(q);
  zkl_queue_destroy(c);
  zkl_session_close(s);
}
END_TEST

/* ---- bad input --------------------------------------------------------- */

START_TEST(bad_input_is_refused) {
  zkl_session_t *s = it_session();
  zkl_queue_t *q = NULL;
  zkl_queue_opts_t o;
  zkl_queue_opts_init(&o);
  ck_assert_int_eq(zkl_queue_create(NULL, s, "/q", NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_queue_create(&q, NULL, "/q", NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_queue_create(&q, s, "/", NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_queue_create(&q, s, "q", NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_queue_create(&q, s, "/a//b", NULL), ZKL_EINVAL);
  o.priority = 1000;
  ck_assert_int_eq(zkl_queue_create(&q, s, "/q", &o), ZKL_EINVAL);
  o.priority = 100;
  o.format = 7;
  ck_assert_int_eq(zkl_queue_create(&q, s, "/q", &o), ZKL_EINVAL);
  ck_assert_ptr_null(q);
  char root[128];
  it_root(root, sizeof root, "q-bad");
  q = queue(s, root);
  zkl_item_t it;
  ck_assert_int_eq(zkl_queue_put(NULL, "a", 1, 0), ZKL_EINVAL);
  ck_assert_int_eq(zkl_queue_put(q, NULL, 1, 0), ZKL_EINVAL);
  static char big[ZKL_QUEUE_MAX_BYTES + 1];
  ck_assert_int_eq(zkl_queue_put(q, big, sizeof big, 0), ZKL_EINVAL);
  ck_assert_int_eq(zkl_queue_put_batch(q, NULL, 1, 0), ZKL_EINVAL);
  zkl_buf_t b = {"a", 1};
  ck_assert_int_eq(zkl_queue_put_batch(q, &b, 0, 0), ZKL_EINVAL);
  ck_assert_int_eq(zkl_queue_put_batch(q, &b, 1001, 0), ZKL_EINVAL);
  ck_assert_int_eq(zkl_queue_take(q, 0, NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_queue_take(NULL, 0, &it), ZKL_EINVAL);
  zkl_item_t *v;
  size_t n;
  ck_assert_int_eq(zkl_queue_take_batch(q, 0, 0, &v, &n), ZKL_EINVAL);
  ck_assert_int_eq(zkl_queue_take_batch(q, 1001, 0, &v, &n), ZKL_EINVAL);
  ck_assert_int_eq(zkl_queue_peek(NULL, &it), ZKL_EINVAL);
  ck_assert_int_eq(zkl_queue_size(q, NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_queue_list(q, 0, NULL, &n), ZKL_EINVAL);
  ck_assert_int_eq(zkl_queue_list(q, 0, &v, &n), 0); /* no path: none */
  ck_assert_uint_eq(n, 0);
  ck_assert_ptr_null(v);
  ck_assert_int_eq(zkl_queue_remove(q, NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_queue_remove(q, "qn-abc"), ZKL_EINVAL);
  ck_assert_int_eq(zkl_queue_cancel(NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_queue_take_async(q, 1, 0, NULL, NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_queue_put_async(q, "a", 1, 0, NULL, NULL), ZKL_EINVAL);
  /* a path that is an ephemeral node is not a queue: a clear error */
  zhandle_t *zh = zkl_session_zhandle(s);
  char eph[160];
  snprintf(eph, sizeof eph, "%s-eph", root);
  ck_assert_int_eq(zoo_create(zh, eph, "", 0, &ZOO_OPEN_ACL_UNSAFE,
                              ZOO_EPHEMERAL, NULL, 0), ZOK);
  zkl_queue_t *e = queue(s, eph);
  ck_assert_int_eq(zkl_queue_put(e, "a", 1, 5000), ZNOCHILDRENFOREPHEMERALS);
  ck_assert_ptr_nonnull(strstr(zkl_last_error(), "not a queue"));
  zkl_queue_destroy(e);
  zkl_queue_destroy(q);
  zkl_queue_destroy(NULL);
  zkl_item_free(NULL);
  zkl_items_free(NULL, 3);
  zkl_session_close(s);
}
END_TEST

/* ---- async ------------------------------------------------------------- */

typedef struct seen {
  int n, rc;
  size_t items;
  char data[64];
} seen_t;

static void on_put(void *obj, int rc, uint64_t token, void *arg) {
  (void)obj;
  (void)token;
  seen_t *w = arg;
  w->n++;
  w->rc = rc;
}

static void on_take(zkl_queue_t *q, int rc, zkl_item_t *items, size_t n,
                    void *arg) {
  (void)q;
  seen_t *w = arg;
  w->n++;
  w->rc = rc;
  w->items = n;
  if (n > 0) snprintf(w->data, sizeof w->data, "%s", items[0].data);
  zkl_items_free(items, n);
}

static int loop_until(zkl_session_t *s, const int *done, int timeout_ms) {
  int64_t end = it_now_ms() + timeout_ms;
  while (!*done) {
    int64_t left = end - it_now_ms();
    if (left <= 0) return 0;
    struct pollfd p = {zkl_session_fd(s), POLLIN, 0};
    if (poll(&p, 1, (int)left) == 1) zkl_session_dispatch(s);
  }
  return 1;
}

START_TEST(async_put_and_take_in_a_loop) {
  char root[128];
  it_root(root, sizeof root, "q-async");
  zkl_session_t *s = it_session();
  zkl_queue_t *q = queue(s, root), *p = queue(s, root);
  seen_t t = {0, 99, 0, ""}, u = {0, 99, 0, ""};
  ck_assert_int_eq(zkl_queue_take_async(q, 10, 10000, on_take, &t), 0);
  ck_assert_int_eq(zkl_queue_take_async(q, 10, 10000, on_take, &t), ZKL_EBUSY);
  ck_assert_int_eq(zkl_queue_put_async(p, "loop", 4, 5000, on_put, &u), 0);
  ck_assert_int_eq(t.n + u.n, 0); /* never from inside the call */
  ck_assert(loop_until(s, &t.n, 10000));
  ck_assert_int_eq(t.rc, 0);
  ck_assert_uint_eq(t.items, 1);
  ck_assert_str_eq(t.data, "loop");
  ck_assert(loop_until(s, &u.n, 10000));
  ck_assert_int_eq(u.rc, 0);
  /* a pending take canceled, then one orphaned by destroy */
  t.n = 0;
  ck_assert_int_eq(zkl_queue_take_async(q, 1, -1, on_take, &t), 0);
  ck_assert_int_eq(zkl_queue_cancel(q), 0);
  ck_assert(loop_until(s, &t.n, 10000));
  ck_assert_int_eq(t.rc, ZKL_ECANCELED);
  t.n = 0;
  ck_assert_int_eq(zkl_queue_take_async(q, 1, -1, on_take, &t), 0);
  zkl_queue_destroy(q);
  ck_assert(loop_until(s, &t.n, 10000));
  ck_assert_int_eq(t.rc, ZKL_ECANCELED);
  ck_assert_int_eq(t.n, 1);
  zkl_queue_destroy(p);
  assert_no_markers(s, root);
  zkl_session_close(s);
}
END_TEST

/* ---- claims (ZKL_QUEUE_LOCKING) ------------------------------------------ */

static zkl_queue_t *locking(zkl_session_t *s, const char *path) {
  return it_queue(s, path, ZKL_QUEUE_LOCKING, 100);
}

static int taken_count(zkl_session_t *s, const char *root) {
  char taken[256];
  snprintf(taken, sizeof taken, "%s/taken", root);
  return it_children(s, taken, NULL);
}

START_TEST(claim_ack_nack) {
  char root[128];
  it_root(root, sizeof root, "q-claim");
  zkl_session_t *s = it_session();
  zkl_queue_t *a = locking(s, root), *b = locking(s, root);
  zkl_buf_t in[3] = {{"a", 1}, {"b", 1}, {"c", 1}};
  ck_assert_int_eq(zkl_queue_put_batch(a, in, 3, 5000), 0);
  zkl_item_t ia, ib, ic;
  ck_assert_int_eq(zkl_queue_claim(a, 0, &ia), 0);
  ck_assert_str_eq(ia.data, "a");
  ck_assert_int_eq(zkl_queue_claim_health(a, &ia), 0);
  ck_assert_int_eq(zkl_queue_claim_health(b, &ia), ZKL_EPERM);
  ck_assert_int_eq(zkl_queue_claim(b, 0, &ib), 0); /* skips a's claim */
  ck_assert_str_eq(ib.data, "b");
  ck_assert_int_eq(taken_count(s, root), 2);
  ck_assert_int_eq(zkl_queue_take(b, 0, &ic), 0); /* a take skips them too */
  ck_assert_str_eq(ic.data, "c");
  zkl_item_free(&ic);
  ck_assert_int_eq(zkl_queue_take(b, 0, &ic), ZKL_EEMPTY);
  zkl_item_t *all = NULL;
  size_t nall = 0;
  ck_assert_int_eq(zkl_queue_list(b, 0, &all, &nall), 0); /* claimed ones */
  ck_assert_uint_eq(nall, 2);
  ck_assert_str_eq(all[0].data, "a");
  ck_assert_int_eq(all[0].claimed, 1);
  ck_assert_int_eq(all[1].claimed, 1);
  zkl_items_free(all, nall);
  ck_assert_int_eq(zkl_queue_ack(b, &ia), ZKL_EPERM); /* not b's claim */
  /* a gives its item back at the head: the next claim gets it again,
   * with a larger delivery token */
  uint64_t t1 = ia.token;
  ck_assert_int_eq(zkl_queue_nack(a, &ia, ZKL_QUEUE_HEAD), 0);
  ck_assert_int_eq(zkl_queue_nack(a, &ia, ZKL_QUEUE_HEAD), ZKL_EPERM);
  zkl_item_free(&ia);
  ck_assert_int_eq(zkl_queue_claim(b, 0, &ia), 0);
  ck_assert_str_eq(ia.data, "a");
  ck_assert_uint_gt(ia.token, t1);
  ck_assert_int_eq(zkl_queue_ack(b, &ia), 0);
  ck_assert_int_eq(zkl_queue_ack(b, &ib), 0);
  ck_assert_int_eq(zkl_queue_ack(b, &ib), ZKL_EPERM);
  zkl_item_free(&ia);
  zkl_item_free(&ib);
  size_t n = 9;
  ck_assert_int_eq(zkl_queue_size(a, &n), 0);
  ck_assert_uint_eq(n, 0);
  ck_assert_int_eq(taken_count(s, root), 0);
  ck_assert_int_eq(zkl_queue_claim(a, 0, &ia), ZKL_EEMPTY);
  /* claims are only for the locking layout */
  zkl_queue_t *plain = queue(s, root);
  ck_assert_int_eq(zkl_queue_claim(plain, 0, &ia), ZKL_EINVAL);
  zkl_queue_destroy(plain);
  zkl_queue_destroy(a);
  zkl_queue_destroy(b);
  zkl_session_close(s);
}
END_TEST

START_TEST(nack_to_the_tail) {
  char root[128];
  it_root(root, sizeof root, "q-nack");
  zkl_session_t *s = it_session();
  zkl_queue_t *q = locking(s, root);
  zkl_buf_t in[2] = {{"a\0x", 3}, {"b", 1}};
  ck_assert_int_eq(zkl_queue_put_batch(q, in, 2, 5000), 0);
  zkl_item_t it;
  ck_assert_int_eq(zkl_queue_claim(q, 0, &it), 0);
  ck_assert_int_eq(zkl_queue_nack(q, &it, 7), ZKL_EINVAL);
  ck_assert_int_eq(zkl_queue_nack(q, &it, ZKL_QUEUE_TAIL), 0);
  zkl_item_free(&it);
  ck_assert_int_eq(taken_count(s, root), 0);
  ck_assert_int_eq(zkl_queue_take(q, 0, &it), 0);
  ck_assert_str_eq(it.data, "b");
  zkl_item_free(&it);
  ck_assert_int_eq(zkl_queue_claim(q, 0, &it), 0);
  ck_assert_uint_eq(it.len, 3);
  ck_assert_int_eq(memcmp(it.data, "a\0x", 3), 0);
  ck_assert_int_eq(zkl_queue_ack(q, &it), 0);
  zkl_item_free(&it);
  zkl_queue_destroy(q);
  zkl_session_close(s);
}
END_TEST

typedef struct claimer {
  zkl_queue_t *q;
  int rc;
  zkl_item_t it;
  int64_t at_ms;
} claimer_t;

static void *claim_main(void *arg) {
  claimer_t *c = arg;
  c->rc = zkl_queue_claim(c->q, 20000, &c->it);
  c->at_ms = it_now_ms();
  return NULL;
}

/* A consumer's session ends while it holds a claim: a consumer waiting
 * for an item gets it at once (no put needed), with a larger token. */
START_TEST(dead_consumers_item_is_redelivered_at_once) {
  char root[128];
  it_root(root, sizeof root, "q-redeliver");
  zkl_session_t *dead = it_session(), *s = it_session();
  zkl_queue_t *d = locking(dead, root), *q = locking(s, root);
  ck_assert_int_eq(zkl_queue_put(q, "job", 3, 5000), 0);
  zkl_item_t held;
  ck_assert_int_eq(zkl_queue_claim(d, 0, &held), 0);
  claimer_t c = {q, 99, {0}, 0};
  pthread_t th;
  pthread_create(&th, NULL, claim_main, &c);
  usleep(300 * 1000);
  ck_assert_int_eq(c.rc, 99); /* waiting: the only item is claimed */
  int64_t t0 = it_now_ms();
  zkl_session_close(dead); /* its claim goes with it */
  pthread_join(th, NULL);
  ck_assert_int_eq(c.rc, 0);
  ck_assert_str_eq(c.it.data, "job");
  ck_assert_uint_gt(c.it.token, held.token);
  ck_assert_int_lt(c.at_ms - t0, 2000);
  ck_assert_int_eq(zkl_queue_ack(q, &c.it), 0);
  zkl_item_free(&c.it);
  zkl_item_free(&held);
  zkl_queue_destroy(d); /* after its session: nothing to give up */
  zkl_queue_destroy(q);
  zkl_session_close(s);
}
END_TEST

/* ack fails when the claim is gone (deleted by someone else): the work
 * may be duplicated; ack of an item removed meanwhile says ENOENT. */
START_TEST(ack_without_the_claim_fails) {
  char root[128], path[256];
  it_root(root, sizeof root, "q-ackfail");
  zkl_session_t *s = it_session(), *o = it_session();
  zkl_queue_t *q = locking(s, root), *r = locking(o, root);
  ck_assert_int_eq(zkl_queue_put(q, "x", 1, 5000), 0);
  ck_assert_int_eq(zkl_queue_put(q, "y", 1, 5000), 0);
  zkl_item_t it, other;
  ck_assert_int_eq(zkl_queue_claim(q, 0, &it), 0);
  snprintf(path, sizeof path, "%s/taken/%s", root, it.name);
  ck_assert_int_eq(zoo_delete(zkl_session_zhandle(o), path, -1), ZOK);
  ck_assert_int_eq(zkl_queue_claim(r, 0, &other), 0); /* redelivered */
  ck_assert_str_eq(other.data, "x");
  ck_assert_int_eq(zkl_queue_ack(q, &it), ZKL_ELOST);
  ck_assert_ptr_nonnull(strstr(zkl_last_error(), "another consumer"));
  ck_assert_int_eq(zkl_queue_ack(r, &other), 0);
  zkl_item_free(&it);
  zkl_item_free(&other);
  /* the item removed under a claim */
  ck_assert_int_eq(zkl_queue_claim(q, 0, &it), 0);
  ck_assert_str_eq(it.data, "y");
  ck_assert_int_eq(zkl_queue_remove(r, it.name), 0);
  ck_assert_int_eq(zkl_queue_ack(q, &it), ZKL_ENOENT);
  ck_assert_int_eq(taken_count(s, root), 0);
  zkl_item_free(&it);
  zkl_queue_destroy(q);
  zkl_queue_destroy(r);
  zkl_session_close(s);
  zkl_session_close(o);
}
END_TEST

/* Claims of one item that follow each other (found by queue-random): the
 * object that claims an item again after its first claim's node was
 * deleted settles the right one (the old one says ELOST), and an object
 * destroyed after losing its claim does not delete the claim another
 * object of the same session made since. */
START_TEST(reclaimed_item_settles_the_right_claim) {
  char root[128], path[256];
  it_root(root, sizeof root, "q-reclaim");
  zkl_session_t *s = it_session(), *o = it_session();
  zkl_queue_t *q = locking(s, root), *y = locking(s, root);
  ck_assert_int_eq(zkl_queue_put(q, "x", 1, 5000), 0);
  zkl_item_t old, now;
  ck_assert_int_eq(zkl_queue_claim(q, 0, &old), 0);
  snprintf(path, sizeof path, "%s/taken/%s", root, old.name);
  ck_assert_int_eq(zoo_delete(zkl_session_zhandle(o), path, -1), ZOK);
  ck_assert_int_eq(zkl_queue_claim(q, 2000, &now), 0); /* the same item */
  ck_assert_str_eq(now.name, old.name);
  ck_assert_uint_gt(now.token, old.token);
  ck_assert_int_eq(zkl_queue_claim_health(q, &old), ZKL_ELOST);
  ck_assert_int_eq(zkl_queue_claim_health(q, &now), 0);
  ck_assert_int_eq(zkl_queue_ack(q, &old), ZKL_ELOST);
  ck_assert_int_eq(it_children(o, path, NULL), 0); /* the live claim stays */
  ck_assert_int_eq(zkl_queue_ack(q, &now), 0);
  ck_assert_int_eq(taken_count(s, root), 0);
  zkl_item_free(&old);
  zkl_item_free(&now);
  /* q loses its claim, y (same session) claims the item, q goes */
  ck_assert_int_eq(zkl_queue_put(q, "z", 1, 5000), 0);
  ck_assert_int_eq(zkl_queue_claim(q, 0, &old), 0);
  snprintf(path, sizeof path, "%s/taken/%s", root, old.name);
  ck_assert_int_eq(zoo_delete(zkl_session_zhandle(o), path, -1), ZOK);
  ck_assert_int_eq(zkl_queue_claim(y, 2000, &now), 0);
  zkl_queue_destroy(q); /* gives up its (gone) claim: not y's */
  it_sleep_ms(300);      /* the janitor's turn */
  ck_assert_int_eq(taken_count(s, root), 1);
  ck_assert_int_eq(zkl_queue_ack(y, &now), 0);
  zkl_item_free(&old);
  zkl_item_free(&now);
  zkl_queue_destroy(y);
  zkl_session_close(s);
  zkl_session_close(o);
}
END_TEST

/* Blocked claimers: only the head watches, entries/ and taken/ (two child
 * watches however many wait); destroy gives a claim up. */
START_TEST(waiting_claimers_are_herd_free) {
  char root[128], wait[256];
  it_root(root, sizeof root, "q-claimline");
  snprintf(wait, sizeof wait, "%s.zkl/wait-locking", root); /* its own */
  zkl_session_t *ps = it_session(), *s[6];
  zkl_queue_t *p = locking(ps, root);
  ck_assert_int_eq(zkl_queue_put(p, "0", 1, 5000), 0);
  zkl_item_t it;
  ck_assert_int_eq(zkl_queue_take(p, 0, &it), 0);
  zkl_item_free(&it);
  claimer_t c[6];
  pthread_t th[6];
  for (int i = 0; i < 6; i++) {
    s[i] = it_session();
    c[i] = (claimer_t){locking(s[i], root), 99, {0}, 0};
    pthread_create(&th[i], NULL, claim_main, &c[i]);
    ck_assert(it_wait_children(ps, wait, i + 1, 5000));
  }
  usleep(100 * 1000);
  ck_assert_int_eq(child_watches(), 2);
  for (int i = 0; i < 6; i++) {
    char d[8];
    snprintf(d, sizeof d, "%d", i);
    ck_assert_int_eq(zkl_queue_put(p, d, 1, 5000), 0);
    pthread_join(th[i], NULL);
    ck_assert_int_eq(c[i].rc, 0);
    ck_assert_str_eq(c[i].it.data, d);
  }
  ck_assert_int_eq(taken_count(ps, root), 6);
  for (int i = 0; i < 6; i++) { /* destroy gives the claims up */
    zkl_item_free(&c[i].it);
    zkl_queue_destroy(c[i].q);
  }
  ck_assert(it_wait_children(ps, wait, 0, 5000));
  char taken[256];
  snprintf(taken, sizeof taken, "%s/taken", root);
  ck_assert(it_wait_children(ps, taken, 0, 5000));
  ck_assert_int_eq(zkl_queue_claim(p, 0, &it), 0); /* claimable again */
  ck_assert_str_eq(it.data, "0");
  zkl_item_free(&it);
  for (int i = 0; i < 6; i++) zkl_session_close(s[i]);
  zkl_queue_destroy(p);
  zkl_session_close(ps);
}
END_TEST

Suite *queue_suite(void) {
  Suite *su = suite_create("queue");
  TCase *tc = it_tcase("queue");
  tcase_add_test(tc, fifo_and_binary_payloads);
  tcase_add_test(tc, batches_are_atomic_and_in_order);
  tcase_add_test(tc, batch_take_stops_at_an_item_it_cannot_delete);
  tcase_add_test(tc, kazoo_priorities_and_foreign_children);
  tcase_add_test(tc, remove_by_name);
  tcase_add_test(tc, unreadable_item_is_not_taken);
  tcase_add_test(tc, take_waits_times_out_and_cancels);
  tcase_add_test(tc, waiting_consumers_in_order_and_herd_free);
  tcase_add_test(tc, rejoining_consumers_need_no_listing);
  tcase_add_test(tc, put_answer_lost_is_applied_once);
  tcase_add_test(tc, line_create_answer_lost_keeps_one_node);
  tcase_add_test(tc, ack_answer_lost_then_session_expires);
  tcase_add_test(tc, ack_after_its_claim_went_and_the_item_was_taken);
  tcase_add_test(tc, bound_refuses_puts);
  tcase_add_test(tc, soft_bound_makes_producers_wait);
  tcase_add_test(tc, bad_input_is_refused);
  tcase_add_test(tc, async_put_and_take_in_a_loop);
  tcase_add_test(tc, claim_ack_nack);
  tcase_add_test(tc, nack_to_the_tail);
  tcase_add_test(tc, dead_consumers_item_is_redelivered_at_once);
  tcase_add_test(tc, ack_without_the_claim_fails);
  tcase_add_test(tc, waiting_claimers_are_herd_free);
  tcase_add_test(tc, reclaimed_item_settles_the_right_claim);
  suite_add_tcase(su, tc);
  return su;
}
