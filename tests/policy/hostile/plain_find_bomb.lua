-- A plain find of a long needle in a long haystack, repeated.
return { filter = function(req, offer)
	local hay = string.rep("a", 1000000)
	local needle = string.rep("a", 100000) .. "b"
	for i = 1, 1000 do hay:find(needle, 1, true) end
	return true
end }
