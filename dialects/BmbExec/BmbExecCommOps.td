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
  let summary = "an issued collective, until its bmb_exec.wait";
}

def BmbExec_AllReduceGradsOp : BmbExec_Op<"all_reduce_grads", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "issues the sum over ranks of one bucket of gradients (Comm::allReduce)";
  let description = [{
    The gradients of `params`, one contiguous range of the grads
    allocation (bmb-plan-memory lays the trainable group out in this
    order; emission checks the range is contiguous), in place.

    ```mlir
    %r = bmb_exec.all_reduce_grads [@wte.w, @wpe.w]
    bmb_exec.wait %r
    ```
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$params);
  let results = (outs BmbExec_RequestType:$request);
  let assemblyFormat = "$params attr-dict";
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

def BmbExec_WaitOp : BmbExec_Op<"wait"> {
  let summary = "blocks until an issued collective is done (Comm::wait)";
  let arguments = (ins BmbExec_RequestType:$request);
  let assemblyFormat = "$request attr-dict";
  let hasVerifier = 1;
}

#endif // BMB_EXEC_COMM_OPS_TD
