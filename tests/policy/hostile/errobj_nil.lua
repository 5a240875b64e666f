return { filter = function(req, offer) error() end }
