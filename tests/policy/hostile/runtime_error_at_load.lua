local x = nil
return { filter = x.y }
