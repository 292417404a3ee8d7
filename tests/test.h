/* Minimal test harness shared by every test program.
 *
 *   TEST(name) { CHECK(cond); CHECK_CLOSE(a, b, rtol); CHECK_EQ_INT(a, b); }
 *   int main(void) { RUN(name); ...; return test_summary("module"); }
 *
 * Every failed check prints file:line and the values; the summary prints
 * "<module>: N passed, M failed" and the exit code is nonzero when anything failed.
 * MBLIN_TEST_TIMES=1 in the environment prints each case's CPU seconds to stderr (which cases make a
 * test program slow: tests/README.md, "Keeping make test short"). */
#ifndef MBLIN_TEST_H
#define MBLIN_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int test_checks_failed_;
static int test_cases_passed_, test_cases_failed_;

#define TEST(name) static void name(void)

/* A case that loops over models prints each model's CPU seconds the same way (MBLIN_TEST_TIMES=1):
 * clock_t t = clock(); ...; test_item_time(path, t); */
static inline void test_item_time(const char *item, clock_t start)
{
    if (getenv("MBLIN_TEST_TIMES"))
        fprintf(stderr, "time:   %s %.2f s\n", item, (double)(clock() - start) / CLOCKS_PER_SEC);
}

/* 1 in the sanitized build (tests/CMakeLists.txt sets MBLIN_SANITIZED=1 for every test there, where
 * everything runs about ten times slower): the loops over every example check fewer cases there,
 * each such choice written where it is made (tests/README.md, "Keeping make test short") */
static inline int test_sanitized(void)
{
    const char *s = getenv("MBLIN_SANITIZED");
    return s && s[0] == '1';
}

#define RUN(name)                                                                   \
    do {                                                                            \
        int before_ = test_checks_failed_;                                          \
        clock_t start_ = clock();                                                   \
        name();                                                                     \
        if (getenv("MBLIN_TEST_TIMES"))                                             \
            fprintf(stderr, "time: %s %.2f s\n", #name,                             \
                    (double)(clock() - start_) / CLOCKS_PER_SEC);                   \
        if (test_checks_failed_ == before_) {                                       \
            test_cases_passed_++;                                                   \
        } else {                                                                    \
            test_cases_failed_++;                                                   \
            fprintf(stderr, "FAILED: %s\n", #name);                                 \
        }                                                                           \
    } while (0)

#define CHECK(cond)                                                                 \
    do {                                                                            \
        if (!(cond)) {                                                              \
            test_checks_failed_++;                                                  \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);\
        }                                                                           \
    } while (0)

#define CHECK_MSG(cond, ...)                                                        \
    do {                                                                            \
        if (!(cond)) {                                                              \
            test_checks_failed_++;                                                  \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);\
            fprintf(stderr, __VA_ARGS__);                                           \
            fputc('\n', stderr);                                                    \
        }                                                                           \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                          \
    do {                                                                            \
        long long a_ = (long long)(a), b_ = (long long)(b);                         \
        if (a_ != b_) {                                                             \
            test_checks_failed_++;                                                  \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__,     \
                    __LINE__, #a, #b, a_, b_);                                      \
        }                                                                           \
    } while (0)

/* |a - b| <= tol * max(1, |b|): relative for large values, absolute near zero. */
#define CHECK_CLOSE(a, b, tol)                                                      \
    do {                                                                            \
        double a_ = (double)(a), b_ = (double)(b), t_ = (double)(tol);              \
        double s_ = fabs(b_) > 1.0 ? fabs(b_) : 1.0;                                \
        if (!(fabs(a_ - b_) <= t_ * s_)) {                                          \
            test_checks_failed_++;                                                  \
            fprintf(stderr, "%s:%d: %s ~ %s failed: %.17g vs %.17g (tol %g)\n",     \
                    __FILE__, __LINE__, #a, #b, a_, b_, t_);                        \
        }                                                                           \
    } while (0)

/* strictly relative: |a - b| <= tol * |b| */
#define CHECK_REL(a, b, tol)                                                        \
    do {                                                                            \
        double a_ = (double)(a), b_ = (double)(b), t_ = (double)(tol);              \
        if (!(fabs(a_ - b_) <= t_ * fabs(b_))) {                                    \
            test_checks_failed_++;                                                  \
            fprintf(stderr, "%s:%d: %s ~rel %s failed: %.17g vs %.17g (rtol %g)\n", \
                    __FILE__, __LINE__, #a, #b, a_, b_, t_);                        \
        }                                                                           \
    } while (0)

static inline int test_summary(const char *module)
{
    printf("%s: %d passed, %d failed\n", module, test_cases_passed_, test_cases_failed_);
    return test_cases_failed_ ? 1 : 0;
}

/* A mkdtemp/mkstemp template "<$TMPDIR, else /tmp>/<prefix>XXXXXX" in buf: 0, or -1 when it does not
 * fit (buf keeps nothing usable then). */
static inline int test_tmp_template(char *buf, size_t size, const char *prefix)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    int n = snprintf(buf, size, "%s/%sXXXXXX", dir, prefix);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* A deterministic uniform number in [-1, 1) from the state *s (a linear congruential step; the
 * tests' random points, reproducible on every platform). */
static inline double test_urand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return ((*s >> 8) & 0xffffff) / (double)0x1000000 * 2.0 - 1.0;
}

/* The whole file at path as a NUL-terminated string (malloc'd; NULL when it cannot be read). */
static inline char *test_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *s = NULL;
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (s = malloc((size_t)n + 1)) && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s) s[n] = '\0';
    fclose(f);
    return s;
}

/* s + t += a b to about eps^2 relative (the product's rounding error from fma, the sum's from
 * TwoSum: Ogita, Rump and Oishi's Dot2, as src/eig/eig.c): references more accurate than the
 * double precision results they check, under every BLAS kernel */
static inline void test_acc2(double a, double b, double *s, double *t)
{
    double p = a * b, e = fma(a, b, -p), x = *s + p, z = x - *s;
    *t += (*s - (x - z)) + (p - z) + e;
    *s = x;
}

/* x^T A x (A n x n, column-major, its upper triangle mirrored as dsygvd reads it), every product
 * and sum to about eps^2 (test_acc2) */
static inline double test_quad2(int n, const double *A, const double *x)
{
    double s = 0, t = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i <= j; i++) {
            double a = A[i + (size_t)n * j];
            if (a == 0) continue;
            double p = x[i] * x[j], pe = fma(x[i], x[j], -p);
            a *= i == j ? 1 : 2; /* exact */
            test_acc2(a, p, &s, &t);
            test_acc2(a, pe, &s, &t);
        }
    return s + t;
}

#endif
