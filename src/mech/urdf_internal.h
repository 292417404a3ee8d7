/* What the files of the URDF import share (urdf_xml.c: reading the XML; urdf.c: building the
 * mechanism text; urdf_yaml.c: `model: urdf`). See urdf.h. */
#ifndef MBLIN_MECH_URDF_INTERNAL_H
#define MBLIN_MECH_URDF_INTERNAL_H

#include <stddef.h>

#include <libxml/tree.h>

#include "mech/urdf.h"

#define LINE_OF(n) ((int)xmlGetLineNo(n))

enum { UJ_FIXED, UJ_REVOLUTE, UJ_CONTINUOUS, UJ_PRISMATIC, UJ_FLOATING, UJ_PLANAR };

typedef struct ulink {
    char *name; /* sanitized */
    const char *raw;
    int line;
    double m, c[3], I[9]; /* inertial: mass, cm and inertia about the cm in link axes */
    int parent_joint;     /* -1: none (the root) */
    int body;             /* the link whose body carries it (itself unless lumped), -1 = ground */
    double T[12];         /* its frame in that body's frame: R (column-major 9) and p (3) */
    double W[12];         /* its frame in the world at the configuration */
} ulink;

typedef struct ujoint {
    char *name;
    const char *raw;
    int line, type, parent, child;
    double O[12]; /* origin: child frame in parent frame at q = 0 */
    double axis[3];
    double damping;
    double q;    /* configuration (1-dof joints) */
    double hold; /* its effort at the configuration (0, or the gravity compensation when held) */
} ujoint;

typedef struct ubuf {
    char *s;
    size_t n, cap;
    int oom;
} ubuf;

/* printf appended to b (b->oom set on failure) */
void mech_urdf_printf(ubuf *b, const char *f, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

typedef struct ureader {
    const char *file;
    mbl_status *st;
    xmlDoc *doc;
    xmlNode *root; /* <robot> */
    ulink *L;
    int nl;
    ujoint *J;
    int nj;
} ureader;

/* the error "file:line: what" */
int mech_urdf_error(ureader *r, int line, const char *f, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* the index of the link whose URDF name is raw, or -1 */
int mech_urdf_find_link(ureader *r, const char *raw);

/* Read the URDF text into r (r->file and r->st set by the caller): the robot's name (sanitized, in
 * *robot, freed by the caller with mbl_free), its links and joints checked to be a tree, whose
 * root link is *rootl. Whatever r holds is freed by mech_urdf_free, also after an error. */
int mech_urdf_read(ureader *r, const char *xml, size_t len, char **robot, int *rootl);
void mech_urdf_free(ureader *r);

#endif
