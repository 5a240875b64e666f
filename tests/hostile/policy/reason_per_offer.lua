-- expect-rc: 1
-- expect: policy reason_per_offer:
-- A different 60 KiB reason for every one of ~1800 offers: the decision
-- record and the explanation stay bounded.
return {filter = function(req, offer)
	return false, offer.instance_type .. string.rep("r", 60000)
end}
