-- inference-reliable.lua -- serving runs on capacity that stays.
--
-- filter, for purpose "inference" only: refuse spot offers; on-demand and
-- reserved pass.  A spot instance can be reclaimed with two minutes'
-- notice (or none); a serving pool losing nodes drops requests.  Training
-- and dev pools pass untouched.
--
-- This is stricter than the default inference capacity list
-- ([on-demand]): it also holds when a pool author lists spot, so an
-- organisation can make it an org-wide rule.

local function filter(req, offer)
	if req.purpose == "inference" and offer.capacity == "spot" then
		return false, "spot capacity can be reclaimed at any time; " ..
			"inference pools run on on-demand or reserved capacity"
	end
	return true
end

return { filter = filter }
