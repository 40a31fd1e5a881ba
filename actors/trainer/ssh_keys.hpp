// An SSH key pair for an MPI TrainJob's launcher and nodes: ECDSA on P-521, the private key as a
// PEM "EC PRIVATE KEY", the public key as an authorized_keys line. Uses OpenSSL's random source;
// kept out of the pure core (which takes the pair as input: mpi.hpp).
#pragma once

#include "actors/trainer/mpi.hpp"

#include <optional>

namespace kozmo::trainer {

std::optional<ssh_key_pair> make_ssh_key_pair();

} // namespace kozmo::trainer
