# sources of the prompt component (see runtime/CMakeLists.txt): the input
# assembly of prompt tuning (bmrt/prompt.h), plus the bmb-prompt tool that
# exposes it to tests and users.
bmrt_add_component(prompt
  ${CMAKE_CURRENT_LIST_DIR}/assemble.cpp
  ${CMAKE_CURRENT_LIST_DIR}/label_words.cpp
  ${CMAKE_CURRENT_LIST_DIR}/plan.cpp
)

# bmb-prompt: a plan (JSON) + examples (JSONL) -> ids and positions (JSON).
add_executable(bmb-prompt ${CMAKE_CURRENT_LIST_DIR}/../tools/bmb-prompt.cpp)
target_compile_options(bmb-prompt PRIVATE -fexceptions -O2)
target_link_libraries(bmb-prompt PRIVATE bmrt)
set_target_properties(bmb-prompt PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
install(TARGETS bmb-prompt RUNTIME DESTINATION bin)
