/* lib/core/errors.c - error text, names and the per-thread detail message. */
#include <stdio.h>
#include <string.h>
#include <zookeeper/zookeeper.h>

#include "core/core.h"

static _Thread_local char last_error[512];

const char *zkl_version(void) { return ZKL_VERSION_STRING; }

const char *zkl_last_error(void) { return last_error; }

void zkl__clear_error(void) { last_error[0] = '\0'; }

int zkl__fail(int err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return err;
}

/* ZooKeeper's own codes that zerror() knows.  zerror() answers "unknown
 * error" for others, which we use to decide whether a value is ZooKeeper's. */
static const char *zk_name(int err) {
  switch (err) {
#define ZK_NAME(c) case c: return #c;
    ZK_NAME(ZSYSTEMERROR) ZK_NAME(ZRUNTIMEINCONSISTENCY)
    ZK_NAME(ZDATAINCONSISTENCY) ZK_NAME(ZCONNECTIONLOSS)
    ZK_NAME(ZMARSHALLINGERROR) ZK_NAME(ZUNIMPLEMENTED)
    ZK_NAME(ZOPERATIONTIMEOUT) ZK_NAME(ZBADARGUMENTS)
    ZK_NAME(ZINVALIDSTATE) ZK_NAME(ZNEWCONFIGNOQUORUM)
    ZK_NAME(ZRECONFIGINPROGRESS) ZK_NAME(ZSSLCONNECTIONERROR)
    ZK_NAME(ZAPIERROR) ZK_NAME(ZNONODE) ZK_NAME(ZNOAUTH)
    ZK_NAME(ZBADVERSION) ZK_NAME(ZNOCHILDRENFOREPHEMERALS)
    ZK_NAME(ZNODEEXISTS) ZK_NAME(ZNOTEMPTY) ZK_NAME(ZSESSIONEXPIRED)
    ZK_NAME(ZINVALIDCALLBACK) ZK_NAME(ZINVALIDACL) ZK_NAME(ZAUTHFAILED)
    ZK_NAME(ZCLOSING) ZK_NAME(ZNOTHING) ZK_NAME(ZSESSIONMOVED)
    ZK_NAME(ZNOTREADONLY) ZK_NAME(ZEPHEMERALONLOCALSESSION)
    ZK_NAME(ZNOWATCHER) ZK_NAME(ZRECONFIGDISABLED)
    ZK_NAME(ZSESSIONCLOSEDREQUIRESASLAUTH) ZK_NAME(ZTHROTTLEDOP)
#undef ZK_NAME
    default: return NULL;
  }
}

const char *zkl_strerror(int err) {
  switch (err) {
#define ZKL__ERR_TEXT(name, value, msg) case ZKL_##name: return msg;
    ZKL_ERRNO_MAP(ZKL__ERR_TEXT)
#undef ZKL__ERR_TEXT
    case 0: return "success";
    default: break;
  }
  if (zk_name(err) == NULL) return "unknown error";
  /* zerror() of some client versions does not know every code it defines */
  if (err == ZSSLCONNECTIONERROR) return "SSL connection error";
  const char *text = zerror(err);
  return strcmp(text, "unknown error") != 0 ? text : zk_name(err);
}

const char *zkl_err_name(int err) {
  switch (err) {
#define ZKL__ERR_NAME(name, value, msg) case ZKL_##name: return "ZKL_" #name;
    ZKL_ERRNO_MAP(ZKL__ERR_NAME)
#undef ZKL__ERR_NAME
    case 0: return "OK";
    default: break;
  }
  const char *zk = zk_name(err);
  return zk != NULL ? zk : "UNKNOWN";
}
