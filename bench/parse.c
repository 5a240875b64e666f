/*
 * bench/parse.c -- what reading one list page costs per instance, per
 * cloud (issue 36): synthetic pages shaped as the clouds send them (an
 * ARM VM list with instance views, about 2.5 KB per VM; a GCE aggregated
 * list; Lambda's instance list; an EC2 DescribeInstances answer), read
 * by each driver's own page parser (the SDK's streaming scanner on yajl
 * for the JSON clouds, libexpat for EC2) and, for the JSON pages, by
 * jansson building its tree and walking the same members (the reader the
 * drivers used before; HACKING.md, "The JSON readers").
 *
 *   parse [-n N]... [-c CLOUD]   (default: 1000 10000 30000 instances;
 *                                 CLOUD: azure, gcp, lambda or aws only)
 *
 * CPU time of this thread (CLOCK_THREAD_CPUTIME_ID), best of 5 runs, so
 * a loaded machine inflates it least.  Prints "RESULT parse[cloud] ..."
 * lines (target: <= 10 us per instance) that bench/run.sh collects.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../drivers/aws/aws_ec2.h"
#include "../drivers/azure/azure.h"
#include "../drivers/gcp/gcp.h"
#include "../drivers/lambda/lambda.h"
#include "drvc_enc.h"

#define TARGET_US 10.0
#define RUNS 5

static double cpu_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* ------------------------------------------------------------- pages */

static void azure_page(drvc_buf *b, size_t n)
{
	drvc_buf_adds(b, "{\"value\":[");
	for (size_t i = 0; i < n; i++)
		drvc_buf_addf(b, "%s{\"name\":\"gb-pool-%zu-%zu\",\"id\":"
			"\"/subscriptions/00000000-0000-0000-0000-000000000000/"
			"resourceGroups/gpubroker/providers/Microsoft.Compute/"
			"virtualMachines/gb-pool-%zu-%zu\",\"type\":"
			"\"Microsoft.Compute/virtualMachines\",\"location\":\"eastus\","
			"\"zones\":[\"1\"],\"tags\":{\"gpubroker-pool\":\"pool-%zu\","
			"\"gpubroker-broker\":\"b1\",\"gpubroker-token\":\"tok-%zu\","
			"\"owner\":\"ml-team\"},\"properties\":{\"vmId\":"
			"\"4d2c6c1e-0000-4000-8000-%012zu\",\"hardwareProfile\":"
			"{\"vmSize\":\"Standard_NC24ads_A100_v4\"},\"storageProfile\":"
			"{\"imageReference\":{\"publisher\":\"microsoft-dsvm\",\"offer\":"
			"\"ubuntu-hpc\",\"sku\":\"2204\",\"version\":\"latest\","
			"\"exactVersion\":\"22.04.2024010101\"},\"osDisk\":{\"osType\":"
			"\"Linux\",\"name\":\"gb-pool-%zu-%zu_OsDisk_1_abcdef\","
			"\"createOption\":\"FromImage\",\"caching\":\"ReadWrite\","
			"\"managedDisk\":{\"storageAccountType\":\"Premium_LRS\",\"id\":"
			"\"/subscriptions/00000000-0000-0000-0000-000000000000/"
			"resourceGroups/gpubroker/providers/Microsoft.Compute/disks/"
			"gb-pool-%zu-%zu_OsDisk_1_abcdef\"},\"deleteOption\":\"Delete\","
			"\"diskSizeGB\":128},\"dataDisks\":[]},\"osProfile\":"
			"{\"computerName\":\"gb-pool-%zu-%zu\",\"adminUsername\":"
			"\"gpubroker\",\"linuxConfiguration\":{\"disablePassword"
			"Authentication\":true,\"ssh\":{\"publicKeys\":[{\"path\":"
			"\"/home/gpubroker/.ssh/authorized_keys\",\"keyData\":"
			"\"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGJ0ZXN0a2V5Zm9yYmVuY2ht"
			"YXJrc29ubHlub3RhcmVhbGtleQ gpubroker\"}]},\"provisionVMAgent\":"
			"true},\"secrets\":[],\"allowExtensionOperations\":true},"
			"\"networkProfile\":{\"networkInterfaces\":[{\"id\":"
			"\"/subscriptions/00000000-0000-0000-0000-000000000000/"
			"resourceGroups/gpubroker/providers/Microsoft.Network/"
			"networkInterfaces/gb-pool-%zu-%zu-nic\",\"properties\":"
			"{\"deleteOption\":\"Delete\"}}]},\"priority\":\"Spot\","
			"\"evictionPolicy\":\"Deallocate\",\"billingProfile\":"
			"{\"maxPrice\":-1},\"provisioningState\":\"Succeeded\","
			"\"timeCreated\":\"2026-11-20T10:20:30.1234567+00:00\","
			"\"instanceView\":{\"computerName\":\"gb-pool-%zu-%zu\","
			"\"osName\":\"ubuntu\",\"osVersion\":\"22.04\",\"vmAgent\":"
			"{\"vmAgentVersion\":\"2.9.1.1\",\"statuses\":[{\"code\":"
			"\"ProvisioningState/succeeded\",\"level\":\"Info\","
			"\"displayStatus\":\"Ready\",\"message\":\"Guest Agent is "
			"running\",\"time\":\"2026-11-20T10:25:00+00:00\"}]},"
			"\"disks\":[{\"name\":\"gb-pool-%zu-%zu_OsDisk_1_abcdef\","
			"\"statuses\":[{\"code\":\"ProvisioningState/succeeded\","
			"\"level\":\"Info\",\"displayStatus\":\"Provisioning "
			"succeeded\",\"time\":\"2026-11-20T10:21:00+00:00\"}]}],"
			"\"hyperVGeneration\":\"V2\",\"statuses\":[{\"code\":"
			"\"ProvisioningState/succeeded\",\"level\":\"Info\","
			"\"displayStatus\":\"Provisioning succeeded\",\"time\":"
			"\"2026-11-20T10:21:30+00:00\"},{\"code\":\"PowerState/running\","
			"\"level\":\"Info\",\"displayStatus\":\"VM running\"}]}}}",
			i ? "," : "", i / 10, i, i / 10, i, i / 10, i, i, i / 10, i,
			i / 10, i, i / 10, i, i / 10, i, i / 10, i, i / 10, i);
	drvc_buf_adds(b, "],\"nextLink\":null}");
}

static void gce_page(drvc_buf *b, size_t n)
{
	drvc_buf_adds(b, "{\"items\":{\"zones/us-central1-a\":{\"instances\":[");
	for (size_t i = 0; i < n; i++)
		drvc_buf_addf(b, "%s{\"name\":\"gb-pool-%zu-%zu\",\"zone\":"
			"\"https://www.googleapis.com/compute/v1/projects/p/zones/"
			"us-central1-a\",\"machineType\":\"https://www.googleapis.com/"
			"compute/v1/projects/p/zones/us-central1-a/machineTypes/"
			"a2-highgpu-1g\",\"status\":\"RUNNING\",\"creationTimestamp\":"
			"\"2026-11-20T02:20:30.123-08:00\",\"labels\":{\"gpubroker-pool\":"
			"\"pool-%zu\",\"gpubroker-broker\":\"b1\",\"gpubroker-token\":"
			"\"tok-%zu\"},\"scheduling\":{\"provisioningModel\":\"SPOT\","
			"\"preemptible\":true},\"networkInterfaces\":[{\"networkIP\":"
			"\"10.128.%zu.%zu\",\"accessConfigs\":[{\"natIP\":"
			"\"34.1.%zu.%zu\"}]}],\"guestAccelerators\":[{\"acceleratorType\":"
			"\"https://www.googleapis.com/compute/v1/projects/p/zones/"
			"us-central1-a/acceleratorTypes/nvidia-tesla-a100\","
			"\"acceleratorCount\":1}]}", i ? "," : "", i / 10, i, i / 10, i,
			i / 256 % 256, i % 256, i / 256 % 256, i % 256);
	drvc_buf_adds(b, "]}}}");
}

static void lambda_page(drvc_buf *b, size_t n)
{
	drvc_buf_adds(b, "{\"data\":[");
	for (size_t i = 0; i < n; i++)
		drvc_buf_addf(b, "%s{\"id\":\"0920582c7ff041399e34823a0be%05zu\","
			"\"name\":\"gb-pool-%zu-%zu\",\"ip\":\"198.51.%zu.%zu\","
			"\"private_ip\":\"10.0.%zu.%zu\",\"status\":\"active\","
			"\"ssh_key_names\":[\"gpubroker\"],\"file_system_names\":[],"
			"\"region\":{\"name\":\"us-east-1\",\"description\":"
			"\"Virginia, USA\"},\"instance_type\":{\"name\":"
			"\"gpu_1x_a100_sxm4\",\"description\":\"1x A100 (40 GB SXM4)\","
			"\"gpu_description\":\"A100 (40 GB SXM4)\","
			"\"price_cents_per_hour\":129,\"specs\":{\"vcpus\":30,"
			"\"memory_gib\":200,\"storage_gib\":512,\"gpus\":1}},"
			"\"hostname\":\"198-51-0-1.cloud.lambdalabs.com\","
			"\"jupyter_token\":\"53968f128c4a4489b688c2c0a181d083\","
			"\"jupyter_url\":\"https://jupyter.example\",\"is_reserved\":false,"
			"\"created_at\":\"2026-11-20T10:20:30Z\",\"tags\":[{\"key\":"
			"\"gpubroker-pool\",\"value\":\"pool-%zu\"},{\"key\":"
			"\"gpubroker-broker\",\"value\":\"b1\"}]}", i ? "," : "", i,
			i / 10, i, i / 256 % 256, i % 256, i / 256 % 256, i % 256,
			i / 10);
	drvc_buf_adds(b, "]}");
}

static void ec2_page(drvc_buf *b, size_t n)
{
	drvc_buf_adds(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<DescribeInstancesResponse xmlns=\"http://ec2.amazonaws.com/doc/"
		"2016-11-15/\"><requestId>8f7724cf-496f-496e-8fe3-example"
		"</requestId><reservationSet>");
	for (size_t i = 0; i < n; i++)
		drvc_buf_addf(b, "<item><reservationId>r-%017zx</reservationId>"
			"<ownerId>123456789012</ownerId><groupSet/><instancesSet><item>"
			"<instanceId>i-%017zx</instanceId><imageId>ami-0abcdef1234567890"
			"</imageId><instanceState><code>16</code><name>running</name>"
			"</instanceState><privateDnsName>ip-10-0-0-1.ec2.internal"
			"</privateDnsName><dnsName/><reason/><keyName>gpubroker"
			"</keyName><amiLaunchIndex>0</amiLaunchIndex><productCodes/>"
			"<instanceType>p4d.24xlarge</instanceType><launchTime>"
			"2026-11-20T10:20:30.000Z</launchTime><placement>"
			"<availabilityZone>us-east-1a</availabilityZone><groupName/>"
			"<tenancy>default</tenancy></placement><monitoring><state>"
			"disabled</state></monitoring><subnetId>subnet-0123456789abcdef0"
			"</subnetId><vpcId>vpc-0123456789abcdef0</vpcId>"
			"<privateIpAddress>10.0.%zu.%zu</privateIpAddress>"
			"<ipAddress>54.1.%zu.%zu</ipAddress><sourceDestCheck>true"
			"</sourceDestCheck><architecture>x86_64</architecture>"
			"<rootDeviceType>ebs</rootDeviceType><rootDeviceName>/dev/xvda"
			"</rootDeviceName><instanceLifecycle>spot</instanceLifecycle>"
			"<tagSet><item><key>gpubroker-pool</key><value>pool-%zu</value>"
			"</item><item><key>gpubroker-broker</key><value>b1</value>"
			"</item><item><key>gpubroker-token</key><value>tok-%zu</value>"
			"</item></tagSet><virtualizationType>hvm</virtualizationType>"
			"<hypervisor>xen</hypervisor><ebsOptimized>true</ebsOptimized>"
			"<enaSupport>true</enaSupport></item></instancesSet></item>",
			i, i, i / 256 % 256, i % 256, i / 256 % 256, i % 256, i / 10,
			i);
	drvc_buf_adds(b, "</reservationSet></DescribeInstancesResponse>");
}

/* ----------------------------------------------------------- readers */

static size_t seen;

static int azure_fn(void *ud, azure_vm *vm)
{
	(void)ud;
	seen += vm->name[0] != 0 && vm->ntags > 0;
	return 0;
}

static int gce_fn(void *ud, gcp_inst *in)
{
	(void)ud;
	seen += in->name[0] != 0 && in->nlabels > 0;
	return 0;
}

static int lambda_fn(void *ud, const lambda_inst *in)
{
	(void)ud;
	seen += in->ntags > 0;
	return 0;
}

static int ec2_fn(void *ud, const gb_instance *in)
{
	(void)ud;
	seen += in->ntags > 0;
	return 0;
}

static int run_driver(int cloud, const drvc_buf *b)
{
	gb_error err;
	char *next = NULL;
	int rc;
	memset(&err, 0, sizeof(err));
	switch (cloud) {
	case 0:
		rc = azure_parse_vm_page(b->data, b->len, azure_fn, NULL, &next,
		                         &err);
		break;
	case 1:
		rc = gcp_parse_agg_page(b->data, b->len, gce_fn, NULL, &next,
		                        &err);
		break;
	case 2:
		rc = lambda_parse_list(b->data, b->len, lambda_fn, NULL, &err);
		break;
	default:
		rc = aws_ec2_parse_instances(b->data, b->len,
		                             "DescribeInstancesResponse",
		                             "us-east-1", ec2_fn, NULL, &next,
		                             &err);
	}
	free(next);
	if (rc < 0)
		fprintf(stderr, "parse: %s\n", err.message);
	return rc;
}

/* jansson: the whole tree, then the same members the driver reads (the
 * drivers' readers before issue 36, azure_vm_parse / gcp_inst_parse) */
static int run_jansson(int cloud, const drvc_buf *b)
{
	json_t *root = json_loadb(b->data, b->len, 0, NULL), *v;
	const json_t *list;
	size_t i;
	if (!root)
		return -1;
	list = cloud == 0 ? json_object_get(root, "value")
	       : cloud == 1
	               ? json_object_get(json_object_get(json_object_get(
	                                         root, "items"),
	                                         "zones/us-central1-a"),
	                                 "instances")
	               : json_object_get(root, "data");
	json_array_foreach(list, i, v) {
		if (cloud == 0) {
			azure_vm vm;
			if (azure_vm_parse(v, &vm) == 0)
				azure_fn(NULL, &vm);
			azure_vm_free(&vm);
		} else if (cloud == 1) {
			gcp_inst in;
			if (gcp_inst_parse(v, &in) == 0)
				gce_fn(NULL, &in);
			gcp_inst_free(&in);
		} else {
			seen += json_string_value(json_object_get(v, "id")) != NULL;
		}
	}
	json_decref(root);
	return 0;
}

/* Pages as large as the drivers get them: ARM and EC2 (MaxResults) at
 * most 1,000 instances, GCE 500 (the driver's maxResults), Lambda every
 * instance in one answer; n instances are one such page read n / size
 * times. */
static const size_t page_max[4] = { 1000, 500, 0, 1000 };

static double best_us(int cloud, const drvc_buf *b, int jansson, size_t reps)
{
	double best = 0;
	for (int r = 0; r < RUNS; r++) {
		double t0 = cpu_us(), t;
		for (size_t k = 0; k < reps; k++)
			if ((jansson ? run_jansson(cloud, b)
			             : run_driver(cloud, b)) < 0)
				return -1;
		t = cpu_us() - t0;
		if (r == 0 || t < best)
			best = t;
	}
	return best;
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "azure", "gcp", "lambda", "aws" };
	static const char *const readers[] = { "drvc_scan (yajl)",
	                                       "drvc_scan (yajl)",
	                                       "drvc_scan (yajl)",
	                                       "libexpat tree" };
	size_t sizes[8] = { 1000, 10000, 30000 };
	size_t nsizes = 3;
	const char *only = NULL;
	int fails = 0, custom = 0;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "-n") == 0 && nsizes < 8) {
			if (!custom)
				nsizes = 0;
			custom = 1;
			sizes[nsizes++] = strtoul(argv[i + 1], NULL, 10);
		} else if (strcmp(argv[i], "-c") == 0) {
			only = argv[i + 1];
		}
	}
	for (int cloud = 0; cloud < 4; cloud++) {
		if (only && strcmp(only, names[cloud]) != 0)
			continue;
		double per10k = 0;
		for (size_t k = 0; k < nsizes; k++) {
			drvc_buf b = DRVC_BUF_INIT;
			size_t n = sizes[k];
			double us, jus = -1;
			size_t pm = page_max[cloud], per = pm && n > pm ? pm : n;
			if (cloud == 0)
				azure_page(&b, per);
			else if (cloud == 1)
				gce_page(&b, per);
			else if (cloud == 2)
				lambda_page(&b, per);
			else
				ec2_page(&b, per);
			us = best_us(cloud, &b, 0, n / per);
			if (cloud < 3)
				jus = best_us(cloud, &b, 1, n / per);
			if (us < 0) {
				fails++;
				drvc_buf_free(&b);
				continue;
			}
			printf("parse: %-6s %6zu instances, %5.1f MB %s: %s "
			       "%8.1f ms cpu = %5.2f us/instance", names[cloud], n,
			       (double)b.len / 1e6, per < n ? "pages" : "page",
			       readers[cloud], us / 1e3,
			       us / (double)n);
			if (jus >= 0)
				printf("; jansson tree %8.1f ms = %5.2f us/instance "
				       "(%.1fx)", jus / 1e3, jus / (double)n, jus / us);
			printf("\n");
			if (n == 10000 || (per10k == 0 && k + 1 == nsizes))
				per10k = us / (double)n;
			drvc_buf_free(&b);
		}
		printf("RESULT parse[%s] us_per_instance %.2f target<=%.0f ratio "
		       "%.2f %s (%s, 10,000 instances, best of %d)\n",
		       names[cloud], per10k, TARGET_US, per10k / TARGET_US,
		       per10k <= TARGET_US ? "PASS" : "MISS", readers[cloud], RUNS);
	}
	return fails ? 1 : 0;
}
