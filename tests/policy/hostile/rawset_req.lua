-- rawset would bypass the read-only proxies: it is not available.
return { filter = function(req, offer) rawset(req, "count", 0) return true end }
