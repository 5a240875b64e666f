-- A finalizer would run outside any call's limits.
return { filter = function(req, offer)
	setmetatable({}, { __gc = function() while true do end end })
	return true
end }
