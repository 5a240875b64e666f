/* regions_data.c -- built-in region facts.  PLACEHOLDER: a few rows until
 * the full table lands (issue 3, item 4). */
#include "regions.h"

const gb_region_info gb_builtin_regions[] = {
	{"aws", "us-east-1", "US East (N. Virginia)", "US", "US", 38.9, -77.4,
	 "hipaa-eligible,fedramp", 380, "placeholder"},
	{"aws", "eu-west-1", "Europe (Ireland)", "IE", "EU", 53.3, -6.3,
	 "gdpr,hipaa-eligible", 290, "placeholder"},
};
const size_t gb_builtin_region_count =
	sizeof(gb_builtin_regions) / sizeof(gb_builtin_regions[0]);
