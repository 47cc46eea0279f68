/* zkl/adapters/libevent.h - runs a zkl session's completions on a
 * libevent event_base.
 *
 * Header-only (as hiredis's adapters): include it where <event2/event.h>
 * is available, link with libevent yourself.  The adapter adds a
 * persistent read event on the session's fd (zkl_session_fd()) and calls
 * zkl_session_dispatch() from the event_base whenever it is readable, so
 * every completion of the asynchronous calls (zkl_mutex_lock_async(), ...)
 * and, with the options on_state_in_dispatch and callbacks_in_dispatch,
 * every state change and election callback runs inside the loop.
 *
 *   zkl_event_t ze;
 *   zkl_event_attach(&ze, base, session);
 *   ... zkl_mutex_lock_async(m, -1, on_locked, NULL); event_base_dispatch ...
 *   zkl_event_detach(&ze);
 *   zkl_session_close(session);
 *
 * The zkl_event_t belongs to the caller.  Attach and detach from the
 * base's thread (or with libevent's threading enabled).
 */
#ifndef ZKL_ADAPTERS_LIBEVENT_H
#define ZKL_ADAPTERS_LIBEVENT_H

#include <event2/event.h>
#include <zkl.h>

typedef struct zkl_event {
  struct event *ev;
  zkl_session_t *s;
} zkl_event_t;

static void zkl_event__ready(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  zkl_session_dispatch(((zkl_event_t *)arg)->s);
}

/* Starts dispatching s's completions on `base`.  0; ZKL_EINVAL (NULL
 * argument); ZKL_ENOMEM (event_new failed); or ZKL_ESYSTEM (event_add
 * failed).  On failure nothing is left to undo, and a->ev is NULL (when
 * `a` is not): zkl_event_detach() does nothing then. */
static inline int zkl_event_attach(zkl_event_t *a, struct event_base *base,
                                   zkl_session_t *s) {
  if (a != NULL) a->ev = NULL;
  if (a == NULL || base == NULL || s == NULL) return ZKL_EINVAL;
  int fd = zkl_session_fd(s);
  if (fd < 0) return fd;
  a->s = s;
  a->ev = event_new(base, fd, EV_READ | EV_PERSIST, zkl_event__ready, a);
  if (a->ev == NULL) return ZKL_ENOMEM;
  if (event_add(a->ev, NULL) != 0) {
    event_free(a->ev);
    a->ev = NULL;
    return ZKL_ESYSTEM;
  }
  return 0;
}

/* Stops dispatching (the event is deleted and freed).  Completions that
 * come later wait in the session until zkl_session_dispatch() is called. */
static inline void zkl_event_detach(zkl_event_t *a) {
  if (a == NULL || a->ev == NULL) return;
  event_free(a->ev);
  a->ev = NULL;
}

#endif /* ZKL_ADAPTERS_LIBEVENT_H */
