/* tests/unit/main.c - runs every no-server unit suite.
 *
 * Exit status: 0 when every test passed, 1 otherwise.  Check's own
 * environment variables apply (CK_FORK=no for valgrind, CK_RUN_SUITE,
 * CK_RUN_CASE, CK_DEFAULT_TIMEOUT, CK_VERBOSITY). */
#include <stdlib.h>

#include "suites.h"

int main(void) {
  SRunner *sr = srunner_create(names_suite());
  srunner_add_suite(sr, path_suite());
  srunner_add_suite(sr, errors_suite());
  srunner_add_suite(sr, args_suite());
  srunner_add_suite(sr, drivers_suite());
  srunner_add_suite(sr, inspect_suite());
  srunner_add_suite(sr, log_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
