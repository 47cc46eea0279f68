/* lib/core/log.c - the process's log handler (zkl_log_set) and the route
 * of zkl's own messages and of the ZooKeeper client's to it.
 *
 * The handler is read under a read lock for each message and replaced
 * under the write lock, so that once zkl_log_set() returns the old handler
 * is neither running nor called again.  A thread inside the handler is
 * marked: its own zkl_log_set() would wait for itself (refused), and a
 * message logged from inside the handler (a zkl call made there) is
 * dropped rather than delivered recursively. */
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <zookeeper/zookeeper.h>

#include "core/core.h"

static pthread_rwlock_t handler_rw = PTHREAD_RWLOCK_INITIALIZER;
static zkl_log_fn handler;      /* guarded by handler_rw                    */
static void *handler_arg;       /* guarded by handler_rw                    */
static atomic_int handler_max;  /* 0: none; read without the lock first     */
static _Thread_local int in_handler;

const char *zkl_log_level_name(int level) {
  switch (level) {
  case ZKL_LOG_ERROR: return "error";
  case ZKL_LOG_WARN: return "warn";
  case ZKL_LOG_INFO: return "info";
  case ZKL_LOG_DEBUG: return "debug";
  default: return "?";
  }
}

int zkl_log_set(zkl_log_fn fn, void *arg, zkl_log_level_t max_level) {
  zkl__clear_error();
  if (in_handler)
    return zkl__fail(ZKL_EDEADLK, "zkl_log_set() from inside the handler");
  if (fn != NULL && (max_level < ZKL_LOG_ERROR || max_level > ZKL_LOG_DEBUG))
    return zkl__fail(ZKL_EINVAL, "max_level %d is not a ZKL_LOG_* level",
                     (int)max_level);
  pthread_rwlock_wrlock(&handler_rw);
  handler = fn;
  handler_arg = fn != NULL ? arg : NULL;
  atomic_store(&handler_max, fn != NULL ? (int)max_level : 0);
  pthread_rwlock_unlock(&handler_rw);
  if (fn != NULL) zoo_set_debug_level((ZooLogLevel)max_level);
  return 0;
}

/* Hands one message to the handler: 1 if one took it (or would have, but
 * for the level), 0 if none is installed. */
static int deliver(int level, zkl_log_source_t source, int64_t sid,
                   const char *text) {
  if (atomic_load_explicit(&handler_max, memory_order_relaxed) == 0) return 0;
  if (in_handler) return 1; /* from inside the handler: dropped */
  int taken = 0;
  pthread_rwlock_rdlock(&handler_rw);
  if (handler != NULL) {
    taken = 1;
    if (level <= atomic_load_explicit(&handler_max, memory_order_relaxed)) {
      in_handler = 1;
      handler((zkl_log_level_t)level, source, sid, text, handler_arg);
      in_handler = 0;
    }
  }
  pthread_rwlock_unlock(&handler_rw);
  return taken;
}

void zkl__vlog(FILE *fallback, int fallback_max, int level, int64_t sid,
               const char *fmt, va_list ap) {
  int hmax = atomic_load_explicit(&handler_max, memory_order_relaxed);
  if (hmax == 0 && (fallback == NULL || level > fallback_max)) return;
  if (hmax != 0 && level > hmax) return;
  char text[512];
  vsnprintf(text, sizeof text, fmt, ap);
  if (deliver(level, ZKL_LOG_ZKL, sid, text)) return;
  if (fallback != NULL && level <= fallback_max)
    zkl_log_stream((zkl_log_level_t)level, ZKL_LOG_ZKL, sid, text, fallback);
}

void zkl__log(FILE *fallback, int fallback_max, int level, int64_t sid,
              const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  zkl__vlog(fallback, fallback_max, level, sid, fmt, ap);
  va_end(ap);
}

/* The ZooKeeper client's line: "<date> <time>,<ms>:<pid>(0x<thread>):
 * ZOO_<LEVEL>@<function>@<line>: <text>".  Its level, and where the part
 * after the level starts; a line of another shape is INFO, whole. */
int zkl__log_parse_zookeeper(const char *line, const char **rest) {
  static const struct {
    const char *tag;
    int level;
  } tags[] = {{"ZOO_ERROR@", ZKL_LOG_ERROR},
              {"ZOO_WARN@", ZKL_LOG_WARN},
              {"ZOO_INFO@", ZKL_LOG_INFO},
              {"ZOO_DEBUG@", ZKL_LOG_DEBUG}};
  const char *p = strstr(line, "):ZOO_");
  *rest = line;
  if (p == NULL) return ZKL_LOG_INFO;
  p += 2;
  for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++) {
    size_t n = strlen(tags[i].tag);
    if (strncmp(p, tags[i].tag, n) == 0) {
      *rest = p + n;
      return tags[i].level;
    }
  }
  return ZKL_LOG_INFO;
}

void zkl__log_zookeeper(const char *line) {
  if (atomic_load_explicit(&handler_max, memory_order_relaxed) == 0) return;
  const char *rest;
  int level = zkl__log_parse_zookeeper(line, &rest);
  size_t n = strlen(rest);
  while (n > 0 && (rest[n - 1] == '\n' || rest[n - 1] == '\r')) n--;
  char text[1024];
  if (n >= sizeof text) n = sizeof text - 1;
  memcpy(text, rest, n);
  text[n] = '\0';
  deliver(level, ZKL_LOG_ZOOKEEPER, 0, text);
}

/* "[session 0x...] " or "" */
static const char *session_prefix(char *buf, size_t len, int64_t sid) {
  if (sid == 0) return "";
  snprintf(buf, len, "[session 0x%llx] ", (unsigned long long)sid);
  return buf;
}

void zkl_log_syslog(zkl_log_level_t level, zkl_log_source_t source,
                    int64_t session_id, const char *message, void *arg) {
  (void)arg;
  int prio = level == ZKL_LOG_ERROR  ? LOG_ERR
             : level == ZKL_LOG_WARN ? LOG_WARNING
             : level == ZKL_LOG_INFO ? LOG_INFO
                                     : LOG_DEBUG;
  char sp[48];
  syslog(prio, "%s: %s%s", source == ZKL_LOG_ZOOKEEPER ? "zookeeper" : "zkl",
         session_prefix(sp, sizeof sp, session_id),
         message != NULL ? message : "");
}

void zkl_log_stream(zkl_log_level_t level, zkl_log_source_t source,
                    int64_t session_id, const char *message, void *arg) {
  FILE *f = arg != NULL ? (FILE *)arg : stderr;
  char sp[48];
  fprintf(f, "%s: %s: %s%s\n",
          source == ZKL_LOG_ZOOKEEPER ? "zookeeper" : "zkl",
          zkl_log_level_name(level), session_prefix(sp, sizeof sp, session_id),
          message != NULL ? message : "");
}
