/* examples/async-poll.c - a lock and an election inside a plain poll(2)
 * loop, for programs with no loop library: poll the session's fd, call
 * zkl_session_dispatch() when it is readable.
 *
 *   async-poll [HOSTS [PATH]]    (default 127.0.0.1:2181 /zkl-example)
 *
 * Exits 0 once it has held the lock and led, 1 on failure or after 20 s. */
#include <poll.h>
#include <stdlib.h>
#include <time.h>

#include "async-story.h"

static void stop(void *loop) { *(int *)loop = 1; }

int main(int argc, char **argv) {
  const char *hosts = argc > 1 ? argv[1] : "127.0.0.1:2181";
  const char *path = argc > 2 ? argv[2] : "/zkl-example";
  int stopped = 0;
  struct story st = {.stop = stop, .loop = &stopped};
  if (story_start(&st, hosts, path) != 0) return 1;
  struct pollfd p = {zkl_session_fd(st.s), POLLIN, 0};
  time_t end = time(NULL) + 20;
  while (!stopped && time(NULL) < end) {
    /* ... the daemon's own fds would be polled here too ... */
    if (poll(&p, 1, 1000) == 1) zkl_session_dispatch(st.s);
  }
  return story_end(&st) ? 0 : 1;
}
