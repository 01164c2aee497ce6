#!/usr/bin/env python3
"""The NumPy yardstick of issue 17: the work `scalelab report` does for a generated fp8 section,
done the way a NumPy user would write it (default generator, vectorised quantization).

    /usr/bin/time -v python3 bench/fp8_numpy.py [rows] [cols] [block]

Generates a standard-normal float32 matrix, scales about one 1 x block block in 16 up by 100,
then for one scale per 1 x block block and for one scale per tensor: scale in float32, round to
E4M3 (nearest, ties to even, saturating), multiply back, and measure max |error|, RMSE and the
values that became zero. Prints the figures and the time the work took (import excluded); time
the whole process to compare with `scalelab report`, which also starts up and prints JSON.
"""

import sys
import time

import numpy as np

E4M3_MAX = np.float32(448.0)


def quantize_e4m3(x):
    """x (float32, |x| <= 448 after scaling) rounded to the E4M3 grid, ties to even."""
    bits = x.view(np.uint32)
    sign = bits & np.uint32(0x80000000)
    a = bits & np.uint32(0x7FFFFFFF)
    exp = (a >> np.uint32(23)).astype(np.int32) - 127
    # 3 fraction bits in the normal range (from 2^-6), a fixed step of 2^-9 below it.
    shift = (20 + np.maximum(0, -6 - exp)).clip(20, 23).astype(np.uint32)
    significand = (a & np.uint32(0x7FFFFF)) | np.uint32(0x800000)
    lsb = (significand >> shift) & np.uint32(1)
    half = np.uint32(1) << (shift - np.uint32(1))
    mask = (np.uint32(1) << shift) - np.uint32(1)
    r = (a + half - np.uint32(1) + lsb) & ~mask
    # Below 2^-10 everything rounds to 0; in [2^-10, 2^-9) exactly 2^-10 ties to the even 0.
    tiny = exp == -10
    r = np.where(exp < -10, np.uint32(0), r)
    r = np.where(tiny, np.where(a > np.uint32(117 << 23), np.uint32(118 << 23), np.uint32(0)), r)
    r = np.minimum(r, np.float32(448.0).view(np.uint32).reshape(()))  # saturate
    return (r | sign).view(np.float32)


def round_trip(values, scale):
    deq = quantize_e4m3(values / scale) * scale
    err = deq.astype(np.float64) - values.astype(np.float64)
    return {
        "max_abs_error": float(np.abs(err).max()),
        "rmse": float(np.sqrt(np.mean(err * err))),
        "underflow_count": int(np.count_nonzero((values != 0) & (deq == 0))),
    }


def main():
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
    cols = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
    block = int(sys.argv[3]) if len(sys.argv) > 3 else 16
    start = time.perf_counter()
    rng = np.random.default_rng(1)
    values = rng.standard_normal((rows, cols), dtype=np.float32)
    blocks = values.reshape(rows, cols // block, block)
    outliers = rng.integers(0, 16, size=blocks.shape[:2]) == 0
    blocks[outliers] *= np.float32(100.0)

    block_max = np.abs(blocks).max(axis=2, keepdims=True)
    block_scale = block_max / E4M3_MAX
    block_scale[block_scale == 0] = 1
    per_block = round_trip(blocks, block_scale)
    tensor_scale = np.float32(np.abs(values).max() / E4M3_MAX)
    per_tensor = round_trip(values, tensor_scale)
    elapsed = time.perf_counter() - start
    print("per block:", per_block)
    print("per tensor:", per_tensor, "scale", float(tensor_scale))
    print(f"scales: {block_scale.size}; work took {elapsed:.3f} s")


if __name__ == "__main__":
    main()
