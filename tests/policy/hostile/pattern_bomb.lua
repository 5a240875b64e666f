-- Catastrophic backtracking: C time that no instruction hook sees.
return { filter = function(req, offer)
	local s = string.rep("a", 3000)
	return s:find(string.rep("a*", 30) .. "b") ~= nil
end }
