/* cli/child.c - CMD's process: found like execvp() does, started with
 * fork() and execve() (only async-signal-safe calls in between: zkl is
 * multithreaded), watched with waitpid(), stopped TERM-then-KILL. */
#include "child.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "loop.h"
#include "opts.h"

extern char **environ;

/* ---- descriptors ------------------------------------------------------------ */

static int *inherited;  /* sorted: descriptors >= 3 open when zkl started */
static size_t n_inherited;

/* The highest descriptor worth looking at: valgrind, for one, keeps its
 * own above the soft limit it reports. */
static int fd_limit(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
      rl.rlim_cur > 65536)
    return 65536;
  return (int)rl.rlim_cur;
}

/* Calls fn(fd) for every open descriptor in [3, fd_limit()). */
static void each_open_fd(void (*fn)(int fd)) {
  int limit = fd_limit();
  DIR *d = opendir("/proc/self/fd");
  if (d == NULL) {
    for (int fd = 3; fd < limit && fd < 4096; fd++)
      if (fcntl(fd, F_GETFD) >= 0) fn(fd);
    return;
  }
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    char *end;
    long fd = strtol(e->d_name, &end, 10);
    if (*end != '\0' || e->d_name[0] == '\0' || fd < 3 || fd >= limit ||
        fd == dirfd(d))
      continue;
    fn((int)fd);
  }
  closedir(d);
}

static void remember_fd(int fd) {
  int *v = realloc(inherited, (n_inherited + 1) * sizeof *v);
  if (v == NULL) return; /* then it is closed in CMD: the safe side */
  inherited = v;
  size_t i = n_inherited++;
  while (i > 0 && inherited[i - 1] > fd) {
    inherited[i] = inherited[i - 1];
    i--;
  }
  inherited[i] = fd;
}

static int was_inherited(int fd) {
  size_t lo = 0, hi = n_inherited;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (inherited[mid] == fd) return 1;
    if (inherited[mid] < fd) lo = mid + 1;
    else hi = mid;
  }
  return 0;
}

static void close_on_exec_unless_inherited(int fd) {
  if (was_inherited(fd)) return;
  int flags = fcntl(fd, F_GETFD);
  if (flags >= 0 && !(flags & FD_CLOEXEC)) fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

void cli_child_fds_init(void) { each_open_fd(remember_fd); }

void cli_child_fds_fini(void) {
  free(inherited);
  inherited = NULL;
  n_inherited = 0;
}

/* ---- finding the program ------------------------------------------------------ */

static int is_executable_file(const char *file) {
  struct stat st;
  return stat(file, &st) == 0 && S_ISREG(st.st_mode) &&
         access(file, X_OK) == 0;
}

int cli_child_find(const char *name, const char *path_env, char *out,
                   size_t outlen) {
  if (name[0] == '\0') return CLI_EX_NOT_FOUND;
  if (strchr(name, '/') != NULL) {
    if (strlen(name) >= outlen) return CLI_EX_CANNOT_EXEC;
    strcpy(out, name);
    /* The usual failures are told here, before any fork: a forked copy of
     * a threaded process that fails its exec is best never made (under
     * valgrind it can hang in its exit).  execve() still has the last word
     * on what passes (a race, a missing interpreter). */
    if (access(out, F_OK) != 0)
      return errno == ENOENT || errno == ENOTDIR ? CLI_EX_NOT_FOUND
                                                 : CLI_EX_CANNOT_EXEC;
    return is_executable_file(out) ? 0 : CLI_EX_CANNOT_EXEC;
  }
  if (path_env == NULL) path_env = "/usr/local/bin:/bin:/usr/bin";
  int seen = 0;
  for (const char *dir = path_env;;) {
    const char *colon = strchr(dir, ':');
    size_t dl = colon != NULL ? (size_t)(colon - dir) : strlen(dir);
    int n = dl == 0 ? snprintf(out, outlen, "./%s", name)
                    : snprintf(out, outlen, "%.*s/%s", (int)dl, dir, name);
    if (n > 0 && (size_t)n < outlen) {
      if (is_executable_file(out)) return 0;
      if (access(out, F_OK) == 0) seen = 1;
    }
    if (colon == NULL) break;
    dir = colon + 1;
  }
  return seen ? CLI_EX_CANNOT_EXEC : CLI_EX_NOT_FOUND;
}

/* ---- the environment ---------------------------------------------------------- */

static int overridden(const char *entry, char *const env[]) {
  for (size_t i = 0; env[i] != NULL; i++) {
    size_t nl = strcspn(env[i], "=");
    if (strncmp(entry, env[i], nl) == 0 && entry[nl] == '=') return 1;
  }
  return 0;
}

/* environ with env's variables set: a new array of borrowed strings. */
static char **environment_with(char *const env[]) {
  size_t n = 0, m = 0;
  while (environ[n] != NULL) n++;
  while (env[m] != NULL) m++;
  char **v = calloc(n + m + 1, sizeof *v);
  if (v == NULL) return NULL;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (!overridden(environ[i], env)) v[k++] = environ[i];
  for (size_t i = 0; i < m; i++) v[k++] = env[i];
  v[k] = NULL;
  return v;
}

/* ---- starting, reaping, stopping ------------------------------------------------ */

static int exec_failure_code(int err) {
  return err == ENOENT || err == ENOTDIR ? CLI_EX_NOT_FOUND
                                         : CLI_EX_CANNOT_EXEC;
}

/* Between fork() and execve(): async-signal-safe calls only.  If zkl dies
 * (even by SIGKILL), CMD gets SIGTERM at once: the lock or leadership goes
 * with zkl's session, so CMD must not go on as if it still held it. */
static void __attribute__((noreturn))
exec_child(const char *file, char *const argv[], char *const envp[],
           int in_fd, int report_fd, pid_t parent) {
#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
  if (getppid() != parent) _exit(CLI_EX_SIGNAL_BASE + SIGTERM);
  cli_loop_child_reset();
  int err = 0;
  /* dup2() leaves the new descriptor 0 open across the exec */
  if (in_fd >= 0 && in_fd != 0 && dup2(in_fd, 0) < 0) err = errno;
  if (err == 0) {
    execve(file, argv, envp);
    err = errno;
  }
  ssize_t n = write(report_fd, &err, sizeof err);
  (void)n;
  _exit(CLI_EX_NOT_FOUND);
}

/* After fork(): 0 when the exec went through (the pipe closed empty), or
 * the errno the child reported. */
static int exec_result(int report_fd) {
  int err = 0;
  ssize_t n;
  do n = read(report_fd, &err, sizeof err);
  while (n < 0 && errno == EINTR);
  return n == (ssize_t)sizeof err ? err : 0;
}

int cli_child_start(cli_child_t *c, char *const argv[], char *const env[]) {
  return cli_child_start_in(c, argv, env, -1);
}

int cli_child_start_in(cli_child_t *c, char *const argv[], char *const env[],
                       int in_fd) {
  memset(c, 0, sizeof *c);
  c->kill_at = INT64_MAX;
  char file[PATH_MAX];
  int rc = cli_child_find(argv[0], getenv("PATH"), file, sizeof file);
  if (rc != 0) {
    fprintf(stderr, "zkl: %s: %s\n", argv[0],
            rc == CLI_EX_NOT_FOUND ? "command not found" : "cannot execute");
    return rc;
  }
  char **envp = environment_with(env);
  int report[2];
  if (envp == NULL || pipe2(report, O_CLOEXEC) != 0) {
    perror("zkl: cannot start CMD");
    free(envp);
    return CLI_EX_SOFTWARE;
  }
  each_open_fd(close_on_exec_unless_inherited);

  /* No handler may run in the child before it resets them. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) exec_child(file, argv, envp, in_fd, report[1], parent);
  int fork_err = errno;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  close(report[1]);
  free(envp);
  if (pid < 0) {
    close(report[0]);
    fprintf(stderr, "zkl: cannot start CMD: %s\n", strerror(fork_err));
    return CLI_EX_SOFTWARE;
  }
  int err = exec_result(report[0]);
  close(report[0]);
  c->pid = pid;
  c->running = 1;
  if (err != 0) {
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
    c->running = 0;
    fprintf(stderr, "zkl: %s: %s\n", argv[0], strerror(err));
    return exec_failure_code(err);
  }
  return 0;
}

int cli_child_reap(cli_child_t *c) {
  if (!c->running) return c->pid != 0;
  int status;
  pid_t r;
  do r = waitpid(c->pid, &status, WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r != c->pid) return 0;
  c->running = 0;
  c->code = WIFSIGNALED(status) ? CLI_EX_SIGNAL_BASE + WTERMSIG(status)
                                : WEXITSTATUS(status);
  return 1;
}

void cli_child_signal(cli_child_t *c, int sig) {
  if (c->running) kill(c->pid, sig);
}

void cli_child_stop(cli_child_t *c, int64_t grace_ms) {
  if (!c->running) return;
  kill(c->pid, SIGTERM);
  if (c->kill_at == INT64_MAX)
    c->kill_at = cli_now_ns() + grace_ms * 1000000;
}

void cli_child_tick(cli_child_t *c) {
  if (c->running && c->kill_at != INT64_MAX && cli_now_ns() >= c->kill_at) {
    kill(c->pid, SIGKILL);
    c->kill_at = INT64_MAX;
  }
}
