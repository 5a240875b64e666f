-- Tests for inference-reliable.lua.
local p = load_policy("inference-reliable")

function test_inference_refuses_spot()
	local ok, why = p.filter(request{ purpose = "inference" }, offer{ capacity = "spot" })
	assert_false(ok)
	assert_match(why, "on%-demand or reserved")
end

function test_inference_allows_on_demand_and_reserved()
	local req = request{ purpose = "inference" }
	assert_true(p.filter(req, offer{ capacity = "on-demand" }))
	assert_true(p.filter(req, offer{ capacity = "reserved" }))
end

function test_training_and_dev_untouched()
	assert_true(p.filter(request{ purpose = "training" }, offer{ capacity = "spot" }))
	assert_true(p.filter(request{ purpose = "dev" }, offer{ capacity = "spot" }))
end

function test_even_when_the_pool_lists_spot()
	local req = request{ purpose = "inference", capacity = { "spot", "on-demand" } }
	assert_false(p.filter(req, offer{ capacity = "spot" }))
end
