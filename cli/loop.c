/* cli/loop.c - signals and zkl's callbacks turned into events for the main
 * thread: a self-pipe for the handlers, a pipe for the other threads. */
#include "loop.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Whole events are written at once: a pipe write of at most PIPE_BUF
 * bytes is atomic, so posts from several threads never interleave and
 * every read gets one whole event. */
_Static_assert(sizeof(cli_event_t) <= PIPE_BUF, "an event fits PIPE_BUF");

static const int handled[] = {SIGINT, SIGTERM, SIGHUP, SIGCHLD};
#define N_HANDLED (sizeof handled / sizeof handled[0])

static int sig_pipe[2] = {-1, -1};
static int ev_pipe[2] = {-1, -1};
static struct sigaction started_with[N_HANDLED];
static sigset_t started_mask;
static volatile sig_atomic_t connecting = 1;
static zkl_session_t *session; /* its completions run in cli_loop_next() */

static void on_signal(int sig) {
  if (connecting && sig != SIGCHLD) _exit(CLI_EX_SIGNAL_BASE + sig);
  int saved = errno;
  unsigned char b = (unsigned char)sig;
  /* A full pipe drops the byte: the loop already has wake-ups queued. */
  ssize_t n = write(sig_pipe[1], &b, 1);
  (void)n;
  errno = saved;
}

int cli_loop_init(void) {
  if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return -1;
  if (pipe2(ev_pipe, O_CLOEXEC) != 0) return -1;
  pthread_sigmask(SIG_SETMASK, NULL, &started_mask);
  for (size_t i = 0; i < N_HANDLED; i++) {
    if (sigaction(handled[i], NULL, &started_with[i]) != 0) return -1;
    /* SIGCHLD is ours to see whatever it was; the others stay ignored if
     * the invoker ignored them (a background job's SIGINT). */
    if (handled[i] != SIGCHLD && started_with[i].sa_handler == SIG_IGN)
      continue;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART | (handled[i] == SIGCHLD ? SA_NOCLDSTOP : 0);
    if (sigaction(handled[i], &sa, NULL) != 0) return -1;
  }
  sigset_t ours;
  sigemptyset(&ours);
  for (size_t i = 0; i < N_HANDLED; i++) sigaddset(&ours, handled[i]);
  return pthread_sigmask(SIG_UNBLOCK, &ours, NULL) == 0 ? 0 : -1;
}

void cli_loop_connected(zkl_session_t *s) {
  session = s;
  connecting = 0;
}

void cli_loop_child_reset(void) {
  for (size_t i = 0; i < N_HANDLED; i++)
    sigaction(handled[i], &started_with[i], NULL);
  sigprocmask(SIG_SETMASK, &started_mask, NULL);
}

void cli_loop_post(const cli_event_t *ev) {
  ssize_t n;
  do n = write(ev_pipe[1], ev, sizeof *ev);
  while (n < 0 && errno == EINTR);
  if (n != (ssize_t)sizeof *ev) {
    perror("zkl: event pipe");
    abort();
  }
}

void cli_loop_post_arg(cli_event_type_t type, int arg) {
  cli_event_t ev;
  memset(&ev, 0, sizeof ev); /* all of it goes through the pipe */
  ev.type = type;
  ev.arg = arg;
  cli_loop_post(&ev);
}

int64_t cli_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int poll_timeout_ms(int64_t deadline_ns) {
  if (deadline_ns == INT64_MAX) return -1;
  int64_t left = deadline_ns - cli_now_ns();
  if (left <= 0) return 0;
  int64_t ms = (left + 999999) / 1000000;
  return ms > INT_MAX ? INT_MAX : (int)ms;
}

static int read_signal(cli_event_t *ev) {
  unsigned char b;
  if (read(sig_pipe[0], &b, 1) != 1) return 0;
  memset(ev, 0, sizeof *ev);
  ev->type = b == SIGCHLD ? CLI_EV_CHILD : CLI_EV_SIGNAL;
  ev->arg = b;
  return 1;
}

int cli_loop_next(cli_event_t *ev, int64_t deadline_ns) {
  for (;;) {
    struct pollfd p[3] = {{.fd = sig_pipe[0], .events = POLLIN},
                          {.fd = ev_pipe[0], .events = POLLIN},
                          {.fd = session != NULL ? zkl_session_fd(session)
                                                 : -1,
                           .events = POLLIN}};
    int timeout = poll_timeout_ms(deadline_ns);
    int n = poll(p, 3, timeout);
    /* the completions post their events: read on the next turn */
    if (n > 0 && (p[2].revents & POLLIN)) zkl_session_dispatch(session);
    if (n < 0 && errno != EINTR) {
      perror("zkl: poll");
      abort();
    }
    if (n > 0 && (p[0].revents & POLLIN) && read_signal(ev)) return 1;
    if (n > 0 && (p[1].revents & (POLLIN | POLLHUP))) {
      ssize_t r;
      do r = read(ev_pipe[0], ev, sizeof *ev);
      while (r < 0 && errno == EINTR);
      if (r == (ssize_t)sizeof *ev) return 1;
      perror("zkl: event pipe");
      abort();
    }
    if (n == 0 && timeout == 0) return 0;
  }
}

int cli_thread_start(pthread_t *t, void *(*fn)(void *), void *arg) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(t, NULL, fn, arg);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return rc;
}
