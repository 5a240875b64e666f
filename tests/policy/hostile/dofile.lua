return { filter = function(req, offer) return dofile("/etc/passwd") ~= nil end }
