-- cost.lua -- prefer the cheapest offer per GPU-hour.
--
-- A placement policy is a Lua file that returns a table with
--   filter(req, offer) -> ok[, reason]   (refuse an offer: return false, "why")
--   score(req, offer)  -> number         (lower is better; scores of all
--                                          listed policies are added)
-- `req` is the pool being planned and `offer` one thing that can be bought;
-- both are read-only.  `gpubroker help policy` lists their fields and the
-- gb.* helpers; `gpubroker policy test` runs the *_test.lua files.
--
-- This policy only scores.  The score is in USD per *useful* GPU-hour:
--
--   score = offer.price / min(offer.gpu_count, req.gpu.count)
--
-- so an 8-GPU instance bought for a pool that needs 4 GPUs per instance
-- costs twice its per-GPU price (you pay for the idle half): the cheapest
-- total for the pool wins.  With req.gpu.count >= offer.gpu_count this is
-- simply offer.price_per_gpu_hour.
--
-- By purpose:
--   training, dev  the plain price; spot is as good as any capacity here
--                  (pair with training-spot-first to actively prefer it).
--   inference      spot offers get a 15% penalty: a reclaimed serving node
--                  costs more than its price (cold starts, dropped
--                  requests), so on-demand wins unless spot is clearly
--                  cheaper.  Pair with inference-reliable to forbid spot.
--
-- Other policies add to this score, so their units are chosen to be read
-- as "USD per GPU-hour equivalents" (see data-locality, green).

local INFERENCE_SPOT_PENALTY = 1.15

local function score(req, offer)
	local useful = offer.gpu_count
	local want = req.gpu.count
	if want and want > 0 and want < useful then
		useful = want
	end
	if useful <= 0 then
		return offer.price
	end
	local s = offer.price / useful
	if req.purpose == "inference" and offer.capacity == "spot" then
		s = s * INFERENCE_SPOT_PENALTY
	end
	return s
end

return { score = score }
