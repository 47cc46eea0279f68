/* tests/integration/test-multilock.c - the multi-lock against a real
 * server: one transaction for all nodes, Curator's names, one token per
 * path, all or none (try, timed, cancel), exclusion with plain mutexes on
 * the same paths, a vanished node making it queue again (granted or
 * waiting), session expiry (waiting, held, final session), async forms,
 * destroy, bad input, ZKL_MULTILOCK_MAX fresh paths.  Two processes taking
 * reversed path lists, round after round, with a third taking plain
 * mutexes on two of the paths, never deadlock, never overlap, and see
 * tokens increase on every path (ml_reversed_no_deadlock). */
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"

/* root/<tag><i> for i < n into paths (each buf 160 bytes) */
static void ml_paths(const char *root, int n, char (*buf)[160],
                     const char **paths) {
  for (int i = 0; i < n; i++) {
    snprintf(buf[i], 160, "%s/p%d", root, i);
    paths[i] = buf[i];
  }
}

static zkl_multilock_t *ml(zkl_session_t *s, const char **paths, size_t n) {
  zkl_multilock_t *m = NULL;
  ck_assert_int_eq(zkl_multilock_create(&m, s, paths, n, NULL), 0);
  return m;
}

START_TEST(ml_basic) {
  char root[128], b[3][160];
  const char *p[3];
  it_root(root, sizeof root, "ml-basic");
  ml_paths(root, 3, b, p);
  zkl_session_t *s = it_session(), *o = it_session();
  zkl_multilock_t *a = ml(s, p, 3);
  ck_assert_uint_eq(zkl_multilock_count(a), 3);
  ck_assert_int_eq(zkl_multilock_holding(a), 0);
  ck_assert_int_eq(zkl_multilock_unlock(a), ZKL_EPERM);
  ck_assert_int_eq(zkl_multilock_lock(a), 0);
  ck_assert_int_eq(zkl_multilock_holding(a), 1);
  ck_assert_int_eq(zkl_multilock_lock(a), ZKL_EBUSY);
  uint64_t t[3];
  char node[1024];
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(zkl_multilock_token(a, (size_t)i, &t[i]), 0);
    ck_assert_int_eq(zkl_multilock_node(a, (size_t)i, node, sizeof node), 0);
    ck_assert_int_eq(strncmp(node, p[i], strlen(p[i])), 0);
    ck_assert_int_eq(strncmp(node + strlen(p[i]), "/_c_", 4), 0);
    ck_assert_ptr_nonnull(strstr(node, "-lock-"));
    ck_assert_int_eq(it_children(s, p[i], NULL), 1);
  }
  ck_assert_uint_eq(t[0], t[1]); /* one transaction */
  ck_assert_uint_eq(t[1], t[2]);
  ck_assert_int_eq(zkl_multilock_token(a, 3, &t[0]), ZKL_EINVAL);
  /* a plain mutex on one of the paths waits; a try says busy */
  zkl_mutex_t *mx = NULL;
  ck_assert_int_eq(zkl_mutex_create(&mx, o, p[1], NULL), 0);
  ck_assert_int_eq(zkl_mutex_trylock(mx), ZKL_EBUSY);
  int64_t t0 = it_now_ms();
  ck_assert_int_eq(zkl_mutex_timedlock(mx, 300), ZKL_ETIMEDOUT);
  ck_assert_int_ge(it_now_ms() - t0, 280);
  /* another multi-lock sharing one path: try busy, timed out, nothing
   * left behind (its nodes on the free paths deleted too) */
  const char *q[2] = {p[2], b[0]};
  char extra[160];
  snprintf(extra, sizeof extra, "%s/x", root);
  q[1] = extra;
  zkl_multilock_t *c = ml(o, q, 2);
  ck_assert_int_eq(zkl_multilock_trylock(c), ZKL_EBUSY);
  t0 = it_now_ms();
  ck_assert_int_eq(zkl_multilock_timedlock(c, 300), ZKL_ETIMEDOUT);
  ck_assert_int_ge(it_now_ms() - t0, 280);
  ck_assert_int_eq(zkl_multilock_holding(c), 0);
  ck_assert_int_eq(it_children(s, extra, NULL), 0);
  ck_assert_int_eq(it_children(s, p[2], NULL), 1);
  ck_assert_int_eq(zkl_multilock_unlock(a), 0);
  ck_assert_int_eq(zkl_multilock_holding(a), 0);
  for (int i = 0; i < 3; i++) ck_assert_int_eq(it_children(s, p[i], NULL), 0);
  ck_assert_int_eq(zkl_multilock_unlock(a), ZKL_EPERM);
  /* the next holder's tokens are larger */
  ck_assert_int_eq(zkl_multilock_trylock(c), 0);
  uint64_t u;
  ck_assert_int_eq(zkl_multilock_token(c, 0, &u), 0);
  ck_assert_uint_gt(u, t[2]);
  ck_assert_int_eq(zkl_mutex_trylock(mx), 0); /* p[1] is free */
  ck_assert_int_eq(zkl_multilock_trylock(a), ZKL_EBUSY);
  ck_assert_int_eq(it_children(s, p[0], NULL), 0); /* all or none */
  ck_assert_int_eq(zkl_mutex_unlock(mx), 0);
  ck_assert_int_eq(zkl_multilock_unlock(c), 0);
  ck_assert_int_eq(zkl_multilock_lock(a), 0);
  uint64_t v;
  ck_assert_int_eq(zkl_multilock_token(a, 2, &v), 0);
  ck_assert_uint_gt(v, u);
  zkl_multilock_destroy(a); /* releases */
  for (int i = 0; i < 3; i++) ck_assert_int_eq(it_children(s, p[i], NULL), 0);
  zkl_multilock_destroy(c);
  zkl_mutex_destroy(mx);
  zkl_session_close(s);
  zkl_session_close(o);
}
END_TEST

/* A waiting multi-lock is granted when the plain holders go, in any
 * order; a cancel ends the wait with nothing left. */
struct waiter {
  zkl_multilock_t *m;
  int64_t timeout;
  atomic_int rc, done;
};

static void *wait_thread(void *arg) {
  struct waiter *w = arg;
  atomic_store(&w->rc, zkl_multilock_timedlock(w->m, w->timeout));
  atomic_store(&w->done, 1);
  return NULL;
}

START_TEST(ml_waits_and_cancel) {
  char root[128], b[2][160];
  const char *p[2];
  it_root(root, sizeof root, "ml-wait");
  ml_paths(root, 2, b, p);
  zkl_session_t *s = it_session(), *o = it_session();
  zkl_mutex_t *m0 = NULL, *m1 = NULL;
  ck_assert_int_eq(zkl_mutex_create(&m0, o, p[0], NULL), 0);
  ck_assert_int_eq(zkl_mutex_create(&m1, o, p[1], NULL), 0);
  ck_assert_int_eq(zkl_mutex_lock(m0), 0);
  ck_assert_int_eq(zkl_mutex_lock(m1), 0);
  struct waiter w = {.m = ml(s, p, 2), .timeout = 20000};
  pthread_t th;
  pthread_create(&th, NULL, wait_thread, &w);
  ck_assert_int_eq(it_wait_children(s, p[0], 2, 5000), 1);
  ck_assert_int_eq(it_wait_children(s, p[1], 2, 5000), 1);
  ck_assert_int_eq(zkl_mutex_unlock(m1), 0);
  usleep(200 * 1000);
  ck_assert_int_eq(atomic_load(&w.done), 0); /* one of two */
  ck_assert_int_eq(zkl_mutex_unlock(m0), 0);
  pthread_join(th, NULL);
  ck_assert_int_eq(atomic_load(&w.rc), 0);
  ck_assert_int_eq(zkl_mutex_trylock(m0), ZKL_EBUSY);
  ck_assert_int_eq(zkl_multilock_unlock(w.m), 0);
  /* cancel while waiting on one path and holding the other */
  ck_assert_int_eq(zkl_mutex_lock(m1), 0);
  atomic_store(&w.done, 0);
  pthread_create(&th, NULL, wait_thread, &w);
  ck_assert_int_eq(it_wait_children(s, p[1], 2, 5000), 1);
  usleep(100 * 1000);
  ck_assert_int_eq(zkl_mutex_trylock(m0), ZKL_EBUSY); /* held meanwhile */
  ck_assert_int_eq(zkl_multilock_cancel(w.m), 0);
  pthread_join(th, NULL);
  ck_assert_int_eq(atomic_load(&w.rc), ZKL_ECANCELED);
  ck_assert_int_eq(zkl_multilock_holding(w.m), 0);
  ck_assert_int_eq(it_children(s, p[0], NULL), 0);
  ck_assert_int_eq(it_children(s, p[1], NULL), 1);
  ck_assert_int_eq(zkl_mutex_trylock(m0), 0);
  ck_assert_int_eq(zkl_mutex_unlock(m0), 0);
  ck_assert_int_eq(zkl_mutex_unlock(m1), 0);
  zkl_multilock_destroy(w.m);
  zkl_mutex_destroy(m0);
  zkl_mutex_destroy(m1);
  zkl_session_close(s);
  zkl_session_close(o);
}
END_TEST

/* ---- shared helpers of the tests below -------------------------------- */

/* path/name of child k of path (0 if fewer children) into buf */
static int ml_child(zkl_session_t *s, const char *path, int k, char *buf,
                    size_t len) {
  struct String_vector v = {0, NULL};
  int n = it_children(s, path, &v);
  int ok = k < n;
  if (ok) snprintf(buf, len, "%s/%s", path, v.data[k]);
  if (v.data != NULL) deallocate_String_vector(&v);
  return ok;
}

static int64_t ml_czxid(zkl_session_t *s, const char *node) {
  struct Stat st;
  memset(&st, 0, sizeof st);
  int rc = zoo_exists(zkl_session_zhandle(s), node, 0, &st);
  ck_assert_msg(rc == ZOK, "exists %s: %s", node, zerror(rc));
  return st.czxid;
}

/* Every path of m: exactly one child, m's node, whose czxid is m's token
 * there; all tokens equal (one transaction).  Returns the token. */
static uint64_t ml_check_held(zkl_session_t *s, zkl_multilock_t *m,
                              const char **paths, size_t n) {
  uint64_t first = 0;
  for (size_t i = 0; i < n; i++) {
    char node[1024], kid[1024];
    uint64_t t = 0;
    ck_assert_int_eq(zkl_multilock_node(m, i, node, sizeof node), 0);
    ck_assert_int_eq(zkl_multilock_token(m, i, &t), 0);
    int kids = it_children(s, paths[i], NULL);
    ck_assert_msg(kids == 1, "%s has %d children while held", paths[i],
                  kids);
    ck_assert(ml_child(s, paths[i], 0, kid, sizeof kid));
    ck_assert_str_eq(node, kid);
    ck_assert_msg(t == (uint64_t)ml_czxid(s, node),
                  "token %llu of %s is not its czxid",
                  (unsigned long long)t, node);
    if (i == 0) first = t;
    else ck_assert_uint_eq(t, first);
  }
  return first;
}

/* ---- reversed orders, round after round: no deadlock ------------------ */

#define REV_PATHS 4
#define REV_ROUNDS 200 /* per multi-lock process */
#define REV_WAIT_MS 20000

struct rev_shared {
  atomic_int inside[REV_PATHS];  /* holders of each path now */
  uint64_t last[REV_PATHS];      /* last token seen there (under it) */
  atomic_int violations, regressions, timeouts, errors;
  atomic_int rounds[3];          /* per process */
  atomic_int multis_done, stop;
  atomic_int entries[3];         /* holds begun, per process */
  atomic_int contended;          /* multi-lock rounds in which another
                                    process held a path while we waited */
  atomic_int has_msg;
  char msg[512];                 /* the first error */
};

__attribute__((format(printf, 2, 3))) static void rev_note(
    struct rev_shared *sh, const char *fmt, ...) {
  if (atomic_exchange(&sh->has_msg, 1) != 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(sh->msg, sizeof sh->msg, fmt, ap);
  va_end(ap);
}

/* Entered path g with token t: exclusion and token order. */
static void rev_enter(struct rev_shared *sh, int g, uint64_t t, int who) {
  if (atomic_fetch_add(&sh->inside[g], 1) != 0) {
    atomic_fetch_add(&sh->violations, 1);
    rev_note(sh, "process %d entered p%d while another held it", who, g);
  }
  if (t <= sh->last[g]) {
    atomic_fetch_add(&sh->regressions, 1);
    rev_note(sh, "process %d: token on p%d did not increase (round %d)", who,
             g, atomic_load(&sh->rounds[who]));
  }
  sh->last[g] = t;
  atomic_fetch_add(&sh->entries[who], 1);
}

static void rev_leave(struct rev_shared *sh, int g) {
  atomic_fetch_sub(&sh->inside[g], 1);
}

/* A multi-lock process: the paths in order (reversed: p3..p0). */
static int rev_multi(struct rev_shared *sh, char (*b)[160], int who,
                     int reversed) {
  zkl_session_t *s = it_session();
  const char *paths[REV_PATHS];
  int g[REV_PATHS];
  for (int i = 0; i < REV_PATHS; i++) {
    g[i] = reversed ? REV_PATHS - 1 - i : i;
    paths[i] = b[g[i]];
  }
  zkl_multilock_t *m = NULL;
  if (zkl_multilock_create(&m, s, paths, REV_PATHS, NULL) != 0) return 2;
  int bad = 0;
  for (int r = 0; r < REV_ROUNDS && !atomic_load(&sh->stop); r++) {
    /* Contended: another process entered a path between our request and
     * our grant (or held one when we asked), so we waited behind it.
     * Sampling only "held when we asked" misses strict alternation: the
     * other waiter is granted, but not yet inside, when we ask again. */
    int others = 0, busy = 0;
    for (int i = 0; i < 3; i++)
      if (i != who) others += atomic_load(&sh->entries[i]);
    for (int i = 0; i < REV_PATHS; i++) busy |= atomic_load(&sh->inside[i]);
    int rc = zkl_multilock_timedlock(m, REV_WAIT_MS);
    int others_after = 0;
    for (int i = 0; i < 3; i++)
      if (i != who) others_after += atomic_load(&sh->entries[i]);
    if (busy || others_after != others)
      atomic_fetch_add(&sh->contended, 1);
    if (rc != 0) {
      if (rc == ZKL_ETIMEDOUT) atomic_fetch_add(&sh->timeouts, 1);
      else atomic_fetch_add(&sh->errors, 1);
      rev_note(sh, "process %d round %d: timedlock %d", who, r, rc);
      bad = 3;
      break;
    }
    for (int i = 0; i < REV_PATHS; i++) {
      uint64_t t = 0;
      if (zkl_multilock_token(m, (size_t)i, &t) != 0) {
        atomic_fetch_add(&sh->errors, 1);
        rev_note(sh, "process %d round %d: no token for path %d", who, r, i);
      }
      rev_enter(sh, g[i], t, who);
    }
    usleep(1000 + 500 * (unsigned)(r % 3)); /* held a while: the others
                                               queue behind */
    for (int i = 0; i < REV_PATHS; i++) rev_leave(sh, g[i]);
    rc = zkl_multilock_unlock(m);
    if (rc != 0) {
      atomic_fetch_add(&sh->errors, 1);
      rev_note(sh, "process %d round %d: unlock %d", who, r, rc);
      bad = 4;
      break;
    }
    atomic_fetch_add(&sh->rounds[who], 1);
  }
  atomic_fetch_add(&sh->multis_done, 1);
  zkl_multilock_destroy(m);
  zkl_session_close(s);
  return bad;
}

/* The plain-mutex process: p1, then p2, one at a time (a plain mutex
 * taking two locks one by one is Curator's pattern, which the header says
 * can deadlock with a multi-lock), until both multi-lock processes end. */
static int rev_plain(struct rev_shared *sh, char (*b)[160], int who) {
  zkl_session_t *s = it_session();
  zkl_mutex_t *mx[2] = {NULL, NULL};
  if (zkl_mutex_create(&mx[0], s, b[1], NULL) != 0 ||
      zkl_mutex_create(&mx[1], s, b[2], NULL) != 0)
    return 2;
  int bad = 0;
  while (!bad && atomic_load(&sh->multis_done) < 2 &&
         !atomic_load(&sh->stop)) {
    for (int k = 0; k < 2 && !bad; k++) {
      int rc = zkl_mutex_timedlock(mx[k], REV_WAIT_MS);
      if (rc != 0) {
        if (rc == ZKL_ETIMEDOUT) atomic_fetch_add(&sh->timeouts, 1);
        else atomic_fetch_add(&sh->errors, 1);
        rev_note(sh, "plain process: timedlock p%d: %d", k + 1, rc);
        bad = 3;
        break;
      }
      uint64_t t = 0;
      zkl_mutex_token(mx[k], &t);
      rev_enter(sh, k + 1, t, who);
      rev_leave(sh, k + 1);
      if ((rc = zkl_mutex_unlock(mx[k])) != 0) {
        atomic_fetch_add(&sh->errors, 1);
        rev_note(sh, "plain process: unlock p%d: %d", k + 1, rc);
        bad = 4;
      }
    }
    if (!bad) atomic_fetch_add(&sh->rounds[who], 1);
  }
  zkl_mutex_destroy(mx[0]);
  zkl_mutex_destroy(mx[1]);
  zkl_session_close(s);
  return bad;
}

START_TEST(ml_reversed_no_deadlock) {
  char root[128], b[REV_PATHS][160];
  const char *p[REV_PATHS];
  it_root(root, sizeof root, "ml-rev");
  ml_paths(root, REV_PATHS, b, p);
  struct rev_shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
                               MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ck_assert(sh != MAP_FAILED);
  memset((void *)sh, 0, sizeof *sh);
  int64_t t0 = it_now_ms();
  pid_t pids[3];
  for (int i = 0; i < 3; i++) { /* before any session of ours */
    pids[i] = fork();
    ck_assert_int_ge(pids[i], 0);
    if (pids[i] == 0)
      _exit(i < 2 ? rev_multi(sh, b, i, i == 1) : rev_plain(sh, b, i));
  }
  int status[3] = {0, 0, 0}, left = 3, killed = 0;
  int64_t end = t0 + 45000; /* under the test's timeout: a hang is ours */
  while (left > 0) {
    for (int i = 0; i < 3; i++) {
      if (pids[i] == 0) continue;
      pid_t w = waitpid(pids[i], &status[i], WNOHANG);
      if (w == pids[i]) {
        pids[i] = 0;
        left--;
      }
    }
    if (left > 0 && it_now_ms() > end && !killed) {
      atomic_store(&sh->stop, 1);
      for (int i = 0; i < 3; i++)
        if (pids[i] != 0) kill(pids[i], SIGKILL);
      killed = 1;
    }
    if (left > 0) it_sleep_ms(10);
  }
  int64_t took = it_now_ms() - t0;
  printf("ml_reversed_no_deadlock: %d + %d multi-lock rounds, %d plain "
         "rounds (p1 and p2), %d multi-lock rounds waited behind another process, %lld ms\n",
         atomic_load(&sh->rounds[0]), atomic_load(&sh->rounds[1]),
         atomic_load(&sh->rounds[2]), atomic_load(&sh->contended),
         (long long)took);
  fflush(stdout);
  ck_assert_msg(!killed, "the processes were still running after 45 s "
                "(rounds %d, %d): %s", atomic_load(&sh->rounds[0]),
                atomic_load(&sh->rounds[1]), sh->msg);
  ck_assert_msg(atomic_load(&sh->timeouts) == 0,
                "%d timed out waits (a deadlock): %s",
                atomic_load(&sh->timeouts), sh->msg);
  ck_assert_msg(atomic_load(&sh->violations) == 0, "%d exclusion "
                "violations: %s", atomic_load(&sh->violations), sh->msg);
  ck_assert_msg(atomic_load(&sh->regressions) == 0, "%d token regressions: "
                "%s", atomic_load(&sh->regressions), sh->msg);
  ck_assert_msg(atomic_load(&sh->errors) == 0, "%d errors: %s",
                atomic_load(&sh->errors), sh->msg);
  for (int i = 0; i < 3; i++)
    ck_assert_msg(WIFEXITED(status[i]) && WEXITSTATUS(status[i]) == 0,
                  "process %d ended with status 0x%x: %s", i, status[i],
                  sh->msg);
  ck_assert_int_eq(atomic_load(&sh->rounds[0]), REV_ROUNDS);
  ck_assert_int_eq(atomic_load(&sh->rounds[1]), REV_ROUNDS);
  ck_assert_int_gt(atomic_load(&sh->rounds[2]), 0);
  ck_assert_int_gt(atomic_load(&sh->contended), 0); /* they did meet */
  zkl_session_t *s = it_session();
  for (int i = 0; i < REV_PATHS; i++) {
    int kids = it_children(s, p[i], NULL);
    ck_assert_msg(kids == 0, "%s has %d children left", p[i], kids);
  }
  zkl_session_close(s);
  munmap((void *)sh, sizeof *sh);
}
END_TEST

/* ---- a node deleted by someone else: queue again, all at once ---------- */

/* The multi-lock's node under p[gone] is deleted (raw zoo_delete) while it
 * waits behind a plain holder of p1; the holder then unlocks. */
static void vanish_case(int gone) {
  char root[128], b[2][160];
  const char *p[2];
  it_root(root, sizeof root, gone == 0 ? "ml-vanish-granted"
                                       : "ml-vanish-waiting");
  ml_paths(root, 2, b, p);
  zkl_session_t *s = it_session(), *o = it_session();
  zkl_mutex_t *mx = it_mutex(o, p[1]);
  ck_assert_int_eq(zkl_mutex_lock(mx), 0);
  struct waiter w = {.m = ml(s, p, 2), .timeout = 20000};
  pthread_t th;
  pthread_create(&th, NULL, wait_thread, &w);
  ck_assert_int_eq(it_wait_children(o, p[0], 1, 5000), 1);
  ck_assert_int_eq(it_wait_children(o, p[1], 2, 5000), 1);
  /* the multi-lock's node under p[gone]: the only child of p0, the
   * second of p1 (sorted by name: the holder's is not ours) */
  char node[1024] = "", mine[1024];
  struct String_vector v = {0, NULL};
  int n = it_children(o, p[gone], &v);
  char holder[1024];
  ck_assert_int_eq(zkl_mutex_node(mx, holder, sizeof holder), 0);
  for (int i = 0; i < n; i++) {
    snprintf(mine, sizeof mine, "%s/%s", p[gone], v.data[i]);
    if (strcmp(mine, holder) != 0) snprintf(node, sizeof node, "%s", mine);
  }
  deallocate_String_vector(&v);
  ck_assert(node[0] != '\0');
  int64_t gone_czxid = ml_czxid(o, node);
  char old0[1024];
  ck_assert(ml_child(o, p[0], 0, old0, sizeof old0));
  usleep(300 * 1000); /* p0's sub-acquisition granted, p1's waiting */
  ck_assert_int_eq(zoo_delete(zkl_session_zhandle(o), node, -1), ZOK);
  /* the multi-lock queues again: a new node under p0 (p0 is free) */
  char again[1024];
  int requeued = 0;
  for (int64_t end = it_now_ms() + (gone == 1 ? 5000 : 0); it_now_ms() < end;) {
    if (ml_child(o, p[0], 0, again, sizeof again) &&
        strcmp(again, old0) != 0 && it_children(o, p[1], NULL) == 2) {
      requeued = 1;
      break;
    }
    it_sleep_ms(5);
  }
  printf("vanish (node under p%d deleted): requeued %s\n", gone,
         requeued ? "at once" : "at the last look, once p1 was granted");
  fflush(stdout);
  ck_assert_int_eq(atomic_load(&w.done), 0); /* p1 still held */
  ck_assert_int_eq(zkl_mutex_unlock(mx), 0);
  pthread_join(th, NULL);
  ck_assert_msg(atomic_load(&w.rc) == 0, "timedlock: %s",
                it_code(atomic_load(&w.rc)));
  ck_assert_int_eq(zkl_multilock_holding(w.m), 1);
  /* both held for real: nobody else gets them */
  for (int i = 0; i < 2; i++) {
    char mnode[1024] = "";
    zkl_multilock_node(w.m, (size_t)i, mnode, sizeof mnode);
    int kids = it_children(o, p[i], NULL);
    zkl_mutex_t *probe = it_mutex(o, p[i]);
    int prc = zkl_mutex_trylock(probe);
    ck_assert_msg(prc == ZKL_EBUSY, "the multi-lock says it holds p%d "
                  "(holding() %d, node %s, which %s), yet a plain trylock "
                  "there gives %s; p%d had %d children before it; the node "
                  "deleted was %s (under p%d)",
                  i, zkl_multilock_holding(w.m), mnode,
                  it_owner_of(o, mnode) != 0 ? "exists" : "does not exist",
                  it_code(prc), i, kids, node, gone);
    zkl_mutex_destroy(probe);
  }
  /* one node each, ours, tokens past the deleted one */
  uint64_t t = ml_check_held(o, w.m, p, 2);
  ck_assert_msg(t > (uint64_t)gone_czxid, "token %llu, deleted czxid %lld",
                (unsigned long long)t, (long long)gone_czxid);
  /* a node deleted on a path already granted is found at the last look
   * before the grant (the acquisition of that path has ended), a node
   * deleted while its acquisition waits at once */
  if (gone == 1)
    ck_assert_msg(requeued, "the multi-lock did not queue again within 5 s "
                  "after its waiting node under p%d was deleted", gone);
  ck_assert_int_eq(zkl_multilock_unlock(w.m), 0);
  ck_assert_int_eq(it_children(o, p[0], NULL), 0);
  ck_assert_int_eq(it_children(o, p[1], NULL), 0);
  zkl_multilock_destroy(w.m);
  zkl_mutex_destroy(mx);
  zkl_session_close(s);
  zkl_session_close(o);
}

/* The node deleted is on the path already granted (p0). */
START_TEST(ml_vanished_requeues) { vanish_case(0); }
END_TEST

/* The node deleted is the one still waiting (behind the holder of p1). */
START_TEST(ml_vanished_waiting_requeues) { vanish_case(1); }
END_TEST

/* ---- session expiry --------------------------------------------------- */

static int64_t wait_new_session(zkl_session_t *s, int64_t old) {
  for (int64_t end = it_now_ms() + 15000; it_now_ms() < end;) {
    if (zkl_session_state(s) == ZKL_SESSION_CONNECTED &&
        zkl_session_id(s) != old)
      return zkl_session_id(s);
    it_sleep_ms(10);
  }
  ck_abort_msg("no new session after the expiry of 0x%llx",
               (unsigned long long)old);
  return 0;
}

static void ml_expire(zkl_session_t *s, const char *what) {
  int64_t t0 = it_now_ms();
  it_expire_session(s);
  printf("ml_session_expiry: %s: expired in %lld ms\n", what,
         (long long)(it_now_ms() - t0));
  fflush(stdout);
}

START_TEST(ml_session_expiry) {
  char root[128], b[2][160];
  const char *p[2];
  it_root(root, sizeof root, "ml-expire");
  ml_paths(root, 2, b, p);
  zkl_session_t *s = it_session(), *o = it_session();
  zkl_mutex_t *mx = it_mutex(o, p[1]);
  /* 1. waiting (p0 granted, p1 behind a plain holder) when the session
   * expires: the default session is re-established (zkl/session.h:
   * reestablish = 1), so the multi-lock queues again on the new one */
  ck_assert_int_eq(zkl_mutex_lock(mx), 0);
  struct waiter w = {.m = ml(s, p, 2), .timeout = 20000};
  pthread_t th;
  pthread_create(&th, NULL, wait_thread, &w);
  ck_assert_int_eq(it_wait_children(o, p[0], 1, 5000), 1);
  ck_assert_int_eq(it_wait_children(o, p[1], 2, 5000), 1);
  char old0[1024];
  ck_assert(ml_child(o, p[0], 0, old0, sizeof old0));
  int64_t old_czxid = ml_czxid(o, old0);
  int64_t old = zkl_session_id(s);
  usleep(100 * 1000);
  ml_expire(s, "waiting");
  int64_t now = wait_new_session(s, old);
  /* queued again on the new session: p0 granted again, p1 behind */
  int requeued = 0;
  char again[1024];
  for (int64_t end = it_now_ms() + 10000; it_now_ms() < end && !requeued;) {
    requeued = ml_child(o, p[0], 0, again, sizeof again) &&
               it_owner_of(o, again) == now &&
               it_children(o, p[1], NULL) == 2;
    if (!requeued) it_sleep_ms(10);
  }
  ck_assert_msg(requeued, "no new nodes on the new session 0x%llx",
                (unsigned long long)now);
  ck_assert_int_eq(atomic_load(&w.done), 0);
  ck_assert_int_eq(zkl_mutex_unlock(mx), 0);
  pthread_join(th, NULL);
  ck_assert_msg(atomic_load(&w.rc) == 0, "timedlock after the expiry: %s",
                it_code(atomic_load(&w.rc)));
  ck_assert_int_eq(zkl_multilock_holding(w.m), 1);
  uint64_t t = ml_check_held(o, w.m, p, 2);
  ck_assert(t > (uint64_t)old_czxid);
  for (int i = 0; i < 2; i++) {
    char node[1024];
    ck_assert_int_eq(zkl_multilock_node(w.m, (size_t)i, node, sizeof node),
                     0);
    ck_assert(it_owner_of(o, node) == now);
  }
  /* 2. held when the session expires: ELOST from holding() and unlock(),
   * nothing left on the server; the object can lock again afterwards */
  ml_expire(s, "held");
  ck_assert_int_eq(zkl_multilock_holding(w.m), ZKL_ELOST);
  wait_new_session(s, now);
  ck_assert_int_eq(zkl_multilock_holding(w.m), ZKL_ELOST);
  ck_assert_int_eq(it_wait_children(o, p[0], 0, 5000), 1);
  ck_assert_int_eq(it_wait_children(o, p[1], 0, 5000), 1);
  ck_assert_int_eq(zkl_multilock_unlock(w.m), ZKL_ELOST);
  ck_assert_int_eq(zkl_multilock_holding(w.m), 0);
  ck_assert_int_eq(zkl_multilock_unlock(w.m), ZKL_EPERM);
  uint64_t tok;
  ck_assert_int_eq(zkl_multilock_token(w.m, 0, &tok), ZKL_EPERM);
  ck_assert_int_eq(it_children(o, p[0], NULL), 0);
  ck_assert_int_eq(it_children(o, p[1], NULL), 0);
  ck_assert_int_eq(zkl_multilock_lock(w.m), 0);
  ck_assert_uint_gt(ml_check_held(o, w.m, p, 2), t);
  ck_assert_int_eq(zkl_multilock_unlock(w.m), 0);
  zkl_multilock_destroy(w.m);
  /* 3. a session that is not re-established (reestablish = 0): the
   * waiting multi-lock ends with ZKL_ELOST, nothing of it left */
  zkl_session_t *f = it_session_final(10000);
  ck_assert_int_eq(zkl_mutex_lock(mx), 0);
  struct waiter wf = {.m = ml(f, p, 2), .timeout = 20000};
  pthread_create(&th, NULL, wait_thread, &wf);
  ck_assert_int_eq(it_wait_children(o, p[0], 1, 5000), 1);
  ck_assert_int_eq(it_wait_children(o, p[1], 2, 5000), 1);
  usleep(100 * 1000);
  int64_t t0 = it_now_ms();
  it_expire_session(f);
  int64_t t1 = it_now_ms();
  pthread_join(th, NULL);
  int64_t t2 = it_now_ms();
  printf("ml_session_expiry: final session expired in %lld ms, the wait "
         "ended %lld ms later\n", (long long)(t1 - t0), (long long)(t2 - t1));
  fflush(stdout);
  ck_assert_msg(atomic_load(&wf.rc) == ZKL_ELOST, "timedlock on a final "
                "session that expired: %s", it_code(atomic_load(&wf.rc)));
  ck_assert_int_lt(t2 - t1, 5000); /* LOST ends the wait, not its deadline */
  ck_assert_int_eq(zkl_multilock_holding(wf.m), 0);
  ck_assert_int_eq(it_wait_children(o, p[0], 0, 5000), 1);
  ck_assert_int_eq(it_children(o, p[1], NULL), 1);
  ck_assert_int_eq(zkl_multilock_lock(wf.m), ZKL_ELOST); /* LOST is final */
  zkl_multilock_destroy(wf.m);
  ck_assert_int_eq(zkl_mutex_unlock(mx), 0);
  ck_assert_int_eq(it_children(o, p[1], NULL), 0);
  zkl_mutex_destroy(mx);
  zkl_session_close(f);
  zkl_session_close(s);
  zkl_session_close(o);
}
END_TEST

/* ---- async ------------------------------------------------------------ */

/* Runs the session's loop until *done is nonzero or timeout_ms passed;
 * whether *done came. */
static int ml_loop_until(zkl_session_t *s, const int *done, int timeout_ms) {
  int64_t end = it_now_ms() + timeout_ms;
  int fd = zkl_session_fd(s);
  ck_assert_int_ge(fd, 0);
  while (!*done) {
    int64_t left = end - it_now_ms();
    if (left <= 0) return 0;
    struct pollfd pf = {fd, POLLIN, 0};
    int n = poll(&pf, 1, (int)left);
    ck_assert_int_ge(n, 0);
    if (n == 1) ck_assert_int_ge(zkl_session_dispatch(s), 0);
  }
  return 1;
}

typedef struct ml_got {
  int n, rc;
  void *obj;
  uint64_t token;
} ml_got_t;

static void ml_record(void *obj, int rc, uint64_t token, void *arg) {
  ml_got_t *g = arg;
  g->n++;
  g->rc = rc;
  g->obj = obj;
  g->token = token;
}

typedef struct ml_chain {
  zkl_multilock_t *pending;
  ml_got_t other;
  int action; /* 0 cancel, 1 destroy */
  int action_rc;
} ml_chain_t;

static void ml_chain_cb(void *obj, int rc, uint64_t token, void *arg) {
  ml_chain_t *c = arg;
  ml_record(obj, rc, token, &c->other);
  if (c->action == 0) c->action_rc = zkl_multilock_cancel(c->pending);
  else zkl_multilock_destroy(c->pending);
}

START_TEST(ml_async) {
  char root[128], b[3][160], qb[1][160];
  const char *p[3], *q[1];
  it_root(root, sizeof root, "ml-async");
  ml_paths(root, 3, b, p);
  snprintf(qb[0], sizeof qb[0], "%s/q", root);
  q[0] = qb[0];
  zkl_session_t *s = it_session(), *h = it_session();
  zkl_multilock_t *m = ml(s, p, 3);
  ml_got_t g = {0}, u = {0};
  /* lock, a second lock refused, tokens, unlock */
  ck_assert_int_eq(zkl_multilock_unlock_async(m, ml_record, &u), ZKL_EPERM);
  ck_assert_int_eq(zkl_multilock_lock_async(m, -1, ml_record, &g), 0);
  ck_assert_int_eq(g.n, 0); /* never from inside the call */
  ck_assert_int_eq(zkl_multilock_lock_async(m, -1, ml_record, &g), ZKL_EBUSY);
  ck_assert(ml_loop_until(s, &g.n, 10000));
  ck_assert_int_eq(g.rc, 0);
  ck_assert_ptr_eq(g.obj, m);
  ck_assert(g.token > 0);
  ck_assert_int_eq(zkl_multilock_holding(m), 1);
  for (size_t i = 0; i < 3; i++) {
    uint64_t t = 0;
    ck_assert_int_eq(zkl_multilock_token(m, i, &t), 0);
    ck_assert_msg(t == g.token, "token %zu: %llu, completion's %llu", i,
                  (unsigned long long)t, (unsigned long long)g.token);
  }
  ck_assert(ml_check_held(h, m, p, 3) == g.token);
  /* a lock while held: refused at once, or accepted and completed with
   * timedlock's code for it (EBUSY, token 0); the hold stands either way */
  ml_got_t again = {0};
  int arc = zkl_multilock_lock_async(m, -1, ml_record, &again);
  ck_assert_msg(arc == 0 || arc == ZKL_EBUSY, "lock_async while held: %s",
                it_code(arc));
  if (arc == 0) {
    ck_assert(ml_loop_until(s, &again.n, 10000));
    ck_assert_int_eq(again.rc, ZKL_EBUSY);
    ck_assert_int_eq(again.token, 0);
  }
  ck_assert_int_eq(zkl_multilock_holding(m), 1);
  ck_assert(ml_check_held(h, m, p, 3) == g.token);
  ck_assert_int_eq(zkl_multilock_unlock_async(m, ml_record, &u), 0);
  ck_assert(ml_loop_until(s, &u.n, 10000));
  ck_assert_int_eq(u.rc, 0);
  ck_assert_int_eq(u.n, 1);
  ck_assert_int_eq(u.token, 0);
  ck_assert_int_eq(g.n, 1);
  ck_assert_int_eq(zkl_multilock_holding(m), 0);
  for (int i = 0; i < 3; i++) ck_assert_int_eq(it_children(h, p[i], NULL), 0);
  ck_assert_int_eq(zkl_multilock_unlock_async(m, ml_record, &u), ZKL_EPERM);
  /* a second lock_async while one is pending (blocked behind a holder) */
  zkl_mutex_t *hm = it_mutex(h, p[1]);
  ck_assert_int_eq(zkl_mutex_lock(hm), 0);
  memset(&g, 0, sizeof g);
  ck_assert_int_eq(zkl_multilock_lock_async(m, -1, ml_record, &g), 0);
  ck_assert(it_wait_children(h, p[1], 2, 5000));
  ck_assert_int_eq(zkl_multilock_lock_async(m, -1, ml_record, &g), ZKL_EBUSY);
  ck_assert_int_eq(zkl_multilock_unlock_async(m, ml_record, &u), ZKL_EPERM);
  ck_assert_int_eq(zkl_mutex_unlock(hm), 0);
  ck_assert(ml_loop_until(s, &g.n, 10000));
  ck_assert_int_eq(g.rc, 0);
  ck_assert(ml_check_held(h, m, p, 3) == g.token);
  memset(&u, 0, sizeof u);
  ck_assert_int_eq(zkl_multilock_unlock_async(m, ml_record, &u), 0);
  ck_assert(ml_loop_until(s, &u.n, 10000));
  ck_assert_int_eq(u.rc, 0);
  /* a timed lock_async: ETIMEDOUT, token 0, nothing left */
  ck_assert_int_eq(zkl_mutex_lock(hm), 0);
  memset(&g, 0, sizeof g);
  int64_t t0 = it_now_ms();
  ck_assert_int_eq(zkl_multilock_lock_async(m, 300, ml_record, &g), 0);
  ck_assert(ml_loop_until(s, &g.n, 10000));
  ck_assert_int_eq(g.rc, ZKL_ETIMEDOUT);
  ck_assert_int_ge(it_now_ms() - t0, 280);
  ck_assert_int_eq(g.token, 0);
  ck_assert_int_eq(it_children(h, p[0], NULL), 0);
  ck_assert_int_eq(it_children(h, p[1], NULL), 1);
  ck_assert_int_eq(it_children(h, p[2], NULL), 0);
  /* destroy with a pending lock_async: ECANCELED at dispatch, no node */
  memset(&g, 0, sizeof g);
  ck_assert_int_eq(zkl_multilock_lock_async(m, -1, ml_record, &g), 0);
  ck_assert(it_wait_children(h, p[1], 2, 5000));
  void *was = m;
  zkl_multilock_destroy(m);
  ck_assert(ml_loop_until(s, &g.n, 10000));
  ck_assert_int_eq(g.rc, ZKL_ECANCELED);
  ck_assert_ptr_eq(g.obj, was); /* the value only */
  ck_assert_int_eq(g.n, 1);
  ck_assert_int_eq(it_children(h, p[0], NULL), 0);
  ck_assert_int_eq(it_children(h, p[1], NULL), 1);
  ck_assert_int_eq(it_children(h, p[2], NULL), 0);
  ck_assert_int_eq(zkl_session_dispatch(s), 0);
  /* cancel from inside the completion of another object */
  ml_chain_t c = {0};
  ml_got_t pg = {0};
  c.pending = ml(s, p, 3);
  zkl_multilock_t *other = ml(s, q, 1);
  ck_assert_int_eq(zkl_multilock_lock_async(c.pending, -1, ml_record, &pg),
                   0);
  ck_assert(it_wait_children(h, p[1], 2, 5000));
  ck_assert(it_wait_children(h, p[0], 1, 5000));
  ck_assert_int_eq(zkl_multilock_lock_async(other, -1, ml_chain_cb, &c), 0);
  ck_assert(ml_loop_until(s, &pg.n, 10000));
  ck_assert_int_eq(c.other.n, 1);
  ck_assert_int_eq(c.other.rc, 0);
  ck_assert_int_eq(c.action_rc, 0);
  ck_assert_int_eq(pg.rc, ZKL_ECANCELED);
  ck_assert_int_eq(pg.n, 1);
  ck_assert_int_eq(zkl_multilock_holding(c.pending), 0);
  ck_assert_int_eq(it_children(h, p[0], NULL), 0);
  ck_assert_int_eq(it_children(h, p[1], NULL), 1);
  ck_assert_int_eq(it_children(h, p[2], NULL), 0);
  memset(&u, 0, sizeof u);
  ck_assert_int_eq(zkl_multilock_unlock_async(other, ml_record, &u), 0);
  ck_assert(ml_loop_until(s, &u.n, 10000));
  ck_assert_int_eq(u.rc, 0);
  ck_assert_int_eq(it_children(h, q[0], NULL), 0);
  /* ... and destroy from inside it */
  memset(&pg, 0, sizeof pg);
  memset(&c.other, 0, sizeof c.other);
  c.action = 1;
  ck_assert_int_eq(zkl_multilock_lock_async(c.pending, -1, ml_record, &pg),
                   0);
  ck_assert(it_wait_children(h, p[1], 2, 5000));
  ck_assert_int_eq(zkl_multilock_lock_async(other, -1, ml_chain_cb, &c), 0);
  ck_assert(ml_loop_until(s, &pg.n, 10000));
  ck_assert_int_eq(c.other.rc, 0);
  ck_assert_int_eq(pg.rc, ZKL_ECANCELED);
  ck_assert_int_eq(pg.n, 1);
  ck_assert_int_eq(it_children(h, p[0], NULL), 0);
  ck_assert_int_eq(it_children(h, p[1], NULL), 1);
  ck_assert_int_eq(zkl_session_dispatch(s), 0);
  ck_assert_int_eq(zkl_multilock_unlock(other), 0);
  zkl_multilock_destroy(other);
  ck_assert_int_eq(zkl_mutex_unlock(hm), 0);
  for (int i = 0; i < 3; i++) ck_assert_int_eq(it_children(h, p[i], NULL), 0);
  ck_assert_int_eq(it_children(h, q[0], NULL), 0);
  zkl_mutex_destroy(hm);
  zkl_session_close(s);
  zkl_session_close(h);
}
END_TEST

/* ---- all or none: try and timed ---------------------------------------- */

START_TEST(ml_try_all_or_none) {
  char root[128], b[4][160];
  const char *p[4];
  it_root(root, sizeof root, "ml-try");
  ml_paths(root, 4, b, p);
  zkl_session_t *s = it_session(), *o = it_session();
  zkl_mutex_t *h2 = it_mutex(o, p[2]), *m0 = it_mutex(o, p[0]);
  ck_assert_int_eq(zkl_mutex_lock(h2), 0);
  zkl_multilock_t *m = ml(s, p, 4);
  ck_assert_int_eq(zkl_multilock_trylock(m), ZKL_EBUSY);
  ck_assert_int_eq(zkl_multilock_holding(m), 0);
  for (int i = 0; i < 4; i++)
    ck_assert_int_eq(it_children(o, p[i], NULL), i == 2 ? 1 : 0);
  /* timed: p0, p1, p3 granted meanwhile (a plain try on p0 is busy), and
   * all given up at the deadline */
  struct waiter w = {.m = m, .timeout = 300};
  pthread_t th;
  int64_t t0 = it_now_ms();
  pthread_create(&th, NULL, wait_thread, &w);
  /* its nodes appear at once (unless the machine is very slow) */
  while (!atomic_load(&w.done) &&
         (it_children(o, p[0], NULL) != 1 || it_children(o, p[3], NULL) != 1))
    it_sleep_ms(2);
  int busy = zkl_mutex_trylock(m0);
  int64_t seen = it_now_ms() - t0;
  if (seen >= 250)
    printf("ml_try_all_or_none: nodes seen only after %lld ms: the grant "
           "meanwhile is not checked\n", (long long)seen);
  pthread_join(th, NULL);
  int64_t took = it_now_ms() - t0;
  ck_assert_msg(atomic_load(&w.rc) == ZKL_ETIMEDOUT, "timedlock: %s",
                it_code(atomic_load(&w.rc)));
  ck_assert_msg(took >= 280 && took < 3000, "timed out after %lld ms",
                (long long)took);
  if (seen < 250)
    ck_assert_msg(busy == ZKL_EBUSY, "p0 not granted to the multi-lock "
                  "%lld ms into its wait: %s", (long long)seen,
                  it_code(busy));
  else if (busy == 0)
    ck_assert_int_eq(zkl_mutex_unlock(m0), 0);
  ck_assert_int_eq(zkl_multilock_holding(m), 0);
  for (int i = 0; i < 4; i++)
    ck_assert_int_eq(it_children(o, p[i], NULL), i == 2 ? 1 : 0);
  ck_assert_int_eq(zkl_mutex_trylock(m0), 0); /* p0 free right after */
  ck_assert_int_eq(zkl_mutex_unlock(m0), 0);
  /* timedlock(0) is a try */
  ck_assert_int_eq(zkl_multilock_timedlock(m, 0), ZKL_EBUSY);
  for (int i = 0; i < 4; i++)
    ck_assert_int_eq(it_children(o, p[i], NULL), i == 2 ? 1 : 0);
  /* once p2 is free the try takes all four */
  ck_assert_int_eq(zkl_mutex_unlock(h2), 0);
  ck_assert_int_eq(zkl_multilock_trylock(m), 0);
  ml_check_held(o, m, p, 4);
  ck_assert_int_eq(zkl_multilock_trylock(m), ZKL_EBUSY); /* held already */
  ck_assert_int_eq(zkl_multilock_unlock(m), 0);
  for (int i = 0; i < 4; i++) ck_assert_int_eq(it_children(o, p[i], NULL), 0);
  zkl_multilock_destroy(m);
  zkl_mutex_destroy(h2);
  zkl_mutex_destroy(m0);
  zkl_session_close(s);
  zkl_session_close(o);
}
END_TEST

/* ---- bad input --------------------------------------------------------- */

static void bad_create(zkl_session_t *s, const char *const *paths, size_t n,
                       const zkl_multilock_opts_t *o, const char *what) {
  zkl_multilock_t *m = (zkl_multilock_t *)s; /* not NULL before */
  int rc = zkl_multilock_create(&m, s, paths, n, o);
  ck_assert_msg(rc == ZKL_EINVAL, "%s: %s", what, it_code(rc));
  ck_assert_msg(m == NULL, "%s: *out not NULL", what);
  ck_assert_msg(zkl_last_error()[0] != '\0', "%s: no message", what);
}

START_TEST(ml_bad_input) {
  char root[128], b[ZKL_MULTILOCK_MAX + 1][160];
  const char *p[ZKL_MULTILOCK_MAX + 1];
  it_root(root, sizeof root, "ml-bad");
  ml_paths(root, ZKL_MULTILOCK_MAX + 1, b, p);
  zkl_session_t *s = it_session();
  zkl_multilock_t *m = NULL;
  ck_assert_int_eq(zkl_multilock_create(NULL, s, p, 2, NULL), ZKL_EINVAL);
  ck_assert(zkl_last_error()[0] != '\0');
  m = (zkl_multilock_t *)s;
  ck_assert_int_eq(zkl_multilock_create(&m, NULL, p, 2, NULL), ZKL_EINVAL);
  ck_assert_ptr_null(m);
  ck_assert(zkl_last_error()[0] != '\0');
  bad_create(s, NULL, 2, NULL, "paths NULL");
  bad_create(s, p, 0, NULL, "n 0");
  bad_create(s, p, ZKL_MULTILOCK_MAX + 1, NULL, "n MAX+1");
  const char *bad[] = {"no-slash", "/a/", "", "/", "//a", "/zookeeper/x"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const char *two[2] = {p[0], bad[i]};
    char what[64];
    snprintf(what, sizeof what, "path \"%s\"", bad[i]);
    bad_create(s, two, 2, NULL, what);
    bad_create(s, &bad[i], 1, NULL, what);
  }
  const char *twice[3] = {p[0], p[1], p[0]};
  bad_create(s, twice, 3, NULL, "a path twice");
  const char *hole[3] = {p[0], NULL, p[1]};
  bad_create(s, hole, 3, NULL, "a NULL entry");
  const char *hole0[2] = {NULL, p[1]};
  bad_create(s, hole0, 2, NULL, "a NULL first entry");
  zkl_multilock_opts_t o;
  zkl_multilock_opts_init(&o);
  static char big[2000];
  o.data = big;
  o.data_len = sizeof big;
  bad_create(s, p, 2, &o, "data_len 2000");
  o.data = NULL;
  o.data_len = 3;
  bad_create(s, p, 2, &o, "data_len without data");
  /* NULL object */
  ml_got_t g = {0};
  uint64_t t;
  char buf[1024];
  ck_assert_int_eq(zkl_multilock_lock(NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_multilock_trylock(NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_multilock_timedlock(NULL, 10), ZKL_EINVAL);
  ck_assert_int_eq(zkl_multilock_unlock(NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_multilock_lock_async(NULL, -1, ml_record, &g),
                   ZKL_EINVAL);
  ck_assert_int_eq(zkl_multilock_unlock_async(NULL, ml_record, &g),
                   ZKL_EINVAL);
  ck_assert_int_eq(zkl_multilock_cancel(NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_multilock_holding(NULL), ZKL_EINVAL);
  ck_assert_uint_eq(zkl_multilock_count(NULL), 0);
  ck_assert_int_eq(zkl_multilock_token(NULL, 0, &t), ZKL_EINVAL);
  ck_assert_int_eq(zkl_multilock_node(NULL, 0, buf, sizeof buf), ZKL_EINVAL);
  zkl_multilock_destroy(NULL);
  zkl_multilock_opts_init(NULL);
  /* a good object: ranges, buffers, callbacks */
  o.data = "xyz";
  o.data_len = 3;
  m = NULL;
  ck_assert_int_eq(zkl_multilock_create(&m, s, p, 2, &o), 0);
  ck_assert_uint_eq(zkl_multilock_count(m), 2);
  ck_assert_int_eq(zkl_multilock_token(m, 0, &t), ZKL_EPERM);
  ck_assert_int_eq(zkl_multilock_node(m, 0, buf, sizeof buf), ZKL_EPERM);
  ck_assert_int_eq(zkl_multilock_token(m, 2, &t), ZKL_EINVAL);
  ck_assert_int_eq(zkl_multilock_node(m, 2, buf, sizeof buf), ZKL_EINVAL);
  ck_assert_int_eq(zkl_multilock_lock_async(m, -1, NULL, &g), ZKL_EINVAL);
  ck_assert_int_eq(zkl_multilock_unlock_async(m, NULL, &g), ZKL_EINVAL);
  ck_assert_int_eq(zkl_multilock_lock(m), 0);
  ck_assert_int_eq(zkl_multilock_token(m, 2, &t), ZKL_EINVAL);
  ck_assert_int_eq(zkl_multilock_token(m, (size_t)-1, &t), ZKL_EINVAL);
  ck_assert_int_eq(zkl_multilock_token(m, 0, NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_multilock_node(m, 2, buf, sizeof buf), ZKL_EINVAL);
  ck_assert_int_eq(zkl_multilock_node(m, 0, buf, 4), ZKL_EINVAL);
  ck_assert_int_eq(zkl_multilock_node(m, 0, NULL, sizeof buf), ZKL_EINVAL);
  ck_assert_int_eq(zkl_multilock_node(m, 1, buf, sizeof buf), 0);
  /* the data given is every node's data */
  for (int i = 0; i < 2; i++) {
    char data[16];
    int len = sizeof data;
    ck_assert_int_eq(zkl_multilock_node(m, (size_t)i, buf, sizeof buf), 0);
    ck_assert_int_eq(zoo_get(zkl_session_zhandle(s), buf, 0, data, &len,
                             NULL),
                     ZOK);
    ck_assert(len == 3 && memcmp(data, "xyz", 3) == 0);
  }
  ck_assert_int_eq(zkl_multilock_lock_async(m, -1, NULL, &g), ZKL_EINVAL);
  ck_assert_int_eq(zkl_multilock_unlock(m), 0);
  ck_assert_int_eq(zkl_session_dispatch(s), 0);
  ck_assert_int_eq(g.n, 0);
  zkl_multilock_destroy(m);
  zkl_session_close(s);
}
END_TEST

/* ZKL_MULTILOCK_MAX paths, none of which exists yet: the first lock makes
 * every missing one (zkl/multilock.h: "missing parents are made on the
 * first lock"), all held in one transaction. */
START_TEST(ml_max_fresh_paths) {
  char root[128], b[ZKL_MULTILOCK_MAX][160];
  const char *p[ZKL_MULTILOCK_MAX];
  it_root(root, sizeof root, "ml-max");
  ml_paths(root, ZKL_MULTILOCK_MAX, b, p);
  zkl_session_t *s = it_session();
  zkl_multilock_t *m = ml(s, p, ZKL_MULTILOCK_MAX);
  ck_assert_uint_eq(zkl_multilock_count(m), ZKL_MULTILOCK_MAX);
  int64_t t0 = it_now_ms();
  int rc = zkl_multilock_timedlock(m, 20000);
  ck_assert_msg(rc == 0, "lock on %d fresh paths: %s (%s) after %lld ms",
                ZKL_MULTILOCK_MAX, it_code(rc), zkl_last_error(),
                (long long)(it_now_ms() - t0));
  ml_check_held(s, m, p, ZKL_MULTILOCK_MAX);
  ck_assert_int_eq(zkl_multilock_unlock(m), 0);
  for (int i = 0; i < ZKL_MULTILOCK_MAX; i++)
    ck_assert_int_eq(it_children(s, p[i], NULL), 0);
  zkl_multilock_destroy(m);
  zkl_session_close(s);
}
END_TEST

Suite *multilock_suite(void) {
  Suite *su = suite_create("multilock");
  TCase *tc = it_tcase("multilock");
  tcase_add_test(tc, ml_basic);
  tcase_add_test(tc, ml_waits_and_cancel);
  tcase_add_test(tc, ml_vanished_requeues);
  tcase_add_test(tc, ml_vanished_waiting_requeues);
  tcase_add_test(tc, ml_async);
  tcase_add_test(tc, ml_try_all_or_none);
  tcase_add_test(tc, ml_bad_input);
  tcase_add_test(tc, ml_max_fresh_paths);
  suite_add_tcase(su, tc);
  /* three forced expiries: it_expire_session() alone may take 15 s each on
   * a loaded machine (a retry) */
  tc = it_tcase("expiry");
  tcase_set_timeout(tc, 2 * IT_TIMEOUT);
  tcase_add_test(tc, ml_session_expiry);
  suite_add_tcase(su, tc);
  tc = it_tcase("reversed");
  tcase_add_test(tc, ml_reversed_no_deadlock);
  suite_add_tcase(su, tc);
  return su;
}
