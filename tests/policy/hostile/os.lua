return { filter = function(req, offer) return os.execute("true") end }
