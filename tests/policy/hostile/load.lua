return { filter = function(req, offer) return load("return 1")() == 1 end }
