-- host.lua: this development machine's CPU described as a "GCU", for
-- calibrating the simulator against real kernel timings (fuseeng bench).
-- APPROXIMATE: measured roughly on a 2-vCPU AMD EPYC (Zen 3) VM with a
-- 32 MiB last-level cache (playing the L2) and ~40 GB/s of DRAM bandwidth
-- (playing the L3); edit it for your machine. A "thread" is one AVX2 lane
-- group: 16 vector registers of which a kernel keeps 4 for addresses.
--
-- Units: bytes, bytes per second, FLOP per second, microseconds.
local MiB, GiB = 1024 * 1024, 1024 * 1024 * 1024

return {
  name = "host",
  description = "approximate: 2-core AVX2 CPU, 32 MiB LLC as L2, ~40 GB/s DRAM as L3",

  l2_bytes = 32 * MiB,
  memory_bytes = 16 * GiB,
  l2_bandwidth = 120e9,     -- streaming within the LLC, both cores
  l3_bandwidth = 40e9,      -- streaming from DRAM
  local_bandwidth = 200e9,  -- spills go to the stack, in L1

  launch_us = 5,            -- an OpenMP parallel region and its dispatch
  tile_us = 0.5,

  -- Kernels store f16/bf16 but compute in f32, so every dtype runs at the
  -- f32 rate: 2 cores x 2 FMA pipes x 8 lanes x 2 FLOP x ~2.6 GHz peak,
  -- of which OpenBLAS reaches ~70% and pointwise code ~25%.
  matrix_flops = { f32 = 115e9 },
  vector_flops = { f32 = 40e9 },

  registers = 16,
  reserved_registers = 4,
  elements_per_thread = 1,

  link_bandwidth = 20e9,    -- "ranks" share DRAM on one host
  link_latency_us = 1,

  overlap = true,
}
