/* tests/unit/test-args.c - what needs no server: the public API's argument
 * checks, the mutex driver's predicates (lib/recipes/mutex.c) and monotonic
 * deadlines (lib/time.c). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <zookeeper/zookeeper.h>

#include "suites.h"
#include "core/contend.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* A non-NULL pointer that is no object of the library: output parameters
 * start as this so that a test sees that failure resets them to NULL. */
static max_align_t sentinel_obj;
#define SENTINEL ((void *)&sentinel_obj)

/* Nothing listens on port 1: should an invalid option slip through, the
 * open fails fast with ZKL_ECONNECT instead of passing or hanging. */
#define NO_SERVER "127.0.0.1:1"

/* ---- zkl_session_open / zkl_session_opts_init ------------------------------ */

START_TEST(session_open_null_args) {
  ck_assert_int_eq(zkl_session_open(NULL, NO_SERVER, NULL), ZKL_EINVAL);

  zkl_session_t *s = SENTINEL;
  ck_assert_int_eq(zkl_session_open(&s, NULL, NULL), ZKL_EINVAL);
  ck_assert_ptr_null(s);
  ck_assert_str_ne(zkl_last_error(), "");

  s = SENTINEL;
  ck_assert_int_eq(zkl_session_open(&s, "", NULL), ZKL_EINVAL);
  ck_assert_ptr_null(s);
  ck_assert_str_ne(zkl_last_error(), "");
}
END_TEST

START_TEST(session_opts_defaults) {
  zkl_session_opts_t o;
  memset(&o, 0xa5, sizeof o);
  zkl_session_opts_init(&o);
  ck_assert_int_eq(o.session_timeout_ms, 10000);
  ck_assert_int_eq(o.connect_timeout_ms, 10000);
  ck_assert_ptr_null(o.auth);
  ck_assert_int_eq(o.acl, ZKL_ACL_OPEN);
  ck_assert_ptr_null(o.custom_acl);
  ck_assert_ptr_null(o.log_stream);
  ck_assert_int_eq(o.log_level, 0);
  zkl_session_opts_init(NULL); /* tolerated */
}
END_TEST

static struct ACL_vector empty_acl = {0, NULL};

/* Each makes one option invalid; the rest are valid and fail fast. */
static void bad_session_timeout_neg(zkl_session_opts_t *o) { o->session_timeout_ms = -1; }
static void bad_session_timeout_zero(zkl_session_opts_t *o) { o->session_timeout_ms = 0; }
static void bad_connect_timeout_neg(zkl_session_opts_t *o) { o->connect_timeout_ms = -1; }
static void bad_connect_timeout_zero(zkl_session_opts_t *o) { o->connect_timeout_ms = 0; }
static void bad_creator_all_no_auth(zkl_session_opts_t *o) { o->acl = ZKL_ACL_CREATOR_ALL; }
static void bad_read_all_no_auth(zkl_session_opts_t *o) { o->acl = ZKL_ACL_READ_ALL; }
static void bad_custom_null(zkl_session_opts_t *o) { o->acl = ZKL_ACL_CUSTOM; }
static void bad_custom_empty(zkl_session_opts_t *o) {
  o->acl = ZKL_ACL_CUSTOM;
  o->custom_acl = &empty_acl;
}
static void bad_auth_no_colon(zkl_session_opts_t *o) { o->auth = "userpassword"; }
static void bad_auth_empty(zkl_session_opts_t *o) { o->auth = ""; }
static void bad_acl_unknown(zkl_session_opts_t *o) { o->acl = (zkl_acl_t)99; }
static void bad_log_level_high(zkl_session_opts_t *o) { o->log_level = 5; }
static void bad_log_level_neg(zkl_session_opts_t *o) { o->log_level = -1; }

static const struct {
  const char *what;
  void (*spoil)(zkl_session_opts_t *);
} bad_opts[] = {
    {"session_timeout_ms = -1", bad_session_timeout_neg},
    {"session_timeout_ms = 0", bad_session_timeout_zero},
    {"connect_timeout_ms = -1", bad_connect_timeout_neg},
    {"connect_timeout_ms = 0", bad_connect_timeout_zero},
    {"ZKL_ACL_CREATOR_ALL without auth", bad_creator_all_no_auth},
    {"ZKL_ACL_READ_ALL without auth", bad_read_all_no_auth},
    {"ZKL_ACL_CUSTOM with NULL custom_acl", bad_custom_null},
    {"ZKL_ACL_CUSTOM with an empty custom_acl", bad_custom_empty},
    {"auth without ':'", bad_auth_no_colon},
    {"auth \"\"", bad_auth_empty},
    {"acl = 99", bad_acl_unknown},
    {"log_level = 5", bad_log_level_high},
    {"log_level = -1", bad_log_level_neg},
};

START_TEST(session_open_bad_opts) {
  zkl_session_opts_t o;
  zkl_session_opts_init(&o);
  o.connect_timeout_ms = 100;
  bad_opts[_i].spoil(&o);
  zkl_session_t *s = SENTINEL;
  int rc = zkl_session_open(&s, NO_SERVER, &o);
  ck_assert_msg(rc == ZKL_EINVAL, "%s: returned %d (%s), want ZKL_EINVAL",
                bad_opts[_i].what, rc, zkl_err_name(rc));
  ck_assert_msg(s == NULL, "%s: *out not reset to NULL", bad_opts[_i].what);
  ck_assert_msg(zkl_last_error()[0] != '\0', "%s: no detail message",
                bad_opts[_i].what);
}
END_TEST

START_TEST(session_open_no_server) {
  /* The control for the cases above: valid options get past the checks
   * and fail only for want of a server. */
  zkl_session_opts_t o;
  zkl_session_opts_init(&o);
  o.connect_timeout_ms = 200;
  zkl_session_t *s = SENTINEL;
  int rc = zkl_session_open(&s, NO_SERVER, &o);
  ck_assert_msg(rc == ZKL_ECONNECT, "returned %d (%s), want ZKL_ECONNECT", rc,
                zkl_err_name(rc));
  ck_assert_ptr_null(s);
  ck_assert_msg(strstr(zkl_last_error(), NO_SERVER) != NULL,
                "detail \"%s\" does not name the hosts", zkl_last_error());
}
END_TEST

/* ---- NULL handles ------------------------------------------------------------ */

START_TEST(session_null_handle) {
  zkl_session_close(NULL); /* no-op */
  ck_assert_int_eq(zkl_session_state(NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_session_timeout(NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_session_id(NULL), 0);
  ck_assert_ptr_null(zkl_session_zhandle(NULL));
}
END_TEST

START_TEST(mutex_opts_defaults) {
  zkl_mutex_opts_t o;
  memset(&o, 0xa5, sizeof o);
  zkl_mutex_opts_init(&o);
  ck_assert_ptr_null(o.data);
  ck_assert_uint_eq(o.data_len, 0);
  zkl_mutex_opts_init(NULL); /* tolerated */
}
END_TEST

START_TEST(mutex_create_null_args) {
  ck_assert_int_eq(zkl_mutex_create(NULL, NULL, "/a", NULL), ZKL_EINVAL);
  zkl_mutex_t *m = SENTINEL;
  ck_assert_int_eq(zkl_mutex_create(&m, NULL, "/a", NULL), ZKL_EINVAL);
  ck_assert_ptr_null(m);
  ck_assert_str_ne(zkl_last_error(), "");
  m = SENTINEL;
  ck_assert_int_eq(zkl_mutex_create(&m, NULL, NULL, NULL), ZKL_EINVAL);
  ck_assert_ptr_null(m);
}
END_TEST

START_TEST(mutex_null_handle) {
  ck_assert_int_eq(zkl_mutex_lock(NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_mutex_trylock(NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_mutex_timedlock(NULL, 10), ZKL_EINVAL);
  ck_assert_int_eq(zkl_mutex_timedlock(NULL, 0), ZKL_EINVAL);
  ck_assert_int_eq(zkl_mutex_timedlock(NULL, -1), ZKL_EINVAL);
  ck_assert_int_eq(zkl_mutex_unlock(NULL), ZKL_EINVAL);
  ck_assert_int_eq(zkl_mutex_cancel(NULL), ZKL_EINVAL);
  uint64_t token = 77;
  ck_assert_int_eq(zkl_mutex_token(NULL, &token), ZKL_EINVAL);
  ck_assert_uint_eq(token, 77);
  ck_assert_int_eq(zkl_mutex_holding(NULL), ZKL_EINVAL);
  char buf[64] = "untouched";
  ck_assert_int_eq(zkl_mutex_node(NULL, buf, sizeof buf), ZKL_EINVAL);
  ck_assert_str_eq(buf, "untouched");
  zkl_mutex_destroy(NULL); /* no-op */
}
END_TEST

/* ---- the mutex driver --------------------------------------------------------- */

static const zkl__kind_t all_kinds[] = {
    ZKL__KIND_NONE,        ZKL__KIND_LOCK, ZKL__KIND_KAZOO_LOCK,
    ZKL__KIND_KAZOO_RLOCK, ZKL__KIND_READ, ZKL__KIND_WRITE,
    ZKL__KIND_LATCH,
};

START_TEST(driver_mutex_fields) {
  const zkl__driver_t *d = &zkl__driver_mutex;
  ck_assert_str_eq(d->name, "mutex");
  ck_assert_str_eq(d->marker, "lock-");
  ck_assert_int_eq(d->kind, ZKL__KIND_LOCK);
  ck_assert_int_ne(d->tells_release, 0);
  ck_assert_ptr_nonnull(d->counts);
  ck_assert_ptr_nonnull(d->blocker);
}
END_TEST

START_TEST(driver_mutex_counts) {
  zkl__kind_t k = all_kinds[_i];
  int want = k == ZKL__KIND_LOCK || k == ZKL__KIND_KAZOO_LOCK;
  int got = zkl__driver_mutex.counts(k) != 0;
  ck_assert_msg(got == want, "counts(kind %d) = %d, want %d", (int)k, got,
                want);
}
END_TEST

START_TEST(driver_mutex_blocker) {
  const zkl__node_t lower[] = {
      {"ab__lock__0000000001", 1, ZKL__KIND_KAZOO_LOCK},
      {"_c_a-lock-0000000002", 2, ZKL__KIND_LOCK},
      {"_c_b-lock-0000000003", 3, ZKL__KIND_LOCK},
      {"cd__lock__0000000004", 4, ZKL__KIND_KAZOO_LOCK},
      {"_c_c-lock-0000000005", 5, ZKL__KIND_LOCK},
  };
  ck_assert_int_eq(zkl__driver_mutex.blocker(NULL, 0), -1);
  ck_assert_int_eq(zkl__driver_mutex.blocker(lower, 0), -1);
  for (size_t n = 1; n <= 5; n++)
    ck_assert_int_eq(zkl__driver_mutex.blocker(lower, n), (ptrdiff_t)n - 1);
}
END_TEST

START_TEST(driver_mutex_own_names) {
  /* Our own node, "<prefix><marker><seq>", is one the driver counts. */
  const zkl__driver_t *d = &zkl__driver_mutex;
  static const int32_t seqs[] = {0, 17, INT32_MAX, -5};
  char prefix[ZKL__PREFIX_LEN + 1], name[128];
  zkl__prefix_new(prefix);
  for (int i = 0; i < COUNT(seqs); i++) {
    snprintf(name, sizeof name, "%s%s%010" PRId32, prefix, d->marker, seqs[i]);
    zkl__node_t n;
    ck_assert_msg(zkl__name_parse(name, &n) == 0, "\"%s\" not parsed", name);
    ck_assert_int_eq(n.kind, d->kind);
    ck_assert_int_eq(n.seq, seqs[i]);
    ck_assert_int_ne(d->counts(n.kind), 0);
    ck_assert_int_ne(zkl__name_is_mine(name, prefix), 0);
  }
}
END_TEST

/* ---- time ------------------------------------------------------------------------ */

START_TEST(deadline_after_ms) {
  ck_assert(zkl__deadline_after_ms(-1) == ZKL__FOREVER);
  ck_assert(zkl__deadline_after_ms(-1000) == ZKL__FOREVER);
  ck_assert(zkl__deadline_after_ms(INT64_MIN) == ZKL__FOREVER);
  /* Would overflow int64 nanoseconds: forever, not a wrapped past. */
  ck_assert(zkl__deadline_after_ms(INT64_MAX) == ZKL__FOREVER);
  ck_assert(zkl__deadline_after_ms(INT64_MAX / 1000000) == ZKL__FOREVER);
  ck_assert(zkl__deadline_after_ms(INT64_MAX / 1000) == ZKL__FOREVER);

  int64_t before = zkl__now_ns();
  int64_t d0 = zkl__deadline_after_ms(0);
  int64_t d1 = zkl__deadline_after_ms(1500);
  int64_t after = zkl__now_ns();
  ck_assert_int_ge(d0, before);
  ck_assert_int_le(d0, after);
  ck_assert_int_ge(d1, before + INT64_C(1500000000));
  ck_assert_int_le(d1, after + INT64_C(1500000000));

  /* Large but representable (about 31 years): a real deadline. */
  int64_t big = INT64_C(1000000000000);
  int64_t db = zkl__deadline_after_ms(big);
  ck_assert(db != ZKL__FOREVER);
  ck_assert_int_ge(db, before + big * 1000000);
  ck_assert_int_le(db, zkl__now_ns() + big * 1000000);
}
END_TEST

START_TEST(now_is_monotonic) {
  int64_t a = zkl__now_ns();
  int64_t b = zkl__now_ns();
  ck_assert_int_gt(a, 0);
  ck_assert_int_ge(b, a);
}
END_TEST

/* A mutex and a monotonic condition variable for the wait tests. */
struct waitpair {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int flag;
};

static void waitpair_init(struct waitpair *w) {
  ck_assert_int_eq(pthread_mutex_init(&w->mu, NULL), 0);
  ck_assert_int_eq(zkl__cond_init(&w->cv), 0);
  w->flag = 0;
}

static void waitpair_fini(struct waitpair *w) {
  pthread_cond_destroy(&w->cv);
  pthread_mutex_destroy(&w->mu);
}

START_TEST(cond_wait_past_deadline) {
  struct waitpair w;
  waitpair_init(&w);
  pthread_mutex_lock(&w.mu);
  ck_assert_int_eq(zkl__cond_wait_until(&w.cv, &w.mu, zkl__now_ns() - 1),
                   ETIMEDOUT);
  ck_assert_int_eq(zkl__cond_wait_until(&w.cv, &w.mu, ZKL__TRY), ETIMEDOUT);
  ck_assert_int_eq(zkl__cond_wait_until(&w.cv, &w.mu, INT64_MIN), ETIMEDOUT);
  pthread_mutex_unlock(&w.mu);
  waitpair_fini(&w);
}
END_TEST

START_TEST(cond_wait_times_out_on_monotonic_clock) {
  /* Waits the full interval: a condition variable on the wrong clock
   * would return at once (a monotonic deadline is long past in wall time). */
  struct waitpair w;
  waitpair_init(&w);
  const int64_t wait_ns = 30 * INT64_C(1000000);
  int64_t start = zkl__now_ns();
  int64_t deadline = start + wait_ns;
  pthread_mutex_lock(&w.mu);
  int rc, spurious = 0;
  while ((rc = zkl__cond_wait_until(&w.cv, &w.mu, deadline)) == 0)
    ck_assert_int_lt(++spurious, 1000);
  pthread_mutex_unlock(&w.mu);
  int64_t elapsed = zkl__now_ns() - start;
  ck_assert_int_eq(rc, ETIMEDOUT);
  ck_assert_int_ge(elapsed, wait_ns);
  waitpair_fini(&w);
}
END_TEST

static void *signaller(void *arg) {
  struct waitpair *w = arg;
  pthread_mutex_lock(&w->mu);
  w->flag = 1;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

START_TEST(cond_wait_signalled) {
  struct waitpair w;
  waitpair_init(&w);
  const int64_t limit_ns = 5 * INT64_C(1000000000);
  int64_t start = zkl__now_ns();
  pthread_t t;
  int rc = 0;
  pthread_mutex_lock(&w.mu); /* the signaller cannot run before we wait */
  ck_assert_int_eq(pthread_create(&t, NULL, signaller, &w), 0);
  while (!w.flag && rc == 0)
    rc = zkl__cond_wait_until(&w.cv, &w.mu, start + limit_ns);
  int flag = w.flag;
  pthread_mutex_unlock(&w.mu);
  pthread_join(t, NULL);
  ck_assert_int_eq(rc, 0);
  ck_assert_int_eq(flag, 1);
  ck_assert_int_lt(zkl__now_ns() - start, limit_ns);
  waitpair_fini(&w);
}
END_TEST

/* ---- the suite ---------------------------------------------------------------------- */

static TCase *tcase(Suite *s, const char *name) {
  TCase *tc = tcase_create(name);
  suite_add_tcase(s, tc);
  return tc;
}

Suite *args_suite(void) {
  Suite *s = suite_create("args");
  TCase *tc = tcase(s, "session_open");
  tcase_add_test(tc, session_open_null_args);
  tcase_add_test(tc, session_opts_defaults);
  tcase_add_loop_test(tc, session_open_bad_opts, 0, COUNT(bad_opts));
  tcase_add_test(tc, session_open_no_server);
  tcase_add_test(tcase(s, "session_null"), session_null_handle);
  tc = tcase(s, "mutex_args");
  tcase_add_test(tc, mutex_opts_defaults);
  tcase_add_test(tc, mutex_create_null_args);
  tcase_add_test(tc, mutex_null_handle);
  tc = tcase(s, "driver_mutex");
  tcase_add_test(tc, driver_mutex_fields);
  tcase_add_loop_test(tc, driver_mutex_counts, 0, COUNT(all_kinds));
  tcase_add_test(tc, driver_mutex_blocker);
  tcase_add_test(tc, driver_mutex_own_names);
  tc = tcase(s, "time");
  tcase_add_test(tc, deadline_after_ms);
  tcase_add_test(tc, now_is_monotonic);
  tcase_add_test(tc, cond_wait_past_deadline);
  tcase_add_test(tc, cond_wait_times_out_on_monotonic_clock);
  tcase_add_test(tc, cond_wait_signalled);
  return s;
}
