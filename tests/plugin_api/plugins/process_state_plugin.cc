// The C++ twin of process_state_plugin.c (issue 39): the same passes, which
// misuse the process they run in, written with the C++ wrapper and the C++
// standard library: 'exit_0' calls std::exit(0), 'quick_exit'
// std::quick_exit(0) and '_exit' std::_Exit(0) (no hook sees it), 'chdir'
// moves the process to '/' and succeeds, 'thread_crash' leaves a detached
// std::thread that writes through NULL 200 ms later, 'sleep' sleeps a second
// (a pass for that thread to crash in).
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "fx/plugin_api.hpp"

namespace {

bool exit_0(fxp::Graph&, const fxp::Options&) { std::exit(0); }

bool quick_exit_0(fxp::Graph&, const fxp::Options&) { std::quick_exit(0); }

bool underscore_exit(fxp::Graph&, const fxp::Options&) { std::_Exit(0); }

bool change_directory(fxp::Graph&, const fxp::Options&) {
  if (chdir("/") != 0) throw fxp::Error(FX_INTERNAL, "chdir failed");
  return false;
}

bool thread_crash(fxp::Graph&, const fxp::Options&) {
  std::thread([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    volatile int* nowhere = nullptr;
    *nowhere = 1;
  }).detach();
  return false;
}

bool sleep_a_second(fxp::Graph&, const fxp::Options&) {
  std::this_thread::sleep_for(std::chrono::seconds(1));
  return false;
}

}  // namespace

FXP_PLUGIN("process_state_cc", "1.0",
           fxp::pass<exit_0>("exit_0", "calls std::exit(0)"),
           fxp::pass<quick_exit_0>("quick_exit", "calls std::quick_exit(0)"),
           fxp::pass<underscore_exit>("_exit", "calls std::_Exit(0)"),
           fxp::pass<change_directory>("chdir", "moves the process to /"),
           fxp::pass<thread_crash>("thread_crash",
                                   "leaves a thread that crashes 200 ms later"),
           fxp::pass<sleep_a_second>("sleep", "sleeps for a second"))
