-- expect-rc: 1
-- expect: no offer qualifies
-- known: core/plan.c gb_plan_to_json and core/policy_objects.c: a reason or gb.log line with invalid UTF-8 is printed raw in the table and silently dropped from the JSON (jansson refuses it)
-- A reason that is not UTF-8.
return {filter = function(req, offer) gb.log("log \255\254") return false, "bad \255\254 bytes" end}
