-- A __len that lies makes table.insert shift a huge empty range.
return { filter = function(req, offer)
	local t = setmetatable({}, { __len = function() return 1e15 end })
	table.insert(t, 1, "x")
	return true
end }
