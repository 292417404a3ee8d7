/* Table 2 of Meijaard, Papadopoulos, Ruina and Schwab (2007), "Linearized dynamics equations for the
 * balance and steer of a bicycle: a benchmark and review", Proc. R. Soc. A 463: the eigenvalues of
 * the benchmark bicycle at v = 0..10 m/s (1 m/s steps): capsize, weave (re +- i im; at v = 0 two
 * real ones, NAN here), castering. For tests/model/test_bicycle.c (the equation-level bicycle) and
 * tests/mech/test_rolling_wheel.c (the bicycle built from bodies and rolling wheels). */
#ifndef MBLIN_TESTS_MEIJAARD_TABLE2_H
#define MBLIN_TESTS_MEIJAARD_TABLE2_H

#include <math.h>

static const double cap[11] = {-3.13164324790656, -3.13423125066578, -3.07158645641514, -2.63366137253667,
                               -1.42944427361326, -0.32286642900409, -0.00406690076970, 0.10268170574766,
                               0.14327879765713,  0.15790184030917,  0.16105338653172};
static const double weave_re[11] = {NAN, 3.52696170990070, 2.68234517512745, 1.70675605663975,
                                    0.41325331521125, -0.77534188219585, -1.52644486584142,
                                    -2.13875644258362, -2.69348683581097, -3.21675402252485,
                                    -3.72016840437287};
static const double weave_im[11] = {NAN, 0.80774027519930, 1.68066296590675, 2.31582447384325,
                                    3.07910818603206, 4.46486771378823, 5.87673060598709,
                                    7.19525913329805, 8.46037971396931, 9.69377351531791,
                                    10.90681139476287};
static const double cast[11] = {-5.53094371765393,  -7.11008014637442,  -8.67387984831735,  -10.35101467245920,
                                -12.15861426576450, -14.07838969279820, -16.08537123098030, -18.15788466125262,
                                -20.27940894394569, -22.43788559040858, -24.62459635017404};

#endif
