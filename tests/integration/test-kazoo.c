/* tests/integration/test-kazoo.c - zkl and python3-kazoo on one lock path,
 * both ways (kazoo given extra_lock_patterns=["-lock-"]). */
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"

extern char **environ;

struct peer {
  pid_t pid;
  int to;   /* its stdin  */
  FILE *from; /* its stdout */
};

static struct peer peer_start(const char *path, const char *mode,
                              const char *arg) {
  char script[1024];
  const char *src = getenv("top_srcdir");
  snprintf(script, sizeof script, "%s/tests/integration/kazoo_peer.py",
           src != NULL ? src : ".");
  int in[2], out[2];
  ck_assert_int_eq(pipe(in), 0);
  ck_assert_int_eq(pipe(out), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addclose(&fa, in[1]);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  char *argv[] = {"/usr/bin/python3", script, (char *)it_hosts(),
                  (char *)path, (char *)mode, (char *)arg, NULL};
  struct peer p;
  int rc = posix_spawn(&p.pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  ck_assert_msg(rc == 0, "cannot start %s: %s", argv[0], strerror(rc));
  close(in[0]);
  close(out[1]);
  p.to = in[1];
  p.from = fdopen(out[0], "r");
  return p;
}

/* The peer's next line of output, without the newline. */
static void peer_line(struct peer *p, char *buf, size_t len) {
  ck_assert_msg(fgets(buf, (int)len, p->from) != NULL, "kazoo peer said nothing");
  buf[strcspn(buf, "\n")] = '\0';
}

static void peer_finish(struct peer *p) {
  if (p->to >= 0) close(p->to);
  p->to = -1;
  int status;
  ck_assert_int_eq(waitpid(p->pid, &status, 0), p->pid);
  fclose(p->from);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                "kazoo peer exited with %d", status);
}

START_TEST(zkl_holds_kazoo_waits) {
  char root[128], line[512];
  it_root(root, sizeof root, "kazoo1");
  zkl_session_t *s = it_session();
  zkl_mutex_t *m;
  ck_assert_int_eq(zkl_mutex_create(&m, s, root, NULL), 0);
  ck_assert_int_eq(zkl_mutex_lock(m), 0);

  struct peer p = peer_start(root, "try", NULL);
  peer_line(&p, line, sizeof line);
  ck_assert_str_eq(line, "busy");
  peer_finish(&p);

  p = peer_start(root, "wait", "20");
  ck_assert(it_wait_children(s, root, 2, 15000)); /* kazoo queued */
  ck_assert_int_eq(zkl_mutex_unlock(m), 0);
  peer_line(&p, line, sizeof line);
  ck_assert_str_eq(line, "acquired");
  peer_finish(&p);
  ck_assert_int_eq(it_children(s, root, NULL), 0);
  zkl_mutex_destroy(m);
  zkl_session_close(s);
}
END_TEST

struct waiter {
  zkl_mutex_t *m;
  int rc, unlock_rc;
};

static void *wait_main(void *arg) {
  struct waiter *w = arg;
  int rc = zkl_mutex_timedlock(w->m, 20000);
  __atomic_store_n(&w->rc, rc, __ATOMIC_SEQ_CST);
  if (rc == 0) w->unlock_rc = zkl_mutex_unlock(w->m);
  return NULL;
}

START_TEST(kazoo_holds_zkl_waits) {
  char root[128], line[512];
  it_root(root, sizeof root, "kazoo2");
  struct peer p = peer_start(root, "hold", NULL);
  peer_line(&p, line, sizeof line);
  ck_assert_msg(strncmp(line, "held ", 5) == 0, "peer: %s", line);
  ck_assert_msg(strstr(line, "__lock__") != NULL, "kazoo node: %s", line);

  zkl_session_t *s = it_session();
  zkl_mutex_t *m;
  ck_assert_int_eq(zkl_mutex_create(&m, s, root, NULL), 0);
  ck_assert_int_eq(zkl_mutex_trylock(m), ZKL_EBUSY);

  struct waiter w = {m, -1, -1};
  pthread_t th;
  pthread_create(&th, NULL, wait_main, &w);
  ck_assert(it_wait_children(s, root, 2, 5000));
  it_sleep_ms(100);
  /* still waiting behind kazoo */
  ck_assert_int_eq(__atomic_load_n(&w.rc, __ATOMIC_SEQ_CST), -1);
  close(p.to);                /* kazoo releases */
  p.to = -1;
  pthread_join(th, NULL);
  ck_assert_int_eq(w.rc, 0);
  peer_line(&p, line, sizeof line);
  ck_assert_str_eq(line, "released");
  peer_finish(&p);
  ck_assert_int_eq(w.unlock_rc, 0);
  ck_assert_int_eq(it_children(s, root, NULL), 0);
  zkl_mutex_destroy(m);
  zkl_session_close(s);
}
END_TEST

Suite *kazoo_suite(void) {
  Suite *su = suite_create("kazoo-interop");
  TCase *tc = it_tcase("both-ways");
  tcase_add_test(tc, zkl_holds_kazoo_waits);
  tcase_add_test(tc, kazoo_holds_zkl_waits);
  suite_add_tcase(su, tc);
  return su;
}
