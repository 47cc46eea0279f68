/* tests/integration/test-exclusion.c - several processes, one lock: a
 * read-modify-write of a counter znode never loses an update, no two
 * processes are ever inside at once, and fencing tokens only go up. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"

#define PROCS 4
#define ROUNDS 50 /* 200 critical sections in all */

struct shared {
  volatile int inside;     /* processes in the critical section now */
  volatile int violations; /* times one entered while another was in */
  volatile uint64_t last_token;
  volatile int token_regressions;
  volatile int done;
};

static int read_counter(zhandle_t *zh, const char *path) {
  char buf[32];
  int len = sizeof buf - 1;
  if (zoo_get(zh, path, 0, buf, &len, NULL) != ZOK || len < 0) return -1;
  buf[len] = '\0';
  return atoi(buf);
}

static int worker(struct shared *sh, const char *lock, const char *counter) {
  zkl_session_t *s = NULL;
  zkl_mutex_t *m = NULL;
  if (zkl_session_open(&s, it_hosts(), NULL) != 0 ||
      zkl_mutex_create(&m, s, lock, NULL) != 0)
    return 2;
  zhandle_t *zh = zkl_session_zhandle(s);
  for (int i = 0; i < ROUNDS; i++) {
    if (zkl_mutex_lock(m) != 0) return 3;
    if (__atomic_add_fetch(&sh->inside, 1, __ATOMIC_SEQ_CST) != 1)
      __atomic_add_fetch(&sh->violations, 1, __ATOMIC_SEQ_CST);
    uint64_t token;
    zkl_mutex_token(m, &token);
    if (token <= sh->last_token)
      __atomic_add_fetch(&sh->token_regressions, 1, __ATOMIC_SEQ_CST);
    sh->last_token = token;
    /* the read-modify-write the lock protects: no version check */
    int v = read_counter(zh, counter);
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%d", v + 1);
    if (v < 0 || zoo_set(zh, counter, buf, n, -1) != ZOK) return 4;
    __atomic_sub_fetch(&sh->inside, 1, __ATOMIC_SEQ_CST);
    if (zkl_mutex_unlock(m) != 0) return 5;
  }
  __atomic_add_fetch(&sh->done, 1, __ATOMIC_SEQ_CST);
  zkl_mutex_destroy(m);
  zkl_session_close(s);
  return 0;
}

START_TEST(processes_never_overlap) {
  char lock[128], counter[160];
  it_root(lock, sizeof lock, "excl");
  snprintf(counter, sizeof counter, "%s-counter", lock);
  struct shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
                           MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ck_assert(sh != MAP_FAILED);
  memset((void *)sh, 0, sizeof *sh);

  pid_t pids[PROCS];
  for (int i = 0; i < PROCS; i++) { /* fork before any session exists */
    pids[i] = fork();
    ck_assert_int_ge(pids[i], 0);
    if (pids[i] == 0) {
      /* wait for the counter node the parent creates */
      zkl_session_t *probe = NULL;
      if (zkl_session_open(&probe, it_hosts(), NULL) != 0) _exit(6);
      while (zoo_exists(zkl_session_zhandle(probe), counter, 0, NULL) != ZOK)
        it_sleep_ms(5);
      zkl_session_close(probe);
      _exit(worker(sh, lock, counter));
    }
  }
  zkl_session_t *s = it_session();
  zhandle_t *zh = zkl_session_zhandle(s);
  zoo_create(zh, "/zkl-test", NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  ck_assert_int_eq(zoo_create(zh, counter, "0", 1, &ZOO_OPEN_ACL_UNSAFE, 0,
                              NULL, 0),
                   ZOK);
  for (int i = 0; i < PROCS; i++) {
    int status;
    ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "worker %d failed with status %d", i, status);
  }
  ck_assert_int_eq(sh->done, PROCS);
  ck_assert_int_eq(sh->violations, 0);
  ck_assert_int_eq(sh->token_regressions, 0);
  ck_assert_int_eq(read_counter(zh, counter), PROCS * ROUNDS);
  ck_assert_int_eq(it_children(s, lock, NULL), 0); /* no orphans */
  zoo_delete(zh, counter, -1);
  zkl_session_close(s);
  munmap((void *)sh, sizeof *sh);
}
END_TEST

/* The same workload without the lock loses updates: the test above would
 * catch a lock that does not exclude. */
START_TEST(without_the_lock_updates_are_lost) {
  char counter[160];
  it_root(counter, sizeof counter, "nolock");
  zkl_session_t *s = it_session();
  zhandle_t *zh = zkl_session_zhandle(s);
  zoo_create(zh, "/zkl-test", NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  ck_assert_int_eq(zoo_create(zh, counter, "0", 1, &ZOO_OPEN_ACL_UNSAFE, 0,
                              NULL, 0), ZOK);
  zkl_session_close(s);
  pid_t pids[PROCS];
  for (int i = 0; i < PROCS; i++) {
    pids[i] = fork();
    ck_assert_int_ge(pids[i], 0);
    if (pids[i] == 0) {
      zkl_session_t *w = NULL;
      if (zkl_session_open(&w, it_hosts(), NULL) != 0) _exit(2);
      for (int r = 0; r < ROUNDS; r++) {
        int v = read_counter(zkl_session_zhandle(w), counter);
        char buf[32];
        int n = snprintf(buf, sizeof buf, "%d", v + 1);
        zoo_set(zkl_session_zhandle(w), counter, buf, n, -1);
      }
      zkl_session_close(w);
      _exit(0);
    }
  }
  for (int i = 0; i < PROCS; i++) waitpid(pids[i], NULL, 0);
  s = it_session();
  int final = read_counter(zkl_session_zhandle(s), counter);
  zoo_delete(zkl_session_zhandle(s), counter, -1);
  zkl_session_close(s);
  ck_assert_msg(final < PROCS * ROUNDS,
                "no update was lost without the lock (%d): the exclusion "
                "test would prove nothing", final);
}
END_TEST

Suite *exclusion_suite(void) {
  Suite *su = suite_create("exclusion");
  TCase *tc = it_tcase("processes");
  tcase_add_test(tc, processes_never_overlap);
  tcase_add_test(tc, without_the_lock_updates_are_lost);
  suite_add_tcase(su, tc);
  return su;
}
