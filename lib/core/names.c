/* lib/core/names.c - contender node names and queue item names: parsing,
 * ordering and our own prefix. */
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>

#include "core/core.h"

/* ZooKeeper appends "%010d" of a signed 32-bit counter: ten digits, or,
 * once the counter has wrapped, a minus sign and at least nine digits
 * ("-000000005", "-2147483648"). */
#define SEQ_DIGITS 10

static int parse_digits(const char *s, size_t n, int neg, int32_t *out) {
  long long v = 0;
  for (size_t i = 0; i < n; i++) v = v * 10 + (s[i] - '0');
  if (neg) v = -v;
  if (v < INT32_MIN || v > INT32_MAX) return -1;
  *out = (int32_t)v;
  return 0;
}

/* Markers that end the part of a name before the sequence, longest first
 * where one is a suffix of another. */
static const struct {
  const char *text;
  zkl__kind_t kind;
} markers[] = {
    {"__rlock__", ZKL__KIND_KAZOO_RLOCK},
    {"__lock__", ZKL__KIND_KAZOO_LOCK},
    {"-__READ__", ZKL__KIND_READ},
    {"-__WRIT__", ZKL__KIND_WRITE},
    {"-lock-", ZKL__KIND_LOCK},
    {"-latch-", ZKL__KIND_LATCH},
};

static zkl__kind_t marker_before(const char *name, size_t end) {
  for (size_t i = 0; i < sizeof markers / sizeof markers[0]; i++) {
    size_t ml = strlen(markers[i].text);
    if (end >= ml && memcmp(name + end - ml, markers[i].text, ml) == 0)
      return markers[i].kind;
  }
  return ZKL__KIND_NONE;
}

int zkl__name_parse(const char *name, zkl__node_t *out) {
  if (name == NULL || out == NULL) return ZKL_EINVAL;
  size_t len = strlen(name), digits = 0;
  while (digits < len && name[len - 1 - digits] >= '0' &&
         name[len - 1 - digits] <= '9')
    digits++;
  size_t head = len - digits;
  int32_t seq;
  /* positive: <marker><10 digits> */
  zkl__kind_t kind = digits == SEQ_DIGITS ? marker_before(name, head)
                                          : ZKL__KIND_NONE;
  if (kind != ZKL__KIND_NONE) {
    if (parse_digits(name + head, digits, 0, &seq) != 0) return ZKL_EINVAL;
  } else {
    /* negative: <marker>-<9 or 10 digits> */
    if (digits < SEQ_DIGITS - 1 || digits > SEQ_DIGITS || head == 0 ||
        name[head - 1] != '-')
      return ZKL_EINVAL;
    kind = marker_before(name, head - 1);
    if (kind == ZKL__KIND_NONE ||
        parse_digits(name + head, digits, 1, &seq) != 0 || seq >= 0)
      return ZKL_EINVAL;
  }
  out->name = name;
  out->seq = seq;
  out->kind = kind;
  return 0;
}

/* A sequence as ZooKeeper prints it, ending the name: 0 and *seq, or -1. */
static int parse_seq_text(const char *p, int32_t *seq) {
  int neg = *p == '-';
  const char *d = p + neg;
  size_t n = strspn(d, "0123456789");
  if (d[n] != '\0' || (!neg && n != SEQ_DIGITS) ||
      (neg && (n < SEQ_DIGITS - 1 || n > SEQ_DIGITS)))
    return -1;
  if (parse_digits(d, n, neg, seq) != 0 || (neg && *seq >= 0)) return -1;
  return 0;
}

int zkl__item_parse(int shape, const char *name, zkl__item_name_t *out) {
  if (name == NULL || out == NULL) return ZKL_EINVAL;
  out->name = name;
  out->prio = 0;
  if (shape == ZKL__ITEM_QN)
    return strncmp(name, "qn-", 3) == 0 && parse_seq_text(name + 3, &out->seq) == 0
               ? 0 : ZKL_EINVAL;
  if (strncmp(name, "entry-", 6) != 0) return ZKL_EINVAL;
  const char *p = name + 6;
  if (strspn(p, "0123456789") < 3 || p[3] != '-') return ZKL_EINVAL;
  out->prio = (p[0] - '0') * 100 + (p[1] - '0') * 10 + (p[2] - '0');
  return parse_seq_text(p + 4, &out->seq) == 0 ? 0 : ZKL_EINVAL;
}

int zkl__item_cmp(const zkl__item_name_t *a, const zkl__item_name_t *b) {
  if (a->prio != b->prio) return a->prio < b->prio ? -1 : 1;
  int c = zkl__seq_cmp(a->seq, b->seq);
  return c != 0 ? c : strcmp(a->name, b->name);
}

int zkl__seq_cmp(int32_t a, int32_t b) {
  int32_t d = (int32_t)((uint32_t)a - (uint32_t)b);
  return (d > 0) - (d < 0);
}

int zkl__node_cmp(const zkl__node_t *a, const zkl__node_t *b) {
  int c = zkl__seq_cmp(a->seq, b->seq);
  return c != 0 ? c : strcmp(a->name, b->name);
}

static int node_cmp(const void *x, const void *y) {
  return zkl__node_cmp(x, y);
}

void zkl__nodes_sort(zkl__node_t *v, size_t n) {
  if (n > 1) qsort(v, n, sizeof *v, node_cmp);
}

int zkl__name_is_mine(const char *name, const char *prefix) {
  return strncmp(name, prefix, strlen(prefix)) == 0;
}

void zkl__prefix_new(char out[ZKL__PREFIX_LEN + 1]) {
  uuid_t u;
  uuid_generate_random(u);
  memcpy(out, "_c_", 3);
  uuid_unparse_lower(u, out + 3);
  out[ZKL__PREFIX_LEN - 1] = '-';
  out[ZKL__PREFIX_LEN] = '\0';
}

int zkl__copy_string(char *buf, size_t len, const char *src) {
  size_t n = strlen(src);
  if (n >= len) return ZKL_EINVAL;
  memcpy(buf, src, n + 1);
  return 0;
}

int zkl__kind_marks_release(zkl__kind_t k) {
  return k == ZKL__KIND_LOCK || k == ZKL__KIND_WRITE;
}
