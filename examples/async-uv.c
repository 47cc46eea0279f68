/* examples/async-uv.c - a lock and an election inside a libuv loop, with
 * the header-only adapter <zkl/adapters/libuv.h>.
 *
 *   async-uv [HOSTS [PATH]]    (default 127.0.0.1:2181 /zkl-example)
 *
 * Exits 0 once it has held the lock and led, 1 on failure or after 20 s. */
#include <stdlib.h>
#include <uv.h>
#include <zkl/adapters/libuv.h>

#include "async-story.h"

static void stop(void *loop) { uv_stop(loop); }
static void on_timeout(uv_timer_t *t) { uv_stop(t->loop); }

int main(int argc, char **argv) {
  const char *hosts = argc > 1 ? argv[1] : "127.0.0.1:2181";
  const char *path = argc > 2 ? argv[2] : "/zkl-example";
  uv_loop_t *loop = uv_default_loop();
  struct story st = {.stop = stop, .loop = loop};
  if (story_start(&st, hosts, path) != 0) return 1;
  zkl_uv_t za;
  uv_timer_t timer;
  uv_timer_init(loop, &timer);
  uv_timer_start(&timer, on_timeout, 20000, 0);
  if (zkl_uv_attach(&za, loop, st.s) != 0) return 1;
  uv_run(loop, UV_RUN_DEFAULT);
  zkl_uv_detach(&za, NULL);
  uv_close((uv_handle_t *)&timer, NULL);
  uv_run(loop, UV_RUN_DEFAULT); /* lets the handles close */
  uv_loop_close(loop);
  return story_end(&st) ? 0 : 1;
}
