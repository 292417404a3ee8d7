/* Internal to src/fe: what the readers of FE files share (part.c): lines of bounded length, the
 * numbers of a field, and the triplets of one matrix as read, assembled into both triangles. */
#ifndef MBLIN_FE_FE_READ_H
#define MBLIN_FE_FE_READ_H

#include <stdio.h>

#include "fe/fe.h"

/* *INCLUDE nested at most this deep (a deck that includes itself ends here) */
#define FE_INCLUDE_DEPTH 16

/* One text file read line by line: buf holds the line without its end ("\n" or "\r\n"). */
typedef struct fe_lines {
    FILE *f;
    const char *path;
    long line;                /* the number of the line in buf (1-based) */
    long size;                /* the file's size in bytes */
    char buf[FE_LINE_MAX + 3];
} fe_lines;

/* Open path (an error names it: "cannot open FILE: reason"); what says which file (".dof", ...). */
int fe_lines_open(fe_lines *in, const char *path, const char *what, mbl_status *st);
/* The next line (1), the end (0), or an error (< 0): "FILE:LINE: a line longer than 1024 characters". */
int fe_lines_next(fe_lines *in, mbl_status *st);
void fe_lines_close(fe_lines *in);

/* A whole number (1, the value in *v) or not (0): optional sign, digits, nothing else. */
int fe_parse_long(const char *s, long *v);
/* A finite number of C's strtod syntax filling s (1), or not (0). */
int fe_parse_double(const char *s, double *v);
/* the index of v in the ascending a[0..n-1] (-1: none) */
int fe_search(const int *a, int n, long v);
/* s and t equal without case */
int fe_same_name(const char *s, const char *t);

/* The entries of one matrix as read: row i, column j (0-based rows of the part), value x, and the
 * line that gave each (messages). At most cap entries: the bound decided before reading. */
typedef struct fe_trip {
    long n, cap, room;
    int *i, *j;
    double *x;
    long *line;
} fe_trip;

void fe_trip_init(fe_trip *t, long cap);
/* append one entry; an error past cap names path:line */
int fe_trip_add(fe_trip *t, int i, int j, double x, long line, const char *path, mbl_status *st);
void fe_trip_free(fe_trip *t);
/* The ndof x ndof matrix of the entries, both triangles stored: square = 0, one triangle given
 * (a side mixed: an error at the line of the first entry on the other side); square = 1, both
 * given (a value that differs from its transpose's: an error at its line). A repeated entry: an
 * error at its second line. The entries are freed. */
int fe_trip_csc(fe_trip *t, int ndof, int square, const char *path, mbla_csc **out, mbl_status *st);

#endif
