#!/usr/bin/env bash
# The fault harness (RELIABILITY.md): N trials (default 200) of agent-attached workers contending for one lock and
# writing through fenced PostgreSQL, MariaDB, HTTP and Kafka while the holder is frozen or partitioned and etcd's
# leader is killed, etcd restarted or wiped, the holder's in-flight writes are delayed past its successor's, the
# holder is cut from a resource, a database crashes, the broker is killed, a worker's wall clock jumps; the checker's
# last line is
#   trials=N stale_accepted=S lost=L blocked=B rejected=R unfenced_stale=U unfenced_writes=W
# (U: writes of a holder that reached an unfenced table, HTTP receiver or topic after a later holder's first).
# Usage: scripts/faults.sh [trials] [--seed=N] [--workers=2|3] [--out=DIR] [--pooler[=POOL_SIZE]]
#   [--coordinator=etcd|zookeeper] [--locks=N] [--partitions=N] [--work=jvm|section|curator|jetcd|leader|outbox]
#   [--db=postgresql|mariadb]. Exit 0 when the history holds, 1 when the checker
# found a violation. --coordinator=zookeeper: a 3-server ZooKeeper ensemble issues the tokens instead of etcd (the
# same faults: the holder's proxies to the ZooKeeper servers cut, the ZooKeeper leader killed, every server
# restarted, the ensemble wiped). --locks=N (1-4): the workers hold N locks through declared sections, each lock with
# its own tables. --partitions=N: the Kafka topic's partitions (default 3). The checker judges per resource, lock and
# partition; the summary line ends with what is not the default (e.g. ` coordinator=zookeeper locks=2`).
# --pooler: the workers reach PostgreSQL through a real PgBouncer (/usr/sbin/pgbouncer) in transaction pooling mode
# with POOL_SIZE server connections (default 2, fewer than the workers: they share backends); the harness's own
# reads stay direct, and the summary line ends with `pooler=pgbouncer-transaction pool_size=N`.
# --work: where the workers' writes run: under the agent's JVM-wide lock (jvm, the default), in a declared section
# whose transactions commit after it returned (section), under the worker's own Curator InterProcessMutex (curator,
# on ZooKeeper) or jetcd Lock (jetcd, on etcd), or on a scheduler started by a Curator LeaderSelector (leader); the
# agent captures the last three. --work=outbox: under the JVM-wide lock, each pg transaction also writes two events
# into a tokened outbox table (sql install --outbox); one standalone relay per worker (java -jar fencing-agent.jar
# outbox relay) delivers them to an unfenced HTTP receiver and an unfenced topic, whose receivers apply each event
# once by its id (ProcessedEvents.markFirst); after each trial a relay is SIGKILLed mid-delivery. After a final drain
# the line adds outbox_events, outbox_deliveries, outbox_duplicates, outbox_applied, outbox_stale, outbox_lost and
# outbox_applied_twice (stale events count in stale_accepted, lost ones in lost). --db=mariadb (with --work=outbox):
# the outbox is on MariaDB instead, each MariaDB write one transaction of its row and the two events, polled by the
# relays; the line says ` db=mariadb`.
# FAULTS_KINDS=delay,clock-jump: only those fault kinds (RELIABILITY.md lists the ten). Not part of the test
# command (its 10-trial smoke, FaultsSmokeIT, a 2-trial --pooler smoke, FaultsPoolerSmokeIT, and a 4-trial
# ZooKeeper --locks=2 smoke, FaultsTopologySmokeIT, 2 trials of each --work mode, FaultsWorkModesSmokeIT, and 2
# --work=outbox trials on each --db, FaultsOutboxSmokeIT, are).
# --help: this text.
set -euo pipefail
if [[ " $* " == *" --help "* || " $* " == *" -h "* ]]; then
  sed -n '2,/^set /s/^# \{0,1\}//p' "$0"
  exit 0
fi
cd "$(dirname "$0")/.."
scripts/prerequisites.sh
mvn -B -ntp -q -Dstyle.color=never install -DskipTests -pl testing/faults -am
exec java -Xmx512m ${FAULTS_KINDS:+-Dfencing.faults.kinds=$FAULTS_KINDS} -cp "testing/faults/target/classes:$(cat testing/faults/target/runtime-classpath.txt)" \
  dev.fencing.faults.FaultRun "$@"
