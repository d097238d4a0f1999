-- h200.lua: an NVIDIA H200 (the GPU of the device tool) measured by fuseeng calibrate
-- --device cuda (fuseeng 0.1.0) on 2026-11-29 18:42 UTC.
-- calibrated: NVIDIA H200, 132 SMs, 60 MiB L2
-- Every figure was measured with the engine's own kernels and is the one that
-- makes the simulator's formula give its probe's measured time (docs/fidelity.md);
-- the note above each says how, with the median and spread. Run
-- `fuseeng fidelity MODEL... --machine THIS_FILE` to see how well it predicts.
-- Units: bytes, bytes per second, FLOP per second, microseconds.
return {
  name = "h200",
  description = "calibrated: NVIDIA H200, 132 SMs, 60 MiB L2",
  -- the GPU's L2, as the driver reports it
  l2_bytes = 62914560,
  -- the GPU's memory, as the driver reports it
  memory_bytes = 150109880320,
  -- a fused chain of 16 adds over 480 MiB took 0.1208 ms (spread 1.3%), one add 0.1221 ms
  -- (spread 1.7%): its 7.55e+09 extra bytes of on-chip traffic cost no time beyond noise
  -- (the values stay in registers), so this is a lower bound, those bytes over the noise;
  -- the sweep's best in cache was 4967.6 GB/s
  l2_bandwidth = 1.787e+15,
  -- memory sweep, z = x + y (f32, 3 tensors; bytes = working set):
  --         48 KiB     47.4 GB/s  (spread 17.0%)
  --        240 KiB    155.3 GB/s  (spread 18.1%)
  --       1008 KiB    571.5 GB/s  (spread 18.5%)
  --       4080 KiB   1853.6 GB/s  (spread 18.2%)
  --      16368 KiB   4967.6 GB/s  (spread 14.3%)
  --      65520 KiB   4052.0 GB/s  (spread 6.7%)
  --     262128 KiB   4176.4 GB/s  (spread 2.2%)
  --     491520 KiB   4286.4 GB/s  (spread 1.1%)
  -- sizes from 4 times the cache up give 4231.4 GB/s; the simulator adds the on-chip
  -- traffic of a lone op (B / l2_bandwidth), so this is the figure that makes its time
  -- 4231.4 GB/s
  l3_bandwidth = 4.241e+12,
  -- the probe did not spill on this register budget: the L2 bandwidth stands in
  local_bandwidth = 1.787e+15,
  -- 32 adds of 256 floats, one kernel each, back to back: 0.1419 ms (spread 9.8%), / 32
  launch_us = 4.434,
  -- a fused chain of 4 adds over 10485760 floats in 1 tile: 0.03574 ms (spread 4.4%); in 64
  -- tiles: 0.03574 ms (spread 4.4%) (no slower: 0)
  tile_us = 0,
  -- f32: a 8192 x 8192 x 8192 matmul, 21.64 ms (spread 0.1%)
  -- f16: a 8192 x 8192 x 8192 matmul, 1.676 ms (spread 0.6%)
  -- bf16: a 8192 x 8192 x 8192 matmul, 1.593 ms (spread 5.3%)
  matrix_flops = { f32 = 5.083e+13, f16 = 6.577e+14, bf16 = 6.923e+14 },
  -- 16 fused GELUs (tanh form) over 67108864 floats: 0.9845 ms (spread 0.2%), 1.07e+10
  -- FLOPs as the registry counts them (10 per GELU). 16 fused multiplies: 0.1908 ms (spread
  -- 0.8%), 5.76e+12 FLOP/s (memory-bound or not, the simpler op runs at a different rate
  -- per counted FLOP)
  vector_flops = { f32 = 1.096e+13 },
  -- the most a CUDA thread can hold (the ISA's limit)
  registers = 255,
  -- addresses and indices of a generated kernel: not measured
  reserved_registers = 16,
  -- the generated kernels compute one element per thread
  elements_per_thread = 1,
  -- not measured: one device has no interconnect; the memory bandwidth stands in (ranks on
  -- one host share it)
  link_bandwidth = 4.231e+12,
  -- not measured: a kernel launch stands in for a ring step
  link_latency_us = 4.434,
  -- compute and memory traffic overlap on an out-of-order CPU and on a GPU: a kernel takes
  -- the longer of the two (not measured apart)
  overlap = true,
}
