-- training-spot-first.lua -- training pools prefer spot capacity.
--
-- Training jobs checkpoint and restart, so spot's 60-90% discount is
-- usually worth its interruptions.  The pool's capacity list already
-- decides which kinds are *allowed*; this policy decides which is
-- *preferred* among the offers that remain.
--
-- score only, for purpose "training":
--   spot offers score  -0.5 x price per GPU-hour
--   other offers score  0
-- Added to the cost policy's score (the price per GPU-hour) this counts
-- spot at half its price: spot wins unless on-demand is more than twice
-- cheaper.  Without cost, spot simply ranks first.
--
-- Decision: inference and dev pools are left alone (score 0).  Refusing
-- spot for serving is inference-reliable's job; dev pools are short and
-- interactive, and their capacity list says what the user accepts.

local SPOT_WEIGHT = -0.5

local function score(req, offer)
	if req.purpose ~= "training" or offer.capacity ~= "spot" then
		return 0
	end
	return SPOT_WEIGHT * offer.price_per_gpu_hour
end

return { score = score }
