/* examples/queue-demo.c - act 3 of scripts/demo: a work queue with
 * at-least-once delivery.  A producer puts jobs; consumers claim one at a
 * time, work on it, and ack it.  A consumer killed in the middle of a job
 * acked nothing: its claim goes with its session, and another consumer
 * gets the job again, with a larger delivery token.
 *
 *   queue-demo HOSTS PATH produce N
 *       puts N jobs "job-001".. in batches of 10, prints "produced N"
 *   queue-demo HOSTS PATH consume NAME [WORK_MS [SESSION_MS [IDLE_MS]]]
 *       claims jobs until none came for IDLE_MS (default 3000); for each
 *       prints "NAME claimed JOB token T", works WORK_MS (default 300)
 *       while the claim holds, acks, and prints "NAME done JOB token T"
 *       (or "NAME lost JOB" when the claim went first)
 *
 * Exit status: 0, or 1 on an error (printed on stderr). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zkl.h>

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static zkl_queue_t *open_queue(zkl_session_t *s, const char *path) {
  zkl_queue_opts_t o;
  zkl_queue_opts_init(&o);
  o.format = ZKL_QUEUE_LOCKING; /* claims: kazoo's LockingQueue layout */
  zkl_queue_t *q = NULL;
  if (zkl_queue_create(&q, s, path, &o) != 0)
    fprintf(stderr, "queue: %s\n", zkl_last_error());
  return q;
}

static int produce(zkl_queue_t *q, int n) {
  for (int i = 0; i < n; i += 10) {
    char names[10][16];
    zkl_buf_t b[10];
    int k = 0;
    for (; k < 10 && i + k < n; k++) {
      snprintf(names[k], sizeof names[k], "job-%03d", i + k + 1);
      b[k] = (zkl_buf_t){names[k], strlen(names[k])};
    }
    if (zkl_queue_put_batch(q, b, (size_t)k, 10000) != 0) {
      fprintf(stderr, "put: %s\n", zkl_last_error());
      return 1;
    }
  }
  printf("produced %d\n", n);
  return 0;
}

static int consume(zkl_queue_t *q, const char *name, long work_ms,
                   long idle_ms) {
  int done = 0;
  for (;;) {
    zkl_item_t it;
    int rc = zkl_queue_claim(q, idle_ms, &it);
    if (rc == ZKL_ETIMEDOUT) break; /* no job came for a while: finished */
    if (rc != 0) {
      fprintf(stderr, "%s: claim: %s\n", name, zkl_last_error());
      return 1;
    }
    printf("%s claimed %.*s token %llu\n", name, (int)it.len, it.data,
           (unsigned long long)it.token);
    fflush(stdout);
    int ok = 1;
    for (long t = 0; t < work_ms && ok; t += 10) { /* the work, fenced */
      sleep_ms(10);
      ok = zkl_queue_claim_health(q, &it) == 0;
    }
    rc = ok ? zkl_queue_ack(q, &it) : ZKL_ELOST;
    if (rc == 0) {
      printf("%s done %.*s token %llu\n", name, (int)it.len, it.data,
             (unsigned long long)it.token);
      done++;
    } else {
      printf("%s lost %.*s (%s): someone else does it again\n", name,
             (int)it.len, it.data, zkl_strerror(rc));
      if (rc != ZKL_ELOST) zkl_queue_nack(q, &it, ZKL_QUEUE_HEAD);
    }
    fflush(stdout);
    zkl_item_free(&it);
  }
  printf("%s finished: %d jobs\n", name, done);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 5 || (strcmp(argv[3], "produce") != 0 &&
                   strcmp(argv[3], "consume") != 0)) {
    fprintf(stderr, "usage: %s HOSTS PATH produce N\n"
                    "       %s HOSTS PATH consume NAME [WORK_MS "
                    "[SESSION_MS [IDLE_MS]]]\n", argv[0], argv[0]);
    return 2;
  }
  int consumer = strcmp(argv[3], "consume") == 0;
  long work_ms = consumer && argc > 5 ? atol(argv[5]) : 300;
  long session_ms = consumer && argc > 6 ? atol(argv[6]) : 4000;
  long idle_ms = consumer && argc > 7 ? atol(argv[7]) : 3000;
  zkl_session_opts_t so;
  zkl_session_opts_init(&so);
  so.session_timeout_ms = (int32_t)session_ms;
  zkl_session_t *s = NULL;
  if (zkl_session_open(&s, argv[1], &so) != 0) {
    fprintf(stderr, "session: %s\n", zkl_last_error());
    return 1;
  }
  zkl_queue_t *q = open_queue(s, argv[2]);
  int rc = 1;
  if (q != NULL)
    rc = consumer ? consume(q, argv[4], work_ms, idle_ms)
                  : produce(q, atoi(argv[4]));
  zkl_queue_destroy(q);
  zkl_session_close(s);
  return rc;
}
