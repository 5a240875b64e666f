-- Tests for budget.lua.
local p = load_policy("budget")

function test_no_limits_pass()
	assert_true(p.filter(request{ count = 100 }, offer{ price = 1000 }))
end

function test_pool_limit()
	local req = request{ count = 2, max_price_per_hour = 150 }
	assert_true(p.filter(req, offer{ price = 75 }))
	local ok, why = p.filter(req, offer{ price = 98.32 })
	assert_false(ok)
	assert_eq(why, "2 x $98.32/h = $196.64/h exceeds the pool limit of $150.00/h")
end

function test_autoscaling_pool_counts_its_max()
	local req = request{ purpose = "inference", count = 1, min = 1, max = 4,
		max_price_per_hour = 100 }
	assert_true(p.filter(req, offer{ price = 25 }))
	assert_false(p.filter(req, offer{ price = 26 }))
end

function test_team_hourly_limit()
	local req = request{ count = 1, team = { name = "research", max_price_per_hour = 50 } }
	assert_true(p.filter(req, offer{ price = 50 }))
	local ok, why = p.filter(req, offer{ price = 60 })
	assert_false(ok)
	assert_match(why, "team research's limit of %$50%.00/h")
end

function test_team_gpu_limit()
	local req = request{ count = 2, team = { name = "ml", max_gpus = 8 } }
	assert_true(p.filter(req, offer{ gpu_count = 4 }))
	local ok, why = p.filter(req, offer{ gpu_count = 8 })
	assert_false(ok)
	assert_eq(why, "16 GPUs exceed team ml's limit of 8")
end

function test_monthly_budget_with_ttl()
	local team = { name = "ml", monthly_budget = 1000 }
	-- 10 h at $98.32/h = $983.20: fits; 11 h does not
	assert_true(p.filter(request{ team = team, ttl = 10 * 3600 }, offer{ price = 98.32 }))
	local ok, why = p.filter(request{ team = team, ttl = 11 * 3600 }, offer{ price = 98.32 })
	assert_false(ok)
	assert_match(why, "monthly budget of %$1000%.00")
end

function test_monthly_budget_caps_ttl_at_a_month()
	local team = { name = "ml", monthly_budget = 7300 }
	-- a year-long ttl counts as 730 h: $10/h x 730 h = $7300, fits
	assert_true(p.filter(request{ team = team, ttl = 365 * 86400 }, offer{ price = 10 }))
end

function test_no_ttl_no_budget_check()
	local req = request{ team = { name = "ml", monthly_budget = 1 } }
	assert_true(p.filter(req, offer{ price = 98.32 }))
end

function test_max_per_gpu_hour_param()
	assert_eq(p.params.max_per_gpu_hour.type, "number")
	local req = request{}
	-- 8 GPUs at $32/h is $4 per GPU-hour: over a cap of 3, under 5
	local o = offer{ price = 32, gpu_count = 8 }
	local ok, why = p.filter(req, o, { max_per_gpu_hour = 3 })
	assert_false(ok)
	assert_eq(why, "$4.00 per GPU-hour exceeds the pool's cap of $3.00 (budget max_per_gpu_hour)")
	assert_true(p.filter(req, o, { max_per_gpu_hour = 5 }))
	-- no cap (the default): no refusal
	assert_true(p.filter(req, o, {}))
end
