-- h200_run2.lua (a run of fuseeng calibrate, kept to compare): this GPU measured by fuseeng calibrate (fuseeng 0.1.0) on 2026-11-29 21:43 UTC.
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
  -- a fused chain of 16 adds over 480 MiB took 0.1203 ms (spread 1.1%), one add 0.1211 ms
  -- (spread 1.2%): its 7.55e+09 extra bytes of on-chip traffic cost no time beyond noise
  -- (the values stay in registers), so this is a lower bound, those bytes over the noise;
  -- the sweep's best in cache was 5544.4 GB/s
  l2_bandwidth = 2.523e+15,
  -- memory sweep, z = x + y (f32, 3 tensors; bytes = working set):
  --         48 KiB     42.1 GB/s  (spread 15.2%)
  --        240 KiB    313.9 GB/s  (spread 16.1%)
  --       1008 KiB   1058.7 GB/s  (spread 15.2%)
  --       4080 KiB   3003.5 GB/s  (spread 11.8%)
  --      16368 KiB   5544.4 GB/s  (spread 10.7%)
  --      65520 KiB   4099.3 GB/s  (spread 5.6%)
  --     262128 KiB   4248.3 GB/s  (spread 2.1%)
  --     491520 KiB   4380.7 GB/s  (spread 1.1%)
  -- sizes from 4 times the cache up give 4314.5 GB/s; the simulator adds the on-chip
  -- traffic of a lone op (B / l2_bandwidth), so this is the figure that makes its time
  -- 4314.5 GB/s
  l3_bandwidth = 4.322e+12,
  -- the probe did not spill on this register budget: the L2 bandwidth stands in
  local_bandwidth = 2.523e+15,
  -- 32 adds of 256 floats, one kernel each, back to back: 0.1716 ms (spread 9.9%), / 32
  launch_us = 5.361,
  -- a fused chain of 4 adds over 10485760 floats in 1 tile: 0.03418 ms (spread 4.0%); in 64
  -- tiles: 0.03414 ms (spread 3.7%) (no slower: 0)
  tile_us = 0,
  -- f32: a 8192 x 8192 x 8192 matmul, 21.51 ms (spread 0.2%)
  -- f16: a 8192 x 8192 x 8192 matmul, 1.657 ms (spread 3.3%)
  -- bf16: a 8192 x 8192 x 8192 matmul, 1.593 ms (spread 12.7%)
  matrix_flops = { f32 = 5.112e+13, f16 = 6.659e+14, bf16 = 6.926e+14 },
  -- 16 fused GELUs (tanh form) over 67108864 floats: 0.9784 ms (spread 0.1%), 1.07e+10
  -- FLOPs as the registry counts them (10 per GELU). 16 fused multiplies: 0.1897 ms (spread
  -- 0.6%), 5.82e+12 FLOP/s (memory-bound or not, the simpler op runs at a different rate
  -- per counted FLOP)
  vector_flops = { f32 = 1.103e+13 },
  -- the most a CUDA thread can hold (the ISA's limit)
  registers = 255,
  -- addresses and indices of a generated kernel: not measured
  reserved_registers = 16,
  -- the generated kernels compute one element per thread
  elements_per_thread = 1,
  -- not measured: one device has no interconnect; the memory bandwidth stands in (ranks on
  -- one host share it)
  link_bandwidth = 4.314e+12,
  -- not measured: a kernel launch stands in for a ring step
  link_latency_us = 5.361,
  -- compute and memory traffic overlap on an out-of-order CPU and on a GPU: a kernel takes
  -- the longer of the two (not measured apart)
  overlap = true,
  -- a 256 x 768 x 768 f32 matmul: 0.02461 ms (spread 7.7%), against 0.01127 ms at
  -- matrix_flops and the bandwidths
  library_us = 13.34,
  -- groups are priced as the kernels fuseeng's CUDA back end makes of them
  executor = "cuda",
  -- a column sum of [32768, 1024] floats runs 1024 threads: 1.292 ms (spread 0.4%), against
  -- 0.3409 ms at the memory bandwidth
  saturating_threads = 3927,
}
