-- gcu_big.lua: a larger accelerator for A/B runs against gcu.lua: a 50 MiB
-- L2 and 3 TB/s device memory (HBM class), faster launches, and compute
-- that overlaps memory traffic. Groups that must be tiled on gcu often fit
-- whole here, so fusion policies that reason about L2 decide differently.
-- Illustrative numbers, not a vendor's datasheet.
--
-- Units: bytes, bytes per second, FLOP per second, microseconds.
local MiB, GiB = 1024 * 1024, 1024 * 1024 * 1024

return {
  name = "gcu_big",
  description = "large accelerator: 50 MiB L2 at 10 TB/s, 3 TB/s device memory, 5 us launch",

  l2_bytes = 50 * MiB,
  memory_bytes = 80 * GiB,
  l2_bandwidth = 10e12,
  l3_bandwidth = 3e12,
  local_bandwidth = 5e12,

  launch_us = 5,
  tile_us = 0.5,

  matrix_flops = { f32 = 60e12, f16 = 400e12, bf16 = 400e12, i8 = 800e12 },
  vector_flops = { f32 = 30e12, f16 = 60e12, bf16 = 60e12 },

  registers = 255,
  reserved_registers = 24,
  elements_per_thread = 8,

  link_bandwidth = 400e9,
  link_latency_us = 3,

  overlap = true,
}
