return { filter = function(req, offer) req.gpu.count = 99 return true end }
