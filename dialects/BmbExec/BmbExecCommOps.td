//===- BmbExecCommOps.td - Collectives of the plan ---------*- tablegen -*-===//
//
// The data-parallel and ZeRO collectives after lowering: each is one
// asynchronous call of runtime/include/bmrt/comm.h, issued on the
// communicator's progress thread (a comm stream on a GPU), and yields a
// `!bmb_exec.request` that exactly one `bmb_exec.wait` consumes. Between the
// issue and the wait nothing may touch the buffers the collective owns
// (bmb-verify-async checks it).
//
//===----------------------------------------------------------------------===//
#ifndef BMB_EXEC_COMM_OPS_TD
#define BMB_EXEC_COMM_OPS_TD

include "mlir/IR/AttrTypeBase.td"

def BmbExec_RequestType : TypeDef<BmbExec_Dialect, "Request"> {
  let mnemonic = "request";
  let summary = "an issued collective or offload copy, until its bmb_exec.wait";
}

def BmbExec_AllReduceGradsOp : BmbExec_Op<"all_reduce_grads", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "issues the sum over ranks of one bucket of gradients (Comm::allReduce)";
  let description = [{
    The gradients of `params`, one contiguous range of the grads
    allocation (bmb-plan-memory lays the trainable group out in this
    order; emission checks the range is contiguous), in place.

    `layers [a, b]`: only layers a .. b - 1 of the (stacked) params, units
    a .. b - 1 of the layer-major group. `unless_overlapped`: skipped (and
    its wait too) when the backward already issued the gradient
    collectives (`StepArgs::overlapGrads`; `defer_all_reduce_grads`).

    ```mlir
    %r = bmb_exec.all_reduce_grads [@wte.w, @wpe.w]
    %s = bmb_exec.all_reduce_grads [@h.q.w, @h.ln1.w] layers [0, 2]
    bmb_exec.wait %r
    ```
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$params,
                       OptionalAttr<DenseI64ArrayAttr>:$layers,
                       UnitAttr:$unless_overlapped);
  let results = (outs BmbExec_RequestType:$request);
  let assemblyFormat = "$params (`layers` $layers^)? (`unless_overlapped` $unless_overlapped^)? attr-dict";
}

def BmbExec_ReduceScatterGradsOp : BmbExec_Op<"reduce_scatter_grads"> {
  let summary = "issues the reduce-scatter of the gradient group (Comm::reduceScatter)";
  let description = [{
    Over the whole grads allocation, in the rank's partitions
    (bmrt::Partition): afterwards the rank's partition holds the sum.

    ```mlir
    %r = bmb_exec.reduce_scatter_grads
    ```
  }];
  let results = (outs BmbExec_RequestType:$request);
  let assemblyFormat = "attr-dict";
}

def BmbExec_AllGatherParamsOp : BmbExec_Op<"all_gather_params"> {
  let summary = "issues the all-gather of the trainable param group (Comm::allGather)";
  let description = [{
    Over the trainable group's span of the params allocation, in the
    ranks' partitions: afterwards every rank holds every partition.

    ```mlir
    %r = bmb_exec.all_gather_params
    ```
  }];
  let results = (outs BmbExec_RequestType:$request);
  let assemblyFormat = "attr-dict";
}

def BmbExec_DeferAllReduceGradsOp : BmbExec_Op<"defer_all_reduce_grads",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "issues a gradient all-reduce during the backward, waited by a later entry";
  let description = [{
    In `@forward_backward`, when the app sets `StepArgs::overlapGrads` (the
    step's last micro-batch): the sum over ranks of `params`' gradients,
    layer `%layer` of them (one unit of the layer-major group) or the
    whole params without it, is issued here and kept by the communicator
    (Comm::defer); `bmb_exec.wait_deferred` in `@optimizer_step` waits for
    it. Without `overlapGrads` it does nothing. Nothing may touch those
    gradients afterwards in this entry (bmb-verify-async).

    ```mlir
    scf.for %j = %c0 to %c2 step %c1 {
      %i = arith.subi %c1, %j : index
      ...  // layer %i's backward
      bmb_exec.defer_all_reduce_grads [@h.fc.w, @h.fc.b] layer %i
    }
    bmb_exec.defer_all_reduce_grads [@wte.w, @ln_f.w, @ln_f.b]
    ```
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$params, Optional<Index>:$layer);
  let assemblyFormat = "$params (`layer` $layer^)? attr-dict";
}

def BmbExec_WaitDeferredOp : BmbExec_Op<"wait_deferred"> {
  let summary = "waits for the collectives an earlier entry deferred (Comm::waitDeferred)";
  let description = [{
    At the start of `@optimizer_step`: blocks until every
    `defer_all_reduce_grads` of the last `@forward_backward` is done (none:
    returns at once). Nothing before it in the entry may touch the
    gradients (bmb-verify-async).

    ```mlir
    bmb_exec.wait_deferred
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def BmbExec_ReduceScatterUnitOp : BmbExec_Op<"reduce_scatter_unit"> {
  let summary = "ZeRO-2: issues the reduce-scatter of one staged unit (Comm::reduceScatterv)";
  let description = [{
    In `@forward_backward` of a zero = 2 program, after the unit's backward:
    the staging buffer of the unit (layer `%layer` of stacked `params`, or
    the params outside repeats) is reduce-scattered in per-rank pieces,
    rank r's piece being the unit's intersection with r's partition of the
    group (bmrt::reduce_scatter_unit). Nothing may touch the gradients
    until its wait (bmb-verify-async); `bmb_exec.add_unit_grads` then takes
    the rank's piece.

    ```mlir
    %r = bmb_exec.reduce_scatter_unit [@h.fc.w, @h.fc.b] layer %i
    bmb_exec.wait %r
    bmb_exec.add_unit_grads [@h.fc.w, @h.fc.b] layer %i
    ```
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$params, Optional<Index>:$layer);
  let results = (outs BmbExec_RequestType:$request);
  let assemblyFormat = "$params (`layer` $layer^)? attr-dict";
}

def BmbExec_AddUnitGradsOp : BmbExec_Op<"add_unit_grads"> {
  let summary = "ZeRO-2: adds the rank's piece of a reduced unit into its partition";
  let description = [{
    After the wait of `bmb_exec.reduce_scatter_unit` of the same unit: the
    rank's piece of the summed staging buffer is added into its partition
    of the gradients (which accumulates over micro-batches), and the
    staging buffer is zeroed for the next unit (bmrt::add_unit_grads).

    ```mlir
    bmb_exec.add_unit_grads [@wte.w, @ln_f.w, @ln_f.b]
    ```
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$params, Optional<Index>:$layer);
  let assemblyFormat = "$params (`layer` $layer^)? attr-dict";
}

def BmbExec_ReduceScatterAheadOp : BmbExec_Op<"reduce_scatter_ahead"> {
  let summary = "ZeRO-2: issues layer %layer's reduce-scatter from its slot and leaves it in flight";
  let description = [{
    At the end of a reverse repeat iteration of a zero = 2 or 3 program,
    after layer `%layer`'s backward wrote its gradients into its slot of
    the gradient staging (slot layer % 2 of the repeat's two): issues the
    reduce-scatter of that slot (as `bmb_exec.reduce_scatter_unit`) and
    leaves it on the communicator (Comm::hold), so it travels while the
    next layer's backward writes the other slot. `bmb_exec.wait_unit_grads`
    of the same layer waits for it and adds the rank's piece into its
    partition (bmrt::reduce_scatter_ahead). With StepArgs::reduceScatterAhead
    false (`--no-overlap`) it waits and adds at once: the same sums.

    Until that wait nothing may write the slot or read the partition
    (bmb-verify-async).

    ```mlir
    bmb_exec.reduce_scatter_ahead [@h.fc.w, @h.fc.b] layer %l
    ```
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$params, Index:$layer);
  let assemblyFormat = "$params `layer` $layer attr-dict";
}

def BmbExec_WaitUnitGradsOp : BmbExec_Op<"wait_unit_grads"> {
  let summary = "ZeRO-2: finishes layer %layer's reduce-scatter, if one is in flight";
  let description = [{
    Waits for the reduce-scatter of layer `%layer` that
    `bmb_exec.reduce_scatter_ahead` left in flight, adds the rank's piece
    of the sum into its partition of the gradients and zeroes the slot
    (bmrt::wait_unit_grads); does nothing when none is in flight (a layer
    outside the loop, or `--no-overlap`). At the start of the reverse
    iteration of layer %l it finishes layer %l + 2, which used the slot
    layer %l is about to write; after the loop, the last two layers.

    ```mlir
    %n = arith.addi %l, %c2 : index
    bmb_exec.wait_unit_grads [@h.fc.w, @h.fc.b] layer %n
    ```
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$params, Index:$layer);
  let assemblyFormat = "$params `layer` $layer attr-dict";
}

def BmbExec_GatherUnitOp : BmbExec_Op<"gather_unit"> {
  let summary = "ZeRO-3: issues the all-gather of one unit's params into the staging (Comm::allGatherv)";
  let description = [{
    In the entries of a zero = 3 program, before the unit's params are
    read: the rank copies its piece of the unit (the unit's intersection
    with its partition of the group, possibly empty) from its partition of
    the params into the unit's place in the param staging allocation, and
    the pieces of all ranks are all-gathered there (bmrt::gather_unit).
    Every read of a trainable param (`bmb_exec.param_ref`) reads the
    staging, so it must follow the wait of its unit's gather in the same
    iteration (bmb-verify-async).

    ```mlir
    %g = bmb_exec.gather_unit [@h.fc.w, @h.fc.b] layer %i
    bmb_exec.wait %g
    ```
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$params, Optional<Index>:$layer);
  let results = (outs BmbExec_RequestType:$request);
  let assemblyFormat = "$params (`layer` $layer^)? attr-dict";
}

def BmbExec_WaitUnitOp : BmbExec_Op<"wait_unit"> {
  let summary = "ZeRO-3: layer %layer's params in its staging slot, gathered ahead or now";
  let description = [{
    At the start of a repeat iteration of a zero = 3 program: waits for the
    gather of layer `%layer`'s unit that the previous iteration's
    `bmb_exec.prefetch_unit` issued into the layer's slot (slot layer % 2
    of the repeat's two), or, when none was issued (the loop's first
    iteration), gathers it now and waits (bmrt::wait_unit). The reads of
    the layer that follow in the iteration read that slot.

    ```mlir
    bmb_exec.wait_unit [@h.fc.w, @h.fc.b] layer %i
    ```
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$params, Index:$layer);
  let assemblyFormat = "$params `layer` $layer attr-dict";
}

def BmbExec_PrefetchUnitOp : BmbExec_Op<"prefetch_unit"> {
  let summary = "ZeRO-3: issues the gather of the next layer into the other slot";
  let description = [{
    After `bmb_exec.wait_unit` of layer %i: issues the gather of layer
    `%layer` (%i + 1 in a forward loop, %i - 1 in a reverse one, checked by
    bmb-verify-async) into its slot, the one layer %i does not use, so it
    travels while layer %i computes; the next iteration's wait_unit takes
    it (bmrt::prefetch_unit). Past the first or last of the `layers`
    layers it does nothing.

    ```mlir
    %n = arith.addi %i, %c1 : index
    bmb_exec.prefetch_unit [@h.fc.w, @h.fc.b] layer %n of 12
    ```
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$params, Index:$layer, I64Attr:$layers);
  let assemblyFormat = "$params `layer` $layer `of` $layers attr-dict";
}

def BmbExec_RoundUnitOp : BmbExec_Op<"round_unit"> {
  let summary = "ZeRO-3 with bf16/fp16: rounds a gathered unit into the reduced-precision staging";
  let description = [{
    After the wait of a unit's gather (`bmb_exec.wait` of `gather_unit`,
    or `bmb_exec.wait_unit` of layer `%layer`) in a zero = 3 program with
    `precision = bf16`/`fp16`: the unit's params in the param staging
    (layer %layer's slot, layer % 2) are rounded to `$to` into the same
    elements of Buffers::lowParams, which under zero = 3 has the param
    staging's layout at 2 bytes per element (bmrt::round_unit). The
    autocast GEMMs read their trainable weights there, so every read of
    the unit's params must follow it (bmb-verify-async). Rounding is
    elementwise, so the GEMMs see the bits a whole-group copy would hold.

    ```mlir
    bmb_exec.wait_unit [@h.fc.w, @h.fc.b] layer %i
    bmb_exec.round_unit [@h.fc.w, @h.fc.b] layer %i to bf16
    ```
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$params, Optional<Index>:$layer, TypeAttr:$to);
  let assemblyFormat = "$params (`layer` $layer^)? `to` $to attr-dict";
  let hasVerifier = 1;
}

def BmbExec_WaitOp : BmbExec_Op<"wait"> {
  let summary = "blocks until an issued collective is done (Comm::wait)";
  let arguments = (ins BmbExec_RequestType:$request);
  let assemblyFormat = "$request attr-dict";
  let hasVerifier = 1;
}

#endif // BMB_EXEC_COMM_OPS_TD
