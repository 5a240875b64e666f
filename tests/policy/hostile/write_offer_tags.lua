return { filter = function(req, offer) offer.tags[1] = "hipaa" return true end }
