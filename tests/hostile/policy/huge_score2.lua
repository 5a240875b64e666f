-- helper of huge_score.lua (not a case by itself)
return {score = function(req, offer) return 1.7e308 end}
