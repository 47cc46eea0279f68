/* examples/election-demo.c - zkl-election-demo: one candidate process.
 *
 *   zkl-election-demo [-s HOSTS] [-t SESSION_TIMEOUT_MS] ID [PATH]
 *
 * Joins the election at PATH (default /zkl-demo/election) as ID and prints
 * a timestamped line for every change: joined, follower of X, leader with
 * token T, resigned, lost.  As leader it "works": one heartbeat line per
 * second.  SIGINT/SIGTERM resign cleanly and exit 0.  HOSTS defaults to
 * $ZKL_SERVERS, then 127.0.0.1:2181.
 */
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <zkl.h>

static const char *me;

static void say(const char *fmt, ...) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  struct tm tm;
  localtime_r(&tv.tv_sec, &tm);
  char line[512];
  int n = snprintf(line, sizeof line, "%02d:%02d:%02d.%03d %s: ", tm.tm_hour,
                   tm.tm_min, tm.tm_sec, (int)(tv.tv_usec / 1000), me);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
  va_end(ap);
  printf("%s\n", line); /* one call per line: lines never interleave */
  fflush(stdout);
}

static void on_elected(zkl_election_t *e, uint64_t token, void *arg) {
  (void)e, (void)arg;
  say("leader with token %llu", (unsigned long long)token);
}

static void on_revoked(zkl_election_t *e, zkl_election_reason_t why,
                       void *arg) {
  (void)e, (void)arg;
  say("%s", why == ZKL_REASON_RESIGNED    ? "resigned"
            : why == ZKL_REASON_SUSPENDED ? "connection lost: not leading "
                                            "until it is back"
                                          : "lost leadership (session gone)");
}

/* The observer on the same session reports who leads. */
static void on_leader(zkl_election_t *e, const void *id, size_t len,
                      uint64_t token, void *arg) {
  (void)e, (void)arg;
  if (id == NULL) say("nobody leads");
  else if (len != strlen(me) || memcmp(id, me, len) != 0)
    say("follower of %.*s (token %llu)", (int)len, (const char *)id,
        (unsigned long long)token);
}

static int usage(const char *argv0) {
  fprintf(stderr, "usage: %s [-s HOSTS] [-t SESSION_TIMEOUT_MS] ID [PATH]\n",
          argv0);
  return 64;
}

int main(int argc, char **argv) {
  const char *hosts = getenv("ZKL_SERVERS");
  if (hosts == NULL || hosts[0] == '\0') hosts = "127.0.0.1:2181";
  zkl_session_opts_t so;
  zkl_session_opts_init(&so);
  int opt;
  while ((opt = getopt(argc, argv, "s:t:h")) != -1) {
    if (opt == 's') hosts = optarg;
    else if (opt == 't') so.session_timeout_ms = atoi(optarg);
    else return usage(argv[0]);
  }
  if (optind >= argc || argc - optind > 2) return usage(argv[0]);
  me = argv[optind];
  const char *path = optind + 1 < argc ? argv[optind + 1] : "/zkl-demo/election";

  /* SIGINT/SIGTERM are taken with sigtimedwait() below; zkl's threads
   * block every signal. */
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, NULL);

  zkl_session_t *s = NULL;
  int rc = zkl_session_open(&s, hosts, &so);
  if (rc != 0) {
    fprintf(stderr, "%s: %s: %s\n", me, zkl_strerror(rc), zkl_last_error());
    return 69;
  }
  zkl_election_opts_t co, oo;
  zkl_election_opts_init(&co);
  co.on_elected = on_elected;
  co.on_revoked = on_revoked;
  zkl_election_opts_init(&oo);
  oo.observer = 1;
  oo.on_leader = on_leader;
  zkl_election_t *cand = NULL, *obs = NULL;
  if ((rc = zkl_election_create(&cand, s, path, me, strlen(me), &co)) != 0 ||
      (rc = zkl_election_create(&obs, s, path, NULL, 0, &oo)) != 0) {
    fprintf(stderr, "%s: %s: %s\n", me, zkl_strerror(rc), zkl_last_error());
    zkl_election_destroy(cand);
    zkl_session_close(s);
    return 64;
  }
  say("joined %s (session timeout %d ms)", path, zkl_session_timeout(s));
  zkl_election_start(obs);
  zkl_election_start(cand);

  int beat = 0, status = 0;
  for (;;) {
    struct timespec second = {1, 0};
    int sig = sigtimedwait(&stop, NULL, &second);
    if (sig == SIGINT || sig == SIGTERM) {
      say("got %s: resigning", sig == SIGINT ? "SIGINT" : "SIGTERM");
      break;
    }
    int l = zkl_election_is_leader(cand);
    if (l == 1) {
      uint64_t token = 0;
      zkl_election_token(cand, &token);
      say("working as leader (token %llu), heartbeat %d",
          (unsigned long long)token, ++beat);
    } else if (l == ZKL_ELOST) {
      say("session lost: exiting");
      status = 75;
      break;
    }
  }
  zkl_election_destroy(obs);
  zkl_election_destroy(cand); /* resigns: on_revoked(RESIGNED) if leading */
  zkl_session_close(s);
  return status;
}
