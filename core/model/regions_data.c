/*
 * regions_data.c -- built-in region facts: every region that appears in
 * drivers/{aws,azure,gcp}/data/offers.json plus a few other large ones.
 * Generated from a reviewed table; edit the rows by hand if a fact changes
 * and say where the new figure comes from.
 *
 * Sources and assumptions (checked 2026-11-22):
 *
 * Coordinates: the metro of the city each provider publishes for the
 *   region (AWS "Region name" city, Azure region location, the GCP
 *   "Location" column of region-carbon-info), rounded to 0.01 degree.
 *   Precision is about +-50 km: good for distance_km, not for siting.
 *   me-central-1 (UAE) uses Abu Dhabi; AWS does not publish the emirate.
 *
 * Country: ISO 3166-1 alpha-2 of that city.
 * Jurisdiction: "EU" for members of the EU and the EEA (the GDPR applies
 *   to the whole EEA, so Norway, Iceland and Liechtenstein would be "EU"
 *   too; none is in this table yet), "UK" for Great Britain, otherwise
 *   the ISO country code (US, CA, CH, JP, SG, AU, IN, KR, BR, HK, TW, ID,
 *   IL, SA, AE, BH, ZA).
 *
 * Tags (only where true; gb_region_tags below is the list policies,
 * `gpubroker help policy` and README see):
 *   gdpr           jurisdiction EU (EU/EEA).
 *   uk-gdpr        jurisdiction UK (UK GDPR + Data Protection Act 2018);
 *                  the UK is not tagged "gdpr", so an EU-only policy does
 *                  not silently accept London.
 *   hipaa          every public commercial region here (called
 *                  hipaa-eligible before; that name is an alias).  Assumption: each
 *                  provider's HIPAA Business Associate Agreement covers
 *                  its in-scope services (EC2 / Virtual Machines / Compute
 *                  Engine among them) in all of its public commercial
 *                  regions; none of them lists region exclusions for these
 *                  services.  GovCloud, Azure Government, China and
 *                  sovereign-partner clouds are not in this table.  The
 *                  tag means "a BAA is available", not "compliant".
 *   fedramp        conservative: AWS us-east-1, us-east-2, us-west-1,
 *                  us-west-2 (the AWS US East/West FedRAMP authorization);
 *                  Azure public-cloud US regions (Microsoft's FedRAMP High
 *                  P-ATO for Azure commercial covers its US regions);
 *                  GCP us-central1, us-east1, us-east4, us-west1..4 (regions
 *                  named in Google's FedRAMP High scope).  Newer GCP US
 *                  regions (us-east5, us-south1) are left untagged until
 *                  checked.  The tag says the region lies inside an
 *                  authorized boundary; the workload still needs the right
 *                  services and controls.
 *
 * Grid carbon intensity, gCO2eq/kWh, location-based annual averages:
 *   - GCP regions: GoogleCloudPlatform/region-carbon-info,
 *     data/yearly/2025.csv @74d9bf818f1c ("Grid carbon intensity", the
 *     average gross emissions of the local grid, Electricity Maps based).
 *   - AWS and Azure regions: the 2025 figure of the GCP region on the same
 *     grid (same metro or the same balancing area); the row's
 *     carbon_source names the GCP region used and why.  Proxies across
 *     metros (Azure northcentralus <- PJM us-east5, westcentralus <-
 *     PacifiCorp East us-west3, westus2 <- Pacific Northwest us-west1,
 *     westus3 <- us-west4, centralindia <- asia-south1) are approximate.
 *   - Ireland (aws eu-west-1, azure northeurope): no GCP region there; Ember
 *     2025 national generation intensity for IE, as tabulated in
 *     robintra/perf-sentinel crates/sentinel-core/src/score/carbon_data.rs
 *     @4c30ba156e35 (ember-2025 vintage).  Ember's national, generation-
 *     based method differs from Google's; treat the two as comparable in
 *     magnitude only.
 *   - UAE and Bahrain (aws me-central-1, me-south-1): proxied by GCP
 *     me-central1 (Doha, 2025: 370); a weak proxy for gas-fired Gulf
 *     grids, flagged in carbon_source.
 */
#include "regions.h"

/* The tags above, one line each: the vocabulary of region tags and of
 * placement.compliance (one and the same). */
static const gb_region_tag tags[] = {
	{"gdpr", "jurisdiction EU (EU/EEA members): the GDPR applies"},
	{"uk-gdpr", "jurisdiction UK (UK GDPR); London is not tagged gdpr"},
	{"hipaa", "the provider signs a HIPAA BAA covering its compute there "
	 "(eligible, not compliant; hipaa-eligible is an alias)"},
	{"fedramp", "inside a FedRAMP-authorized boundary (a conservative "
	 "list of US regions)"},
};

const gb_region_tag *gb_region_tags(size_t *n)
{
	*n = sizeof(tags) / sizeof(tags[0]);
	return tags;
}

const gb_region_info gb_builtin_regions[] = {
	/* AWS */
	{"aws", "us-east-1", "US East (N. Virginia)",
	 "US", "US", 39.04, -77.49,
	 "hipaa,fedramp", 343.48,
	 "Google region-carbon-info 2025, us-east4 grid (same metro, PJM)"},
	{"aws", "us-east-2", "US East (Ohio)",
	 "US", "US", 39.96, -83.00,
	 "hipaa,fedramp", 343.48,
	 "Google region-carbon-info 2025, us-east5 grid (Columbus, PJM)"},
	{"aws", "us-west-1", "US West (N. California)",
	 "US", "US", 37.35, -121.96,
	 "hipaa,fedramp", 149.91,
	 "Google region-carbon-info 2025, us-west2 grid (CAISO)"},
	{"aws", "us-west-2", "US West (Oregon)",
	 "US", "US", 45.84, -119.70,
	 "hipaa,fedramp", 97.85,
	 "Google region-carbon-info 2025, us-west1 grid (Oregon)"},
	{"aws", "ca-central-1", "Canada (Central)",
	 "CA", "CA", 45.50, -73.57,
	 "hipaa", 11.36,
	 "Google region-carbon-info 2025, northamerica-northeast1 grid (Montreal)"},
	{"aws", "sa-east-1", "South America (Sao Paulo)",
	 "BR", "BR", -23.55, -46.63,
	 "hipaa", 73.25,
	 "Google region-carbon-info 2025, southamerica-east1 grid (Sao Paulo)"},
	{"aws", "eu-west-1", "Europe (Ireland)",
	 "IE", "EU", 53.35, -6.26,
	 "gdpr,hipaa", 255.9,
	 "Ember 2025 national (IE) via perf-sentinel carbon_data.rs"},
	{"aws", "eu-west-2", "Europe (London)",
	 "GB", "UK", 51.51, -0.13,
	 "uk-gdpr,hipaa", 109.39,
	 "Google region-carbon-info 2025, europe-west2 grid (London)"},
	{"aws", "eu-west-3", "Europe (Paris)",
	 "FR", "EU", 48.86, 2.35,
	 "gdpr,hipaa", 15.83,
	 "Google region-carbon-info 2025, europe-west9 grid (Paris)"},
	{"aws", "eu-central-1", "Europe (Frankfurt)",
	 "DE", "EU", 50.11, 8.68,
	 "gdpr,hipaa", 275.81,
	 "Google region-carbon-info 2025, europe-west3 grid (Frankfurt)"},
	{"aws", "eu-central-2", "Europe (Zurich)",
	 "CH", "CH", 47.37, 8.54,
	 "hipaa", 21.2,
	 "Google region-carbon-info 2025, europe-west6 grid (Zurich)"},
	{"aws", "eu-north-1", "Europe (Stockholm)",
	 "SE", "EU", 59.33, 18.07,
	 "gdpr,hipaa", 19.39,
	 "Google region-carbon-info 2025, europe-north2 grid (Stockholm)"},
	{"aws", "eu-south-1", "Europe (Milan)",
	 "IT", "EU", 45.46, 9.19,
	 "gdpr,hipaa", 202.03,
	 "Google region-carbon-info 2025, europe-west8 grid (Milan)"},
	{"aws", "ap-northeast-1", "Asia Pacific (Tokyo)",
	 "JP", "JP", 35.68, 139.69,
	 "hipaa", 449.23,
	 "Google region-carbon-info 2025, asia-northeast1 grid (Tokyo)"},
	{"aws", "ap-northeast-2", "Asia Pacific (Seoul)",
	 "KR", "KR", 37.57, 126.98,
	 "hipaa", 359.05,
	 "Google region-carbon-info 2025, asia-northeast3 grid (Seoul)"},
	{"aws", "ap-northeast-3", "Asia Pacific (Osaka)",
	 "JP", "JP", 34.69, 135.50,
	 "hipaa", 298.92,
	 "Google region-carbon-info 2025, asia-northeast2 grid (Osaka)"},
	{"aws", "ap-south-1", "Asia Pacific (Mumbai)",
	 "IN", "IN", 19.08, 72.88,
	 "hipaa", 598.45,
	 "Google region-carbon-info 2025, asia-south1 grid (Mumbai)"},
	{"aws", "ap-southeast-1", "Asia Pacific (Singapore)",
	 "SG", "SG", 1.35, 103.82,
	 "hipaa", 365.66,
	 "Google region-carbon-info 2025, asia-southeast1 grid (Singapore)"},
	{"aws", "ap-southeast-2", "Asia Pacific (Sydney)",
	 "AU", "AU", -33.87, 151.21,
	 "hipaa", 468.34,
	 "Google region-carbon-info 2025, australia-southeast1 grid (Sydney)"},
	{"aws", "ap-southeast-3", "Asia Pacific (Jakarta)",
	 "ID", "ID", -6.21, 106.85,
	 "hipaa", 587.8,
	 "Google region-carbon-info 2025, asia-southeast2 grid (Jakarta)"},
	{"aws", "ap-east-1", "Asia Pacific (Hong Kong)",
	 "HK", "HK", 22.32, 114.17,
	 "hipaa", 488.52,
	 "Google region-carbon-info 2025, asia-east2 grid (Hong Kong)"},
	{"aws", "af-south-1", "Africa (Cape Town)",
	 "ZA", "ZA", -33.92, 18.42,
	 "hipaa", 641.42,
	 "Google region-carbon-info 2025, africa-south1 grid (national grid)"},
	{"aws", "me-central-1", "Middle East (UAE)",
	 "AE", "AE", 24.45, 54.38,
	 "hipaa", 370,
	 "Google region-carbon-info 2025, me-central1 grid (Doha; Gulf gas grid proxy)"},
	{"aws", "me-south-1", "Middle East (Bahrain)",
	 "BH", "BH", 26.07, 50.55,
	 "hipaa", 370,
	 "Google region-carbon-info 2025, me-central1 grid (Doha; Gulf gas grid proxy)"},
	/* Azure */
	{"azure", "eastus", "East US (Virginia)",
	 "US", "US", 37.37, -79.82,
	 "hipaa,fedramp", 343.48,
	 "Google region-carbon-info 2025, us-east4 grid (Virginia, PJM)"},
	{"azure", "eastus2", "East US 2 (Virginia)",
	 "US", "US", 36.67, -78.39,
	 "hipaa,fedramp", 343.48,
	 "Google region-carbon-info 2025, us-east4 grid (Virginia, PJM)"},
	{"azure", "centralus", "Central US (Iowa)",
	 "US", "US", 41.59, -93.62,
	 "hipaa,fedramp", 431.95,
	 "Google region-carbon-info 2025, us-central1 grid (Iowa)"},
	{"azure", "northcentralus", "North Central US (Illinois)",
	 "US", "US", 41.88, -87.63,
	 "hipaa,fedramp", 343.48,
	 "Google region-carbon-info 2025, us-east5 grid (PJM proxy for Chicago)"},
	{"azure", "southcentralus", "South Central US (Texas)",
	 "US", "US", 29.42, -98.49,
	 "hipaa,fedramp", 299.13,
	 "Google region-carbon-info 2025, us-south1 grid (ERCOT)"},
	{"azure", "westcentralus", "West Central US (Wyoming)",
	 "US", "US", 41.14, -104.82,
	 "hipaa,fedramp", 567.51,
	 "Google region-carbon-info 2025, us-west3 grid (PacifiCorp East proxy)"},
	{"azure", "westus", "West US (California)",
	 "US", "US", 37.78, -122.42,
	 "hipaa,fedramp", 149.91,
	 "Google region-carbon-info 2025, us-west2 grid (CAISO)"},
	{"azure", "westus2", "West US 2 (Washington)",
	 "US", "US", 47.23, -119.85,
	 "hipaa,fedramp", 97.85,
	 "Google region-carbon-info 2025, us-west1 grid (Pacific Northwest proxy)"},
	{"azure", "westus3", "West US 3 (Arizona)",
	 "US", "US", 33.45, -112.07,
	 "hipaa,fedramp", 360,
	 "Google region-carbon-info 2025, us-west4 grid (desert Southwest proxy)"},
	{"azure", "canadacentral", "Canada Central (Toronto)",
	 "CA", "CA", 43.65, -79.38,
	 "hipaa", 74.2,
	 "Google region-carbon-info 2025, northamerica-northeast2 grid (Toronto)"},
	{"azure", "brazilsouth", "Brazil South (Sao Paulo)",
	 "BR", "BR", -23.55, -46.63,
	 "hipaa", 73.25,
	 "Google region-carbon-info 2025, southamerica-east1 grid (Sao Paulo)"},
	{"azure", "westeurope", "West Europe (Netherlands)",
	 "NL", "EU", 52.37, 4.90,
	 "gdpr,hipaa", 194.35,
	 "Google region-carbon-info 2025, europe-west4 grid (Netherlands)"},
	{"azure", "northeurope", "North Europe (Ireland)",
	 "IE", "EU", 53.35, -6.26,
	 "gdpr,hipaa", 255.9,
	 "Ember 2025 national (IE) via perf-sentinel carbon_data.rs"},
	{"azure", "swedencentral", "Sweden Central (Gavle)",
	 "SE", "EU", 60.67, 17.14,
	 "gdpr,hipaa", 19.39,
	 "Google region-carbon-info 2025, europe-north2 grid (Swedish grid)"},
	{"azure", "germanywestcentral", "Germany West Central (Frankfurt)",
	 "DE", "EU", 50.11, 8.68,
	 "gdpr,hipaa", 275.81,
	 "Google region-carbon-info 2025, europe-west3 grid (Frankfurt)"},
	{"azure", "francecentral", "France Central (Paris)",
	 "FR", "EU", 48.86, 2.35,
	 "gdpr,hipaa", 15.83,
	 "Google region-carbon-info 2025, europe-west9 grid (Paris)"},
	{"azure", "uksouth", "UK South (London)",
	 "GB", "UK", 51.51, -0.13,
	 "uk-gdpr,hipaa", 109.39,
	 "Google region-carbon-info 2025, europe-west2 grid (London)"},
	{"azure", "switzerlandnorth", "Switzerland North (Zurich)",
	 "CH", "CH", 47.45, 8.56,
	 "hipaa", 21.2,
	 "Google region-carbon-info 2025, europe-west6 grid (Zurich)"},
	{"azure", "japaneast", "Japan East (Tokyo)",
	 "JP", "JP", 35.68, 139.77,
	 "hipaa", 449.23,
	 "Google region-carbon-info 2025, asia-northeast1 grid (Tokyo)"},
	{"azure", "koreacentral", "Korea Central (Seoul)",
	 "KR", "KR", 37.57, 126.98,
	 "hipaa", 359.05,
	 "Google region-carbon-info 2025, asia-northeast3 grid (Seoul)"},
	{"azure", "southeastasia", "Southeast Asia (Singapore)",
	 "SG", "SG", 1.28, 103.83,
	 "hipaa", 365.66,
	 "Google region-carbon-info 2025, asia-southeast1 grid (Singapore)"},
	{"azure", "centralindia", "Central India (Pune)",
	 "IN", "IN", 18.52, 73.86,
	 "hipaa", 598.45,
	 "Google region-carbon-info 2025, asia-south1 grid (western grid proxy)"},
	{"azure", "australiaeast", "Australia East (New South Wales)",
	 "AU", "AU", -33.86, 151.21,
	 "hipaa", 468.34,
	 "Google region-carbon-info 2025, australia-southeast1 grid (Sydney)"},
	/* Google Cloud */
	{"gcp", "us-central1", "Council Bluffs, Iowa",
	 "US", "US", 41.26, -95.86,
	 "hipaa,fedramp", 431.95,
	 "Google region-carbon-info 2025"},
	{"gcp", "us-east1", "Moncks Corner, South Carolina",
	 "US", "US", 33.20, -80.01,
	 "hipaa,fedramp", 579.44,
	 "Google region-carbon-info 2025"},
	{"gcp", "us-east4", "Ashburn, Northern Virginia",
	 "US", "US", 39.04, -77.49,
	 "hipaa,fedramp", 343.48,
	 "Google region-carbon-info 2025"},
	{"gcp", "us-east5", "Columbus, Ohio",
	 "US", "US", 39.96, -83.00,
	 "hipaa", 343.48,
	 "Google region-carbon-info 2025"},
	{"gcp", "us-south1", "Dallas, Texas",
	 "US", "US", 32.78, -96.80,
	 "hipaa", 299.13,
	 "Google region-carbon-info 2025"},
	{"gcp", "us-west1", "The Dalles, Oregon",
	 "US", "US", 45.59, -121.18,
	 "hipaa,fedramp", 97.85,
	 "Google region-carbon-info 2025"},
	{"gcp", "us-west2", "Los Angeles, California",
	 "US", "US", 34.05, -118.24,
	 "hipaa,fedramp", 149.91,
	 "Google region-carbon-info 2025"},
	{"gcp", "us-west3", "Salt Lake City, Utah",
	 "US", "US", 40.76, -111.89,
	 "hipaa,fedramp", 567.51,
	 "Google region-carbon-info 2025"},
	{"gcp", "us-west4", "Las Vegas, Nevada",
	 "US", "US", 36.17, -115.14,
	 "hipaa,fedramp", 360,
	 "Google region-carbon-info 2025"},
	{"gcp", "northamerica-northeast1", "Montreal, Quebec",
	 "CA", "CA", 45.50, -73.57,
	 "hipaa", 11.36,
	 "Google region-carbon-info 2025"},
	{"gcp", "northamerica-northeast2", "Toronto, Ontario",
	 "CA", "CA", 43.65, -79.38,
	 "hipaa", 74.2,
	 "Google region-carbon-info 2025"},
	{"gcp", "southamerica-east1", "Osasco, Sao Paulo",
	 "BR", "BR", -23.53, -46.79,
	 "hipaa", 73.25,
	 "Google region-carbon-info 2025"},
	{"gcp", "europe-west1", "St. Ghislain, Belgium",
	 "BE", "EU", 50.45, 3.82,
	 "gdpr,hipaa", 126.43,
	 "Google region-carbon-info 2025"},
	{"gcp", "europe-west2", "London, England",
	 "GB", "UK", 51.51, -0.13,
	 "uk-gdpr,hipaa", 109.39,
	 "Google region-carbon-info 2025"},
	{"gcp", "europe-west3", "Frankfurt, Germany",
	 "DE", "EU", 50.11, 8.68,
	 "gdpr,hipaa", 275.81,
	 "Google region-carbon-info 2025"},
	{"gcp", "europe-west4", "Eemshaven, Netherlands",
	 "NL", "EU", 53.44, 6.83,
	 "gdpr,hipaa", 194.35,
	 "Google region-carbon-info 2025"},
	{"gcp", "europe-west6", "Zurich, Switzerland",
	 "CH", "CH", 47.37, 8.54,
	 "hipaa", 21.2,
	 "Google region-carbon-info 2025"},
	{"gcp", "europe-west9", "Paris, France",
	 "FR", "EU", 48.86, 2.35,
	 "gdpr,hipaa", 15.83,
	 "Google region-carbon-info 2025"},
	{"gcp", "europe-southwest1", "Madrid, Spain",
	 "ES", "EU", 40.42, -3.70,
	 "gdpr,hipaa", 95.75,
	 "Google region-carbon-info 2025"},
	{"gcp", "europe-north1", "Hamina, Finland",
	 "FI", "EU", 60.57, 27.20,
	 "gdpr,hipaa", 29.84,
	 "Google region-carbon-info 2025"},
	{"gcp", "europe-central2", "Warsaw, Poland",
	 "PL", "EU", 52.23, 21.01,
	 "gdpr,hipaa", 498.57,
	 "Google region-carbon-info 2025"},
	{"gcp", "me-west1", "Tel Aviv, Israel",
	 "IL", "IL", 32.09, 34.78,
	 "hipaa", 380.95,
	 "Google region-carbon-info 2025"},
	{"gcp", "me-central2", "Dammam, Saudi Arabia",
	 "SA", "SA", 26.43, 50.10,
	 "hipaa", 381.29,
	 "Google region-carbon-info 2025"},
	{"gcp", "asia-east1", "Changhua County, Taiwan",
	 "TW", "TW", 24.08, 120.54,
	 "hipaa", 427.95,
	 "Google region-carbon-info 2025"},
	{"gcp", "asia-east2", "Hong Kong",
	 "HK", "HK", 22.32, 114.17,
	 "hipaa", 488.52,
	 "Google region-carbon-info 2025"},
	{"gcp", "asia-northeast1", "Tokyo, Japan",
	 "JP", "JP", 35.68, 139.69,
	 "hipaa", 449.23,
	 "Google region-carbon-info 2025"},
	{"gcp", "asia-northeast2", "Osaka, Japan",
	 "JP", "JP", 34.69, 135.50,
	 "hipaa", 298.92,
	 "Google region-carbon-info 2025"},
	{"gcp", "asia-northeast3", "Seoul, South Korea",
	 "KR", "KR", 37.57, 126.98,
	 "hipaa", 359.05,
	 "Google region-carbon-info 2025"},
	{"gcp", "asia-south1", "Mumbai, India",
	 "IN", "IN", 19.08, 72.88,
	 "hipaa", 598.45,
	 "Google region-carbon-info 2025"},
	{"gcp", "asia-southeast1", "Jurong West, Singapore",
	 "SG", "SG", 1.34, 103.71,
	 "hipaa", 365.66,
	 "Google region-carbon-info 2025"},
	{"gcp", "asia-southeast2", "Jakarta, Indonesia",
	 "ID", "ID", -6.21, 106.85,
	 "hipaa", 587.8,
	 "Google region-carbon-info 2025"},
	{"gcp", "australia-southeast1", "Sydney, Australia",
	 "AU", "AU", -33.87, 151.21,
	 "hipaa", 468.34,
	 "Google region-carbon-info 2025"},
};
const size_t gb_builtin_region_count =
	sizeof(gb_builtin_regions) / sizeof(gb_builtin_regions[0]);
