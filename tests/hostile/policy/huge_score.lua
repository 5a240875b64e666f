-- expect-rc: 0
-- expect: RANK
-- Scores at the edge of double: two policies adding 1.7e308 overflow to
-- inf; the plan still ranks (by price) instead of failing or crashing.
-- policies: huge_score huge_score2
return {score = function(req, offer) return 1.7e308 end}
