/* tests/integration/test-async.c - the asynchronous calls and the
 * session's completion queue, as an event loop uses them: submit, poll
 * the session's fd, dispatch.  Exactly one completion per accepted call,
 * never from inside the submitting call; FIFO service of many pending
 * acquisitions on one thread; cancel and destroy from a completion; the
 * state changes (SUSPENDED, LOST) through the same fd. */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"

/* ---- a tiny loop: poll the fd, dispatch --------------------------------- */

/* Runs the session's loop until *done is nonzero or timeout_ms passed;
 * whether *done came. */
static int loop_until(zkl_session_t *s, const int *done, int timeout_ms) {
  int64_t end = it_now_ms() + timeout_ms;
  int fd = zkl_session_fd(s);
  ck_assert_int_ge(fd, 0);
  while (!*done) {
    int64_t left = end - it_now_ms();
    if (left <= 0) return 0;
    struct pollfd p = {fd, POLLIN, 0};
    int n = poll(&p, 1, (int)left);
    ck_assert_int_ge(n, 0);
    if (n == 1) ck_assert_int_ge(zkl_session_dispatch(s), 0);
  }
  return 1;
}

/* One completion's report. */
typedef struct got {
  int n, rc, order; /* order: among every completion of the test */
  void *obj;
  uint64_t token;
  char detail[256];
} got_t;

static int completions; /* how many came (record()) */

static void record(void *obj, int rc, uint64_t token, void *arg) {
  got_t *g = arg;
  g->order = ++completions;
  g->n++;
  g->rc = rc;
  g->obj = obj;
  g->token = token;
  snprintf(g->detail, sizeof g->detail, "%s", zkl_last_error());
}

/* ---- basics ------------------------------------------------------------- */

/* A lock and an unlock through the loop; the hold is the object's. */
START_TEST(lock_unlock_async) {
  char root[128];
  it_root(root, sizeof root, "async-basic");
  zkl_session_t *s = it_session();
  zkl_mutex_t *m = it_mutex(s, root);
  got_t g = {0};
  ck_assert_int_eq(zkl_mutex_lock_async(m, -1, record, &g), 0);
  ck_assert_int_eq(g.n, 0); /* never from inside the call */
  ck_assert_int_eq(zkl_mutex_lock_async(m, -1, record, &g), ZKL_EBUSY);
  ck_assert(loop_until(s, &g.n, 10000));
  ck_assert_int_eq(g.rc, 0);
  ck_assert_ptr_eq(g.obj, m);
  ck_assert(g.token > 0);
  ck_assert_int_eq(zkl_mutex_holding(m), 1);
  uint64_t token = 0;
  ck_assert_int_eq(zkl_mutex_token(m, &token), 0);
  ck_assert(token == g.token);
  char node[512];
  ck_assert_int_eq(zkl_mutex_node(m, node, sizeof node), 0);
  ck_assert_int_eq(it_children(s, root, NULL), 1);
  /* the object's hold: blocking calls treat it as another thread's */
  ck_assert_int_eq(zkl_mutex_unlock(m), ZKL_EPERM);
  ck_assert_int_eq(zkl_mutex_trylock(m), ZKL_EBUSY);
  ck_assert_int_eq(zkl_mutex_lock_async(m, -1, record, &g), ZKL_EBUSY);
  got_t u = {0};
  ck_assert_int_eq(zkl_mutex_unlock_async(m, record, &u), 0);
  ck_assert_int_eq(zkl_mutex_unlock_async(m, record, &u), ZKL_EPERM);
  ck_assert(loop_until(s, &u.n, 10000));
  ck_assert_int_eq(u.rc, 0);
  ck_assert_int_eq(u.n, 1);
  ck_assert_int_eq(g.n, 1); /* exactly one each */
  ck_assert_int_eq(zkl_mutex_holding(m), 0);
  ck_assert_int_eq(it_children(s, root, NULL), 0);
  /* the blocking form works again on the object */
  ck_assert_int_eq(zkl_mutex_lock(m), 0);
  ck_assert_int_eq(zkl_mutex_unlock_async(m, record, &u), ZKL_EPERM);
  ck_assert_int_eq(zkl_mutex_lock_async(m, -1, record, &g), ZKL_EBUSY);
  ck_assert_int_eq(zkl_mutex_unlock(m), 0);
  ck_assert_int_eq(zkl_session_dispatch(s), 0); /* nothing more came */
  zkl_mutex_destroy(m);
  zkl_session_close(s);
}
END_TEST

START_TEST(bad_input) {
  char root[128];
  it_root(root, sizeof root, "async-bad");
  zkl_session_t *s = it_session();
  zkl_mutex_t *m = it_mutex(s, root);
  got_t g = {0};
  ck_assert_int_eq(zkl_mutex_lock_async(NULL, -1, record, &g), ZKL_EINVAL);
  ck_assert_int_eq(zkl_mutex_lock_async(m, -1, NULL, &g), ZKL_EINVAL);
  ck_assert(strstr(zkl_last_error(), "callback") != NULL);
  ck_assert_int_eq(zkl_mutex_unlock_async(m, record, &g), ZKL_EPERM);
  ck_assert_int_eq(zkl_mutex_unlock_async(NULL, record, &g), ZKL_EINVAL);
  ck_assert_int_eq(zkl_rwlock_rdlock_async(NULL, -1, record, &g),
                   ZKL_EINVAL);
  ck_assert_int_eq(zkl_session_fd(NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_session_dispatch(NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_session_dispatch(s), 0);
  ck_assert_int_eq(g.n, 0);
  zkl_mutex_destroy(m);
  zkl_session_close(s);
}
END_TEST

/* A try and a timed acquisition of a lock someone else holds. */
START_TEST(try_and_timeout) {
  char root[128];
  it_root(root, sizeof root, "async-try");
  zkl_session_t *s = it_session(), *h = it_session();
  zkl_mutex_t *m = it_mutex(s, root), *hm = it_mutex(h, root);
  ck_assert_int_eq(zkl_mutex_lock(hm), 0);
  got_t t = {0}, w = {0};
  ck_assert_int_eq(zkl_mutex_lock_async(m, 0, record, &t), 0);
  ck_assert(loop_until(s, &t.n, 10000));
  ck_assert_int_eq(t.rc, ZKL_EBUSY);
  int64_t t0 = it_now_ms();
  ck_assert_int_eq(zkl_mutex_lock_async(m, 300, record, &w), 0);
  ck_assert(loop_until(s, &w.n, 10000));
  int64_t took = it_now_ms() - t0;
  ck_assert_int_eq(w.rc, ZKL_ETIMEDOUT);
  ck_assert_msg(took >= 290 && took < 2000, "timed out after %lld ms",
                (long long)took);
  ck_assert_int_eq(it_children(h, root, NULL), 1); /* the holder's only */
  ck_assert_int_eq(zkl_mutex_holding(m), 0);
  ck_assert_int_eq(zkl_mutex_unlock(hm), 0);
  zkl_mutex_destroy(m);
  zkl_mutex_destroy(hm);
  zkl_session_close(s);
  zkl_session_close(h);
}
END_TEST

/* ---- many pending on one loop: FIFO ------------------------------------ */

#define PENDING 1000

typedef struct fifo {
  zkl_session_t *s;
  zkl_mutex_t *m[PENDING];
  int order[PENDING];
  int granted, released, bad;
  uint64_t last_token;
} fifo_t;

static void fifo_released(void *obj, int rc, uint64_t token, void *arg) {
  (void)obj;
  (void)token;
  fifo_t *f = arg;
  if (rc != 0) f->bad++;
  f->released++;
}

static void fifo_granted(void *obj, int rc, uint64_t token, void *arg) {
  fifo_t *f = arg;
  int i = 0;
  while (i < PENDING && f->m[i] != obj) i++;
  if (rc != 0 || i == PENDING || token <= f->last_token) f->bad++;
  f->last_token = token;
  f->order[f->granted++] = i;
  /* hand over from the completion itself */
  if (zkl_mutex_unlock_async(obj, fifo_released, f) != 0) f->bad++;
}

/* 1,000 acquisitions pending at once on one thread (no thread each), served
 * in the order they were made, each with a larger token. */
START_TEST(thousand_pending_fifo) {
  char root[128];
  it_root(root, sizeof root, "async-fifo");
  fifo_t *f = calloc(1, sizeof *f);
  f->s = it_session();
  zkl_session_t *h = it_session();
  zkl_mutex_t *hm = it_mutex(h, root);
  ck_assert_int_eq(zkl_mutex_lock(hm), 0);
  for (int i = 0; i < PENDING; i++) {
    f->m[i] = it_mutex(f->s, root);
    ck_assert_int_eq(zkl_mutex_lock_async(f->m[i], -1, fifo_granted, f), 0);
  }
  /* all queued behind the holder, and none granted */
  ck_assert(it_wait_children(h, root, PENDING + 1, 30000));
  ck_assert_int_eq(zkl_session_dispatch(f->s), 0);
  ck_assert_int_eq(zkl_mutex_unlock(hm), 0);
  int64_t end = it_now_ms() + 50000;
  while (f->released < PENDING && it_now_ms() < end) {
    int all = 0;
    loop_until(f->s, &all, 100);
  }
  ck_assert_int_eq(f->bad, 0);
  ck_assert_int_eq(f->granted, PENDING);
  ck_assert_int_eq(f->released, PENDING);
  for (int i = 0; i < PENDING; i++)
    ck_assert_msg(f->order[i] == i, "grant %d went to %d", i, f->order[i]);
  ck_assert_int_eq(it_children(h, root, NULL), 0);
  for (int i = 0; i < PENDING; i++) zkl_mutex_destroy(f->m[i]);
  zkl_mutex_destroy(hm);
  zkl_session_close(f->s);
  zkl_session_close(h);
  free(f);
}
END_TEST

/* More async acquisitions than a session sends creates for at once (512):
 * the later ones wait their turn to send, and a deadline or a cancel still
 * ends them there, with no node; destroy ends the others. */
#define ADMIT_N 1200

START_TEST(waiting_to_send_the_create) {
  char root[128];
  it_root(root, sizeof root, "async-admit");
  zkl_session_t *s = it_session(), *h = it_session();
  zkl_mutex_t *hm = it_mutex(h, root);
  ck_assert_int_eq(zkl_mutex_lock(hm), 0);
  zkl_mutex_t **m = calloc(ADMIT_N, sizeof *m);
  got_t *g = calloc(ADMIT_N, sizeof *g);
  for (int i = 0; i < ADMIT_N; i++) {
    m[i] = it_mutex(s, root);
    ck_assert_int_eq(zkl_mutex_lock_async(m[i], i == ADMIT_N - 2 ? 1 : -1,
                                          record, &g[i]),
                     0);
  }
  ck_assert_int_eq(zkl_mutex_cancel(m[ADMIT_N - 1]), 0);
  ck_assert(loop_until(s, &g[ADMIT_N - 1].n, 20000));
  ck_assert(loop_until(s, &g[ADMIT_N - 2].n, 20000));
  ck_assert_int_eq(g[ADMIT_N - 2].rc, ZKL_ETIMEDOUT);
  ck_assert_int_eq(g[ADMIT_N - 1].rc, ZKL_ECANCELED);
  /* every other one queued behind the holder (thousand_pending_fifo shows
   * the order across the batches), none granted */
  ck_assert(it_wait_children(h, root, ADMIT_N - 2 + 1, 30000));
  for (int i = 0; i < ADMIT_N - 2; i++) ck_assert_int_eq(g[i].n, 0);
  for (int i = 0; i < ADMIT_N; i++) zkl_mutex_destroy(m[i]);
  ck_assert_int_eq(it_children(h, root, NULL), 1); /* the holder only */
  ck_assert_int_eq(zkl_mutex_unlock(hm), 0);
  ck_assert_int_eq(it_children(h, root, NULL), 0);
  zkl_mutex_destroy(hm);
  zkl_session_close(s);
  zkl_session_close(h);
  free(m);
  free(g);
}
END_TEST

/* ---- cancel and destroy from a completion ------------------------------ */

typedef struct chain {
  zkl_mutex_t *pending, *other;
  got_t pend, other_got;
  int destroyed;
} chain_t;

static void cancel_in_cb(void *obj, int rc, uint64_t token, void *arg) {
  chain_t *c = arg;
  record(obj, rc, token, &c->other_got);
  ck_assert_int_eq(zkl_mutex_cancel(c->pending), 0);
}

static void destroy_in_cb(void *obj, int rc, uint64_t token, void *arg) {
  chain_t *c = arg;
  record(obj, rc, token, &c->other_got);
  zkl_mutex_destroy(c->pending);   /* another object, pending */
  zkl_mutex_destroy(obj);          /* its own object */
  c->destroyed = 1;
}

START_TEST(cancel_and_destroy_from_completion) {
  char root[128];
  it_root(root, sizeof root, "async-cancel");
  zkl_session_t *s = it_session(), *h = it_session();
  zkl_mutex_t *hm = it_mutex(h, root);
  ck_assert_int_eq(zkl_mutex_lock(hm), 0);
  chain_t c = {0};
  c.pending = it_mutex(s, root);
  c.other = it_mutex(s, root);
  /* cancel: a try's completion cancels the pending acquisition */
  ck_assert_int_eq(zkl_mutex_lock_async(c.pending, -1, record, &c.pend), 0);
  ck_assert(it_wait_children(h, root, 2, 10000));
  ck_assert_int_eq(zkl_mutex_lock_async(c.other, 0, cancel_in_cb, &c), 0);
  ck_assert(loop_until(s, &c.pend.n, 10000));
  ck_assert_int_eq(c.other_got.rc, ZKL_EBUSY);
  ck_assert_int_eq(c.pend.rc, ZKL_ECANCELED);
  ck_assert_ptr_eq(c.pend.obj, c.pending);
  ck_assert(it_wait_children(h, root, 1, 10000)); /* its node went */
  /* destroy: a completion destroys a pending object and its own */
  memset(&c.pend, 0, sizeof c.pend);
  memset(&c.other_got, 0, sizeof c.other_got);
  void *was = c.pending;
  ck_assert_int_eq(zkl_mutex_lock_async(c.pending, -1, record, &c.pend), 0);
  ck_assert(it_wait_children(h, root, 2, 10000));
  ck_assert_int_eq(zkl_mutex_lock_async(c.other, 0, destroy_in_cb, &c), 0);
  ck_assert(loop_until(s, &c.pend.n, 10000));
  ck_assert(c.destroyed);
  ck_assert_int_eq(c.pend.rc, ZKL_ECANCELED);
  ck_assert_ptr_eq(c.pend.obj, was); /* the value only */
  ck_assert_int_eq(c.pend.n, 1);
  ck_assert_int_eq(zkl_session_dispatch(s), 0);
  ck_assert(it_wait_children(h, root, 1, 10000));
  ck_assert_int_eq(zkl_mutex_unlock(hm), 0);
  ck_assert_int_eq(it_children(h, root, NULL), 0);
  zkl_mutex_destroy(hm);
  zkl_session_close(s);
  zkl_session_close(h);
}
END_TEST

/* A grant whose completion was not dispatched yet when the object is
 * destroyed comes as ZKL_ECANCELED, and its node is released. */
START_TEST(destroy_before_dispatch) {
  char root[128];
  it_root(root, sizeof root, "async-undispatched");
  zkl_session_t *s = it_session();
  zkl_mutex_t *m = it_mutex(s, root);
  got_t g = {0};
  ck_assert_int_eq(zkl_mutex_lock_async(m, -1, record, &g), 0);
  ck_assert(it_wait_children(s, root, 1, 10000));
  struct pollfd p = {zkl_session_fd(s), POLLIN, 0};
  ck_assert_int_eq(poll(&p, 1, 10000), 1); /* the grant waits */
  zkl_mutex_destroy(m);
  ck_assert_int_eq(it_children(s, root, NULL), 0);
  ck_assert_int_eq(zkl_session_dispatch(s), 1);
  ck_assert_int_eq(g.n, 1);
  ck_assert_int_eq(g.rc, ZKL_ECANCELED);
  zkl_session_close(s);
}
END_TEST

/* Two grants wait in one batch; the first completion destroys the other
 * object: its grant comes as ZKL_ECANCELED, its node released.  Which of
 * the two is granted (and dispatched) first is the engine's business (a
 * slow run, valgrind, may grant b first): the first to come destroys the
 * other. */
typedef struct pair {
  zkl_mutex_t *a, *b;
  got_t ga, gb;
  zkl_mutex_t *first; /* the object whose completion came first */
} pair_t;

static void pair_cb(void *obj, int rc, uint64_t token, void *arg) {
  pair_t *p = arg;
  record(obj, rc, token, obj == (void *)p->a ? &p->ga : &p->gb);
  if (p->first != NULL) return;
  p->first = obj;
  zkl_mutex_destroy(obj == (void *)p->a ? p->b : p->a);
}

START_TEST(destroy_other_in_same_batch) {
  char ra[128], rb[128];
  it_root(ra, sizeof ra, "async-batch-a");
  it_root(rb, sizeof rb, "async-batch-b");
  zkl_session_t *s = it_session();
  pair_t p = {0};
  p.a = it_mutex(s, ra);
  p.b = it_mutex(s, rb);
  ck_assert_int_eq(zkl_mutex_lock_async(p.a, -1, pair_cb, &p), 0);
  ck_assert_int_eq(zkl_mutex_lock_async(p.b, -1, pair_cb, &p), 0);
  ck_assert(it_wait_children(s, ra, 1, 10000));
  ck_assert(it_wait_children(s, rb, 1, 10000));
  it_sleep_ms(200); /* both completions queued (on a run not too slow) */
  int done = 0;
  for (int64_t end = it_now_ms() + 10000; it_now_ms() < end && !done;) {
    ck_assert_int_ge(zkl_session_dispatch(s), 0);
    done = p.ga.n == 1 && p.gb.n == 1;
    if (!done) it_sleep_ms(5);
  }
  ck_assert(done);
  int a_first = p.first == p.a;
  const got_t *won = a_first ? &p.ga : &p.gb, *lost = a_first ? &p.gb : &p.ga;
  ck_assert_int_eq(won->rc, 0);
  ck_assert_int_eq(lost->rc, ZKL_ECANCELED);
  ck_assert_int_eq(lost->token, 0);
  ck_assert_int_eq(it_children(s, a_first ? rb : ra, NULL), 0);
  zkl_mutex_t *kept = a_first ? p.a : p.b;
  got_t u = {0};
  ck_assert_int_eq(zkl_mutex_unlock_async(kept, record, &u), 0);
  ck_assert(loop_until(s, &u.n, 10000));
  zkl_mutex_destroy(kept);
  zkl_session_close(s);
}
END_TEST

/* ---- the election's callbacks on the loop --------------------------------- */

typedef struct elog {
  char what[16];
  uint64_t token[16];
  int n;
  pthread_t thread;
  int wrong_thread;
} elog_t;

static void el_note(elog_t *l, char what, uint64_t token) {
  if (!pthread_equal(pthread_self(), l->thread)) l->wrong_thread++;
  if (l->n < 16) {
    l->what[l->n] = what;
    l->token[l->n++] = token;
  }
}
static void el_elected(zkl_election_t *e, uint64_t token, void *arg) {
  (void)e;
  el_note(arg, 'E', token);
}
static void el_revoked(zkl_election_t *e, zkl_election_reason_t why,
                       void *arg) {
  (void)e;
  el_note(arg, 'R', (uint64_t)why);
}
static void el_leader(zkl_election_t *e, const void *id, size_t len,
                      uint64_t token, void *arg) {
  (void)e;
  (void)id;
  (void)len;
  el_note(arg, 'L', token);
}

/* A candidate and an observer whose callbacks all run on the loop's
 * thread, through the session's fd. */
START_TEST(election_on_the_loop) {
  char root[128];
  it_root(root, sizeof root, "async-elect");
  zkl_session_t *s = it_session();
  elog_t cl = {.thread = pthread_self()}, ol = {.thread = pthread_self()};
  zkl_election_opts_t o;
  zkl_election_opts_init(&o);
  o.on_elected = el_elected;
  o.on_revoked = el_revoked;
  o.arg = &cl;
  o.callbacks_in_dispatch = 1;
  zkl_election_t *cand, *obs;
  ck_assert_int_eq(zkl_election_create(&cand, s, root, "me", 2, &o), 0);
  zkl_election_opts_init(&o);
  o.on_leader = el_leader;
  o.arg = &ol;
  o.observer = 1;
  o.callbacks_in_dispatch = 1;
  ck_assert_int_eq(zkl_election_create(&obs, s, root, NULL, 0, &o), 0);
  ck_assert_int_eq(zkl_election_start(obs), 0);
  ck_assert_int_eq(zkl_election_start(cand), 0);
  ck_assert_int_eq(zkl_election_await(cand, 10000), 0);
  ck_assert_int_eq(cl.n, 0); /* nothing runs off the loop */
  int one = 0;
  int64_t end = it_now_ms() + 10000;
  while ((cl.n < 1 || ol.n < 1 || ol.what[ol.n - 1] != 'L' ||
          ol.token[ol.n - 1] == 0) && it_now_ms() < end)
    loop_until(s, &one, 100);
  ck_assert_int_eq(cl.n, 1);
  ck_assert_int_eq(cl.what[0], 'E');
  uint64_t token = 0;
  ck_assert_int_eq(zkl_election_token(cand, &token), 0);
  ck_assert(cl.token[0] == token);
  ck_assert(ol.token[ol.n - 1] == token); /* the observer saw it lead */
  ck_assert_int_eq(zkl_election_resign(cand), 0);
  end = it_now_ms() + 10000;
  while (cl.n < 2 && it_now_ms() < end) loop_until(s, &one, 100);
  ck_assert_int_eq(cl.what[1], 'R');
  ck_assert_int_eq(cl.token[1], ZKL_REASON_RESIGNED);
  ck_assert_int_eq(cl.wrong_thread + ol.wrong_thread, 0);
  zkl_election_destroy(cand);
  zkl_election_destroy(obs);
  zkl_session_dispatch(s); /* whatever was queued for them: never run */
  ck_assert_int_eq(cl.n, 2);
  zkl_session_close(s);
}
END_TEST

/* ---- the read/write lock -------------------------------------------------- */

START_TEST(rwlock_async) {
  char root[128];
  it_root(root, sizeof root, "async-rw");
  zkl_session_t *s = it_session();
  zkl_rwlock_t *r1, *r2, *w;
  ck_assert_int_eq(zkl_rwlock_create(&r1, s, root, NULL), 0);
  ck_assert_int_eq(zkl_rwlock_create(&r2, s, root, NULL), 0);
  ck_assert_int_eq(zkl_rwlock_create(&w, s, root, NULL), 0);
  got_t a = {0}, b = {0}, c = {0}, u1 = {0}, u2 = {0}, u3 = {0};
  ck_assert_int_eq(zkl_rwlock_rdlock_async(r1, -1, record, &a), 0);
  ck_assert_int_eq(zkl_rwlock_rdlock_async(r2, -1, record, &b), 0);
  ck_assert(loop_until(s, &b.n, 10000));
  ck_assert(loop_until(s, &a.n, 10000));
  ck_assert_int_eq(a.rc, 0);
  ck_assert_int_eq(b.rc, 0); /* readers share */
  ck_assert_int_eq(zkl_rwlock_holding(r1), ZKL_RWLOCK_READ);
  ck_assert_int_eq(zkl_rwlock_wrlock_async(w, -1, record, &c), 0);
  ck_assert(it_wait_children(s, root, 3, 10000));
  ck_assert_int_eq(zkl_session_dispatch(s), 0); /* the writer waits */
  ck_assert_int_eq(zkl_rwlock_unlock_async(r1, record, &u1), 0);
  ck_assert(loop_until(s, &u1.n, 10000));
  ck_assert_int_eq(c.n, 0);
  ck_assert_int_eq(zkl_rwlock_unlock_async(r2, record, &u2), 0);
  ck_assert(loop_until(s, &c.n, 10000));
  ck_assert_int_eq(c.rc, 0);
  ck_assert(c.token > a.token && c.token > b.token);
  ck_assert_int_eq(zkl_rwlock_holding(w), ZKL_RWLOCK_WRITE);
  char node[512];
  ck_assert_int_eq(zkl_rwlock_node(w, node, sizeof node), 0);
  ck_assert(strstr(node, "__WRIT__") != NULL);
  ck_assert_int_eq(zkl_rwlock_unlock_async(w, record, &u3), 0);
  ck_assert(loop_until(s, &u3.n, 10000));
  ck_assert_int_eq(u3.rc, 0);
  ck_assert_int_eq(it_children(s, root, NULL), 0);
  zkl_rwlock_destroy(r1);
  zkl_rwlock_destroy(r2);
  zkl_rwlock_destroy(w);
  zkl_session_close(s);
}
END_TEST

/* ---- "your hold is gone" ------------------------------------------------------ */

/* Deletes node from another session (an operator, a cleanup script). */
static void delete_behind(const char *node) {
  zkl_session_t *o = it_session();
  ck_assert_int_eq(zoo_delete(zkl_session_zhandle(o), node, -1), ZOK);
  zkl_session_close(o);
}

/* The node of an async hold deleted by someone else: the watch says
 * ZKL_ELOST with the hold's token; a change of the node's data does not;
 * the object counts as holding until its unlock, which says ZKL_ELOST. */
START_TEST(hold_gone_when_node_deleted) {
  char root[128];
  it_root(root, sizeof root, "async-gone");
  zkl_session_t *s = it_session();
  zkl_mutex_t *m = it_mutex(s, root);
  got_t g = {0}, w = {0}, u = {0};
  ck_assert_int_eq(zkl_mutex_watch_async(m, record, &w), ZKL_EPERM);
  ck_assert_int_eq(zkl_mutex_lock_async(m, -1, record, &g), 0);
  ck_assert(loop_until(s, &g.n, 10000));
  ck_assert_int_eq(g.rc, 0);
  ck_assert_int_eq(zkl_mutex_watch_async(NULL, record, &w), ZKL_EINVAL);
  ck_assert_int_eq(zkl_mutex_watch_async(m, NULL, &w), ZKL_EINVAL);
  ck_assert_int_eq(zkl_mutex_watch_async(m, record, &w), 0);
  ck_assert_int_eq(zkl_mutex_watch_async(m, record, &w), ZKL_EBUSY);
  char node[512];
  ck_assert_int_eq(zkl_mutex_node(m, node, sizeof node), 0);
  /* its data changed: not gone */
  ck_assert_int_eq(
      zoo_set(zkl_session_zhandle(s), node, "x", 1, -1), ZOK);
  int never = 0;
  loop_until(s, &never, 500);
  ck_assert_int_eq(w.n, 0);
  delete_behind(node);
  ck_assert_msg(loop_until(s, &w.n, 10000), "the watch never came");
  ck_assert_int_eq(w.rc, ZKL_ELOST);
  ck_assert_ptr_eq(w.obj, m);
  ck_assert(w.token == g.token);
  ck_assert_msg(strstr(w.detail, "deleted") != NULL, "detail: %s", w.detail);
  ck_assert_int_eq(zkl_mutex_holding(m), ZKL_ELOST);
  ck_assert_int_eq(zkl_mutex_unlock_async(m, record, &u), 0);
  ck_assert(loop_until(s, &u.n, 10000));
  ck_assert_int_eq(u.rc, ZKL_ELOST);
  ck_assert_int_eq(w.n, 1);
  /* a new hold is good again, and watched afresh */
  got_t g2 = {0}, w2 = {0}, u2 = {0};
  ck_assert_int_eq(zkl_mutex_lock_async(m, -1, record, &g2), 0);
  ck_assert(loop_until(s, &g2.n, 10000));
  ck_assert_int_eq(zkl_mutex_holding(m), 1);
  ck_assert_int_eq(zkl_mutex_watch_async(m, record, &w2), 0);
  ck_assert_int_eq(zkl_mutex_unlock_async(m, record, &u2), 0);
  ck_assert(loop_until(s, &u2.n, 10000));
  ck_assert_int_eq(w2.n, 1);
  ck_assert_int_eq(w2.rc, 0); /* the object let go first */
  ck_assert_int_lt(w2.order, u2.order); /* and told so first */
  ck_assert_int_eq(u2.rc, 0);
  ck_assert_int_eq(it_children(s, root, NULL), 0);
  zkl_mutex_destroy(m);
  zkl_session_close(s);
}
END_TEST

/* The same for a read/write lock's read and write holds; a destroy ends a
 * pending watch with ZKL_ECANCELED. */
START_TEST(rwlock_hold_gone) {
  char root[128];
  it_root(root, sizeof root, "async-rwgone");
  zkl_session_t *s = it_session();
  zkl_rwlock_t *r, *w;
  ck_assert_int_eq(zkl_rwlock_create(&r, s, root, NULL), 0);
  ck_assert_int_eq(zkl_rwlock_create(&w, s, root, NULL), 0);
  got_t gr = {0}, wr = {0}, ur = {0}, gw = {0}, ww = {0};
  ck_assert_int_eq(zkl_rwlock_rdlock_async(r, -1, record, &gr), 0);
  ck_assert(loop_until(s, &gr.n, 10000));
  ck_assert_int_eq(gr.rc, 0);
  ck_assert_int_eq(zkl_rwlock_watch_async(r, record, &wr), 0);
  char node[512];
  ck_assert_int_eq(zkl_rwlock_node(r, node, sizeof node), 0);
  ck_assert_int_eq(zkl_rwlock_wrlock_async(w, -1, record, &gw), 0);
  ck_assert(it_wait_children(s, root, 2, 10000));
  delete_behind(node); /* the reader's node goes: the writer gets in */
  ck_assert(loop_until(s, &wr.n, 10000));
  ck_assert_int_eq(wr.rc, ZKL_ELOST);
  ck_assert(wr.token == gr.token);
  ck_assert(loop_until(s, &gw.n, 10000));
  ck_assert_int_eq(gw.rc, 0);
  ck_assert_int_eq(zkl_rwlock_watch_async(w, record, &ww), 0);
  ck_assert_int_eq(zkl_rwlock_unlock_async(r, record, &ur), 0);
  ck_assert(loop_until(s, &ur.n, 10000));
  ck_assert_int_eq(ur.rc, ZKL_ELOST);
  zkl_rwlock_destroy(w); /* releases the write hold; the watch ends */
  ck_assert_int_eq(ww.n, 0);
  ck_assert_int_ge(zkl_session_dispatch(s), 1);
  ck_assert_int_eq(ww.n, 1);
  ck_assert_int_eq(ww.rc, ZKL_ECANCELED);
  ck_assert_int_eq(it_children(s, root, NULL), 0);
  zkl_rwlock_destroy(r);
  zkl_session_close(s);
}
END_TEST

/* ---- the state changes through the fd -------------------------------------- */

typedef struct states {
  int seen[32];
  int n;
  pthread_t thread;
  int wrong_thread;
} states_t;

static void on_state(zkl_session_t *s, zkl_session_state_t st, void *arg) {
  (void)s;
  states_t *t = arg;
  if (!pthread_equal(pthread_self(), t->thread)) t->wrong_thread++;
  if (t->n < 32) t->seen[t->n++] = (int)st;
}

/* Loops until the state `want` was reported (a dispatch-driven wait). */
static int loop_until_state(zkl_session_t *s, states_t *t, int want,
                            int timeout_ms) {
  int64_t end = it_now_ms() + timeout_ms;
  for (;;) {
    for (int i = 0; i < t->n; i++)
      if (t->seen[i] == want) return 1;
    int64_t left = end - it_now_ms();
    if (left <= 0) return 0;
    int never = 0;
    loop_until(s, &never, left < 100 ? (int)left : 100);
  }
}

/* A loop program holding a lock learns that its hold is in doubt
 * (SUSPENDED) and then gone (LOST) through the fd, on its own thread. */
START_TEST(states_through_the_fd) {
  char root[128];
  it_root(root, sizeof root, "async-states");
  it_proxy_t *x = it_proxy_start();
  char hosts[64];
  snprintf(hosts, sizeof hosts, "127.0.0.1:%d", it_proxy_port(x));
  states_t t = {.n = 0, .thread = pthread_self()};
  zkl_session_opts_t o;
  zkl_session_opts_init(&o);
  o.session_timeout_ms = 4000;
  o.on_state = on_state;
  o.state_arg = &t;
  o.on_state_in_dispatch = 1;
  o.reestablish = 0;
  zkl_session_t *s = NULL;
  ck_assert_int_eq(zkl_session_open(&s, hosts, &o), 0);
  zkl_mutex_t *m = it_mutex(s, root);
  got_t g = {0};
  ck_assert_int_eq(zkl_mutex_lock_async(m, -1, record, &g), 0);
  ck_assert(loop_until(s, &g.n, 10000));
  ck_assert_int_eq(g.rc, 0);
  ck_assert_int_eq(t.seen[0], ZKL_SESSION_CONNECTED);
  got_t w = {0};
  ck_assert_int_eq(zkl_mutex_watch_async(m, record, &w), 0);
  it_proxy_blackhole(x, 1);
  ck_assert_msg(loop_until_state(s, &t, ZKL_SESSION_SUSPENDED, 8000),
                "SUSPENDED never came through the fd");
  ck_assert_int_eq(zkl_mutex_holding(m), ZKL_ESUSPENDED);
  ck_assert_int_eq(w.n, 0); /* in doubt is not gone */
  ck_assert_msg(loop_until_state(s, &t, ZKL_SESSION_LOST, 8000),
                "LOST never came through the fd");
  ck_assert_msg(loop_until(s, &w.n, 8000), "the hold's watch never came");
  ck_assert_int_eq(w.rc, ZKL_ELOST);
  ck_assert_int_eq(zkl_mutex_holding(m), ZKL_ELOST);
  ck_assert_int_eq(t.wrong_thread, 0);
  got_t u = {0};
  ck_assert_int_eq(zkl_mutex_unlock_async(m, record, &u), 0);
  ck_assert(loop_until(s, &u.n, 10000));
  ck_assert_int_eq(u.rc, ZKL_ELOST);
  ck_assert_int_eq(zkl_mutex_holding(m), 0);
  zkl_mutex_destroy(m);
  zkl_session_close(s);
  it_proxy_stop(x);
}
END_TEST

Suite *async_suite(void) {
  Suite *s = suite_create("async");
  TCase *tc = it_tcase("async");
  tcase_add_test(tc, lock_unlock_async);
  tcase_add_test(tc, bad_input);
  tcase_add_test(tc, try_and_timeout);
  tcase_add_test(tc, thousand_pending_fifo);
  tcase_add_test(tc, waiting_to_send_the_create);
  tcase_add_test(tc, cancel_and_destroy_from_completion);
  tcase_add_test(tc, destroy_before_dispatch);
  tcase_add_test(tc, destroy_other_in_same_batch);
  tcase_add_test(tc, election_on_the_loop);
  tcase_add_test(tc, rwlock_async);
  tcase_add_test(tc, states_through_the_fd);
  tcase_add_test(tc, hold_gone_when_node_deleted);
  tcase_add_test(tc, rwlock_hold_gone);
  suite_add_tcase(s, tc);
  return s;
}
