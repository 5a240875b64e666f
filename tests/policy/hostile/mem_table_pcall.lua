-- Keeps the memory it got and swallows the error: the evaluation fails
-- all the same.
local keep = {}
return { filter = function(req, offer)
	pcall(function()
		for i = 1, 1e7 do keep[i] = string.rep("y", 65536) .. i end
	end)
	return true
end }
