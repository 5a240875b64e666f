return { filter = function(req, offer) offer.price = 0 return true end }
