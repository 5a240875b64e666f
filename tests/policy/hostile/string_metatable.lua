-- Reaching the string metatable to replace string methods everywhere.
return { filter = function(req, offer)
	local mt = getmetatable("")
	mt.__index.upper = function() return "pwned" end
	return true
end }
