return { filter = function(req, offer) return string.dump(function() end) ~= nil end }
