-- Doubling a string with the .. operator.
return { filter = function(req, offer)
	local s = "x"
	for i = 1, 64 do s = s .. s end
	return #s > 0
end }
