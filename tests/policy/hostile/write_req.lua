return { filter = function(req, offer) req.count = 0 return true end }
