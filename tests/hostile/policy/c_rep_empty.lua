-- expect-rc: 1
-- expect: rep returned 0/0
-- string.rep of an empty piece (and separator) math.maxinteger times:
-- Lua's own loop ran n - 1 times in C, where no hook fires (it never
-- answered, and pinned an API worker); now "" at once.
return {filter = function(req, offer)
	local a, b = string.rep("", math.maxinteger), ("").rep("", math.maxinteger, "")
	error("rep returned " .. #a .. "/" .. #b)
end}
