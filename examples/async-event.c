/* examples/async-event.c - a lock and an election inside a libevent
 * event_base, with the header-only adapter <zkl/adapters/libevent.h>.
 *
 *   async-event [HOSTS [PATH]]    (default 127.0.0.1:2181 /zkl-example)
 *
 * Exits 0 once it has held the lock and led, 1 on failure or after 20 s. */
#include <event2/event.h>
#include <stdlib.h>
#include <zkl/adapters/libevent.h>

#include "async-story.h"

static void stop(void *base) { event_base_loopbreak(base); }

int main(int argc, char **argv) {
  const char *hosts = argc > 1 ? argv[1] : "127.0.0.1:2181";
  const char *path = argc > 2 ? argv[2] : "/zkl-example";
  struct event_base *base = event_base_new();
  if (base == NULL) return 1;
  struct story st = {.stop = stop, .loop = base};
  if (story_start(&st, hosts, path) != 0) return 1;
  zkl_event_t ze;
  if (zkl_event_attach(&ze, base, st.s) != 0) return 1;
  struct timeval limit = {20, 0};
  event_base_loopexit(base, &limit);
  event_base_dispatch(base);
  zkl_event_detach(&ze);
  int ok = story_end(&st);
  event_base_free(base);
  return ok ? 0 : 1;
}
