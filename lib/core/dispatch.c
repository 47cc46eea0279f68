/* lib/core/dispatch.c - completions waiting for the user's thread.
 *
 * What an asynchronous call reports (and, when asked, a session's state
 * changes) is queued here, from zkl's own threads, and run by
 * zkl_session_dispatch() on whatever thread calls it: an event loop's,
 * when the session's fd (an eventfd, readable while the queue is not
 * empty) says so.  Posting only links and, on the first record, writes the
 * eventfd. */
#include <errno.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core/core.h"

struct zkl__dispatch {
  pthread_mutex_t mu;
  pthread_cond_t cv;        /* a record's run ended                      */
  zkl__done_t *head, *tail;
  size_t n;
  int fd;
  /* the records being run now, one per dispatching thread at most; an
   * owner's destroy on another thread waits for its record to end */
  struct running {
    const void *owner;
    pthread_t thread;
    int used;
  } running[8];
};

/* With mu held: makes the fd readable (a full counter still is). */
static void signal_fd(zkl__dispatch_t *d) {
  uint64_t one = 1;
  while (write(d->fd, &one, sizeof one) < 0 && errno == EINTR) {
  }
}

zkl__dispatch_t *zkl__dispatch_new(void) {
  zkl__dispatch_t *d = calloc(1, sizeof *d);
  if (d == NULL) return NULL;
  d->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (d->fd < 0 || pthread_mutex_init(&d->mu, NULL) != 0) {
    if (d->fd >= 0) close(d->fd);
    free(d);
    return NULL;
  }
  if (pthread_cond_init(&d->cv, NULL) != 0) {
    pthread_mutex_destroy(&d->mu);
    close(d->fd);
    free(d);
    return NULL;
  }
  return d;
}

void zkl__dispatch_free(zkl__dispatch_t *d) {
  if (d == NULL) return;
  /* nobody will dispatch them now: freed undelivered */
  for (zkl__done_t *x = d->head, *next; x != NULL; x = next) {
    next = x->next;
    x->run(x, 0);
  }
  close(d->fd);
  pthread_cond_destroy(&d->cv);
  pthread_mutex_destroy(&d->mu);
  free(d);
}

int zkl__dispatch_fd(zkl__dispatch_t *d) { return d->fd; }

void zkl__dispatch_post(zkl__dispatch_t *d, zkl__done_t *x) {
  x->next = NULL;
  pthread_mutex_lock(&d->mu);
  if (d->tail != NULL) d->tail->next = x;
  else {
    d->head = x;
    signal_fd(d); /* the fd turns readable */
  }
  d->tail = x;
  d->n++;
  pthread_mutex_unlock(&d->mu);
}

/* One record at a time, each looked at (check) as it leaves the queue:
 * a callback that destroys another object still reaches that object's
 * records queued behind it (zkl__dispatch_orphan).  Only the records
 * queued at entry run; later ones leave the fd readable. */
int zkl__dispatch_run(zkl__dispatch_t *d) {
  pthread_mutex_lock(&d->mu);
  size_t todo = d->n;
  uint64_t n;
  while (read(d->fd, &n, sizeof n) < 0 && errno == EINTR) {
  }
  pthread_mutex_unlock(&d->mu);
  int ran = 0;
  for (; todo > 0; todo--) {
    struct running *slot = NULL;
    pthread_mutex_lock(&d->mu);
    zkl__done_t *x = d->head;
    if (x != NULL) {
      d->head = x->next;
      if (d->head == NULL) d->tail = NULL;
      d->n--;
      if (x->check != NULL) x->check(x);
      for (size_t i = 0; slot == NULL && i < 8; i++)
        if (!d->running[i].used) slot = &d->running[i];
      if (slot != NULL && x->owner != NULL) {
        slot->used = 1;
        slot->owner = x->owner;
        slot->thread = pthread_self();
      } else {
        slot = NULL;
      }
    }
    pthread_mutex_unlock(&d->mu);
    if (x == NULL) break;
    x->run(x, 1);
    ran++;
    if (slot != NULL) {
      pthread_mutex_lock(&d->mu);
      slot->used = 0;
      pthread_cond_broadcast(&d->cv);
      pthread_mutex_unlock(&d->mu);
    }
  }
  pthread_mutex_lock(&d->mu);
  if (d->head != NULL) signal_fd(d); /* queued meanwhile behind others */
  pthread_mutex_unlock(&d->mu);
  return ran;
}

/* Is a record of owner being run by another thread than the caller's? */
static int running_elsewhere(const zkl__dispatch_t *d, const void *owner) {
  for (size_t i = 0; i < 8; i++)
    if (d->running[i].used && d->running[i].owner == owner &&
        !pthread_equal(d->running[i].thread, pthread_self()))
      return 1;
  return 0;
}

void zkl__dispatch_orphan(zkl__dispatch_t *d, const void *owner) {
  pthread_mutex_lock(&d->mu);
  /* a destroy on one thread while another runs one of its records: that
   * record ends first (its callback may use the object) */
  while (running_elsewhere(d, owner)) pthread_cond_wait(&d->cv, &d->mu);
  for (zkl__done_t *x = d->head; x != NULL; x = x->next)
    if (x->owner == owner) {
      x->owner = NULL;
      if (x->orphan != NULL) x->orphan(x);
    }
  pthread_mutex_unlock(&d->mu);
}
