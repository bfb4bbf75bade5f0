#!/usr/bin/env bash
# What the demo and the test command need besides a JDK 17 and Maven, checked (and installed where Debian can) so that a
# fresh machine gets a clear instruction instead of a failure deep inside a run: a real etcd, PostgreSQL 15 and MariaDB
# (the SQL fence tests) and promtool (the metrics, dashboard and alert tests), since nothing is mocked, and (with --java25) the
# JDK 25 the integration tests also run the agent on.
set -euo pipefail
need_java25=false
[ "${1:-}" = "--java25" ] && need_java25=true

fail() {
  echo "prerequisites: $*" >&2
  exit 1
}

for tool in java mvn; do
  command -v "$tool" >/dev/null 2>&1 || fail "'$tool' is not on PATH: install a JDK 17 and Maven first"
done

if ! command -v etcd >/dev/null 2>&1 || ! command -v etcdctl >/dev/null 2>&1; then
  [ "$(id -u)" -eq 0 ] || fail "etcd is not installed and installing it needs root: run" \
    "'apt-get update && apt-get install -y etcd-server etcd-client' as root, then try again"
  command -v apt-get >/dev/null 2>&1 || fail "etcd is not installed and there is no apt-get:" \
    "install etcd 3.4+ (etcd and etcdctl on PATH) by hand"
  echo "prerequisites: installing etcd (Debian packages etcd-server, etcd-client)" >&2
  if ! { apt-get -q update && DEBIAN_FRONTEND=noninteractive apt-get -q install -y etcd-server etcd-client; }; then
    fail "installing etcd-server and etcd-client with apt-get failed (see above)"
  fi
  command -v etcd >/dev/null 2>&1 || fail "etcd-server is installed but 'etcd' is still not on PATH"
fi

# The SQL fence tests (fences/sql) spawn PostgreSQL 15 and MariaDB from the Debian binaries, as the harness does etcd;
# nothing is started as a service. The metrics tests check the agent's /metrics, and the dashboards module the alert
# rules and every dashboard query, with promtool (Debian 'prometheus', which also brings the server), and the JDBC hook
# behind a transaction pooler with PgBouncer.
db_packages=()
command -v promtool >/dev/null 2>&1 || db_packages+=(prometheus)
# The SQL path behind a transaction pooler is tested through a real PgBouncer (Debian 'pgbouncer', /usr/sbin).
[ -x /usr/sbin/pgbouncer ] || command -v pgbouncer >/dev/null 2>&1 || db_packages+=(pgbouncer)
[ -x /usr/lib/postgresql/15/bin/initdb ] && [ -x /usr/lib/postgresql/15/bin/pg_ctl ] || db_packages+=(postgresql)
# The Kubernetes example (deploy/kubernetes) is read by kubectl in the dashboards module's tests (Debian's
# 'kubernetes-client' brings kubectl; no cluster is needed); the tests only (--java25), not the demo.
if $need_java25; then command -v kubectl >/dev/null 2>&1 || db_packages+=(kubernetes-client); fi
# The fault harness's clock-jump fault (testing/faults) skews one worker's wall clock with libfaketime (Debian
# 'libfaketime'), preloaded into that worker's JVM only.
[ -e /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 ] || db_packages+=(libfaketime)
# The Redisson lock capture (RedissonLockIT) runs against a real Redis (Debian 'redis-server'); the tests only.
if $need_java25; then command -v redis-server >/dev/null 2>&1 || db_packages+=(redis-server); fi
{ [ -x /usr/sbin/mariadbd ] || command -v mariadbd >/dev/null 2>&1; } && command -v mariadb-install-db >/dev/null 2>&1 \
  || db_packages+=(mariadb-server)
if [ "${#db_packages[@]}" -gt 0 ]; then
  [ "$(id -u)" -eq 0 ] || fail "${db_packages[*]} not installed and installing needs root: run" \
    "'apt-get update && apt-get install -y ${db_packages[*]}' as root, then try again"
  command -v apt-get >/dev/null 2>&1 || fail "${db_packages[*]} not installed and there is no apt-get:" \
    "install PostgreSQL 15 (binaries in /usr/lib/postgresql/15/bin), MariaDB 10.11, PgBouncer and promtool (Prometheus 2.x) by hand"
  echo "prerequisites: installing ${db_packages[*]} (Debian packages)" >&2
  if ! { apt-get -q update && DEBIAN_FRONTEND=noninteractive apt-get -q install -y "${db_packages[@]}"; }; then
    fail "installing ${db_packages[*]} with apt-get failed (see above)"
  fi
  command -v promtool >/dev/null 2>&1 || fail "prometheus is installed but 'promtool' is still not on PATH"
  if $need_java25; then command -v kubectl >/dev/null 2>&1 || fail "kubernetes-client is installed but 'kubectl' is still not on PATH"; fi
  [ -x /usr/lib/postgresql/15/bin/initdb ] || fail "postgresql is installed but /usr/lib/postgresql/15/bin/initdb is" \
    "missing: the tests need PostgreSQL 15 (Debian 12)"
fi

$need_java25 || exit 0
java25="$("$(dirname "$0")"/java25.sh)"
[ -x "$java25/bin/java" ] || fail "no JDK 25 at $java25 (no bin/java): the integration tests run on Java 17 and 25;" \
  "install a JDK 25 there (e.g. Temurin 25) or set FENCING_IT_JAVA25 to a JDK 25 home"
"$java25/bin/java" -version 2>&1 | grep -Eq 'version "25([."]|$)' \
  || fail "$java25 is not a JDK 25 ($("$java25/bin/java" -version 2>&1 | head -n 1)); set FENCING_IT_JAVA25 to a JDK 25 home"
