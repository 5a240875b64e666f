-- expect-rc: 1
-- expect: policy huge_reason: xxxxxxxx
-- Every offer refused with a 1 MiB reason: the plan fails with a bounded
-- explanation (reasons are cut), not megabytes per offer.
local big = string.rep("x", 1024 * 1024)
return {filter = function(req, offer) return false, big end}
