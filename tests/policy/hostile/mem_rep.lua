-- One huge string.rep.
return { filter = function(req, offer) return #string.rep("x", 1e12) > 0 end }
