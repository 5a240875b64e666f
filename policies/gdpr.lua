-- gdpr.lua -- keep capacity inside the EU/EEA.
--
-- filter only: an offer passes when its region's legal jurisdiction is
-- "EU" (an EU or EEA member state, per gpubroker's region table; see
-- gb.region).  Everything else is refused with the reason, including:
--   - regions in the UK or Switzerland (adequacy decisions allow transfers
--     there, but this policy is the strict reading: EU/EEA soil only);
--   - regions gpubroker knows nothing about (an on-prem site that was not
--     registered with its country, a brand-new cloud region): without
--     facts there is no proof, so they are refused too.
--
-- Use it as an org-wide policy (broker config `org_policies`) when every
-- pool must comply, or list it in a pool's `policy:`.

-- Locals are resolved once when the file loads: cheaper per offer than
-- looking up the global `gb` every time.
local region_of = gb.region

-- Reasons are cached per region: an evaluation may see 100,000 offers
-- from a few dozen regions.
local refused = {}

local function filter(req, offer)
	-- gb.region(offer) is the offer's region (same as
	-- gb.region(offer.region, offer.cloud), without the lookups)
	local r = region_of(offer)
	if r == nil then
		return false, "unknown region " .. offer.cloud .. "/" ..
			offer.region .. ": cannot show it is in the EU/EEA"
	end
	if r.jurisdiction == "EU" then
		return true
	end
	local why = refused[r]
	if why == nil then
		why = "region " .. r.name .. " (" .. r.country .. ") is under " ..
			r.jurisdiction .. " jurisdiction, not EU/EEA"
		refused[r] = why
	end
	return false, why
end

return { filter = filter }
