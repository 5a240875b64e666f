"""boto3_check.py -- the official AWS SDK for Python against cloudsim.

Usage: /usr/bin/python3 boto3_check.py EC2_URL KEY SECRET
Runs, describes (filters, ids, paginator, waiters) and terminates
instances, reads instance types / spot prices / zones, and checks that the
SDK sees EC2's error codes.  Prints one line per check; exit 1 on failure.
"""
import sys
import uuid

import boto3
import botocore
from botocore.config import Config

url, key, secret = sys.argv[1:4]
fails = 0


def check(cond, msg):
    global fails
    print(("ok   - " if cond else "FAIL - ") + msg)
    if not cond:
        fails += 1


cfg = Config(retries={"max_attempts": 1, "mode": "standard"})
ec2 = boto3.client("ec2", endpoint_url=url, region_name="us-east-1",
                   aws_access_key_id=key, aws_secret_access_key=secret,
                   config=cfg)
print("boto3", boto3.__version__, "botocore", botocore.__version__)

token = str(uuid.uuid4())
tags = [{"ResourceType": "instance",
         "Tags": [{"Key": "gpubroker-pool", "Value": "sdk"},
                  {"Key": "Name", "Value": "boto3-test"}]}]
r = ec2.run_instances(ImageId="ami-0123456789abcdef0", InstanceType="g5.xlarge",
                      MinCount=2, MaxCount=2, ClientToken=token,
                      TagSpecifications=tags,
                      Placement={"AvailabilityZone": "us-east-1b"})
ids = sorted(i["InstanceId"] for i in r["Instances"])
check(len(ids) == 2, "run_instances launched 2")
check(r["Instances"][0]["State"]["Name"] == "pending", "state pending")
check(r["Instances"][0]["Placement"]["AvailabilityZone"] == "us-east-1b",
      "placement")
check(hasattr(r["Instances"][0]["LaunchTime"], "year"),
      "LaunchTime parsed as a datetime")

r2 = ec2.run_instances(ImageId="ami-0123456789abcdef0", InstanceType="g5.xlarge",
                       MinCount=2, MaxCount=2, ClientToken=token,
                       TagSpecifications=tags,
                       Placement={"AvailabilityZone": "us-east-1b"})
check(sorted(i["InstanceId"] for i in r2["Instances"]) == ids,
      "ClientToken retry returns the same instances")
try:
    ec2.run_instances(ImageId="ami-0123456789abcdef0", InstanceType="g5.xlarge",
                      MinCount=1, MaxCount=1, ClientToken=token,
                      Placement={"AvailabilityZone": "us-east-1b"})
    check(False, "IdempotentParameterMismatch raised")
except botocore.exceptions.ClientError as e:
    check(e.response["Error"]["Code"] == "IdempotentParameterMismatch",
          "ClientError code IdempotentParameterMismatch")

# resolve:ssm: the instance carries the region's AMI, never the parameter
ssm = ("resolve:ssm:/aws/service/deeplearning/ami/x86_64/"
       "base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id")
sr = ec2.run_instances(ImageId=ssm, InstanceType="g5.xlarge",
                       MinCount=1, MaxCount=1)
ssm_id = sr["Instances"][0]["InstanceId"]
ssm_ami = sr["Instances"][0]["ImageId"]
check(ssm_ami.startswith("ami-") and len(ssm_ami) == 21,
      "run_instances with resolve:ssm returns an ami- ImageId")
check(ec2.describe_instances(InstanceIds=[ssm_id])["Reservations"][0]
      ["Instances"][0]["ImageId"] == ssm_ami,
      "describe_instances shows the same resolved ImageId")
ec2.terminate_instances(InstanceIds=[ssm_id])
try:
    ec2.run_instances(ImageId="resolve:ssm:/golden-ami",
                      InstanceType="g5.xlarge", MinCount=1, MaxCount=1)
    check(False, "an unknown SSM parameter is refused")
except botocore.exceptions.ClientError as e:
    check(e.response["Error"]["Code"] == "InvalidParameterValue",
          "unknown SSM parameter: InvalidParameterValue")

spot = ec2.run_instances(
    ImageId="ami-0123456789abcdef0", InstanceType="p5.48xlarge",
    MinCount=1, MaxCount=1,
    InstanceMarketOptions={"MarketType": "spot", "SpotOptions": {
        "SpotInstanceType": "one-time",
        "InstanceInterruptionBehavior": "terminate"}},
    TagSpecifications=tags)
sid = spot["Instances"][0]["InstanceId"]
check(spot["Instances"][0].get("InstanceLifecycle") == "spot", "spot launch")

w = ec2.get_waiter("instance_running")
w.wait(InstanceIds=ids + [sid], WaiterConfig={"Delay": 1, "MaxAttempts": 30})
d = ec2.describe_instances(InstanceIds=ids)
states = [i["State"]["Name"] for res in d["Reservations"]
          for i in res["Instances"]]
check(states == ["running", "running"], "waiter instance_running")

f = ec2.describe_instances(Filters=[
    {"Name": "tag:gpubroker-pool", "Values": ["sdk"]},
    {"Name": "instance-state-name", "Values": ["pending", "running"]}])
found = sorted(i["InstanceId"] for res in f["Reservations"]
               for i in res["Instances"])
check(found == sorted(ids + [sid]), "describe_instances with filters")
tagd = {t["Key"]: t["Value"] for t in
        f["Reservations"][0]["Instances"][0]["Tags"]}
check(tagd.get("Name") == "boto3-test", "tags parsed")

extra = ec2.run_instances(ImageId="ami-0123456789abcdef0",
                          InstanceType="g5.xlarge", MinCount=12, MaxCount=12,
                          TagSpecifications=[{"ResourceType": "instance",
                                              "Tags": [{"Key": "gpubroker-pool",
                                                        "Value": "sdk-paged"}]}])
eids = sorted(i["InstanceId"] for i in extra["Instances"])
pages, seen = 0, []
for page in ec2.get_paginator("describe_instances").paginate(
        Filters=[{"Name": "tag:gpubroker-pool", "Values": ["sdk-paged"]}],
        PaginationConfig={"PageSize": 5}):
    pages += 1
    seen += [i["InstanceId"] for res in page["Reservations"]
             for i in res["Instances"]]
check(pages == 3 and sorted(seen) == eids,
      "paginator over NextToken (%d pages, %d instances)" % (pages, len(seen)))

t = ec2.describe_instance_types(InstanceTypes=["p5.48xlarge"])
gi = t["InstanceTypes"][0]["GpuInfo"]
check(gi["Gpus"][0]["Name"] == "H100" and gi["Gpus"][0]["Count"] == 8,
      "describe_instance_types GpuInfo")
n = sum(len(p["InstanceTypes"]) for p in
        ec2.get_paginator("describe_instance_types").paginate(
            PaginationConfig={"PageSize": 5}))
check(n == 4, "describe_instance_types paginator (%d)" % n)
sp = ec2.describe_spot_price_history(InstanceTypes=["p5.48xlarge"],
                                     ProductDescriptions=["Linux/UNIX"])
prices = {h["AvailabilityZone"]: h["SpotPrice"]
          for h in sp["SpotPriceHistory"]}
check(prices.get("us-east-1a") == "30.900000", "describe_spot_price_history")
az = ec2.describe_availability_zones()
check([z["ZoneName"] for z in az["AvailabilityZones"]] ==
      ["us-east-1a", "us-east-1b", "us-east-1c"], "describe_availability_zones")

tr = ec2.terminate_instances(InstanceIds=ids + eids + [sid])
check(all(i["CurrentState"]["Name"] in ("shutting-down", "terminated")
          for i in tr["TerminatingInstances"]), "terminate_instances")
ec2.get_waiter("instance_terminated").wait(
    InstanceIds=ids, WaiterConfig={"Delay": 1, "MaxAttempts": 30})
check(True, "waiter instance_terminated")
tr = ec2.terminate_instances(InstanceIds=ids)
check(all(i["PreviousState"]["Name"] == "terminated"
          for i in tr["TerminatingInstances"]), "terminate again: idempotent")

try:
    ec2.describe_instances(InstanceIds=["i-0123456789abcdef0"])
    check(False, "InvalidInstanceID.NotFound raised")
except botocore.exceptions.ClientError as e:
    check(e.response["Error"]["Code"] == "InvalidInstanceID.NotFound",
          "InvalidInstanceID.NotFound through the SDK")
    check(e.response["ResponseMetadata"]["HTTPStatusCode"] == 400,
          "HTTP 400")
try:
    ec2.run_instances(ImageId="ami-0123456789abcdef0",
                      InstanceType="g5.xlarge", MinCount=1, MaxCount=1,
                      DryRun=True)
except botocore.exceptions.ClientError as e:
    check(e.response["Error"]["Code"] == "DryRunOperation", "DryRun")

bad = boto3.client("ec2", endpoint_url=url, region_name="us-east-1",
                   aws_access_key_id=key, aws_secret_access_key="wrong",
                   config=cfg)
try:
    bad.describe_availability_zones()
    check(False, "bad secret refused")
except botocore.exceptions.ClientError as e:
    check(e.response["Error"]["Code"] == "SignatureDoesNotMatch",
          "bad secret: SignatureDoesNotMatch")

sys.exit(1 if fails else 0)
