/* cli/statsfile.c - reads the counters files of zkl_session_stats_export()
 * (Prometheus's text format) for `zkl status --stats`. */
#include "statsfile.h"

#include <ctype.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define FIELD(f) offsetof(zkl_session_stats_t, f)

/* The samples that are counters: metric, the label that tells them apart
 * (NULL: none), its value, and the zkl_session_stats_t field. */
static const struct sample {
  const char *metric, *label, *value;
  size_t field;
} samples[] = {
    {"zkl_requests_total", "kind", "create", FIELD(creates)},
    {"zkl_requests_total", "kind", "delete", FIELD(deletes)},
    {"zkl_requests_total", "kind", "exists", FIELD(exists)},
    {"zkl_requests_total", "kind", "get", FIELD(gets)},
    {"zkl_requests_total", "kind", "set", FIELD(sets)},
    {"zkl_requests_total", "kind", "children", FIELD(children)},
    {"zkl_requests_total", "kind", "multi", FIELD(multis)},
    {"zkl_requests_total", "kind", "sync", FIELD(syncs)},
    {"zkl_requests_total", "kind", "heartbeat", FIELD(heartbeats)},
    {"zkl_watches_total", NULL, NULL, FIELD(watches)},
    {"zkl_watch_events_total", NULL, NULL, FIELD(events)},
    {"zkl_wakeups_total", NULL, NULL, FIELD(wakeups)},
    {"zkl_acquisitions_total", NULL, NULL, FIELD(acquisitions)},
    {"zkl_grant_wait_seconds_count", NULL, NULL, FIELD(grants)},
    {"zkl_acquisition_timeouts_total", NULL, NULL, FIELD(timeouts)},
    {"zkl_acquisition_cancels_total", NULL, NULL, FIELD(cancels)},
    {"zkl_acquisition_failures_total", NULL, NULL, FIELD(failures)},
    {"zkl_acquisitions_waiting", NULL, NULL, FIELD(waiting)},
    {"zkl_session_events_total", "state", "connected", FIELD(connects)},
    {"zkl_session_events_total", "state", "suspended", FIELD(suspensions)},
    {"zkl_session_events_total", "state", "reconnected", FIELD(reconnects)},
    {"zkl_session_events_total", "state", "lost", FIELD(losses)},
};

/* The histogram's bucket bounds, as written (ZKL_STATS_WAIT_BUCKETS). */
static const char *const bucket_le[ZKL_STATS_WAIT_BUCKETS] = {
    "0.001", "0.01", "0.1", "1", "10", "100", "+Inf"};

typedef struct label {
  char name[32];
  char value[512];
} label_t;

#define LABELS_MAX 8

/* One sample line: name{labels} value.  0, or -1 with err set. */
typedef struct line {
  char name[128];
  label_t labels[LABELS_MAX];
  int n_labels;
  const char *value; /* its text, up to the end of the line or a space */
} line_t;

static const char *label_of(const line_t *l, const char *name) {
  for (int i = 0; i < l->n_labels; i++)
    if (strcmp(l->labels[i].name, name) == 0) return l->labels[i].value;
  return NULL;
}

static int is_name_char(int c, int first) {
  return isalpha(c) || c == '_' || c == ':' || (!first && isdigit(c));
}

/* Parses one line at *p (up to '\n' or the end); 0, or a reason. */
static const char *parse_line(const char **pp, line_t *l) {
  const char *p = *pp;
  size_t n = 0;
  memset(l, 0, sizeof *l);
  while (is_name_char((unsigned char)*p, n == 0)) {
    if (n + 1 >= sizeof l->name) return "a metric name too long";
    l->name[n++] = *p++;
  }
  if (n == 0) return "no metric name";
  if (*p == '{') {
    p++;
    while (*p != '}') {
      if (l->n_labels == LABELS_MAX) return "too many labels";
      label_t *lb = &l->labels[l->n_labels++];
      size_t k = 0;
      while (is_name_char((unsigned char)*p, k == 0)) {
        if (k + 1 >= sizeof lb->name) return "a label name too long";
        lb->name[k++] = *p++;
      }
      if (k == 0 || *p++ != '=' || *p++ != '"') return "a malformed label";
      size_t v = 0;
      for (; *p != '"'; p++) {
        if (*p == '\0' || *p == '\n') return "an unterminated label value";
        char c = *p;
        if (c == '\\') {
          p++;
          if (*p == 'n') c = '\n';
          else if (*p == '\\' || *p == '"') c = *p;
          else return "a bad escape in a label value";
        }
        if (v + 1 >= sizeof lb->value) return "a label value too long";
        lb->value[v++] = c;
      }
      p++; /* the closing quote */
      if (*p == ',') p++;
      else if (*p != '}') return "a malformed label list";
    }
    p++; /* '}' */
  }
  if (*p != ' ' && *p != '\t') return "no value";
  while (*p == ' ' || *p == '\t') p++;
  if (*p == '\0' || *p == '\n') return "no value";
  l->value = p;
  while (*p != '\0' && *p != '\n') p++;
  *pp = p;
  return NULL;
}

/* The value as an unsigned count (an integer or, from a float, rounded);
 * -1 if it is no number >= 0. */
static int value_u64(const char *v, uint64_t *out) {
  char *end;
  if (isdigit((unsigned char)*v)) {
    unsigned long long u = strtoull(v, &end, 10);
    if (*end == '\0' || *end == '\n' || *end == ' ') {
      *out = u;
      return 0;
    }
  }
  double d = strtod(v, &end);
  if (end == v || !(d >= 0) || d > 1.8e19) return -1;
  *out = (uint64_t)(d + 0.5);
  return 0;
}

static int value_double(const char *v, double *out) {
  char *end;
  *out = strtod(v, &end);
  return end == v ? -1 : 0;
}

static void set_err(char *err, size_t len, int lineno, const char *why) {
  if (err != NULL && len > 0)
    snprintf(err, len, "not a file of zkl_session_stats_export(): line %d: %s",
             lineno, why);
}

/* One sample into f (unknown ones are skipped); 0, or a reason. */
static const char *take_sample(const line_t *l, cli_statsfile_t *f,
                               uint64_t cum[ZKL_STATS_WAIT_BUCKETS],
                               int *have_cum) {
  uint64_t u;
  double d;
  if (strcmp(l->name, "zkl_session_info") == 0) {
    const char *sid = label_of(l, "session"), *pid = label_of(l, "pid");
    const char *hosts = label_of(l, "hosts"), *state = label_of(l, "state");
    char *end;
    if (sid == NULL || pid == NULL || hosts == NULL || state == NULL)
      return "zkl_session_info without session, pid, hosts or state";
    f->session = strtoull(sid, &end, 16);
    if (end == sid || *end != '\0') return "a bad session id";
    f->pid = strtol(pid, &end, 10);
    if (end == pid || *end != '\0') return "a bad pid";
    snprintf(f->hosts, sizeof f->hosts, "%s", hosts);
    snprintf(f->state, sizeof f->state, "%s", state);
    f->has_info = 1;
    return NULL;
  }
  if (strcmp(l->name, "zkl_stats_written_seconds") == 0) {
    if (value_double(l->value, &f->written) != 0) return "a bad time";
    f->has_written = 1;
    return NULL;
  }
  if (strcmp(l->name, "zkl_stats_interval_seconds") == 0)
    return value_double(l->value, &f->interval) != 0 ? "a bad interval" : NULL;
  if (strcmp(l->name, "zkl_grant_wait_seconds_bucket") == 0) {
    const char *le = label_of(l, "le");
    for (int i = 0; le != NULL && i < ZKL_STATS_WAIT_BUCKETS; i++) {
      if (strcmp(le, bucket_le[i]) != 0) continue;
      if (value_u64(l->value, &cum[i]) != 0) return "a bad bucket count";
      *have_cum |= 1 << i;
      return NULL;
    }
    return NULL;
  }
  if (strcmp(l->name, "zkl_grant_wait_seconds_sum") == 0 ||
      strcmp(l->name, "zkl_grant_wait_seconds_max") == 0) {
    /* (as microseconds in a uint64_t: below 1.8e13 s) */
    if (value_double(l->value, &d) != 0 || !(d >= 0) || !(d < 1.8e13))
      return "a bad time";
    uint64_t us = (uint64_t)(d * 1e6 + 0.5);
    if (strstr(l->name, "_sum") != NULL) f->st.wait_us_total = us;
    else f->st.wait_us_max = us;
    f->counters++;
    return NULL;
  }
  for (size_t i = 0; i < COUNT(samples); i++) {
    const struct sample *s = &samples[i];
    if (strcmp(l->name, s->metric) != 0) continue;
    if (s->label != NULL) {
      const char *v = label_of(l, s->label);
      if (v == NULL || strcmp(v, s->value) != 0) continue;
    }
    if (value_u64(l->value, &u) != 0) return "a bad count";
    memcpy((char *)&f->st + s->field, &u, sizeof u);
    f->counters++;
    return NULL;
  }
  return NULL;
}

int cli_statsfile_parse(const char *text, cli_statsfile_t *f, char *err,
                        size_t err_len) {
  uint64_t cum[ZKL_STATS_WAIT_BUCKETS] = {0};
  int have_cum = 0, lineno = 0;
  memset(f, 0, sizeof *f);
  for (const char *p = text; *p != '\0';) {
    lineno++;
    while (*p == ' ' || *p == '\t') p++;
    if (*p == '#' || *p == '\n' || *p == '\r' || *p == '\0') {
      while (*p != '\0' && *p != '\n') p++;
      if (*p == '\n') p++;
      continue;
    }
    line_t l;
    const char *why = parse_line(&p, &l);
    if (why == NULL) why = take_sample(&l, f, cum, &have_cum);
    if (why != NULL) {
      set_err(err, err_len, lineno, why);
      return -1;
    }
    if (*p == '\n') p++;
  }
  if (!f->has_info || f->counters == 0) {
    if (err != NULL && err_len > 0)
      snprintf(err, err_len, "no %s: not a file of zkl_session_stats_export()",
               f->has_info ? "counters" : "zkl_session_info line");
    return -1;
  }
  /* the file's buckets are cumulative, the struct's are not */
  if (have_cum == (1 << ZKL_STATS_WAIT_BUCKETS) - 1)
    for (int i = 0; i < ZKL_STATS_WAIT_BUCKETS; i++)
      f->st.wait_hist[i] = cum[i] - (i > 0 ? cum[i - 1] : 0);
  return 0;
}

int cli_statsfile_stale(const cli_statsfile_t *f, double now) {
  if (!f->has_written) return 0;
  double limit = 3 * (f->interval > 0 ? f->interval : 1) + 2;
  return now - f->written > limit;
}

static double age_of(const cli_statsfile_t *f, double now) {
  double age = now - f->written;
  return age > 0 ? age : 0;
}

#define U(x) ((unsigned long long)(x))

void cli_statsfile_print(FILE *out, const char *name,
                         const cli_statsfile_t *f, double now) {
  const zkl_session_stats_t *st = &f->st;
  fprintf(out, "%s: pid %ld, session 0x%llx on ", name, f->pid, f->session);
  cli_put_escaped(out, f->hosts, strlen(f->hosts));
  fprintf(out, ", %s", f->state);
  if (f->has_written) {
    fprintf(out, "; written %.1f s ago", age_of(f, now));
    if (f->interval > 0) fprintf(out, " (every %g s)", f->interval);
    if (cli_statsfile_stale(f, now))
      fputs("; STALE: its process has probably ended", out);
  }
  fputc('\n', out);
  fprintf(out,
          "  requests        create %llu  delete %llu  exists %llu  get %llu"
          "  set %llu  children %llu  multi %llu  sync %llu  heartbeat %llu\n",
          U(st->creates), U(st->deletes), U(st->exists), U(st->gets),
          U(st->sets), U(st->children), U(st->multis), U(st->syncs),
          U(st->heartbeats));
  fprintf(out, "  watches         armed %llu  events %llu  wakeups %llu\n",
          U(st->watches), U(st->events), U(st->wakeups));
  fprintf(out,
          "  turns           started %llu  granted %llu  timed out %llu"
          "  canceled %llu  failed %llu  waiting now %llu\n",
          U(st->acquisitions), U(st->grants), U(st->timeouts),
          U(st->cancels), U(st->failures), U(st->waiting));
  static const char *const bounds[ZKL_STATS_WAIT_BUCKETS] = {
      "<1ms", "<10ms", "<100ms", "<1s", "<10s", "<100s", "longer"};
  fputs("  grant waits    ", out);
  for (int i = 0; i < ZKL_STATS_WAIT_BUCKETS; i++)
    fprintf(out, "%s%s %llu", i > 0 ? "  " : " ", bounds[i],
            U(st->wait_hist[i]));
  if (st->grants > 0)
    fprintf(out, "; mean %.3f ms, max %.3f ms",
            st->wait_us_total / 1000.0 / (double)st->grants,
            st->wait_us_max / 1000.0);
  fputc('\n', out);
  fprintf(out,
          "  session events  connected %llu  suspended %llu  reconnected %llu"
          "  lost %llu\n",
          U(st->connects), U(st->suspensions), U(st->reconnects),
          U(st->losses));
}

void cli_statsfile_json(FILE *out, const char *name, const cli_statsfile_t *f,
                        double now) {
  const zkl_session_stats_t *st = &f->st;
  fputs("{\"file\": ", out);
  cli_put_json_string(out, name);
  fprintf(out, ", \"pid\": %ld, \"session\": \"0x%llx\", \"hosts\": ", f->pid,
          f->session);
  cli_put_json_string(out, f->hosts);
  fputs(", \"state\": ", out);
  cli_put_json_string(out, f->state);
  if (f->has_written)
    fprintf(out, ", \"written\": %.3f, \"age_s\": %.3f", f->written,
            age_of(f, now));
  else
    fputs(", \"written\": null, \"age_s\": null", out);
  fprintf(out, ", \"interval_s\": %g, \"stale\": %s, \"counters\": {",
          f->interval, cli_statsfile_stale(f, now) ? "true" : "false");
#define J(x) fprintf(out, "\"" #x "\": %llu, ", U(st->x));
  J(creates) J(deletes) J(exists) J(gets) J(sets) J(children) J(multis)
  J(syncs) J(heartbeats) J(watches) J(events) J(wakeups) J(acquisitions)
  J(grants) J(timeouts) J(cancels) J(failures) J(waiting)
#undef J
  fputs("\"wait_hist\": [", out);
  for (int i = 0; i < ZKL_STATS_WAIT_BUCKETS; i++)
    fprintf(out, "%s%llu", i > 0 ? ", " : "", U(st->wait_hist[i]));
  fprintf(out,
          "], \"wait_us_total\": %llu, \"wait_us_max\": %llu, \"connects\": "
          "%llu, \"suspensions\": %llu, \"reconnects\": %llu, \"losses\": "
          "%llu}}",
          U(st->wait_us_total), U(st->wait_us_max), U(st->connects),
          U(st->suspensions), U(st->reconnects), U(st->losses));
}
