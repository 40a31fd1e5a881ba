// A host program that runs only Kozmo's training-job controller against a cluster: PyTorchJob,
// TFJob, MPIJob, XGBoostJob, PaddleJob, JAXJob and Caffe2Job (their CRDs must be installed:
// `kozmo crds | kubectl create -f -`). Built against an installed libkozmo:
//   c++ training_only.cpp $(pkg-config --cflags --libs kozmo) -o training_only
//   ./training_only [KUBECONFIG]        (default: ~/.kube/config or in-cluster; stops on SIGTERM)
#include <kozmo/engine.hpp>

#include <csignal>
#include <iostream>
#include <unistd.h>

int main(int argc, char** argv) {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr); // before the engine's threads start
  kozmo::engine_options o;
  o.api.kubeconfig = argc > 1 ? argv[1] : "";
  o.parts.training = true;
  kozmo::engine e(o);
  if (auto st = e.start(); !st) {
    std::cerr << "training_only: " << st.err().message << "\n";
    return 1;
  }
  std::cout << "training_only: running training jobs on " << e.url() << std::endl;
  int sig = 0;
  sigwait(&stop_signals, &sig);
  std::cout << "training_only: stopping" << std::endl;
  e.stop();
  return 0;
}
