/* tests/integration/test-election.c - leader election on a real server:
 * one leader at a time (threads and processes), takeover after resign and
 * after SIGKILL, callbacks in order and exactly once, observers. */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"

/* A log of callbacks, in the order they ran. */
#define LOG_MAX 64
struct cb_log {
  pthread_mutex_t mu;
  int n;
  char what[LOG_MAX];  /* 'E' elected, 'R' revoked, 'L' leader change */
  int who[LOG_MAX];    /* which candidate (arg index)                  */
  int reason[LOG_MAX];
  uint64_t token[LOG_MAX];
  char id[LOG_MAX][32];
};

struct cand {
  struct cb_log *log;
  int index;
  zkl_election_t *e;
  int resign_in_callback;
  int destroy_in_callback;
  int slow_suspended_ms; /* on_revoked(SUSPENDED) takes this long */
};

static void log_add(struct cb_log *l, char what, int who, int reason,
                    uint64_t token, const void *id, size_t len) {
  pthread_mutex_lock(&l->mu);
  if (l->n < LOG_MAX) {
    l->what[l->n] = what;
    l->who[l->n] = who;
    l->reason[l->n] = reason;
    l->token[l->n] = token;
    snprintf(l->id[l->n], sizeof l->id[l->n], "%.*s", (int)len,
             id != NULL ? (const char *)id : "");
    l->n++;
  }
  pthread_mutex_unlock(&l->mu);
}

static void on_elected(zkl_election_t *e, uint64_t token, void *arg) {
  struct cand *c = arg;
  log_add(c->log, 'E', c->index, 0, token, NULL, 0);
  /* callbacks may call back into the library (the answer may already be
   * 0 if the test resigns meanwhile) */
  ck_assert_int_ge(zkl_election_is_leader(e), 0);
  ck_assert_int_eq(zkl_election_await(e, 0), ZKL_EDEADLK); /* own thread */
  if (c->resign_in_callback) zkl_election_resign(e);
  if (c->destroy_in_callback) zkl_election_destroy(e);
}

static void on_revoked(zkl_election_t *e, zkl_election_reason_t why,
                       void *arg) {
  (void)e;
  struct cand *c = arg;
  log_add(c->log, 'R', c->index, (int)why, 0, NULL, 0);
  if (why == ZKL_REASON_SUSPENDED && c->slow_suspended_ms > 0) {
    it_sleep_ms(c->slow_suspended_ms);
    c->slow_suspended_ms = 0; /* only the first time */
  }
}

static void on_leader(zkl_election_t *e, const void *id, size_t len,
                      uint64_t token, void *arg) {
  (void)e;
  struct cand *c = arg;
  log_add(c->log, 'L', c->index, 0, token, id, len);
}

static int log_count(struct cb_log *l) {
  pthread_mutex_lock(&l->mu);
  int n = l->n;
  pthread_mutex_unlock(&l->mu);
  return n;
}

struct log_arg {
  struct cb_log *log;
  int want;
};

static int log_has(void *arg) {
  struct log_arg *a = arg;
  return log_count(a->log) >= a->want;
}

static zkl_election_t *candidate(zkl_session_t *s, const char *path,
                                 struct cand *c, const char *id) {
  zkl_election_opts_t o;
  zkl_election_opts_init(&o);
  o.on_elected = on_elected;
  o.on_revoked = on_revoked;
  o.arg = c;
  zkl_election_t *e = NULL;
  int rc = zkl_election_create(&e, s, path, id, strlen(id), &o);
  ck_assert_msg(rc == 0, "election_create: %s", zkl_strerror(rc));
  c->e = e;
  return e;
}

START_TEST(single_candidate_leads_with_token_and_id) {
  char root[128], buf[64];
  it_root(root, sizeof root, "elect1");
  zkl_session_t *s = it_session();
  struct cb_log log = {.mu = PTHREAD_MUTEX_INITIALIZER};
  struct cand c = {&log, 0, NULL, 0, 0, 0};
  zkl_election_t *e = candidate(s, root, &c, "alpha");
  ck_assert_int_eq(zkl_election_await(e, 100), ZKL_ECANCELED); /* not started */
  ck_assert_int_eq(zkl_election_is_leader(e), 0);
  char first[1024];
  ck_assert_int_eq(zkl_election_node(e, first, sizeof first), ZKL_EPERM);
  size_t len = sizeof buf;
  ck_assert_int_eq(zkl_election_leader(e, buf, &len), ZKL_ENOENT);
  ck_assert_int_eq(zkl_election_start(e), 0);
  ck_assert_int_eq(zkl_election_start(e), ZKL_EBUSY);
  ck_assert_int_eq(zkl_election_await(e, 5000), 0);
  ck_assert_int_eq(zkl_election_is_leader(e), 1);
  len = sizeof buf;
  ck_assert_int_eq(zkl_election_leader(e, buf, &len), 0);
  ck_assert_int_eq(len, 5);
  ck_assert(memcmp(buf, "alpha", 5) == 0);
  len = 2;
  ck_assert_int_eq(zkl_election_leader(e, buf, &len), ZKL_EINVAL);
  ck_assert_int_eq(len, 5); /* the size needed */

  /* Curator's LeaderLatch shape; the token is the node's czxid */
  struct String_vector kids;
  ck_assert_int_eq(it_children(s, root, &kids), 1);
  ck_assert(strncmp(kids.data[0], "_c_", 3) == 0);
  ck_assert(strncmp(kids.data[0] + 39, "-latch-", 7) == 0);
  char node[512];
  snprintf(node, sizeof node, "%s/%s", root, kids.data[0]);
  deallocate_String_vector(&kids);
  struct Stat st;
  ck_assert_int_eq(zoo_exists(zkl_session_zhandle(s), node, 0, &st), ZOK);
  uint64_t token;
  ck_assert_int_eq(zkl_election_token(e, &token), 0);
  ck_assert(token == (uint64_t)st.czxid);
  char mine[1024], small[8] = "intact";
  ck_assert_int_eq(zkl_election_node(e, mine, sizeof mine), 0);
  ck_assert_str_eq(mine, node);
  ck_assert_int_eq(zkl_election_node(e, small, sizeof small), ZKL_EINVAL);
  ck_assert_str_eq(small, "intact");

  /* a resigning leader deletes its node plainly: a Curator LeaderLatch
   * candidate behind it wakes only on NodeDeleted */
  zkl_session_t *o = it_session();
  it_watch_t heard;
  it_watch_node(o, node, &heard);
  ck_assert_int_eq(zkl_election_resign(e), 0);
  ck_assert_int_eq(it_heard(&heard, 5000), ZOO_DELETED_EVENT);
  zkl_session_close(o);
  struct log_arg la = {&log, 2};
  ck_assert(it_wait_until(log_has, &la, 5000));
  ck_assert_int_eq(zkl_election_is_leader(e), 0);
  ck_assert_int_eq(zkl_election_token(e, &token), ZKL_EPERM);
  ck_assert_int_eq(zkl_election_node(e, mine, sizeof mine), ZKL_EPERM);
  ck_assert(it_wait_children(s, root, 0, 5000));
  ck_assert_int_eq(log.what[0], 'E');
  ck_assert_int_eq(log.what[1], 'R');
  ck_assert_int_eq(log.reason[1], ZKL_REASON_RESIGNED);
  /* and again, through a new node */
  ck_assert_int_eq(zkl_election_start(e), 0);
  ck_assert_int_eq(zkl_election_await(e, 5000), 0);
  ck_assert_int_eq(zkl_election_node(e, first, sizeof first), 0);
  ck_assert_str_ne(first, node);
  ck_assert_int_eq(zoo_exists(zkl_session_zhandle(s), first, 0, &st), ZOK);
  ck_assert_int_eq(zkl_election_token(e, &token), 0);
  ck_assert(token == (uint64_t)st.czxid);
  zkl_election_destroy(e); /* resigns */
  ck_assert_int_eq(log_count(&log), 4);
  ck_assert_int_eq(it_children(s, root, NULL), 0);
  zkl_session_close(s);
}
END_TEST

#define NC 3
/* Three candidates: one leads at a time; each resign hands over to the
 * next in arrival order; tokens increase; each candidate sees exactly
 * elected-then-revoked; an observer sees every change. */
START_TEST(handover_in_order_with_observer) {
  char root[128];
  it_root(root, sizeof root, "elect3");
  struct cb_log log = {.mu = PTHREAD_MUTEX_INITIALIZER};
  struct cb_log olog = {.mu = PTHREAD_MUTEX_INITIALIZER};
  zkl_session_t *s[NC], *os = it_session();
  struct cand c[NC], oc = {&olog, 9, NULL, 0, 0, 0};
  zkl_election_opts_t oo;
  zkl_election_opts_init(&oo);
  oo.observer = 1;
  oo.on_leader = on_leader;
  oo.arg = &oc;
  zkl_election_t *obs;
  ck_assert_int_eq(zkl_election_create(&obs, os, root, NULL, 0, &oo), 0);
  ck_assert_int_eq(zkl_election_await(obs, 10), ZKL_EINVAL);
  ck_assert_int_eq(zkl_election_start(obs), 0);
  struct log_arg la = {&olog, 1};
  ck_assert(it_wait_until(log_has, &la, 5000)); /* "nobody leads" */
  ck_assert_int_eq(olog.id[0][0], '\0');

  for (int i = 0; i < NC; i++) {
    char id[16];
    snprintf(id, sizeof id, "cand-%d", i);
    c[i] = (struct cand){&log, i, NULL, 0, 0, 0};
    s[i] = it_session();
    candidate(s[i], root, &c[i], id);
    ck_assert_int_eq(zkl_election_start(c[i].e), 0);
    ck_assert(it_wait_children(s[0], root, i + 1, 5000));
  }
  ck_assert_int_eq(zkl_election_await(c[0].e, 5000), 0);
  ck_assert_int_eq(zkl_election_await(c[1].e, 200), ZKL_ETIMEDOUT);
  for (int i = 0; i < NC; i++) {
    for (int j = 0; j < NC; j++)
      ck_assert_int_eq(zkl_election_is_leader(c[j].e), j == i);
    /* the observer has reported this leader before the next change: a
     * leader that comes and goes faster than it can look again is not
     * reported (it follows the current leader) */
    la = (struct log_arg){&olog, 2 + i};
    ck_assert(it_wait_until(log_has, &la, 5000));
    ck_assert_int_eq(zkl_election_resign(c[i].e), 0);
    if (i + 1 < NC) ck_assert_int_eq(zkl_election_await(c[i + 1].e, 5000), 0);
  }
  la = (struct log_arg){&log, 2 * NC};
  ck_assert(it_wait_until(log_has, &la, 5000));
  /* per candidate, in its own order: elected, then revoked(RESIGNED);
   * across candidates the next one may be elected before the previous
   * one's on_revoked has run (different threads), but in arrival order
   * and with increasing tokens */
  uint64_t last = 0, tokens[NC];
  int leader_order = 0;
  for (int k = 0; k < log.n; k++)
    if (log.what[k] == 'E') {
      ck_assert_int_eq(log.who[k], leader_order);
      ck_assert(log.token[k] > last);
      last = tokens[leader_order++] = log.token[k];
    }
  ck_assert_int_eq(leader_order, NC);
  for (int i = 0; i < NC; i++) {
    int seen = 0;
    for (int k = 0; k < log.n; k++) {
      if (log.who[k] != i) continue;
      ck_assert_int_eq(log.what[k], seen == 0 ? 'E' : 'R');
      if (seen == 1) ck_assert_int_eq(log.reason[k], ZKL_REASON_RESIGNED);
      seen++;
    }
    ck_assert_int_eq(seen, 2);
  }
  /* the observer saw cand-0, cand-1, cand-2 and nobody, in order */
  la = (struct log_arg){&olog, NC + 2};
  ck_assert(it_wait_until(log_has, &la, 5000));
  for (int i = 0; i < NC; i++) {
    char id[16];
    snprintf(id, sizeof id, "cand-%d", i);
    ck_assert_str_eq(olog.id[1 + i], id);
    ck_assert(olog.token[1 + i] == tokens[i]);
  }
  ck_assert_str_eq(olog.id[NC + 1], "");
  zkl_election_destroy(obs);
  char *wchc = it_watches_left(root, 2000);
  ck_assert_msg(wchc == NULL, "watch left:\n%s", wchc);
  for (int i = 0; i < NC; i++) {
    zkl_election_destroy(c[i].e);
    zkl_session_close(s[i]);
  }
  zkl_session_close(os);
}
END_TEST

/* A callback may call into the library: resigning from on_elected. */
START_TEST(resign_from_the_callback) {
  char root[128];
  it_root(root, sizeof root, "elect-cb");
  zkl_session_t *s = it_session();
  struct cb_log log = {.mu = PTHREAD_MUTEX_INITIALIZER};
  struct cand c = {&log, 0, NULL, 1, 0, 0};
  zkl_election_t *e = candidate(s, root, &c, "cb");
  ck_assert_int_eq(zkl_election_start(e), 0);
  struct log_arg la = {&log, 2};
  ck_assert(it_wait_until(log_has, &la, 5000));
  ck_assert_int_eq(log.what[0], 'E');
  ck_assert_int_eq(log.what[1], 'R');
  ck_assert(it_wait_children(s, root, 0, 5000));
  zkl_election_destroy(e);
  ck_assert_int_eq(log_count(&log), 2);
  zkl_session_close(s);
}
END_TEST

/* The leader's process is killed: the next candidate takes over once the
 * server expires the dead session (bounded by its session timeout). */
START_TEST(takeover_after_sigkill) {
  char root[128];
  it_root(root, sizeof root, "elect-kill");
  int ready[2];
  ck_assert_int_eq(pipe(ready), 0);
  pid_t pid = fork(); /* before any session of ours */
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    zkl_session_opts_t o;
    zkl_session_opts_init(&o);
    o.session_timeout_ms = 2000;
    zkl_session_t *cs = NULL;
    zkl_election_t *ce = NULL;
    if (zkl_session_open(&cs, it_hosts(), &o) != 0 ||
        zkl_election_create(&ce, cs, root, "victim", 6, NULL) != 0 ||
        zkl_election_start(ce) != 0 || zkl_election_await(ce, 5000) != 0)
      _exit(2);
    if (write(ready[1], "L", 1) != 1) _exit(3);
    for (;;) pause();
  }
  close(ready[1]);
  char b;
  ck_assert_int_eq(read(ready[0], &b, 1), 1);
  close(ready[0]);
  zkl_session_t *s = it_session();
  struct cb_log log = {.mu = PTHREAD_MUTEX_INITIALIZER};
  struct cand c = {&log, 1, NULL, 0, 0, 0};
  zkl_election_t *e = candidate(s, root, &c, "heir");
  ck_assert_int_eq(zkl_election_start(e), 0);
  ck_assert(it_wait_children(s, root, 2, 5000));
  char buf[32];
  size_t len = sizeof buf;
  ck_assert_int_eq(zkl_election_leader(e, buf, &len), 0);
  ck_assert(len == 6 && memcmp(buf, "victim", 6) == 0);
  int64_t t0 = it_now_ms();
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  ck_assert_int_eq(zkl_election_await(e, 15000), 0);
  int64_t took = it_now_ms() - t0;
  ck_assert_msg(took < 2000 + 3000, "takeover took %" PRId64 " ms", took);
  len = sizeof buf;
  ck_assert_int_eq(zkl_election_leader(e, buf, &len), 0);
  ck_assert(len == 4 && memcmp(buf, "heir", 4) == 0);
  zkl_election_destroy(e);
  zkl_session_close(s);
}
END_TEST

/* ---- processes: at most one believes it leads, tokens increase -------- */

#define EPROCS 3
#define TERMS 4 /* leaderships per process */
#define IV_MAX (EPROCS * TERMS)

struct intervals {
  int n; /* atomic */
  struct {
    int64_t from, to;
    uint64_t token;
    int who;
  } iv[IV_MAX];
};

static int election_worker(struct intervals *iv, const char *root, int who) {
  zkl_session_t *s = NULL;
  zkl_election_t *e = NULL;
  char id[16];
  snprintf(id, sizeof id, "p%d", who);
  if (zkl_session_open(&s, it_hosts(), NULL) != 0 ||
      zkl_election_create(&e, s, root, id, strlen(id), NULL) != 0)
    return 2;
  for (int t = 0; t < TERMS; t++) {
    if (zkl_election_start(e) != 0 || zkl_election_await(e, 30000) != 0)
      return 3;
    uint64_t token;
    if (zkl_election_token(e, &token) != 0) return 4;
    int64_t from = it_now_ms();
    usleep(20000); /* the leader's "work" */
    if (zkl_election_is_leader(e) != 1) return 5;
    int64_t to = it_now_ms();
    int k = __atomic_fetch_add(&iv->n, 1, __ATOMIC_SEQ_CST);
    if (k < IV_MAX) {
      iv->iv[k].from = from;
      iv->iv[k].to = to;
      iv->iv[k].token = token;
      iv->iv[k].who = who;
    }
    zkl_election_resign(e);
    while (zkl_election_is_leader(e) == 1) usleep(1000);
  }
  zkl_election_destroy(e);
  zkl_session_close(s);
  return 0;
}

START_TEST(processes_never_lead_together) {
  char root[128];
  it_root(root, sizeof root, "elect-procs");
  struct intervals *iv = mmap(NULL, sizeof *iv, PROT_READ | PROT_WRITE,
                              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ck_assert(iv != MAP_FAILED);
  memset(iv, 0, sizeof *iv);
  pid_t pids[EPROCS];
  for (int i = 0; i < EPROCS; i++) {
    pids[i] = fork();
    ck_assert_int_ge(pids[i], 0);
    if (pids[i] == 0) _exit(election_worker(iv, root, i));
  }
  for (int i = 0; i < EPROCS; i++) {
    int status;
    waitpid(pids[i], &status, 0);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "candidate %d failed: status %d", i, status);
  }
  ck_assert_int_eq(iv->n, IV_MAX);
  /* sort by start, then: no overlap, tokens strictly increase */
  for (int i = 1; i < IV_MAX; i++)
    for (int j = i; j > 0 && iv->iv[j].from < iv->iv[j - 1].from; j--) {
      __typeof__(iv->iv[0]) t = iv->iv[j];
      iv->iv[j] = iv->iv[j - 1];
      iv->iv[j - 1] = t;
    }
  for (int i = 1; i < IV_MAX; i++) {
    ck_assert_msg(iv->iv[i].from >= iv->iv[i - 1].to,
                  "p%d led from %" PRId64 " while p%d led until %" PRId64,
                  iv->iv[i].who, iv->iv[i].from, iv->iv[i - 1].who,
                  iv->iv[i - 1].to);
    ck_assert(iv->iv[i].token > iv->iv[i - 1].token);
  }
  zkl_session_t *s = it_session();
  ck_assert_int_eq(it_children(s, root, NULL), 0);
  zkl_session_close(s);
  munmap(iv, sizeof *iv);
}
END_TEST

/* A leader whose connection drops is told SUSPENDED at once and stops
 * leading; the same session back with its node still there leads again
 * (same token); a lost session ends that leadership: for good without
 * reestablish (_i & 2), else the candidate runs again on the new session
 * and leads with a new token.  _i & 1: a slow SUSPENDED callback. */
START_TEST(leader_suspended_restored_then_lost) {
  if (getenv("ZKL_TEST_ZKDIR") == NULL || getenv("ZKL_TEST_HARNESS") == NULL ||
      getenv("ZKL_TEST_ENSEMBLE_DIR") != NULL)
    return; /* needs the standalone server the wrapper started */
  char root[128];
  it_root(root, sizeof root, "elect-susp");
  int final = (_i & 2) != 0;
  zkl_session_t *s = final ? it_session_final(6000) : it_session_timeout(6000);
  struct cb_log log = {.mu = PTHREAD_MUTEX_INITIALIZER};
  struct cand c = {&log, 0, NULL, 0, 0, 0};
  if (_i & 1) c.slow_suspended_ms = 2500; /* reconnect during it */
  zkl_election_t *e = candidate(s, root, &c, "solo");
  ck_assert_int_eq(zkl_election_start(e), 0);
  ck_assert_int_eq(zkl_election_await(e, 5000), 0);

  it_harness("pause");
  struct log_arg la = {&log, 2};
  ck_assert_msg(it_wait_until(log_has, &la, 8000), "no revocation");
  ck_assert_int_eq(log.what[1], 'R');
  ck_assert_int_eq(log.reason[1], ZKL_REASON_SUSPENDED);
  ck_assert_int_eq(zkl_election_is_leader(e), ZKL_ESUSPENDED);
  uint64_t token;
  ck_assert_int_eq(zkl_election_token(e, &token), ZKL_ESUSPENDED);
  it_harness("resume");
  la.want = 3;
  ck_assert_msg(it_wait_until(log_has, &la, 8000), "leadership not back");
  ck_assert_int_eq(log.what[2], 'E');
  ck_assert(log.token[2] == log.token[0]); /* same node, same token */
  ck_assert_int_eq(zkl_election_is_leader(e), 1);

  int64_t old_id = zkl_session_id(s);
  it_expire_session(s);
  int led = zkl_election_is_leader(e);
  /* without reestablish: lost; with it, possibly elected again already
   * (the new leadership, checked below) */
  ck_assert_msg(led == ZKL_ELOST || (!final && led >= 0),
                "after LOST: %d", led);
  la.want = 4;
  ck_assert(it_wait_until(log_has, &la, 8000));
  ck_assert_int_eq(log.what[3], 'R'); /* once: suspended first, or lost */
  ck_assert(log.reason[3] == ZKL_REASON_SUSPENDED ||
            log.reason[3] == ZKL_REASON_LOST);
  if (final) {
    ck_assert_int_eq(zkl_election_await(e, 2000), ZKL_ELOST);
    ck_assert_int_eq(zkl_election_start(e), ZKL_ELOST);
    zkl_election_destroy(e);
    ck_assert_int_eq(log_count(&log), 4); /* nothing more */
  } else {
    la.want = 5; /* elected again on the new session */
    ck_assert_msg(it_wait_until(log_has, &la, 8000), "not elected again");
    ck_assert_int_eq(log.what[4], 'E');
    ck_assert(log.token[4] > log.token[0]);
    ck_assert(zkl_session_id(s) != old_id);
    ck_assert_int_eq(zkl_election_is_leader(e), 1);
    zkl_election_destroy(e);
    ck_assert_int_eq(log_count(&log), 6); /* and revoked once (destroy) */
    ck_assert_int_eq(log.what[5], 'R');
    ck_assert_int_eq(it_children(s, root, NULL), 0);
  }
  zkl_session_close(s);
}
END_TEST

/* Destroying an election from its own callback is allowed: the object's
 * thread frees it once the callback returns, and the node goes. */
START_TEST(destroy_from_the_callback) {
  char root[128];
  it_root(root, sizeof root, "elect-self");
  zkl_session_t *s = it_session();
  struct cb_log log = {.mu = PTHREAD_MUTEX_INITIALIZER};
  struct cand c = {&log, 0, NULL, 0, 1, 0};
  zkl_election_t *e = candidate(s, root, &c, "self");
  ck_assert_int_eq(zkl_election_start(e), 0);
  struct log_arg la = {&log, 1};
  ck_assert(it_wait_until(log_has, &la, 5000));
  ck_assert(it_wait_children(s, root, 0, 5000));
  it_sleep_ms(100);
  ck_assert_int_eq(log_count(&log), 1); /* no callback after destroy */
  zkl_session_close(s); /* valgrind: freed by its thread, nothing leaks */
}
END_TEST

Suite *election_suite(void) {
  Suite *su = suite_create("election");
  TCase *tc = it_tcase("candidates");
  tcase_add_test(tc, single_candidate_leads_with_token_and_id);
  tcase_add_test(tc, handover_in_order_with_observer);
  tcase_add_test(tc, resign_from_the_callback);
  tcase_add_test(tc, destroy_from_the_callback);
  suite_add_tcase(su, tc);
  tc = it_tcase("processes");
  tcase_add_test(tc, takeover_after_sigkill);
  tcase_add_test(tc, processes_never_lead_together);
  /* 0: the callback returns at once; 1: the connection comes back while
   * on_revoked(SUSPENDED) still runs */
  tcase_add_loop_test(tc, leader_suspended_restored_then_lost, 0, 4);
  suite_add_tcase(su, tc);
  return su;
}
