-- Recursion through a C boundary (__index calling itself): C stack limit.
local t = setmetatable({}, {})
getmetatable(t).__index = function(self, k) return self[k .. "x"] end
return { filter = function(req, offer) return t.a ~= nil end }
