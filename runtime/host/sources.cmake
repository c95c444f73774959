# sources of the host component (see runtime/CMakeLists.txt)
bmrt_add_component(host_blas ${CMAKE_CURRENT_LIST_DIR}/context.cpp ${CMAKE_CURRENT_LIST_DIR}/gemm.cpp ${CMAKE_CURRENT_LIST_DIR}/gemv.cpp)
bmrt_add_component(host_kernels ${CMAKE_CURRENT_LIST_DIR}/attention.cpp ${CMAKE_CURRENT_LIST_DIR}/norms.cpp ${CMAKE_CURRENT_LIST_DIR}/rowops.cpp)
