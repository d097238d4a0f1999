-- gcu.lua: the default machine, the GCU of seed 004 (GCU fusion for
-- Inductor): a 16 MiB on-chip L2 at 1 TB/s in front of device memory (L3)
-- at 100 GB/s, 10 us per kernel launch. Those four numbers and the 32 GB
-- of device memory are the seed's; the others are plausible values for an
-- accelerator of that class that the cost model also needs. They are
-- illustrative, not a vendor's datasheet.
--
-- Units: bytes, bytes per second, FLOP per second, microseconds. Every
-- field is required except description; an unknown field is an error.
-- docs/simulator.md ("Machine files") explains each one.
local MiB, GiB = 1024 * 1024, 1024 * 1024 * 1024

return {
  name = "gcu",
  description = "seed 004 GCU: 16 MiB L2 at 1 TB/s, 100 GB/s device memory, 10 us launch",

  l2_bytes = 16 * MiB,
  memory_bytes = 32 * GiB,
  l2_bandwidth = 1e12,
  l3_bandwidth = 100e9,
  -- Register spills land in local memory, cached on chip but written and
  -- read back with poor locality: between L2 and L3.
  local_bandwidth = 200e9,

  launch_us = 10,
  tile_us = 1,              -- loop step of a tiled (TLF) kernel

  matrix_flops = { f32 = 32e12, f16 = 128e12, bf16 = 128e12, i8 = 256e12 },
  vector_flops = { f32 = 8e12, f16 = 16e12, bf16 = 16e12 },

  registers = 255,          -- per thread, as the seeds' GPUs
  reserved_registers = 24,  -- addresses, indices, loop state
  elements_per_thread = 8,

  link_bandwidth = 50e9,    -- per rank, ring all_reduce
  link_latency_us = 5,

  overlap = false,          -- seed 004 adds transfer and compute times
}
