return { filter = function(req, offer) collectgarbage("stop") return true end }
