# sources of the io component (see runtime/CMakeLists.txt): the JSON reader,
# the safetensors reader/writer and the checkpoint loader/saver.
bmrt_add_component(io
  ${CMAKE_CURRENT_LIST_DIR}/atomic_file.cpp
  ${CMAKE_CURRENT_LIST_DIR}/json.cpp
  ${CMAKE_CURRENT_LIST_DIR}/safetensors.cpp
  ${CMAKE_CURRENT_LIST_DIR}/safetensors_writer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/layout.cpp
  ${CMAKE_CURRENT_LIST_DIR}/param_slices.cpp
  ${CMAKE_CURRENT_LIST_DIR}/checkpoint_files.cpp
  ${CMAKE_CURRENT_LIST_DIR}/checkpoint.cpp
  ${CMAKE_CURRENT_LIST_DIR}/delta_checkpoint.cpp
  ${CMAKE_CURRENT_LIST_DIR}/optimizer_state.cpp
)
