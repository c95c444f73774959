# sources of the app components (see runtime/CMakeLists.txt).
#
# app_common: the infer and train apps on any backend (infer_run: flags,
# checkpoint, deltas, tokenizer, the generate loop, sampling, output;
# train_run and train_*: data, the step loop, checkpoints, progress;
# tune_run and tune_*: labelled data, prompts, metrics, delta checkpoints),
# reached through EntryMemory, TrainMemory and TuneMemory. The cuda backend links it too
# (runtime/cuda/CMakeLists.txt), so nothing here may call a host kernel on
# memory of its own or touch OpenMP/OpenBLAS.
bmrt_add_component(app_common
  ${CMAKE_CURRENT_LIST_DIR}/delta_merge.cpp
  ${CMAKE_CURRENT_LIST_DIR}/delta_set.cpp
  ${CMAKE_CURRENT_LIST_DIR}/encode.cpp
  ${CMAKE_CURRENT_LIST_DIR}/flags.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gathered_params.cpp
  ${CMAKE_CURRENT_LIST_DIR}/generate.cpp
  ${CMAKE_CURRENT_LIST_DIR}/infer_run.cpp
  ${CMAKE_CURRENT_LIST_DIR}/info.cpp
  ${CMAKE_CURRENT_LIST_DIR}/init_params.cpp
  ${CMAKE_CURRENT_LIST_DIR}/kept_params.cpp
  ${CMAKE_CURRENT_LIST_DIR}/loss_scale.cpp
  ${CMAKE_CURRENT_LIST_DIR}/npy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/program_check.cpp
  ${CMAKE_CURRENT_LIST_DIR}/request.cpp
  ${CMAKE_CURRENT_LIST_DIR}/role_plan.cpp
  ${CMAKE_CURRENT_LIST_DIR}/sampling.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tensors.cpp
  ${CMAKE_CURRENT_LIST_DIR}/token_stream.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train_checkpoint.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train_data.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train_flags.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train_mask.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train_progress.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train_run.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train_step.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tune_batch.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tune_checkpoint.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tune_data.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tune_flags.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tune_metrics.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tune_run.cpp
)
# app: the host backend: its memory (mmap'ed roles: buffers, host_*memory),
# the infer, train and tune mains (threads, openComm).
bmrt_add_component(app
  ${CMAKE_CURRENT_LIST_DIR}/buffers.cpp
  ${CMAKE_CURRENT_LIST_DIR}/host_memory.cpp
  ${CMAKE_CURRENT_LIST_DIR}/host_threads.cpp
  ${CMAKE_CURRENT_LIST_DIR}/host_train_memory.cpp
  ${CMAKE_CURRENT_LIST_DIR}/infer_main.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train_main.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tune_main.cpp
)
