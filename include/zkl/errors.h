/* zkl/errors.h - error codes of the zkl library.
 *
 * Every zkl function that can fail returns int: 0 on success, a negative code
 * on failure.  zkl's own codes live in -1001..-1099; ZooKeeper's own codes
 * (-1..-999, ZOK = 0) may pass through unchanged where a ZooKeeper call failed
 * in a way zkl has no better word for.  zkl_strerror() and zkl_err_name()
 * describe both families.
 */
#ifndef ZKL_ERRORS_H
#define ZKL_ERRORS_H

#include "zkl/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ONE table generates the constants, zkl_strerror() and zkl_err_name(), so
 * they can never drift apart.  XX(name, value, message) */
#define ZKL_ERRNO_MAP(XX)                                                     \
  XX(EINVAL,     -1001, "invalid argument")                                    \
  XX(ENOMEM,     -1002, "out of memory")                                       \
  XX(EBUSY,      -1003, "lock is held by another contender")                   \
  XX(ETIMEDOUT,  -1004, "timed out")                                           \
  XX(ECANCELED,  -1005, "wait canceled")                                       \
  XX(EPERM,      -1006, "calling thread does not hold the lock")               \
  XX(ECONNECT,   -1007, "cannot connect to ZooKeeper")                         \
  XX(ESUSPENDED, -1008, "connection suspended: the hold is in doubt")          \
  XX(ELOST,      -1009, "session lost: the hold is gone")                      \
  XX(EAUTH,      -1010, "ZooKeeper authentication failed")                     \
  XX(EAGAIN,     -1011, "recursion count limit reached")                       \
  XX(ESYSTEM,    -1012, "system error (thread or clock)")                      \
  XX(EPROTO,     -1013, "a node or its data is not as the recipe expects")         \
  XX(EDEADLK,    -1014, "would deadlock: read hold cannot become a write hold") \
  XX(ENOENT,     -1015, "nobody leads now")                                    \
  XX(EEMPTY,     -1016, "queue is empty")                                      \
  XX(EFULL,      -1017, "queue is full")                                       \
  XX(ESTALE,     -1018, "changed since it was read: nothing written")          \
  XX(ERANGE,     -1019, "value out of range")

typedef enum zkl_errno {
#define ZKL__ERR_ENUM(name, value, msg) ZKL_##name = (value),
  ZKL_ERRNO_MAP(ZKL__ERR_ENUM)
#undef ZKL__ERR_ENUM
  ZKL_OK = 0
} zkl_errno_t;

/* Describes err in English.  Knows zkl's codes, ZooKeeper's codes and 0;
 * any other value gives "unknown error".  Never returns NULL; the string is
 * static and must not be freed.  Thread-safe. */
ZKL_EXTERN const char *zkl_strerror(int err);

/* The symbolic name of err: "ZKL_ETIMEDOUT", "ZCONNECTIONLOSS", "OK", or
 * "UNKNOWN".  Never NULL, static storage.  Thread-safe. */
ZKL_EXTERN const char *zkl_err_name(int err);

/* A detailed English message about the last failure of a zkl call made by
 * the calling thread (e.g. which hosts could not be reached), or "" if the
 * last call succeeded or gave no detail.  Thread-local storage: valid until
 * the thread's next zkl call.  Never NULL. */
ZKL_EXTERN const char *zkl_last_error(void);

#ifdef __cplusplus
}
#endif
#endif /* ZKL_ERRORS_H */
