/*
 * policy_fields.h -- the one table of what policy functions receive: every
 * field of `offer` and `req` (and of their nested tables), with its type
 * and meaning.  Everything else is made from it:
 *   - the field names the Lua objects accept (policy_objects.c: reading
 *     any other name of offer, req, req.gpu or req.team is an error
 *     naming the nearest field), and the order of the offer fields;
 *   - gb_policy_fields() (policy.h), which `gpubroker help policy`
 *     prints (cmd_policy.c);
 *   - README.md's table of fields, generated from that help by
 *     `make readme-policy` (scripts/policy_fields_md.sh) and checked by
 *     tests/integration/policy_documented.sh.
 *
 * Each list is an X-macro: X(OBJECT, NAME, TYPE, MEANING), OBJECT and
 * NAME bare words (OBJECT may be dotted), TYPE and MEANING string
 * literals.  A MEANING is one line, without two spaces in a row.
 */
#ifndef GB_POLICY_FIELDS_H
#define GB_POLICY_FIELDS_H

/* offer: one offer (a read-only view; `pairs(offer)` lists the fields in
 * this order, bench only when present). */
#define GB_POLICY_OFFER_FIELDS(X)                                            \
	X(offer, cloud, "string", "the driver that sells it, by its configured " \
	  "name: aws, azure, gcp, lambda, onprem, ...")                        \
	X(offer, region, "string", "the provider's region; on-prem: the site")   \
	X(offer, zone, "string", "the availability zone, \"\" when the offer "   \
	  "is for any zone (and on-prem)")                                      \
	X(offer, instance_type, "string", "the provider's type (p5.48xlarge); "  \
	  "on-prem: the node shape, SHAPE-mig-PROFILE for a MIG slice")         \
	X(offer, gpu_model, "string", "the canonical model: H100, A100-80GB, "   \
	  "L4, ...")                                                             \
	X(offer, gpu_count, "integer", "GPUs per instance (1 for a MIG slice)")  \
	X(offer, gpu_memory_gb, "integer", "memory per GPU in GB, the model's "  \
	  "nominal size (a MIG slice: its profile's)")                           \
	X(offer, vcpus, "integer", "vCPUs per instance (0 when unknown)")        \
	X(offer, ram_gb, "number", "host memory per instance in GB (0 when "     \
	  "unknown)")                                                            \
	X(offer, capacity, "string", "spot, on-demand or reserved")              \
	X(offer, price, "number", "USD per hour for the whole instance")         \
	X(offer, price_per_gpu_hour, "number", "price / gpu_count")              \
	X(offer, source, "string", "where the price came from (a catalog file, " \
	  "a price API, the inventory)")                                        \
	X(offer, fetched_at, "integer", "when that price was read, Unix seconds") \
	X(offer, tags, "list", "the offer's tags, strings (on-prem: the nodes' " \
	  "tags, and mig for a slice)")                                          \
	X(offer, bench, "table", "what the probe measured (on-prem offers; nil " \
	  "for cloud offers): the offer.bench fields")

/* offer.bench: the on-prem driver's measurements (drivers/onprem
 * README.md).  Figures are the minimum over the measured free nodes, per
 * GPU (per slice for a MIG slice); a figure no node measured is nil. */
#define GB_POLICY_BENCH_FIELDS(X)                                            \
	X(offer.bench, source, "string", "gpuprobe")                             \
	X(offer.bench, per, "string", "gpu: the figures are per GPU (per slice " \
	  "for a MIG offer)")                                                    \
	X(offer.bench, nodes_free, "integer", "free usable nodes of this shape") \
	X(offer.bench, nodes_measured, "integer", "how many of them have a "     \
	  "healthy probe report (0: no figures)")                               \
	X(offer.bench, probe_age_s, "integer", "age of the oldest of those "     \
	  "reports, seconds")                                                   \
	X(offer.bench, fp32_tflops, "number", "measured FP32 TFLOP/s")           \
	X(offer.bench, fp16_tflops, "number", "measured FP16 tensor TFLOP/s")    \
	X(offer.bench, bf16_tflops, "number", "measured BF16 tensor TFLOP/s")    \
	X(offer.bench, d2d_gbps, "number", "device-to-device copy GB/s")         \
	X(offer.bench, h2d_gbps, "number", "host-to-device copy GB/s (not "      \
	  "scaled for a slice)")                                                \
	X(offer.bench, d2h_gbps, "number", "device-to-host copy GB/s (not "      \
	  "scaled for a slice)")                                                \
	X(offer.bench, mig_profile, "string", "a MIG slice's profile "           \
	  "(1g.10gb); nil for whole GPUs")                                      \
	X(offer.bench, slice_fraction, "number", "a MIG slice's share of the "   \
	  "GPU, which scales the figures")                                      \
	X(offer.bench, slices_free, "integer", "how many more slices of this "   \
	  "profile fit on the free nodes")

/* region: what gb.region() returns (a read-only table, one per region;
 * core/model/regions.h).  Reading any other name is an error. */
#define GB_POLICY_REGION_FIELDS(X)                                           \
	X(region, cloud, "string", "the cloud (driver) whose region it is; "     \
	  "on-prem: the driver's name")                                         \
	X(region, name, "string", "the provider's region id (eu-west-1); "       \
	  "on-prem: the site")                                                  \
	X(region, display, "string", "a readable name: Europe (Ireland)")        \
	X(region, country, "string", "ISO 3166-1 alpha-2 country code: IE, US")  \
	X(region, jurisdiction, "string", "EU (EU/EEA members), UK, or the "     \
	  "country code otherwise")                                             \
	X(region, lat, "number", "latitude in degrees (about +-50 km)")          \
	X(region, lon, "number", "longitude in degrees")                         \
	X(region, tags, "list", "compliance tags that hold there: the region "   \
	  "tags below")                                                          \
	X(region, carbon, "number", "grid carbon intensity, gCO2eq/kWh (0 when " \
	  "unknown)")                                                            \
	X(region, carbon_source, "string", "where that figure comes from")

/* req: the pool spec being placed, and its team.  Optional values that
 * are not set are nil. */
#define GB_POLICY_REQ_FIELDS(X)                                              \
	X(req, name, "string", "the pool's name (pool.name)")                \
	X(req, team, "table", "the pool's team (pool.team): the req.team fields")            \
	X(req, purpose, "string", "training, inference or dev")                 \
	X(req, count, "integer", "instances wanted (count)")                \
	X(req, min, "integer", "fewest instances the pool accepts")              \
	X(req, max, "integer", "most instances the pool may scale to")           \
	X(req, gpu, "table", "what each instance needs (gpu): the req.gpu fields")     \
	X(req, capacity, "list", "capacity kinds in the order tried: spot, "    \
	  "on-demand, reserved")                             \
	X(req, clouds, "list", "placement.clouds (empty: every loaded cloud)")       \
	X(req, regions, "list", "placement.regions, globs (empty: any region)")      \
	X(req, colocate, "string", "placement.colocate: zone, region or none")   \
	X(req, data_region, "string", "placement.data.region, where the data "   \
	  "is (nil when not set)")                                              \
	X(req, compliance, "list", "placement.compliance tags (gdpr, hipaa, "    \
	  "...)")                                                                \
	X(req, max_price_per_hour, "number", "limits.max_price_per_hour, USD "   \
	  "per hour for the pool (nil when not set)")                                    \
	X(req, ttl, "integer", "lifecycle.ttl in seconds (nil when not set)")     \
	X(req, idle_timeout, "integer", "lifecycle.idle_timeout in seconds " \
	  "(nil when not set)")                                                      \
	X(req, labels, "table", "labels, name -> string")               \
	X(req, policies, "list", "the pool's policies (policy), names or paths")

#define GB_POLICY_REQ_GPU_FIELDS(X)                                          \
	X(req.gpu, models, "list", "acceptable models (gpu.model), canonical names")     \
	X(req.gpu, count, "integer", "GPUs per instance (gpu.count)")            \
	X(req.gpu, memory_gb, "integer", "least memory per GPU in GB (0: any)")

#define GB_POLICY_REQ_TEAM_FIELDS(X)                                         \
	X(req.team, name, "string", "the team's name (default when not set)")    \
	X(req.team, max_gpus, "integer", "the team's GPU limit (nil when not "   \
	  "set)")                                                                \
	X(req.team, max_price_per_hour, "number", "the team's USD per hour "     \
	  "limit (nil when not set)")                                           \
	X(req.team, monthly_budget, "number", "the team's USD per month (nil "   \
	  "when not set)")

/* Helpers for the lists of names, the enum and gb_policy_fields(). */
#define GB_POLICY_FIELD_NAME(obj, name, type, meaning) #name,
#define GB_POLICY_FIELD_ONE(obj, name, type, meaning) +1
#define GB_POLICY_FIELD_ROW(obj, name, type, meaning)                        \
	{#obj, #name, type, meaning},

#endif
