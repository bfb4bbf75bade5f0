#!/usr/bin/env bash
# The project's test command (README, .ci/run): unit tests, then integration tests that run the real agent jar in
# forked JVMs (Java 17 and 25) against real etcd. Installs what it needs on a fresh Debian machine.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/prerequisites.sh --java25
java25="${FENCING_IT_JAVA25:-/usr/lib/jvm/temurin-25-jdk-amd64}"
exec mvn -B -ntp verify -Dfencing.it.java25="$java25" "$@"
