-- table.unpack of 500,000 values is one call but half a million pushes.
return { filter = function(req, offer)
	local t = {}
	for i = 1, 500000 do t[i] = i end
	local n = 0
	for i = 1, 1e6 do n = n + select("#", table.unpack(t)) end
	return n > 0
end }
