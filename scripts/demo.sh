#!/usr/bin/env bash
# The one-command demo: builds what it needs (the agent jar, the sample apps, the demo), then tells the split-brain
# story with real etcd, PostgreSQL and Kafka on loopback, the inventory service, the audit consumer and two ledger
# workers running the agent. Options: --observe (agent in observe mode), --prometheus (show the stale-write alert
# firing; needs /usr/bin/prometheus); --sections tells the other story instead: two replicas of the Spring Boot sample
# with a declared section (its scheduled job) and no JVM-wide lock; --help lists them. Exits 0 when the story held,
# 1 with the reason when it did not, 2 for an unknown option.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/prerequisites.sh
mvn -B -q -Dstyle.color=never install -DskipTests -pl sample-apps/demo -am
exec java -cp "sample-apps/demo/target/classes:$(cat sample-apps/demo/target/runtime-classpath.txt)" \
  dev.fencing.demo.Demo "$@"
