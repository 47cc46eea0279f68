/* cli/queue.h - PRIVATE to the zkl tool: the children of a lock,
 * read/write lock or election path put in queue order, with who holds.
 *
 * Pure logic over names (no server): the library's own name parser,
 * order and drivers decide, so `zkl status` says exactly what the
 * recipes would.
 */
#ifndef ZKL_CLI_QUEUE_H
#define ZKL_CLI_QUEUE_H

#include <stddef.h>
#include <stdint.h>

/* What a child is, as `zkl status` shows it. */
typedef enum cli_kind {
  CLI_KIND_LOCK = 0,  /* exclusive lock: "-lock-", kazoo's "__lock__"     */
  CLI_KIND_READ,      /* read side: "__READ__", kazoo's "__rlock__"       */
  CLI_KIND_WRITE,     /* write side: "__WRIT__" (and "__lock__" beside
                         read/write nodes: kazoo's WriteLock)             */
  CLI_KIND_ELECTION,  /* election candidate: "-latch-"                    */
  CLI_KIND_FOREIGN    /* any other child: no recipe queues behind it      */
} cli_kind_t;

typedef struct cli_entry {
  /* set by the caller */
  const char *name;        /* child name; must outlive the entry          */
  int64_t czxid;           /* the node's fencing token                    */
  int64_t owner;           /* ephemeralOwner: the session id, 0 if none   */
  char *data;              /* node data (the caller owns it), or NULL     */
  int data_len;
  /* set by cli_queue_order() */
  cli_kind_t kind;
  int position;            /* 1.. in queue order; 0 for a foreign child   */
  int holds;               /* 1: the recipe grants this contender now     */
  int32_t seq;             /* private: the sequence number                */
} cli_entry_t;

/* Sorts v into queue order (contenders by sequence number, serial-number
 * arithmetic as the library's; then foreign children by name) and fills
 * kind, position and holds: the first of an exclusive lock or an election,
 * the readers ahead of the first writer or else that writer. */
void cli_queue_order(cli_entry_t *v, size_t n);

/* "lock", "read", "write", "election" or "foreign". */
const char *cli_kind_name(cli_kind_t kind);

#endif /* ZKL_CLI_QUEUE_H */
