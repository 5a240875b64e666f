return {
	filter = function(req, offer)
		return offer.price <
	end,
}
