-- table.sort over 2^31 - 2 positions whose reads and writes are C
-- functions (rawlen, rawequal): no Lua instruction ever runs, so only a
-- charge on the sort itself stops it.
return { filter = function(req, offer)
	local t = setmetatable({}, { __len = function() return 0x7ffffffe end,
		__index = rawlen, __newindex = rawequal })
	table.sort(t)
	return true
end }
