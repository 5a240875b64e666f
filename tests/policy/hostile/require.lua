return { filter = function(req, offer) return require("os") ~= nil end }
