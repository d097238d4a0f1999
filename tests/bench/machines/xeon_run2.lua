-- xeon_run2.lua (a run of fuseeng calibrate, kept to compare): this CPU measured by fuseeng calibrate (fuseeng 0.1.0) on 2026-11-29 21:50 UTC.
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
  -- a fused chain of 16 adds over 1536 MiB took 339.7 ms (spread 3.4%), one add 30.73 ms
  -- (spread 1.4%): 2.42e+10 extra bytes of on-chip traffic in the extra time
  -- raised to twice the memory bandwidth, the least that keeps the L2 the fast memory of
  -- the model (measured 7.82e+10)
  l2_bandwidth = 1.055e+11,
  -- memory sweep, z = x + y (f32, 3 tensors; bytes = working set):
  --         48 KiB      4.7 GB/s  (spread 11.2%)
  --        240 KiB      4.4 GB/s  (spread 5.9%)
  --       1008 KiB     14.9 GB/s  (spread 6.6%)
  --       4080 KiB     37.7 GB/s  (spread 6.3%)
  --      16368 KiB     59.6 GB/s  (spread 6.9%)
  --      65520 KiB     74.7 GB/s  (spread 4.8%)
  --     262128 KiB     62.2 GB/s  (spread 2.5%)
  --    1048560 KiB     53.5 GB/s  (spread 3.3%)
  --    1572864 KiB     52.0 GB/s  (spread 2.8%)
  -- sizes from 4 times the cache up give 52.8 GB/s; the simulator adds the on-chip traffic
  -- of a lone op (B / l2_bandwidth), so this is the figure that makes its time 52.8 GB/s
  l3_bandwidth = 1.055e+11,
  -- 24 products summed in one kernel over 50331648 floats: 329.5 ms (spread 2.0%), within
  -- noise (16.5 ms) of its spill-free price although the simulator counts 3.3e+10 spilled
  -- bytes: a lower bound, the spilled bytes over the noise
  local_bandwidth = 2.004e+12,
  -- 32 adds of 256 floats, one kernel each, back to back: 0.06063 ms (spread 7.8%), / 32
  launch_us = 1.895,
  -- a fused chain of 4 adds over 33554432 floats in 1 tile: 22.04 ms (spread 3.3%); in 64
  -- tiles: 31.89 ms (spread 3.1%)
  tile_us = 156.3,
  -- f32: a 1024 x 1024 x 1024 matmul, 2.06 ms (spread 15.8%)
  -- f16: a 1024 x 1024 x 1024 matmul, 23.49 ms (spread 8.5%)
  -- bf16: a 1024 x 1024 x 1024 matmul, 23.99 ms (spread 2.3%)
  matrix_flops = { f32 = 1.043e+12, f16 = 9.141e+10, bf16 = 8.952e+10 },
  -- 16 fused GELUs (tanh form) over 6291456 floats: 60.46 ms (spread 1.1%), 1.01e+09 FLOPs
  -- as the registry counts them (10 per GELU). 16 fused multiplies: 15.41 ms (spread 3.7%),
  -- 6.53e+09 FLOP/s (memory-bound or not, the simpler op runs at a different rate per
  -- counted FLOP)
  vector_flops = { f32 = 1.665e+10 },
  -- vector registers of the ISA the kernels were built for (AVX2: 16)
  registers = 16,
  -- the vector programs keep about 4 for addresses and constants: not measured
  reserved_registers = 4,
  -- a "thread" is one vector of lanes, one value each
  elements_per_thread = 1,
  -- not measured: one device has no interconnect; the memory bandwidth stands in (ranks on
  -- one host share it)
  link_bandwidth = 5.277e+10,
  -- not measured: a kernel launch stands in for a ring step
  link_latency_us = 1.895,
  -- compute and memory traffic overlap on an out-of-order CPU and on a GPU: a kernel takes
  -- the longer of the two (not measured apart)
  overlap = true,
  -- a 256 x 768 x 768 f32 matmul: 0.3838 ms (spread 17.5%), against 0.2914 ms at
  -- matrix_flops and the bandwidths
  library_us = 92.44,
}
