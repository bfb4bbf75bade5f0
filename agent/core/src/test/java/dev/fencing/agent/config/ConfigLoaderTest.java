package dev.fencing.agent.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

class ConfigLoaderTest {
  @TempDir Path dir;

  // ---- helpers ----

  private static AgentConfig load(String agentArgs) {
    return ConfigLoader.load(agentArgs, new Properties(), Map.of());
  }

  private static AgentConfig loadSysprops(String... keyValues) {
    return ConfigLoader.load(null, props(keyValues), Map.of());
  }

  private static AgentConfig loadEnv(String... keyValues) {
    return ConfigLoader.load(null, new Properties(), map(keyValues));
  }

  private static Properties props(String... keyValues) {
    Properties p = new Properties();
    p.putAll(map(keyValues));
    return p;
  }

  private static Map<String, String> map(String... keyValues) {
    Map<String, String> m = new HashMap<>();
    for (int i = 0; i < keyValues.length; i += 2) {
      m.put(keyValues[i], keyValues[i + 1]);
    }
    return m;
  }

  private Path propertiesFile(String... lines) throws IOException {
    Path f = dir.resolve("fencing.properties");
    Files.writeString(f, String.join("\n", lines) + "\n");
    return f;
  }

  private Path existingFile(String name) throws IOException {
    return Files.writeString(dir.resolve(name), "content\n");
  }

  /** Asserts there is exactly one problem and that it mentions every part. */
  private static void assertOneProblemMentioning(AgentConfig config, String... parts) {
    assertThat(config.problems()).hasSize(1);
    assertThat(config.problems().get(0)).contains(parts);
  }

  // ---- defaults ----

  @Test
  void defaultsApplyWhenOnlyTheLockIsSet() {
    AgentConfig c = load("lock=ledger");

    assertThat(c.problems()).isEmpty();
    assertThat(c.valid()).isTrue();
    assertThat(c.lock()).isEqualTo("ledger");
    assertThat(c.etcdEndpoints()).containsExactly(URI.create("http://127.0.0.1:2379"));
    assertThat(c.etcdUser()).isNull();
    assertThat(c.etcdPasswordFile()).isNull();
    assertThat(c.etcdTlsCa()).isNull();
    assertThat(c.etcdTlsCert()).isNull();
    assertThat(c.etcdTlsKey()).isNull();
    assertThat(c.etcdKeyPrefix()).isEqualTo("/fencing/locks/");
    assertThat(c.etcdTimeout()).isEqualTo(Duration.ofSeconds(5));
    assertThat(c.leaseTtl()).isEqualTo(Duration.ofSeconds(10));
    assertThat(c.leaseSafetyMargin()).isEqualTo(Duration.ofSeconds(1));
    assertThat(c.standby()).isEqualTo(AgentConfig.Standby.BLOCK);
    assertThat(c.standbyTimeout()).isEqualTo(Duration.ofSeconds(5));
    assertThat(c.expiredFenced()).isEqualTo(AgentConfig.ExpiredFenced.TAG);
    assertThat(c.mode()).isEqualTo(AgentConfig.Mode.ENFORCE);
    assertThat(c.failMode()).isEqualTo(AgentConfig.FailMode.CLOSED);
    assertThat(c.tokenMax()).isEqualTo(Long.MAX_VALUE);
    assertThat(c.stateDir()).isNull();
    assertThat(c.holderId()).endsWith("/" + ProcessHandle.current().pid());
    assertThat(c.httpPort()).isEqualTo(-1);
    assertThat(c.display(ConfigKey.HTTP_PORT)).isEqualTo("off");
    assertThat(c.httpHost()).isEqualTo("127.0.0.1");
    assertThat(c.shutdownTimeout()).isEqualTo(Duration.ofSeconds(2));
    assertThat(c.logLevel()).isEqualTo("info");
    assertThat(c.instrumentationEnabled("jdbc")).isTrue();
    assertThat(c.sourceOf(ConfigKey.LEASE_TTL)).isEqualTo("default");
  }

  @Test
  void missingLockIsAProblem() {
    AgentConfig c = load(null);

    assertOneProblemMentioning(c, "fencing.lock", "not set");
    assertThat(c.valid()).isFalse();
    assertThat(c.lock()).isEqualTo("(unset)");
  }

  // ---- each source ----

  @Test
  void withoutALeaseNoLockIsNeeded() {
    AgentConfig c = load("lease.enabled=false");

    assertThat(c.problems()).isEmpty();
    assertThat(c.leaseEnabled()).isFalse();
    assertThat(c.lock()).isEqualTo("none");
    assertOneProblemMentioning(load("lock=ledger,lease.enabled=maybe"), "fencing.lease.enabled='maybe'", "expected true or false");
  }

  @Test
  void readsAgentArguments() {
    AgentConfig c = load("lock=ledger,fencing.lease.ttl=20s");

    assertThat(c.problems()).isEmpty();
    assertThat(c.lock()).isEqualTo("ledger");
    assertThat(c.leaseTtl()).isEqualTo(Duration.ofSeconds(20));
    assertThat(c.sourceOf(ConfigKey.LOCK)).isEqualTo("agent argument lock");
  }

  @Test
  void readsSystemProperties() {
    AgentConfig c = loadSysprops("fencing.lock", "ledger", "fencing.lease.ttl", "20s", "java.version", "ignored");

    assertThat(c.problems()).isEmpty();
    assertThat(c.lock()).isEqualTo("ledger");
    assertThat(c.leaseTtl()).isEqualTo(Duration.ofSeconds(20));
    assertThat(c.sourceOf(ConfigKey.LEASE_TTL)).isEqualTo("system property fencing.lease.ttl");
  }

  @Test
  void readsEnvironmentVariables() {
    AgentConfig c = loadEnv("FENCING_LOCK", "ledger", "FENCING_LEASE_SAFETY_MARGIN", "2s", "PATH", "/usr/bin");

    assertThat(c.problems()).isEmpty();
    assertThat(c.lock()).isEqualTo("ledger");
    assertThat(c.leaseSafetyMargin()).isEqualTo(Duration.ofSeconds(2));
    assertThat(c.sourceOf(ConfigKey.LEASE_SAFETY_MARGIN)).isEqualTo("environment variable FENCING_LEASE_SAFETY_MARGIN");
  }

  @Test
  void readsThePropertiesFileNamedByConfigFile() throws IOException {
    Path file = propertiesFile("fencing.lock=ledger", "lease.ttl=30s");

    AgentConfig c = loadSysprops("fencing.config.file", file.toString());

    assertThat(c.problems()).isEmpty();
    assertThat(c.lock()).isEqualTo("ledger");
    assertThat(c.leaseTtl()).isEqualTo(Duration.ofSeconds(30));
    assertThat(c.sourceOf(ConfigKey.LEASE_TTL)).startsWith("file ").contains(file.toString());
  }

  @Test
  void configFileMayBeNamedInTheEnvironment() throws IOException {
    Path file = propertiesFile("lock=from-file");

    AgentConfig c = loadEnv("FENCING_CONFIG_FILE", file.toString());

    assertThat(c.problems()).isEmpty();
    assertThat(c.lock()).isEqualTo("from-file");
  }

  @Test
  void unreadableConfigFileIsAProblem() {
    Path missing = dir.resolve("missing.properties");

    AgentConfig c = ConfigLoader.load("lock=ledger,config.file=" + missing, new Properties(), Map.of());

    assertOneProblemMentioning(c, "fencing.config.file", missing.toString(), "cannot read");
  }

  @Test
  void signingKeyFileIsReadAtLoadAndShownByPathOnly() throws IOException {
    Path key = Files.writeString(dir.resolve("fencing.key"), java.util.Base64.getEncoder().encodeToString(new byte[32]));

    AgentConfig c = load("lock=ledger,signing.key-file=" + key);

    assertThat(c.problems()).isEmpty();
    assertThat(c.signingKey()).isNotNull();
    assertThat(c.display(ConfigKey.SIGNING_KEY_FILE)).isEqualTo(key.toString());
    assertThat(load("lock=ledger").signingKey()).isNull();
  }

  @Test
  void badSigningKeyFilesAreOneProblemNamingKeyPathAndForm() throws IOException {
    Path shortKey = Files.writeString(dir.resolve("short.key"), java.util.Base64.getEncoder().encodeToString(new byte[8]));
    Path junk = Files.writeString(dir.resolve("junk.key"), "not base64 at all!");
    Path missing = dir.resolve("missing.key");
    for (Path p : new Path[] {shortKey, junk, missing, dir}) {
      AgentConfig c = load("lock=ledger,signing.key-file=" + p);
      assertOneProblemMentioning(c, "fencing.signing.key-file", p.toString(), "at least 32 bytes");
      assertThat(c.valid()).isFalse();
      assertThat(c.signingKey()).isNull();
    }
  }

  @ParameterizedTest(name = "{3} wins")
  @CsvSource({
      "true,  true,  true,  agent argument,       7s",
      "false, true,  true,  system property,      6s",
      "false, false, true,  environment variable, 5s",
      "false, false, false, file,                 4s"})
  void higherPrecedenceSourceWins(boolean inArgs, boolean inSysprops, boolean inEnv, String winner, String ttl)
      throws IOException {
    Path file = propertiesFile("lock=ledger", "lease.ttl=4s");
    String args = inArgs ? "lease.ttl=7s" : null;
    Properties sysprops = props("fencing.config.file", file.toString());
    if (inSysprops) {
      sysprops.setProperty("fencing.lease.ttl", "6s");
    }
    Map<String, String> env = inEnv ? map("FENCING_LEASE_TTL", "5s") : Map.of();

    AgentConfig c = ConfigLoader.load(args, sysprops, env);

    assertThat(c.problems()).isEmpty();
    assertThat(c.leaseTtl()).isEqualTo(Durations.parse(ttl));
    assertThat(c.sourceOf(ConfigKey.LEASE_TTL)).startsWith(winner);
  }

  @ParameterizedTest
  @EnumSource(value = ConfigKey.class, names = "INSTRUMENTATION_ENABLED", mode = EnumSource.Mode.EXCLUDE)
  void everyKeyIsRecognisedAsEnvironmentVariable(ConfigKey key) {
    AgentConfig c = loadEnv("FENCING_LOCK", "ledger", key.envVar(), "x");

    assertThat(c.problems()).noneMatch(p -> p.contains("unknown"));
    assertThat(c.warnings()).noneMatch(w -> w.contains("unknown"));
    assertThat(c.sourceOf(key)).isEqualTo("environment variable " + key.envVar());
  }

  // ---- agent argument syntax and endpoints ----

  @Test
  void agentArgumentSegmentWithoutEqualsContinuesThePreviousValue() {
    AgentConfig c = load("lock=a,etcd.endpoints=http://h1:1,http://h2:2");

    assertThat(c.problems()).isEmpty();
    assertThat(c.lock()).isEqualTo("a");
    assertThat(c.etcdEndpoints()).containsExactly(URI.create("http://h1:1"), URI.create("http://h2:2"));
  }

  @Test
  void endpointsMayBeSeparatedBySemicolons() {
    AgentConfig c = load("lock=a,etcd.endpoints=http://h1:1;https://h2:2");

    assertThat(c.etcdEndpoints()).containsExactly(URI.create("http://h1:1"), URI.create("https://h2:2"));
  }

  @Test
  void leadingAgentArgumentWithoutEqualsIsAProblem() {
    AgentConfig c = load("ledger,lock=a");

    assertOneProblemMentioning(c, "agent argument 'ledger'", "key=value");
  }

  @Test
  void endpointsWithoutSchemeGetHttp() {
    AgentConfig c = loadSysprops("fencing.lock", "a", "fencing.etcd.endpoints", "h1:2379, h2:2380");

    assertThat(c.problems()).isEmpty();
    assertThat(c.etcdEndpoints()).containsExactly(URI.create("http://h1:2379"), URI.create("http://h2:2380"));
  }

  @ParameterizedTest
  @ValueSource(strings = {"ftp://h1:2379", "h1", "http://:2379"})
  void invalidEndpointIsAProblemAndTheDefaultStays(String endpoint) {
    AgentConfig c = loadSysprops("fencing.lock", "a", "fencing.etcd.endpoints", endpoint);

    assertOneProblemMentioning(c, "fencing.etcd.endpoints", "'" + endpoint + "'", "URLs like http://etcd-1:2379");
    assertThat(c.etcdEndpoints()).containsExactly(URI.create("http://127.0.0.1:2379"));
  }

  // ---- durations ----

  @ParameterizedTest
  @CsvSource({"10s, PT10S", "500ms, PT0.5S", "2m, PT2M", "1h, PT1H"})
  void acceptsDurations(String text, Duration expected) {
    AgentConfig c = load("lock=a,standby.timeout=" + text);

    assertThat(c.problems()).isEmpty();
    assertThat(c.standbyTimeout()).isEqualTo(expected);
  }

  @ParameterizedTest
  @ValueSource(strings = {"banana", "10", "-1s"})
  void rejectsNonDurationsAndKeepsTheDefault(String text) {
    AgentConfig c = loadSysprops("fencing.lock", "a", "fencing.standby.timeout", text);

    assertOneProblemMentioning(c, "fencing.standby.timeout", "'" + text + "'", "a duration such as 10s, 500ms, 2m or 1h");
    assertThat(c.standbyTimeout()).isEqualTo(Duration.ofSeconds(5));
  }

  // Durations beyond 24h are rejected: they would overflow nanosecond arithmetic later (found by this test).
  @ParameterizedTest
  @ValueSource(strings = {"standby.timeout", "lease.ttl"})
  void durationTooLongForNanosecondsIsAProblem(String key) {
    AgentConfig c = load("lock=a," + key + "=9999999h");

    assertOneProblemMentioning(c, "fencing." + key, "'9999999h'", "a duration of at most 24h");
  }

  @Test
  void invalidTtlIsOneProblemNamingKeyValueSourceAndExpectedForm() {
    AgentConfig c = loadSysprops("fencing.lock", "a", "fencing.lease.ttl", "banana");

    assertOneProblemMentioning(c, "fencing.lease.ttl", "'banana'", "system property fencing.lease.ttl",
        "expected a duration such as 10s, 500ms, 2m or 1h");
    assertThat(c.leaseTtl()).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void ttlBelowMinimumIsAProblem() {
    AgentConfig c = load("lock=a,lease.ttl=1s");

    assertOneProblemMentioning(c, "fencing.lease.ttl", "'1s'", "at least 2s");
    assertThat(c.leaseTtl()).isEqualTo(Duration.ofSeconds(10));
  }

  @ParameterizedTest
  @CsvSource({"2999ms", "2500ms", "10001ms"})
  void ttlOfNoWholeSecondsIsAProblem(String ttl) {
    // etcd grants whole seconds: 2999ms would be granted as 2 s while renewals are planned for 2.999 s.
    AgentConfig c = load("lock=a,lease.ttl=" + ttl);

    assertOneProblemMentioning(c, "fencing.lease.ttl", "'" + ttl + "'", "a whole number of seconds");
    assertThat(c.leaseTtl()).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void ttlOfWholeSecondsInMillisecondsIsAccepted() {
    AgentConfig c = load("lock=a,lease.ttl=3000ms");

    assertThat(c.problems()).isEmpty();
    assertThat(c.leaseTtl()).isEqualTo(Duration.ofSeconds(3));
    assertThat(c.jdbcIdleInTransactionTimeout()).isEqualTo(Duration.ofSeconds(3)); // defaults to the TTL
  }

  @Test
  void anIdleInTransactionTimeoutOfZeroSecondsLeavesTheDatabasesSetting() {
    AgentConfig c = load("lock=a,jdbc.idle-in-transaction-timeout=0s");

    assertThat(c.problems()).isEmpty();
    assertThat(c.warnings()).isEmpty();
    assertThat(c.jdbcIdleInTransactionTimeout()).isEqualTo(Duration.ZERO);
  }

  @ParameterizedTest
  @CsvSource({"10s, 5s", "10s, 6s", "4s, 2s"})
  void safetyMarginOfHalfTheTtlOrMoreIsRejected(String ttl, String margin) {
    AgentConfig c = load("lock=a,lease.ttl=" + ttl + ",lease.safety-margin=" + margin);

    assertOneProblemMentioning(c, "fencing.lease.safety-margin", "'" + margin + "'", "below half of fencing.lease.ttl");
    assertThat(c.leaseSafetyMargin()).isLessThan(Durations.parse(ttl).dividedBy(2));
  }

  @Test
  void safetyMarginJustBelowHalfTheTtlIsAccepted() {
    AgentConfig c = load("lock=a,lease.ttl=10s,lease.safety-margin=4999ms");

    assertThat(c.problems()).isEmpty();
    assertThat(c.leaseSafetyMargin()).isEqualTo(Duration.ofMillis(4999));
  }

  @Test
  void defaultSafetyMarginStaysBelowHalfOfAShortTtl() {
    AgentConfig c = load("lock=a,lease.ttl=2s");

    assertThat(c.problems()).isEmpty();
    assertThat(c.leaseSafetyMargin()).isEqualTo(Duration.ofMillis(500));
  }

  // ---- unknown keys ----

  // An unknown key is a warning, never a failure: a typo or a newer release's key must not switch the agent off.

  @Test
  void unknownAgentArgumentIsAWarningNamingTheKeyAndTheNearestOne() {
    AgentConfig c = load("lock=a,lease.tll=5s");
    assertThat(c.problems()).isEmpty();
    assertThat(c.warnings()).singleElement().asString().contains("unknown key fencing.lease.tll", "agent argument",
        "ignored", "did you mean fencing.lease.ttl?");
  }

  @Test
  void unknownSystemPropertyIsAWarningNamingTheKey() {
    AgentConfig c = loadSysprops("fencing.lock", "a", "fencing.bogus", "1");
    assertThat(c.problems()).isEmpty();
    assertThat(c.warnings()).singleElement().asString().contains("unknown key fencing.bogus",
        "system property fencing.bogus");
  }

  @Test
  void unknownEnvironmentVariableIsAWarningNamingTheVariable() {
    AgentConfig c = loadEnv("FENCING_LOCK", "a", "FENCING_LEASE_TL", "1");
    assertThat(c.problems()).isEmpty();
    assertThat(c.warnings()).singleElement().asString().contains("unknown environment variable FENCING_LEASE_TL",
        "did you mean FENCING_LEASE_TTL?");
  }

  @Test
  void kubernetesServiceLinksAreOneWarningAndSwitchNothingOff() {
    // A Service named fencing-etcd: Kubernetes injects these into every pod of the namespace.
    AgentConfig c = loadEnv("FENCING_LOCK", "a", "FENCING_ETCD_PORT", "tcp://10.0.0.1:2379",
        "FENCING_ETCD_SERVICE_HOST", "10.0.0.1", "FENCING_ETCD_SERVICE_PORT", "2379",
        "FENCING_ETCD_SERVICE_PORT_CLIENT", "2379", "FENCING_ETCD_PORT_2379_TCP", "tcp://10.0.0.1:2379",
        "FENCING_ETCD_PORT_2379_TCP_ADDR", "10.0.0.1", "FENCING_ETCD_PORT_2379_TCP_PORT", "2379",
        "FENCING_ETCD_PORT_2379_TCP_PROTO", "tcp");
    assertThat(c.problems()).isEmpty();
    assertThat(c.valid()).isTrue();
    assertThat(c.warnings()).singleElement().asString().contains("Kubernetes service links",
        "FENCING_ETCD_SERVICE_HOST", "FENCING_ETCD_PORT_2379_TCP_ADDR");
  }

  @Test
  void aMalformedValueOfAKnownKeyIsStillAProblem() {
    AgentConfig c = loadEnv("FENCING_LOCK", "a", "FENCING_LEASE_TTL", "banana", "FENCING_BOGUS", "1");
    assertThat(c.problems()).singleElement().asString().contains("fencing.lease.ttl='banana'");
    assertThat(c.warnings()).hasSize(1);
  }

  @Test
  void unknownKeyInTheFileIsAWarningNamingTheKey() throws IOException {
    Path file = propertiesFile("lock=a", "fencing.bogus=1");

    AgentConfig c = loadSysprops("fencing.config.file", file.toString());
    assertThat(c.problems()).isEmpty();
    assertThat(c.warnings()).singleElement().asString().contains("unknown key fencing.bogus", "file " + file);
  }

  // ---- lock name ----

  @ParameterizedTest
  @ValueSource(strings = {"a/b", "has space", "ledger!", "é"})
  void invalidLockNameIsAProblem(String lock) {
    AgentConfig c = loadSysprops("fencing.lock", lock);

    assertOneProblemMentioning(c, "fencing.lock", "'" + lock + "'", "1 to 128 letters, digits");
    assertThat(c.lock()).isEqualTo("(unset)");
  }

  @Test
  void lockNameIsLimitedTo128Characters() {
    assertThat(load("lock=" + "x".repeat(128)).problems()).isEmpty();
    assertOneProblemMentioning(load("lock=" + "x".repeat(129)), "fencing.lock", "1 to 128");
  }

  @Test
  void lockNameMayUseDotsUnderscoresAndDashes() {
    AgentConfig c = load("lock=Ledger-1_eu.west");

    assertThat(c.problems()).isEmpty();
    assertThat(c.lock()).isEqualTo("Ledger-1_eu.west");
  }

  // ---- enums ----

  @Test
  void enumsAreCaseInsensitive() {
    AgentConfig c = load("lock=a,mode=OBSERVE,standby=Wait,fail-mode=oPeN,expired.fenced=BLOCK,log.level=DEBUG");

    assertThat(c.problems()).isEmpty();
    assertThat(c.mode()).isEqualTo(AgentConfig.Mode.OBSERVE);
    assertThat(c.standby()).isEqualTo(AgentConfig.Standby.WAIT);
    assertThat(c.failMode()).isEqualTo(AgentConfig.FailMode.OPEN);
    assertThat(c.expiredFenced()).isEqualTo(AgentConfig.ExpiredFenced.BLOCK);
    assertThat(c.logLevel()).isEqualTo("debug");
    assertThat(c.display(ConfigKey.MODE)).isEqualTo("observe");
  }

  @ParameterizedTest
  @CsvSource({
      "mode,           'enforce, observe'",
      "standby,        'block, wait'",
      "fail-mode,      'closed, open'",
      "expired.fenced, 'tag, block'",
      "log.level,      'error, warn, info, debug, trace'"})
  void invalidEnumIsReportedWithTheAllowedValues(String key, String allowed) {
    AgentConfig c = load("lock=a," + key + "=yolo");

    assertOneProblemMentioning(c, "fencing." + key, "'yolo'", "one of " + allowed);
  }

  @Test
  void invalidEnumKeepsTheDefault() {
    AgentConfig c = load("lock=a,mode=yolo,fail-mode=yolo");

    assertThat(c.mode()).isEqualTo(AgentConfig.Mode.ENFORCE);
    assertThat(c.failMode()).isEqualTo(AgentConfig.FailMode.CLOSED);
  }

  // ---- token.max ----

  @ParameterizedTest
  @CsvSource({"2147483647, 2147483647", "9_007_199_254_740_991, 9007199254740991", "1, 1",
      "9223372036854775807, 9223372036854775807"})
  void acceptsTokenMax(String text, long expected) {
    AgentConfig c = load("lock=a,token.max=" + text);

    assertThat(c.problems()).isEmpty();
    assertThat(c.tokenMax()).isEqualTo(expected);
  }

  @ParameterizedTest
  @ValueSource(strings = {"0", "-1", "lots", "9223372036854775808", "1.5", "+5", "\u0665"})
  void rejectsTokenMax(String text) {
    AgentConfig c = load("lock=a,token.max=" + text);

    assertOneProblemMentioning(c, "fencing.token.max", "'" + text + "'", "an integer from 1 to 9223372036854775807");
    assertThat(c.tokenMax()).isEqualTo(Long.MAX_VALUE);
  }

  // ---- http.port ----

  @ParameterizedTest
  @CsvSource({"off, -1", "OFF, -1", "0, 0", "8080, 8080", "65535, 65535"})
  void acceptsHttpPort(String text, int expected) {
    AgentConfig c = load("lock=a,http.port=" + text);

    assertThat(c.problems()).isEmpty();
    assertThat(c.httpPort()).isEqualTo(expected);
  }

  @ParameterizedTest
  @ValueSource(strings = {"70000", "65536", "-1", "http", "+80", "-0", "\u0668\u0660"})
  void rejectsHttpPort(String text) {
    AgentConfig c = load("lock=a,http.port=" + text);

    assertOneProblemMentioning(c, "fencing.http.port", "'" + text + "'", "a port from 0 to 65535, or off");
    assertThat(c.httpPort()).isEqualTo(-1);
  }

  // ---- instrumentations ----

  @Test
  void instrumentationSwitchesFromAgentArguments() {
    AgentConfig c = load("lock=a,instrumentation.jdbc.enabled=false,instrumentation.okhttp.enabled=TRUE");

    assertThat(c.problems()).isEmpty();
    assertThat(c.instrumentationEnabled("jdbc")).isFalse();
    assertThat(c.instrumentationEnabled("okhttp")).isTrue();
    assertThat(c.instrumentationEnabled("kafka-clients")).isTrue();
  }

  @Test
  void instrumentationSwitchFromEnvironmentMapsUnderscoresToDashes() {
    AgentConfig c = loadEnv("FENCING_LOCK", "a", "FENCING_INSTRUMENTATION_JAVA_HTTP_CLIENT_ENABLED", "false");

    assertThat(c.problems()).isEmpty();
    assertThat(c.instrumentationEnabled("java-http-client")).isFalse();
    assertThat(c.instrumentationEnabled("jdbc")).isTrue();
  }

  @Test
  void instrumentationSwitchFromEnvironmentKeepsDigits() {
    AgentConfig c = loadEnv("FENCING_LOCK", "a", "FENCING_INSTRUMENTATION_APACHE_HTTPCLIENT_5_ENABLED", "FALSE");

    assertThat(c.problems()).isEmpty();
    assertThat(c.instrumentationEnabled("apache-httpclient-5")).isFalse();
  }

  @Test
  void instrumentationSwitchFromSystemProperty() {
    AgentConfig c = loadSysprops("fencing.lock", "a", "fencing.instrumentation.kafka-clients.enabled", "false");

    assertThat(c.instrumentationEnabled("kafka-clients")).isFalse();
  }

  @Test
  void instrumentationSwitchInAgentArgumentsWinsOverEnvironment() {
    AgentConfig c = ConfigLoader.load("lock=a,instrumentation.jdbc.enabled=true", new Properties(),
        map("FENCING_INSTRUMENTATION_JDBC_ENABLED", "false"));

    assertThat(c.instrumentationEnabled("jdbc")).isTrue();
  }

  @Test
  void badInstrumentationBooleanIsAProblemAndLeavesItEnabled() {
    AgentConfig c = load("lock=a,instrumentation.jdbc.enabled=yes");

    assertOneProblemMentioning(c, "fencing.instrumentation.jdbc.enabled", "'yes'", "true or false");
    assertThat(c.instrumentationEnabled("jdbc")).isTrue();
  }

  // ---- keys that go together, files ----

  @Test
  void userWithoutPasswordFileIsAProblem() {
    assertOneProblemMentioning(load("lock=a,etcd.user=bob"),
        "fencing.etcd.user and fencing.etcd.password-file", "both or neither");
  }

  @Test
  void passwordFileWithoutUserIsAProblem() throws IOException {
    Path password = existingFile("password");

    assertOneProblemMentioning(load("lock=a,etcd.password-file=" + password),
        "fencing.etcd.user and fencing.etcd.password-file", "both or neither");
  }

  @Test
  void userWithReadablePasswordFileIsValid() throws IOException {
    Path password = existingFile("password");

    AgentConfig c = load("lock=a,etcd.user=bob,etcd.password-file=" + password);

    assertThat(c.problems()).isEmpty();
    assertThat(c.etcdUser()).isEqualTo("bob");
    assertThat(c.etcdPasswordFile()).isEqualTo(password);
  }

  @Test
  void missingPasswordFileIsReportedAsNotReadable() {
    Path missing = dir.resolve("no-such-password");

    AgentConfig c = load("lock=a,etcd.user=bob,etcd.password-file=" + missing);

    assertOneProblemMentioning(c, "fencing.etcd.password-file", "'" + missing + "'", "a readable file",
        "not found or not readable");
    assertThat(c.etcdPasswordFile()).isNull();
  }

  @Test
  void tlsCertWithoutKeyIsAProblem() throws IOException {
    Path cert = existingFile("client.pem");

    assertOneProblemMentioning(load("lock=a,etcd.tls.cert=" + cert),
        "fencing.etcd.tls.cert and fencing.etcd.tls.key", "both or neither");
  }

  @Test
  void tlsCertAndKeyTogetherAreValid() throws IOException {
    Path ca = existingFile("ca.pem");
    Path cert = existingFile("client.pem");
    Path key = existingFile("client.key");

    AgentConfig c = load("lock=a,etcd.tls.ca=" + ca + ",etcd.tls.cert=" + cert + ",etcd.tls.key=" + key);

    assertThat(c.problems()).isEmpty();
    assertThat(c.etcdTlsCa()).isEqualTo(ca);
    assertThat(c.etcdTlsCert()).isEqualTo(cert);
    assertThat(c.etcdTlsKey()).isEqualTo(key);
  }

  // ---- OTLP and events ----

  @Test
  void otlpSettingsParseAndHeaderValuesAreNeverDisplayed() {
    AgentConfig c = load("lock=a,otlp.endpoint=https://collector:4318,otlp.headers=Authorization=Bearer%20s3cr3t,"
        + "X-Tenant=t1,otlp.interval=15s,log.event-interval=0s");

    assertThat(c.problems()).isEmpty();
    assertThat(c.otlpEndpoint()).isEqualTo(URI.create("https://collector:4318"));
    assertThat(c.otlpHeaders()).containsExactly(Map.entry("Authorization", "Bearer s3cr3t"), Map.entry("X-Tenant", "t1"));
    assertThat(c.display(ConfigKey.OTLP_HEADERS)).isEqualTo("Authorization=***,X-Tenant=***");
    assertThat(c.otlpInterval()).isEqualTo(Duration.ofSeconds(15));
    assertThat(c.isSet(ConfigKey.OTLP_INTERVAL)).isTrue();
    assertThat(c.logEventInterval()).isZero();
  }

  @Test
  void otlpDefaultsAreOff() {
    AgentConfig c = load("lock=a");

    assertThat(c.otlpEndpoint()).isNull();
    assertThat(c.otlpHeaders()).isEmpty();
    assertThat(c.otlpInterval()).isEqualTo(Duration.ofSeconds(60));
    assertThat(c.isSet(ConfigKey.OTLP_INTERVAL)).isFalse();
    assertThat(c.logEventInterval()).isEqualTo(Duration.ofSeconds(10));
  }

  @ParameterizedTest
  @ValueSource(strings = {"collector:4318", "ftp://collector", "http://", "not a url"})
  void invalidOtlpEndpointIsAProblemNamingTheKey(String value) {
    AgentConfig c = loadSysprops("fencing.lock", "a", "fencing.otlp.endpoint", value);

    assertThat(c.problems()).singleElement().asString()
        .startsWith("fencing.otlp.endpoint='" + value + "' (system property fencing.otlp.endpoint): expected an http");
  }

  @Test
  void malformedOtlpHeadersAreAProblem() {
    AgentConfig c = loadEnv("FENCING_LOCK", "a", "FENCING_OTLP_HEADERS", "justaname");

    assertThat(c.problems()).singleElement().asString()
        .contains("fencing.otlp.headers='justaname'", "expected name=value pairs");
  }

  // ---- fenced Kafka topics ----

  @Test
  void fencedKafkaTopicsAreNamesAndGlobs() {
    AgentConfig c = load("lock=ledger,fenced.kafka=ledger-events,audit.*,*-fenced");

    assertThat(c.problems()).isEmpty();
    assertThat(c.fencedKafka()).containsExactly("ledger-events", "audit.*", "*-fenced");
    assertThat(load("lock=ledger").fencedKafka()).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {"ledger events", "ledger/events", "ledger?", "l[a-z]+"})
  void invalidFencedKafkaTopicIsAProblemAndNoTopicIsFenced(String topic) {
    AgentConfig c = loadSysprops("fencing.lock", "ledger", "fencing.fenced.kafka", "ok," + topic);

    assertOneProblemMentioning(c, "fencing.fenced.kafka='ok," + topic + "'", "system property fencing.fenced.kafka",
        "Kafka topic names or globs", "'" + topic + "' is not one");
    assertThat(c.fencedKafka()).isEmpty();
  }

  @Test
  void fencedKafkaTopicIsLimitedTo249Characters() {
    assertThat(load("lock=l,fenced.kafka=" + "t".repeat(249)).problems()).isEmpty();
    assertThat(load("lock=l,fenced.kafka=" + "t".repeat(250)).problems()).hasSize(1);
  }

  // ---- the reference table ----

  @Test
  void markdownTableHasOneRowPerKey() {
    String[] lines = ConfigKey.markdownTable().split("\n");

    assertThat(lines).hasSize(2 + ConfigKey.values().length);
    assertThat(lines[0]).startsWith("| key |");
    for (ConfigKey key : ConfigKey.values()) {
      assertThat(lines).filteredOn(l -> l.startsWith("| `" + key.property() + "` | `" + key.envVar() + "` |"))
          .hasSize(1);
    }
  }

  // ---- found by ConfigBadInputPropertyTest ----

  @ParameterizedTest
  @ValueSource(strings = {"POST PUT", "GET/", "POST,DEL ETE"})
  void rejectsMethodsThatAreNotHttpTokens(String text) {
    AgentConfig c = loadSysprops("fencing.lock", "a", "fencing.unsafe-http-methods", text);

    assertOneProblemMentioning(c, "fencing.unsafe-http-methods", "'" + text + "'", "HTTP method names");
    assertThat(c.unsafeHttpMethods()).containsExactly("POST", "PUT", "PATCH", "DELETE");
  }

  @ParameterizedTest
  @ValueSource(strings = {"fencing.etcd.endpoints=http://etcd:65536", "fencing.otlp.endpoint=http://c:99999",
      "fencing.state.dir=/tmp/a\u0000b", "fencing.config.file=/tmp/a\u0000b", "fencing.etcd.tls.ca=/tmp/\u0000"})
  void rejectsPortsAboveTheRangeAndPathsTheFileSystemCannotName(String setting) {
    String[] kv = setting.split("=", 2);
    AgentConfig c = loadSysprops("fencing.lock", "a", kv[0], kv[1]);

    assertOneProblemMentioning(c, kv[0], "'" + kv[1] + "'", "expected");
  }

  // ---- ZooKeeper coordinator ----

  @Test
  void zookeeperCoordinatorReadsAConnectStringWithSeveralServersAndAChrootFromAgentArgs() {
    AgentConfig c = load("lock=l,coordinator=zookeeper,zookeeper.connect=zk1:2181,zk2:2181,zk3:2181/apps,lease.ttl=6s");
    assertThat(c.problems()).isEmpty();
    assertThat(c.coordinator()).isEqualTo(AgentConfig.Coordinator.ZOOKEEPER);
    assertThat(c.zookeeperConnect()).isEqualTo("zk1:2181,zk2:2181,zk3:2181/apps");
    assertThat(c.zookeeperPath()).isEqualTo("/fencing/locks");
    assertThat(c.zookeeperSessionTimeout()).as("defaults to the lease TTL").isEqualTo(Duration.ofSeconds(6));
  }

  @Test
  void coordinatorDefaultsToEtcdAndRejectsOtherNames() {
    assertThat(load("lock=l").coordinator()).isEqualTo(AgentConfig.Coordinator.ETCD);
    assertThat(load("lock=l,coordinator=consul").problems()).singleElement().asString()
        .contains("fencing.coordinator").contains("consul").contains("etcd, zookeeper");
  }

  @Test
  void zookeeperPathSessionTimeoutAndTlsPairsAreChecked() throws IOException {
    assertThat(load("lock=l,zookeeper.path=fencing/locks").problems()).singleElement().asString()
        .contains("fencing.zookeeper.path").contains("absolute ZooKeeper path");
    assertThat(load("lock=l,zookeeper.path=/fencing/").problems()).hasSize(1);
    assertThat(load("lock=l,zookeeper.session-timeout=1s").problems()).singleElement().asString()
        .contains("fencing.zookeeper.session-timeout");
    assertThat(load("lock=l,lease.safety-margin=2s,zookeeper.session-timeout=4s").problems()).singleElement().asString()
        .contains("fencing.zookeeper.session-timeout=4s: expected more than twice fencing.lease.safety-margin (2s)");
    Path store = existingFile("trust.p12");
    // A store without a password file is a store without a password (a PEM CA file); a password file alone is a slip.
    assertThat(load("lock=l,zookeeper.tls.truststore=" + store).problems()).isEmpty();
    Path pw = existingFile("pw");
    assertThat(load("lock=l,zookeeper.tls.truststore-password-file=" + pw).problems()).singleElement().asString()
        .contains("fencing.zookeeper.tls.truststore-password-file: expected with fencing.zookeeper.tls.truststore");
    assertThat(load("lock=l,zookeeper.tls.truststore=" + store + ",zookeeper.tls.keystore-password-file=" + pw)
        .problems()).singleElement().asString()
        .contains("fencing.zookeeper.tls.keystore-password-file: expected with fencing.zookeeper.tls.keystore");
    assertThat(load("lock=l,zookeeper.tls.keystore=" + store + ",zookeeper.tls.keystore-password-file=" + pw).problems())
        .singleElement().asString().contains("expected with fencing.zookeeper.tls.truststore");
    assertThat(load("lock=l,zookeeper.tls.truststore=" + store + ",zookeeper.tls.truststore-password-file=" + pw
        + ",zookeeper.tls.keystore=" + store + ",zookeeper.tls.keystore-password-file=" + pw).problems()).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {"0", "100001", "lots", "-5"})
  void aBadInventoryCapIsAWarningNamingTheRangeAndKeepsTheDefault(String value) {
    AgentConfig c = load("lock=l,inventory.max-destinations=" + value);
    assertThat(c.problems()).isEmpty();
    assertThat(c.warnings()).singleElement().asString().contains("fencing.inventory.max-destinations='" + value + "'",
        "expected an integer from 1 to 100000", "the default 500 is kept");
    assertThat(c.inventoryMaxDestinations()).isEqualTo(500);
    assertThat(load("lock=l,inventory.max-destinations=20").inventoryMaxDestinations()).isEqualTo(20);
  }
}
