-- tflops-cost.lua -- prefer the cheapest *measured* compute: rank offers by
-- price per PFLOP-hour of dense tensor throughput, so on-prem nodes (priced
-- at their amortised cost and measured by gpuprobe) and cloud instances
-- (priced by the provider, rated by NVIDIA/AMD data sheets) compete on
-- effective cost.
--
--   score = offer.price / (useful_gpus * tflops_per_gpu / 1000)
--
-- in USD per PFLOP-hour (lower is better).  The unit keeps the score in the
-- same range as cost.lua's USD per GPU-hour (an H100 at 98.32 USD/h for 8
-- GPUs scores 12.4), so the two can be combined.
--
-- useful_gpus = min(offer.gpu_count, req.gpu.count), as in cost.lua: GPUs a
-- pool does not use are paid for but do not count.
--
-- tflops_per_gpu, first that applies:
--   1. offer.bench.bf16_tflops   what the probe measured (on-prem; per GPU,
--                                or per MIG slice)
--   2. offer.bench.fp16_tflops   the same for GPUs without BF16 (T4, V100)
--   3. the data sheet's dense BF16 (else FP16) tensor figure for the model,
--      scaled by measured/data-sheet FP32 when the probe measured only FP32
--      (offer.bench.fp32_tflops: a throttled node scores worse)
--   4. DEFAULT_TFLOPS for models this table does not know (logged)
-- Figures from NVIDIA's and AMD's data sheets, dense (no 2:4 sparsity),
-- tensor cores with FP32 accumulate, boost clock; the SXM variant where
-- there are several.  FP32 figures are the non-tensor peaks.
--
-- This policy only scores; it never refuses an offer.

local DEFAULT_TFLOPS = 100

-- model -> {tensor TFLOP/s (BF16, else FP16), FP32 TFLOP/s or nil, source}
local DATASHEET = {
	["B200"]      = {2250, nil, "NVIDIA HGX B200 data sheet (per GPU; FP32 not used)"},
	["H200"]      = {989, 67, "NVIDIA H200 Tensor Core GPU data sheet (SXM)"},
	["H100"]      = {989, 67, "NVIDIA H100 Tensor Core GPU data sheet (SXM)"},
	["A100-80GB"] = {312, 19.5, "NVIDIA A100 Tensor Core GPU data sheet"},
	["A100"]      = {312, 19.5, "NVIDIA A100 Tensor Core GPU data sheet"},
	["L40S"]      = {362, 91.6, "NVIDIA L40S GPU data sheet"},
	["L40"]       = {181, 90.5, "NVIDIA L40 GPU data sheet"},
	["L4"]        = {121, 30.3, "NVIDIA L4 Tensor Core GPU data sheet"},
	["A10G"]      = {70, 31.5, "AWS G5 figures (no public NVIDIA data sheet)"},
	["A10"]       = {125, 31.2, "NVIDIA A10 Tensor Core GPU data sheet"},
	["RTX-A6000"] = {154.8, 38.7, "NVIDIA RTX A6000 data sheet"},
	["T4"]        = {65, 8.1, "NVIDIA T4 data sheet (FP16; no BF16)"},
	["V100"]      = {125, 15.7, "NVIDIA V100 data sheet (SXM2, FP16; no BF16)"},
	["V100-32GB"] = {125, 15.7, "NVIDIA V100 data sheet (SXM2, FP16; no BF16)"},
	["MI300X"]    = {1307.4, 163.4, "AMD Instinct MI300X data sheet"},
	["MI250X"]    = {383, 47.9, "AMD Instinct MI250X data sheet"},
}

local function positive(v)
	return type(v) == "number" and v > 0 and v == v and v < math.huge
end

-- Tensor TFLOP/s of one GPU (or slice) of the offer, and where it came from.
local function tflops(offer)
	local b = offer.bench
	if b ~= nil then
		if positive(b.bf16_tflops) then
			return b.bf16_tflops, "measured bf16"
		end
		if positive(b.fp16_tflops) then
			return b.fp16_tflops, "measured fp16"
		end
	end
	local ds = DATASHEET[offer.gpu_model]
	if ds == nil then
		gb.log("tflops-cost: no data-sheet figure for " ..
		       tostring(offer.gpu_model) .. "; assuming " ..
		       DEFAULT_TFLOPS .. " TFLOP/s")
		return DEFAULT_TFLOPS, "default"
	end
	if b ~= nil and positive(b.fp32_tflops) and ds[2] ~= nil then
		-- only FP32 was measured: scale the data sheet by how the node
		-- measured against its FP32 peak (never above the peak)
		local ratio = b.fp32_tflops / ds[2]
		if ratio > 1 then ratio = 1 end
		return ds[1] * ratio, "data sheet x measured fp32"
	end
	return ds[1], "data sheet"
end

local function score(req, offer)
	local useful = offer.gpu_count
	local want = req.gpu.count
	if want and want > 0 and want < useful then
		useful = want
	end
	if useful <= 0 then
		useful = 1
	end
	local t = tflops(offer)
	return offer.price / (useful * t / 1000)
end

return { score = score, tflops = tflops }
