-- The coroutine library is not part of the sandbox.
return { filter = function(req, offer)
	local co = coroutine.create(function() while true do end end)
	return coroutine.resume(co)
end }
