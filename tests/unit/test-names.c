/* tests/unit/test-names.c - contender node names (lib/names.c): parsing
 * every peer's shape, ordering by ZooKeeper's wrapping counter, and our
 * own "_c_<uuid>-" prefix. */
#include <ctype.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "suites.h"
#include "core/contend.h"

#define CURATOR_HEAD "_c_0f8e4b5a-3c2d-4e1f-9a8b-7c6d5e4f3a2b-"
#define GOZK_HEAD "_c_9b2f0e6c1d7a4e3f8b5c2a1d0e9f8a7b-"
#define KAZOO_HEAD "5f0c3e2a9d8b4c7a6e1f2d3c4b5a6978"

static int sign(int v) { return (v > 0) - (v < 0); }

/* Asserts that `name` parses as a contender of `kind` with sequence `seq`. */
#define ASSERT_PARSES(text, want_kind, want_seq)                              \
  do {                                                                       \
    const char *t_ = (text);                                                 \
    zkl__node_t n_ = {NULL, 0, ZKL__KIND_NONE};                              \
    int rc_ = zkl__name_parse(t_, &n_);                                      \
    ck_assert_msg(rc_ == 0, "\"%s\": parse returned %d, want 0", t_, rc_);  \
    ck_assert_msg(n_.name == t_, "\"%s\": node name not the input", t_);     \
    ck_assert_msg(n_.kind == (want_kind), "\"%s\": kind %d, want %d", t_,    \
                  (int)n_.kind, (int)(want_kind));                           \
    ck_assert_msg(n_.seq == (want_seq),                                      \
                  "\"%s\": seq %" PRId32 ", want %" PRId32, t_, n_.seq,      \
                  (int32_t)(want_seq));                                      \
  } while (0)

/* ---- zkl__name_parse ------------------------------------------------------ */

static const struct {
  const char *name;
  zkl__kind_t kind;
  int32_t seq;
} peer_names[] = {
    /* Curator InterProcessMutex / LeaderSelector */
    {CURATOR_HEAD "lock-0000000000", ZKL__KIND_LOCK, 0},
    {CURATOR_HEAD "lock-0000000042", ZKL__KIND_LOCK, 42},
    /* go-zookeeper Lock: a 32-hex id instead of a uuid */
    {GOZK_HEAD "lock-0000001234", ZKL__KIND_LOCK, 1234},
    /* kazoo Lock / WriteLock and ReadLock */
    {KAZOO_HEAD "__lock__0000000007", ZKL__KIND_KAZOO_LOCK, 7},
    {KAZOO_HEAD "__rlock__0000000008", ZKL__KIND_KAZOO_RLOCK, 8},
    /* Curator InterProcessReadWriteLock */
    {CURATOR_HEAD "__READ__0000000010", ZKL__KIND_READ, 10},
    {CURATOR_HEAD "__WRIT__0000000011", ZKL__KIND_WRITE, 11},
    /* Curator LeaderLatch */
    {CURATOR_HEAD "latch-0000000012", ZKL__KIND_LATCH, 12},
    /* every digit position counts */
    {CURATOR_HEAD "lock-1234567890", ZKL__KIND_LOCK, 1234567890},
    {KAZOO_HEAD "__lock__0987654321", ZKL__KIND_KAZOO_LOCK, 987654321},
};

START_TEST(parse_peer_shapes) {
  ASSERT_PARSES(peer_names[_i].name, peer_names[_i].kind, peer_names[_i].seq);
}
END_TEST

/* "%010d" of a negative counter: a minus sign and nine digits. */
static const struct {
  const char *name;
  zkl__kind_t kind;
  int32_t seq;
} negative_names[] = {
    {CURATOR_HEAD "lock--000000005", ZKL__KIND_LOCK, -5},
    {KAZOO_HEAD "__lock__-000000005", ZKL__KIND_KAZOO_LOCK, -5},
    {KAZOO_HEAD "__rlock__-000000005", ZKL__KIND_KAZOO_RLOCK, -5},
    {CURATOR_HEAD "__READ__-000000005", ZKL__KIND_READ, -5},
    {CURATOR_HEAD "__WRIT__-000000005", ZKL__KIND_WRITE, -5},
    {CURATOR_HEAD "latch--000000005", ZKL__KIND_LATCH, -5},
    {CURATOR_HEAD "lock--000000001", ZKL__KIND_LOCK, -1},
    {GOZK_HEAD "lock--123456789", ZKL__KIND_LOCK, -123456789},
    {CURATOR_HEAD "lock--999999999", ZKL__KIND_LOCK, -999999999},
};

START_TEST(parse_negative) {
  ASSERT_PARSES(negative_names[_i].name, negative_names[_i].kind,
                negative_names[_i].seq);
}
END_TEST

/* The heads of every shape, so that a sequence can be put after each. */
static const struct {
  const char *head;
  zkl__kind_t kind;
} heads[] = {
    {CURATOR_HEAD "lock-", ZKL__KIND_LOCK},
    {KAZOO_HEAD "__lock__", ZKL__KIND_KAZOO_LOCK},
    {KAZOO_HEAD "__rlock__", ZKL__KIND_KAZOO_RLOCK},
    {CURATOR_HEAD "__READ__", ZKL__KIND_READ},
    {CURATOR_HEAD "__WRIT__", ZKL__KIND_WRITE},
    {CURATOR_HEAD "latch-", ZKL__KIND_LATCH},
};

/* Every value the counter can take must parse, written exactly as
 * ZooKeeper writes it (Java's "%010d", which for values below -999999999
 * is the sign and ten digits: eleven characters). */
static const int32_t limit_values[] = {
    INT32_MAX, INT32_MAX - 1, 0, 1, -1, -999999999,
    -1000000000, INT32_MIN + 1, INT32_MIN,
};

START_TEST(parse_limits) {
  int32_t v = limit_values[_i];
  char name[128];
  for (size_t h = 0; h < sizeof heads / sizeof heads[0]; h++) {
    snprintf(name, sizeof name, "%s%010" PRId32, heads[h].head, v);
    ASSERT_PARSES(name, heads[h].kind, v);
  }
}
END_TEST

START_TEST(parse_limits_wire_text) {
  /* Pins the wire text the limits test relies on. */
  char seq[16];
  snprintf(seq, sizeof seq, "%010" PRId32, INT32_MIN);
  ck_assert_str_eq(seq, "-2147483648");
  snprintf(seq, sizeof seq, "%010" PRId32, INT32_MAX);
  ck_assert_str_eq(seq, "2147483647");
  snprintf(seq, sizeof seq, "%010" PRId32, (int32_t)-5);
  ck_assert_str_eq(seq, "-000000005");
}
END_TEST

/* Children that are not contenders: ignored, never fatal. */
static const char *const foreign_names[] = {
    "",
    "lock-",
    "-lock-",
    "__lock__",
    "0",
    "0000000001",           /* only digits, exactly a sequence */
    "00000000000000000001", /* only digits, longer             */
    "lock-0000000001",      /* no '-' before the marker          */
    CURATOR_HEAD "lock-",
    CURATOR_HEAD "lock-000000001",   /* 9 digits  */
    CURATOR_HEAD "lock-00000000001", /* 11 digits */
    KAZOO_HEAD "__lock__000000001",
    KAZOO_HEAD "__lock__00000000001",
    CURATOR_HEAD "lock-00000000a1",
    CURATOR_HEAD "lock-abcdefghij",
    CURATOR_HEAD "lock-000000001x",
    CURATOR_HEAD "lock-0000000001x",
    CURATOR_HEAD "lock-0000000001 ",
    CURATOR_HEAD "lock- 000000001",
    CURATOR_HEAD "lock-+000000001",
    CURATOR_HEAD "lock--00000000-",
    CURATOR_HEAD "lock---00000001",
    CURATOR_HEAD "lock-2147483648", /* past INT32_MAX */
    CURATOR_HEAD "lock-9999999999",
    CURATOR_HEAD "lok-0000000001",
    CURATOR_HEAD "LOCK-0000000001",
    CURATOR_HEAD "__read__0000000001",
    KAZOO_HEAD "__lock_0000000001",
    KAZOO_HEAD "_lock__0000000001",
    "x-72057594037927937-0000000001", /* ZooKeeper's own WriteLock */
    "config",
    "leases",
};

START_TEST(parse_foreign_rejected) {
  const char *name = foreign_names[_i];
  zkl__node_t n = {NULL, 0, ZKL__KIND_NONE};
  int rc = zkl__name_parse(name, &n);
  ck_assert_msg(rc == ZKL_EINVAL, "\"%s\": parse returned %d, want %d", name,
                rc, ZKL_EINVAL);
}
END_TEST

START_TEST(parse_null) {
  zkl__node_t n;
  ck_assert_int_eq(zkl__name_parse(NULL, &n), ZKL_EINVAL);
  ck_assert_int_eq(zkl__name_parse(CURATOR_HEAD "lock-0000000001", NULL),
                   ZKL_EINVAL);
}
END_TEST

/* ---- zkl__seq_cmp ----------------------------------------------------------- */

static const struct {
  int32_t a, b;
  int want; /* sign of the result */
} seq_cases[] = {
    {0, 1, -1},
    {1, 0, 1},
    {5, 5, 0},
    {-1, 0, -1},
    {0, -1, 1},
    {-5, -4, -1},
    {INT32_MAX - 1, INT32_MAX, -1},
    {INT32_MAX, INT32_MIN, -1}, /* the wrap: 2^31-1 comes before -2^31 */
    {INT32_MIN, INT32_MAX, 1},
    {INT32_MAX, INT32_MIN + 5, -1},
    {INT32_MAX - 10, -2147483000, -1},
    {INT32_MIN, INT32_MIN, 0},
    {INT32_MAX, INT32_MAX, 0},
    {-1, -1, 0},
};

START_TEST(seq_cmp_wraps) {
  int32_t a = seq_cases[_i].a, b = seq_cases[_i].b;
  int got = sign(zkl__seq_cmp(a, b));
  ck_assert_msg(got == seq_cases[_i].want,
                "seq_cmp(%" PRId32 ", %" PRId32 ") has sign %d, want %d", a, b,
                got, seq_cases[_i].want);
}
END_TEST

/* ---- zkl__nodes_sort ----------------------------------------------------------- */

static void assert_order(const zkl__node_t *v, const char *const *want,
                         size_t n) {
  for (size_t i = 0; i < n; i++)
    ck_assert_msg(strcmp(v[i].name, want[i]) == 0,
                  "position %zu: \"%s\", want \"%s\"", i, v[i].name, want[i]);
}

START_TEST(sort_across_wrap_and_ties) {
  /* Mixed peers around the wrap; two pairs tie on the sequence (ZooKeeper
   * never makes that in one parent, but order must still be total). */
  zkl__node_t v[] = {
      {"_c_b-lock-x", INT32_MIN + 1, ZKL__KIND_LOCK},
      {"ff__lock__x", INT32_MAX, ZKL__KIND_KAZOO_LOCK},
      {"_c_a-lock-x", INT32_MIN, ZKL__KIND_LOCK},
      {"aa__lock__x", INT32_MAX - 1, ZKL__KIND_KAZOO_LOCK},
      {"_c_c-lock-x", INT32_MIN + 1, ZKL__KIND_LOCK},
      {"_c_z-lock-x", INT32_MAX, ZKL__KIND_LOCK},
  };
  static const char *const want[] = {
      "aa__lock__x", "_c_z-lock-x", "ff__lock__x",
      "_c_a-lock-x", "_c_b-lock-x", "_c_c-lock-x",
  };
  zkl__nodes_sort(v, sizeof v / sizeof v[0]);
  assert_order(v, want, sizeof want / sizeof want[0]);
}
END_TEST

START_TEST(sort_by_seq_not_name) {
  /* strcmp of whole names would give another order. */
  zkl__node_t v[] = {
      {"_c_0-lock-0000000003", 3, ZKL__KIND_LOCK},
      {"ab__lock__0000000002", 2, ZKL__KIND_KAZOO_LOCK},
      {"zz__lock__0000000001", 1, ZKL__KIND_KAZOO_LOCK},
      {"_c_1-lock--000000002", -2, ZKL__KIND_LOCK},
  };
  static const char *const want[] = {
      "_c_1-lock--000000002",
      "zz__lock__0000000001",
      "ab__lock__0000000002",
      "_c_0-lock-0000000003",
  };
  zkl__nodes_sort(v, 4);
  assert_order(v, want, 4);
}
END_TEST

START_TEST(sort_parsed_names) {
  static const char *const names[] = {
      CURATOR_HEAD "lock-0000000010", KAZOO_HEAD "__lock__0000000002",
      GOZK_HEAD "lock-0000000007",    KAZOO_HEAD "__rlock__0000000009",
      CURATOR_HEAD "__WRIT__0000000001",
  };
  static const int32_t want_seq[] = {1, 2, 7, 9, 10};
  zkl__node_t v[5];
  for (size_t i = 0; i < 5; i++)
    ck_assert_int_eq(zkl__name_parse(names[i], &v[i]), 0);
  zkl__nodes_sort(v, 5);
  for (size_t i = 0; i < 5; i++) ck_assert_int_eq(v[i].seq, want_seq[i]);
}
END_TEST

START_TEST(sort_degenerate) {
  zkl__nodes_sort(NULL, 0);
  zkl__node_t one = {"_c_a-lock-0000000001", 1, ZKL__KIND_LOCK};
  zkl__nodes_sort(&one, 1);
  ck_assert_str_eq(one.name, "_c_a-lock-0000000001");
  ck_assert_int_eq(one.seq, 1);
}
END_TEST

/* ---- zkl__prefix_new / zkl__name_is_mine ---------------------------------------- */

START_TEST(prefix_format) {
  char p[ZKL__PREFIX_LEN + 1];
  memset(p, 'X', sizeof p);
  zkl__prefix_new(p);
  ck_assert_int_eq(ZKL__PREFIX_LEN, 40);
  ck_assert_uint_eq(strlen(p), 40);
  ck_assert_msg(strncmp(p, "_c_", 3) == 0, "prefix \"%s\"", p);
  ck_assert_int_eq(p[39], '-');
  const char *u = p + 3; /* 36-char uuid: 8-4-4-4-12 lowercase hex */
  for (int i = 0; i < 36; i++) {
    if (i == 8 || i == 13 || i == 18 || i == 23)
      ck_assert_msg(u[i] == '-', "uuid \"%.36s\" char %d", u, i);
    else
      ck_assert_msg(isxdigit((unsigned char)u[i]) &&
                        !isupper((unsigned char)u[i]),
                    "uuid \"%.36s\" char %d", u, i);
  }
  ck_assert_msg(u[14] == '4', "uuid \"%.36s\" is not version 4", u);
  ck_assert_msg(strchr("89ab", u[19]) != NULL, "uuid \"%.36s\" variant", u);
}
END_TEST

START_TEST(prefix_differs) {
  char a[ZKL__PREFIX_LEN + 1], b[ZKL__PREFIX_LEN + 1];
  zkl__prefix_new(a);
  zkl__prefix_new(b);
  ck_assert_str_ne(a, b);
}
END_TEST

START_TEST(name_is_mine) {
  char mine[ZKL__PREFIX_LEN + 1], other[ZKL__PREFIX_LEN + 1];
  zkl__prefix_new(mine);
  zkl__prefix_new(other);
  char name[128];

  snprintf(name, sizeof name, "%slock-0000000003", mine);
  ck_assert_int_ne(zkl__name_is_mine(name, mine), 0);
  ck_assert_int_eq(zkl__name_is_mine(name, other), 0);

  /* Differs from ours only in the uuid's last digit. */
  snprintf(name, sizeof name, "%slock-0000000003", mine);
  name[ZKL__PREFIX_LEN - 2] = name[ZKL__PREFIX_LEN - 2] == '0' ? '1' : '0';
  ck_assert_int_eq(zkl__name_is_mine(name, mine), 0);

  ck_assert_int_eq(zkl__name_is_mine("_c_", mine), 0);
  ck_assert_int_eq(zkl__name_is_mine("", mine), 0);
  ck_assert_int_eq(zkl__name_is_mine(KAZOO_HEAD "__lock__0000000001", mine),
                   0);
}
END_TEST

/* ---- queue item names --------------------------------------------------------- */

static const struct {
  int shape;
  const char *name;
  int ok, prio;
  int32_t seq;
} item_names[] = {
    {ZKL__ITEM_QN, "qn-0000000042", 1, 0, 42},
    {ZKL__ITEM_QN, "qn-2147483647", 1, 0, INT32_MAX},
    {ZKL__ITEM_QN, "qn--2147483648", 1, 0, INT32_MIN},
    {ZKL__ITEM_QN, "qn--000000005", 1, 0, -5},
    {ZKL__ITEM_QN, "qn-42", 0, 0, 0},            /* not %010d */
    {ZKL__ITEM_QN, "qn-00000000421", 0, 0, 0},   /* 11 digits */
    {ZKL__ITEM_QN, "qn-2147483648", 0, 0, 0},    /* past int32 */
    {ZKL__ITEM_QN, "qn--0000000000", 0, 0, 0},   /* "-0": never printed */
    {ZKL__ITEM_QN, "qn-000000004x", 0, 0, 0},
    {ZKL__ITEM_QN, "_c_0b8f-qn-0000000001", 0, 0, 0},
    {ZKL__ITEM_QN, "entry-100-0000000001", 0, 0, 0},
    {ZKL__ITEM_QN, "", 0, 0, 0},
    {ZKL__ITEM_ENTRY, "entry-100-0000000001", 1, 100, 1},
    {ZKL__ITEM_ENTRY, "entry-000-0000000007", 1, 0, 7},
    {ZKL__ITEM_ENTRY, "entry-999--000000003", 1, 999, -3},
    {ZKL__ITEM_ENTRY, "entry-10-0000000001", 0, 0, 0},  /* 2-digit prio */
    {ZKL__ITEM_ENTRY, "entry-1000-0000000001", 0, 0, 0},
    {ZKL__ITEM_ENTRY, "entry-1x0-0000000001", 0, 0, 0},
    {ZKL__ITEM_ENTRY, "entry-100-", 0, 0, 0},
    {ZKL__ITEM_ENTRY, "entry-100-00000000012", 0, 0, 0},
    {ZKL__ITEM_ENTRY, "qn-0000000001", 0, 0, 0},
    {ZKL__ITEM_ENTRY, "taken", 0, 0, 0},
};

START_TEST(item_parse_shapes) {
  zkl__item_name_t it;
  int rc = zkl__item_parse(item_names[_i].shape, item_names[_i].name, &it);
  ck_assert_msg((rc == 0) == item_names[_i].ok, "%s: rc %d",
                item_names[_i].name, rc);
  if (rc == 0) {
    ck_assert_int_eq(it.prio, item_names[_i].prio);
    ck_assert_int_eq(it.seq, item_names[_i].seq);
    ck_assert_ptr_eq(it.name, item_names[_i].name);
  }
}
END_TEST

/* Priority first, then the sequence across the wrap, then the name. */
START_TEST(item_order) {
  const char *in[] = {"entry-100--2147483647", "entry-100-2147483646",
                      "entry-007-0000000009", "entry-100-2147483647",
                      "entry-100--2147483648"};
  const char *want[] = {"entry-007-0000000009", "entry-100-2147483646",
                        "entry-100-2147483647", "entry-100--2147483648",
                        "entry-100--2147483647"};
  zkl__item_name_t v[5];
  for (int i = 0; i < 5; i++)
    ck_assert_int_eq(zkl__item_parse(ZKL__ITEM_ENTRY, in[i], &v[i]), 0);
  for (int i = 0; i < 5; i++) /* a tiny insertion sort with the order */
    for (int j = i; j > 0 && zkl__item_cmp(&v[j - 1], &v[j]) > 0; j--) {
      zkl__item_name_t t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  for (int i = 0; i < 5; i++) ck_assert_str_eq(v[i].name, want[i]);
  ck_assert_int_eq(zkl__item_cmp(&v[0], &v[0]), 0);
  ck_assert_int_eq(zkl__item_parse(ZKL__ITEM_QN, NULL, &v[0]), ZKL_EINVAL);
}
END_TEST

/* ---- the suite ------------------------------------------------------------------- */

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static TCase *tcase(Suite *s, const char *name) {
  TCase *tc = tcase_create(name);
  suite_add_tcase(s, tc);
  return tc;
}

Suite *names_suite(void) {
  Suite *s = suite_create("names");
  tcase_add_loop_test(tcase(s, "parse_peer_shapes"), parse_peer_shapes, 0,
                      COUNT(peer_names));
  tcase_add_loop_test(tcase(s, "parse_negative"), parse_negative, 0,
                      COUNT(negative_names));
  TCase *tc = tcase(s, "parse_limits");
  tcase_add_test(tc, parse_limits_wire_text);
  tcase_add_loop_test(tc, parse_limits, 0, COUNT(limit_values));
  tc = tcase(s, "parse_foreign");
  tcase_add_loop_test(tc, parse_foreign_rejected, 0, COUNT(foreign_names));
  tcase_add_test(tc, parse_null);
  tcase_add_loop_test(tcase(s, "seq_cmp"), seq_cmp_wraps, 0,
                      COUNT(seq_cases));
  tc = tcase(s, "nodes_sort");
  tcase_add_test(tc, sort_across_wrap_and_ties);
  tcase_add_test(tc, sort_by_seq_not_name);
  tcase_add_test(tc, sort_parsed_names);
  tcase_add_test(tc, sort_degenerate);
  tc = tcase(s, "prefix");
  tcase_add_test(tc, prefix_format);
  tcase_add_test(tc, prefix_differs);
  tcase_add_test(tcase(s, "name_is_mine"), name_is_mine);
  tc = tcase(s, "queue_items");
  tcase_add_loop_test(tc, item_parse_shapes, 0, COUNT(item_names));
  tcase_add_test(tc, item_order);
  return s;
}
