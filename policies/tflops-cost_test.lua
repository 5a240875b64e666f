-- Tests for tflops-cost.lua: run with `gpubroker policy test policies`.
local p = load_policy("tflops-cost")

function test_cloud_offer_uses_the_data_sheet()
	-- p5.48xlarge: 8 x H100 at 98.32 USD/h, 989 dense BF16 TFLOP/s each
	local o = offer{ gpu_model = "H100", gpu_count = 8, price = 98.32 }
	local req = request{ gpu = { count = 8 } }
	assert_near(p.score(req, o), 98.32 / (8 * 989 / 1000), 1e-9)
end

function test_measured_figures_win_over_the_data_sheet()
	-- an on-prem H100 node measured at 720.9 BF16 TFLOP/s per GPU
	local o = offer{ cloud = "onprem", region = "fra-dc1", zone = "",
		instance_type = "dgx-h100-8", gpu_model = "H100", gpu_count = 8,
		price = 15.6,
		bench = { bf16_tflops = 720.9, fp16_tflops = 712.4,
		          fp32_tflops = 58.1, nodes_free = 2, per = "gpu" } }
	local req = request{ gpu = { count = 8 } }
	assert_near(p.score(req, o), 15.6 / (8 * 720.9 / 1000), 1e-9)
	local t, how = p.tflops(o)
	assert_near(t, 720.9)
	assert_eq(how, "measured bf16")
end

function test_onprem_and_cloud_compete_on_effective_cost()
	-- A degraded on-prem A100 box: cheap per GPU-hour, but it measures
	-- only 100 BF16 TFLOP/s per GPU.  The cloud A100 at its data-sheet
	-- 312 costs more per hour and less per unit of compute.
	local req = request{ gpu = { count = 8, models = { "A100-80GB" } } }
	local onprem = offer{ cloud = "onprem", gpu_model = "A100-80GB",
		gpu_count = 8, price = 12.0, bench = { bf16_tflops = 100 } }
	local cloud = offer{ cloud = "gcp", gpu_model = "A100-80GB",
		gpu_count = 8, price = 30.0 }
	assert_true(onprem.price < cloud.price)
	assert_near(p.score(req, onprem), 12.0 / 0.8, 1e-9)     -- 15.0
	assert_near(p.score(req, cloud), 30.0 / 2.496, 1e-9)    -- 12.02
	assert_true(p.score(req, cloud) < p.score(req, onprem))
	-- the same on-prem box healthy (300 TFLOP/s) wins
	local healthy = offer{ cloud = "onprem", gpu_model = "A100-80GB",
		gpu_count = 8, price = 12.0, bench = { bf16_tflops = 300 } }
	assert_true(p.score(req, healthy) < p.score(req, cloud))
end

function test_fp16_for_gpus_without_bf16()
	local t4 = offer{ gpu_model = "T4", gpu_count = 1, price = 0.526 }
	assert_near(p.score(request{}, t4), 0.526 / (65 / 1000), 1e-9)
	local measured = offer{ gpu_model = "V100", gpu_count = 1, price = 3,
		bench = { fp16_tflops = 100 } }
	local t, how = p.tflops(measured)
	assert_near(t, 100)
	assert_eq(how, "measured fp16")
end

function test_fp32_only_bench_scales_the_data_sheet()
	-- the probe measured FP32 only (no tensor method): half the FP32
	-- peak means half the data-sheet tensor figure
	local o = offer{ gpu_model = "L4", gpu_count = 1, price = 0.8,
		bench = { fp32_tflops = 15.15 } }
	local t, how = p.tflops(o)
	assert_near(t, 60.5, 1e-9)
	assert_eq(how, "data sheet x measured fp32")
	-- a figure above the peak is not a bonus
	local fast = offer{ gpu_model = "L4", gpu_count = 1, price = 0.8,
		bench = { fp32_tflops = 40 } }
	assert_near(p.tflops(fast), 121, 1e-9)
end

function test_mig_slice_uses_its_scaled_figure()
	-- a 1g.10gb slice: 1/7 of an H100 at 1/7 of the price
	local slice = offer{ cloud = "onprem", gpu_model = "H100", gpu_count = 1,
		gpu_memory_gb = 10, instance_type = "dgx-h100-8m-mig-1g.10gb",
		price = 0.3, bench = { bf16_tflops = 102.99, slice_fraction = 0.1429 } }
	assert_near(p.score(request{}, slice), 0.3 / 0.10299, 1e-9)
end

function test_unused_gpus_are_paid_for()
	local req = request{ gpu = { count = 4 } }
	local o = offer{ gpu_model = "H100", gpu_count = 8, price = 98.32 }
	assert_near(p.score(req, o), 98.32 / (4 * 989 / 1000), 1e-9)
end

function test_unknown_model_gets_the_default()
	local o = offer{ gpu_model = "X9000", gpu_count = 2, price = 4 }
	assert_near(p.score(request{}, o), 4 / (1 * 100 / 1000), 1e-9)
	local t, how = p.tflops(o)
	assert_eq(how, "default")
end

function test_zero_or_bogus_bench_figures_are_ignored()
	local o = offer{ gpu_model = "H100", gpu_count = 1, price = 10,
		bench = { bf16_tflops = 0, fp16_tflops = -1 } }
	assert_near(p.tflops(o), 989)
end

function test_no_filter()
	assert_eq(p.filter, nil)
end
