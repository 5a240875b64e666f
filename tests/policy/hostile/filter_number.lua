return { filter = function(req, offer) return 1 end }
