-- table.concat over 2^32 positions read by a C __index: one C loop.
return { filter = function(req, offer)
	local t = setmetatable({}, { __index = rawlen })
	return #table.concat(t, "", 1, 0x100000000) > 0
end }
