-- expect-rc: 1
-- expect: refused by ansi_reason
-- A reason with terminal escapes, CR/LF and NUL: never printed raw.
return {filter = function(req, offer)
	return false, "\27[2J\27[31mowned\r\nFAKE: line\0nul"
end}
