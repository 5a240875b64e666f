-- Tests for data-locality.lua.  Distances: eu-west-1 (Dublin) to
-- us-east-1 (N. Virginia) is about 5,500 km.
local p = load_policy("data-locality")

local function between(x, lo, hi)
	return type(x) == "number" and x >= lo and x <= hi
end

function test_no_data_region_passes_with_zero_score()
	local req = request{}
	local o = offer{ region = "us-east-1" }
	assert_true(p.filter(req, o))
	assert_eq(p.score(req, o), 0)
end

function test_same_region_scores_zero()
	local req = request{ data_region = "eu-west-1" }
	local o = offer{ region = "eu-west-1" }
	assert_true(p.filter(req, o))
	assert_near(p.score(req, o), 0, 1e-6)
end

function test_far_region_refused_by_default()
	local req = request{ data_region = "eu-west-1" }
	local ok, why = p.filter(req, offer{ region = "us-east-1" })
	assert_false(ok)
	assert_match(why, "^us%-east%-1 is %d+ km from the data in eu%-west%-1 %(max 2000 km%)$")
end

function test_label_raises_the_maximum()
	local req = request{ data_region = "eu-west-1",
		labels = { ["max-data-distance-km"] = "8000" } }
	local o = offer{ region = "us-east-1" }
	assert_true(p.filter(req, o))
	-- about 5,500 km: 55 points
	assert_true(between(p.score(req, o), 50, 60), "score ~55")
end

function test_label_must_be_a_number()
	local req = request{ data_region = "eu-west-1",
		labels = { ["max-data-distance-km"] = "far" } }
	assert_error(function() p.filter(req, offer{ region = "eu-west-1" }) end,
		"max-data-distance-km must be a number")
end

function test_unknown_data_region_refuses()
	local req = request{ data_region = "atlantis-1" }
	local ok, why = p.filter(req, offer{ region = "eu-west-1" })
	assert_false(ok)
	assert_eq(why, "unknown data region atlantis-1")
end

function test_unknown_offer_region_refused()
	local req = request{ data_region = "eu-west-1" }
	local ok, why = p.filter(req, offer{ region = "nowhere-1" })
	assert_false(ok)
	assert_match(why, "unknown region aws/nowhere%-1")
end

function test_distance_helper()
	local d = gb.distance_km("eu-west-1", "us-east-1")
	assert_true(between(d, 5000, 6000), "Dublin-Virginia ~5,500 km, got " .. tostring(d))
	assert_near(gb.distance_km({ lat = 0, lon = 0 }, { lat = 0, lon = 0 }), 0)
	assert_eq(gb.distance_km("eu-west-1", "atlantis-1"), nil)
end
