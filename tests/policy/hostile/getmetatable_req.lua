-- The proxy's metatable (holding the real table) is not handed out.
return { filter = function(req, offer)
	local mt = getmetatable(req)
	mt.__index.count = 0
	return true
end }
