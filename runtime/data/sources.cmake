# sources of the data component (see runtime/CMakeLists.txt): token files
# (atomic write, mmap + validation), B x (T+1) batches over them, and
# byte-level BPE training; plus the bmb-tokenize command-line tool.
bmrt_add_component(data
  ${CMAKE_CURRENT_LIST_DIR}/token_file.cpp
  ${CMAKE_CURRENT_LIST_DIR}/batches.cpp
  ${CMAKE_CURRENT_LIST_DIR}/bpe_trainer.cpp
)

# bmb-tokenize: text / JSONL -> token file; --train-bpe (tools/bmb-tokenize.cpp).
add_executable(bmb-tokenize ${CMAKE_CURRENT_LIST_DIR}/../tools/bmb-tokenize.cpp)
target_compile_options(bmb-tokenize PRIVATE -fexceptions -O2)
target_link_libraries(bmb-tokenize PRIVATE bmrt)
set_target_properties(bmb-tokenize PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
install(TARGETS bmb-tokenize RUNTIME DESTINATION bin)
