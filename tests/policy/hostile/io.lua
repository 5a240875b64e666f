return { filter = function(req, offer) return io.open("/etc/passwd") ~= nil end }
