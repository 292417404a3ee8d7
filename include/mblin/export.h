/* mblin: which functions the shared library exports.
 *
 * The library is compiled with -fvisibility=hidden: a function is exported from libmblin.so only
 * when its declaration in include/mblin/ carries MBL_API. Everything else (the modules' internal
 * functions, whatever their name) stays inside the library, so the public API is exactly what these
 * headers declare (tests/layering/check.py holds that). The static library keeps every symbol for
 * linking; the attribute changes nothing for its users. */
#ifndef MBLIN_EXPORT_H
#define MBLIN_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define MBL_API __attribute__((visibility("default")))
#else
#define MBL_API
#endif

#endif
