-- A loop inside pcall, retried: the re-armed hook raises on every
-- instruction, so catching the error gains nothing.
return { filter = function(req, offer)
	while true do
		pcall(function() while true do end end)
	end
end }
