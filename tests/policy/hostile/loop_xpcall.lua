-- The error handler itself loops, and the outer code keeps going.
return { score = function(req, offer)
	local n = 0
	while true do
		xpcall(function() while true do end end,
			function(e) while true do n = n + 1 end end)
	end
end }
