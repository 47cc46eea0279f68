/* lib/core/engine.c - the thread that moves every operation of a session
 * forward.
 *
 * An operation (a lock's acquisition, a release) is a job: a function the
 * engine runs whenever something it waits for may have happened.  Posting
 * a job only links it into a FIFO run queue and signals, so ZooKeeper's
 * completion thread and its watcher may post (they do nothing else).  A
 * job may also set a timer (its deadline); the timers are a binary
 * min-heap, so 10,000 pending jobs cost O(log n) per timer change and no
 * thread each.  The engine knows nothing of what its jobs do. */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

struct zkl__engine {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  zkl__job_t *head, *tail; /* the run queue, FIFO                         */
  zkl__job_t **heap;       /* timers, earliest first                      */
  size_t n, cap;
  pthread_t thread;
  int running, stopping;
};

/* ---- timers: a binary min-heap on `when` (slot = index + 1) ------------- */

static void heap_set(zkl__engine_t *e, size_t i, zkl__job_t *j) {
  e->heap[i] = j;
  j->slot = i + 1;
}

static void heap_up(zkl__engine_t *e, size_t i) {
  zkl__job_t *j = e->heap[i];
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (e->heap[p]->when <= j->when) break;
    heap_set(e, i, e->heap[p]);
    i = p;
  }
  heap_set(e, i, j);
}

static void heap_down(zkl__engine_t *e, size_t i) {
  zkl__job_t *j = e->heap[i];
  for (;;) {
    size_t l = 2 * i + 1, m = i;
    zkl__job_t *least = j;
    if (l < e->n && e->heap[l]->when < least->when) least = e->heap[m = l];
    if (l + 1 < e->n && e->heap[l + 1]->when < least->when)
      least = e->heap[m = l + 1];
    if (m == i) break;
    heap_set(e, i, least);
    i = m;
  }
  heap_set(e, i, j);
}

static void heap_remove(zkl__engine_t *e, zkl__job_t *j) {
  size_t i = j->slot - 1;
  j->slot = 0;
  zkl__job_t *last = e->heap[--e->n];
  if (i == e->n) return;
  heap_set(e, i, last);
  heap_up(e, i);
  heap_down(e, last->slot - 1);
}

/* ---- the run queue ---------------------------------------------------------- */

static void runq_remove(zkl__engine_t *e, zkl__job_t *j) {
  if (j->prev != NULL) j->prev->next = j->next;
  else e->head = j->next;
  if (j->next != NULL) j->next->prev = j->prev;
  else e->tail = j->prev;
  j->prev = j->next = NULL;
  j->queued = 0;
}

void zkl__engine_post(zkl__engine_t *e, zkl__job_t *j) {
  pthread_mutex_lock(&e->mu);
  if (!j->queued && !j->forgotten) {
    j->queued = 1;
    j->next = NULL;
    j->prev = e->tail;
    if (e->tail != NULL) e->tail->next = j;
    else e->head = j;
    e->tail = j;
    if (j->prev == NULL) pthread_cond_signal(&e->cv);
  }
  pthread_mutex_unlock(&e->mu);
}

int zkl__engine_arm(zkl__engine_t *e, zkl__job_t *j, int64_t when) {
  int rc = 0;
  pthread_mutex_lock(&e->mu);
  if (j->slot != 0 && (when == ZKL__FOREVER || when != j->when))
    heap_remove(e, j);
  if (when != ZKL__FOREVER && j->slot == 0) {
    if (e->n == e->cap) {
      size_t cap = e->cap ? e->cap * 2 : 64;
      zkl__job_t **h = realloc(e->heap, cap * sizeof *h);
      if (h == NULL) rc = ZKL_ENOMEM;
      else {
        e->heap = h;
        e->cap = cap;
      }
    }
    if (rc == 0) {
      j->when = when;
      heap_set(e, e->n++, j);
      heap_up(e, e->n - 1);
      if (j->slot == 1) pthread_cond_signal(&e->cv); /* a new earliest */
    }
  }
  pthread_mutex_unlock(&e->mu);
  return rc;
}

void zkl__engine_forget(zkl__engine_t *e, zkl__job_t *j) {
  pthread_mutex_lock(&e->mu);
  j->forgotten = 1;
  if (j->queued) runq_remove(e, j);
  if (j->slot != 0) heap_remove(e, j);
  pthread_mutex_unlock(&e->mu);
}

/* ---- the thread ---------------------------------------------------------------- */

static void *engine_main(void *arg) {
  zkl__engine_t *e = arg;
  pthread_mutex_lock(&e->mu);
  /* stopping: what is queued still runs (a request's record that the
   * session's close answered, say), timers do not */
  while (!e->stopping || e->head != NULL) {
    zkl__job_t *j = e->head;
    if (j != NULL) {
      runq_remove(e, j);
    } else if (e->n > 0 && e->heap[0]->when <= zkl__now_ns()) {
      j = e->heap[0];
      heap_remove(e, j);
    } else {
      zkl__cond_wait_until(&e->cv, &e->mu,
                           e->n > 0 ? e->heap[0]->when : ZKL__FOREVER);
      continue;
    }
    /* the job may free itself: nothing of it is touched after run */
    pthread_mutex_unlock(&e->mu);
    j->run(j);
    pthread_mutex_lock(&e->mu);
  }
  pthread_mutex_unlock(&e->mu);
  return NULL;
}

int zkl__engine_on_thread(zkl__engine_t *e) {
  return e->running && pthread_equal(pthread_self(), e->thread);
}

zkl__engine_t *zkl__engine_new(void) {
  zkl__engine_t *e = calloc(1, sizeof *e);
  if (e == NULL) return NULL;
  if (pthread_mutex_init(&e->mu, NULL) != 0) {
    free(e);
    return NULL;
  }
  if (zkl__cond_init(&e->cv) != 0) {
    pthread_mutex_destroy(&e->mu);
    free(e);
    return NULL;
  }
  if (zkl__thread_start(&e->thread, engine_main, e) != 0) {
    pthread_cond_destroy(&e->cv);
    pthread_mutex_destroy(&e->mu);
    free(e);
    return NULL;
  }
  e->running = 1;
  return e;
}

void zkl__engine_free(zkl__engine_t *e) {
  if (e == NULL) return;
  pthread_mutex_lock(&e->mu);
  e->stopping = 1;
  pthread_cond_signal(&e->cv);
  pthread_mutex_unlock(&e->mu);
  pthread_join(e->thread, NULL);
  free(e->heap);
  pthread_cond_destroy(&e->cv);
  pthread_mutex_destroy(&e->mu);
  free(e);
}
