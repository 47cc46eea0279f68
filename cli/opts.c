/* cli/opts.c - the zkl tool's command line: global options, then one
 * command and its own options.  Pure logic, unit-tested without a server.
 *
 * Both levels stop at the first operand ('+' in the option strings), so
 * options of CMD are never taken for ours: `zkl lock /p ls -l` runs `ls -l`.
 */
#include "opts.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zkl.h"

/* ---- help texts ------------------------------------------------------------ */

static const char help_top[] =
    "Usage: zkl [OPTIONS] COMMAND [ARGS...]\n"
    "Locks, leader election, queues, counters, barriers and semaphores on Apache\n"
    "ZooKeeper, for shell scripts.\n"
    "\n"
    "Commands:\n"
    "  lock PATH [--] CMD [ARG...]   run CMD while holding the lock at PATH\n"
    "  lock --all PATH... -- CMD [ARG...]\n"
    "                                run CMD while holding the locks at every PATH,\n"
    "                                all or none\n"
    "  elect PATH [--] CMD [ARG...]  run CMD while leader of the election at PATH\n"
    "  elect --observe PATH          print the leader's id, then each change\n"
    "  status PATH                   list the contenders at PATH in queue order\n"
    "                                (and the items of a queue there)\n"
    "  status --counter PATH         show the counter at PATH\n"
    "  status --barrier PATH         show the barrier at PATH\n"
    "  status --sem PATH             show the semaphore at PATH\n"
    "  status --stats FILE...        show the counters a zkl process writes to\n"
    "                                FILE (its --stats-file, or the library's\n"
    "                                zkl_session_stats_export())\n"
    "  queue put|take|claim|peek|size|ls|rm PATH ...\n"
    "                                the FIFO queue at PATH ('zkl queue --help')\n"
    "  counter get|set|add|cas|wait PATH ...\n"
    "                                the shared counter at PATH\n"
    "                                ('zkl counter --help')\n"
    "  barrier set|remove|wait PATH  the barrier at PATH ('zkl barrier --help')\n"
    "  barrier enter -n MEMBERS PATH [--] CMD [ARG...]\n"
    "                                run CMD once MEMBERS processes have entered\n"
    "                                the double barrier at PATH; leave together\n"
    "  sem -n MAX PATH [--] CMD [ARG...]\n"
    "                                run CMD while holding one of the MAX leases of\n"
    "                                the semaphore at PATH ('zkl sem --help')\n"
    "\n"
    "Options (before COMMAND):\n"
    "  -s, --servers HOSTS       ZooKeeper's \"host:port,...[/chroot]\"\n"
    "                            (default: $ZKL_SERVERS, then " CLI_DEFAULT_HOSTS ")\n"
    "      --session-timeout MS  session timeout asked of the server (default 10000)\n"
    "      --connect-timeout MS  give up connecting after MS (default 5000)\n"
    "      --auth USER:PASS      digest credentials\n"
    "  -v, --verbose             progress and zkl's log on stderr (twice:\n"
    "                            ZooKeeper's log too)\n"
    "      --stats               the session's counters on stderr at the end\n"
    "      --stats-file FILE     the session's counters written to FILE every\n"
    "                            second while it runs (removed at the end), for\n"
    "                            'zkl status --stats FILE'\n"
    "  -h, --help                this help; 'zkl COMMAND --help' for a command\n"
    "  -V, --version             print the version\n"
    "\n"
    "Exit status: CMD's own; 1 queue empty or full (see 'zkl queue --help'),\n"
    "counter changed since read (cas) or nothing in time (see 'zkl counter\n"
    "--help'), barrier not set (remove) or not passed in time (see 'zkl\n"
    "barrier --help'), leases not obtained in time (sem); 64 usage error; 66\n"
    "a FILE of status --stats missing or not a counters file; 69\n"
    "no server answered; 70 other failure; 75 lock, leadership, claim, leases\n"
    "or session lost; 77 permission refused; 126/127 CMD not executable/not\n"
    "found; 128+N ended by signal N.\n"
    "See zkl(1).\n";

static const char help_lock[] =
    "Usage: zkl [OPTIONS] lock [--read | --write] [-n | -t SECONDS] [-E N]\n"
    "                          PATH [--] CMD [ARG...]\n"
    "       zkl [OPTIONS] lock --all [-n | -t SECONDS] [-E N]\n"
    "                          PATH... -- CMD [ARG...]\n"
    "Run CMD while holding the lock at PATH; exit with CMD's status.\n"
    "\n"
    "      --read               the shared side of the read/write lock\n"
    "      --write              the exclusive side of the read/write lock\n"
    "                           (default: the exclusive lock, which does not\n"
    "                           queue with --read/--write holders)\n"
    "      --all                hold the exclusive locks of all the PATHs (1 to\n"
    "                           64, none twice) together, all or none: queued\n"
    "                           on every PATH at once, in one transaction, so\n"
    "                           that no deadlock comes of the order of the\n"
    "                           PATHs; '--' ends them\n"
    "  -n, --nonblock           give up at once if the lock (--all: one of\n"
    "                           them) is not free\n"
    "  -t, --timeout SECONDS    give up after SECONDS (decimals allowed)\n"
    "  -E, --conflict-exit-code N\n"
    "                           exit status when -n/-t give up (default 1)\n"
    "      --grace SECONDS      after a loss, SIGTERM to SIGKILL (default 5)\n"
    "  -h, --help               this help\n"
    "\n"
    "CMD gets ZKL_LOCK_PATH, ZKL_LOCK_NODE (the node that holds the lock) and\n"
    "ZKL_FENCING_TOKEN (a number, larger for every new holder) in its\n"
    "environment; with --all, ZKL_LOCK_PATHS and ZKL_LOCK_NODES (the PATHs and\n"
    "their nodes, one per line, in the order given), ZKL_FENCING_TOKEN (the\n"
    "token of every PATH: the nodes are made in one transaction) and\n"
    "ZKL_FENCING_TOKENS (a line PATH=TOKEN per PATH).  If the lock is lost\n"
    "while CMD runs (session LOST, or the node deleted; --all: any of them),\n"
    "CMD gets SIGTERM, SIGKILL after the grace period, and zkl exits 75.  A\n"
    "suspended connection alone does not stop CMD: the session may come back.\n"
    "SIGINT, SIGTERM and SIGHUP are passed on to CMD; the lock is released\n"
    "(--all: every lock) once CMD has exited.\n";

static const char help_elect[] =
    "Usage: zkl [OPTIONS] elect [-i ID] PATH [--] CMD [ARG...]\n"
    "       zkl [OPTIONS] elect --observe PATH\n"
    "Run CMD only while leader of the election at PATH; exit with CMD's status.\n"
    "\n"
    "  -i, --id ID              this candidate's id (default: host:pid)\n"
    "      --observe            do not stand: print the leader's id, then one\n"
    "                           line per change (an empty line: nobody leads),\n"
    "                           until SIGINT or SIGTERM (then exit 0); a lost\n"
    "                           session does not end it\n"
    "      --grace SECONDS      after a loss, SIGTERM to SIGKILL (default 5)\n"
    "  -h, --help               this help\n"
    "\n"
    "CMD gets ZKL_ELECTION_PATH, ZKL_ELECTION_ID, ZKL_ELECTION_NODE (the\n"
    "leader's node) and ZKL_FENCING_TOKEN in its environment.  If leadership\n"
    "is lost while CMD runs (session LOST, or the node deleted), CMD gets\n"
    "SIGTERM, SIGKILL after the grace period, and zkl exits 75.\n"
    "A suspended connection alone does not stop CMD: the session may come\n"
    "back.  SIGINT, SIGTERM and SIGHUP are passed on to CMD; zkl resigns\n"
    "once CMD has exited.\n";

static const char help_status[] =
    "Usage: zkl [OPTIONS] status [--json] PATH\n"
    "       zkl [OPTIONS] status --watch [-t SECONDS] [--json] PATH\n"
    "       zkl [OPTIONS] status --counter [--format F] [--json] PATH\n"
    "       zkl [OPTIONS] status --barrier [--json] PATH\n"
    "       zkl [OPTIONS] status --sem [--count-path P] [--json] PATH\n"
    "       zkl [OPTIONS] status --sem --kazoo [--json] PATH\n"
    "       zkl status --stats [--json] FILE...\n"
    "List the contenders of the lock, read/write lock or election at PATH in\n"
    "queue order: position, kind (lock, read, write, election; foreign for a\n"
    "child that is no contender), whether it holds, fencing token (czxid),\n"
    "session id (ephemeral owner), node name and owner data (escaped).\n"
    "Items of a queue (qn- or kazoo's entry- children, or kazoo's\n"
    "LockingQueue: children entries and taken) are not listed one by one:\n"
    "a line per format gives their number, how many are claimed, and the\n"
    "head item, the next a take or claim gets (JSON: an object of kind\n"
    "\"queue\" with \"format\", \"items\" and \"claimed\").\n"
    "A PATH with no contenders, or none at all, prints \"no contenders\"\n"
    "(JSON: []) and exits 0.\n"
    "With --watch, the list is shown again each time PATH's children change\n"
    "(a watch, no polling), with a WAITED column (how long each node has\n"
    "been there, by the server's clock), redrawn in place on a terminal and\n"
    "refreshed every second; with --json, one JSON array per line and change\n"
    "(each object with \"ctime_ms\").  It runs until SIGINT or SIGTERM (exit\n"
    "0), or for -t SECONDS; a lost connection waits for it to come back.\n"
    "With --counter, PATH is shown as the shared counter of 'zkl counter'\n"
    "instead: its path, format, value, data version (cas's VERSION), whether\n"
    "the node exists, and the zxid of its last write (JSON: an array of one\n"
    "object of kind \"counter\" with \"path\", \"format\", \"value\",\n"
    "\"version\", \"exists\" and \"zxid\").  Nothing is created.\n"
    "With --barrier, PATH is shown as the barriers of 'zkl barrier' instead:\n"
    "its path, whether its node exists (a barrier set, or a double barrier's\n"
    "node), how many double-barrier members are in, and whether its node\n"
    "`ready` exists (JSON: an array of one object of kind \"barrier\" with\n"
    "\"path\", \"exists\", \"members\" and \"ready\").  Nothing is created.\n"
    "With --sem, PATH is shown as the semaphore of 'zkl sem' instead: its path,\n"
    "how many leases are held now (by anyone) and, with --count-path P, the\n"
    "maximum the shared count at P holds (\"-\" without it: the maximum is then\n"
    "each user's -n) (JSON: an array of one object of kind \"semaphore\" with\n"
    "\"path\", \"format\", \"leases\", \"max\" and \"count_path\", null without\n"
    "it).  With --kazoo, in kazoo's layout (see 'zkl sem --help'): the leases\n"
    "are PATH's children and the maximum is the one stored in PATH's data\n"
    "(\"-\" if none) (JSON: \"format\" \"kazoo\", else \"curator\").  A shared\n"
    "count that is missing or not a 4-byte maximum, or (--kazoo) a stored\n"
    "maximum below 1, exits 70.  Nothing is created.\n"
    "With --stats, no server is asked: each FILE is a counters file that a\n"
    "zkl process writes (zkl --stats-file FILE, or a daemon's\n"
    "zkl_session_stats_export()) and is shown as its process id, session id\n"
    "(as the SESSION column shows a contender's), hosts, state, age and its\n"
    "counters: requests by kind, watches, turns (acquisitions) and how long\n"
    "the grants waited, session events.  A file older than 3 of its\n"
    "intervals (and 2 s) is marked STALE: its process has probably ended\n"
    "without removing it.  (JSON: an array of objects with \"file\", \"pid\",\n"
    "\"session\", \"hosts\", \"state\", \"written\", \"age_s\",\n"
    "\"interval_s\", \"stale\" and \"counters\", named as the fields of\n"
    "zkl_session_stats_t.)  A FILE missing or not a counters file is said on\n"
    "stderr, the others are shown, and the exit status is 66.\n"
    "\n"
    "      --json               one JSON array of objects instead of a table\n"
    "      --watch              show it again at every change, until stopped\n"
    "  -t, --timeout SECONDS    with --watch: stop after SECONDS\n"
    "      --counter            show PATH as a counter\n"
    "      --barrier            show PATH as a barrier\n"
    "      --sem                show PATH as a semaphore\n"
    "      --stats              show the counters files FILE... (no PATH)\n"
    "      --count-path P       with --sem: the shared count holding its maximum\n"
    "      --kazoo              with --sem: kazoo's layout, as 'zkl sem --kazoo'\n"
    "      --format F           with --counter: int32 (the default), int64 or\n"
    "                           text, as 'zkl counter' takes it\n"
    "  -h, --help               this help\n";

static const char help_queue[] =
    "Usage: zkl [OPTIONS] queue put [--format F] [--priority N] [--max-items N]\n"
    "                               [--soft-max N] [-t SECONDS] PATH [DATA]\n"
    "       zkl [OPTIONS] queue put --batch [--format F] [--priority N] ... PATH\n"
    "       zkl [OPTIONS] queue take [--format F] [-n | -t SECONDS] [--max N]\n"
    "                                [--json] PATH\n"
    "       zkl [OPTIONS] queue claim [--format locking] [-n | -t SECONDS]\n"
    "                                 [--grace SECONDS] [--nack-tail]\n"
    "                                 PATH [--] CMD [ARG...]\n"
    "       zkl [OPTIONS] queue peek [--format F] [--json] PATH\n"
    "       zkl [OPTIONS] queue size [--format F] PATH\n"
    "       zkl [OPTIONS] queue ls [--format F] [--json] PATH\n"
    "       zkl [OPTIONS] queue rm [--format F] PATH NAME\n"
    "The FIFO queue at PATH, shared with every program that uses the path.\n"
    "An item is a string of up to 1000000 bytes, any bytes.\n"
    "\n"
    "  put    append DATA, or without it all of stdin (any bytes, NUL too)\n"
    "  take   take the head item, waiting for one, and write its bytes to\n"
    "         stdout as they are (nothing added): at most once\n"
    "  claim  claim the head item nobody has claimed, waiting for one, and run\n"
    "         CMD with the item's bytes on its stdin: at least once.  CMD\n"
    "         exits 0: the item is acked (deleted); CMD fails: it is given\n"
    "         back (nacked) to the head, or with --nack-tail to the end\n"
    "  peek   write the head item's bytes without taking it\n"
    "  size   print how many children PATH (locking: PATH/entries) has\n"
    "  ls     list the items in queue order: position, token, length,\n"
    "         claimed, name and the start of the data (escaped)\n"
    "  rm     remove the item called NAME (as ls and --json show it)\n"
    "\n"
    "      --format F           qn (the default: ZooKeeper's and Curator's\n"
    "                           qn-<seq>), kazoo (kazoo's Queue,\n"
    "                           entry-<prio>-<seq>) or locking (kazoo's\n"
    "                           LockingQueue: PATH/entries and PATH/taken,\n"
    "                           the one format with claims; claim's only)\n"
    "      --priority N         put, kazoo and locking: 0..999, lower is\n"
    "                           taken first (default 100)\n"
    "      --max-items N        put: refuse while PATH holds N children or\n"
    "                           more (default 50000; 0: no bound)\n"
    "      --soft-max N         put: wait while PATH holds N children or\n"
    "                           more (at most -t SECONDS; 0: no bound)\n"
    "      --batch              put: each line of stdin (without its newline)\n"
    "                           is an item, all put at once or none (at most\n"
    "                           1000 lines and 1000000 bytes)\n"
    "  -n, --nonblock           take, claim: do not wait if the queue is empty\n"
    "  -t, --timeout SECONDS    take, claim: wait at most SECONDS (decimals\n"
    "                           allowed); put: give up if not connected, or\n"
    "                           still at --soft-max, after SECONDS\n"
    "      --max N              take: up to N items (1..1000) at once, each\n"
    "                           written followed by a newline\n"
    "      --grace SECONDS      claim: after a loss, SIGTERM to SIGKILL\n"
    "                           (default 5)\n"
    "      --nack-tail          claim: CMD failed: the item goes to the end\n"
    "                           of the queue, not back to the head\n"
    "      --json               take, peek: one JSON object per item and line,\n"
    "                           {\"name\", \"token\", \"len\", \"data\"} with data\n"
    "                           escaped as zkl status does; ls: a JSON array\n"
    "                           (with \"position\" and \"claimed\" too)\n"
    "  -h, --help               this help\n"
    "\n"
    "claim: CMD gets ZKL_QUEUE_PATH, ZKL_ITEM_NAME and ZKL_ITEM_TOKEN (the\n"
    "delivery token, a number larger at every redelivery of the item) in its\n"
    "environment.  If the claim is lost while CMD runs (session LOST), CMD\n"
    "gets SIGTERM, SIGKILL after the grace period, and zkl exits 75: another\n"
    "consumer gets the item.  SIGINT, SIGTERM and SIGHUP are passed on to\n"
    "CMD, and the item is then given back whatever CMD's status.\n"
    "\n"
    "Exit status: 0 done; 1 nothing to take, claim or peek (-n, -t), no item\n"
    "NAME (rm), or the queue is full (put); claim: CMD's status once it ran;\n"
    "69 not connected (put -t); 75 session lost (claim: the claim lost, or\n"
    "the item acked too late: its work may be done twice); 128+N signal N\n"
    "while take or claim waited (nothing taken or claimed), or before a put\n"
    "was sent (nothing put).\n"
    "DATA longer than 1000000 bytes is a usage error (64); stdin longer than\n"
    "that, or --batch past its limits, exits 70 with nothing put.\n";

static const char help_counter[] =
    "Usage: zkl [OPTIONS] counter get [--format F] [--initial N] [--json] PATH\n"
    "       zkl [OPTIONS] counter set [--format F] [--json] PATH VALUE\n"
    "       zkl [OPTIONS] counter add [--format F] [--initial N] [-t SECONDS]\n"
    "                                 [--json] PATH DELTA\n"
    "       zkl [OPTIONS] counter cas [--format F] [--initial N] [--json]\n"
    "                                 PATH VERSION VALUE\n"
    "       zkl [OPTIONS] counter wait [--format F] [--initial N] [-t SECONDS]\n"
    "                                  [--json] PATH\n"
    "The shared counter at PATH: one integer in one node, changed atomically\n"
    "by every program that uses the path (Curator's SharedCount and\n"
    "DistributedAtomicLong, kazoo's Counter).  Each subcommand prints the\n"
    "value as it left the counter.\n"
    "\n"
    "  get    print the value (of a missing node: the --initial value;\n"
    "         nothing is created)\n"
    "  set    write VALUE whatever the counter holds\n"
    "  add    add DELTA (may be negative), again and again until no other\n"
    "         writer came first; a missing node is made with --initial + DELTA\n"
    "  cas    write VALUE only if the node's data version is still VERSION\n"
    "         (as get --json shows it), or with VERSION none, if the node is\n"
    "         still missing\n"
    "  wait   wait for the next change of the counter, print the new value\n"
    "\n"
    "      --format F           int32 (the default: 4 bytes big-endian, as\n"
    "                           Curator's SharedCount), int64 (8 bytes: Curator's\n"
    "                           DistributedAtomicLong) or text (decimal: kazoo's\n"
    "                           Counter())\n"
    "      --initial N          get, add, cas, wait: the value of a missing or\n"
    "                           empty node (default 0)\n"
    "  -t, --timeout SECONDS    add: give up after SECONDS (decimals allowed; 0:\n"
    "                           one try) when other writers keep coming first or\n"
    "                           there is no connection; wait: wait at most\n"
    "                           SECONDS (default: for ever)\n"
    "      --json               one JSON object {\"path\", \"value\", \"version\",\n"
    "                           \"exists\", \"zxid\"} instead of the value\n"
    "  -h, --help               this help\n"
    "\n"
    "VALUE, DELTA and N are decimal integers (an optional sign, digits).\n"
    "VALUE and N are within the format's range: int32 -2147483648..2147483647,\n"
    "int64 and text -9223372036854775808..9223372036854775807; DELTA within\n"
    "what a counter of the format could take (int32: -4294967295..4294967295).\n"
    "VERSION is a 32-bit integer, or none.  Anything else is a usage error\n"
    "(64), and nothing is sent.\n"
    "\n"
    "Exit status: 0 done; 1 cas: the counter changed since VERSION (nothing\n"
    "written; the counter as it is now is printed), add: nothing added\n"
    "within -t, wait: no change within -t; 69 no connection (set, add,\n"
    "cas: or the answer was lost with it, and the write may have been\n"
    "applied); 70 the node's data is not of the format, or add would leave\n"
    "its range (nothing written); 75 session lost; 128+N signal N while it\n"
    "waited (nothing written).\n";

static const char help_barrier[] =
    "Usage: zkl [OPTIONS] barrier set PATH\n"
    "       zkl [OPTIONS] barrier remove PATH\n"
    "       zkl [OPTIONS] barrier wait [-t SECONDS] PATH\n"
    "       zkl [OPTIONS] barrier enter -n MEMBERS [-t SECONDS]\n"
    "                                   [--leave-timeout SECONDS] [-E N]\n"
    "                                   [--grace SECONDS] PATH [--] CMD [ARG...]\n"
    "The barrier at PATH holds every waiter while it is set (while its node\n"
    "exists); the double barrier at PATH lets MEMBERS processes start CMD\n"
    "together and finish together.  Curator's DistributedBarrier and\n"
    "DistributedDoubleBarrier, kazoo's Barrier and DoubleBarrier use the same\n"
    "nodes.  Use a PATH for one kind only.\n"
    "\n"
    "  set     set the barrier (make its node; done too if it was set)\n"
    "  remove  remove the barrier (delete its node): every waiter goes on\n"
    "  wait    wait until the barrier is removed (at once if it is not set)\n"
    "  enter   enter the double barrier and wait until MEMBERS members are\n"
    "          in, run CMD, then leave it and wait until every member is\n"
    "          out; exit with CMD's status\n"
    "\n"
    "  -n, --members MEMBERS    enter: how many members open the barrier,\n"
    "                           1..2147483647 (the same for every member)\n"
    "  -t, --timeout SECONDS    wait: wait at most SECONDS (decimals allowed;\n"
    "                           0: look once); enter: wait at most SECONDS to\n"
    "                           enter, and again at most SECONDS to leave once\n"
    "                           CMD has ended (default: for ever)\n"
    "      --leave-timeout SECONDS\n"
    "                           enter: wait at most SECONDS to leave instead\n"
    "                           (default: -t's; 0: look once, do not wait)\n"
    "  -E, --conflict-exit-code N\n"
    "                           enter: exit status when -t or --leave-timeout\n"
    "                           gives up (default 1)\n"
    "      --grace SECONDS      enter: after a loss, SIGTERM to SIGKILL\n"
    "                           (default 5)\n"
    "  -h, --help               this help\n"
    "\n"
    "enter: CMD gets ZKL_BARRIER_PATH and ZKL_BARRIER_MEMBERS in its\n"
    "environment.  Not open within -t: CMD is not run, the member is taken out\n"
    "again, and zkl exits 1 (-E).  If the session is lost while CMD runs (the\n"
    "member went with it), CMD gets SIGTERM, SIGKILL after the grace period,\n"
    "and zkl exits 75 without leaving.  A suspended connection alone does not\n"
    "stop CMD: the session may come back.  SIGINT, SIGTERM and SIGHUP are\n"
    "passed on to CMD; zkl then leaves without waiting for the others.  CMD's\n"
    "failure is its exit status whatever the leave's outcome; once CMD\n"
    "succeeded, others still in at the leave's deadline exit 1 (-E).\n"
    "\n"
    "Exit status: 0 done (enter: CMD's status); 1 remove: the barrier was not\n"
    "set; wait: still set after -t; enter: see above; 69 no connection (set,\n"
    "remove: or the answer was lost with it); 75 session lost; 128+N signal N\n"
    "while it waited (enter: CMD not run, or it had succeeded).\n";

static const char help_sem[] =
    "Usage: zkl [OPTIONS] sem -n MAX [--qty Q] [--count-path P] [-t SECONDS]\n"
    "                         [-E N] [--grace SECONDS] PATH [--] CMD [ARG...]\n"
    "       zkl [OPTIONS] sem --count-path P [--qty Q] [-t SECONDS] [-E N]\n"
    "                         [--grace SECONDS] PATH [--] CMD [ARG...]\n"
    "       zkl [OPTIONS] sem --kazoo [-n MAX] [--qty Q] [-t SECONDS] [-E N]\n"
    "                         [--grace SECONDS] PATH [--] CMD [ARG...]\n"
    "Run CMD while holding Q leases of the counting semaphore at PATH, of which\n"
    "there are MAX: at most MAX are held at once by all its users together.\n"
    "Exit with CMD's status.  Waiters are served in arrival order.  Curator's\n"
    "InterProcessSemaphoreV2 uses the same nodes (PATH/locks, PATH/leases).\n"
    "With --kazoo, kazoo's Semaphore does instead: waiters line up at\n"
    "PATH-__lock__, the leases are PATH's children, and PATH keeps MAX in its\n"
    "data (ASCII): the user that makes PATH writes it, and PATH stays\n"
    "(persistent) once the leases are given back.\n"
    "\n"
    "  -n, --max MAX            how many leases there are, 1..2147483647 (the\n"
    "                           same for every user of PATH)\n"
    "      --count-path P       take MAX from the shared count at P (4 bytes,\n"
    "                           as 'zkl counter set' and Curator's SharedCount\n"
    "                           write it), read again while waiting: a raised\n"
    "                           count lets waiters in.  With -n too, both must\n"
    "                           agree\n"
    "      --kazoo              kazoo's layout (above): MAX is the one stored\n"
    "                           at PATH, so -n may be left out; given, it must\n"
    "                           agree, and makes PATH with it if missing\n"
    "      --qty Q              take Q leases at once, all or none, 1..1000\n"
    "                           (default 1; at most MAX)\n"
    "  -t, --timeout SECONDS    give up after SECONDS (decimals allowed; 0:\n"
    "                           try once)\n"
    "  -E, --conflict-exit-code N\n"
    "                           exit status when -t gives up (default 1)\n"
    "      --grace SECONDS      after a loss, SIGTERM to SIGKILL (default 5)\n"
    "  -h, --help               this help\n"
    "\n"
    "CMD gets ZKL_SEM_PATH, ZKL_SEM_LEASES (the names of its leases' nodes\n"
    "under PATH/leases, --kazoo: under PATH, separated by spaces) and\n"
    "ZKL_SEM_TOKEN (their fencing token: one number for the Q leases, larger\n"
    "for every later acquisition; up to MAX holders have tokens at once) in\n"
    "its environment.  Not obtained within -t: CMD is not run, nothing is\n"
    "left behind, and zkl exits 1 (-E).  While CMD runs, zkl looks at the\n"
    "session five times a second: if it is lost (the leases went with it),\n"
    "CMD gets SIGTERM, SIGKILL after the grace period, and zkl exits 75.  A\n"
    "suspended connection alone does not stop CMD: the session may come back.\n"
    "SIGINT, SIGTERM and SIGHUP are passed on to CMD; the leases are given\n"
    "back once CMD has exited.\n"
    "\n"
    "Exit status: CMD's; 1 not obtained within -t; 64 usage error, also -n\n"
    "disagreeing with the shared count (--kazoo: with the MAX stored at PATH),\n"
    "or Q more than its MAX; 69 no connection; 70 the shared count missing\n"
    "(without -n) or not a 4-byte MAX of 1 or more, or with --kazoo no MAX\n"
    "stored at PATH (without -n) or one below 1; 75 session lost; 128+N\n"
    "signal N while waiting (CMD not run).\n";

const char *cli_help(cli_command_t command) {
  switch (command) {
  case CLI_CMD_LOCK: return help_lock;
  case CLI_CMD_ELECT: return help_elect;
  case CLI_CMD_STATUS: return help_status;
  case CLI_CMD_QUEUE: return help_queue;
  case CLI_CMD_COUNTER: return help_counter;
  case CLI_CMD_BARRIER: return help_barrier;
  case CLI_CMD_SEM: return help_sem;
  case CLI_CMD_NONE: break;
  }
  return help_top;
}

const char *cli_command_name(cli_command_t command) {
  switch (command) {
  case CLI_CMD_LOCK: return "lock";
  case CLI_CMD_ELECT: return "elect";
  case CLI_CMD_STATUS: return "status";
  case CLI_CMD_QUEUE: return "queue";
  case CLI_CMD_COUNTER: return "counter";
  case CLI_CMD_BARRIER: return "barrier";
  case CLI_CMD_SEM: return "sem";
  case CLI_CMD_NONE: break;
  }
  return "";
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---- options and subcommands ------------------------------------------------ */

/* getopt_long()'s codes for the options without a short form; one with a
 * short form has its letter for a code. */
enum { OPT_READ = 256, OPT_WRITE, OPT_GRACE, OPT_OBSERVE, OPT_JSON,
       OPT_SESSION_TIMEOUT, OPT_CONNECT_TIMEOUT, OPT_AUTH, OPT_STATS, OPT_QUEUE_FORMAT,
       OPT_COUNTER_FORMAT, OPT_PRIORITY, OPT_MAX_ITEMS, OPT_BATCH, OPT_MAX,
       OPT_SOFT_MAX, OPT_NACK_TAIL, OPT_INITIAL, OPT_COUNTER, OPT_BARRIER,
       OPT_LEAVE_TIMEOUT, OPT_SEM, OPT_QTY, OPT_COUNT_PATH, OPT_ALL,
       OPT_KAZOO, OPT_WATCH, OPT_STATS_FILE, OPT_END };

/* A list of option codes, 0 ending it. */
#define CODES(...) ((const int[]){__VA_ARGS__, 0})
#define NO_CODES ((const int[]){0})

/* A subcommand of queue, counter or barrier: its name, its cli_*_op_t, and
 * the options of its command it takes (the others do not apply to it). */
typedef struct subcommand {
  const char *name;
  int op;
  const int *takes;
} subcommand_t;

static const subcommand_t queue_subs[] = {
    {"put", CLI_QUEUE_PUT,
     CODES(OPT_QUEUE_FORMAT, OPT_PRIORITY, OPT_MAX_ITEMS, OPT_SOFT_MAX,
           OPT_BATCH, 't')},
    {"take", CLI_QUEUE_TAKE,
     CODES(OPT_QUEUE_FORMAT, 'n', 't', OPT_MAX, OPT_JSON)},
    {"claim", CLI_QUEUE_CLAIM,
     CODES(OPT_QUEUE_FORMAT, 'n', 't', OPT_GRACE, OPT_NACK_TAIL)},
    {"peek", CLI_QUEUE_PEEK, CODES(OPT_QUEUE_FORMAT, OPT_JSON)},
    {"size", CLI_QUEUE_SIZE, CODES(OPT_QUEUE_FORMAT)},
    {"ls", CLI_QUEUE_LS, CODES(OPT_QUEUE_FORMAT, OPT_JSON)},
    {"rm", CLI_QUEUE_RM, CODES(OPT_QUEUE_FORMAT)}};

static const subcommand_t counter_subs[] = {
    {"get", CLI_COUNTER_GET, CODES(OPT_COUNTER_FORMAT, OPT_INITIAL, OPT_JSON)},
    {"set", CLI_COUNTER_SET, CODES(OPT_COUNTER_FORMAT, OPT_JSON)},
    {"add", CLI_COUNTER_ADD,
     CODES(OPT_COUNTER_FORMAT, OPT_INITIAL, 't', OPT_JSON)},
    {"cas", CLI_COUNTER_CAS, CODES(OPT_COUNTER_FORMAT, OPT_INITIAL, OPT_JSON)},
    {"wait", CLI_COUNTER_WAIT,
     CODES(OPT_COUNTER_FORMAT, OPT_INITIAL, 't', OPT_JSON)}};

static const subcommand_t barrier_subs[] = {
    {"set", CLI_BARRIER_SET, NO_CODES},
    {"remove", CLI_BARRIER_REMOVE, NO_CODES},
    {"wait", CLI_BARRIER_WAIT, CODES('t')},
    {"enter", CLI_BARRIER_ENTER,
     CODES('t', 'n', OPT_LEAVE_TIMEOUT, 'E', OPT_GRACE)}};

static const char *sub_name(const subcommand_t *subs, size_t n, int op) {
  for (size_t i = 0; i < n; i++)
    if (subs[i].op == op) return subs[i].name;
  return "";
}

const char *cli_queue_op_name(cli_queue_op_t op) {
  return sub_name(queue_subs, COUNT(queue_subs), (int)op);
}

const char *cli_counter_op_name(cli_counter_op_t op) {
  return sub_name(counter_subs, COUNT(counter_subs), (int)op);
}

const char *cli_barrier_op_name(cli_barrier_op_t op) {
  return sub_name(barrier_subs, COUNT(barrier_subs), (int)op);
}

/* ---- formats: the words of --format ---------------------------------------- */

/* A format (a zkl_queue_format_t or zkl_counter_format_t) and its word. */
typedef struct format_word {
  const char *name;
  int format;
} format_word_t;

static const format_word_t queue_formats[] = {
    {"qn", ZKL_QUEUE_QN}, {"kazoo", ZKL_QUEUE_KAZOO},
    {"locking", ZKL_QUEUE_LOCKING}};

static const format_word_t counter_formats[] = {
    {"int32", ZKL_COUNTER_INT32}, {"int64", ZKL_COUNTER_INT64},
    {"text", ZKL_COUNTER_TEXT}};

static const char *format_name(const format_word_t *words, size_t n,
                               int format) {
  for (size_t i = 0; i < n; i++)
    if (words[i].format == format) return words[i].name;
  return "?";
}

static int format_parse(const format_word_t *words, size_t n,
                        const char *name, int *format) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(name, words[i].name) == 0) {
      *format = words[i].format;
      return 0;
    }
  return -1;
}

const char *cli_format_name(int format) {
  return format_name(queue_formats, COUNT(queue_formats), format);
}

int cli_format_parse(const char *name, int *format) {
  return format_parse(queue_formats, COUNT(queue_formats), name, format);
}

const char *cli_counter_format_name(int format) {
  return format_name(counter_formats, COUNT(counter_formats), format);
}

int cli_counter_format_parse(const char *name, int *format) {
  return format_parse(counter_formats, COUNT(counter_formats), name, format);
}

int cli_counter_range(int format, int64_t *min, int64_t *max) {
  switch (format) {
  case ZKL_COUNTER_INT32:
    *min = INT32_MIN;
    *max = INT32_MAX;
    return 0;
  case ZKL_COUNTER_INT64:
  case ZKL_COUNTER_TEXT: /* zkl_count_t's value: an int64_t */
    *min = INT64_MIN;
    *max = INT64_MAX;
    return 0;
  default: break;
  }
  return -1;
}

/* ---- numbers ---------------------------------------------------------------- */

int cli_parse_int64(const char *s, int64_t min, int64_t max, int64_t *out) {
  if (s == NULL) return CLI_NUM_SYNTAX;
  const char *digits = s + (*s == '-' || *s == '+');
  if (*digits < '0' || *digits > '9') return CLI_NUM_SYNTAX;
  for (const char *d = digits; *d != '\0'; d++)
    if (*d < '0' || *d > '9') return CLI_NUM_SYNTAX;
  errno = 0;
  long long v = strtoll(s, NULL, 10); /* all digits: only ERANGE is left */
  if (errno == ERANGE || v < min || v > max) return CLI_NUM_RANGE;
  *out = (int64_t)v;
  return CLI_NUM_OK;
}

int cli_parse_version(const char *s, int32_t *version, int *none) {
  if (s != NULL && strcmp(s, "none") == 0) {
    *version = 0;
    *none = 1;
    return 0;
  }
  int64_t v;
  if (cli_parse_int64(s, INT32_MIN, INT32_MAX, &v) != CLI_NUM_OK) return -1;
  *version = (int32_t)v;
  *none = 0;
  return 0;
}

int cli_parse_int(const char *s, long min, long max, long *out) {
  if (s == NULL || *s == '\0' || (*s != '-' && (*s < '0' || *s > '9')))
    return -1;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || *end != '\0' || v < min || v > max) return -1;
  *out = v;
  return 0;
}

#define SECONDS_MAX 1000000000LL

int cli_parse_seconds(const char *s, int64_t *ms) {
  if (s == NULL || *s < '0' || *s > '9') return -1;
  int64_t whole = 0;
  while (*s >= '0' && *s <= '9') {
    whole = whole * 10 + (*s++ - '0');
    if (whole > SECONDS_MAX) return -1;
  }
  int64_t frac_ms = 0; /* thousandths, rounded up past the third digit */
  if (*s == '.') {
    s++;
    if (*s < '0' || *s > '9') return -1;
    int digits = 0, more = 0;
    for (; *s >= '0' && *s <= '9'; s++, digits++) {
      if (digits < 3) frac_ms = frac_ms * 10 + (*s - '0');
      else if (*s != '0') more = 1;
    }
    for (; digits < 3; digits++) frac_ms *= 10;
    frac_ms += more;
  }
  if (*s != '\0') return -1;
  *ms = whole * 1000 + frac_ms;
  return 0;
}

/* ---- parsing -------------------------------------------------------------- */

typedef struct parser {
  cli_opts_t *o;
  char *err;
  size_t errlen;
  const subcommand_t *sub;    /* the subcommand, once read                */
  const struct option *longs; /* the options being read                   */
  int given[OPT_END];         /* how often each of them was given, by code */
  const char *initial;        /* counter --initial, read once the format
                                 is known                                */
} parser_t;

/* What a command (or a subcommand, or the tool before COMMAND) takes. */
typedef struct syntax {
  /* Its options, "help" last; one with a letter for a code has that
   * short form too. */
  const struct option *longs;
  /* Reads one of them that common_option() does not: 0 or the usage
   * error.  NULL: it has none. */
  int (*option)(parser_t *p, int c, const char *arg);
  /* Once the options are read: their checks, then the operands. */
  int (*rest)(parser_t *p, int argc, char **argv);
  /* NULL, or the subcommands (n_subs) that each take these options: the
   * command itself takes -h alone, then SUBCOMMAND. */
  const subcommand_t *subs;
  size_t n_subs;
} syntax_t;

#define ARG(name, code) {name, required_argument, NULL, code}
#define FLAG(name, code) {name, no_argument, NULL, code}
#define HELP_AND_END FLAG("help", 'h'), {NULL, 0, NULL, 0}

/* Formats the one-line hint and returns CLI_EX_USAGE. */
__attribute__((format(printf, 2, 3)))
static int usage_error(parser_t *p, const char *fmt, ...) {
  const char *name = cli_command_name(p->o->command);
  const char *sub = p->sub != NULL ? p->sub->name : "";
  int n = snprintf(p->err, p->errlen, "zkl%s%s%s%s: ", *name ? " " : "",
                   name, *sub ? " " : "", sub);
  if (n < 0 || (size_t)n >= p->errlen) return CLI_EX_USAGE;
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
  va_end(ap);
  if (m < 0 || (size_t)(n + m) >= p->errlen) return CLI_EX_USAGE;
  snprintf(p->err + n + m, p->errlen - (size_t)(n + m),
           " (try 'zkl%s%s --help')", *name ? " " : "", name);
  return CLI_EX_USAGE;
}

/* getopt_long() found no valid option in `elem`, the word it was reading:
 * say which and why.  Its own messages are off (opterr = 0): they would not
 * be one line with a hint. */
static int bad_option(parser_t *p, int c, const char *elem) {
  if (strncmp(elem, "--", 2) != 0) {
    if (c == ':') return usage_error(p, "option -%c needs a value", optopt);
    return usage_error(p, "unknown option -%c", optopt);
  }
  int name_len = (int)strcspn(elem, "=");
  if (c == ':') return usage_error(p, "option %s needs a value", elem);
  if (optopt != 0 && elem[name_len] == '=')
    return usage_error(p, "option %.*s takes no value", name_len, elem);
  return usage_error(p, "unknown option %.*s", name_len, elem);
}

/* How messages name option c of the options being read: "-t" (its short
 * form), else "--format". */
static const char *option_name(const parser_t *p, int c, char *buf,
                               size_t len) {
  if (c < OPT_READ) {
    snprintf(buf, len, "-%c", c);
    return buf;
  }
  for (const struct option *l = p->longs; l->name != NULL; l++)
    if (l->val == c) {
      snprintf(buf, len, "--%s", l->name);
      return buf;
    }
  return "?";
}

/* The word getopt_long() reads next: with '+' nothing is permuted, and
 * optind moves past a group of short options only at its end. */
static const char *current_word(int argc, char **argv) {
  int i = optind < 1 ? 1 : optind;
  return i < argc ? argv[i] : "";
}

/* Resets getopt_long() so that it reads a new vector from argv[1]. */
static void getopt_reset(void) {
  optind = 0; /* glibc: also forgets its internal state */
  opterr = 0;
}

/* getopt's short options for longs: stop at the first operand ('+'), tell
 * a missing value (':'), then each letter code, with ':' if it takes one. */
static void short_options(const struct option *longs, char *shorts,
                          size_t len) {
  size_t n = 0;
  shorts[n++] = '+';
  shorts[n++] = ':';
  for (; longs->name != NULL && n + 3 <= len; longs++) {
    if (longs->val >= OPT_READ) continue;
    shorts[n++] = (char)longs->val;
    if (longs->has_arg == required_argument) shorts[n++] = ':';
  }
  shorts[n] = '\0';
}

static int takes(const subcommand_t *sub, int c) {
  for (const int *t = sub->takes; *t != 0; t++)
    if (*t == c) return 1;
  return 0;
}

/* Option c's SECONDS (-t, --grace, --leave-timeout). */
static int take_seconds(parser_t *p, int c, const char *arg, int64_t *ms) {
  char name[32];
  if (cli_parse_seconds(arg, ms) != 0)
    return usage_error(p, "%s needs SECONDS, not '%s'",
                       option_name(p, c, name, sizeof name), arg);
  return 0;
}

/* Option c's integer in [min, max]; what (say "MAX, ") comes before the
 * range in the message. */
static int take_long(parser_t *p, int c, const char *arg, const char *what,
                     long min, long max, long *out) {
  char name[32];
  if (cli_parse_int(arg, min, max, out) != 0)
    return usage_error(p, "%s needs %s%ld..%ld, not '%s'",
                       option_name(p, c, name, sizeof name), what, min, max,
                       arg);
  return 0;
}

/* The same for an int (max within int). */
static int take_int(parser_t *p, int c, const char *arg, const char *what,
                    long min, long max, int *out) {
  long n;
  int rc = take_long(p, c, arg, what, min, max, &n);
  if (rc == 0) *out = (int)n;
  return rc;
}

enum { NOT_COMMON = -1 };

/* The options that several commands take, read alike by each: 0, the usage
 * error, or NOT_COMMON for an option of the command's own.  (-n is not one:
 * lock's and queue's --nonblock, barrier's MEMBERS, sem's MAX.) */
static int common_option(parser_t *p, int c, const char *arg) {
  cli_opts_t *o = p->o;
  switch (c) {
  case 't': return take_seconds(p, c, arg, &o->timeout_ms);
  case OPT_GRACE: return take_seconds(p, c, arg, &o->grace_ms);
  case 'E':
    return take_int(p, c, arg, "an exit code ", 0, 255, &o->conflict_exit);
  case OPT_JSON: o->json = 1; return 0;
  case OPT_COUNTER_FORMAT:
    if (cli_counter_format_parse(arg, &o->counter_format) != 0)
      return usage_error(p, "--format needs int32, int64 or text, not '%s'",
                         arg);
    return 0;
  case OPT_COUNT_PATH: /* a path as PATH is */
    if (zkl_path_check(arg) != 0)
      return usage_error(p, "bad --count-path '%s': %s", arg,
                         zkl_last_error());
    o->count_path = arg;
    return 0;
  case OPT_KAZOO: o->sem_format = ZKL_SEM_KAZOO; return 0;
  default: return NOT_COMMON;
  }
}

/* Reads the options up to the first operand, counting each in p->given[]:
 * -h ends them (CLI_HELP), and so may syn->option (CLI_VERSION). */
static int read_options(parser_t *p, const syntax_t *syn, int argc,
                        char **argv) {
  char shorts[32];
  short_options(syn->longs, shorts, sizeof shorts);
  p->longs = syn->longs;
  memset(p->given, 0, sizeof p->given);
  for (;;) {
    const char *word = current_word(argc, argv);
    int c = getopt_long(argc, argv, shorts, syn->longs, NULL);
    if (c == -1) return 0;
    if (c == '?' || c == ':') return bad_option(p, c, word);
    if (c == 'h') {
      p->o->action = CLI_HELP;
      return 0;
    }
    if (p->sub != NULL && !takes(p->sub, c)) {
      char name[32];
      return usage_error(p, "%s does not apply to %s",
                         option_name(p, c, name, sizeof name), p->sub->name);
    }
    p->given[c]++;
    int rc = common_option(p, c, optarg);
    if (rc == NOT_COMMON && syn->option != NULL) rc = syn->option(p, c, optarg);
    if (rc != 0 || p->o->action != CLI_RUN) return rc;
  }
}

/* "give -t once" for the first of codes given more than once. */
static int at_most_once(parser_t *p, const int *codes) {
  char name[32];
  for (; *codes != 0; codes++)
    if (p->given[*codes] > 1)
      return usage_error(p, "give %s once",
                         option_name(p, *codes, name, sizeof name));
  return 0;
}

/* Reads argv with syn: its options, then the rest. */
static int parse_syntax(parser_t *p, const syntax_t *syn, int argc,
                        char **argv) {
  int rc = read_options(p, syn, argc, argv);
  if (rc != 0 || p->o->action != CLI_RUN) return rc;
  return syn->rest(p, argc, argv);
}

/* Makes argv[optind...] a vector of its own for getopt_long(): its [0]
 * is the (sub)command's name. */
static void shift(int *argc, char ***argv) {
  *argc -= optind;
  *argv += optind;
  getopt_reset();
}

/* A command with subcommands takes -h alone before SUBCOMMAND. */
static const syntax_t help_only = {(const struct option[]){HELP_AND_END},
                                   NULL, NULL, NULL, 0};

/* [-h] SUBCOMMAND [OPTIONS] ...: one of syn->subs, read with syn. */
static int parse_subcommand(parser_t *p, const syntax_t *syn, int argc,
                            char **argv) {
  const subcommand_t *subs = syn->subs;
  size_t n = syn->n_subs;
  int rc = read_options(p, &help_only, argc, argv);
  if (rc != 0 || p->o->action != CLI_RUN) return rc;
  if (optind >= argc) {
    char names[128] = ""; /* "get, set, add, cas or wait" */
    for (size_t i = 0; i < n; i++)
      snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
               i == 0 ? "" : i + 1 < n ? ", " : " or ", subs[i].name);
    return usage_error(p, "SUBCOMMAND is missing (%s)", names);
  }
  const char *name = argv[optind];
  for (size_t i = 0; i < n; i++) {
    if (strcmp(name, subs[i].name) != 0) continue;
    p->sub = &subs[i];
    switch (p->o->command) {
    case CLI_CMD_QUEUE: p->o->queue_op = (cli_queue_op_t)subs[i].op; break;
    case CLI_CMD_COUNTER:
      p->o->counter_op = (cli_counter_op_t)subs[i].op;
      break;
    case CLI_CMD_BARRIER:
      p->o->barrier_op = (cli_barrier_op_t)subs[i].op;
      break;
    default: break;
    }
    shift(&argc, &argv);
    return parse_syntax(p, syn, argc, argv);
  }
  return usage_error(p, "unknown subcommand '%s'", name);
}

/* ---- operands ---------------------------------------------------------------- */

static int take_path(parser_t *p, int argc, char **argv) {
  if (optind >= argc) return usage_error(p, "PATH is missing");
  const char *path = argv[optind++];
  if (zkl_path_check(path) != 0)
    return usage_error(p, "bad PATH '%s': %s", path, zkl_last_error());
  p->o->path = path;
  return 0;
}

/* [--] CMD [ARG...] */
static int take_cmd(parser_t *p, int argc, char **argv) {
  if (optind < argc && strcmp(argv[optind], "--") == 0) optind++;
  if (optind >= argc) return usage_error(p, "CMD is missing");
  p->o->cmd = argv + optind;
  return 0;
}

/* PATH [--] CMD [ARG...] */
static int take_path_and_cmd(parser_t *p, int argc, char **argv) {
  int rc = take_path(p, argc, argv);
  return rc != 0 ? rc : take_cmd(p, argc, argv);
}

/* barrier enter's and sem's PATH [--] CMD [ARG...].  Without the "--", a
 * CMD that begins with '-' is taken for an option misplaced after PATH:
 * running it would fail only once this member had entered and counted
 * for the others, or once leases had been taken (and others kept
 * waiting). */
static int take_checked_cmd(parser_t *p, int argc, char **argv) {
  int rc = take_path(p, argc, argv);
  if (rc != 0) return rc;
  if (optind < argc && argv[optind][0] == '-' && argv[optind][1] != '\0' &&
      strcmp(argv[optind], "--") != 0)
    return usage_error(p, "unexpected '%s' after PATH (options go before "
                          "PATH; a CMD that begins with '-' goes after "
                          "'--')", argv[optind]);
  return take_cmd(p, argc, argv);
}

/* Nothing after the last operand (named by after): options go before
 * PATH. */
static int nothing_after(parser_t *p, int argc, char **argv,
                         const char *after) {
  if (optind >= argc) return 0;
  const char *word = argv[optind];
  if (word[0] == '-' && word[1] != '\0')
    return usage_error(p, "unexpected '%s' after %s (options go before PATH)",
                       word, after);
  return usage_error(p, "unexpected '%s' after %s", word, after);
}

/* ---- lock ------------------------------------------------------------------ */

_Static_assert(ZKL_MULTILOCK_MAX == 64, "help_lock says --all takes 64");

/* --all's PATH... -- CMD [ARG...].  The "--" is needed: it alone tells
 * the last PATH from CMD.  getopt_long() takes a "--" that comes right
 * after the options as their end (argv[optind - 1]): the PATHs then go
 * up to the next "--", or, with none, that "--" was the one after them
 * and no PATH was given. */
static int take_paths_and_cmd(parser_t *p, int argc, char **argv) {
  cli_opts_t *o = p->o;
  int first = optind, end = first;
  while (end < argc && strcmp(argv[end], "--") != 0) end++;
  if (end >= argc) {
    int ate = optind > 1 && strcmp(argv[optind - 1], "--") == 0;
    if (first >= argc && !ate)
      return usage_error(p, "PATH is missing (--all takes PATH... -- CMD)");
    if (!ate)
      return usage_error(p, "'--' is missing after the PATHs (--all takes "
                            "PATH... -- CMD)");
  }
  if (end == first || end >= argc)
    return usage_error(p, "PATH is missing before '--' (--all takes "
                          "PATH... -- CMD)");
  if (end - first > ZKL_MULTILOCK_MAX)
    return usage_error(p, "%d PATHs: --all takes at most %d", end - first,
                       ZKL_MULTILOCK_MAX);
  for (int i = first; i < end; i++) {
    const char *path = argv[i];
    if (path[0] == '-')
      return usage_error(p, "unexpected '%s' among the PATHs (options go "
                            "before them)", path);
    if (zkl_path_check(path) != 0)
      return usage_error(p, "bad PATH '%s': %s", path, zkl_last_error());
    for (int j = first; j < i; j++)
      if (strcmp(argv[j], path) == 0)
        return usage_error(p, "PATH '%s' is given twice", path);
  }
  o->paths = argv + first;
  o->n_paths = (size_t)(end - first);
  o->path = o->paths[0];
  optind = end + 1;
  if (optind >= argc) return usage_error(p, "CMD is missing");
  o->cmd = argv + optind;
  return 0;
}

static int lock_option(parser_t *p, int c, const char *arg) {
  switch (c) {
  case OPT_READ: p->o->mode = CLI_LOCK_READ; break;
  case OPT_WRITE: p->o->mode = CLI_LOCK_WRITE; break;
  case OPT_ALL: p->o->all = 1; break;
  case 'n': p->o->timeout_ms = 0; break;
  }
  return 0;
}

/* ... PATH [--] CMD [ARG...], or --all ... PATH... -- CMD [ARG...] */
static int lock_rest(parser_t *p, int argc, char **argv) {
  int rc;
  if (p->given[OPT_READ] + p->given[OPT_WRITE] > 1)
    return usage_error(p, "--read and --write exclude each other");
  if ((rc = at_most_once(p, CODES(OPT_ALL))) != 0) return rc;
  if (p->o->all && p->given[OPT_READ] + p->given[OPT_WRITE] > 0)
    return usage_error(p, "--all takes exclusive locks only, not --%s",
                       p->given[OPT_READ] > 0 ? "read" : "write");
  if (p->given['n'] + p->given['t'] > 1)
    return usage_error(p, "give one of -n and -t, once");
  return p->o->all ? take_paths_and_cmd(p, argc, argv)
                   : take_path_and_cmd(p, argc, argv);
}

static const syntax_t lock_syntax = {
    (const struct option[]){FLAG("read", OPT_READ), FLAG("write", OPT_WRITE),
                            FLAG("all", OPT_ALL),
                            FLAG("nonblock", 'n'), ARG("timeout", 't'),
                            ARG("conflict-exit-code", 'E'),
                            ARG("grace", OPT_GRACE), HELP_AND_END},
    lock_option, lock_rest, NULL, 0};

/* ---- elect ----------------------------------------------------------------- */

static int elect_option(parser_t *p, int c, const char *arg) {
  switch (c) {
  case 'i':
    if (arg[0] == '\0') return usage_error(p, "the ID must not be empty");
    if (strlen(arg) > CLI_ID_MAX)
      return usage_error(p, "the ID is longer than %d bytes", CLI_ID_MAX);
    p->o->id = arg;
    break;
  case OPT_OBSERVE: p->o->observe = 1; break;
  }
  return 0;
}

/* ... PATH [--] CMD [ARG...], or --observe PATH */
static int elect_rest(parser_t *p, int argc, char **argv) {
  int rc;
  if (!p->o->observe) return take_path_and_cmd(p, argc, argv);
  if (p->o->id != NULL) return usage_error(p, "an observer takes no --id");
  if ((rc = take_path(p, argc, argv)) != 0) return rc;
  if (optind < argc)
    return usage_error(p, "an observer runs no command ('%s')", argv[optind]);
  return 0;
}

static const syntax_t elect_syntax = {
    (const struct option[]){ARG("id", 'i'), FLAG("observe", OPT_OBSERVE),
                            ARG("grace", OPT_GRACE), HELP_AND_END},
    elect_option, elect_rest, NULL, 0};

/* ---- status ---------------------------------------------------------------- */

static int status_option(parser_t *p, int c, const char *arg) {
  switch (c) {
  case OPT_COUNTER: p->o->status_counter = 1; break;
  case OPT_BARRIER: p->o->status_barrier = 1; break;
  case OPT_SEM: p->o->status_sem = 1; break;
  case OPT_WATCH: p->o->status_watch = 1; break;
  case OPT_STATS: p->o->status_stats = 1; break;
  }
  return 0;
}

/* ... PATH */
static int status_rest(parser_t *p, int argc, char **argv) {
  cli_opts_t *o = p->o;
  int rc;
  if (o->status_counter + o->status_barrier + o->status_sem > 1)
    return usage_error(p, "%s exclude each other",
                       o->status_sem ? "--counter, --barrier and --sem"
                                     : "--counter and --barrier");
  if (p->given[OPT_COUNTER_FORMAT] > 0 && !o->status_counter)
    return usage_error(p, "--format needs --counter (a queue's formats are "
                          "all shown)");
  if ((rc = at_most_once(p, CODES(OPT_COUNT_PATH))) != 0) return rc;
  if (p->given[OPT_COUNT_PATH] > 0 && !o->status_sem)
    return usage_error(p, "--count-path needs --sem");
  if (p->given[OPT_KAZOO] > 0 && !o->status_sem)
    return usage_error(p, "--kazoo needs --sem");
  if (p->given[OPT_KAZOO] > 0 && p->given[OPT_COUNT_PATH] > 0)
    return usage_error(p, "--kazoo and --count-path exclude each other "
                          "(kazoo's layout keeps MAX in PATH's data)");
  if (o->status_watch &&
      o->status_counter + o->status_barrier + o->status_sem > 0)
    return usage_error(p, "--watch shows contenders: not with --counter, "
                          "--barrier or --sem");
  if (p->given['t'] > 0 && !o->status_watch)
    return usage_error(p, "-t needs --watch");
  if (o->status_stats) {
    /* FILE...: counters files, read here; no PATH, no server */
    if (o->status_counter + o->status_barrier + o->status_sem +
            o->status_watch > 0 ||
        p->given[OPT_COUNTER_FORMAT] + p->given[OPT_COUNT_PATH] +
                p->given[OPT_KAZOO] > 0)
      return usage_error(p, "--stats reads counters files: only --json goes "
                            "with it");
    if (o->stats_file != NULL || o->stats)
      return usage_error(p, "status --stats opens no session: no --stats or "
                            "--stats-file before it");
    if (optind >= argc) return usage_error(p, "FILE is missing");
    for (int i = optind; i < argc; i++)
      if (argv[i][0] == '\0') return usage_error(p, "an empty FILE");
    o->files = argv + optind;
    o->n_files = (size_t)(argc - optind);
    return 0;
  }
  if ((rc = take_path(p, argc, argv)) != 0) return rc;
  if (optind < argc)
    return usage_error(p, "unexpected '%s' after PATH", argv[optind]);
  return 0;
}

static const syntax_t status_syntax = {
    (const struct option[]){FLAG("json", OPT_JSON),
                            FLAG("counter", OPT_COUNTER),
                            FLAG("barrier", OPT_BARRIER),
                            FLAG("sem", OPT_SEM),
                            FLAG("watch", OPT_WATCH), ARG("timeout", 't'),
                            FLAG("stats", OPT_STATS),
                            ARG("format", OPT_COUNTER_FORMAT),
                            ARG("count-path", OPT_COUNT_PATH),
                            FLAG("kazoo", OPT_KAZOO), HELP_AND_END},
    status_option, status_rest, NULL, 0};

/* ---- queue ----------------------------------------------------------------- */

static int queue_option(parser_t *p, int c, const char *arg) {
  cli_opts_t *o = p->o;
  switch (c) {
  case OPT_QUEUE_FORMAT:
    if (cli_format_parse(arg, &o->format) != 0)
      return usage_error(p, "--format needs qn, kazoo or locking, not '%s'",
                         arg);
    break;
  case OPT_PRIORITY: return take_int(p, c, arg, "", 0, 999, &o->priority);
  case OPT_MAX_ITEMS:
    return take_long(p, c, arg, "", 0, CLI_MAX_ITEMS_MAX, &o->max_items);
  case OPT_SOFT_MAX:
    return take_long(p, c, arg, "", 0, CLI_MAX_ITEMS_MAX, &o->soft_max);
  case OPT_MAX: return take_int(p, c, arg, "", 1, CLI_QUEUE_BATCH_MAX, &o->max);
  case OPT_NACK_TAIL: o->nack_tail = 1; break;
  case OPT_BATCH: o->batch = 1; break;
  case 'n': o->timeout_ms = 0; break;
  }
  return 0;
}

/* ... PATH [DATA | NAME | [--] CMD [ARG...]] */
static int queue_rest(parser_t *p, int argc, char **argv) {
  cli_opts_t *o = p->o;
  cli_queue_op_t op = o->queue_op;
  int rc;
  if (p->given['n'] + p->given['t'] > 1)
    return usage_error(p, "give one of -n and -t, once");
  if (o->priority >= 0 && o->format == ZKL_QUEUE_QN)
    return usage_error(p, "--priority needs --format kazoo or locking");
  if (op == CLI_QUEUE_CLAIM) {
    /* claims exist only in the LockingQueue layout: implied, and another
     * format is refused rather than silently changed */
    if (p->given[OPT_QUEUE_FORMAT] > 0 && o->format != ZKL_QUEUE_LOCKING)
      return usage_error(p, "claims need --format locking (kazoo's "
                            "LockingQueue), not '%s'",
                         cli_format_name(o->format));
    o->format = ZKL_QUEUE_LOCKING;
    return take_path_and_cmd(p, argc, argv);
  }
  if ((rc = take_path(p, argc, argv)) != 0) return rc;
  const char *after = "PATH";
  if (op == CLI_QUEUE_PUT && !o->batch && optind < argc) {
    o->data = argv[optind++];
    if (strlen(o->data) > ZKL_QUEUE_MAX_BYTES)
      return usage_error(p, "DATA is longer than %d bytes",
                         ZKL_QUEUE_MAX_BYTES);
    after = "DATA";
  } else if (op == CLI_QUEUE_PUT && optind < argc) {
    return usage_error(p, "--batch reads the items from stdin, not '%s'",
                       argv[optind]);
  } else if (op == CLI_QUEUE_RM) {
    /* whether NAME is an item of the format is the library's to say
     * (zkl_queue_remove(): ZKL_EINVAL, a usage error too) */
    if (optind >= argc) return usage_error(p, "NAME is missing");
    o->name = argv[optind++];
    after = "NAME";
  }
  return nothing_after(p, argc, argv, after);
}

static const syntax_t queue_syntax = {
    (const struct option[]){ARG("format", OPT_QUEUE_FORMAT),
                            ARG("priority", OPT_PRIORITY),
                            ARG("max-items", OPT_MAX_ITEMS),
                            FLAG("batch", OPT_BATCH), FLAG("nonblock", 'n'),
                            ARG("timeout", 't'), ARG("max", OPT_MAX),
                            FLAG("json", OPT_JSON),
                            ARG("soft-max", OPT_SOFT_MAX),
                            ARG("grace", OPT_GRACE),
                            FLAG("nack-tail", OPT_NACK_TAIL), HELP_AND_END},
    queue_option, queue_rest, queue_subs, COUNT(queue_subs)};

/* ---- counter ---------------------------------------------------------------- */

/* A number of the command line (WHAT names it in messages: "VALUE",
 * "--initial") in [min, max]; range_of says what the range is.  0, or
 * the usage error. */
static int take_number(parser_t *p, const char *what, const char *arg,
                       int64_t min, int64_t max, const char *range_of,
                       int64_t *out) {
  int rc = cli_parse_int64(arg, min, max, out);
  if (rc == CLI_NUM_OK) return 0;
  if (rc == CLI_NUM_RANGE)
    return usage_error(p, "%s %s is out of range: %s (%" PRId64 "..%" PRId64
                          ")", what, arg, range_of, min, max);
  if (arg[0] == '-' && arg[1] == '-')
    return usage_error(p, "%s needs a decimal integer, not '%s' (options go "
                          "before PATH)", what, arg);
  return usage_error(p, "%s needs a decimal integer, not '%s'", what, arg);
}

/* A value a counter of the format given can hold (--initial, VALUE). */
static int take_value(parser_t *p, const char *what, const char *arg,
                      int64_t *out) {
  int format = p->o->counter_format;
  int64_t min = 0, max = 0;
  cli_counter_range(format, &min, &max); /* a known format */
  const char *name = cli_counter_format_name(format);
  char range_of[64]; /* "an int32 counter holds" */
  snprintf(range_of, sizeof range_of, "%s %s counter holds",
           name[0] == 'i' ? "an" : "a", name);
  return take_number(p, what, arg, min, max, range_of, out);
}

/* A DELTA that can ever apply to a counter of the format: from min-max to
 * max-min, as far as an int64_t goes. */
static int take_delta(parser_t *p, const char *arg, int64_t *out) {
  int format = p->o->counter_format;
  int64_t min = 0, max = 0, dmin, dmax;
  cli_counter_range(format, &min, &max); /* a known format */
  if (__builtin_sub_overflow(max, min, &dmax)) {
    dmin = INT64_MIN;
    dmax = INT64_MAX;
  } else {
    dmin = -dmax;
  }
  char range_of[64];
  snprintf(range_of, sizeof range_of, "no %s counter could take it",
           cli_counter_format_name(format));
  return take_number(p, "DELTA", arg, dmin, dmax, range_of, out);
}

/* cas's VERSION. */
static int take_version(parser_t *p, int argc, char **argv) {
  if (optind >= argc) return usage_error(p, "VERSION is missing");
  const char *v = argv[optind++];
  if (cli_parse_version(v, &p->o->version, &p->o->version_none) != 0)
    return usage_error(p, "VERSION needs a data version (a 32-bit integer, "
                          "as get --json shows it) or 'none', not '%s'", v);
  return 0;
}

static int counter_option(parser_t *p, int c, const char *arg) {
  if (c == OPT_INITIAL) p->initial = arg; /* once the format is known */
  return 0;
}

/* ... PATH [VERSION] [VALUE | DELTA], each number within what a counter of
 * the format can take. */
static int counter_rest(parser_t *p, int argc, char **argv) {
  cli_opts_t *o = p->o;
  cli_counter_op_t op = o->counter_op;
  int rc;
  if ((rc = at_most_once(p, CODES('t'))) != 0) return rc;
  if (p->initial != NULL &&
      (rc = take_value(p, "--initial", p->initial, &o->initial)) != 0)
    return rc;
  if ((rc = take_path(p, argc, argv)) != 0) return rc;
  if (op == CLI_COUNTER_CAS && (rc = take_version(p, argc, argv)) != 0)
    return rc;
  const char *after = "PATH";
  if (op == CLI_COUNTER_SET || op == CLI_COUNTER_CAS) {
    if (optind >= argc) return usage_error(p, "VALUE is missing");
    rc = take_value(p, "VALUE", argv[optind++], &o->number);
    after = "VALUE";
  } else if (op == CLI_COUNTER_ADD) {
    if (optind >= argc) return usage_error(p, "DELTA is missing");
    rc = take_delta(p, argv[optind++], &o->number);
    after = "DELTA";
  }
  return rc != 0 ? rc : nothing_after(p, argc, argv, after);
}

static const syntax_t counter_syntax = {
    (const struct option[]){ARG("format", OPT_COUNTER_FORMAT),
                            ARG("initial", OPT_INITIAL), ARG("timeout", 't'),
                            FLAG("json", OPT_JSON), HELP_AND_END},
    counter_option, counter_rest, counter_subs, COUNT(counter_subs)};

/* ---- barrier ---------------------------------------------------------------- */

static int barrier_option(parser_t *p, int c, const char *arg) {
  switch (c) {
  case OPT_LEAVE_TIMEOUT:
    return take_seconds(p, c, arg, &p->o->leave_timeout_ms);
  case 'n':
    return take_int(p, c, arg, "MEMBERS, ", 1, CLI_MEMBERS_MAX,
                    &p->o->members);
  }
  return 0;
}

/* ... PATH [[--] CMD [ARG...]] */
static int barrier_rest(parser_t *p, int argc, char **argv) {
  int rc;
  if ((rc = at_most_once(p, CODES('t', OPT_LEAVE_TIMEOUT, 'n'))) != 0)
    return rc;
  if (p->o->barrier_op != CLI_BARRIER_ENTER) {
    if ((rc = take_path(p, argc, argv)) != 0) return rc;
    return nothing_after(p, argc, argv, "PATH");
  }
  if (p->given['n'] == 0)
    return usage_error(p, "-n MEMBERS is missing (how many members open the "
                          "barrier)");
  if (p->given[OPT_LEAVE_TIMEOUT] == 0)
    p->o->leave_timeout_ms = p->o->timeout_ms;
  return take_checked_cmd(p, argc, argv);
}

static const syntax_t barrier_syntax = {
    (const struct option[]){ARG("timeout", 't'), ARG("members", 'n'),
                            ARG("leave-timeout", OPT_LEAVE_TIMEOUT),
                            ARG("conflict-exit-code", 'E'),
                            ARG("grace", OPT_GRACE), HELP_AND_END},
    barrier_option, barrier_rest, barrier_subs, COUNT(barrier_subs)};

/* ---- sem ------------------------------------------------------------------- */

static int sem_option(parser_t *p, int c, const char *arg) {
  switch (c) {
  case 'n':
    return take_int(p, c, arg, "MAX, ", 1, CLI_SEM_MAX_MAX, &p->o->sem_max);
  case OPT_QTY: return take_int(p, c, arg, "", 1, ZKL_SEM_QTY_MAX, &p->o->qty);
  }
  return 0;
}

/* ... PATH [--] CMD [ARG...].  What the server alone can tell (the shared
 * count's MAX, or with --kazoo the one stored at PATH, against -n and
 * --qty) is checked when the leases are taken (cli/sem.c). */
static int sem_rest(parser_t *p, int argc, char **argv) {
  cli_opts_t *o = p->o;
  int rc;
  if ((rc = at_most_once(p, CODES('t', 'n', OPT_QTY, OPT_COUNT_PATH))) != 0)
    return rc;
  if (p->given[OPT_KAZOO] > 0 && p->given[OPT_COUNT_PATH] > 0)
    return usage_error(p, "--kazoo and --count-path exclude each other "
                          "(kazoo's layout keeps MAX in PATH's data)");
  if (p->given['n'] == 0 && p->given[OPT_COUNT_PATH] == 0 &&
      p->given[OPT_KAZOO] == 0)
    return usage_error(p, "-n MAX is missing (how many leases there are; or "
                          "--count-path, where they are counted), and no "
                          "--kazoo (which takes the one stored at PATH)");
  if (p->given['n'] > 0 && o->qty > o->sem_max)
    return usage_error(p, "--qty %d is more than -n %d: it would never fit",
                       o->qty, o->sem_max);
  return take_checked_cmd(p, argc, argv);
}

static const syntax_t sem_syntax = {
    (const struct option[]){ARG("max", 'n'), ARG("qty", OPT_QTY),
                            ARG("count-path", OPT_COUNT_PATH),
                            FLAG("kazoo", OPT_KAZOO), ARG("timeout", 't'),
                            ARG("conflict-exit-code", 'E'),
                            ARG("grace", OPT_GRACE), HELP_AND_END},
    sem_option, sem_rest, NULL, 0};

/* ---- the tool's options, then COMMAND --------------------------------------- */

static int take_ms(parser_t *p, const char *opt, const char *arg,
                   int32_t *out) {
  long v;
  if (cli_parse_int(arg, 1, INT32_MAX, &v) != 0)
    return usage_error(p, "%s needs milliseconds > 0, not '%s'", opt, arg);
  *out = (int32_t)v;
  return 0;
}

static int global_option(parser_t *p, int c, const char *arg) {
  cli_opts_t *o = p->o;
  switch (c) {
  case 's':
    if (arg[0] == '\0') return usage_error(p, "-s needs HOSTS");
    o->hosts = arg;
    break;
  case OPT_SESSION_TIMEOUT:
    return take_ms(p, "--session-timeout", arg, &o->session_timeout_ms);
  case OPT_CONNECT_TIMEOUT:
    return take_ms(p, "--connect-timeout", arg, &o->connect_timeout_ms);
  case OPT_AUTH:
    if (arg[0] == ':' || strchr(arg, ':') == NULL)
      return usage_error(p, "--auth needs USER:PASS");
    o->auth = arg;
    break;
  case 'v': o->verbose++; break;
  case OPT_STATS: o->stats = 1; break;
  case OPT_STATS_FILE:
    if (arg[0] == '\0') return usage_error(p, "--stats-file needs FILE");
    o->stats_file = arg;
    break;
  case 'V': o->action = CLI_VERSION; break;
  }
  return 0;
}

static int parse_command(parser_t *p, int argc, char **argv) {
  static const struct {
    const char *name;
    cli_command_t command;
    const syntax_t *syntax;
  } commands[] = {{"lock", CLI_CMD_LOCK, &lock_syntax},
                  {"elect", CLI_CMD_ELECT, &elect_syntax},
                  {"status", CLI_CMD_STATUS, &status_syntax},
                  {"queue", CLI_CMD_QUEUE, &queue_syntax},
                  {"counter", CLI_CMD_COUNTER, &counter_syntax},
                  {"barrier", CLI_CMD_BARRIER, &barrier_syntax},
                  {"sem", CLI_CMD_SEM, &sem_syntax}};
  if (optind >= argc) return usage_error(p, "COMMAND is missing");
  const char *name = argv[optind];
  for (size_t i = 0; i < COUNT(commands); i++) {
    if (strcmp(name, commands[i].name) != 0) continue;
    const syntax_t *syn = commands[i].syntax;
    p->o->command = commands[i].command;
    shift(&argc, &argv);
    return syn->subs != NULL ? parse_subcommand(p, syn, argc, argv)
                             : parse_syntax(p, syn, argc, argv);
  }
  return usage_error(p, "unknown command '%s'", name);
}

static const syntax_t global_syntax = {
    (const struct option[]){ARG("servers", 's'),
                            ARG("session-timeout", OPT_SESSION_TIMEOUT),
                            ARG("connect-timeout", OPT_CONNECT_TIMEOUT),
                            ARG("auth", OPT_AUTH), FLAG("verbose", 'v'),
                            FLAG("stats", OPT_STATS),
                            ARG("stats-file", OPT_STATS_FILE),
                            FLAG("help", 'h'), FLAG("version", 'V'),
                            {NULL, 0, NULL, 0}},
    global_option, parse_command, NULL, 0};

static void defaults(cli_opts_t *o, const char *env_servers) {
  memset(o, 0, sizeof *o);
  o->action = CLI_RUN;
  o->hosts = env_servers != NULL && env_servers[0] != '\0' ? env_servers
                                                           : CLI_DEFAULT_HOSTS;
  o->session_timeout_ms = CLI_DEFAULT_SESSION_TIMEOUT_MS;
  o->connect_timeout_ms = CLI_DEFAULT_CONNECT_TIMEOUT_MS;
  o->grace_ms = CLI_DEFAULT_GRACE_MS;
  o->mode = CLI_LOCK_EXCLUSIVE;
  o->timeout_ms = -1;
  o->conflict_exit = 1;
  o->format = ZKL_QUEUE_QN;
  o->priority = -1;
  o->max_items = -1;
  o->counter_format = ZKL_COUNTER_INT32;
  o->leave_timeout_ms = -1;
  o->qty = 1;
  o->sem_format = ZKL_SEM_CURATOR;
}

int cli_opts_parse(cli_opts_t *o, int argc, char **argv,
                   const char *env_servers, char *err, size_t errlen) {
  parser_t p = {.o = o, .err = err, .errlen = errlen};
  defaults(o, env_servers);
  if (errlen > 0) err[0] = '\0';
  getopt_reset();
  return parse_syntax(&p, &global_syntax, argc, argv);
}
