/* zkl/adapters/libev.h - runs a zkl session's completions on a libev loop.
 *
 * Header-only (as hiredis's adapters): include it where <ev.h> is
 * available, link with libev (-lev) yourself.  The adapter watches the
 * session's fd (zkl_session_fd()) with an ev_io and calls
 * zkl_session_dispatch() on the loop's thread whenever it is readable, so
 * every completion of the asynchronous calls (zkl_mutex_lock_async(), ...)
 * and, with the options on_state_in_dispatch and callbacks_in_dispatch,
 * every state change and election callback runs inside the loop.
 *
 *   zkl_ev_t ze;
 *   zkl_ev_attach(&ze, EV_DEFAULT, session);
 *   ... zkl_mutex_lock_async(m, -1, on_locked, NULL); ev_run(...) ...
 *   zkl_ev_detach(&ze);
 *   zkl_session_close(session);
 *
 * The zkl_ev_t belongs to the caller and must stay in place (not moved,
 * not freed) from attach until detach; detach takes effect at once.  Use
 * it from the loop's thread only, as every libev watcher.
 */
#ifndef ZKL_ADAPTERS_LIBEV_H
#define ZKL_ADAPTERS_LIBEV_H

#include <ev.h>
#include <zkl.h>

typedef struct zkl_ev {
  ev_io io;              /* io.data points back to this struct */
  struct ev_loop *loop;  /* NULL: not attached */
  zkl_session_t *s;
} zkl_ev_t;

static void zkl_ev__ready(struct ev_loop *loop, ev_io *w, int revents) {
  (void)loop;
  (void)revents; /* EV_ERROR on an eventfd: dispatch anyway, it is cheap */
  zkl_ev_t *a = (zkl_ev_t *)w->data;
  zkl_session_dispatch(a->s);
}

/* Starts dispatching s's completions on `loop`.  0, or ZKL_EINVAL (NULL
 * argument).  On failure nothing is left
 * to undo, and a->loop is NULL (when `a` is not): zkl_ev_detach() does
 * nothing then.  (libev's ev_io_start() cannot fail: libev ends the
 * process on an internal error.) */
static inline int zkl_ev_attach(zkl_ev_t *a, struct ev_loop *loop,
                                zkl_session_t *s) {
  if (a != NULL) a->loop = NULL;
  if (a == NULL || loop == NULL || s == NULL) return ZKL_EINVAL;
  int fd = zkl_session_fd(s);
  if (fd < 0) return fd;
  a->s = s;
  ev_io_init(&a->io, zkl_ev__ready, fd, EV_READ);
  a->io.data = a;
  ev_io_start(loop, &a->io);
  a->loop = loop;
  return 0;
}

/* Stops dispatching (the watcher is stopped, at once: `a` may be freed,
 * the session closed, or `a` attached again right after).  Completions
 * that come later wait in the session until zkl_session_dispatch() is
 * called.  A second call, or one after a failed attach, does nothing. */
static inline void zkl_ev_detach(zkl_ev_t *a) {
  if (a == NULL || a->loop == NULL) return;
  ev_io_stop(a->loop, &a->io);
  a->loop = NULL;
}

#endif /* ZKL_ADAPTERS_LIBEV_H */
