//===- BmbOps.td - bmb operations --------------------------*- tablegen -*-===//
//
// The op definitions live in three files: BmbModelOps.td (model, params, layer
// regions, jobs), BmbCheckpointMap.td (checkpoint name maps) and
// BmbTensorOps.td (the primitives on tensors) and BmbGradOps.td (losses,
// gradients, optimizer updates: the training path).
//
//===----------------------------------------------------------------------===//
#ifndef BMB_OPS_TD
#define BMB_OPS_TD

include "BmbDialect.td"
include "BmbAttrs.td"
include "BmbModelOps.td"
include "BmbCheckpointMap.td"
include "BmbTensorOps.td"
include "BmbGradOps.td"
include "BmbPromptOps.td"

#endif // BMB_OPS_TD
