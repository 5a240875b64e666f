-- expect-rc: 0
-- expect: policy log: log_flood:
-- A million gb.log calls per plan: kept to a bounded number of lines.
return {filter = function(req, offer)
	for i = 1, 1000 do gb.log(string.rep("z", 4000)) end
	return true
end}
