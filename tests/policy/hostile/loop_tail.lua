-- Infinite tail recursion: no stack growth, only instructions.
local function f(n) return f(n + 1) end
return { filter = function(req, offer) return f(0) end }
