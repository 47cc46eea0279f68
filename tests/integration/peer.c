/* tests/integration/peer.c - the live peers of the interop suites: Curator
 * (a small Java program, compiled for the tcase) and python3-kazoo
 * processes we write commands to and read answers from, and the tcase's
 * fixture around them (see itest.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"

extern char **environ;

#define CURATOR_JAR "/usr/share/java/curator-recipes.jar"

/* ---- starting one ------------------------------------------------------- */

int it_peer_secs(void) {
  const char *m = getenv("CK_TIMEOUT_MULTIPLIER");
  double mult = m != NULL && atof(m) > 0 ? atof(m) : 1;
  return (int)((IT_TIMEOUT - 5) * mult);
}

void it_peer_spawn(it_peer_t *p, const char *name, char *const argv[],
                   int flags) {
  int in[2], out[2];
  /* close-on-exec: a later peer must not hold this one's stdin open */
  ck_assert_int_eq(pipe2(in, O_CLOEXEC), 0);
  ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  if (flags & IT_PEER_QUIET)
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 34)
  /* nor may it hold our sockets: a connection the proxy cuts must end */
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
#endif
  posix_spawnattr_t at;
  posix_spawnattr_init(&at);
  sigset_t dfl;
  sigemptyset(&dfl);
  sigaddset(&dfl, SIGPIPE);
  posix_spawnattr_setsigdefault(&at, &dfl);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF);
  signal(SIGPIPE, SIG_IGN); /* a peer gone: write() fails, we say so */
  memset(p, 0, sizeof *p);
  p->name = name;
  p->answer_ms = it_peer_secs() * 1000;
  int rc = posix_spawnp(&p->pid, argv[0], &fa, &at, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  ck_assert_msg(rc == 0, "cannot start %s: %s", argv[0], strerror(rc));
  close(in[0]);
  close(out[1]);
  p->to = in[1];
  p->from = out[0];
}

/* The java_dir of it_peer_setup(), with the compiled classes. */
static char java_dir[256];
static int have_javac;

static void start_ready(it_peer_t *p, const char *name, char *const head[],
                        int nhead, char *const args[], int flags) {
  char *argv[32];
  int n = 0;
  for (int i = 0; i < nhead; i++) argv[n++] = head[i];
  for (int i = 0; args != NULL && args[i] != NULL; i++) {
    ck_assert_int_lt(n, 31);
    argv[n++] = args[i];
  }
  argv[n] = NULL;
  it_peer_spawn(p, name, argv, flags);
  char line[256];
  it_peer_line(p, line, sizeof line);
  ck_assert_msg(strcmp(line, "ready") == 0, "%s: %s", name, line);
}

void it_peer_java(it_peer_t *p, const char *cls, char *const args[],
                  int flags) {
  char cp[512];
  /* slf4j-nop: Curator's and ZooKeeper's logging stays quiet, the peer's
   * own notes (stderr) show */
  snprintf(cp, sizeof cp, CURATOR_JAR ":/usr/share/java/slf4j-nop.jar:%s",
           java_dir);
  char *const head[] = {"java", "-cp", cp, (char *)cls};
  start_ready(p, "curator", head, 4, args, flags);
}

void it_peer_python(it_peer_t *p, const char *script, char *const args[],
                    int flags) {
  char path[1024];
  const char *src = getenv("top_srcdir");
  snprintf(path, sizeof path, "%s/tests/integration/%s",
           src != NULL ? src : ".", script);
  char *const head[] = {"/usr/bin/python3", path};
  start_ready(p, "kazoo", head, 2, args, flags);
}

void it_peer_curator(it_peer_t *p, const char *cls) {
  char secs[16];
  snprintf(secs, sizeof secs, "%d", it_peer_secs());
  it_peer_java(p, cls, (char *const[]){(char *)it_hosts(), secs, NULL}, 0);
}

void it_peer_kazoo(it_peer_t *p, const char *script) {
  char secs[16];
  snprintf(secs, sizeof secs, "%d", it_peer_secs());
  it_peer_python(p, script, (char *const[]){(char *)it_hosts(), secs, NULL},
                 0);
}

/* ---- talking to it ------------------------------------------------------ */

int it_peer_read(it_peer_t *p, char *line, size_t len, int timeout_ms) {
  int64_t end = it_now_ms() + timeout_ms;
  for (;;) {
    char *nl = memchr(p->buf, '\n', p->len);
    if (nl != NULL) {
      size_t n = (size_t)(nl - p->buf);
      snprintf(line, len, "%.*s", (int)n, p->buf);
      memmove(p->buf, nl + 1, p->len - n - 1);
      p->len -= n + 1;
      return 1;
    }
    int left = (int)(end - it_now_ms());
    if (left <= 0 || p->len == sizeof p->buf) {
      snprintf(line, len, "(no line within %d ms)", timeout_ms);
      return 0;
    }
    struct pollfd pfd = {p->from, POLLIN, 0};
    if (poll(&pfd, 1, left) <= 0) continue;
    ssize_t got = read(p->from, p->buf + p->len, sizeof p->buf - p->len);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      snprintf(line, len, "(its output ended)");
      return 0;
    }
    p->len += (size_t)got;
  }
}

static void stash(it_peer_t *p, const char *line) {
  ck_assert_msg(p->nstash < IT_PEER_STASH, "%s: too many results", p->name);
  p->stash[p->nstash++] = strdup(line);
}

void it_peer_line(it_peer_t *p, char *line, size_t len) {
  for (;;) {
    int got = it_peer_read(p, line, len, p->answer_ms);
    ck_assert_msg(got, "%s: no answer: %s", p->name, line);
    if (line[0] != '@') return;
    stash(p, line);
  }
}

void it_peer_expect(it_peer_t *p, const char *want) {
  char line[4096];
  it_peer_line(p, line, sizeof line);
  ck_assert_msg(strcmp(line, want) == 0, "%s said \"%.300s\", not \"%s\"",
                p->name, line, want);
}

__attribute__((format(printf, 4, 0))) static void
vsay(it_peer_t *p, char *line, size_t len, const char *fmt, va_list ap) {
  /* (gcc 12 with -fsanitize=address,undefined saw a NULL fmt in a clone) */
  if (fmt == NULL) fmt = "";
  vsnprintf(line, len - 1, fmt, ap);
  size_t n = strlen(line);
  line[n++] = '\n';
  ck_assert_msg(write(p->to, line, n) == (ssize_t)n, "%s gone (%.*s)",
                p->name, (int)n - 1, line);
  line[n - 1] = '\0';
}

void it_peer_say(it_peer_t *p, const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsay(p, line, sizeof line, fmt, ap);
  va_end(ap);
}

void it_peer_ask(it_peer_t *p, const char *want, const char *fmt, ...) {
  char line[1024], got[4096];
  va_list ap;
  va_start(ap, fmt);
  vsay(p, line, sizeof line, fmt, ap);
  va_end(ap);
  it_peer_line(p, got, sizeof got);
  ck_assert_msg(strcmp(got, want) == 0,
                "%s: \"%s\" answered \"%.300s\", not \"%s\"", p->name, line,
                got, want);
}

void it_peer_query(it_peer_t *p, char *got, size_t len, const char *fmt,
                   ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsay(p, line, sizeof line, fmt, ap);
  va_end(ap);
  it_peer_line(p, got, len);
  ck_assert_msg(strncmp(got, "error", 5) != 0 && got[0] != '\0',
                "%s: \"%s\" answered \"%.300s\"", p->name, line, got);
}

/* The stashed result of TAG, taken (1), or 0. */
static int stash_take(it_peer_t *p, const char *tag, char *line, size_t len) {
  size_t n = strlen(tag);
  for (int i = 0; i < p->nstash; i++) {
    if (strncmp(p->stash[i] + 1, tag, n) != 0 || p->stash[i][n + 1] != ' ')
      continue;
    snprintf(line, len, "%s", p->stash[i]);
    free(p->stash[i]);
    p->stash[i] = p->stash[--p->nstash];
    return 1;
  }
  return 0;
}

it_peer_result_t it_peer_result(it_peer_t *p, const char *tag,
                                int timeout_ms) {
  char line[1024];
  int64_t end = it_now_ms() + timeout_ms;
  while (!stash_take(p, tag, line, sizeof line)) {
    int left = (int)(end - it_now_ms());
    ck_assert_msg(left > 0 && it_peer_read(p, line, sizeof line, left),
                  "%s: no result for %s in %d ms (%s)", p->name, tag,
                  timeout_ms, left > 0 ? line : "late");
    ck_assert_msg(line[0] == '@', "%s: \"%s\" while waiting for %s", p->name,
                  line, tag);
    stash(p, line);
  }
  it_peer_result_t r;
  char t[64];
  ck_assert_msg(sscanf(line, "@%63s %63s %lld %lld", t, r.what,
                       (long long *)&r.t0, (long long *)&r.t1) == 4,
                "%s: bad result \"%s\"", p->name, line);
  return r;
}

int it_peer_pending(it_peer_t *p, const char *tag) {
  it_peer_say(p, "ping");
  char line[1024];
  it_peer_line(p, line, sizeof line);
  ck_assert_msg(strcmp(line, "pong") == 0, "%s: ping answered \"%s\"",
                p->name, line);
  size_t n = strlen(tag);
  for (int i = 0; i < p->nstash; i++)
    if (strncmp(p->stash[i] + 1, tag, n) == 0 && p->stash[i][n + 1] == ' ')
      return 0;
  return 1;
}

/* ---- ending it ---------------------------------------------------------- */

/* Reaps the peer and lets go of its pipes and results: its exit status. */
static int reap(it_peer_t *p) {
  int status;
  ck_assert_int_eq(waitpid(p->pid, &status, 0), p->pid);
  close(p->from);
  close(p->to);
  for (int i = 0; i < p->nstash; i++) free(p->stash[i]);
  p->nstash = 0;
  return status;
}

void it_peer_done(it_peer_t *p) {
  char line[1024];
  it_peer_line(p, line, sizeof line);
  ck_assert_msg(strcmp(line, "done") == 0, "%s: \"%s\", not done", p->name,
                line);
  int status = reap(p);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                "%s exited with status %d", p->name, status);
}

void it_peer_quit(it_peer_t *p) {
  it_peer_say(p, "quit");
  it_peer_done(p);
}

void it_peer_kill(it_peer_t *p) {
  ck_assert_int_eq(kill(p->pid, SIGKILL), 0);
  reap(p);
}

/* ---- the tcase's fixture ------------------------------------------------ */

static const char *suite_name;
static char run_tag[64]; /* <prefix>-<runner pid>: this run's nodes */

/* python3-kazoo importable by the python3 the kazoo peers run on: 1, 0,
 * or -1 not asked yet. */
static int have_kazoo = -1;

static int kazoo_importable(void) {
  if (have_kazoo < 0)
    have_kazoo = system("/usr/bin/python3 -c 'import kazoo.client' "
                        ">/dev/null 2>&1") == 0;
  return have_kazoo;
}

void it_peer_setup(const char *suite, const char *prefix, const char *cls) {
  suite_name = suite;
  run_tag[0] = '\0';
  if (prefix != NULL)
    snprintf(run_tag, sizeof run_tag, "%s-%ld", prefix, (long)getpid());
  have_javac = 0;
  kazoo_importable(); /* asked once, before the tests are forked */
  if (cls == NULL) return; /* no Java peer in this tcase */
  const char *src = getenv("top_srcdir");
  char cmd[2048];
  snprintf(java_dir, sizeof java_dir, "%s/zkl-java-XXXXXX",
           getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
  if (mkdtemp(java_dir) == NULL) {
    java_dir[0] = '\0';
    return;
  }
  snprintf(cmd, sizeof cmd,
           "javac -nowarn -d '%s' -cp " CURATOR_JAR
           " '%s/tests/integration/java/%s.java' >&2",
           java_dir, src != NULL ? src : ".", cls);
  have_javac = system(cmd) == 0;
}

/* Deletes every node of this run that a failed test left behind. */
static void sweep(void) {
  size_t n = strlen(run_tag);
  if (n == 0) return;
  zkl_session_t *s = it_session();
  zhandle_t *zh = zkl_session_zhandle(s);
  struct String_vector kids = {0, NULL};
  if (zoo_get_children(zh, "/zkl-test", 0, &kids) == ZOK) {
    for (int i = 0; i < kids.count; i++) {
      if (strncmp(kids.data[i], run_tag, n) != 0 || kids.data[i][n] != '-')
        continue;
      char path[1024];
      snprintf(path, sizeof path, "/zkl-test/%s", kids.data[i]);
      fprintf(stderr, "%s: deleting %s, left behind\n", suite_name, path);
      it_peer_delete_tree(zh, path);
    }
    deallocate_String_vector(&kids);
  }
  zkl_session_close(s);
}

void it_peer_teardown(void) {
  sweep();
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", java_dir);
  if (java_dir[0] != '\0' && system(cmd) != 0)
    fprintf(stderr, "%s failed\n", cmd);
  java_dir[0] = '\0';
}

int it_peer_curator_here(void) {
  if (have_javac && access(CURATOR_JAR, R_OK) == 0) return 1;
  const char *ci = getenv("CI");
  ck_assert_msg(ci == NULL || ci[0] == '\0' || strcmp(ci, "false") == 0 ||
                    strcmp(ci, "0") == 0,
                "CI: javac or libcurator-recipes-java missing");
  fprintf(stderr, "SKIP: javac or libcurator-recipes-java missing\n");
  return 0;
}

int it_peer_kazoo_here(void) {
  if (kazoo_importable()) return 1;
  const char *ci = getenv("CI");
  ck_assert_msg(ci == NULL || ci[0] == '\0' || strcmp(ci, "false") == 0 ||
                    strcmp(ci, "0") == 0,
                "CI: python3-kazoo missing");
  fprintf(stderr, "SKIP: python3-kazoo missing\n");
  return 0;
}

void it_peer_node(char *buf, size_t len, const char *tag) {
  char t[128];
  snprintf(t, sizeof t, "%s-%s", run_tag, tag);
  it_root(buf, len, t);
}

void it_peer_delete_tree(zhandle_t *zh, const char *path) {
  struct String_vector kids = {0, NULL};
  if (zoo_get_children(zh, path, 0, &kids) == ZOK) {
    for (int i = 0; i < kids.count; i++) {
      char child[1024];
      snprintf(child, sizeof child, "%s/%s", path, kids.data[i]);
      it_peer_delete_tree(zh, child);
    }
    deallocate_String_vector(&kids);
  }
  zoo_delete(zh, path, -1);
}
