/* tests/integration/test-rwlock.c - the read/write lock on a real server:
 * readers share, writers are alone, arrival order (no writer starvation),
 * herd freedom, no node left by try/timed/cancel, downgrade and upgrade,
 * the node behind a hold. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"

static zkl_rwlock_t *it_rwlock(zkl_session_t *s, const char *path) {
  zkl_rwlock_t *l = NULL;
  int rc = zkl_rwlock_create(&l, s, path, NULL);
  ck_assert_msg(rc == 0, "rwlock_create %s: %s", path, zkl_strerror(rc));
  return l;
}

#define N 4
struct party {
  zkl_session_t *s[N];
  zkl_rwlock_t *l[N];
};

static void party_open(struct party *p, const char *root) {
  for (int i = 0; i < N; i++) {
    p->s[i] = it_session();
    p->l[i] = it_rwlock(p->s[i], root);
  }
}

static void party_close(struct party *p) {
  for (int i = 0; i < N; i++) {
    zkl_rwlock_destroy(p->l[i]);
    zkl_session_close(p->s[i]);
  }
}

START_TEST(readers_share_writers_exclude) {
  char root[128];
  it_root(root, sizeof root, "rw-share");
  struct party p;
  party_open(&p, root);
  /* three readers at once */
  for (int i = 0; i < 3; i++) ck_assert_int_eq(zkl_rwlock_tryrdlock(p.l[i]), 0);
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq(zkl_rwlock_holding(p.l[i]), ZKL_RWLOCK_READ);
  ck_assert_int_eq(zkl_rwlock_trywrlock(p.l[3]), ZKL_EBUSY);
  ck_assert_int_eq(it_children(p.s[0], root, NULL), 3); /* nothing left */
  for (int i = 0; i < 3; i++) ck_assert_int_eq(zkl_rwlock_unlock(p.l[i]), 0);
  /* one writer, nobody else */
  ck_assert_int_eq(zkl_rwlock_trywrlock(p.l[3]), 0);
  ck_assert_int_eq(zkl_rwlock_holding(p.l[3]), ZKL_RWLOCK_WRITE);
  ck_assert_int_eq(zkl_rwlock_tryrdlock(p.l[0]), ZKL_EBUSY);
  ck_assert_int_eq(zkl_rwlock_trywrlock(p.l[1]), ZKL_EBUSY);
  ck_assert_int_eq(zkl_rwlock_timedrdlock(p.l[2], 200), ZKL_ETIMEDOUT);

  /* Curator's wire format */
  struct String_vector kids;
  ck_assert_int_eq(it_children(p.s[0], root, &kids), 1);
  const char *name = kids.data[0];
  ck_assert(strncmp(name, "_c_", 3) == 0);
  ck_assert(strncmp(name + 39, "-__WRIT__", 9) == 0);
  ck_assert_int_eq(strlen(name), 3 + 36 + 9 + 10);
  deallocate_String_vector(&kids);
  ck_assert_int_eq(zkl_rwlock_unlock(p.l[3]), 0);
  ck_assert_int_eq(zkl_rwlock_rdlock(p.l[0]), 0);
  ck_assert_int_eq(it_children(p.s[0], root, &kids), 1);
  ck_assert(strncmp(kids.data[0] + 39, "-__READ__", 9) == 0);
  deallocate_String_vector(&kids);
  ck_assert_int_eq(zkl_rwlock_unlock(p.l[0]), 0);
  ck_assert_int_eq(it_children(p.s[0], root, NULL), 0);
  party_close(&p);
}
END_TEST

struct op {
  zkl_rwlock_t *l;
  int write;
  int64_t timeout_ms;
  int hold_ms;
  int rc; /* atomic */
  int64_t got_at, released_at;
};

static void *op_main(void *arg) {
  struct op *o = arg;
  int rc = o->write ? zkl_rwlock_timedwrlock(o->l, o->timeout_ms)
                    : zkl_rwlock_timedrdlock(o->l, o->timeout_ms);
  if (rc == 0) {
    o->got_at = it_now_ms();
    it_sleep_ms(o->hold_ms);
    o->released_at = it_now_ms();
    zkl_rwlock_unlock(o->l);
  }
  __atomic_store_n(&o->rc, rc, __ATOMIC_SEQ_CST);
  return NULL;
}

/* A reader holds; a writer queues; a later reader must wait for that
 * writer instead of joining the first reader (writers never starve). */
START_TEST(late_reader_waits_for_queued_writer) {
  char root[128];
  it_root(root, sizeof root, "rw-order");
  struct party p;
  party_open(&p, root);
  ck_assert_int_eq(zkl_rwlock_rdlock(p.l[0]), 0);
  struct op w = {p.l[1], 1, 10000, 100, -1, 0, 0};
  struct op r = {p.l[2], 0, 10000, 10, -1, 0, 0};
  pthread_t tw, tr;
  pthread_create(&tw, NULL, op_main, &w);
  ck_assert(it_wait_children(p.s[0], root, 2, 5000));
  ck_assert_int_eq(zkl_rwlock_tryrdlock(p.l[3]), ZKL_EBUSY);
  pthread_create(&tr, NULL, op_main, &r);
  ck_assert(it_wait_children(p.s[0], root, 3, 5000));
  it_sleep_ms(100);
  ck_assert_int_eq(__atomic_load_n(&r.rc, __ATOMIC_SEQ_CST), -1);
  ck_assert_int_eq(zkl_rwlock_unlock(p.l[0]), 0);
  pthread_join(tw, NULL);
  pthread_join(tr, NULL);
  ck_assert_int_eq(w.rc, 0);
  ck_assert_int_eq(r.rc, 0);
  ck_assert_int_ge(r.got_at, w.released_at); /* served in arrival order */
  ck_assert_int_eq(it_children(p.s[0], root, NULL), 0);
  party_close(&p);
}
END_TEST

/* Sessions watching each path, from `wchp` on every server. */
#define HN 7
/* W0 holds; R1 R2 R3 W4 R5 R6 queue.  Each reader watches the nearest
 * writer ahead (W0 or W4), W4 its immediate predecessor R3, and nobody
 * watches anything else (but its own node while it waits). */
START_TEST(each_waiter_watches_only_what_blocks_it) {
  char root[128];
  it_root(root, sizeof root, "rw-herd");
  static const int writer[HN] = {1, 0, 0, 0, 1, 0, 0};
  static const int want[HN] = {3, 0, 0, 1, 2, 0, 0};
  zkl_session_t *s[HN];
  zkl_rwlock_t *l[HN];
  struct op ops[HN];
  pthread_t th[HN];
  for (int i = 0; i < HN; i++) {
    s[i] = it_session();
    l[i] = it_rwlock(s[i], root);
  }
  ck_assert_int_eq(zkl_rwlock_wrlock(l[0]), 0);
  for (int i = 1; i < HN; i++) {
    ops[i] = (struct op){l[i], writer[i], 20000, 5, -1, 0, 0};
    pthread_create(&th[i], NULL, op_main, &ops[i]);
    ck_assert(it_wait_children(s[0], root, i + 1, 5000));
  }
  /* nodes in queue order: the sequence suffix sorts them */
  struct String_vector kids;
  ck_assert_int_eq(it_children(s[0], root, &kids), HN);
  char paths[HN][512];
  for (int i = 0; i < HN; i++) {
    int rank = 0;
    for (int j = 0; j < HN; j++)
      rank += strcmp(kids.data[j] + strlen(kids.data[j]) - 10,
                     kids.data[i] + strlen(kids.data[i]) - 10) < 0;
    snprintf(paths[rank], sizeof paths[rank], "%s/%s", root, kids.data[i]);
  }
  deallocate_String_vector(&kids);
  int64_t owner[HN];
  for (int i = 0; i < HN; i++) owner[i] = it_owner_of(s[0], paths[i]);
  int ok = 0;
  char report[1024] = "";
  for (int tries = 0; tries < 400 && !ok; tries++) { /* watches settle */
    char *wchp = it_4lw("wchp");
    ok = 1;
    report[0] = '\0';
    for (int i = 0; i < HN; i++) {
      int n = it_watchers_of(wchp, paths[i], owner[i]);
      ok &= n == want[i];
      snprintf(report + strlen(report), sizeof report - strlen(report),
               " %d:%d/%d", i, n, want[i]);
    }
    free(wchp);
    if (!ok) it_sleep_ms(10);
  }
  ck_assert_msg(ok, "watchers per node (got/want):%s", report);
  ck_assert_int_eq(zkl_rwlock_unlock(l[0]), 0);
  for (int i = 1; i < HN; i++) {
    pthread_join(th[i], NULL);
    ck_assert_int_eq(ops[i].rc, 0);
  }
  /* W4 came after R1..R3 had all released, and before R5 and R6 */
  for (int i = 1; i <= 3; i++)
    ck_assert_int_ge(ops[4].got_at, ops[i].released_at);
  for (int i = 5; i < HN; i++)
    ck_assert_int_ge(ops[i].got_at, ops[4].released_at);
  ck_assert_int_eq(it_children(s[0], root, NULL), 0);
  for (int i = 0; i < HN; i++) {
    zkl_rwlock_destroy(l[i]);
    zkl_session_close(s[i]);
  }
}
END_TEST

START_TEST(timeout_and_cancel_leave_nothing) {
  char root[128];
  it_root(root, sizeof root, "rw-timeout");
  struct party p;
  party_open(&p, root);
  ck_assert_int_eq(zkl_rwlock_rdlock(p.l[0]), 0);
  ck_assert_int_eq(zkl_rwlock_timedwrlock(p.l[1], 200), ZKL_ETIMEDOUT);
  ck_assert_int_eq(zkl_rwlock_trywrlock(p.l[2]), ZKL_EBUSY);
  ck_assert_int_eq(it_children(p.s[0], root, NULL), 1); /* nothing left */
  struct op w = {p.l[1], 1, -1, 0, -1, 0, 0};
  pthread_t tw;
  pthread_create(&tw, NULL, op_main, &w);
  ck_assert(it_wait_children(p.s[0], root, 2, 5000));
  ck_assert_int_eq(zkl_rwlock_cancel(p.l[1]), 0);
  pthread_join(tw, NULL);
  ck_assert_int_eq(w.rc, ZKL_ECANCELED);
  ck_assert(it_wait_children(p.s[0], root, 1, 5000)); /* the reader only */
  char *wchc = it_watches_left(root, 2000);
  ck_assert_msg(wchc == NULL, "a watch is left:\n%s", wchc);
  ck_assert_int_eq(zkl_rwlock_unlock(p.l[0]), 0);
  ck_assert_int_eq(it_children(p.s[0], root, NULL), 0);
  party_close(&p);
}
END_TEST

START_TEST(downgrade_and_refused_upgrade) {
  char root[128];
  it_root(root, sizeof root, "rw-grade");
  struct party p;
  party_open(&p, root);
  /* upgrade: refused, the read hold is kept */
  ck_assert_int_eq(zkl_rwlock_rdlock(p.l[0]), 0);
  ck_assert_int_eq(zkl_rwlock_wrlock(p.l[0]), ZKL_EDEADLK);
  ck_assert_int_eq(zkl_rwlock_trywrlock(p.l[0]), ZKL_EDEADLK);
  ck_assert_int_eq(zkl_rwlock_holding(p.l[0]), ZKL_RWLOCK_READ);
  ck_assert_int_eq(zkl_rwlock_tryrdlock(p.l[1]), 0); /* still shared */
  ck_assert_int_eq(zkl_rwlock_unlock(p.l[1]), 0);
  ck_assert_int_eq(zkl_rwlock_unlock(p.l[0]), 0);
  ck_assert_int_eq(zkl_rwlock_unlock(p.l[0]), ZKL_EPERM);

  /* downgrade: write, read, release write: still reading, no writer in */
  ck_assert_int_eq(zkl_rwlock_wrlock(p.l[0]), 0);
  uint64_t wt, rt;
  ck_assert_int_eq(zkl_rwlock_token(p.l[0], &wt), 0);
  ck_assert_int_eq(zkl_rwlock_rdlock(p.l[0]), 0);
  ck_assert_int_eq(zkl_rwlock_holding(p.l[0]),
                   ZKL_RWLOCK_READ | ZKL_RWLOCK_WRITE);
  struct op w = {p.l[1], 1, 10000, 0, -1, 0, 0};
  pthread_t tw;
  pthread_create(&tw, NULL, op_main, &w);
  ck_assert(it_wait_children(p.s[0], root, 2, 5000));
  ck_assert_int_eq(zkl_rwlock_unlock(p.l[0]), 0); /* releases the write */
  ck_assert_int_eq(zkl_rwlock_holding(p.l[0]), ZKL_RWLOCK_READ);
  ck_assert_int_eq(zkl_rwlock_token(p.l[0], &rt), 0);
  ck_assert(rt == wt);
  it_sleep_ms(200);
  ck_assert_int_eq(__atomic_load_n(&w.rc, __ATOMIC_SEQ_CST), -1);
  ck_assert_int_eq(zkl_rwlock_wrlock(p.l[0]), ZKL_EDEADLK);
  int64_t released = it_now_ms();
  ck_assert_int_eq(zkl_rwlock_unlock(p.l[0]), 0); /* read ends */
  pthread_join(tw, NULL);
  ck_assert_int_eq(w.rc, 0);
  ck_assert_int_ge(w.got_at, released);
  ck_assert_int_eq(it_children(p.s[0], root, NULL), 0);
  party_close(&p);
}
END_TEST

/* zkl_rwlock_node() from a thread that holds nothing. */
struct node_ask {
  zkl_rwlock_t *l;
  int rc;
};

static void *node_ask_main(void *arg) {
  struct node_ask *a = arg;
  char buf[1024];
  a->rc = zkl_rwlock_node(a->l, buf, sizeof buf);
  return NULL;
}

static int node_asked_elsewhere(zkl_rwlock_t *l) {
  struct node_ask a = {l, 1};
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, node_ask_main, &a), 0);
  pthread_join(t, NULL);
  return a.rc;
}

/* The node named is ours, of the kind held, and the one whose czxid is the
 * token. */
static void check_node(zkl_session_t *s, zkl_rwlock_t *l, const char *root,
                       const char *kind, char *node, size_t len) {
  ck_assert_int_eq(zkl_rwlock_node(l, node, len), 0);
  size_t rl = strlen(root);
  ck_assert_msg(strncmp(node, root, rl) == 0 && node[rl] == '/' &&
                    strstr(node + rl, kind) != NULL,
                "%s is not a %s node under %s", node, kind, root);
  uint64_t token;
  ck_assert_int_eq(zkl_rwlock_token(l, &token), 0);
  struct Stat st;
  ck_assert_int_eq(zoo_exists(zkl_session_zhandle(s), node, 0, &st), ZOK);
  ck_assert_uint_eq((uint64_t)st.czxid, token);
  ck_assert(st.ephemeralOwner == zkl_session_id(s));
}

START_TEST(node_is_the_one_behind_the_hold) {
  char root[128], node[1024], wnode[1024], small[8] = "intact";
  it_root(root, sizeof root, "rw-node");
  zkl_session_t *s = it_session();
  zkl_rwlock_t *l = it_rwlock(s, root);
  ck_assert_int_eq(zkl_rwlock_node(l, node, sizeof node), ZKL_EPERM);
  ck_assert_int_eq(zkl_rwlock_node(l, NULL, sizeof node), ZKL_EINVAL);

  ck_assert_int_eq(zkl_rwlock_rdlock(l), 0);
  check_node(s, l, root, "-__READ__", node, sizeof node);
  ck_assert_int_eq(zkl_rwlock_node(l, small, sizeof small), ZKL_EINVAL);
  ck_assert_str_eq(small, "intact");
  ck_assert_int_eq(node_asked_elsewhere(l), ZKL_EPERM); /* per thread */
  ck_assert_int_eq(zkl_rwlock_unlock(l), 0);
  ck_assert_int_eq(zkl_rwlock_node(l, node, sizeof node), ZKL_EPERM);

  /* a downgrade keeps naming the write node, which still backs the read */
  ck_assert_int_eq(zkl_rwlock_wrlock(l), 0);
  check_node(s, l, root, "-__WRIT__", wnode, sizeof wnode);
  ck_assert_int_eq(zkl_rwlock_rdlock(l), 0);
  check_node(s, l, root, "-__WRIT__", node, sizeof node);
  ck_assert_str_eq(node, wnode);
  ck_assert_int_eq(zkl_rwlock_unlock(l), 0); /* the write hold ends */
  ck_assert_int_eq(zkl_rwlock_holding(l), ZKL_RWLOCK_READ);
  check_node(s, l, root, "-__WRIT__", node, sizeof node);
  ck_assert_str_eq(node, wnode);
  ck_assert_int_eq(zkl_rwlock_unlock(l), 0);
  ck_assert_int_eq(zkl_rwlock_node(l, node, sizeof node), ZKL_EPERM);
  ck_assert_int_eq(it_children(s, root, NULL), 0);
  zkl_rwlock_destroy(l);
  zkl_session_close(s);
}
END_TEST

/* ---- processes: readers overlap, a writer never overlaps anyone ---------- */

#define PROCS 4
#define OPS 60 /* 240 operations in all */

struct shared {
  int readers, writers;  /* inside now (atomic) */
  int violations, max_readers, writes, reads;
  uint64_t last_write_token;
  int token_regressions;
};

static int rw_worker(struct shared *sh, const char *root, int id) {
  zkl_session_t *s = NULL;
  zkl_rwlock_t *l = NULL;
  if (zkl_session_open(&s, it_hosts(), NULL) != 0 ||
      zkl_rwlock_create(&l, s, root, NULL) != 0)
    return 2;
  unsigned seed = (unsigned)id * 7919u + 1;
  for (int i = 0; i < OPS; i++) {
    int write = rand_r(&seed) % 4 == 0;
    if ((write ? zkl_rwlock_wrlock(l) : zkl_rwlock_rdlock(l)) != 0) return 3;
    if (write) {
      int w = __atomic_add_fetch(&sh->writers, 1, __ATOMIC_SEQ_CST);
      if (w != 1 || __atomic_load_n(&sh->readers, __ATOMIC_SEQ_CST) != 0)
        __atomic_add_fetch(&sh->violations, 1, __ATOMIC_SEQ_CST);
      uint64_t t;
      zkl_rwlock_token(l, &t);
      if (t <= sh->last_write_token) sh->token_regressions++;
      sh->last_write_token = t;
      sh->writes++;
      usleep(2000);
      __atomic_sub_fetch(&sh->writers, 1, __ATOMIC_SEQ_CST);
    } else {
      int r = __atomic_add_fetch(&sh->readers, 1, __ATOMIC_SEQ_CST);
      if (__atomic_load_n(&sh->writers, __ATOMIC_SEQ_CST) != 0)
        __atomic_add_fetch(&sh->violations, 1, __ATOMIC_SEQ_CST);
      int m = __atomic_load_n(&sh->max_readers, __ATOMIC_SEQ_CST);
      while (r > m && !__atomic_compare_exchange_n(&sh->max_readers, &m, r, 0,
                                                   __ATOMIC_SEQ_CST,
                                                   __ATOMIC_SEQ_CST)) {
      }
      __atomic_add_fetch(&sh->reads, 1, __ATOMIC_SEQ_CST);
      usleep(5000);
      __atomic_sub_fetch(&sh->readers, 1, __ATOMIC_SEQ_CST);
    }
    if (zkl_rwlock_unlock(l) != 0) return 4;
  }
  zkl_rwlock_destroy(l);
  zkl_session_close(s);
  return 0;
}

START_TEST(processes_readers_overlap_writers_alone) {
  char root[128];
  it_root(root, sizeof root, "rw-procs");
  struct shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
                           MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ck_assert(sh != MAP_FAILED);
  memset(sh, 0, sizeof *sh);
  pid_t pids[PROCS];
  for (int i = 0; i < PROCS; i++) { /* fork before any session exists */
    pids[i] = fork();
    ck_assert_int_ge(pids[i], 0);
    if (pids[i] == 0) _exit(rw_worker(sh, root, i));
  }
  for (int i = 0; i < PROCS; i++) {
    int status;
    ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "worker %d failed: status %d", i, status);
  }
  ck_assert_int_eq(sh->violations, 0);
  ck_assert_int_eq(sh->token_regressions, 0);
  ck_assert_int_eq(sh->reads + sh->writes, PROCS * OPS);
  ck_assert_int_gt(sh->writes, 0);
  ck_assert_msg(sh->max_readers > 1, "readers never overlapped (max %d)",
                sh->max_readers);
  zkl_session_t *s = it_session();
  ck_assert_int_eq(it_children(s, root, NULL), 0);
  zkl_session_close(s);
  munmap(sh, sizeof *sh);
}
END_TEST

/* Readers keep coming, always overlapping, so the lock is never free of
 * readers; a writer still gets in, promptly, because later readers queue
 * behind it. */
struct stream {
  zkl_rwlock_t *l;
  int64_t until;
  int reads, failures;
};

static void *reader_stream(void *arg) {
  struct stream *st = arg;
  while (it_now_ms() < st->until) {
    if (zkl_rwlock_timedrdlock(st->l, 5000) != 0) {
      st->failures++;
      continue;
    }
    st->reads++;
    it_sleep_ms(40);
    zkl_rwlock_unlock(st->l);
  }
  return NULL;
}

START_TEST(writer_not_starved_by_reader_stream) {
  char root[128];
  it_root(root, sizeof root, "rw-starve");
  struct party p;
  party_open(&p, root);
  struct stream st[3];
  pthread_t th[3];
  int64_t until = it_now_ms() + 2500;
  for (int i = 0; i < 3; i++) {
    st[i] = (struct stream){p.l[i], until, 0, 0};
    pthread_create(&th[i], NULL, reader_stream, &st[i]);
    it_sleep_ms(13); /* staggered: some reader always holds */
  }
  it_sleep_ms(500);
  int64_t t0 = it_now_ms();
  ck_assert_int_eq(zkl_rwlock_timedwrlock(p.l[3], 2000), 0);
  int64_t waited = it_now_ms() - t0;
  ck_assert_int_eq(zkl_rwlock_unlock(p.l[3]), 0);
  for (int i = 0; i < 3; i++) {
    pthread_join(th[i], NULL);
    ck_assert_int_eq(st[i].failures, 0);
    ck_assert_int_gt(st[i].reads, 5);
  }
  /* one read period (40 ms) plus round trips, far below the stream */
  ck_assert_msg(waited < 1000, "the writer waited %" PRId64 " ms", waited);
  ck_assert_int_eq(it_children(p.s[0], root, NULL), 0);
  party_close(&p);
}
END_TEST

Suite *rwlock_suite(void) {
  Suite *su = suite_create("rwlock");
  TCase *tc = it_tcase("semantics");
  tcase_add_test(tc, readers_share_writers_exclude);
  tcase_add_test(tc, late_reader_waits_for_queued_writer);
  tcase_add_test(tc, downgrade_and_refused_upgrade);
  tcase_add_test(tc, node_is_the_one_behind_the_hold);
  tcase_add_test(tc, timeout_and_cancel_leave_nothing);
  suite_add_tcase(su, tc);
  tc = it_tcase("queue");
  tcase_add_test(tc, each_waiter_watches_only_what_blocks_it);
  tcase_add_test(tc, processes_readers_overlap_writers_alone);
  tcase_add_test(tc, writer_not_starved_by_reader_stream);
  suite_add_tcase(su, tc);
  return su;
}
