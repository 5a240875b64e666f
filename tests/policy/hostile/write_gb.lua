return { filter = function(req, offer) gb.region = nil return true end }
