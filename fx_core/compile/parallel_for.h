// at::parallel_for for the InferencePlan's own kernels.
//
// With LibTorch's OpenMP backend (Debian's LibTorch), at::parallel_for is a
// header template whose `#pragma omp parallel` is compiled into the calling
// file: a file built without -fopenmp runs every parallel_for on one
// thread, and nothing says so (swin_t's attention tiles and the int8
// kernels did, until 7 Dec). Include this header instead of
// <ATen/Parallel.h>: it stops the build of a file that lacks -fopenmp. A
// target including it needs copts and linkopts ["-fopenmp"] (the libgomp
// LibTorch links).
#ifndef FX_CORE_COMPILE_PARALLEL_FOR_H_
#define FX_CORE_COMPILE_PARALLEL_FOR_H_

#include <ATen/Config.h>
#include <ATen/Parallel.h>

#if AT_PARALLEL_OPENMP && !defined(_OPENMP)
#error "at::parallel_for is inline OpenMP here: build this file with -fopenmp"
#endif

#endif  // FX_CORE_COMPILE_PARALLEL_FOR_H_
