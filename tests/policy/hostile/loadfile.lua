return { filter = function(req, offer) return loadfile("/etc/passwd") ~= nil end }
