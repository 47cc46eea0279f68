/* lib/core/owner.c - which thread of this process uses a recipe object now.
 *
 * Recipe objects are reentrant per thread, like recursive pthread mutexes:
 * while one thread holds (or is acquiring) through an object, the other
 * threads using the same object wait here, locally, without ZooKeeper
 * traffic.  The cancel generation lives here too, shared by every wait of
 * the object (local and in the contention core). */
#include <signal.h>

#include "core/core.h"

int zkl__owner_init(zkl__owner_t *o) {
  o->busy = 0;
  o->async = 0;
  o->active = 0;
  o->dying = 0;
  atomic_init(&o->cancel_gen, 0);
  if (pthread_mutex_init(&o->mu, NULL) != 0) return ZKL_ESYSTEM;
  if (zkl__cond_init(&o->cv) != 0) {
    pthread_mutex_destroy(&o->mu);
    return ZKL_ESYSTEM;
  }
  return 0;
}

void zkl__owner_fini(zkl__owner_t *o) {
  pthread_cond_destroy(&o->cv);
  pthread_mutex_destroy(&o->mu);
}

int zkl__owner_mine(const zkl__owner_t *o) {
  return o->busy && !o->async && pthread_equal(o->thread, pthread_self());
}

int zkl__owner_claim(zkl__owner_t *o, int64_t deadline, unsigned cancel_seen) {
  while (o->busy) {
    if (deadline == ZKL__TRY)
      return zkl__fail(ZKL_EBUSY, "another thread uses this object");
    if (atomic_load(&o->cancel_gen) != cancel_seen) return ZKL_ECANCELED;
    if (zkl__cond_wait_until(&o->cv, &o->mu, deadline) != 0 && o->busy)
      return ZKL_ETIMEDOUT;
  }
  o->busy = 1;
  o->async = 0;
  o->thread = pthread_self();
  return 0;
}

void zkl__owner_free(zkl__owner_t *o) {
  o->busy = 0;
  o->async = 0;
  pthread_cond_broadcast(&o->cv);
}

void zkl__owner_cancel(zkl__owner_t *o) {
  atomic_fetch_add(&o->cancel_gen, 1);
  pthread_mutex_lock(&o->mu);
  pthread_cond_broadcast(&o->cv);
  pthread_mutex_unlock(&o->mu);
}

int zkl__owner_enter(zkl__owner_t *o, unsigned *cancel_seen) {
  pthread_mutex_lock(&o->mu);
  int rc = o->dying ? ZKL_ECANCELED : 0;
  if (rc == 0) o->active++;
  /* read under mu: drain sets dying before it bumps the generation, so a
   * call that got in sees the bump as a cancel */
  *cancel_seen = atomic_load(&o->cancel_gen);
  pthread_mutex_unlock(&o->mu);
  return rc;
}

int zkl__owner_dying(zkl__owner_t *o) {
  pthread_mutex_lock(&o->mu);
  int d = o->dying;
  pthread_mutex_unlock(&o->mu);
  return d;
}

void zkl__owner_leave(zkl__owner_t *o) {
  pthread_mutex_lock(&o->mu);
  if (--o->active == 0 && o->dying) pthread_cond_broadcast(&o->cv);
  pthread_mutex_unlock(&o->mu);
}

void zkl__owner_drain(zkl__owner_t *o, void (*kick)(void *), void *arg) {
  pthread_mutex_lock(&o->mu);
  o->dying = 1;
  pthread_mutex_unlock(&o->mu);
  zkl__owner_cancel(o);
  kick(arg); /* wake the waits in the contention core */
  pthread_mutex_lock(&o->mu);
  while (o->active > 0) pthread_cond_wait(&o->cv, &o->mu);
  pthread_mutex_unlock(&o->mu);
}

int zkl__thread_start(pthread_t *t, void *(*fn)(void *), void *arg) {
  /* zkl's threads take no signals: they stay with the application's
   * threads (e.g. a sigwait() thread). */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(t, NULL, fn, arg);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return rc == 0 ? 0 : ZKL_ESYSTEM;
}
