/* URDF import: a robot description (links, joints, inertials) becomes a `model: mechanism` text in
 * joint coordinates (docs/mechanism-reference.md, "URDF robots"), which the mechanism reader compiles like
 * any other. The XML is read by libxml2 (Debian libxml2-dev): liburdfdom, the ROS parser, is a
 * C++ library with no C interface; libxml2 is a maintained C parser and the URDF rules it needs
 * are few (DESIGN.md sec. 9): rpy is fixed-axis roll-pitch-yaw, R = Rz(y) Ry(p) Rx(r); an omitted
 * axis is (1 0 0); the inertial origin may be rotated; links joined by fixed joints are lumped;
 * the root link is the ground (welded to the world); visuals, collisions, transmissions and limits
 * are ignored. Joint coordinates, efforts and joint-position outputs follow the order of the
 * movable joints in the file. Internal to the library. */
#ifndef MBLIN_MECH_URDF_H
#define MBLIN_MECH_URDF_H

#include <stddef.h>

#include "mblin/model.h"
#include "mblin/status.h"

typedef struct mbl_urdf_opts {
    int absolute;             /* 1: absolute coordinates (the twin); 0: relative (the default) */
    int tree_symbolic;        /* 1: `tree_dynamics: symbolic` (docs/mechanism-reference.md); 0: recursive (the default) */
    double g[3];              /* gravity, global (default 0 0 -9.81) */
    const char *end_effector; /* link whose frame is the end-effector pose output; NULL: the last link */
    const char *linearize;    /* YAML flow text of a `linearize:` mapping, or NULL ({at: given}) */
    const char *name;         /* the model's name, or NULL (the robot's) */
    const char *const *hold;  /* joints held at the configuration by their efforts (gravity
                                 compensation: u = -Q_gravity), NULL-terminated; "all" for every one */
} mbl_urdf_opts;

void mech_urdf_opts_default(mbl_urdf_opts *o);

/* Does this text look like XML (its first non-blank character is '<')? */
int mech_urdf_is_xml(const char *text, size_t len);

/* Translate the URDF text (file names its positions in messages) into the text of a mechanism
 * (*yaml, allocated with mbl_malloc; the caller frees it with mbl_free). Each movable joint gets
 * a parameter of its name (the configuration, 0 unless --set), an input u_<joint> (its effort),
 * an output q_<joint> (its position); the --set values (sets, nsets) place the bodies. Errors:
 * "file:line: what" naming the link or joint. */
int mech_urdf_to_mech(const char *xml, size_t len, const char *file, const mbl_urdf_opts *o, const mbl_setting *sets,
                      int nsets, char **yaml, mbl_status *st);

/* `model: urdf` (the root mapping of a YAML file): keys file (the URDF, relative to the YAML
 * file's directory), name, coordinates (relative | absolute), gravity, end_effector, linearize
 * (passed on). Produces the mechanism text as mech_urdf_to_mech. */
struct yaml_document_s;
struct yaml_node_s;
int mech_urdf_from_yaml(struct yaml_document_s *doc, const struct yaml_node_s *root, const char *file,
                        const mbl_setting *sets, int nsets, char **yaml, mbl_status *st);

#endif
