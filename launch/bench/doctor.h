#pragma once
// dtbench doctor, the check before a long run: every rank probes its ring neighbours (round trip,
// 1 MiB bandwidth) and rank 0 prints a PASS/FAIL line per rank with the MPI set-up (doctor.cpp).
#include <string>

namespace dtbench {

struct DoctorOptions {
  std::string iface;
  double timeout_s = 10;
  int silent_rank = -1;  // testing the failure path: this rank probes nothing
};

// Under mpirun: returns normally only when every rank passed; otherwise ends the job (MPI_Abort).
void run_doctor(const DoctorOptions& options);

}  // namespace dtbench
