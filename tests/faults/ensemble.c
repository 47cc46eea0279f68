/* tests/faults/ensemble.c - the checker workload on a real 3-node
 * ensemble (tests/with-zookeeper with ZKL_TEST_ENSEMBLE=1), with one fault
 * injected through the harness per run while it works, and the program's
 * main(), which runs the fault suites.
 *
 * Worker processes loop lock -> critical section -> unlock on one mutex,
 * on one read/write lock (a third of them writers), or lead in turn as
 * election candidates, logging every grant, every warning and every exit
 * to a shared log (common.c), which the checker then judges: no two
 * holders overlap unless the earlier one had been told before the overlap
 * began; tokens strictly increase in order of grant; no contender node is
 * left; the lock is acquirable again.  A table row per scenario is
 * printed. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "faults.h"

#define WORKERS 3
#define SESSION_MS 4000

struct shared {
  pid_t pids[WORKERS];
  int holder; /* who is in the critical section now, -1: nobody */
};

static struct shared *sh;
static struct fc_log *lg;

static int worker(fc_kind_t kind, int who, const char *path, int64_t until) {
  fc_worker_is(lg, 0, who);
  zkl_session_t *s = fc_session(it_hosts(), SESSION_MS);
  fc_held_t h = {.kind = kind, .log = lg, .lane = 0, .who = who};
  if (s == NULL || fc_held_make(&h, s, path) != 0) return 2;
  unsigned seed = (unsigned)who * 7919u + 3;
  while (it_now_ms() < until) {
    int shared = kind == K_RWLOCK && rand_r(&seed) % 3 != 0;
    int rc = fc_held_take(&h, shared, 1000);
    if (rc == ZKL_ELOST) { /* a new session, as an application would */
      fc_held_free(&h);
      zkl_session_close(s);
      if ((s = fc_session(it_hosts(), SESSION_MS)) == NULL ||
          fc_held_make(&h, s, path) != 0)
        return 3;
      continue;
    }
    if (rc != 0) continue;
    if (!shared) __atomic_store_n(&sh->holder, who, __ATOMIC_SEQ_CST);
    fc_held_work(&h, shared, 20);
    if (!shared) __atomic_store_n(&sh->holder, -1, __ATOMIC_SEQ_CST);
  }
  fc_held_free(&h);
  zkl_session_close(s);
  return 0;
}

typedef enum { F_KILL_HOLDER, F_KILL_LEADER, F_PAUSE_FOLLOWER, F_RESTART_ALL } fault_t;
static const char *fault_names[] = {"holder SIGKILLed", "ZooKeeper leader killed",
                                    "one follower paused",
                                    "full ensemble restart"};

/* Injects the fault; returns when it took effect (us): the kill, the
 * pause, the last server down. */
static int64_t inject(fault_t f) {
  int64_t at = 0;
  switch (f) {
    case F_KILL_HOLDER: {
      int who = -1;
      for (int i = 0; i < 200 && who < 0; i++) {
        who = __atomic_load_n(&sh->holder, __ATOMIC_SEQ_CST);
        if (who < 0) usleep(2000);
      }
      ck_assert_int_ge(who, 0);
      kill(sh->pids[who], SIGKILL);
      fc_add(lg, R_KILLED, 0, who, 0, 0);
      at = fc_now_us();
      break;
    }
    case F_KILL_LEADER: {
      int id = fc_leader_id();
      ck_assert_int_gt(id, 0);
      fc_harness("kill", id);
      at = fc_now_us();
      it_sleep_ms(2000);
      fc_harness("restart", id);
      break;
    }
    case F_PAUSE_FOLLOWER: {
      int id = fc_leader_id() % 3 + 1; /* a follower */
      fc_harness("pause", id);
      at = fc_now_us();
      it_sleep_ms(SESSION_MS + 1000);
      fc_harness("resume", id);
      break;
    }
    case F_RESTART_ALL:
      for (int id = 1; id <= 3; id++) fc_harness("kill", id);
      at = fc_now_us();
      it_sleep_ms(1000);
      for (int id = 1; id <= 3; id++)
        fc_harness_env("ZKH_NO_WAIT=1", "restart", id);
      fc_harness("wait-ready", 0);
      break;
  }
  return at;
}

/* The first grant after t_us, or -1. */
static int64_t first_entry_after(int64_t t_us) {
  int n = __atomic_load_n(&lg->n, __ATOMIC_SEQ_CST);
  for (int k = 0; k < n && k < FC_MAXREC; k++)
    if (lg->r[k].type == R_ENTER && lg->r[k].t_us > t_us) return lg->r[k].t_us;
  return -1;
}

START_TEST(checker_under_fault) {
  const char *only = getenv("ZKL_CHECKER_RUN"); /* reproduce one run */
  if (only != NULL && atoi(only) != _i) return;
  if (_i == 0 || only != NULL) { /* the table's head, once */
    printf("\nChecker workload: %d workers, session timeout %d ms, one "
           "fault per run\n", WORKERS, SESSION_MS);
    printf("| %-8s | %-24s | %5s | %10s | %7s | %9s |\n", "recipe", "fault",
           "holds", "violations", "orphans", "next hold");
    printf("|----------|--------------------------|-------|------------|"
           "---------|-----------|\n");
    fflush(stdout); /* before the fork: no copy of it in the workers */
  }
  fault_t f = (fault_t)(_i % 4);
  fc_kind_t kind = (fc_kind_t)(_i / 4);
  char path[128];
  it_root(path, sizeof path, "ensemble");
  sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ck_assert(sh != MAP_FAILED);
  memset(sh, 0, sizeof *sh);
  sh->holder = -1;
  lg = fc_log_new();
  /* a full restart takes the JVMs' start, and the sessions of before it
   * live on the restarted ensemble until they expire (their nodes block
   * the queue until then): give the run time to see holds again */
  int64_t start = it_now_ms(),
          until = start + (f == F_RESTART_ALL ? 10000 + 2 * SESSION_MS : 10000);
  for (int i = 0; i < WORKERS; i++) { /* fork before any session */
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) _exit(worker(kind, i, path, until));
    sh->pids[i] = pid;
  }
  it_sleep_ms(2500);
  int64_t fault_at = inject(f);
  for (int i = 0; i < WORKERS; i++) {
    int status;
    waitpid(sh->pids[i], &status, 0);
    if (f != F_KILL_HOLDER)
      ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                    "worker %d: status %d", i, status);
  }

  fc_verdict_t v;
  fc_check(lg, 0, &v);
  int64_t next_after_fault = first_entry_after(fault_at);
  /* no node left once the dead sessions are gone; acquirable again */
  zkl_session_t *s = it_session();
  int orphans = fc_orphans(s, path, 10000);
  fc_held_t h = {.kind = kind, .log = lg, .lane = 1, .who = 99};
  ck_assert_int_eq(fc_held_make(&h, s, path), 0);
  int again = fc_held_take(&h, 0, 1000);
  if (again == 0) fc_held_work(&h, 0, 0);
  fc_held_free(&h);
  zkl_session_close(s);

  printf("| %-8s | %-24s | %5d | %10d | %7d | %6" PRId64 " ms |\n",
         fc_kind_names[kind], fault_names[f], v.entries, v.violations,
         orphans,
         next_after_fault < 0 ? -1 : (next_after_fault - fault_at) / 1000);
  fflush(stdout);
  ck_assert_msg(v.violations == 0, "%d violations; the first: %s",
                v.violations, v.first);
  ck_assert_int_eq(orphans, 0);
  ck_assert_int_eq(again, 0);
  ck_assert_int_gt(v.entries, 10);
  ck_assert_int_ge(next_after_fault, 0);
  munmap(sh, sizeof *sh);
  fc_log_free(lg);
}
END_TEST

Suite *checker_suite(void) {
  Suite *su = suite_create("ensemble-faults");
  TCase *tc = tcase_create("checker");
  tcase_set_timeout(tc, 90);
  tcase_add_loop_test(tc, checker_under_fault, 0, 12); /* 3 recipes x 4 */
  suite_add_tcase(su, tc);
  return su;
}

/* ZKL_FAULTS names the suites to run (checker, paused, nemesis, queue,
 * counter, semaphore, multilock; default: all of them). */
static int wanted(const char *name) {
  const char *w = getenv("ZKL_FAULTS");
  if (w == NULL || w[0] == '\0') return 1;
  size_t n = strlen(name);
  for (const char *p = w; (p = strstr(p, name)) != NULL; p += n)
    if ((p == w || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
      return 1;
  return 0;
}

int main(void) {
  if (getenv("ZKL_TEST_ENSEMBLE_DIR") == NULL) {
    /* an ensemble named by ZKL_TEST_HOSTS cannot be faulted from here */
    fprintf(stderr, "SKIP: needs the harness's own ensemble "
                    "(ZKL_TEST_ENSEMBLE=1 tests/with-zookeeper)\n");
    return getenv("ZKL_TEST_HOSTS") != NULL && getenv("CI") == NULL ? 77 : 99;
  }
  zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
  printf("3-node ensemble at %s\n\n", getenv("ZKL_TEST_HOSTS"));
  SRunner *sr = NULL;
  Suite *(*suites[])(void) = {checker_suite, paused_suite, nemesis_suite,
                              queue_suite, counter_faults_suite,
                              semaphore_faults_suite,
                              multilock_faults_suite};
  const char *names[] = {"checker", "paused", "nemesis", "queue", "counter",
                         "semaphore", "multilock"};
  for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++) {
    if (!wanted(names[i])) continue;
    if (sr == NULL) sr = srunner_create(suites[i]());
    else srunner_add_suite(sr, suites[i]());
  }
  if (sr == NULL) return 99;
  srunner_set_fork_status(sr, CK_FORK); /* each scenario in its own process */
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
