#!/usr/bin/env bash
# Prints the JDK 25 home the tests and benchmarks run forked JVMs on: FENCING_IT_JAVA25 when set, else Temurin 25's
# Debian location. The one place the scripts take it from (Maven: the property fencing.it.java25, root pom.xml, which
# FENCING_IT_JAVA25 sets too).
echo "${FENCING_IT_JAVA25:-/usr/lib/jvm/temurin-25-jdk-amd64}"
