/* zkl/adapters/libuv.h - runs a zkl session's completions on a libuv loop.
 *
 * Header-only (as hiredis's adapters): include it after <uv.h> is
 * available, link with libuv yourself.  The adapter polls the session's fd
 * (zkl_session_fd()) with a uv_poll_t and calls zkl_session_dispatch() on
 * the loop's thread whenever it is readable, so every completion of the
 * asynchronous calls (zkl_mutex_lock_async(), ...) and, with the options
 * on_state_in_dispatch and callbacks_in_dispatch, every state change and
 * election callback runs inside the loop.
 *
 *   zkl_uv_t za;
 *   zkl_uv_attach(&za, uv_default_loop(), session);
 *   ... zkl_mutex_lock_async(m, -1, on_locked, NULL); uv_run(...) ...
 *   zkl_uv_detach(&za, NULL);   then, after the loop ran once more,
 *   zkl_session_close(session);
 *
 * The zkl_uv_t belongs to the caller and must stay in place (not moved,
 * not freed) from attach until detach's close callback ran (or the loop
 * ran once more after detach with a NULL callback).  Use it from the
 * loop's thread only, as every libuv handle.
 */
#ifndef ZKL_ADAPTERS_LIBUV_H
#define ZKL_ADAPTERS_LIBUV_H

#include <uv.h>
#include <zkl.h>

typedef struct zkl_uv {
  uv_poll_t poll;    /* poll.data points back to this struct */
  zkl_session_t *s;
} zkl_uv_t;

static void zkl_uv__ready(uv_poll_t *h, int status, int events) {
  (void)status; /* an error on an eventfd: dispatch anyway, it is cheap */
  (void)events;
  zkl_uv_t *a = (zkl_uv_t *)h->data;
  zkl_session_dispatch(a->s);
}

/* Starts dispatching s's completions on `loop`.  0; a zkl code
 * (ZKL_EINVAL: NULL argument); or libuv's negative code from
 * uv_poll_init/uv_poll_start.  On failure there is nothing to undo; after
 * a libuv code, keep `a` in place until the loop has run once more (a
 * handle whose start failed is being closed). */
static inline int zkl_uv_attach(zkl_uv_t *a, uv_loop_t *loop,
                                zkl_session_t *s) {
  if (a == NULL || loop == NULL || s == NULL) return ZKL_EINVAL;
  int fd = zkl_session_fd(s);
  if (fd < 0) return fd;
  a->s = s;
  int rc = uv_poll_init(loop, &a->poll, fd);
  if (rc != 0) return rc;
  a->poll.data = a;
  rc = uv_poll_start(&a->poll, UV_READABLE, zkl_uv__ready);
  if (rc != 0) uv_close((uv_handle_t *)&a->poll, NULL);
  return rc;
}

/* Stops dispatching and closes the poll handle; on_closed (may be NULL)
 * runs from the loop when libuv has let go of it.  Completions that come
 * later wait in the session until zkl_session_dispatch() is called. */
static inline void zkl_uv_detach(zkl_uv_t *a, uv_close_cb on_closed) {
  if (a == NULL) return;
  uv_poll_stop(&a->poll);
  uv_close((uv_handle_t *)&a->poll, on_closed);
}

#endif /* ZKL_ADAPTERS_LIBUV_H */
