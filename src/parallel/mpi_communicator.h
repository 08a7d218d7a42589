// Open MPI ranks as a Communicator (built only where CMake found Open MPI; elsewhere
// make_mpi_communicator is never called, since mpi_available() is false).
#pragma once

#include <memory>

#include "parallel/communicator.h"

namespace brisk {

// Whether the environment says mpirun (or another PMIx launcher) started this process.
bool started_by_mpirun();
// MPI_Init_thread (serialized: one thread at a time calls MPI, the engine's step thread after the
// main thread has loaded the model); MPI_Finalize when the communicator is destroyed.
std::unique_ptr<Communicator> make_mpi_communicator(int* argc, char*** argv);

}  // namespace brisk
