-- table.move over a huge empty range: writes nil into nil, no allocation.
return { filter = function(req, offer)
	table.move({}, 1, 1e15, 2, {})
	return true
end }
