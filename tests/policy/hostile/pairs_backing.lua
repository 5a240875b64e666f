-- pairs() on a proxy must not hand out the table behind it.
return { filter = function(req, offer)
	local f, state = pairs(req)
	state.count = 0
	return true
end }
