-- data-locality.lua -- run close to the data.
--
-- Applies only when the pool names its data's region
-- (placement.data: {region: ...}, seen here as req.data_region); pools
-- without one pass untouched with a score of 0.
--
-- filter: refuse offers whose region is farther than a maximum from the
--   data region, great-circle distance between the regions' coordinates:
--     default 2000 km (roughly: the same continent), overridable per pool
--     with the label  max-data-distance-km: "500".
--   Offers in regions without known coordinates are refused, and a data
--   region gpubroker does not know refuses everything (with that reason):
--   a typo must not silently place the pool anywhere.
-- score: distance_km / 100, i.e. every 100 km weighs like 1 USD per
--   GPU-hour next to the cost policy: a region 1000 km away must be 10
--   USD/GPU-hour cheaper to win over the data's own region.

local DEFAULT_MAX_KM = 2000
local KM_PER_POINT = 100

local region_of = gb.region
local distance = gb.distance_km

-- The maximum for a request: the label, or the default.
local function max_km(req)
	local label = req.labels["max-data-distance-km"]
	if label == nil then
		return DEFAULT_MAX_KM
	end
	local n = tonumber(label)
	if n == nil or n < 0 then
		-- An error (not a refusal): the plan fails and says why.
		error("label max-data-distance-km must be a number of km >= 0, got '" ..
			tostring(label) .. "'", 0)
	end
	return n
end

-- Distance in km from the data to the offer, or nil and a reason.
local function km(req, offer)
	local data = region_of(req.data_region)
	if data == nil then
		return nil, "unknown data region " .. req.data_region
	end
	local r = region_of(offer)
	if r == nil then
		return nil, "unknown region " .. offer.cloud .. "/" .. offer.region ..
			": distance to the data cannot be computed"
	end
	return distance(data, r)
end

local function filter(req, offer)
	if req.data_region == nil then
		return true
	end
	local d, why = km(req, offer)
	if d == nil then
		return false, why
	end
	local limit = max_km(req)
	if d > limit then
		return false, string.format("%s is %.0f km from the data in %s (max %.0f km)",
			offer.region, d, req.data_region, limit)
	end
	return true
end

local function score(req, offer)
	if req.data_region == nil then
		return 0
	end
	-- Only offers that passed the filter are scored, so d is known.
	local d = km(req, offer) or 0
	return d / KM_PER_POINT
end

return { filter = filter, score = score }
