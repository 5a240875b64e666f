-- expect-rc: 1
-- expect: no offer qualifies
-- A reason that is not UTF-8.
return {filter = function(req, offer) gb.log("log \255\254") return false, "bad \255\254 bytes" end}
