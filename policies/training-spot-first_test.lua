-- Tests for training-spot-first.lua.
local p = load_policy("training-spot-first")
local cost = load_policy("cost")

function test_training_spot_scores_half_price_below()
	local req = request{ purpose = "training" }
	local spot = offer{ capacity = "spot", price = 16, gpu_count = 8 }
	assert_near(p.score(req, spot), -1)
end

function test_training_on_demand_scores_zero()
	local req = request{ purpose = "training" }
	assert_eq(p.score(req, offer{ capacity = "on-demand" }), 0)
	assert_eq(p.score(req, offer{ capacity = "reserved" }), 0)
end

function test_other_purposes_untouched()
	local spot = offer{ capacity = "spot" }
	assert_eq(p.score(request{ purpose = "inference" }, spot), 0)
	assert_eq(p.score(request{ purpose = "dev" }, spot), 0)
end

function test_with_cost_spot_wins_unless_twice_as_dear()
	local req = request{ purpose = "training", gpu = { count = 8 } }
	local function total(o) return cost.score(req, o) + p.score(req, o) end
	local od = offer{ capacity = "on-demand", price = 80, gpu_count = 8 }
	local spot = offer{ capacity = "spot", price = 120, gpu_count = 8 }
	assert_true(total(spot) < total(od), "spot at 1.5x still wins")
	local pricey = offer{ capacity = "spot", price = 170, gpu_count = 8 }
	assert_true(total(pricey) > total(od), "spot above 2x loses")
end

function test_no_filter()
	assert_eq(p.filter, nil)
end
