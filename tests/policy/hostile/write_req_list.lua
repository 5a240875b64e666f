-- table functions write through the proxy too.
return { filter = function(req, offer) table.insert(req.gpu.models, "H100") return true end }
