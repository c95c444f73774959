# sources of the app component (see runtime/CMakeLists.txt): the infer
# executable's main, its flags, buffers, sampling and output; the train
# executable's main (train_*: flags, data, step, checkpoints, progress);
# the tune executable's (tune_*: labelled data, metrics, ...).
bmrt_add_component(app
  ${CMAKE_CURRENT_LIST_DIR}/buffers.cpp
  ${CMAKE_CURRENT_LIST_DIR}/delta_merge.cpp
  ${CMAKE_CURRENT_LIST_DIR}/delta_set.cpp
  ${CMAKE_CURRENT_LIST_DIR}/encode.cpp
  ${CMAKE_CURRENT_LIST_DIR}/flags.cpp
  ${CMAKE_CURRENT_LIST_DIR}/generate.cpp
  ${CMAKE_CURRENT_LIST_DIR}/infer_main.cpp
  ${CMAKE_CURRENT_LIST_DIR}/info.cpp
  ${CMAKE_CURRENT_LIST_DIR}/init_params.cpp
  ${CMAKE_CURRENT_LIST_DIR}/loss_scale.cpp
  ${CMAKE_CURRENT_LIST_DIR}/npy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/program_check.cpp
  ${CMAKE_CURRENT_LIST_DIR}/request.cpp
  ${CMAKE_CURRENT_LIST_DIR}/sampling.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tensors.cpp
  ${CMAKE_CURRENT_LIST_DIR}/token_stream.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train_checkpoint.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train_data.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train_flags.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train_mask.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train_main.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train_progress.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train_step.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tune_batch.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tune_checkpoint.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tune_data.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tune_flags.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tune_main.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tune_metrics.cpp
)
