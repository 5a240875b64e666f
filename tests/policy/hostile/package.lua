return { filter = function(req, offer) return package.loadlib("libc.so.6", "system") ~= nil end }
