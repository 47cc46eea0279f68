/* tests/integration/test-mutex.c - the exclusive lock on a real server:
 * protocol shape, try/timed/cancel, reentrancy, FIFO, herd freedom,
 * fencing tokens and bad input. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"

static struct Stat stat_of(zkl_session_t *s, const char *path) {
  struct Stat st;
  int rc = zoo_exists(zkl_session_zhandle(s), path, 0, &st);
  ck_assert_msg(rc == ZOK, "exists %s: %s", path, zerror(rc));
  return st;
}

/* ---- protocol shape ------------------------------------------------------- */

START_TEST(node_shape_data_and_container_root) {
  char root[128], path[160], node[1024], host[256], want[300];
  it_root(root, sizeof root, "shape");
  snprintf(path, sizeof path, "%s/a/b", root);
  zkl_session_t *s = it_session();
  zkl_mutex_t *m = it_mutex(s, path);
  ck_assert_int_eq(zkl_mutex_node(m, node, sizeof node), ZKL_EPERM);
  ck_assert_int_eq(zkl_mutex_lock(m), 0);
  ck_assert_int_eq(zkl_mutex_node(m, node, sizeof node), 0);

  /* <path>/_c_<36-char uuid>-lock-<10 digits> */
  const char *name = node + strlen(path) + 1;
  ck_assert(strncmp(node, path, strlen(path)) == 0);
  ck_assert_int_eq(strlen(name), 3 + 36 + 6 + 10);
  ck_assert(strncmp(name, "_c_", 3) == 0);
  ck_assert(strncmp(name + 39, "-lock-", 6) == 0);
  ck_assert_int_eq(strspn(name + 45, "0123456789"), 10);

  /* ephemeral, owned by our session, data "host:pid" */
  struct Stat st = stat_of(s, node);
  ck_assert_int_eq(st.ephemeralOwner, zkl_session_id(s));
  char data[300];
  int len = sizeof data - 1;
  ck_assert_int_eq(zoo_get(zkl_session_zhandle(s), node, 0, data, &len, NULL),
                   ZOK);
  data[len] = '\0';
  gethostname(host, sizeof host);
  snprintf(want, sizeof want, "%s:%ld", host, (long)getpid());
  ck_assert_str_eq(data, want);

  /* the missing parents are persistent (ZooKeeper's Stat does not tell
   * containers apart; the reaping test below does) */
  ck_assert(stat_of(s, path).ephemeralOwner == 0);

  ck_assert_int_eq(zkl_mutex_unlock(m), 0);
  ck_assert_int_eq(it_children(s, path, NULL), 0);
  zkl_mutex_destroy(m);
  zkl_session_close(s);
}
END_TEST

START_TEST(custom_node_data) {
  char root[128], node[1024], data[64];
  it_root(root, sizeof root, "data");
  zkl_session_t *s = it_session();
  zkl_mutex_opts_t o;
  zkl_mutex_opts_init(&o);
  o.data = "worker-7";
  o.data_len = 8;
  zkl_mutex_t *m;
  ck_assert_int_eq(zkl_mutex_create(&m, s, root, &o), 0);
  ck_assert_int_eq(zkl_mutex_lock(m), 0);
  ck_assert_int_eq(zkl_mutex_node(m, node, sizeof node), 0);
  int len = sizeof data;
  ck_assert_int_eq(zoo_get(zkl_session_zhandle(s), node, 0, data, &len, NULL),
                   ZOK);
  ck_assert_int_eq(len, 8);
  ck_assert(memcmp(data, "worker-7", 8) == 0);
  zkl_mutex_destroy(m); /* releases */
  ck_assert_int_eq(it_children(s, root, NULL), 0);
  zkl_session_close(s);
}
END_TEST

struct gone_arg {
  zkl_session_t *s;
  const char *path;
};

static int node_gone(void *arg) {
  struct gone_arg *g = arg;
  return zoo_exists(zkl_session_zhandle(g->s), g->path, 0, NULL) == ZNONODE;
}

/* Missing parents are CONTAINER nodes: once empty the server removes them
 * (the harness runs the container reaper every second; an external server
 * given by ZKL_TEST_HOSTS keeps its own interval, 60 s by default). */
START_TEST(empty_roots_are_reaped) {
  if (getenv("ZKL_TEST_ZKDIR") == NULL) return; /* not our server */
  char root[128], path[160];
  it_root(root, sizeof root, "reaped");
  snprintf(path, sizeof path, "%s/a/b", root);
  zkl_session_t *s = it_session();
  zkl_mutex_t *m = it_mutex(s, path);
  ck_assert_int_eq(zkl_mutex_lock(m), 0);
  ck_assert_int_eq(zkl_mutex_unlock(m), 0);
  struct gone_arg g = {s, path};
  ck_assert_msg(it_wait_until(node_gone, &g, 20000), "%s not reaped", path);
  g.path = root; /* its parents follow once they are empty */
  ck_assert_msg(it_wait_until(node_gone, &g, 20000), "%s not reaped", root);
  zkl_mutex_destroy(m);
  zkl_session_close(s);
}
END_TEST

/* The server may remove an empty container root between two uses. */
START_TEST(root_removed_between_uses) {
  char root[128];
  it_root(root, sizeof root, "reap");
  zkl_session_t *s = it_session();
  zkl_mutex_t *m = it_mutex(s, root);
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(zkl_mutex_lock(m), 0);
    ck_assert_int_eq(zkl_mutex_unlock(m), 0);
    ck_assert_int_eq(zoo_delete(zkl_session_zhandle(s), root, -1), ZOK);
  }
  ck_assert_int_eq(zkl_mutex_trylock(m), 0);
  ck_assert_int_eq(zkl_mutex_unlock(m), 0);
  zkl_mutex_destroy(m);
  zkl_session_close(s);
}
END_TEST

/* Children that are not contenders are ignored, never fatal. */
START_TEST(foreign_children_ignored) {
  char root[128], junk[200];
  it_root(root, sizeof root, "junk");
  zkl_session_t *s = it_session();
  zkl_mutex_t *m = it_mutex(s, root);
  ck_assert_int_eq(zkl_mutex_lock(m), 0); /* creates the root */
  const char *names[] = {"readme", "x-lock-", "lock-12", "__lock__abc",
                         "z-lock-99999999999"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    snprintf(junk, sizeof junk, "%s/%s", root, names[i]);
    ck_assert_int_eq(zoo_create(zkl_session_zhandle(s), junk, NULL, -1,
                                &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0),
                     ZOK);
  }
  ck_assert_int_eq(zkl_mutex_unlock(m), 0);
  ck_assert_int_eq(zkl_mutex_trylock(m), 0);
  ck_assert_int_eq(zkl_mutex_unlock(m), 0);
  zkl_mutex_destroy(m);
  zkl_session_close(s);
}
END_TEST

/* ---- try, timed, cancel ------------------------------------------------------ */

START_TEST(trylock_on_held_lock_writes_nothing) {
  char root[128];
  it_root(root, sizeof root, "try");
  zkl_session_t *a = it_session(), *b = it_session();
  zkl_mutex_t *ma = it_mutex(a, root), *mb = it_mutex(b, root);
  ck_assert_int_eq(zkl_mutex_lock(ma), 0);
  struct Stat before = stat_of(a, root);
  for (int i = 0; i < 5; i++) ck_assert_int_eq(zkl_mutex_trylock(mb), ZKL_EBUSY);
  struct Stat after = stat_of(a, root);
  /* cversion counts every child create and delete: none happened */
  ck_assert_int_eq(after.cversion, before.cversion);
  ck_assert_int_eq(after.numChildren, 1);
  ck_assert_int_eq(zkl_mutex_unlock(ma), 0);
  ck_assert_int_eq(zkl_mutex_trylock(mb), 0);
  ck_assert_int_eq(zkl_mutex_trylock(ma), ZKL_EBUSY);
  ck_assert_int_eq(zkl_mutex_unlock(mb), 0);
  zkl_mutex_destroy(ma);
  zkl_mutex_destroy(mb);
  zkl_session_close(a);
  zkl_session_close(b);
}
END_TEST

/* Is a watch under root still listed 2 s on? */
static int watches_under(const char *root) {
  char *out = it_watches_left(root, 2000);
  int left = out != NULL;
  free(out);
  return left;
}

START_TEST(timedlock_times_out_and_leaves_nothing) {
  char root[128];
  it_root(root, sizeof root, "timed");
  zkl_session_t *a = it_session(), *b = it_session();
  zkl_mutex_t *ma = it_mutex(a, root), *mb = it_mutex(b, root);
  ck_assert_int_eq(zkl_mutex_lock(ma), 0);
  int64_t t0 = it_now_ms();
  ck_assert_int_eq(zkl_mutex_timedlock(mb, 300), ZKL_ETIMEDOUT);
  int64_t took = it_now_ms() - t0;
  ck_assert_int_ge(took, 290);
  ck_assert_int_lt(took, 3000);
  ck_assert_int_eq(it_children(a, root, NULL), 1); /* only the holder */
  ck_assert_int_eq(watches_under(root), 0);         /* watch withdrawn */
  ck_assert_int_eq(zkl_mutex_holding(mb), 0);
  ck_assert_int_eq(zkl_mutex_unlock(mb), ZKL_EPERM);
  ck_assert_int_eq(zkl_mutex_unlock(ma), 0);
  ck_assert_int_eq(zkl_mutex_timedlock(mb, 1000), 0);
  ck_assert_int_eq(zkl_mutex_unlock(mb), 0);
  zkl_mutex_destroy(ma);
  zkl_mutex_destroy(mb);
  zkl_session_close(a);
  zkl_session_close(b);
}
END_TEST

struct locker {
  zkl_mutex_t *m;
  int64_t timeout_ms; /* <0: lock() */
  int rc;
  int started; /* atomic */
  int64_t acquired_at;
};

static void *locker_main(void *arg) {
  struct locker *l = arg;
  __atomic_store_n(&l->started, 1, __ATOMIC_SEQ_CST);
  l->rc = l->timeout_ms < 0 ? zkl_mutex_lock(l->m)
                            : zkl_mutex_timedlock(l->m, l->timeout_ms);
  l->acquired_at = it_now_ms();
  if (l->rc == 0) zkl_mutex_unlock(l->m);
  return NULL;
}

START_TEST(cancel_wakes_blocked_lock) {
  char root[128];
  it_root(root, sizeof root, "cancel");
  zkl_session_t *a = it_session(), *b = it_session();
  zkl_mutex_t *ma = it_mutex(a, root), *mb = it_mutex(b, root);
  ck_assert_int_eq(zkl_mutex_lock(ma), 0);
  struct locker l = {.m = mb, .timeout_ms = -1};
  pthread_t th;
  pthread_create(&th, NULL, locker_main, &l);
  ck_assert(it_wait_children(a, root, 2, 5000)); /* b is queued */
  int64_t t0 = it_now_ms();
  ck_assert_int_eq(zkl_mutex_cancel(mb), 0);
  pthread_join(th, NULL);
  ck_assert_int_eq(l.rc, ZKL_ECANCELED);
  ck_assert_int_lt(it_now_ms() - t0, 2000);
  ck_assert_int_eq(it_children(a, root, NULL), 1);
  ck_assert_int_eq(watches_under(root), 0);
  /* a cancel does not stick: the next lock works */
  ck_assert_int_eq(zkl_mutex_unlock(ma), 0);
  ck_assert_int_eq(zkl_mutex_timedlock(mb, 2000), 0);
  ck_assert_int_eq(zkl_mutex_unlock(mb), 0);
  zkl_mutex_destroy(ma);
  zkl_mutex_destroy(mb);
  zkl_session_close(a);
  zkl_session_close(b);
}
END_TEST

/* ---- threads of one process ------------------------------------------------------ */

START_TEST(reentrant_per_thread) {
  char root[128];
  it_root(root, sizeof root, "reent");
  zkl_session_t *s = it_session();
  zkl_mutex_t *m = it_mutex(s, root);
  ck_assert_int_eq(zkl_mutex_holding(m), 0);
  ck_assert_int_eq(zkl_mutex_lock(m), 0);
  uint64_t t1, t2;
  ck_assert_int_eq(zkl_mutex_token(m, &t1), 0);
  ck_assert_int_eq(zkl_mutex_lock(m), 0);
  ck_assert_int_eq(zkl_mutex_trylock(m), 0);
  ck_assert_int_eq(zkl_mutex_timedlock(m, 10), 0);
  ck_assert_int_eq(zkl_mutex_token(m, &t2), 0);
  ck_assert(t1 == t2);
  ck_assert_int_eq(it_children(s, root, NULL), 1); /* one node for all */
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(zkl_mutex_unlock(m), 0);
    ck_assert_int_eq(zkl_mutex_holding(m), 1);
  }
  ck_assert_int_eq(zkl_mutex_unlock(m), 0);
  ck_assert_int_eq(zkl_mutex_holding(m), 0);
  ck_assert_int_eq(zkl_mutex_unlock(m), ZKL_EPERM);
  ck_assert_int_eq(zkl_mutex_token(m, &t2), ZKL_EPERM);
  ck_assert_int_eq(it_children(s, root, NULL), 0);
  zkl_mutex_destroy(m);
  zkl_session_close(s);
}
END_TEST

struct other_thread {
  zkl_mutex_t *m;
  int unlock_rc, try_rc, timed_rc, holding;
};

static void *other_thread_main(void *arg) {
  struct other_thread *o = arg;
  o->unlock_rc = zkl_mutex_unlock(o->m);
  o->try_rc = zkl_mutex_trylock(o->m);
  o->timed_rc = zkl_mutex_timedlock(o->m, 200);
  o->holding = zkl_mutex_holding(o->m);
  return NULL;
}

START_TEST(other_thread_cannot_unlock_and_waits_locally) {
  char root[128];
  it_root(root, sizeof root, "local");
  zkl_session_t *s = it_session();
  zkl_mutex_t *m = it_mutex(s, root);
  ck_assert_int_eq(zkl_mutex_lock(m), 0);
  struct Stat before = stat_of(s, root);
  struct other_thread o = {.m = m};
  pthread_t th;
  pthread_create(&th, NULL, other_thread_main, &o);
  pthread_join(th, NULL);
  ck_assert_int_eq(o.unlock_rc, ZKL_EPERM);
  ck_assert_int_eq(o.try_rc, ZKL_EBUSY);
  ck_assert_int_eq(o.timed_rc, ZKL_ETIMEDOUT);
  ck_assert_int_eq(o.holding, 0);
  /* all of that stayed local: no node created or deleted */
  ck_assert_int_eq(stat_of(s, root).cversion, before.cversion);

  /* a blocked local thread gets the lock once we release it */
  struct locker l = {.m = m, .timeout_ms = 5000};
  pthread_create(&th, NULL, locker_main, &l);
  while (!__atomic_load_n(&l.started, __ATOMIC_SEQ_CST)) it_sleep_ms(1);
  it_sleep_ms(50);
  ck_assert_int_eq(stat_of(s, root).cversion, before.cversion);
  int64_t released = it_now_ms();
  ck_assert_int_eq(zkl_mutex_unlock(m), 0);
  pthread_join(th, NULL);
  ck_assert_int_eq(l.rc, 0);
  ck_assert_int_ge(l.acquired_at, released);
  zkl_mutex_destroy(m);
  zkl_session_close(s);
}
END_TEST

START_TEST(destroy_while_held_releases) {
  char root[128];
  it_root(root, sizeof root, "destroy");
  zkl_session_t *a = it_session(), *b = it_session();
  zkl_mutex_t *ma = it_mutex(a, root), *mb = it_mutex(b, root);
  ck_assert_int_eq(zkl_mutex_lock(ma), 0);
  ck_assert_int_eq(zkl_mutex_lock(ma), 0);
  ck_assert_int_eq(zkl_mutex_trylock(mb), ZKL_EBUSY);
  zkl_mutex_destroy(ma);
  ck_assert_int_eq(zkl_mutex_trylock(mb), 0);
  zkl_mutex_destroy(mb);
  ck_assert_int_eq(it_children(a, root, NULL), 0);
  zkl_session_close(a);
  zkl_session_close(b);
}
END_TEST

struct blocked {
  zkl_mutex_t *m;
  zkl_rwlock_t *l;
  int rc; /* atomic */
};

static void *blocked_main(void *arg) {
  struct blocked *b = arg;
  int rc = b->m != NULL ? zkl_mutex_lock(b->m) : zkl_rwlock_wrlock(b->l);
  __atomic_store_n(&b->rc, rc, __ATOMIC_SEQ_CST);
  return NULL;
}

/* Destroying an object while another thread waits in it: the waiter
 * returns ZKL_ECANCELED before the memory goes, and its node is deleted
 * (valgrind/ASan would catch a use after free). */
START_TEST(destroy_while_a_wait_is_in_flight) {
  char root[128];
  it_root(root, sizeof root, "destroy-wait");
  zkl_session_t *a = it_session(), *b = it_session();
  zkl_mutex_t *ma = it_mutex(a, root);
  zkl_rwlock_t *la = NULL;
  ck_assert_int_eq(zkl_rwlock_create(&la, a, root, NULL), 0);
  for (int kind = 0; kind < 2; kind++) {
    /* the holder is of the same recipe as the waiter */
    ck_assert_int_eq(kind == 0 ? zkl_mutex_lock(ma) : zkl_rwlock_rdlock(la), 0);
    struct blocked bl = {NULL, NULL, 1};
    if (kind == 0) bl.m = it_mutex(b, root);
    else ck_assert_int_eq(zkl_rwlock_create(&bl.l, b, root, NULL), 0);
    pthread_t th;
    pthread_create(&th, NULL, blocked_main, &bl);
    ck_assert(it_wait_children(a, root, 2, 5000));
    it_sleep_ms(50); /* let it settle into its wait */
    if (kind == 0) zkl_mutex_destroy(bl.m);
    else zkl_rwlock_destroy(bl.l);
    pthread_join(th, NULL);
    ck_assert_int_eq(bl.rc, ZKL_ECANCELED);
    ck_assert(it_wait_children(a, root, 1, 5000)); /* the holder only */
    ck_assert_int_eq(kind == 0 ? zkl_mutex_unlock(ma) : zkl_rwlock_unlock(la),
                     0);
  }
  zkl_mutex_destroy(ma);
  zkl_rwlock_destroy(la);
  zkl_session_close(a);
  zkl_session_close(b);
}
END_TEST

/* ---- queue order, herd freedom, fencing ---------------------------------------------- */

#define QN 6

struct queued {
  zkl_session_t *s;
  zkl_mutex_t *m;
  int index;
  int *order;
  int *next;
  pthread_mutex_t *mu;
  uint64_t token;
  int rc;
};

static void *queued_main(void *arg) {
  struct queued *q = arg;
  q->rc = zkl_mutex_timedlock(q->m, 20000);
  if (q->rc != 0) return NULL;
  zkl_mutex_token(q->m, &q->token);
  pthread_mutex_lock(q->mu);
  q->order[(*q->next)++] = q->index;
  pthread_mutex_unlock(q->mu);
  it_sleep_ms(5);
  zkl_mutex_unlock(q->m);
  return NULL;
}

/* Reads the server's watches by path (`wchp`): how many of root's
 * children are watched, and by at most how many sessions each. */
struct herd {
  zkl_session_t *s;
  const char *root;
  int watched, max_sessions, self_watched;
};

static int herd_count(void *arg) {
  struct herd *h = arg;
  struct String_vector kids;
  it_children(h->s, h->root, &kids);
  char *wchp = it_4lw("wchp");
  h->watched = h->max_sessions = h->self_watched = 0;
  for (int i = 0; i < kids.count; i++) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", h->root, kids.data[i]);
    /* besides its owner, which watches its own node while it waits */
    int64_t owner = it_owner_of(h->s, path);
    int sessions = it_watchers_of(wchp, path, owner);
    h->self_watched += it_watchers_of(wchp, path, 0) - sessions;
    if (sessions == 0) continue;
    h->watched++;
    if (sessions > h->max_sessions) h->max_sessions = sessions;
  }
  free(wchp);
  int total = kids.count;
  deallocate_String_vector(&kids);
  return h->watched == total - 1 && h->self_watched == total - 1;
}

/* QN waiters queue one after another behind a holder.  While they wait,
 * each node is watched by exactly one session (herd freedom, checked with
 * the server's `wchp`); then they are served in arrival order with strictly
 * increasing fencing tokens. */
START_TEST(fifo_herd_free_and_tokens_increase) {
  char root[128];
  it_root(root, sizeof root, "fifo");
  zkl_session_t *hs = it_session();
  zkl_mutex_t *hm = it_mutex(hs, root);
  ck_assert_int_eq(zkl_mutex_lock(hm), 0);
  uint64_t holder_token;
  ck_assert_int_eq(zkl_mutex_token(hm, &holder_token), 0);

  struct queued q[QN];
  pthread_t th[QN];
  int order[QN], next = 0;
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  for (int i = 0; i < QN; i++) {
    q[i] = (struct queued){.index = i, .order = order, .next = &next,
                           .mu = &mu};
    q[i].s = it_session();
    q[i].m = it_mutex(q[i].s, root);
    pthread_create(&th[i], NULL, queued_main, &q[i]);
    ck_assert(it_wait_children(hs, root, i + 2, 5000));
  }
  /* all queued: every node but the last waiter's is watched, each by
   * exactly one session other than its owner (waiters arm their watch just after queueing, so
   * poll the server until the last one has) */
  struct herd h = {hs, root, 0, 0, 0};
  it_wait_until(herd_count, &h, 10000);
  ck_assert_msg(h.watched == QN, "%d nodes watched, want %d", h.watched, QN);
  ck_assert_msg(h.self_watched == QN, "%d waiters watch their own node, want %d",
                h.self_watched, QN);
  ck_assert_msg(h.max_sessions == 1, "a node is watched by %d sessions",
                h.max_sessions);
  char *wchp = it_4lw("wchp");
  char root_line[160];
  snprintf(root_line, sizeof root_line, "%s\n", root);
  ck_assert_ptr_null(strstr(wchp, root_line)); /* nobody watches the root */
  free(wchp);

  ck_assert_int_eq(zkl_mutex_unlock(hm), 0);
  for (int i = 0; i < QN; i++) pthread_join(th[i], NULL);
  uint64_t last = holder_token;
  for (int i = 0; i < QN; i++) {
    ck_assert_int_eq(q[i].rc, 0);
    ck_assert_int_eq(order[i], i); /* FIFO */
    ck_assert_msg(q[order[i]].token > last, "token %" PRIu64 " after %" PRIu64,
                  q[order[i]].token, last);
    last = q[order[i]].token;
    zkl_mutex_destroy(q[i].m);
    zkl_session_close(q[i].s);
  }
  ck_assert_int_eq(it_children(hs, root, NULL), 0);
  zkl_mutex_destroy(hm);
  zkl_session_close(hs);
}
END_TEST

/* The holder releases; the waiter of thread t acquires, and not before. */
static void holder_hands_over(zkl_mutex_t *holder, pthread_t t,
                              struct locker *l) {
  int64_t released = it_now_ms();
  ck_assert_int_eq(zkl_mutex_unlock(holder), 0);
  pthread_join(t, NULL);
  ck_assert_int_eq(l->rc, 0);
  ck_assert_int_ge(l->acquired_at, released);
}

/* Destroys three mutexes and closes their three sessions. */
static void end_three(zkl_mutex_t *ma, zkl_mutex_t *mb, zkl_mutex_t *mc,
                      zkl_session_t *a, zkl_session_t *b, zkl_session_t *c) {
  zkl_mutex_destroy(ma);
  zkl_mutex_destroy(mb);
  zkl_mutex_destroy(mc);
  zkl_session_close(a);
  zkl_session_close(b);
  zkl_session_close(c);
}

/* A waiter whose predecessor gives up re-watches the next one down, and
 * is still served in order (a give-up is a plain delete: the waiter walks
 * down to the holder). */
START_TEST(waiter_behind_abandoning_waiter) {
  char root[128];
  it_root(root, sizeof root, "abandon");
  zkl_session_t *a = it_session(), *b = it_session(), *c = it_session();
  zkl_mutex_t *ma = it_mutex(a, root), *mb = it_mutex(b, root),
              *mc = it_mutex(c, root);
  ck_assert_int_eq(zkl_mutex_lock(ma), 0);
  struct locker lb = {.m = mb, .timeout_ms = -1};
  struct locker lc = {.m = mc, .timeout_ms = 10000};
  pthread_t tb, tc;
  pthread_create(&tb, NULL, locker_main, &lb);
  ck_assert(it_wait_children(a, root, 2, 5000));
  pthread_create(&tc, NULL, locker_main, &lc);
  ck_assert(it_wait_children(a, root, 3, 5000));
  zkl_mutex_cancel(mb); /* c's predecessor leaves the queue */
  pthread_join(tb, NULL);
  ck_assert_int_eq(lb.rc, ZKL_ECANCELED);
  it_sleep_ms(100);
  ck_assert_int_eq(zkl_mutex_trylock(mb), ZKL_EBUSY); /* a still holds */
  ck_assert_int_eq(it_children(a, root, NULL), 2);  /* a and c */
  holder_hands_over(ma, tc, &lc);
  end_three(ma, mb, mc, a, b, c);
}
END_TEST

/* A waiter keeps only its nearest predecessors; when all of them give up
 * and no release covers the ones below, it lists again and waits for the
 * ones it had left out (the holder here), never passing them. */
START_TEST(waiter_lists_again_when_its_predecessors_give_up) {
  enum { QUITTERS = 7 };
  char root[128];
  it_root(root, sizeof root, "window");
  zkl_session_t *a = it_session(), *b = it_session(), *c = it_session();
  zkl_mutex_t *ma = it_mutex(a, root), *mc = it_mutex(c, root);
  zkl_mutex_t *mq[QUITTERS];
  struct locker lq[QUITTERS];
  pthread_t tq[QUITTERS], tc;
  ck_assert_int_eq(zkl_mutex_lock(ma), 0);
  for (int i = 0; i < QUITTERS; i++) { /* queued one after the other */
    mq[i] = it_mutex(b, root);
    lq[i] = (struct locker){.m = mq[i], .timeout_ms = -1};
    pthread_create(&tq[i], NULL, locker_main, &lq[i]);
    ck_assert(it_wait_children(a, root, 2 + i, 5000));
  }
  struct locker lc = {.m = mc, .timeout_ms = 20000};
  pthread_create(&tc, NULL, locker_main, &lc);
  ck_assert(it_wait_children(a, root, 2 + QUITTERS, 5000));
  /* the nearest give up first, then the rest, while a holds */
  for (int i = QUITTERS; i-- > 0;) {
    zkl_mutex_cancel(mq[i]);
    pthread_join(tq[i], NULL);
    ck_assert_int_eq(lq[i].rc, ZKL_ECANCELED);
    if (i == 3) it_sleep_ms(300); /* c's kept ones are all gone now */
  }
  it_sleep_ms(300);
  ck_assert_int_eq(it_children(a, root, NULL), 2); /* a and c */
  holder_hands_over(ma, tc, &lc);
  ck_assert_int_eq(it_children(a, root, NULL), 0);
  for (int i = 0; i < QUITTERS; i++) zkl_mutex_destroy(mq[i]);
  zkl_mutex_destroy(ma);
  zkl_mutex_destroy(mc);
  zkl_session_close(a);
  zkl_session_close(b);
  zkl_session_close(c);
}
END_TEST

/* ---- the release mark, only after a contended hold ------------------------ */

/* The session's one acquisition waits, its watches armed on its
 * predecessor and on its own node. */
static int waits_watching(void *arg) {
  zkl_session_stats_t st;
  if (zkl_session_stats(arg, &st, sizeof st) != 0) return 0;
  return st.waiting == 1 && st.watches >= 2;
}

/* A thread that locks, holds until told, then unlocks (ownership is per
 * thread). */
struct holder {
  zkl_mutex_t *m;
  int rc, unlock_rc;
  int granted, release; /* atomic */
  uint64_t token;
  char node[512];
  pthread_t th;
};

static void *holder_main(void *arg) {
  struct holder *h = arg;
  h->rc = zkl_mutex_lock(h->m);
  if (h->rc == 0) {
    zkl_mutex_token(h->m, &h->token);
    zkl_mutex_node(h->m, h->node, sizeof h->node);
  }
  __atomic_store_n(&h->granted, 1, __ATOMIC_SEQ_CST);
  while (!__atomic_load_n(&h->release, __ATOMIC_SEQ_CST)) it_sleep_ms(2);
  h->unlock_rc = h->rc == 0 ? zkl_mutex_unlock(h->m) : 0;
  return NULL;
}

static int holder_granted(void *arg) {
  return __atomic_load_n(&((struct holder *)arg)->granted, __ATOMIC_SEQ_CST);
}

/* The server has a watch on a holder's node from another session: the
 * waiter behind it looked at it (else a release before its look would
 * let it in on another path, with no read). */
struct node_of {
  const char *node;
  zkl_session_t *s; /* its owner */
};

static int node_watched(void *arg) {
  struct node_of *n = arg;
  char *wchp = it_4lw("wchp");
  int w = it_watchers_of(wchp, n->node, zkl_session_id(n->s));
  free(wchp);
  return w >= 1;
}

/* A hold whose acquisition saw nobody else releases with a plain delete
 * (the floor's release); the waiter that came during it reads its own
 * node once and is granted.  A hold that waited (or saw others) releases
 * with the mark (a multi: setData + delete), and the waiter behind it is
 * granted without any read.  Counted with each session's own counters. */
START_TEST(release_marks_only_a_contended_hold) {
  char root[128];
  it_root(root, sizeof root, "mark");
  zkl_session_t *a = it_session(), *b = it_session(), *c = it_session();
  zkl_mutex_t *ma = it_mutex(a, root), *mb = it_mutex(b, root),
              *mc = it_mutex(c, root);

  /* alone: lock and unlock, no mark */
  zkl_session_stats_t a0 = it_stats(a);
  ck_assert_int_eq(zkl_mutex_lock(ma), 0);
  ck_assert_int_eq(zkl_mutex_unlock(ma), 0);
  zkl_session_stats_t a1 = it_stats(a);
  ck_assert_uint_eq(a1.multis - a0.multis, 0);
  ck_assert_uint_eq(a1.sets - a0.sets, 0);
  ck_assert_uint_eq(a1.deletes - a0.deletes, 1);

  /* a holds alone; b comes during the hold and waits */
  uint64_t ta = 0;
  ck_assert_int_eq(zkl_mutex_lock(ma), 0);
  ck_assert_int_eq(zkl_mutex_token(ma, &ta), 0);
  struct holder hb = {.m = mb}, hc = {.m = mc};
  pthread_create(&hb.th, NULL, holder_main, &hb);
  ck_assert_msg(it_wait_until(waits_watching, b, 10000),
                "b does not wait with its watches");
  char a_node[512];
  ck_assert_int_eq(zkl_mutex_node(ma, a_node, sizeof a_node), 0);
  struct node_of an = {a_node, a};
  ck_assert_msg(it_wait_until(node_watched, &an, 10000),
                "the server has no watch of b on a's node");
  zkl_session_stats_t b0 = it_stats(b);
  a0 = it_stats(a);
  ck_assert_int_eq(zkl_mutex_unlock(ma), 0);
  a1 = it_stats(a);
  ck_assert_uint_eq(a1.multis - a0.multis, 0); /* uncontended: plain */
  ck_assert_uint_eq(a1.deletes - a0.deletes, 1);
  ck_assert_msg(it_wait_until(holder_granted, &hb, 10000), "b not granted");
  ck_assert_int_eq(hb.rc, 0);
  ck_assert_uint_gt(hb.token, ta);
  zkl_session_stats_t b1 = it_stats(b);
  /* no mark: b read its own node before the grant, and nothing else */
  ck_assert_uint_eq(b1.exists - b0.exists, 1);
  ck_assert_uint_eq(b1.children - b0.children, 0);

  /* b waited, so its hold marks: c, waiting behind it, reads nothing */
  pthread_create(&hc.th, NULL, holder_main, &hc);
  ck_assert_msg(it_wait_until(waits_watching, c, 10000),
                "c does not wait with its watches");
  struct node_of bn = {hb.node, b};
  ck_assert_msg(it_wait_until(node_watched, &bn, 10000),
                "the server has no watch of c on b's node");
  zkl_session_stats_t c0 = it_stats(c);
  b0 = it_stats(b);
  __atomic_store_n(&hb.release, 1, __ATOMIC_SEQ_CST);
  pthread_join(hb.th, NULL);
  ck_assert_int_eq(hb.unlock_rc, 0);
  b1 = it_stats(b);
  ck_assert_uint_eq(b1.multis - b0.multis, 1); /* the marked release */
  ck_assert_uint_eq(b1.deletes - b0.deletes, 0);
  ck_assert_msg(it_wait_until(holder_granted, &hc, 10000), "c not granted");
  ck_assert_int_eq(hc.rc, 0);
  ck_assert_uint_gt(hc.token, hb.token);
  zkl_session_stats_t c1 = it_stats(c);
  ck_assert_uint_eq(c1.exists - c0.exists, 0);
  ck_assert_uint_eq(c1.gets - c0.gets, 0);
  ck_assert_uint_eq(c1.children - c0.children, 0);
  c0 = c1;
  __atomic_store_n(&hc.release, 1, __ATOMIC_SEQ_CST);
  pthread_join(hc.th, NULL);
  ck_assert_int_eq(hc.unlock_rc, 0);
  c1 = it_stats(c);
  ck_assert_uint_eq(c1.multis - c0.multis, 1); /* c waited: it marks */

  /* the next uncontended hold of b goes back to a plain delete */
  b0 = it_stats(b);
  ck_assert_int_eq(zkl_mutex_lock(mb), 0);
  ck_assert_int_eq(zkl_mutex_unlock(mb), 0);
  b1 = it_stats(b);
  ck_assert_uint_eq(b1.multis - b0.multis, 0);
  ck_assert_uint_eq(b1.deletes - b0.deletes, 1);
  ck_assert_int_eq(it_children(a, root, NULL), 0);
  end_three(ma, mb, mc, a, b, c);
}
END_TEST

/* A blocking lock is woken once for its create and listing, at the
 * listing's answer.  A listing the client fails as it is sent (as on a
 * handle that expired between the two sends) is in before the create's
 * answer: the lock must still wait for the create's, then list on its
 * own, and be granted at once, not at its deadline. */
START_TEST(listing_failed_as_sent) {
  char root[128];
  it_root(root, sizeof root, "lfail");
  zkl_session_t *a = it_session();
  it_keep_root(a, root); /* the first create goes in: its listing is sent */
  zkl_mutex_t *ma = it_mutex(a, root);
  zkl_session_stats_t a0 = it_stats(a);
  it_fail_next_listing(root, ZINVALIDSTATE);
  int64_t t0 = it_now_ms();
  int rc = zkl_mutex_timedlock(ma, 8000);
  int64_t took = it_now_ms() - t0;
  ck_assert_int_eq(it_listings_failed(), 1);
  ck_assert_msg(rc == 0, "timedlock: %s after %lld ms", it_code(rc),
                (long long)took);
  ck_assert_msg(took < 4000, "granted only after %lld ms", (long long)took);
  zkl_session_stats_t a1 = it_stats(a);
  ck_assert_uint_eq(a1.creates - a0.creates, 1);
  /* the failed one is not counted (never sent): one listing, its own */
  ck_assert_uint_eq(a1.children - a0.children, 1);
  uint64_t tok = 0;
  ck_assert_int_eq(zkl_mutex_token(ma, &tok), 0);
  ck_assert_uint_gt(tok, 0);
  ck_assert_int_eq(zkl_mutex_unlock(ma), 0);
  /* the next acquisition goes the usual way */
  ck_assert_int_eq(zkl_mutex_timedlock(ma, 8000), 0);
  ck_assert_int_eq(zkl_mutex_unlock(ma), 0);
  zkl_mutex_destroy(ma);
  ck_assert_int_eq(it_children(a, root, NULL), 1); /* the keeper alone */
  zkl_session_close(a);
}
END_TEST

START_TEST(token_is_node_czxid) {
  char root[128], node[1024];
  it_root(root, sizeof root, "token");
  zkl_session_t *s = it_session();
  zkl_mutex_t *m = it_mutex(s, root);
  uint64_t prev = 0;
  for (int i = 0; i < 5; i++) {
    ck_assert_int_eq(zkl_mutex_lock(m), 0);
    uint64_t t;
    ck_assert_int_eq(zkl_mutex_token(m, &t), 0);
    ck_assert_int_eq(zkl_mutex_node(m, node, sizeof node), 0);
    ck_assert(t == (uint64_t)stat_of(s, node).czxid);
    ck_assert(t > prev);
    prev = t;
    ck_assert_int_eq(zkl_mutex_unlock(m), 0);
  }
  zkl_mutex_destroy(m);
  zkl_session_close(s);
}
END_TEST

/* ---- process exit --------------------------------------------------------------------- */

/* A process that dies holding the lock (SIGKILL), without closing its
 * session, frees it within its session timeout; one that closes its session
 * and exits frees it at once.  Children fork before any session is opened here. */
START_TEST(process_exit_frees_the_lock) {
  char root[128];
  it_root(root, sizeof root, "exit");
  for (int clean = 0; clean < 2; clean++) {
    int pipefd[2];
    ck_assert_int_eq(pipe(pipefd), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
      close(pipefd[0]);
      zkl_session_t *s = NULL;
      zkl_session_opts_t o;
      zkl_session_opts_init(&o);
      o.session_timeout_ms = 2000;
      zkl_mutex_t *m = NULL;
      if (zkl_session_open(&s, it_hosts(), &o) != 0 ||
          zkl_mutex_create(&m, s, root, NULL) != 0 || zkl_mutex_lock(m) != 0)
        _exit(2);
      if (write(pipefd[1], "L", 1) != 1) _exit(3);
      if (!clean) /* dies with its threads running: a crash (and no exit
                     handler under valgrind to hang in) */
        kill(getpid(), SIGKILL);
      zkl_session_close(s); /* holding; mutex never destroyed */
      _exit(0);
    }
    close(pipefd[1]);
    char byte;
    ck_assert_int_eq(read(pipefd[0], &byte, 1), 1);
    close(pipefd[0]);
    int status;
    waitpid(pid, &status, 0);
    ck_assert(clean ? WIFEXITED(status) && WEXITSTATUS(status) == 0
                    : WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    zkl_session_t *s = it_session();
    zkl_mutex_t *m = it_mutex(s, root);
    int64_t t0 = it_now_ms();
    ck_assert_int_eq(zkl_mutex_timedlock(m, 15000), 0);
    int64_t took = it_now_ms() - t0;
    if (clean) ck_assert_int_lt(took, 1000);
    ck_assert_int_eq(zkl_mutex_unlock(m), 0);
    ck_assert_int_eq(it_children(s, root, NULL), 0);
    zkl_mutex_destroy(m);
    zkl_session_close(s);
  }
}
END_TEST

/* ---- bad input ------------------------------------------------------------------------ */

START_TEST(bad_paths_and_arguments) {
  zkl_session_t *s = it_session();
  char longpath[1200];
  memset(longpath, 'a', sizeof longpath - 1);
  longpath[0] = '/';
  longpath[sizeof longpath - 1] = '\0';
  const char *bad[] = {"", "relative", "/", "/a/", "//a", "/a//b", "/a/./b",
                       "/a/..", "/a\x01", "/a\nb", "/a\x7f", "/zookeeper/x",
                       "/bad\xc3", longpath};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    zkl_mutex_t *m = (zkl_mutex_t *)s;
    ck_assert_int_eq(zkl_mutex_create(&m, s, bad[i], NULL), ZKL_EINVAL);
    ck_assert_ptr_null(m);
    ck_assert_msg(zkl_last_error()[0] != '\0', "no message for bad[%zu]", i);
  }
  zkl_mutex_t *m;
  ck_assert_int_eq(zkl_mutex_create(&m, s, NULL, NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_mutex_create(NULL, s, "/x", NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_mutex_create(&m, NULL, "/x", NULL), ZKL_EINVAL);
  zkl_mutex_opts_t o;
  zkl_mutex_opts_init(&o);
  o.data = "x";
  o.data_len = 5000;
  ck_assert_int_eq(zkl_mutex_create(&m, s, "/x", &o), ZKL_EINVAL);
  o.data = NULL;
  o.data_len = 3;
  ck_assert_int_eq(zkl_mutex_create(&m, s, "/x", &o), ZKL_EINVAL);
  uint64_t t;
  ck_assert_int_eq(zkl_mutex_create(&m, s, "/zkl-test/ok", NULL), 0);
  ck_assert_int_eq(zkl_mutex_token(m, NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_mutex_token(m, &t), ZKL_EPERM);
  ck_assert_int_eq(zkl_mutex_unlock(m), ZKL_EPERM);
  char small[8];
  ck_assert_int_eq(zkl_mutex_lock(m), 0);
  ck_assert_int_eq(zkl_mutex_node(m, small, sizeof small), ZKL_EINVAL);
  ck_assert_int_eq(zkl_mutex_unlock(m), 0);
  zkl_mutex_destroy(m);
  zkl_session_close(s);
}
END_TEST

Suite *mutex_suite(void) {
  Suite *su = suite_create("mutex");
  TCase *tc = it_tcase("protocol");
  tcase_add_test(tc, node_shape_data_and_container_root);
  tcase_add_test(tc, custom_node_data);
  tcase_add_test(tc, root_removed_between_uses);
  tcase_add_test(tc, empty_roots_are_reaped);
  tcase_add_test(tc, foreign_children_ignored);
  suite_add_tcase(su, tc);
  tc = it_tcase("try-timed-cancel");
  tcase_add_test(tc, trylock_on_held_lock_writes_nothing);
  tcase_add_test(tc, timedlock_times_out_and_leaves_nothing);
  tcase_add_test(tc, cancel_wakes_blocked_lock);
  suite_add_tcase(su, tc);
  tc = it_tcase("threads");
  tcase_add_test(tc, reentrant_per_thread);
  tcase_add_test(tc, other_thread_cannot_unlock_and_waits_locally);
  tcase_add_test(tc, destroy_while_held_releases);
  tcase_add_test(tc, destroy_while_a_wait_is_in_flight);
  suite_add_tcase(su, tc);
  tc = it_tcase("queue");
  tcase_add_test(tc, fifo_herd_free_and_tokens_increase);
  tcase_add_test(tc, waiter_behind_abandoning_waiter);
  tcase_add_test(tc, waiter_lists_again_when_its_predecessors_give_up);
  tcase_add_test(tc, token_is_node_czxid);
  tcase_add_test(tc, release_marks_only_a_contended_hold);
  tcase_add_test(tc, listing_failed_as_sent);
  suite_add_tcase(su, tc);
  tc = it_tcase("exit");
  tcase_add_test(tc, process_exit_frees_the_lock);
  suite_add_tcase(su, tc);
  tc = it_tcase("bad-input");
  tcase_add_test(tc, bad_paths_and_arguments);
  suite_add_tcase(su, tc);
  return su;
}
