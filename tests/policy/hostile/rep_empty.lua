-- string.rep of an empty piece (and separator) a maxinteger times: Lua's
-- own loop runs n - 1 times in C, where no hook fires; must return "" at
-- once.
return { filter = function(req, offer)
	local a = string.rep("", math.maxinteger)
	local b = string.rep("", math.maxinteger, "")
	local c = (""):rep(math.maxinteger)
	error("rep returned " .. #a .. "/" .. #b .. "/" .. #c)
end }
