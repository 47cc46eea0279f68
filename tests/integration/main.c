/* tests/integration/main.c - runs every integration suite against the
 * ZooKeeper named by $ZKL_TEST_HOSTS (tests/with-zookeeper sets it). */
#include <stdio.h>
#include <stdlib.h>
#include <zookeeper/zookeeper.h>

#include "itest.h"

int main(void) {
  zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR); /* the peers' raw handles */
  const char *hosts = getenv("ZKL_TEST_HOSTS");
  if (hosts == NULL || hosts[0] == '\0') {
    fprintf(stderr, "ZKL_TEST_HOSTS is not set: run through "
                    "tests/with-zookeeper\n");
    return 99; /* a hard error for automake, never a skip */
  }
  printf("integration tests against ZooKeeper at %s\n", hosts);
  SRunner *sr = srunner_create(session_suite());
  srunner_add_suite(sr, mutex_suite());
  srunner_add_suite(sr, exclusion_suite());
  srunner_add_suite(sr, kazoo_suite());
  srunner_add_suite(sr, rwlock_suite());
  srunner_add_suite(sr, election_suite());
  srunner_add_suite(sr, faults_suite());
  srunner_add_suite(sr, proxy_suite());
  srunner_add_suite(sr, inspect_suite());
  srunner_add_suite(sr, async_suite());
  srunner_add_suite(sr, async_random_suite());
  srunner_add_suite(sr, queue_suite());
  srunner_add_suite(sr, queue_interop_suite());
  srunner_add_suite(sr, queue_random_suite());
  srunner_add_suite(sr, counter_suite());
  srunner_add_suite(sr, counter_interop_suite());
  srunner_add_suite(sr, barrier_suite());
  srunner_add_suite(sr, barrier_interop_suite());
  srunner_add_suite(sr, semaphore_suite());
  srunner_add_suite(sr, semaphore_interop_suite());
  srunner_add_suite(sr, multilock_suite());
  srunner_add_suite(sr, multilock_interop_suite());
  srunner_add_suite(sr, curator_interop_suite());
  srunner_add_suite(sr, observe_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
