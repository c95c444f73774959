# sources of the comm component (see runtime/CMakeLists.txt): collectives
# between the ranks of a training run (bmrt/comm.h). comm.cpp chooses the
# backend from the environment and holds the single-process one and the
# rank-order sum; queued_comm.cpp is the progress thread MPI and TCP share;
# socket_io.cpp is the TCP backend's deadline-bounded socket I/O.
bmrt_add_component(comm
  ${CMAKE_CURRENT_LIST_DIR}/comm.cpp
  ${CMAKE_CURRENT_LIST_DIR}/queued_comm.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mpi_comm.cpp
  ${CMAKE_CURRENT_LIST_DIR}/socket_io.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tcp_comm.cpp
)
# mpi.h for mpi_comm.cpp; the library itself is linked into bmrt below.
target_link_libraries(bmrt_comm PRIVATE MPI::MPI_C)
