return { score = function(req, offer) return "12" end }
