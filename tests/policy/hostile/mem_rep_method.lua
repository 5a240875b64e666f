-- string.rep through the string metatable, with a separator.
return { filter = function(req, offer) return #("ab"):rep(1e9, "--") > 0 end }
