-- Unbounded (non-tail) recursion: the stack limit (or memory) stops it.
local function f(n) return 1 + f(n + 1) end
return { filter = function(req, offer) return f(0) > 0 end }
