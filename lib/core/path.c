/* lib/core/path.c - which strings may name a lock root. */
#include <string.h>

#include "core/core.h"

/* Length of the UTF-8 sequence starting at s, or 0 if it is not valid
 * (overlong forms, surrogates and code points past U+10FFFF refused). */
static size_t utf8_len(const unsigned char *s) {
  if (s[0] < 0x80) return 1;
  size_t n;
  unsigned cp;
  if ((s[0] & 0xe0) == 0xc0) { n = 2; cp = s[0] & 0x1f; }
  else if ((s[0] & 0xf0) == 0xe0) { n = 3; cp = s[0] & 0x0f; }
  else if ((s[0] & 0xf8) == 0xf0) { n = 4; cp = s[0] & 0x07; }
  else return 0;
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3f);
  }
  static const unsigned min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_cp[n] || cp > 0x10ffff) return 0;
  /* ZooKeeper's PathUtils refuses C1 controls, U+D800..U+F8FF (which
   * covers the UTF-16 surrogates, so every code point past U+FFFF) and
   * U+FFF0..U+FFFF. */
  if (cp >= 0x7f && cp <= 0x9f) return 0;
  if (cp >= 0xd800 && cp <= 0xf8ff) return 0;
  if (cp >= 0xfff0) return 0;
  return n;
}

int zkl_path_check(const char *path) {
  zkl__clear_error();
  return zkl__path_validate(path);
}

int zkl__path_validate(const char *path) {
  if (path == NULL) return zkl__fail(ZKL_EINVAL, "path is NULL");
  size_t len = strlen(path);
  if (len == 0) return zkl__fail(ZKL_EINVAL, "path is empty");
  if (path[0] != '/')
    return zkl__fail(ZKL_EINVAL, "path must be absolute (start with '/')");
  if (len == 1)
    return zkl__fail(ZKL_EINVAL, "path must not be the root \"/\"");
  if (len > ZKL__PATH_MAX)
    return zkl__fail(ZKL_EINVAL, "path is %zu bytes, longer than %d", len,
                     ZKL__PATH_MAX);
  if (path[len - 1] == '/')
    return zkl__fail(ZKL_EINVAL, "path must not end with '/'");
  if (strcmp(path, "/zookeeper") == 0 || strncmp(path, "/zookeeper/", 11) == 0)
    return zkl__fail(ZKL_EINVAL, "/zookeeper is reserved by the server");
  const unsigned char *p = (const unsigned char *)path;
  for (size_t i = 0; i < len;) {
    if (p[i] == '/') {
      if (p[i + 1] == '/')
        return zkl__fail(ZKL_EINVAL, "path has an empty component (\"//\")");
      const char *c = path + i + 1;
      if ((c[0] == '.' && (c[1] == '/' || c[1] == '\0')) ||
          (c[0] == '.' && c[1] == '.' && (c[2] == '/' || c[2] == '\0')))
        return zkl__fail(ZKL_EINVAL, "path has a '.' or '..' component");
    }
    if (p[i] < 0x20 || p[i] == 0x7f)
      return zkl__fail(ZKL_EINVAL, "path has a control character at byte %zu",
                       i);
    size_t n = utf8_len(p + i);
    if (n == 0)
      return zkl__fail(ZKL_EINVAL, "path is not valid UTF-8 at byte %zu", i);
    i += n;
  }
  return 0;
}
