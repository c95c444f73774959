//===- cuda/nccl_comm.h - Collectives between GPUs over NCCL --------------===//
//
// The Comm of a --target=cuda training run (bmrt/comm.h's interface). The
// ranks find each other the way host runs do (openComm: mpirun's MPI, or
// torchrun's RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT over TCP); that
// bootstrap communicator broadcasts rank 0's ncclUniqueId, then every rank
// joins the NCCL communicator on its GPU.
//
// On a GPU "asynchronous" means stream-ordered:
//  - a collective on a device buffer is queued on the device's comm stream
//    after the work queued on the compute stream so far (an event), and an
//    event is recorded after it;
//  - wait(h) makes the compute stream wait for that event; the host does not
//    block, so a training step never synchronises the host on a collective;
//  - barrier() blocks the host until the comm stream is idle, polling with
//    the timeout: a collective that does not finish (a rank died) is
//    aborted (ncclCommAbort) and reported naming the oldest collective
//    still in flight and this rank.
// Collectives on host buffers (the app's scalars: Comm::sum, max,
// broadcastString) go through the bootstrap communicator and block as
// there.
//
// reduceScatterv and allGatherv (ZeRO-2's gradients and ZeRO-3's params in
// pieces of unequal length, which NCCL has no collective for) are one
// in-place ncclReduce (resp. ncclBroadcast) per non-empty piece, rooted at
// the piece's owner, all in one ncclGroupStart/End on the comm stream.
//
// NCCL's reductions are not in rank order, so --deterministic is refused.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_CUDA_NCCL_COMM_H
#define BMRT_CUDA_NCCL_COMM_H

#include "bmrt/comm.h"
#include "cuda/device.h"

#include <memory>

namespace bmrt::cuda {

/// The NCCL communicator over `bootstrap`'s ranks, on `dev`. Fails for
/// options.deterministic before touching the GPU or the network.
std::unique_ptr<Comm> makeNcclComm(Device &dev, std::unique_ptr<Comm> bootstrap,
                                   const CommOptions &options);

/// openComm(options) as the bootstrap, then makeNcclComm.
std::unique_ptr<Comm> openNcclComm(Device &dev, const CommOptions &options);

} // namespace bmrt::cuda

#endif // BMRT_CUDA_NCCL_COMM_H
