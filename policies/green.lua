-- green.lua -- prefer low-carbon grids.
--
-- score only: the estimated emissions of running the offer for one hour,
-- in kg CO2e:
--
--   score = carbon (gCO2e/kWh of the region's grid, from gb.region)
--           x estimated power of the instance (kW)
--           / 1000
--
-- Power assumption: each GPU draws its board power (TDP) at full load,
-- from the table below, and the rest of the machine plus the data
-- centre's cooling add 50% on top (host CPUs/RAM ~20%, PUE ~1.25):
--
--   kW = gpu_count x TDP(gpu_model) x 1.5
--
-- e.g. 8 x H100 (0.7 kW) = 8.4 kW; on a 300 g/kWh grid: 2.5 kg/h.
-- Next to the cost policy, 1 kg CO2e per hour weighs like 1 USD per
-- GPU-hour.  Real draw is lower when GPUs idle, but the ranking between
-- regions (what this policy is for) does not depend on it.
--
-- Regions without a carbon figure (unknown region, or an on-prem site
-- registered without one) count as a 500 g/kWh grid, about the world
-- average, and are noted in the plan's log.

local OVERHEAD = 1.5
local UNKNOWN_G_PER_KWH = 500
local DEFAULT_TDP_KW = 0.4

-- Board power in kW, by canonical GPU model.
local TDP_KW = {
	H200 = 0.7, H100 = 0.7, ["A100-80GB"] = 0.4, A100 = 0.4,
	L40S = 0.35, L4 = 0.072, A10G = 0.15, A10 = 0.15, T4 = 0.07,
	V100 = 0.3, B200 = 1.0, MI300X = 0.75,
}

local region_of = gb.region

local function kw(offer)
	local tdp = TDP_KW[offer.gpu_model] or DEFAULT_TDP_KW
	return offer.gpu_count * tdp * OVERHEAD
end

local function score(req, offer)
	local r = region_of(offer)
	local g = r and r.carbon
	if g == nil or g <= 0 then
		gb.log("no carbon figure for " .. offer.cloud .. "/" .. offer.region ..
			"; assuming " .. UNKNOWN_G_PER_KWH .. " g/kWh")
		g = UNKNOWN_G_PER_KWH
	end
	return g * kw(offer) / 1000
end

return { score = score }
