//===- bmrt/bmrt.h - Everything an emitted program includes ---------------===//
#ifndef BMRT_BMRT_H
#define BMRT_BMRT_H

#include "bmrt/portable.h"
#include "bmrt/context.h"
#include "bmrt/dropout.h"
#include "bmrt/elementwise.h"
#include "bmrt/iteration_gate.h"
#include "bmrt/kernels.h"
#include "bmrt/program.h"
#include "bmrt/skeletons.h"

#include <math.h> // tanh/exp/erf of float in the global namespace, for kernel bodies

#endif // BMRT_BMRT_H
