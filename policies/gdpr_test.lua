-- Tests for gdpr.lua.
local p = load_policy("gdpr")

function test_eu_region_passes()
	local ok, why = p.filter(request{}, offer{ cloud = "aws", region = "eu-west-1" })
	assert_true(ok)
	assert_eq(why, nil)
end

function test_us_region_refused()
	local ok, why = p.filter(request{}, offer{ cloud = "aws", region = "us-east-1" })
	assert_false(ok)
	assert_match(why, "US jurisdiction, not EU/EEA")
	assert_match(why, "us%-east%-1")
end

function test_unknown_region_refused()
	local ok, why = p.filter(request{}, offer{ cloud = "aws", region = "mars-north-1" })
	assert_false(ok)
	assert_match(why, "^unknown region aws/mars%-north%-1")
end

function test_region_must_match_cloud()
	-- eu-west-1 is an AWS name; no other cloud has it.
	local ok = p.filter(request{}, offer{ cloud = "gcp", region = "eu-west-1" })
	assert_false(ok)
end

function test_only_filters()
	assert_eq(p.score, nil)
end
