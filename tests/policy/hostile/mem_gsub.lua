-- gsub that multiplies its input each round.
return { filter = function(req, offer)
	local s = "aaaaaaaaaaaaaaaa"
	for i = 1, 40 do s = s:gsub("a", "aaaa") end
	return #s > 0
end }
