/* zkl.h - ZooKeeper lock recipes for C: the umbrella header.
 *
 * Conventions (stated once, exceptions noted per function):
 *  - every function that can fail returns 0 or a negative error code
 *    (zkl/errors.h); results come back through out-parameters;
 *  - every handle is opaque and freed by its own _destroy/_close function,
 *    which is NULL-safe;
 *  - strings and buffers passed in are copied; nothing returned needs free()
 *    unless the function says so;
 *  - functions are thread-safe unless stated otherwise.
 */
#ifndef ZKL_H
#define ZKL_H

#include "zkl/version.h"
#include "zkl/errors.h"
#include "zkl/log.h"
#include "zkl/session.h"
#include "zkl/mutex.h"
#include "zkl/rwlock.h"
#include "zkl/election.h"
#include "zkl/queue.h"
#include "zkl/counter.h"
#include "zkl/barrier.h"
#include "zkl/semaphore.h"
#include "zkl/multilock.h"
#include "zkl/inspect.h"

#endif /* ZKL_H */
