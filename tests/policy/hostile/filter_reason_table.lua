return { filter = function(req, offer) return false, {} end }
