return { score = function(req, offer) return math.huge end }
