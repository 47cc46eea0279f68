/* tests/integration/test-faults.c - the queue stays correct when nodes
 * vanish, when someone changes a node's data, when the release cannot
 * write our node, and when the connection drops
 * while a waiter gives up (server paused with SIGSTOP by the harness). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "itest.h"

struct contender {
  zkl_mutex_t *m;
  int64_t timeout_ms;
  int hold_ms;
  volatile int *inside, *overlaps;
  int rc;
  int64_t got_at, released_at, returned_at;
};

static void *contender_main(void *arg) {
  struct contender *c = arg;
  int rc = zkl_mutex_timedlock(c->m, c->timeout_ms);
  c->returned_at = it_now_ms();
  __atomic_store_n(&c->rc, rc, __ATOMIC_SEQ_CST);
  if (rc != 0) return NULL;
  c->got_at = it_now_ms();
  if (__atomic_add_fetch(c->inside, 1, __ATOMIC_SEQ_CST) != 1)
    __atomic_add_fetch(c->overlaps, 1, __ATOMIC_SEQ_CST);
  it_sleep_ms(c->hold_ms);
  __atomic_sub_fetch(c->inside, 1, __ATOMIC_SEQ_CST);
  c->released_at = it_now_ms();
  zkl_mutex_unlock(c->m);
  return NULL;
}

/* The name of the newest child (highest sequence), copied into out. */
static void newest_child(zkl_session_t *s, const char *root, char *out,
                         size_t len) {
  struct String_vector kids;
  it_children(s, root, &kids);
  ck_assert_int_gt(kids.count, 0);
  const char *best = kids.data[0];
  for (int i = 1; i < kids.count; i++)
    if (strcmp(kids.data[i] + strlen(kids.data[i]) - 10,
               best + strlen(best) - 10) > 0)
      best = kids.data[i];
  snprintf(out, len, "%s/%s", root, best);
  deallocate_String_vector(&kids);
}

/* Someone deletes a waiter's node while it waits.  The waiter behind it
 * moves up; the waiter whose node vanished must notice before taking the
 * lock (they would otherwise both hold it) and queue again at the back. */
START_TEST(waiter_whose_node_is_deleted_requeues) {
  char root[128], b_node[512];
  it_root(root, sizeof root, "vanish");
  zkl_session_t *sa = it_session(), *sb = it_session(), *sc = it_session();
  zkl_mutex_t *ma, *mb, *mc;
  ck_assert_int_eq(zkl_mutex_create(&ma, sa, root, NULL), 0);
  ck_assert_int_eq(zkl_mutex_create(&mb, sb, root, NULL), 0);
  ck_assert_int_eq(zkl_mutex_create(&mc, sc, root, NULL), 0);
  ck_assert_int_eq(zkl_mutex_lock(ma), 0);
  volatile int inside = 1, overlaps = 0; /* a is inside */

  struct contender b = {mb, 20000, 50, &inside, &overlaps, -1, 0, 0, 0};
  struct contender c = {mc, 20000, 300, &inside, &overlaps, -1, 0, 0, 0};
  pthread_t tb, tc;
  pthread_create(&tb, NULL, contender_main, &b);
  ck_assert(it_wait_children(sa, root, 2, 5000));
  newest_child(sa, root, b_node, sizeof b_node);
  pthread_create(&tc, NULL, contender_main, &c);
  ck_assert(it_wait_children(sa, root, 3, 5000));

  /* an operator deletes b's node */
  ck_assert_int_eq(zoo_delete(zkl_session_zhandle(sa), b_node, -1), ZOK);
  it_sleep_ms(100);
  __atomic_sub_fetch(&inside, 1, __ATOMIC_SEQ_CST);
  ck_assert_int_eq(zkl_mutex_unlock(ma), 0);
  pthread_join(tb, NULL);
  pthread_join(tc, NULL);
  ck_assert_int_eq(b.rc, 0);
  ck_assert_int_eq(c.rc, 0);
  ck_assert_int_eq(overlaps, 0);
  /* c was ahead once b's node was gone: b came after c */
  ck_assert_int_ge(b.got_at, c.released_at);
  ck_assert_int_eq(it_children(sa, root, NULL), 0);
  zkl_mutex_destroy(ma);
  zkl_mutex_destroy(mb);
  zkl_mutex_destroy(mc);
  zkl_session_close(sa);
  zkl_session_close(sb);
  zkl_session_close(sc);
}
END_TEST

/* A mutex holder's release, after a hold whose acquisition saw another
 * child (round 1: the keeper), changes its node's data and deletes it in
 * one multi: the node's watcher hears NodeDataChanged (what tells a zkl
 * waiter that its predecessor left as holder), and the node is gone.
 * After a hold that saw nobody (round 0) it is a plain delete.  The lock
 * root's own data is the application's: zkl never writes it. */
START_TEST(release_changes_then_deletes_and_leaves_the_root_alone) {
  char root[128], node[1024], data[64];
  it_root(root, sizeof root, "release");
  zkl_session_t *a = it_session(), *b = it_session();
  zhandle_t *zb = zkl_session_zhandle(b);
  zkl_mutex_t *ma = it_mutex(a, root);
  ck_assert_int_eq(zkl_mutex_lock(ma), 0);
  it_keep_root(b, root); /* so the server does not reap it before we look */
  static const char app[] = "the application's own data";
  ck_assert_int_eq(zoo_set(zb, root, app, (int)sizeof app - 1, -1), ZOK);
  for (int round = 0; round < 2; round++) {
    if (round > 0) ck_assert_int_eq(zkl_mutex_lock(ma), 0);
    ck_assert_int_eq(zkl_mutex_node(ma, node, sizeof node), 0);
    it_watch_t w;
    it_watch_node(b, node, &w);
    ck_assert_int_eq(zkl_mutex_unlock(ma), 0);
    ck_assert_int_eq(it_heard(&w, 5000),
                     round > 0 ? ZOO_CHANGED_EVENT : ZOO_DELETED_EVENT);
    ck_assert_int_eq(zoo_exists(zb, node, 0, NULL), ZNONODE);
    int len = sizeof data;
    ck_assert_int_eq(zoo_get(zb, root, 0, data, &len, NULL), ZOK);
    ck_assert_int_eq(len, (int)sizeof app - 1);
    ck_assert(memcmp(data, app, sizeof app - 1) == 0);
  }
  zkl_mutex_destroy(ma);
  zkl_session_close(a);
  zkl_session_close(b);
}
END_TEST

/* Whether some session watches `path` (the server's own list). */
static int path_watched(void *path) {
  char *wchp = it_4lw("wchp");
  int n = it_watchers_of(wchp, path, 0);
  free(wchp);
  return n > 0;
}

/* Someone changes the data of `node`, which a waiter watches and which
 * does not tell releases: the waiter hears it, looks again and watches the
 * node again, still waiting (*rc stays -1). */
static void change_watched_node(zhandle_t *zh, char *node, int *rc) {
  ck_assert(it_wait_until(path_watched, node, 5000));
  ck_assert_int_eq(zoo_set(zh, node, "changed", 7, -1), ZOK);
  ck_assert(it_wait_until(path_watched, node, 5000));
  it_sleep_ms(100);
  ck_assert_int_eq(__atomic_load_n(rc, __ATOMIC_SEQ_CST), -1);
}

struct writer {
  zkl_rwlock_t *l;
  int rc, unlock_rc;
};

static void *writer_main(void *arg) {
  struct writer *w = arg;
  int rc = zkl_rwlock_timedwrlock(w->l, 20000);
  __atomic_store_n(&w->rc, rc, __ATOMIC_SEQ_CST);
  if (rc == 0) w->unlock_rc = zkl_rwlock_unlock(w->l);
  return NULL;
}

/* A change of the predecessor's data is taken for a release only from
 * the kinds of node whose zkl holders release that way (mutex, writer):
 * a kazoo lock node (a peer's) or a reader's node whose data someone
 * changes keeps its waiter waiting, until the node really goes. */
START_TEST(data_change_is_a_release_only_from_zkl_holders) {
  char root[128], kazoo[512], reader[512];
  it_root(root, sizeof root, "peerdata");
  zkl_session_t *a = it_session(), *b = it_session();
  zhandle_t *za = zkl_session_zhandle(a);

  /* a kazoo Lock holder, written by hand in kazoo's node shape */
  zkl_mutex_t *mb = it_mutex(b, root);
  ck_assert_int_eq(zkl_mutex_lock(mb), 0); /* creates the root */
  it_keep_root(a, root); /* before the server may reap it */
  ck_assert_int_eq(zkl_mutex_unlock(mb), 0);
  char want[256];
  snprintf(want, sizeof want, "%s/0123456789abcdef__lock__", root);
  ck_assert_int_eq(zoo_create(za, want, "kazoo", 5, &ZOO_OPEN_ACL_UNSAFE,
                              ZOO_EPHEMERAL | ZOO_SEQUENCE, kazoo,
                              sizeof kazoo),
                   ZOK);
  volatile int inside = 0, overlaps = 0;
  struct contender c = {mb, 20000, 0, &inside, &overlaps, -1, 0, 0, 0};
  pthread_t t;
  pthread_create(&t, NULL, contender_main, &c);
  change_watched_node(za, kazoo, &c.rc);
  int64_t freed = it_now_ms();
  ck_assert_int_eq(zoo_delete(za, kazoo, -1), ZOK);
  pthread_join(t, NULL);
  ck_assert_int_eq(c.rc, 0);
  ck_assert_int_ge(c.got_at, freed);
  zkl_mutex_destroy(mb);

  /* a zkl reader holds, a zkl writer waits behind it */
  char rw[160];
  snprintf(rw, sizeof rw, "%s/rw", root);
  zkl_rwlock_t *ra, *wb;
  ck_assert_int_eq(zkl_rwlock_create(&ra, a, rw, NULL), 0);
  ck_assert_int_eq(zkl_rwlock_create(&wb, b, rw, NULL), 0);
  ck_assert_int_eq(zkl_rwlock_rdlock(ra), 0);
  newest_child(a, rw, reader, sizeof reader);
  struct writer w = {wb, -1, -1};
  pthread_create(&t, NULL, writer_main, &w);
  change_watched_node(za, reader, &w.rc);
  ck_assert_int_eq(zkl_rwlock_unlock(ra), 0);
  pthread_join(t, NULL);
  ck_assert_int_eq(w.rc, 0);
  ck_assert_int_eq(w.unlock_rc, 0);
  ck_assert_int_eq(it_children(a, rw, NULL), 0);
  zkl_rwlock_destroy(ra);
  zkl_rwlock_destroy(wb);
  zkl_session_close(a);
  zkl_session_close(b);
}
END_TEST

/* Nodes whose ACL does not let their creator write them: the release
 * cannot change the node's data, so it deletes plainly, and the waiters
 * find their way by checking the nodes below one by one.  Still one
 * holder at a time, in queue order, and no node left. */
START_TEST(release_without_write_permission_still_hands_over) {
  enum { WAITERS = 6 };
  char root[128];
  it_root(root, sizeof root, "nowrite");
  struct ACL no_write = {ZOO_PERM_READ | ZOO_PERM_CREATE | ZOO_PERM_DELETE,
                         {"world", "anyone"}};
  struct ACL_vector acl = {1, &no_write};
  zkl_session_opts_t o;
  zkl_session_opts_init(&o);
  o.acl = ZKL_ACL_CUSTOM;
  o.custom_acl = &acl;
  zkl_session_t *s[WAITERS + 1];
  zkl_mutex_t *m[WAITERS + 1];
  for (int i = 0; i <= WAITERS; i++) {
    s[i] = NULL;
    ck_assert_int_eq(zkl_session_open(&s[i], it_hosts(), &o), 0);
    m[i] = it_mutex(s[i], root);
  }
  ck_assert_int_eq(zkl_mutex_lock(m[0]), 0);
  volatile int inside = 1, overlaps = 0;
  struct contender c[WAITERS];
  pthread_t t[WAITERS];
  for (int i = 0; i < WAITERS; i++) { /* queued one after the other */
    c[i] = (struct contender){m[i + 1], 20000, 20, &inside, &overlaps,
                              -1, 0, 0, 0};
    pthread_create(&t[i], NULL, contender_main, &c[i]);
    ck_assert(it_wait_children(s[0], root, 2 + i, 5000));
  }
  /* the holder cannot write its node: its release is a plain delete */
  char node[512];
  ck_assert_int_eq(zkl_mutex_node(m[0], node, sizeof node), 0);
  ck_assert_int_eq(zoo_set(zkl_session_zhandle(s[0]), node, "x", 1, -1),
                   ZNOAUTH);
  it_watch_t heard;
  it_watch_node(s[WAITERS], node, &heard);
  __atomic_sub_fetch(&inside, 1, __ATOMIC_SEQ_CST);
  ck_assert_int_eq(zkl_mutex_unlock(m[0]), 0);
  ck_assert_int_eq(it_heard(&heard, 5000), ZOO_DELETED_EVENT);
  for (int i = 0; i < WAITERS; i++) {
    pthread_join(t[i], NULL);
    ck_assert_int_eq(c[i].rc, 0);
    if (i > 0) ck_assert_int_ge(c[i].got_at, c[i - 1].released_at);
  }
  ck_assert_int_eq(overlaps, 0);
  ck_assert_int_eq(it_children(s[0], root, NULL), 0);
  for (int i = 0; i <= WAITERS; i++) {
    zkl_mutex_destroy(m[i]);
    zkl_session_close(s[i]);
  }
}
END_TEST

struct watched_arg {
  const char *root;
};

static int some_child_watched(void *arg) {
  struct watched_arg *w = arg;
  char *wchp = it_4lw("wchp");
  char prefix[200];
  snprintf(prefix, sizeof prefix, "%s/", w->root);
  int found = strstr(wchp, prefix) != NULL;
  free(wchp);
  return found;
}

static int session_suspended(void *arg) {
  return zkl_session_state(arg) == ZKL_SESSION_SUSPENDED;
}

static int session_connected(void *arg) {
  return zkl_session_state(arg) == ZKL_SESSION_CONNECTED;
}

/* The connection drops while a waiter gives up: its call returns on time,
 * it says the hold is in doubt meanwhile, and once the server is back its
 * node is deleted (no orphan blocking the queue) and the lock moves on. */
START_TEST(timeout_while_disconnected_leaves_no_node) {
  if (getenv("ZKL_TEST_ZKDIR") == NULL || getenv("ZKL_TEST_HARNESS") == NULL ||
      getenv("ZKL_TEST_ENSEMBLE_DIR") != NULL)
    return; /* needs the standalone server the wrapper started */
  char root[128];
  it_root(root, sizeof root, "pause");
  zkl_session_t *sa = it_session_timeout(9000), *sb = it_session_timeout(9000);
  zkl_mutex_t *ma, *mb;
  ck_assert_int_eq(zkl_mutex_create(&ma, sa, root, NULL), 0);
  ck_assert_int_eq(zkl_mutex_create(&mb, sb, root, NULL), 0);
  ck_assert_int_eq(zkl_mutex_lock(ma), 0);
  volatile int inside = 0, overlaps = 0;
  struct contender b = {mb, 2500, 0, &inside, &overlaps, -1, 0, 0, 0};
  pthread_t tb;
  int64_t t0 = it_now_ms();
  pthread_create(&tb, NULL, contender_main, &b);
  ck_assert(it_wait_children(sa, root, 2, 2000));
  /* pause only once b sits in its wait (its watch is on the server): a
   * request in flight when the server freezes returns only when the client
   * notices, up to 2/3 of the session timeout later (see the header) */
  struct watched_arg wa = {root};
  ck_assert(it_wait_until(some_child_watched, &wa, 2000));

  it_harness("pause"); /* no answers from now on */
  ck_assert_msg(it_wait_until(session_suspended, sa, 8000),
                "client did not notice the dead connection");
  ck_assert_int_eq(zkl_mutex_holding(ma), ZKL_ESUSPENDED);
  pthread_join(tb, NULL);
  int64_t took = b.returned_at - t0;
  ck_assert_int_eq(b.rc, ZKL_ETIMEDOUT);
  ck_assert_msg(took < 2500 + 1500, "timedlock(2500) took %" PRId64 " ms",
                took);
  it_harness("resume");

  ck_assert(it_wait_until(session_connected, sa, 8000));
  ck_assert(it_wait_until(session_connected, sb, 8000));
  ck_assert_int_eq(zkl_mutex_holding(ma), 1); /* same session: still ours */
  /* b's node is deleted once the connection is back */
  ck_assert_msg(it_wait_children(sa, root, 1, 8000),
                "the waiter's node was left behind");
  ck_assert_int_eq(zkl_mutex_unlock(ma), 0);
  /* b's session may not have been heard from since the resume (a slow,
   * sanitized run): its try says "in doubt" until it has */
  int trc = ZKL_ESUSPENDED;
  for (int64_t end = it_now_ms() + 8000;
       trc == ZKL_ESUSPENDED && it_now_ms() < end;) {
    trc = zkl_mutex_trylock(mb);
    if (trc == ZKL_ESUSPENDED) it_sleep_ms(50);
  }
  ck_assert_int_eq(trc, 0);
  ck_assert_int_eq(zkl_mutex_unlock(mb), 0);
  zkl_mutex_destroy(ma);
  zkl_mutex_destroy(mb);
  zkl_session_close(sa);
  zkl_session_close(sb);
}
END_TEST

static int standalone_harness(void) {
  return getenv("ZKL_TEST_ZKDIR") != NULL &&
         getenv("ZKL_TEST_HARNESS") != NULL &&
         getenv("ZKL_TEST_ENSEMBLE_DIR") == NULL;
}

/* The server freezes before the call: every request of timedlock is then
 * unanswered and the client has not noticed anything yet (it would only
 * after 2/3 of the 10 s session timeout).  The call still returns at its
 * deadline, and the node its create may have made once the server thaws is
 * deleted by the janitor: no orphan blocks the lock. */
START_TEST(frozen_server_call_returns_at_its_deadline) {
  if (!standalone_harness()) return;
  char root[128];
  it_root(root, sizeof root, "frozen");
  zkl_session_t *s = it_session_timeout(10000);
  zkl_mutex_t *m = it_mutex(s, root), *other = it_mutex(s, root);
  ck_assert_int_eq(zkl_mutex_lock(other), 0); /* makes the root */
  it_keep_root(s, root);
  ck_assert_int_eq(zkl_mutex_unlock(other), 0);
  it_harness("pause");
  int64_t t0 = it_now_ms();
  int rc = zkl_mutex_timedlock(m, 400);
  int64_t took = it_now_ms() - t0;
  ck_assert_msg(rc == ZKL_ETIMEDOUT, "timedlock: %s", zkl_strerror(rc));
  ck_assert_msg(took >= 350 && took < 400 + 600,
                "timedlock(400) took %" PRId64 " ms", took);
  /* unlock of a hold nobody has: answered at once, no request */
  ck_assert_int_eq(zkl_mutex_unlock(m), ZKL_EPERM);
  it_harness("resume");
  ck_assert(it_wait_until(session_connected, s, 8000));
  /* only the keeper child is left, whatever the frozen create did */
  ck_assert_msg(it_wait_children(s, root, 1, 8000),
                "a node of the timed-out call was left behind");
  ck_assert_int_eq(zkl_mutex_trylock(m), 0);
  ck_assert_int_eq(zkl_mutex_unlock(m), 0);
  zkl_mutex_destroy(m);
  zkl_mutex_destroy(other);
  zkl_session_close(s);
}
END_TEST

/* ---- the session reports its states ------------------------------------- */

struct states {
  pthread_mutex_t mu;
  int n;
  int seen[32];
};

static void on_state(zkl_session_t *s, zkl_session_state_t st, void *arg) {
  (void)s;
  struct states *t = arg;
  pthread_mutex_lock(&t->mu);
  if (t->n < 32) t->seen[t->n++] = (int)st;
  pthread_mutex_unlock(&t->mu);
}

struct state_arg {
  struct states *t;
  int want;
};

static int state_seen(void *arg) {
  struct state_arg *a = arg;
  pthread_mutex_lock(&a->t->mu);
  int found = a->t->n > 0 && a->t->seen[a->t->n - 1] == a->want;
  pthread_mutex_unlock(&a->t->mu);
  return found;
}

/* CONNECTED, then SUSPENDED and RECONNECTED across a server restart (the
 * session survives it), holds valid again; then LOST when it expires. */
START_TEST(session_states_reach_the_callback) {
  if (!standalone_harness()) return;
  char root[128];
  it_root(root, sizeof root, "states");
  struct states t = {.mu = PTHREAD_MUTEX_INITIALIZER};
  zkl_session_opts_t o;
  zkl_session_opts_init(&o);
  o.session_timeout_ms = 10000;
  o.on_state = on_state;
  o.state_arg = &t;
  zkl_session_t *s = NULL;
  ck_assert_int_eq(zkl_session_open(&s, it_hosts(), &o), 0);
  struct state_arg a = {&t, ZKL_SESSION_CONNECTED};
  ck_assert(it_wait_until(state_seen, &a, 2000));
  zkl_mutex_t *m = it_mutex(s, root);
  ck_assert_int_eq(zkl_mutex_lock(m), 0);

  it_harness("kill");
  a.want = ZKL_SESSION_SUSPENDED;
  ck_assert(it_wait_until(state_seen, &a, 5000));
  ck_assert_int_eq(zkl_mutex_holding(m), ZKL_ESUSPENDED);
  it_harness("restart");
  a.want = ZKL_SESSION_RECONNECTED;
  ck_assert_msg(it_wait_until(state_seen, &a, 8000), "no RECONNECTED");
  ck_assert_int_eq(zkl_session_state(s), ZKL_SESSION_CONNECTED);
  ck_assert_int_eq(zkl_mutex_holding(m), 1);

  int64_t old_id = zkl_session_id(s);
  it_expire_session(s);
  /* LOST, then a new session: CONNECTED again */
  a.want = ZKL_SESSION_CONNECTED;
  ck_assert_msg(it_wait_until(state_seen, &a, 8000) && t.n > 3,
                "no new session after LOST");
  ck_assert(zkl_session_id(s) != old_id);
  ck_assert_int_eq(zkl_mutex_holding(m), ZKL_ELOST); /* that hold is gone */
  pthread_mutex_lock(&t.mu);
  ck_assert_int_eq(t.seen[0], ZKL_SESSION_CONNECTED);
  ck_assert_int_eq(t.seen[1], ZKL_SESSION_SUSPENDED);
  ck_assert_int_eq(t.seen[2], ZKL_SESSION_RECONNECTED);
  ck_assert_int_eq(t.seen[t.n - 2], ZKL_SESSION_LOST);
  ck_assert_int_eq(t.seen[t.n - 1], ZKL_SESSION_CONNECTED);
  pthread_mutex_unlock(&t.mu);
  ck_assert_int_eq(zkl_mutex_unlock(m), ZKL_ELOST);
  ck_assert_int_eq(zkl_mutex_lock(m), 0); /* acquired again, new session */
  ck_assert_int_eq(zkl_mutex_holding(m), 1);
  ck_assert_int_eq(zkl_mutex_unlock(m), 0);
  zkl_mutex_destroy(m);
  zkl_session_close(s);
}
END_TEST

static int session_lost(void *arg) {
  return zkl_session_state(arg) == ZKL_SESSION_LOST;
}

/* The client declares LOST on its own once the server has been silent for
 * a whole session timeout -- here while the server is still frozen and so
 * could not have said anything. */
START_TEST(lost_declared_by_the_client_on_time) {
  if (!standalone_harness()) return;
  char root[128];
  it_root(root, sizeof root, "silent");
  zkl_session_t *s = it_session_timeout(3000);
  int timeout = zkl_session_timeout(s);
  zkl_mutex_t *m = it_mutex(s, root);
  ck_assert_int_eq(zkl_mutex_lock(m), 0);
  int64_t t0 = it_now_ms();
  it_harness("pause");
  ck_assert_msg(it_wait_until(session_lost, s, timeout + 3000),
                "not LOST %d ms after the server went silent", timeout + 3000);
  int64_t took = it_now_ms() - t0;
  /* last heard + timeout at most (plus scheduling slack on slow runs) */
  ck_assert_int_le(took, timeout + 1500);
  ck_assert_int_eq(zkl_mutex_holding(m), ZKL_ELOST);
  it_harness("resume");
  ck_assert_int_eq(zkl_mutex_unlock(m), ZKL_ELOST);
  zkl_mutex_destroy(m);
  zkl_session_close(s);
  zkl_session_t *o = it_session();
  ck_assert(it_wait_children(o, root, 0, 10000)); /* expired: node gone */
  zkl_session_close(o);
}
END_TEST

/* A holder process paused (SIGSTOP) past its session timeout loses the
 * lock to the next waiter; when it runs again it must learn LOST before it
 * would act on the lock again: it never sees "holding" after the other
 * took over. */
START_TEST(paused_holder_learns_lost_before_acting) {
  char root[128];
  it_root(root, sizeof root, "gcpause");
  struct shared_hold {
    int64_t last_ok;   /* last time holding() said 1 (atomic) */
    int first_after;   /* holding() after SIGCONT (atomic)    */
    int ready;         /* atomic */
  } *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
               MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ck_assert(sh != MAP_FAILED);
  memset(sh, 0, sizeof *sh);
  pid_t pid = fork(); /* before any session of ours */
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    zkl_session_opts_t o;
    zkl_session_opts_init(&o);
    o.session_timeout_ms = 2000;
    zkl_session_t *cs = NULL;
    zkl_mutex_t *cm = NULL;
    if (zkl_session_open(&cs, it_hosts(), &o) != 0 ||
        zkl_mutex_create(&cm, cs, root, NULL) != 0 || zkl_mutex_lock(cm) != 0)
      _exit(2);
    __atomic_store_n(&sh->ready, 1, __ATOMIC_SEQ_CST);
    for (;;) { /* the critical section: act only while holding */
      int64_t now = it_now_ms(); /* before asking: a pause after the
                                    answer is the fencing window */
      int h = zkl_mutex_holding(cm);
      if (h != 1) {
        __atomic_store_n(&sh->first_after, h, __ATOMIC_SEQ_CST);
        zkl_mutex_destroy(cm);
        zkl_session_close(cs);
        _exit(0);
      }
      __atomic_store_n(&sh->last_ok, now, __ATOMIC_SEQ_CST);
      it_sleep_ms(5);
    }
  }
  while (!__atomic_load_n(&sh->ready, __ATOMIC_SEQ_CST)) it_sleep_ms(5);
  zkl_session_t *s = it_session();
  zkl_mutex_t *m = it_mutex(s, root);
  kill(pid, SIGSTOP); /* the long GC pause */
  ck_assert_int_eq(zkl_mutex_timedlock(m, 20000), 0);
  int64_t taken = it_now_ms();
  kill(pid, SIGCONT);
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ck_assert_int_eq(__atomic_load_n(&sh->first_after, __ATOMIC_SEQ_CST),
                   ZKL_ELOST);
  ck_assert_msg(__atomic_load_n(&sh->last_ok, __ATOMIC_SEQ_CST) < taken,
                "the paused holder acted after the lock was taken over");
  ck_assert_int_eq(zkl_mutex_unlock(m), 0);
  zkl_mutex_destroy(m);
  zkl_session_close(s);
  munmap(sh, sizeof *sh);
}
END_TEST

Suite *faults_suite(void) {
  Suite *su = suite_create("faults");
  TCase *tc = it_tcase("nodes");
  tcase_add_test(tc, waiter_whose_node_is_deleted_requeues);
  tcase_add_test(tc, release_changes_then_deletes_and_leaves_the_root_alone);
  tcase_add_test(tc, data_change_is_a_release_only_from_zkl_holders);
  tcase_add_test(tc, release_without_write_permission_still_hands_over);
  suite_add_tcase(su, tc);
  tc = it_tcase("connection");
  tcase_add_test(tc, timeout_while_disconnected_leaves_no_node);
  tcase_add_test(tc, frozen_server_call_returns_at_its_deadline);
  tcase_add_test(tc, session_states_reach_the_callback);
  tcase_add_test(tc, lost_declared_by_the_client_on_time);
  tcase_add_test(tc, paused_holder_learns_lost_before_acting);
  suite_add_tcase(su, tc);
  return su;
}
