-- Each comparison of two distinct 16 MB strings is one instruction but
-- scans 16 MB: the instruction budget alone would allow hours of it.  The
-- per-call time limit stops it.
return { filter = function(req, offer)
	local a = string.rep("x", 16 * 1024 * 1024)
	local b = string.rep("x", 16 * 1024 * 1024)
	local same = 0
	for i = 1, 1e6 do
		if a == b then same = same + 1 end
	end
	return same > 0
end }
