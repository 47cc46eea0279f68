/* lib/core/time.c - monotonic deadlines and condition waits on them. */
#include <errno.h>
#include <time.h>

#include "core/core.h"

int64_t zkl__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t zkl__deadline_after_ms(int64_t timeout_ms) {
  if (timeout_ms < 0) return ZKL__FOREVER;
  if (timeout_ms > (ZKL__FOREVER - zkl__now_ns()) / 1000000) return ZKL__FOREVER;
  return zkl__now_ns() + timeout_ms * 1000000;
}

int zkl__cond_init(pthread_cond_t *cv) {
  pthread_condattr_t attr;
  if (pthread_condattr_init(&attr) != 0) return ZKL_ESYSTEM;
  int rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  if (rc == 0) rc = pthread_cond_init(cv, &attr);
  pthread_condattr_destroy(&attr);
  return rc == 0 ? 0 : ZKL_ESYSTEM;
}

int zkl__cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu,
                         int64_t deadline_ns) {
  if (deadline_ns == ZKL__FOREVER) {
    pthread_cond_wait(cv, mu);
    return 0;
  }
  if (deadline_ns <= zkl__now_ns()) return ETIMEDOUT;
  struct timespec ts = {.tv_sec = deadline_ns / 1000000000,
                        .tv_nsec = deadline_ns % 1000000000};
  return pthread_cond_timedwait(cv, mu, &ts) == ETIMEDOUT ? ETIMEDOUT : 0;
}
