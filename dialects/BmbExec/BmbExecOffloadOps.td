//===- BmbExecOffloadOps.td - The offloaded optimizer step --*- tablegen -*-===//
//
// `offload = optimizer` (bmb-offload-optimizer, docs/distributed.md): the
// AdamW state and update of the rank's partition live in host memory
// (runtime/include/bmrt/offload.h). The step's gradients go out to the host
// chunk by chunk, the host updates each chunk once its copy is done, and the
// updated params come back. The copies are asynchronous and yield a
// `!bmb_exec.request`, like the collectives; bmb-verify-async checks that
// nothing touches the gradients while they are copied out, nor the params
// before the copies back are waited for.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_EXEC_OFFLOAD_OPS_TD
#define BMB_EXEC_OFFLOAD_OPS_TD

def BmbExec_ClipCoefficientOp : BmbExec_Op<"clip_coefficient", [Pure]> {
  let summary = "min(1, max_norm / (%norm + 1e-6)) (bmrt::clip_coefficient)";
  let description = [{
    The factor `bmb_exec.clip_grads` scales the gradients by, as a value:
    the offloaded update applies it to the gradients it copied out instead
    of a pass over the device's gradients.

    ```mlir
    %c = bmb_exec.clip_coefficient %n {max_norm = 1.0 : f64} : f64
    ```
  }];
  let arguments = (ins F64:$norm, F64Attr:$max_norm);
  let results = (outs F64:$result);
  let assemblyFormat = "$norm attr-dict `:` type($result)";
}

def BmbExec_OffloadGradsOutOp : BmbExec_Op<"offload_grads_out"> {
  let summary = "issues the copy of the partition's gradients to the host, in chunks (bmrt::offload_grads_out)";
  let description = [{
    Every chunk of `chunk` elements of the rank's partition of the gradient
    group is copied into the host's staging (a device-to-host copy on a
    GPU, each with its event), all issued before the first wait. Exactly one
    `bmb_exec.offload_adamw_update` consumes the request; until then
    nothing may touch the gradients.

    ```mlir
    %out = bmb_exec.offload_grads_out {chunk = 65536 : i64}
    ```
  }];
  let arguments = (ins I64Attr:$chunk);
  let results = (outs BmbExec_RequestType:$request);
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def BmbExec_OffloadAdamWUpdateOp : BmbExec_Op<"offload_adamw_update", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "AdamW of the partition on the host, chunk by chunk, and the copy back (bmrt::offload_adamw_update)";
  let description = [{
    For each chunk of `%out`, in order: waits for its copy, scales its
    gradients by `%scale` when that is below 1 (clipping), runs AdamW
    (bmrt::adamw_update, the non-offloaded element math) on the host's
    master copy, exp_avg and exp_avg_sq of every param's part of the chunk,
    with that param's entry of `weight_decays`, and issues the copy of the
    updated chunk into the params. The result is those copies: nothing may
    touch the trainable params until its `bmb_exec.wait`.

    ```mlir
    %in = bmb_exec.offload_adamw_update %out [@wte.w, @h.fc.w] lr %lr step %step scale %c
        {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-08 : f64,
         weight_decays = array<f64: 0.0, 0.1>}
    bmb_exec.wait %in
    ```
  }];
  let arguments = (ins BmbExec_RequestType:$out, FlatSymbolRefArrayAttr:$params, F64:$lr,
                       I64:$step, Optional<F64>:$scale, F64Attr:$beta1, F64Attr:$beta2,
                       F64Attr:$eps, DenseF64ArrayAttr:$weight_decays);
  let results = (outs BmbExec_RequestType:$request);
  let assemblyFormat = [{
    $out $params `lr` $lr `step` $step (`scale` $scale^)? attr-dict
  }];
  let hasVerifier = 1;
}

#endif // BMB_EXEC_OFFLOAD_OPS_TD
