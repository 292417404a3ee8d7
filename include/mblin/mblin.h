/* mblin: exact linearization of constrained multibody dynamics. Umbrella header. */
#ifndef MBLIN_MBLIN_H
#define MBLIN_MBLIN_H

#include "mblin/version.h"
#include "mblin/status.h"
#include "mblin/progress.h"
#include "mblin/expr.h"
#include "mblin/la.h"
#include "mblin/model.h"
#include "mblin/json.h"
#include "mblin/report.h"
#include "mblin/dae.h"
#include "mblin/sensitivity.h"
#include "mblin/sweep.h"
#include "mblin/sim.h"
#include "mblin/codegen.h"
#include "mblin/floquet.h"
#include "mblin/sparsity.h"

#endif
