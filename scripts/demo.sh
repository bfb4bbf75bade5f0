#!/usr/bin/env bash
# The one-command demo: builds the project, then tells the split-brain story with a real etcd and two worker JVMs
# running the agent. Exits 0 when the story held, 1 with the reason when it did not.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/prerequisites.sh
mvn -B -q install -DskipTests
# The harness's main code needs nothing but the JDK, so the two class directories are the whole classpath.
exec java -cp sample-apps/lease-demo/target/classes:testing/harness/target/classes dev.fencing.demo.LeaseDemo
