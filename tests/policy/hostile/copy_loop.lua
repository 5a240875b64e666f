-- Copies a big string over and over, freeing each copy: memory stays
-- low but the work is huge.  The per-call allocation volume stops it.
return { filter = function(req, offer)
	local s = string.rep("x", 16 * 1024 * 1024)
	for i = 1, 1e6 do local t = s .. i end
	return true
end }
