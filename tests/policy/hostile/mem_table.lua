-- Fills memory with tables of big strings until the cap refuses.
return { filter = function(req, offer)
	local t = {}
	for i = 1, 1e7 do t[i] = { string.rep("x", 100000) .. i } end
	return true
end }
