-- gb.log calls __tostring: the budget still applies.
return { filter = function(req, offer)
	gb.log(setmetatable({}, { __tostring = function() while true do end end }))
	return true
end }
