/* tests/integration/test-queue-interop.c - zkl's queue with the peers, live
 * and both ways: Curator 5.4's SimpleDistributedQueue (the `qn-` format;
 * a small Java program, compiled here) and python3-kazoo's Queue (the
 * `entry-<prio>-` format): order, binary payloads, priorities, and a
 * blocked consumer of either side woken by the other's put. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"

static void hex(const void *data, size_t len, char *out) {
  if (len == 0) {
    strcpy(out, "-");
    return;
  }
  for (size_t i = 0; i < len; i++)
    sprintf(out + 2 * i, "%02x", ((const unsigned char *)data)[i]);
}

/* ---- the peers (peer.c): given their work on the command line --------- */

static void suite_setup(void) {
  it_peer_setup("queue-interop", NULL, "CuratorQueuePeer");
}

/* Curator's SimpleDistributedQueue on path: mode a1 a2 a3 (a NULL ends
 * them); the JVM's logging notices quiet, the peer reports on stdout. */
static void curator(it_peer_t *p, const char *path, const char *mode,
                    const char *a1, const char *a2, const char *a3) {
  char *const args[] = {(char *)it_hosts(), (char *)path, (char *)mode,
                        (char *)a1,         (char *)a2,   (char *)a3,
                        NULL};
  it_peer_java(p, "CuratorQueuePeer", args, IT_PEER_QUIET);
}

/* kazoo's Queue / LockingQueue on path: mode a1 a2 a3. */
static void kazoo(it_peer_t *p, const char *path, const char *mode,
                  const char *a1, const char *a2, const char *a3) {
  char *const args[] = {(char *)it_hosts(), (char *)path, (char *)mode,
                        (char *)a1,         (char *)a2,   (char *)a3,
                        NULL};
  it_peer_python(p, "queue_peer.py", args, 0);
}

/* A peer that only acts, started and ended (it says "done", exits 0). */
static void curator_does(const char *path, const char *mode, const char *a1,
                         const char *a2, const char *a3) {
  it_peer_t p;
  curator(&p, path, mode, a1, a2, a3);
  it_peer_done(&p);
}

static void kazoo_does(const char *path, const char *mode, const char *a1,
                       const char *a2, const char *a3) {
  it_peer_t p;
  kazoo(&p, path, mode, a1, a2, a3);
  it_peer_done(&p);
}

static void take_hex(zkl_queue_t *q, int64_t timeout_ms, const char *want) {
  zkl_item_t it;
  ck_assert_int_eq(zkl_queue_take(q, timeout_ms, &it), 0);
  char h[4096];
  hex(it.data, it.len, h);
  ck_assert_str_eq(h, want);
  zkl_item_free(&it);
}

/* q holds exactly the payloads `want` (hex, NULL-terminated), in order. */
static void takes_exactly(zkl_queue_t *q, const char *const want[]) {
  for (int i = 0; want[i] != NULL; i++) take_hex(q, 5000, want[i]);
  zkl_item_t it;
  ck_assert_int_eq(zkl_queue_take(q, 0, &it), ZKL_EEMPTY);
}

/* ---- Curator ------------------------------------------------------------ */

START_TEST(curator_offers_zkl_takes) {
  if (!it_peer_curator_here()) return;
  char root[128];
  it_root(root, sizeof root, "qi-cur1");
  zkl_session_t *s = it_session();
  zkl_queue_t *q = it_queue(s, root, ZKL_QUEUE_QN, 100);
  curator_does(root, "offer", "00ff10", "-", "68690a00");
  takes_exactly(q, (const char *const[]){"00ff10", "-", "68690a00", NULL});
  zkl_queue_destroy(q);
  zkl_session_close(s);
}
END_TEST

START_TEST(zkl_puts_curator_takes) {
  if (!it_peer_curator_here()) return;
  char root[128], h[64];
  it_root(root, sizeof root, "qi-cur2");
  zkl_session_t *s = it_session();
  zkl_queue_t *q = it_queue(s, root, ZKL_QUEUE_QN, 100);
  const char payload[4][4] = {{0, 1, 2, 3}, {'a', 0, 'b', 0}, {'x'}, {'y'}};
  ck_assert_int_eq(zkl_queue_put(q, payload[0], 4, 5000), 0);
  zkl_buf_t b[3] = {{payload[1], 4}, {payload[2], 1}, {payload[3], 1}};
  ck_assert_int_eq(zkl_queue_put_batch(q, b, 3, 5000), 0);
  it_peer_t p;
  curator(&p, root, "take", "4", "10", NULL);
  for (int i = 0; i < 4; i++) {
    hex(payload[i], i < 2 ? 4 : 1, h);
    it_peer_expect(&p, h);
  }
  it_peer_done(&p);
  size_t n = 9;
  ck_assert_int_eq(zkl_queue_size(q, &n), 0);
  ck_assert_uint_eq(n, 0);
  zkl_queue_destroy(q);
  zkl_session_close(s);
}
END_TEST

/* A zkl take blocked in a thread, for a peer's put to wake. */
typedef struct taker {
  zkl_queue_t *q;
  pthread_t th;
  int rc;
  char hex[256];
} taker_t;

static void *take_main(void *arg) {
  taker_t *t = arg;
  zkl_item_t it;
  t->rc = zkl_queue_take(t->q, 30000, &it);
  if (t->rc == 0) {
    hex(it.data, it.len, t->hex);
    zkl_item_free(&it);
  }
  return NULL;
}

static void taker_start(taker_t *t, zkl_queue_t *q) {
  *t = (taker_t){.q = q, .rc = 99};
  ck_assert_int_eq(pthread_create(&t->th, NULL, take_main, t), 0);
  usleep(300 * 1000); /* time to be waiting before the peer puts */
}

/* The take ended with the payload `want` (hex). */
static void taker_got(taker_t *t, const char *want) {
  pthread_join(t->th, NULL);
  ck_assert_int_eq(t->rc, 0);
  ck_assert_str_eq(t->hex, want);
}

/* A consumer blocked on either side is woken by the other side's put. */
START_TEST(curator_and_zkl_wake_each_other) {
  if (!it_peer_curator_here()) return;
  char root[128];
  it_root(root, sizeof root, "qi-cur3");
  zkl_session_t *s = it_session();
  zkl_queue_t *q = it_queue(s, root, ZKL_QUEUE_QN, 100);
  it_peer_t p;
  curator(&p, root, "take", "1", "30", NULL);
  usleep(500 * 1000); /* Curator waits on its children watch */
  ck_assert_int_eq(zkl_queue_put(q, "\x01\x02", 2, 5000), 0);
  it_peer_expect(&p, "0102");
  it_peer_done(&p);
  taker_t t;
  taker_start(&t, q);
  curator_does(root, "offer", "c0ffee", NULL, NULL);
  taker_got(&t, "c0ffee");
  zkl_queue_destroy(q);
  zkl_session_close(s);
}
END_TEST

/* ---- kazoo ---------------------------------------------------------------- */

START_TEST(kazoo_puts_zkl_takes_by_priority) {
  char root[128];
  it_root(root, sizeof root, "qi-kz1");
  zkl_session_t *s = it_session();
  zkl_queue_t *q = it_queue(s, root, ZKL_QUEUE_KAZOO, 100);
  kazoo_does(root, "put", "200", "61", "6200");
  kazoo_does(root, "put", "10", "63", NULL);
  takes_exactly(q, (const char *const[]){"63", "61", "6200", NULL});
  zkl_queue_destroy(q);
  zkl_session_close(s);
}
END_TEST

START_TEST(zkl_puts_kazoo_gets_by_priority) {
  char root[128];
  it_root(root, sizeof root, "qi-kz2");
  zkl_session_t *s = it_session();
  zkl_queue_t *lo = it_queue(s, root, ZKL_QUEUE_KAZOO, 300);
  zkl_queue_t *hi = it_queue(s, root, ZKL_QUEUE_KAZOO, 1);
  ck_assert_int_eq(zkl_queue_put(lo, "x", 1, 5000), 0);
  ck_assert_int_eq(zkl_queue_put(lo, "", 0, 5000), 0);
  ck_assert_int_eq(zkl_queue_put(hi, "z\0", 2, 5000), 0);
  it_peer_t p;
  kazoo(&p, root, "get", "4", NULL, NULL);
  it_peer_expect(&p, "7a00");
  it_peer_expect(&p, "78");
  it_peer_expect(&p, "-");
  it_peer_expect(&p, "none");
  it_peer_done(&p);
  zkl_queue_destroy(lo);
  zkl_queue_destroy(hi);
  zkl_session_close(s);
}
END_TEST

START_TEST(kazoo_put_wakes_a_blocked_zkl_take) {
  char root[128];
  it_root(root, sizeof root, "qi-kz3");
  zkl_session_t *s = it_session();
  zkl_queue_t *q = it_queue(s, root, ZKL_QUEUE_KAZOO, 100);
  taker_t t;
  taker_start(&t, q);
  kazoo_does(root, "put", "100", "beef", NULL);
  taker_got(&t, "beef");
  zkl_queue_destroy(q);
  zkl_session_close(s);
}
END_TEST

/* kazoo's LockingQueue and zkl's claims share one queue, both ways: a
 * claim of either side is skipped by the other; consume and ack delete
 * item and claim. */
START_TEST(kazoo_locking_queue_both_ways) {
  char root[128];
  it_root(root, sizeof root, "qi-kzl");
  zkl_session_t *s = it_session();
  zkl_queue_t *q = it_queue(s, root, ZKL_QUEUE_LOCKING, 100);
  kazoo_does(root, "lput", "100", "6b31", "6b32");
  zkl_item_t it;
  ck_assert_int_eq(zkl_queue_claim(q, 5000, &it), 0);
  ck_assert_str_eq(it.data, "k1");
  /* kazoo skips zkl's claim: it gets k2 and consumes it */
  it_peer_t p;
  kazoo(&p, root, "lget", "1", "10", NULL);
  it_peer_expect(&p, "6b32");
  it_peer_done(&p);
  ck_assert_int_eq(zkl_queue_ack(q, &it), 0);
  zkl_item_free(&it);
  /* zkl puts; kazoo gets them in order (lower priority first) */
  zkl_queue_t *hi = it_queue(s, root, ZKL_QUEUE_LOCKING, 2);
  ck_assert_int_eq(zkl_queue_put(q, "a", 1, 5000), 0);
  ck_assert_int_eq(zkl_queue_put(hi, "b", 1, 5000), 0);
  /* zkl's claim on b (the head) makes kazoo wait for a; nack gives b back */
  ck_assert_int_eq(zkl_queue_claim(q, 5000, &it), 0);
  ck_assert_str_eq(it.data, "b");
  kazoo(&p, root, "lget", "2", "10", NULL);
  it_peer_expect(&p, "61");
  ck_assert_int_eq(zkl_queue_nack(q, &it, ZKL_QUEUE_HEAD), 0);
  it_peer_expect(&p, "62");
  it_peer_done(&p);
  zkl_item_free(&it);
  ck_assert_int_eq(zkl_queue_claim(q, 0, &it), ZKL_EEMPTY);
  /* a kazoo claim is skipped by zkl (kazoo waits holding it, then
   * consumes), and released kazoo items come to a waiting zkl claim */
  char taken[256];
  snprintf(taken, sizeof taken, "%s/taken", root);
  ck_assert_int_eq(it_children(s, taken, NULL), 0);
  zkl_queue_destroy(hi);
  zkl_queue_destroy(q);
  zkl_session_close(s);
}
END_TEST

Suite *queue_interop_suite(void) {
  Suite *su = suite_create("queue-interop");
  TCase *tc = it_tcase("queue-interop");
  tcase_add_unchecked_fixture(tc, suite_setup, it_peer_teardown);
  tcase_add_test(tc, curator_offers_zkl_takes);
  tcase_add_test(tc, zkl_puts_curator_takes);
  tcase_add_test(tc, curator_and_zkl_wake_each_other);
  tcase_add_test(tc, kazoo_puts_zkl_takes_by_priority);
  tcase_add_test(tc, zkl_puts_kazoo_gets_by_priority);
  tcase_add_test(tc, kazoo_put_wakes_a_blocked_zkl_take);
  tcase_add_test(tc, kazoo_locking_queue_both_ways);
  suite_add_tcase(su, tc);
  return su;
}
