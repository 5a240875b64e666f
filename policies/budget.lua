-- budget.lua -- stay inside the pool's and the team's money limits.
--
-- filter only.  The pool's cost is the offer's price times the most
-- instances the pool may run (req.max: for a fixed pool that is its
-- count, for an autoscaling pool the top of its range):
--
--   pool_per_hour = offer.price x req.max
--
-- An offer is refused when
--   1. pool_per_hour > req.max_price_per_hour        (the pool's own limit)
--   2. pool_per_hour > req.team.max_price_per_hour   (the team's hourly cap)
--   3. offer.gpu_count x req.max > req.team.max_gpus (the team's GPU cap)
--   4. the pool has a ttl and running it for that long (at most one
--      month, 730 h) costs more than req.team.monthly_budget.
--   5. the offer's price per GPU-hour > the max_per_gpu_hour parameter,
--      set per pool:
--        policy: [{name: budget, args: {max_per_gpu_hour: 3}}]
-- Limits that are not set (nil) do not apply.
--
-- Parameters (`params` below) reach filter and score as their third
-- argument: `args.max_per_gpu_hour` is the pool's value, or the default
-- (nil here) when the pool lists the policy by name only.
--
-- What this policy cannot see: the team's *other* pools.  The caps above
-- are checked for this pool alone; the engine accounts for what is
-- already running.  A pool without a ttl is not checked against the
-- monthly budget (its lifetime is unknown).

local HOURS_PER_MONTH = 730

local function money(x)
	return string.format("$%.2f", x)
end

local params = {
	max_per_gpu_hour = {type = "number", default = nil,
		doc = "refuse offers dearer than this, USD per GPU-hour (default: no cap)"},
}

local function filter(req, offer, args)
	local n = req.max or req.count
	local cap = args and args.max_per_gpu_hour

	if cap and offer.price_per_gpu_hour > cap then
		return false, string.format("%s per GPU-hour exceeds the pool's cap of %s (budget max_per_gpu_hour)",
			money(offer.price_per_gpu_hour), money(cap))
	end
	local per_hour = offer.price * n
	local team = req.team

	if req.max_price_per_hour and per_hour > req.max_price_per_hour then
		return false, string.format("%d x %s/h = %s/h exceeds the pool limit of %s/h",
			n, money(offer.price), money(per_hour), money(req.max_price_per_hour))
	end
	if team.max_price_per_hour and per_hour > team.max_price_per_hour then
		return false, string.format("%s/h exceeds team %s's limit of %s/h",
			money(per_hour), team.name, money(team.max_price_per_hour))
	end
	if team.max_gpus and offer.gpu_count * n > team.max_gpus then
		return false, string.format("%d GPUs exceed team %s's limit of %d",
			offer.gpu_count * n, team.name, team.max_gpus)
	end
	if team.monthly_budget and req.ttl then
		local hours = math.min(req.ttl / 3600, HOURS_PER_MONTH)
		local total = per_hour * hours
		if total > team.monthly_budget then
			return false, string.format("%s over the %.0f h ttl exceeds team %s's monthly budget of %s",
				money(total), hours, team.name, money(team.monthly_budget))
		end
	end
	return true
end

return { filter = filter, params = params }
