#!/usr/bin/env bash
# The project's test command (README, .ci/run): the full tier, unit tests, then integration tests that run the real
# agent jar in forked JVMs (Java 17 and 25) against real etcd, ZooKeeper, databases and a Kafka broker, the fault
# harness smokes and the demo. Installs what it needs on a fresh Debian machine.
#
#   scripts/test.sh            the full tier (CI)
#   scripts/test.sh --quick    the quick tier for the development loop: every unit test, the fences' integration
#                              tests and one agent-jar integration test per feature, on this JDK only (profile quick)
# Further arguments go to Maven.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--quick" ]; then
  shift
  scripts/prerequisites.sh
  exec mvn -B -ntp verify -Pquick "$@"
fi
scripts/prerequisites.sh --java25
java25="$(scripts/java25.sh)"
exec mvn -B -ntp verify -Dfencing.it.java25="$java25" "$@"
