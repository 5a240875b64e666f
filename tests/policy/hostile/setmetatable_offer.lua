return { filter = function(req, offer) setmetatable(offer, {}) return true end }
