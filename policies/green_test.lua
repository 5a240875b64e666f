-- Tests for green.lua.
local p = load_policy("green")

function test_score_is_kg_per_hour()
	local r = gb.region("eu-west-1", "aws")
	local o = offer{ region = "eu-west-1", gpu_model = "H100", gpu_count = 8 }
	-- 8 x 0.7 kW x 1.5 = 8.4 kW
	assert_near(p.score(request{}, o), r.carbon * 8.4 / 1000, 1e-9)
end

function test_cleaner_grid_wins()
	local a = gb.region("eu-west-1", "aws")
	local b = gb.region("us-east-1", "aws")
	local oa = offer{ region = "eu-west-1" }
	local ob = offer{ region = "us-east-1" }
	assert_eq(p.score(request{}, oa) < p.score(request{}, ob), a.carbon < b.carbon)
end

function test_unknown_model_uses_default_power()
	local r = gb.region("eu-west-1", "aws")
	local o = offer{ region = "eu-west-1", gpu_model = "X9000", gpu_count = 2 }
	assert_near(p.score(request{}, o), r.carbon * 2 * 0.4 * 1.5 / 1000, 1e-9)
end

function test_unknown_region_assumes_world_average()
	local o = offer{ region = "moon-base-1", gpu_model = "L4", gpu_count = 1 }
	assert_near(p.score(request{}, o), 500 * 0.072 * 1.5 / 1000, 1e-9)
end

function test_more_gpus_more_carbon()
	local small = offer{ region = "eu-west-1", gpu_count = 1 }
	local big = offer{ region = "eu-west-1", gpu_count = 8 }
	assert_true(p.score(request{}, small) < p.score(request{}, big))
end
