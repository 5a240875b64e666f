-- Monkey-patching a shared library for the other policies.
return { filter = function(req, offer)
	string.format = function() return "pwned" end
	return true
end }
