/* The compiled CPU kernels, written once and compiled once per instruction set: _native.c
 * includes this file several times, each time under a different `#pragma GCC target` and with
 * KERNEL(name) giving the names that instruction set's suffix. Everything here is plain C loops
 * over float32 rows that the compiler vectorizes: no intrinsics, so a new instruction set is one
 * more #include.
 *
 * A 2-D operand is a pointer to its first element and the distance between its rows in
 * elements (its elements within a row are contiguous), so gate blocks and slices of larger
 * arrays are read in place.
 *
 * Accuracy: exp within 1 ulp (Cephes' expf), sigmoid and tanh within 2.5 ulp of float32,
 * tested against float64 NumPy in tests/backend/test_native_recurrent.py. */

#ifndef KERNEL
#error "kernels.h is included by _native.c with KERNEL defined"
#endif

/* LANES: independent partial results of a max or a sum along a row, so that the compiler
 * vectorizes it without reassociating float additions on its own (which it may not do) */
#define LANES 16

#include "kernel_math.h"
#include "kernel_recurrent.h"
#include "kernel_softmax.h"
#include "kernel_rows.h"
#include "kernel_products.h"
#include "kernel_convolution.h"
#include "kernel_attention.h"
#include "kernel_pooling.h"
#include "kernel_pooling_halves.h"
#include "kernel_pooling_shuffled.h"
#include "kernel_update.h"
