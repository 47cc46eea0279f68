/* tests/install-smoke.c - built by tests/check-install.sh against an
 * installed zkl (headers, zkl.pc and the shared library under DESTDIR) to
 * prove that the installed tree is usable: it compiles with nothing but
 * `pkg-config --cflags --libs zkl`, links, and runs.  Needs no server: a
 * session to a closed port proves the ZooKeeper client is linked and runs
 * its threads.  With a second argument, a live server's host list
 * (scripts/deb-test, against the installed Debian packages), it also takes
 * and releases a mutex there. */
#include <stdio.h>
#include <string.h>
#include <zkl.h>

static int failures;

static void expect(int cond, const char *what) {
  if (!cond) {
    fprintf(stderr, "install-smoke: FAILED: %s\n", what);
    failures++;
  }
}

int main(int argc, char **argv) {
  /* argv[1]: a host list where nobody listens */
  const char *nobody = argc > 1 ? argv[1] : "127.0.0.1:1";

  expect(strcmp(zkl_version(), ZKL_VERSION_STRING) == 0,
         "zkl_version() is the installed header's ZKL_VERSION_STRING");
  expect(strcmp(zkl_strerror(ZKL_ETIMEDOUT), "timed out") == 0,
         "zkl_strerror(ZKL_ETIMEDOUT)");
  expect(strcmp(zkl_err_name(ZKL_ELOST), "ZKL_ELOST") == 0,
         "zkl_err_name(ZKL_ELOST)");

  zkl_session_opts_t so;
  zkl_session_opts_init(&so);
  expect(so.session_timeout_ms == 10000, "default session timeout");

  zkl_mutex_t *m = (zkl_mutex_t *)&so; /* must be reset to NULL */
  expect(zkl_mutex_create(&m, NULL, "/x", NULL) == ZKL_EINVAL && m == NULL,
         "zkl_mutex_create without a session");

  zkl_session_t *s = NULL;
  so.connect_timeout_ms = 500;
  int rc = zkl_session_open(&s, nobody, &so);
  expect(rc == ZKL_ECONNECT && s == NULL, "zkl_session_open to a closed port");
  expect(zkl_last_error()[0] != '\0', "zkl_last_error() explains it");

  printf("install-smoke: zkl %s, %s: %s (%s)\n", zkl_version(),
         zkl_err_name(rc), zkl_strerror(rc), zkl_last_error());

  /* argv[2]: a live server: a mutex taken, its token read, released */
  if (argc > 2) {
    zkl_session_opts_init(&so);
    rc = zkl_session_open(&s, argv[2], &so);
    expect(rc == 0, "zkl_session_open to the live server");
    if (rc == 0) {
      zkl_mutex_t *lock = NULL;
      uint64_t token = 0;
      expect(zkl_mutex_create(&lock, s, "/zkl-install-smoke/lock", NULL) == 0,
             "zkl_mutex_create");
      expect(zkl_mutex_lock(lock) == 0, "zkl_mutex_lock");
      expect(zkl_mutex_holding(lock) == 1, "zkl_mutex_holding after lock");
      expect(zkl_mutex_token(lock, &token) == 0 && token > 0,
             "zkl_mutex_token gives a fencing token");
      expect(zkl_mutex_unlock(lock) == 0, "zkl_mutex_unlock");
      expect(zkl_mutex_holding(lock) == 0, "zkl_mutex_holding after unlock");
      zkl_mutex_destroy(lock);
      zkl_session_close(s);
      printf("install-smoke: mutex on %s: token %llu\n", argv[2],
             (unsigned long long)token);
    } else {
      fprintf(stderr, "install-smoke: %s\n", zkl_last_error());
    }
  }
  return failures == 0 ? 0 : 1;
}
