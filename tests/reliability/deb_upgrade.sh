#!/bin/sh
# deb_upgrade.sh -- tests/integration/deb.sh with the upgrade (DEB_UPGRADE=1):
# every package installed, then upgraded to a newer version of this run's
# own, a changed /etc/gpubroker/broker.yaml kept, then purged.  Over a
# minute on a loaded machine, hence here.
DEB_UPGRADE=1 exec sh "$GB_SRC/tests/integration/deb.sh"
