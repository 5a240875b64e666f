-- An infinite loop: the instruction budget stops it.
return { filter = function(req, offer) while true do end end }
