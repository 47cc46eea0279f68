/* zkl/version.h - version numbers and the export macro. */
#ifndef ZKL_VERSION_H
#define ZKL_VERSION_H

#define ZKL_VERSION_MAJOR 0
#define ZKL_VERSION_MINOR 1
#define ZKL_VERSION_PATCH 0
#define ZKL_VERSION_STRING "0.1.0"

#if defined(__GNUC__) && __GNUC__ >= 4
# define ZKL_EXTERN __attribute__((visibility("default")))
#else
# define ZKL_EXTERN
#endif

#ifdef __cplusplus
extern "C" {
#endif
/* The library's version string at run time (may differ from the header's
 * ZKL_VERSION_STRING when linked against another build).  Thread-safe. */
ZKL_EXTERN const char *zkl_version(void);
#ifdef __cplusplus
}
#endif

#endif /* ZKL_VERSION_H */
