mblin_add_test(test_mechanism ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_mechanism.c)
mblin_add_test(test_mech_checks ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_mech_checks.c)
mblin_add_test(test_beam ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_beam.c)
mblin_add_test(test_flex ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_flex.c)
mblin_add_test(test_tree ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_tree.c)
mblin_add_test(test_relative ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_relative.c)
mblin_add_test(test_rtree ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_rtree.c)
# the compiler's plain formatting (mech_snprintf) against snprintf at every buffer size
mblin_add_test(test_mech_fmt ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_mech_fmt.c)
if(MBLIN_PYTHON3_NUMPY)
  add_test(NAME test_fourbar_eq412 COMMAND ${MBLIN_PYTHON3_NUMPY} ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_fourbar_eq412.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
mblin_add_test(test_vtrans ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_vtrans.c)
# the open tree's stiffness K_l of a relative-coordinate mechanism (issue 70, item 7; source 003
# Sec. 3.2.2): linearize -o writes K_l.mtx, Eq. 3.37's and Eq. 4.18's numbers
if(MBLIN_PYTHON3_NUMPY)
  add_test(NAME test_open_tree_stiffness COMMAND ${MBLIN_PYTHON3_NUMPY} ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_open_tree_stiffness.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
mblin_add_test(test_spinning_top ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_spinning_top.c)
# mechanism parameters changed in place (sweeps) against a fresh load, every example and parameter
mblin_add_test(test_mech_param_inplace ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_mech_param_inplace.c)
mblin_add_test(test_flex_sens ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_flex_sens.c)
mblin_add_test(test_beam3 ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_beam3.c)
# the saddle-point order of KLU keeps the fill near AMD's estimate (issue 31, item 3)
mblin_add_test(test_beam3_fill ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_beam3_fill.c)
mblin_add_test(test_hostile_files ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_hostile_files.c)
mblin_add_test(test_urdf_encoding ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_urdf_encoding.c)
# a spatial revolute driven past half a turn (issue 30, item 2): closed form at t = 0 ... 2, absolute and relative
find_program(PYTHON3 python3)
if(PYTHON3)
  add_test(NAME test_driven_turns COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_driven_turns.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# body coordinates' names in relative coordinates (issue 30, item 13): states and outputs agree with absolute
if(PYTHON3)
  add_test(NAME test_pose_names COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_pose_names.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# --mem-budget bounds building a model (issue 30, item 17): beam elements refused with the estimate
if(PYTHON3)
  add_test(NAME test_build_budget COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_build_budget.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# geometric stiffness of planar beam bodies (issue 32): hanging and spinning beams against a numpy FE reference
if(MBLIN_PYTHON3_NUMPY)
  add_test(NAME test_geometric_stiffness COMMAND ${MBLIN_PYTHON3_NUMPY} ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_geometric_stiffness.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# at: steady of flexible bodies whose frames circle the axis and of spatial beams (issue 32, item 3)
if(MBLIN_PYTHON3_NUMPY)
  add_test(NAME test_steady_spin COMMAND ${MBLIN_PYTHON3_NUMPY} ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_steady_spin.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# at: steady with rigid spatial bodies that turn: a spatial blade on a rigid hub (driven or free), a
# lone spinning rigid body (issue 32, item 3)
if(MBLIN_PYTHON3_NUMPY)
  add_test(NAME test_steady_rigid_hub COMMAND ${MBLIN_PYTHON3_NUMPY} ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_steady_rigid_hub.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# geometric stiffness of modal bodies (issue 32, item 4): matrices per unit load from a numpy FE
# cantilever, hanging, spinning, carrying a pendulum and under a tip load, against the FE reference and
# the beam body (Matrix Market files: the build with CHOLMOD)
if(MBLIN_PYTHON3_NUMPY AND MBLIN_WITH_GPL)
  add_test(NAME test_modal_geometric COMMAND ${MBLIN_PYTHON3_NUMPY} ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_modal_geometric.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# initial velocities of beam and modal bodies (issue 32, item 3): a blade given its angular velocity
# against the same blade driven through its hub
if(MBLIN_PYTHON3_NUMPY AND MBLIN_WITH_GPL)
  add_test(NAME test_flex_velocity COMMAND ${MBLIN_PYTHON3_NUMPY} ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_flex_velocity.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# geometric stiffness of spatial beam bodies (issue 32): a hanging cantilever in both bending planes
# and a blade on a turning hub (flapwise and lead-lag, hub radius 0 and 0.2) against a numpy FE
# reference and Southwell's coefficients
if(MBLIN_PYTHON3_NUMPY)
  add_test(NAME test_geometric_stiffness3 COMMAND ${MBLIN_PYTHON3_NUMPY} ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_geometric_stiffness3.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# the Kane-Ryan-Banerjee spin-up simulated (issue 32): bounded with the geometric stiffness, diverging
# without, each against an independent FE reference in SciPy
if(MBLIN_PYTHON3_NUMPY)
  add_test(NAME test_krb_spinup COMMAND ${MBLIN_PYTHON3_NUMPY} ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_krb_spinup.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# the rolling wheel joint and its tire (issue 35, item 2): rolling disc and Whipple bicycle from
# bodies against closed forms and Meijaard et al. (2007) Table 2, a single-track car's tires
mblin_add_test(test_rolling_wheel ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_rolling_wheel.c)
# notes at a point outside an element's theory (issue 65, item 18): a tire at a standstill, a beam
# beyond small strains (the spinning bar's closed form)
if(PYTHON3)
  add_test(NAME test_validity_notes COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_validity_notes.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# at: steady of a stiff spatial blade on a driven hub (issue 65, item 16): the bar's stretch, Southwell
if(PYTHON3)
  add_test(NAME test_steady_stiff_blade COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_steady_stiff_blade.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# spatial modal bodies (issue 67, item 1): two rigid halves on a spring as a modal body, free,
# clamped, spun on a driven shaft and hanging as a pendulum, against closed forms; the rigid limit
# against a rigid body (Matrix Market files: the build with CHOLMOD)
if(MBLIN_PYTHON3_NUMPY AND MBLIN_WITH_GPL)
  add_test(NAME test_modal3 COMMAND ${MBLIN_PYTHON3_NUMPY} ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_modal3.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# a rolling wheel's tire as an expression and SLIP(joint) (issue 68): the Magic Formula written out
# equals the built-in (A, a trimmed turn), refusals naming the joint
mblin_add_test(test_tire_force ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_tire_force.c)
# mbl_load_options.no_drawing (issue 69): no drawing points, the same point and linear model bit for
# bit (the four-bar; a trimmed turn whose targets are marker measures)
mblin_add_test(test_no_drawing ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_no_drawing.c)
# modal damping ratios of modal bodies (issue 70, item 7): the linearization's damping ratios equal
# the given zetas, planar and spatial, with Rayleigh beside them the documented sum; refusals
if(MBLIN_PYTHON3_NUMPY AND MBLIN_WITH_GPL)
  add_test(NAME test_modal_damping COMMAND ${MBLIN_PYTHON3_NUMPY} ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_modal_damping.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# 3-1-3 Euler angles as a spatial body's coordinates (issue 70, item 4): eigenvalues equal to Euler
# parameters' on a hanging body and a two-body chain, the initial rates, the singular orientation
if(PYTHON3)
  add_test(NAME test_euler313 COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_euler313.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# natural-coordinate bodies (issue 70, item 2; source 002 Sec. 2): Example 1 from bodies against the
# hand-written equations and its closed forms (symbolic), natural links against rigid bodies
if(PYTHON3)
  add_test(NAME test_natural COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_natural.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# issue 70's features on textbook models written from the docs (session 43's user review): the
# slider-crank's sparsity counts made by hand and its mode, the sleeping top in 3-1-3 Euler angles
# (Goldstein's rates and stability limit), a rod and disc in natural coordinates, coincident points
if(PYTHON3)
  add_test(NAME test_user_textbook COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_user_textbook.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# a new-user review's refusals (s43): the top-level modal_damping checked always (and refused without
# modal bodies), euler313 in a planar mechanism, a force's failure named once with the file once
if(PYTHON3)
  add_test(NAME test_mech_user_errors COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_mech_user_errors.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
