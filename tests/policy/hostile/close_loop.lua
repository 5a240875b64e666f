-- A to-be-closed variable whose __close loops, closed by the error.
return { filter = function(req, offer)
	local x <close> = setmetatable({}, { __close = function() while true do end end })
	while true do end
end }
