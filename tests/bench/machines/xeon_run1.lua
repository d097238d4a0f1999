-- xeon_run1.lua (a run of fuseeng calibrate, kept to compare): this CPU measured by fuseeng calibrate (fuseeng 0.1.0) on 2026-11-29 21:49 UTC.
-- calibrated: 16 CPUs, AVX2, 192 MiB last-level cache as L2
-- Every figure was measured with the engine's own kernels and is the one that
-- makes the simulator's formula give its probe's measured time (docs/fidelity.md);
-- the note above each says how, with the median and spread. Run
-- `fuseeng fidelity MODEL... --machine THIS_FILE` to see how well it predicts.
-- Units: bytes, bytes per second, FLOP per second, microseconds.
return {
  name = "xeon",
  description = "calibrated: 16 CPUs, AVX2, 192 MiB last-level cache as L2",
  -- the share of the last-level cache this process's threads can keep (sysfs, at most 12
  -- MiB a thread: kernels/vec/cache.h), which the executor's choices aim at
  l2_bytes = 201326592,
  -- physical memory (sysconf)
  memory_bytes = 135148564480,
  -- a fused chain of 16 adds over 1536 MiB took 337.4 ms (spread 0.8%), one add 35.03 ms
  -- (spread 7.0%): 2.42e+10 extra bytes of on-chip traffic in the extra time
  -- raised to twice the memory bandwidth, the least that keeps the L2 the fast memory of
  -- the model (measured 7.99e+10)
  l2_bandwidth = 8.948e+10,
  -- memory sweep, z = x + y (f32, 3 tensors; bytes = working set):
  --         48 KiB      5.3 GB/s  (spread 11.8%)
  --        240 KiB      4.1 GB/s  (spread 5.1%)
  --       1008 KiB     14.4 GB/s  (spread 8.0%)
  --       4080 KiB     34.0 GB/s  (spread 9.3%)
  --      16368 KiB     50.7 GB/s  (spread 5.2%)
  --      65520 KiB     61.8 GB/s  (spread 5.3%)
  --     262128 KiB     56.5 GB/s  (spread 5.8%)
  --    1048560 KiB     43.8 GB/s  (spread 4.6%)
  --    1572864 KiB     45.7 GB/s  (spread 2.1%)
  -- sizes from 4 times the cache up give 44.7 GB/s; the simulator adds the on-chip traffic
  -- of a lone op (B / l2_bandwidth), so this is the figure that makes its time 44.7 GB/s
  l3_bandwidth = 8.948e+10,
  -- 24 products summed in one kernel over 50331648 floats: 359.4 ms (spread 8.2%), within
  -- noise (29.6 ms) of its spill-free price although the simulator counts 3.3e+10 spilled
  -- bytes: a lower bound, the spilled bytes over the noise
  local_bandwidth = 1.117e+12,
  -- 32 adds of 256 floats, one kernel each, back to back: 0.0428 ms (spread 28.0%), / 32
  launch_us = 1.338,
  -- a fused chain of 4 adds over 33554432 floats in 1 tile: 23.42 ms (spread 6.1%); in 64
  -- tiles: 33.02 ms (spread 3.2%)
  tile_us = 152.4,
  -- f32: a 1024 x 1024 x 1024 matmul, 2.057 ms (spread 5.4%)
  -- f16: a 1024 x 1024 x 1024 matmul, 24.53 ms (spread 6.9%)
  -- bf16: a 1024 x 1024 x 1024 matmul, 23.68 ms (spread 2.6%)
  matrix_flops = { f32 = 1.045e+12, f16 = 8.754e+10, bf16 = 9.068e+10 },
  -- 16 fused GELUs (tanh form) over 6291456 floats: 64.06 ms (spread 2.0%), 1.01e+09 FLOPs
  -- as the registry counts them (10 per GELU). 16 fused multiplies: 16.02 ms (spread 5.0%),
  -- 6.28e+09 FLOP/s (memory-bound or not, the simpler op runs at a different rate per
  -- counted FLOP)
  vector_flops = { f32 = 1.571e+10 },
  -- vector registers of the ISA the kernels were built for (AVX2: 16)
  registers = 16,
  -- the vector programs keep about 4 for addresses and constants: not measured
  reserved_registers = 4,
  -- a "thread" is one vector of lanes, one value each
  elements_per_thread = 1,
  -- not measured: one device has no interconnect; the memory bandwidth stands in (ranks on
  -- one host share it)
  link_bandwidth = 4.474e+10,
  -- not measured: a kernel launch stands in for a ring step
  link_latency_us = 1.338,
  -- compute and memory traffic overlap on an out-of-order CPU and on a GPU: a kernel takes
  -- the longer of the two (not measured apart)
  overlap = true,
  -- a 256 x 768 x 768 f32 matmul: 0.3861 ms (spread 18.0%), against 0.2905 ms at
  -- matrix_flops and the bandwidths
  library_us = 95.66,
}
