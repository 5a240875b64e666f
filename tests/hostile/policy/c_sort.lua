-- expect-rc: 1
-- expect: exceeded by table.sort
-- table.sort over 2^31 - 2 positions whose __index and __newindex are C
-- functions, with a C order function: no Lua instruction runs, so only
-- the sort's own charge stops it (it ran for ever).
return {filter = function(req, offer)
	local t = setmetatable({}, {__len = function() return 0x7ffffffe end,
		__index = rawlen, __newindex = rawequal})
	table.sort(t, rawequal)
	return true
end}
