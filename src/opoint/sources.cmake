list(APPEND MBLIN_SOURCES
  src/opoint/opoint.c
  src/opoint/constraint_qr.c
  src/opoint/solve.c
  src/opoint/dense_step.c
  src/opoint/sub_jac.c
  src/opoint/newton_rate.c
  src/opoint/given_vel.c
  src/opoint/trim.c
  src/opoint/steady_frames.c
  src/opoint/homotopy.c
  src/opoint/arclength.c
  src/opoint/warm.c
)
