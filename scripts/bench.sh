#!/usr/bin/env bash
# The benchmark command (BENCHMARKS.md). Not part of the test run: `mvn verify` only compiles benchmarks/.
#
#   scripts/bench.sh [all|jmh|startup|nmt|pg|pooler|clients|kafka|kafka-perf|failover|spring|etcd-client|outbox] [JMH options or benchmark regex]
#   scripts/bench.sh pg,clients,kafka      several parts, one build
#
# jmh:      per-call hot path (policy decision + tagging) per channel, against a no-op hook, in ns/op.
# startup:  hello-world JVM with and without the agent (Java 17 and 25): start-to-main, start-to-exit, premain, RSS,
#           threads.
# nmt:      where the added memory goes: Native Memory Tracking categories, heap used, classes of the idle
#           hello world with and without the agent (Java 17 and 25).
# pg:       single-row UPDATE on loopback PostgreSQL, 1 and 4 connections, fenced and unfenced table; then the
#           fence trigger's time inside PostgreSQL (EXPLAIN ANALYZE) beside an empty and a minimal trigger.
# pooler:   the pg part's UPDATE through PgBouncer in transaction mode (4 server connections): what the agent's
#           per-transaction session values cost (one autocommit write = three round trips) against no agent.
# clients:  POST loop to a loopback JDK HttpServer: JDK HttpClient, OkHttp, Apache HttpClient 5; also no agent with
#           the app sending the agent's three headers itself (the in-process server parses them either way);
#           in BENCH_JAVA_OPTS, -Dbench.clients.which=apache (default jdk,okhttp,apache) runs only some clients,
#           -Dbench.clients.base-agent=<another fencing-agent.jar> adds it as a variant "base" in the same rounds.
# kafka:    producer throughput, 1 KB records, acks=1, broker in a child JVM.
# kafka-perf: Kafka's own ProducerPerformance (kafka-tools), acks=1, 100-byte and 1 KB records, no agent / this
#           agent, LOAD_ROUNDS paired rounds; each run a fixed count of records (-Dbench.perf.records-100,
#           -Dbench.perf.records-1024 in BENCH_JAVA_OPTS), 20 s or more; -Dbench.perf.variants=none,header,agent adds
#           "header": no agent, each record given the agent's header by a producer interceptor (also: exempt, the
#           agent with the topic exempt; header-exempt, both; header-min, no agent and the smallest header;
#           header-name-min / header-value-min, only the name or only the value that small; header-nogrant, the
#           value without its grant); -Dbench.perf.producer-props=batch.size=65536,... adds producer settings.
#           pg, clients and kafka: no agent / this agent (holding a real etcd lease) / the OpenTelemetry Java agent,
#           in LOAD_ROUNDS rounds (default 5, rotating order) of 5 s warm-up (clients: 25 s, per client) + 5 s
#           measured, heap fixed at 512 MB.
# failover: holder frozen (SIGSTOP) to the successor's first write accepted by a PostgreSQL fence, TTL 2, 5, 10 s
#           (FAILOVER_TRIALS per TTL, default 5).
# spring:   startup of the Spring Boot sample (sample-apps/spring-replicas, java -jar, JPA on PostgreSQL, Tomcat):
#           no agent / this agent (holding a real etcd lease) / the OpenTelemetry Java agent, SPRING_ROUNDS rounds
#           (default 5, rotating order): Spring's started-in time, time to the first HTTP 200, CPU until then, RSS,
#           classes loaded, the launch before Spring's clock; ratios paired per round.
#           SPRING_BASE_AGENT=<another fencing-agent.jar> adds it as a fourth variant in the same rounds (this build
#           against, say, main's); SPRING_BASE_OPTIONS=<options> appends options to the fourth variant only (without
#           SPRING_BASE_AGENT it is this jar: the same build with other options); SPRING_AGENT_OPTIONS=<options>
#           appends agent options to both (log.level=debug prints the transformer's counters per run);
#           SPRING_THREAD_CPU=true prints each run's CPU time per thread name at the first 200;
#           SPRING_JVM_ARGS=<JVM options> for every variant (profiles; %v in them: the variant and round).
# outbox:   the tokened outbox on loopback PostgreSQL, OUTBOX_ROUNDS rounds (default 3): the writing transaction
#           (UPDATE of a fenced row, COMMIT) with and without one outbox INSERT, agent attached (many keys / one key,
#           1 and 4 threads); the relay's events/s for 20,000 committed events to a loopback JDK HttpServer (1 and 2
#           relays); commit-to-delivery latency p50/p99 at 100 events/s, LISTEN and --no-listen (writer, relay and
#           receiver in one JVM); profile: the outbox INSERT's triggers inside PostgreSQL (EXPLAIN ANALYZE);
#           kafka (not in the default): the relay part's events as records to a broker in a child JVM, 1 and 2 relays.
#           OUTBOX_PARTS=insert,profile,relay,kafka,latency selects among them.
# etcd-client: what holding an etcd lock costs a fresh JVM (launch to held, CPU, RSS, classes): nothing / the agent's
#           jetcd provider / the same calls to etcd's JSON gateway over the JDK HttpClient / over a plain socket
#           (transports the agent does not have, measured for comparison), ETCD_CLIENT_ROUNDS rounds (default 10,
#           rotating order), Java 17.
# BENCH_JAVA_OPTS: system properties for the load parts' driver, e.g. "-Dbench.warm=3 -Dbench.fixed-heap=false"
#           (a short warm-up and the JVM's default heap).
# Builds and runs hold the shared build lock (FENCING_BENCH_LOCK, default /tmp/mvn.lock) so they never overlap with
# another build or test run on the machine. Results go to stdout and benchmarks/target/results/.
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"
[ $# -gt 0 ] && shift
lock="${FENCING_BENCH_LOCK:-/tmp/mvn.lock}"
java25="$(scripts/java25.sh)"
java17="${FENCING_BENCH_JAVA17:-${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}}"
# Short runs by default (a shared 2-core machine); override with e.g. JMH_OPTS="-f 3 -wi 5 -i 10".
jmh_opts="${JMH_OPTS:--f 1 -wi 3 -i 5 -w 1s -r 1s}"
rounds="${STARTUP_ROUNDS:-5}"
out=benchmarks/target/results
parts="jmh startup nmt pg pooler clients kafka kafka-perf failover spring etcd-client outbox"
for w in ${what//,/ }; do
  case " all $parts " in *" $w "*) ;; *) echo "usage: $0 [all|${parts// /|}][,part...] [JMH args]" >&2; exit 2 ;; esac
done
# Does this run include part $1?
run() { case ",$what," in *",all,"* | *",$1,"*) return 0 ;; esac; return 1; }
load_rounds="${LOAD_ROUNDS:-5}"
agent_jar=agent/jar/target/fencing-agent.jar
otel_jar=benchmarks/target/otel/opentelemetry-javaagent.jar

# Package in one reactor (-am) so the class path points at this checkout's modules, not at ~/.m2 snapshots.
flock "$lock" mvn -B -q ${MVN_ARGS:-} package -DskipTests -pl benchmarks,agent/jar,sample-apps/spring-replicas -am
cp="$(cat benchmarks/target/bench-classpath.txt):benchmarks/target/classes"
mkdir -p "$out"

{
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GB", $2/1048576}' /proc/meminfo)," \
    "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), load before run: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "java: $("$java17/bin/java" -version 2>&1 | head -1); $("$java25/bin/java" -version 2>&1 | head -1)"
} | tee "$out/machine.txt"

if run jmh; then
  # shellcheck disable=SC2086
  flock "$lock" "$java17/bin/java" -cp "$cp" org.openjdk.jmh.Main $jmh_opts -rf csv -rff "$out/jmh.csv" "$@"
  echo
  echo "Hot path, ns/op (JMH average time, Java 17); added = agent - noop:"
  # Columns: "Benchmark","Mode","Threads","Samples","Score","Score Error (99.9%)","Unit","Param: ..."...
  awk -F, 'NR == 1 { next }
    { sub(/\r$/, ""); gsub(/"/, ""); name = $1; sub(/^dev\.fencing\.agent\.(instrumentation\.[a-z]+\.|policy\.)/, "", name)
      v = ""; for (i = 8; i <= NF; i++) if ($i != "") v = $i
      score[name, v] = $5; err[name, v] = $6; if (!(name in seen)) { seen[name] = 1; order[++n] = name }
      if (!((name, v) in vseen)) { vseen[name, v] = 1; vars[name] = vars[name] " " v } }
    END { print "| benchmark | variant | ns/op | ± (99.9%) | noop ns/op | added ns |"; print "|---|---|---:|---:|---:|---:|"
      for (k = 1; k <= n; k++) { name = order[k]; m = split(vars[name], vs, " ")
        for (j = 1; j <= m; j++) { v = vs[j]; if (v == "noop") continue
          base = ((name, "noop") in score) ? score[name, "noop"] : ""
          printf "| %s | %s | %.1f | %.1f | %s | %s |\n", name, v, score[name, v], err[name, v],
            base == "" ? "-" : sprintf("%.1f", base), base == "" ? "-" : sprintf("%+.1f", score[name, v] - base) } } }' \
    "$out/jmh.csv" | tee "$out/jmh-table.md"
fi

if run startup; then
  [ -x "$java25/bin/java" ] || { echo "Java 25 not found at $java25: run scripts/prerequisites.sh --java25 or set FENCING_IT_JAVA25" >&2; exit 1; }
  echo
  echo "Startup and footprint (medians of $rounds alternating A/B rounds):"
  flock "$lock" "$java17/bin/java" -cp "$cp" dev.fencing.bench.StartupBench "$agent_jar" \
    "$rounds" "$java17" "$java25" | tee "$out/startup-table.md"
fi

if run nmt; then
  for home in "$java17" "$java25"; do
    echo
    echo "Memory of an idle hello world, $("$home/bin/java" -version 2>&1 | head -1):"
    flock "$lock" "$java17/bin/java" -cp "$cp" dev.fencing.bench.NmtBench "$agent_jar" "$home" \
      | tee "$out/nmt-$(basename "$home")-table.md"
  done
fi

need_etcd() {
  command -v etcd > /dev/null || { echo "etcd not found: run scripts/prerequisites.sh (installs etcd-server)" >&2; exit 1; }
}
need_pg() {
  [ -x /usr/lib/postgresql/15/bin/initdb ] \
    || { echo "PostgreSQL 15 not found: apt-get install -y postgresql (scripts/prerequisites.sh)" >&2; exit 1; }
}

need_pgbouncer() {
  [ -x /usr/sbin/pgbouncer ] || { echo "PgBouncer not found: apt-get install -y pgbouncer (scripts/prerequisites.sh)" >&2; exit 1; }
}

for part in pg pooler clients kafka kafka-perf; do
  if run "$part"; then
    need_etcd
    case "$part" in pg) need_pg ;; pooler) need_pg; need_pgbouncer ;; esac
    echo
    # shellcheck disable=SC2086
    flock "$lock" "$java17/bin/java" ${BENCH_JAVA_OPTS:-} -cp "$cp" dev.fencing.bench.LoadBench "$part" "$agent_jar" "$otel_jar" \
      "$load_rounds" "$java17" | tee "$out/$part-table.md"
  fi
done

if run outbox; then
  need_etcd
  need_pg
  echo
  # shellcheck disable=SC2086
  flock "$lock" "$java17/bin/java" ${BENCH_JAVA_OPTS:-} -cp "$cp" dev.fencing.bench.OutboxBench "$agent_jar" \
    "${OUTBOX_ROUNDS:-3}" "$java17" "${OUTBOX_PARTS:-insert,profile,relay,latency}" | tee "$out/outbox-table.md"
fi

if run failover; then
  need_etcd
  need_pg
  echo
  flock "$lock" "$java17/bin/java" -cp "$cp" dev.fencing.bench.FailoverBench "$agent_jar" "${FAILOVER_TRIALS:-5}" \
    "$java17" 2 5 10 | tee "$out/failover-table.md"
fi

if run spring; then
  need_etcd
  need_pg
  echo
  flock "$lock" "$java17/bin/java" -Dfencing.it.spring.jar=sample-apps/spring-replicas/target/fencing-sample-spring-replicas-0.1.0-SNAPSHOT.jar \
    -Dbench.agent-options="${SPRING_AGENT_OPTIONS:-}" -Dbench.thread-cpu="${SPRING_THREAD_CPU:-false}" \
    -Dbench.base-options="${SPRING_BASE_OPTIONS:-}" -Dbench.jvm-args="${SPRING_JVM_ARGS:-}" \
    -cp "$cp" dev.fencing.bench.SpringBench "$agent_jar" "$otel_jar" "${SPRING_ROUNDS:-5}" "$java17" "${SPRING_BASE_AGENT:-}" \
    | tee "$out/spring-table.md"
fi

if run etcd-client; then
  need_etcd
  echo
  flock "$lock" "$java17/bin/java" -cp "$cp" dev.fencing.bench.EtcdClientBench "${ETCD_CLIENT_ROUNDS:-10}" "$java17" \
    | tee "$out/etcd-client-table.md"
fi
