-- expect-rc: 0
-- expect: policy log: log_control:
-- gb.log with terminal escapes and a newline that would fake an output line.
return {filter = function(req, offer)
	gb.log("\27[2J\27[31mred\nRANK  CLOUD  fake-line")
	return true
end}
