/* tests/faults/paused.c - a waiter paused past its session timeout while
 * its turn comes must never be granted on the lost session.
 *
 * Each lane is one lock path: A holds, the victim B queues behind A, and
 * (but for the election) C queues behind B.  B is stopped (SIGSTOP) once
 * it has been queued for 150 ms; A then releases (an election leader
 * resigns and stands again, behind B), so the wake-up waits in B's socket
 * while its session expires and C (or A again) is granted with a larger
 * token.  B is resumed after twice its session timeout.  The checker (common.c)
 * then finds any grant B got on its lost session: it overlaps the new
 * holder's and its token is lower.  B must make progress again (hold on
 * its new session), a timed B whose deadline passed during the pause must
 * fail with ZKL_ETIMEDOUT, and no node may be left.  All the lanes of a
 * round run at once (the async lane's workers take and release with the
 * async calls in a poll loop, so the grant's check at dispatch is tried
 * too); ZKL_PAUSED_ROUNDS sets the rounds (default 4) and
 * ZKL_PAUSED_LANES the lanes per scenario and round (default 5). */
#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "faults.h"

#define SESSION_MS 2000
#define PAUSE_MS (2 * SESSION_MS + 500)
#define TIMED_MS 1500 /* the timed victim's deadline passes in the pause */
#define MAXLANES 64

typedef enum {
  S_LOCK, S_TIMEDLOCK, S_WRLOCK, S_RDLOCK, S_ELECTION, S_ASYNC, S_COUNT
} scen_t;
static const char *scen_names[] = {"mutex lock()", "mutex timedlock()",
                                   "rwlock wrlock()", "rwlock rdlock()",
                                   "election, 2 candidates",
                                   "mutex lock_async()"};

enum { A, B, C, ROLES };
/* steps a worker reports */
enum { ST_START, ST_READY, ST_HOLDING, ST_DONE, ST_FAILED };

struct lane {
  scen_t scen;
  char path[128];
  pid_t pid[ROLES];
  /* the test's commands (atomic): take, release; A of an election
   * releases twice (it stands again between) */
  int go[ROLES], rel[ROLES], rel2;
  int step[ROLES]; /* atomic */
  int victim_rc;               /* the victim's first answer */
  int64_t victim_called_us, victim_returned_us;
  int resume_at;               /* log index of B's RESUME */
};

struct round {
  int nlanes;
  struct lane lane[MAXLANES];
};

static struct round *rd;
static struct fc_log *lg;


static fc_kind_t kind_of(scen_t s) {
  return s == S_ELECTION                  ? K_ELECTION
         : s == S_ASYNC                   ? K_ASYNC
         : s == S_WRLOCK || s == S_RDLOCK ? K_RWLOCK
                                          : K_MUTEX;
}


/* Takes until granted, opening a new session should the old one be lost
 * for good (it is not: reestablish is on). */
static int take_blocking(fc_held_t *h, int shared) {
  int rc = -1;
  for (int i = 0; i < 100 && rc != 0; i++) {
    rc = fc_held_take(h, shared, 20000);
    if (rc != 0 && i == 0)
      fprintf(stderr, "w%d: %s (%s)\n", h->who, zkl_strerror(rc),
              zkl_last_error());
    if (rc != 0) it_sleep_ms(100);
  }
  return rc;
}

static int role_main(int li, int role) {
  struct lane *ln = &rd->lane[li];
  int who = role;
  fc_worker_is(lg, li, who);
  zkl_session_t *s = fc_session(it_hosts(), SESSION_MS);
  fc_held_t h = {.kind = kind_of(ln->scen), .log = lg, .lane = li, .who = who};
  if (s == NULL || fc_held_make(&h, s, ln->path) != 0) return 2;
  fc_store(&ln->step[role], ST_READY);
  while (!fc_load(&ln->go[role])) usleep(1000);
  int shared = role == B && ln->scen == S_RDLOCK;
  int rc = 0;
  if (role == B) {
    int64_t timeout = ln->scen == S_TIMEDLOCK ? TIMED_MS : -1;
    ln->victim_called_us = fc_now_us();
    rc = fc_held_take(&h, shared, timeout);
    ln->victim_returned_us = fc_now_us();
    ln->victim_rc = rc;
    if (rc == 0) fc_held_work(&h, shared, 20);
    /* progress: it holds again on its (new) session */
    else if ((rc = take_blocking(&h, 0)) == 0) fc_held_work(&h, 0, 20);
  } else {
    rc = take_blocking(&h, 0);
    fc_store(&ln->step[role], ST_HOLDING);
    if (rc == 0) {
      fc_held_act(&h, 60000, &ln->rel[role]);
      fc_held_release(&h, 0);
    }
    if (rc == 0 && role == A && ln->scen == S_ELECTION) {
      /* stood again behind the victim: leads once its session is gone */
      rc = take_blocking(&h, 0);
      if (rc == 0) {
        fc_held_act(&h, 60000, &ln->rel2);
        fc_held_release(&h, 0);
      }
    }
  }
  fc_held_free(&h);
  zkl_session_close(s);
  fc_store(&ln->step[role], rc == 0 ? ST_DONE : ST_FAILED);
  return rc == 0 ? 0 : 3;
}

/* Waits until every lane's role has reached step `st`. */
static void await_step(int role, int st, int roles_of_election) {
  int64_t end = it_now_ms() + 60000;
  for (int i = 0; i < rd->nlanes; i++) {
    struct lane *ln = &rd->lane[i];
    if (role == C && !roles_of_election && ln->scen == S_ELECTION) continue;
    while (fc_load(&ln->step[role]) < st) {
      ck_assert_msg(it_now_ms() < end, "lane %d role %d: no step %d", i, role,
                    st);
      usleep(2000);
    }
  }
}

/* Waits until every lane's path has `want` contenders (election: want-1). */
static void await_queued(zkl_session_t *s, int want) {
  for (int i = 0; i < rd->nlanes; i++) {
    struct lane *ln = &rd->lane[i];
    int w = ln->scen == S_ELECTION && want == 3 ? 2 : want;
    ck_assert_msg(it_wait_children(s, ln->path, w, 30000),
                  "lane %d (%s): %d contenders never queued", i,
                  scen_names[ln->scen], w);
  }
}

/* Sets a command flag (at offset `off` in struct lane) in every lane, or
 * in the election lanes only. */
static void command(size_t off, int only_election) {
  for (int i = 0; i < rd->nlanes; i++)
    if (!only_election || rd->lane[i].scen == S_ELECTION)
      fc_store((int *)((char *)&rd->lane[i] + off), 1);
}
#define GO(r) offsetof(struct lane, go[r])
#define REL(r) offsetof(struct lane, rel[r])

START_TEST(paused_waiter_is_never_granted_on_a_lost_session) {
  if (_i == 0) { /* the table's head, once: a row per scenario and round */
    printf("\nPaused waiters: session timeout %d ms, paused %d ms while "
           "queued\n", SESSION_MS, PAUSE_MS);
    printf("| %-22s | %6s | %14s | %10s | %9s | %8s | %7s |\n", "scenario",
           "trials", "phantom grants", "violations", "progress", "timedout",
           "orphans");
    printf("|------------------------|--------|----------------|------------|"
           "-----------|----------|---------|\n");
    fflush(stdout); /* before the fork: no copy of it in the workers */
  }
  int lanes = fc_env_int("ZKL_PAUSED_LANES", 5);
  if (lanes * S_COUNT > MAXLANES) lanes = MAXLANES / S_COUNT;
  rd = mmap(NULL, sizeof *rd, PROT_READ | PROT_WRITE,
            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ck_assert(rd != MAP_FAILED);
  memset(rd, 0, sizeof *rd);
  lg = fc_log_new();
  rd->nlanes = lanes * S_COUNT;
  for (int i = 0; i < rd->nlanes; i++) {
    rd->lane[i].scen = (scen_t)(i % S_COUNT);
    it_root(rd->lane[i].path, sizeof rd->lane[i].path, "paused");
  }
  /* every process is forked before any session exists in this one */
  for (int i = 0; i < rd->nlanes; i++)
    for (int r = A; r < ROLES; r++) {
      if (r == C && rd->lane[i].scen == S_ELECTION) continue;
      pid_t pid = fork();
      ck_assert_int_ge(pid, 0);
      if (pid == 0) _exit(role_main(i, r));
      rd->lane[i].pid[r] = pid;
    }
  zkl_session_t *s = it_session();
  await_step(A, ST_READY, 0);
  await_step(B, ST_READY, 0);
  await_step(C, ST_READY, 0);

  command(GO(A), 0);
  await_step(A, ST_HOLDING, 0);
  command(GO(B), 0);
  await_queued(s, 2);
  it_sleep_ms(150); /* queued for a while, its watches set */
  command(GO(C), 0);
  await_queued(s, 3);

  for (int i = 0; i < rd->nlanes; i++) {
    struct lane *ln = &rd->lane[i];
    int st;
    kill(ln->pid[B], SIGSTOP);
    ck_assert_int_eq(waitpid(ln->pid[B], &st, WUNTRACED), ln->pid[B]);
    fc_add(lg, R_PAUSE, i, B, 0, 0);
  }
  int64_t paused_at = it_now_ms();
  it_sleep_ms(300);
  command(REL(A), 0); /* the wake-up waits in the victim's socket */
  it_sleep_ms((int)(paused_at + PAUSE_MS - it_now_ms()));
  for (int i = 0; i < rd->nlanes; i++) {
    struct lane *ln = &rd->lane[i];
    ln->resume_at = __atomic_load_n(&lg->n, __ATOMIC_SEQ_CST);
    fc_add(lg, R_RESUME, i, B, 0, 0);
    kill(ln->pid[B], SIGCONT);
  }
  it_sleep_ms(1000); /* the new holders keep holding meanwhile */
  command(REL(C), 0);
  command(offsetof(struct lane, rel2), 1);

  int failed = 0;
  for (int i = 0; i < rd->nlanes; i++)
    for (int r = A; r < ROLES; r++) {
      pid_t pid = rd->lane[i].pid[r];
      int st;
      if (pid <= 0) continue;
      ck_assert_int_eq(waitpid(pid, &st, 0), pid);
      if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        failed++;
        fprintf(stderr, "lane %d (%s) role %c: status %d\n", i,
                scen_names[rd->lane[i].scen], 'A' + r, st);
      }
    }

  /* the verdict, per scenario */
  int bad = 0;
  char first[600] = "";
  for (int sc = 0; sc < S_COUNT; sc++) {
    int trials = 0, phantoms = 0, viol = 0, progressed = 0, timedout = 0,
        late_ok = 0, orphans = 0;
    for (int i = 0; i < rd->nlanes; i++) {
      struct lane *ln = &rd->lane[i];
      if (ln->scen != (scen_t)sc) continue;
      trials++;
      fc_verdict_t v;
      fc_check(lg, i, &v);
      viol += v.violations;
      if (v.violations > 0 && first[0] == '\0')
        snprintf(first, sizeof first, "%s, lane %d: %s", scen_names[sc], i,
                 v.first);
      phantoms += v.violations > 0;
      progressed += fc_entered_after(lg, i, B, ln->resume_at);
      timedout += ln->victim_rc == ZKL_ETIMEDOUT;
      /* a timed call must not succeed after its deadline */
      if (sc == S_TIMEDLOCK && ln->victim_rc == 0 &&
          ln->victim_returned_us - ln->victim_called_us > TIMED_MS * 1000)
        late_ok++;
      int left = fc_orphans(s, ln->path, 10000);
      orphans += left;
    }
    printf("| %-22s | %6d | %14d | %10d | %9d | %8d | %7d |\n",
           scen_names[sc], trials, phantoms, viol, progressed,
           sc == S_TIMEDLOCK ? timedout : -1, orphans);
    bad += viol + late_ok + orphans + (trials - progressed);
    if (sc == S_TIMEDLOCK) bad += trials - timedout;
  }
  fflush(stdout);
  zkl_session_close(s);
  fc_log_free(lg);
  munmap(rd, sizeof *rd);
  ck_assert_msg(first[0] == '\0', "%s", first);
  ck_assert_msg(bad == 0 && failed == 0,
                "%d failures (progress, deadlines, orphans), %d workers failed",
                bad, failed);
}
END_TEST

Suite *paused_suite(void) {
  Suite *su = suite_create("paused-waiters");
  TCase *tc = tcase_create("paused");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, paused_waiter_is_never_granted_on_a_lost_session, 0,
                      fc_env_int("ZKL_PAUSED_ROUNDS", 4));
  suite_add_tcase(su, tc);
  return su;
}
