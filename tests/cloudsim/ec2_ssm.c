/*
 * ec2_ssm.c -- RunInstances' ImageId=resolve:ssm:<parameter>[:version]:
 * EC2 resolves a Systems Manager parameter holding an AMI id at launch
 * and the instance then carries that ami-... id (RunInstances and
 * DescribeInstances show it, never the parameter).
 *
 * cloudsim has no Parameter Store.  It models the AWS public parameters
 * (/aws/service/...) under the namespaces listed below: each resolves,
 * per region, to a deterministic "ami-" + 17 hex derived from (parameter,
 * region), so the same parameter gives the same AMI in a region and a
 * different one in another region, as the real per-region AMIs do.  Any
 * other parameter (an account's own /golden-ami, a namespace not listed)
 * does not exist here and the launch is refused with
 * InvalidParameterValue.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ec2.h"

/* AWS public parameter namespaces cloudsim resolves (gpubroker's default
 * image is under the first one: drivers/aws/aws_ec2.h AWS_DEFAULT_IMAGE). */
static const char *const public_prefixes[] = {
	"/aws/service/deeplearning/",
	"/aws/service/ami-amazon-linux-latest/",
	"/aws/service/canonical/",
	"/aws/service/debian/",
	"/aws/service/ecs/",
	"/aws/service/eks/",
	"/aws/service/bottlerocket/",
	"/aws/service/ami-windows-latest/",
	"/aws/service/freebsd/",
	"/aws/service/marketplace/",
};

static int known_parameter(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > 2048 || name[n - 1] == '/')
		return 0;
	for (size_t i = 0; i < GB_ARRAY_LEN(public_prefixes); i++) {
		size_t p = strlen(public_prefixes[i]);
		if (strncmp(name, public_prefixes[i], p) == 0 && name[p])
			return 1;
	}
	return 0;
}

int ec2_resolve_image(ec2_ctx *c, const char *image, char out[22])
{
	const char *param;
	char *in;
	char hex[65];
	if (strncmp(image, "resolve:ssm:", 12) != 0) {
		snprintf(out, 22, "%s", image);
		return 0;
	}
	param = image + 12;
	{
		/* a trailing ":<version>" or ":<label>" selects a version of
		 * the same parameter */
		const char *colon = strrchr(param, ':');
		size_t len = colon ? (size_t)(colon - param) : strlen(param);
		char *name = gb_xstrndup(param, len);
		int ok = known_parameter(name);
		free(name);
		if (!ok) {
			ec2_error(c, 400, "InvalidParameterValue",
			          "Invalid value '%s' for parameter imageId: "
			          "the Systems Manager parameter '%s' does not "
			          "exist in %s or cannot be resolved to an AMI "
			          "(cloudsim resolves only AWS public parameters "
			          "under /aws/service/deeplearning/, "
			          "/aws/service/ami-amazon-linux-latest/, "
			          "/aws/service/canonical/ and similar).",
			          image, param, c->region);
			return -1;
		}
	}
	in = gb_xasprintf("%s|%s", param, c->region);
	gb_sha256_hex(in, strlen(in), hex);
	free(in);
	snprintf(out, 22, "ami-%.17s", hex);
	return 0;
}
