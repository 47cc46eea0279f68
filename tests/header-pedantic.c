/* Compiled with -std=c99/c11 -pedantic -Werror (and as C++): the public
 * header must stand alone, without <zookeeper/zookeeper.h>. */
#include <zkl.h>

int main(void) {
  zkl_session_opts_t so;
  zkl_mutex_opts_t mo;
  zkl_session_opts_init(&so);
  zkl_mutex_opts_init(&mo);
  return zkl_strerror(ZKL_EINVAL)[0] == '\0';
}
