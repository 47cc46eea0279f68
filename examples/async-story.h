/* examples/async-story.h - what each event-loop example does, whatever its
 * loop: take a lock and run an election, both inside the loop, through
 * the session's completion queue.
 *
 *   1. lock PATH/lock asynchronously; when held, print the fencing token
 *      and release it asynchronously;
 *   2. stand in an election at PATH/leader with callbacks_in_dispatch;
 *      when elected, print the token and resign;
 *   3. once both are done (revoked, released), ask the loop to stop.
 *
 * Session states come through the loop too (on_state_in_dispatch): a real
 * daemon stops acting on its lock the moment it sees SUSPENDED. */
#ifndef ZKL_EXAMPLE_ASYNC_STORY_H
#define ZKL_EXAMPLE_ASYNC_STORY_H

#include <stdio.h>
#include <string.h>
#include <zkl.h>

struct story {
  zkl_session_t *s;
  zkl_mutex_t *m;
  zkl_election_t *e;
  int released, revoked, failed;
  void (*stop)(void *loop); /* asks the loop to end */
  void *loop;
};

static void story_check_end(struct story *st) {
  if (st->failed || (st->released && st->revoked)) st->stop(st->loop);
}

static void story_state(zkl_session_t *s, zkl_session_state_t state,
                        void *arg) {
  (void)s;
  (void)arg;
  static const char *names[] = {"connecting", "connected", "suspended",
                                "lost", "closed", "reconnected"};
  printf("session %s\n", names[state]);
  fflush(stdout);
}

static void story_unlocked(void *obj, int rc, uint64_t token, void *arg) {
  (void)obj;
  (void)token;
  struct story *st = arg;
  printf("lock released: %s\n", rc == 0 ? "ok" : zkl_last_error());
  st->released = 1;
  st->failed |= rc != 0;
  story_check_end(st);
}

static void story_locked(void *obj, int rc, uint64_t token, void *arg) {
  struct story *st = arg;
  if (rc != 0) {
    printf("lock failed: %s\n", zkl_last_error());
    st->failed = 1;
    story_check_end(st);
    return;
  }
  printf("lock held, token %llu\n", (unsigned long long)token);
  /* ... the work the lock protects, fenced with token ... */
  if (zkl_mutex_unlock_async(obj, story_unlocked, st) != 0) {
    st->failed = 1;
    story_check_end(st);
  }
}

static void story_elected(zkl_election_t *e, uint64_t token, void *arg) {
  (void)arg;
  printf("elected, token %llu\n", (unsigned long long)token);
  zkl_election_resign(e); /* on_revoked follows, through the loop too */
}

static void story_revoked(zkl_election_t *e, zkl_election_reason_t why,
                          void *arg) {
  (void)e;
  struct story *st = arg;
  printf("leadership ended (%s)\n",
         why == ZKL_REASON_RESIGNED ? "resigned" : "lost");
  st->revoked = 1;
  story_check_end(st);
}

/* Opens the session and starts both; 0 or a zkl code (printed). */
static int story_start(struct story *st, const char *hosts,
                       const char *path) {
  char lock[512], leader[512];
  snprintf(lock, sizeof lock, "%s/lock", path);
  snprintf(leader, sizeof leader, "%s/leader", path);
  zkl_session_opts_t so;
  zkl_session_opts_init(&so);
  so.on_state = story_state;
  so.on_state_in_dispatch = 1;
  int rc = zkl_session_open(&st->s, hosts, &so);
  if (rc == 0) rc = zkl_mutex_create(&st->m, st->s, lock, NULL);
  zkl_election_opts_t eo;
  zkl_election_opts_init(&eo);
  eo.on_elected = story_elected;
  eo.on_revoked = story_revoked;
  eo.arg = st;
  eo.callbacks_in_dispatch = 1;
  if (rc == 0) rc = zkl_election_create(&st->e, st->s, leader, NULL, 0, &eo);
  if (rc == 0) rc = zkl_mutex_lock_async(st->m, 10000, story_locked, st);
  if (rc == 0) rc = zkl_election_start(st->e);
  if (rc != 0)
    fprintf(stderr, "zkl: %s: %s\n", zkl_strerror(rc), zkl_last_error());
  return rc;
}

/* Frees everything; whether the story ran to its end. */
static int story_end(struct story *st) {
  zkl_election_destroy(st->e);
  zkl_mutex_destroy(st->m);
  zkl_session_close(st->s);
  return st->released && st->revoked && !st->failed;
}

#endif
