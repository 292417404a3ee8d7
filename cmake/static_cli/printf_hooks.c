/* The static command-line tool declines libquadmath's printf hooks (linked with
 * -Wl,--wrap= for the three registration calls, cmake/static_cli.cmake).
 *
 * libgfortran's formatted WRITE refers to quadmath_snprintf, which brings libquadmath's
 * quadmath-printf.o into the static tool, and with it a load-time constructor that registers a
 * printf type, the 'Q' modifier and handlers for %f %e %g %a (printf("%Qf", __float128)). Once
 * any printf hook is registered, glibc sends every printf-family call of the process down its
 * slow positional path (vfprintf-internal.c: printf_positional): 15 % of the instructions of
 * loading a 300-loop mechanism four-bar (its text items are written with snprintf) and of writing
 * the JSON report. mblin never prints __float128 (neither do ARPACK or LAPACK), and
 * quadmath_snprintf itself does not use the hooks, so the registrations are refused: each
 * returns -1, glibc's "not registered", the constructor stops at the first, and printf keeps
 * glibc's fast path. Only libquadmath's object refers to these functions in the tool (the
 * linker's --wrap renames undefined references in the linked objects only). */
#include <printf.h>

int __wrap_register_printf_type(printf_va_arg_function *fct);
int __wrap_register_printf_modifier(const wchar_t *str);
int __wrap_register_printf_specifier(int spec, printf_function *converter, printf_arginfo_size_function *arginfo);

int __wrap_register_printf_type(printf_va_arg_function *fct)
{
    (void)fct;
    return -1;
}

int __wrap_register_printf_modifier(const wchar_t *str)
{
    (void)str;
    return -1;
}

int __wrap_register_printf_specifier(int spec, printf_function *converter, printf_arginfo_size_function *arginfo)
{
    (void)spec, (void)converter, (void)arginfo;
    return -1;
}
