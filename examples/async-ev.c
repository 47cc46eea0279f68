/* examples/async-ev.c - a lock and an election inside a libev loop, with
 * the header-only adapter <zkl/adapters/libev.h>.
 *
 *   async-ev [HOSTS [PATH]]    (default 127.0.0.1:2181 /zkl-example)
 *
 * Exits 0 once it has held the lock and led, 1 on failure or after 20 s. */
#include <ev.h>
#include <stdlib.h>
#include <zkl/adapters/libev.h>

#include "async-story.h"

static void stop(void *loop) { ev_break(loop, EVBREAK_ALL); }
static void on_timeout(struct ev_loop *loop, ev_timer *t, int revents) {
  (void)t;
  (void)revents;
  ev_break(loop, EVBREAK_ALL);
}

int main(int argc, char **argv) {
  const char *hosts = argc > 1 ? argv[1] : "127.0.0.1:2181";
  const char *path = argc > 2 ? argv[2] : "/zkl-example";
  struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
  if (loop == NULL) return 1;
  struct story st = {.stop = stop, .loop = loop};
  if (story_start(&st, hosts, path) != 0) return 1;
  zkl_ev_t ze;
  if (zkl_ev_attach(&ze, loop, st.s) != 0) return 1;
  ev_timer limit;
  ev_timer_init(&limit, on_timeout, 20., 0.);
  ev_timer_start(loop, &limit);
  ev_run(loop, 0);
  ev_timer_stop(loop, &limit);
  zkl_ev_detach(&ze);
  int ok = story_end(&st);
  ev_loop_destroy(loop);
  return ok ? 0 : 1;
}
