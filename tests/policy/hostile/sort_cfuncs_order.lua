-- The same with a C order function, on 2^26 positions: small enough to
-- start, so each comparison must be charged (and the clock checked).
return { filter = function(req, offer)
	local t = setmetatable({}, { __len = function() return 0x4000000 end,
		__index = rawlen, __newindex = rawequal })
	table.sort(t, rawequal)
	return true
end }
