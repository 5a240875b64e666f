-- Loops while the file loads, before returning anything.
while true do end
return { filter = function() return true end }
