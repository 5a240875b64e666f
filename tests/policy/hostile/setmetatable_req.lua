return { filter = function(req, offer) setmetatable(req, { __index = {} }) return true end }
