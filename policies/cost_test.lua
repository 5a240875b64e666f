-- Tests for cost.lua: run with `gpubroker policy test policies`.
local p = load_policy("cost")

function test_score_is_price_per_gpu_hour()
	local req = request{ gpu = { count = 8 } }
	local o = offer{ price = 80, gpu_count = 8 }
	assert_near(p.score(req, o), 10)
end

function test_cheapest_first()
	local req = request{ gpu = { count = 8 } }
	local cheap = offer{ price = 40, gpu_count = 8 }
	local dear = offer{ price = 98.32, gpu_count = 8 }
	assert_true(p.score(req, cheap) < p.score(req, dear))
end

function test_unused_gpus_are_paid_for()
	-- 4 GPUs wanted: an 8-GPU box at 80/h is 20 per useful GPU-hour,
	-- a 4-GPU box at 48/h (12/GPU) is cheaper overall.
	local req = request{ gpu = { count = 4 } }
	local big = offer{ price = 80, gpu_count = 8 }
	local small = offer{ price = 48, gpu_count = 4 }
	assert_near(p.score(req, big), 20)
	assert_near(p.score(req, small), 12)
end

function test_inference_spot_penalty()
	local req = request{ purpose = "inference", gpu = { count = 1 } }
	local od = offer{ price = 10, gpu_count = 1, capacity = "on-demand" }
	local spot = offer{ price = 10, gpu_count = 1, capacity = "spot" }
	assert_near(p.score(req, od), 10)
	assert_near(p.score(req, spot), 11.5)
end

function test_training_spot_not_penalised()
	local req = request{ purpose = "training", gpu = { count = 1 } }
	local spot = offer{ price = 3, gpu_count = 1, capacity = "spot" }
	assert_near(p.score(req, spot), 3)
end

function test_no_filter()
	assert_eq(p.filter, nil)
end
