package dev.fencing.agent.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Malformed configuration (issue 8): generated bad values for each kind of key (durations, port, booleans, lock name,
 * URLs, token.max, lists, choices), from system properties or the environment. Loading never throws, gives exactly one
 * problem naming the key, the value as given and the expected form, and the key keeps its default.
 */
class ConfigBadInputPropertyTest {

  private static final AgentConfig DEFAULTS = ConfigLoader.load("lock=ledger", new Properties(), Map.of());

  /** A key and a malformed value for it, with a fragment of the expected form its problem must quote. */
  record Bad(ConfigKey key, String value, String expected) {
  }

  @Property(tries = 1500)
  void aMalformedValueIsOneProblemNamingKeyValueAndForm(@ForAll("bad") Bad bad, @ForAll boolean fromEnvironment) {
    Properties props = new Properties();
    Map<String, String> env;
    if (bad.key() == ConfigKey.LOCK) {
      env = fromEnvironment ? Map.of(ConfigKey.LOCK.envVar(), bad.value()) : Map.of();
      if (!fromEnvironment) {
        props.setProperty(ConfigKey.LOCK.property(), bad.value());
      }
    } else {
      props.setProperty(ConfigKey.LOCK.property(), "ledger");
      env = fromEnvironment ? Map.of(bad.key().envVar(), bad.value()) : Map.of();
      if (!fromEnvironment) {
        props.setProperty(bad.key().property(), bad.value());
      }
    }
    AgentConfig c = ConfigLoader.load(null, props, env);
    assertThat(c.problems()).as("%s='%s'", bad.key().property(), bad.value()).hasSize(1);
    assertThat(c.problems().get(0)).contains(bad.key().property(), "'" + bad.value() + "'", "expected",
        bad.expected(), fromEnvironment ? bad.key().envVar() : "system property");
    assertThat(c.valid()).isFalse();
    if (bad.key() != ConfigKey.LOCK) {
      assertThat(c.display(bad.key())).isEqualTo(DEFAULTS.display(bad.key()));
    }
  }

  /** instrumentation.[name].enabled takes true or false like lease.enabled; anything else is a problem. */
  @Property(tries = 200)
  void aMalformedInstrumentationSwitchIsAProblem(@ForAll("notABoolean") String value,
      @ForAll("instrumentationName") String name) {
    Properties props = new Properties();
    props.setProperty(ConfigKey.LOCK.property(), "ledger");
    props.setProperty("fencing.instrumentation." + name + ".enabled", value);
    AgentConfig c = ConfigLoader.load(null, props, Map.of());
    assertThat(c.problems()).singleElement().asString()
        .contains("fencing.instrumentation." + name + ".enabled", "'" + value + "'", "expected true or false");
    assertThat(c.instrumentationEnabled(name)).isTrue();
  }

  /** Never throws, whatever the agent arguments: at worst every segment is a problem. */
  @Property(tries = 1000)
  void anyAgentArgumentsLoadWithoutThrowing(@ForAll("agentArgs") String args) {
    AgentConfig c = ConfigLoader.load(args, new Properties(), Map.of());
    assertThat(c.problems()).allSatisfy(p -> assertThat(p).contains("expected"));
  }

  // ------------------------------------------------------------------------------------------------ generators

  private static final Pattern DURATION = Pattern.compile("[0-9]{1,12}[\\x00-\\x20]*(ms|s|m|h)");
  private static final Pattern PORT = Pattern.compile("[0-9]+");

  private static Arbitrary<String> junk() {
    return Arbitraries.oneOf(
        Arbitraries.strings().withCharRange('!', '~').ofMinLength(1).ofMaxLength(20),
        Arbitraries.strings().ofMinLength(1).ofMaxLength(12)
            .filter(s -> s.chars().noneMatch(c -> Character.isSurrogate((char) c))));
  }

  private static Arbitrary<String> unicodeDigits() {
    return Arbitraries.oneOf(Arbitraries.strings().withCharRange('\u0660', '\u0669').ofMinLength(1).ofMaxLength(5),
        Arbitraries.strings().withCharRange('\uff10', '\uff19').ofMinLength(1).ofMaxLength(5),
        Arbitraries.strings().withCharRange('\u0966', '\u096f').ofMinLength(1).ofMaxLength(5));
  }

  static boolean validDuration(String v) {
    return DURATION.matcher(v.trim().toLowerCase(java.util.Locale.ROOT)).matches();
  }

  @Provide
  Arbitrary<Bad> bad() {
    List<ConfigKey> durations = List.of(ConfigKey.ETCD_TIMEOUT, ConfigKey.LEASE_TTL, ConfigKey.LEASE_SAFETY_MARGIN,
        ConfigKey.STANDBY_TIMEOUT, ConfigKey.OTLP_INTERVAL, ConfigKey.SHUTDOWN_TIMEOUT, ConfigKey.LOG_EVENT_INTERVAL);
    Arbitrary<String> badDuration = Arbitraries.oneOf(junk(),
        Arbitraries.longs().between(0, 1_000_000).map(Object::toString),
        Combinators.combine(Arbitraries.longs().between(0, 1000), Arbitraries.of("x", "d", "sec", "ns", "us", "w",
            "mss", ".5s", "s s", "S1", "hours", "min", "_s")).as((n, u) -> n + u),
        Arbitraries.longs().between(1, 1000).map(n -> "-" + n + "s"),
        Arbitraries.longs().between(1, 1000).map(n -> "+" + n + "s"),
        Arbitraries.longs().between(1, 1000).map(n -> "PT" + n + "S"),
        unicodeDigits().map(d -> d + "s"),
        Arbitraries.strings().numeric().ofMinLength(13).ofMaxLength(30).map(d -> d + "ms"),
        Arbitraries.of("ms", "s", "h", "1 0s", "10s10s", "1e3ms", "0x10s", "\u00011s0"))
        .filter(v -> !v.isBlank() && !validDuration(v));
    Arbitrary<String> tooLong = Arbitraries.of("25h", "1441m", "86400001ms", "999999999999h");
    Arbitrary<Bad> duration = Combinators.combine(Arbitraries.of(durations), Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(5, badDuration), net.jqwik.api.Tuple.of(1, tooLong)))
        .as((k, v) -> new Bad(k, v, "a duration"));

    Arbitrary<Bad> port = Arbitraries.oneOf(junk(), unicodeDigits(),
        Arbitraries.integers().between(65536, Integer.MAX_VALUE).map(Object::toString),
        Arbitraries.integers().between(1, 65535).map(n -> "-" + n),
        Arbitraries.integers().between(1, 65535).map(n -> "+" + n),
        Arbitraries.integers().between(1, 65535).map(n -> n + ".0"),
        Arbitraries.strings().numeric().ofMinLength(6).ofMaxLength(25),
        Arbitraries.of("0x50", "8 080", "o f f", "offf", "none", "-0"))
        .filter(v -> !v.isBlank() && !"off".equalsIgnoreCase(v.trim())
            && !(PORT.matcher(v.trim()).matches()
                && new java.math.BigInteger(v.trim()).compareTo(java.math.BigInteger.valueOf(65535)) <= 0))
        .map(v -> new Bad(ConfigKey.HTTP_PORT, v, "a port from 0 to 65535"));

    Arbitrary<Bad> leaseEnabled = notABoolean().map(v -> new Bad(ConfigKey.LEASE_ENABLED, v, "true or false"));

    Arbitrary<Bad> lock = Arbitraries.oneOf(
        Combinators.combine(Arbitraries.strings().alpha().ofMinLength(1).ofMaxLength(10),
            Arbitraries.of(" ", "/", ":", "@", "*", "\u00e9", "\u0000", "\u200b", "'", "\"", "\\", "+", ","))
            .as((a, c) -> a + c + a),
        Arbitraries.strings().withCharRange('a', 'z').ofLength(129),
        unicodeDigits(), junk())
        .filter(v -> !v.isBlank() && !v.trim().matches("[A-Za-z0-9._-]{1,128}"))
        .map(v -> new Bad(ConfigKey.LOCK, v, "1 to 128 letters, digits"));

    Arbitrary<Bad> endpoints = Arbitraries.oneOf(
        Arbitraries.of("ftp://etcd:2379", "etcd", "http://etcd", "https://etcd", "http://:2379", "http://etcd:0",
            "http://etcd:65536", "http://etcd:99999", "etcd:99999", "http://et cd:2379", "http://etcd_1:2379",
            "http://[::1:2379", "unix:///var/run/etcd.sock", "http://etcd:2379,ftp://b:1", "http://a:1;etcd",
            "://x:1", "http://etcd:-1", "http://etcd:port"),
        Combinators.combine(Arbitraries.strings().alpha().ofMinLength(1).ofMaxLength(6)
            .filter(s -> !s.equalsIgnoreCase("http") && !s.equalsIgnoreCase("https")), Arbitraries.integers()
            .between(1, 65535)).as((scheme, p) -> scheme + "://etcd:" + p),
        Arbitraries.integers().between(65536, 200_000).map(p -> "http://127.0.0.1:" + p))
        .map(v -> new Bad(ConfigKey.ETCD_ENDPOINTS, v, "URL"));

    Arbitrary<Bad> otlp = Arbitraries.oneOf(
        Arbitraries.of("collector:4318", "ftp://collector", "http://", "http:///v1/metrics", "http://col lector",
            "localhost", "//collector:4318", "http://collector:99999", "http://collector:65536", "mailto:a@b"),
        junk().filter(v -> !v.trim().matches("(?i)https?://.+")))
        .filter(v -> !v.isBlank())
        .map(v -> new Bad(ConfigKey.OTLP_ENDPOINT, v, "an http or https URL"));

    Arbitrary<Bad> tokenMax = Arbitraries.oneOf(junk(), unicodeDigits(),
        Arbitraries.longs().between(0, Long.MAX_VALUE).map(n -> "-" + n),
        Arbitraries.longs().between(1, Long.MAX_VALUE).map(n -> "+" + n),
        Arbitraries.strings().numeric().ofMinLength(20).ofMaxLength(40).map(s -> "9" + s),
        Arbitraries.of("0", "00", "9223372036854775808", "1.5", "1e9", "0x7fffffff", "_", "2^63"))
        .filter(v -> !v.isBlank() && !validTokenMax(v))
        .map(v -> new Bad(ConfigKey.TOKEN_MAX, v, "an integer from 1 to 9223372036854775807"));

    Arbitrary<Bad> topics = Combinators.combine(Arbitraries.of("orders", "ledger-*", ""),
        Arbitraries.oneOf(Arbitraries.of("a b", "topic/x", "t\u00e9", "t:1", "#", "a$", "t@x"),
            Arbitraries.strings().withCharRange('a', 'z').ofLength(250)))
        .as((ok, badTopic) -> ok.isEmpty() ? badTopic : ok + "," + badTopic)
        .map(v -> new Bad(ConfigKey.FENCED_KAFKA, v, "Kafka topic names or globs"));

    Arbitrary<Bad> headers = Arbitraries.of("novalue", "=v", "a=1,=2", "a=%zz", "a=%", "Authorization=%G0", "a=1,b")
        .map(v -> new Bad(ConfigKey.OTLP_HEADERS, v, "name=value pairs"));

    Arbitrary<Bad> methods = Combinators.combine(Arbitraries.of("POST PUT", "PO(ST", "GET/", "P\u00d6ST", "\"POST\"",
        "POST{}", "PUT:", "DEL ETE"), Arbitraries.of("", "PATCH,", "DELETE;"))
        .as((m, prefix) -> prefix + m)
        .map(v -> new Bad(ConfigKey.UNSAFE_HTTP_METHODS, v, "HTTP method names"));

    Arbitrary<Bad> choices = Combinators.combine(Arbitraries.of(ConfigKey.STANDBY, ConfigKey.EXPIRED_FENCED,
        ConfigKey.MODE, ConfigKey.FAIL_MODE, ConfigKey.LOG_LEVEL), junk())
        .as((k, v) -> new Bad(k, v, "one of"))
        .filter(b -> !b.value().isBlank() && !List.of(b.key().form().split("\\|"))
            .contains(b.value().trim().toLowerCase(java.util.Locale.ROOT)));

    Arbitrary<String> nul = Arbitraries.strings().withCharRange('a', 'z').ofMinLength(1).ofMaxLength(8)
        .map(a -> "/tmp/" + a + "\u0000x");
    Arbitrary<Bad> paths = Arbitraries.oneOf(
        Combinators.combine(Arbitraries.of(ConfigKey.STATE_DIR, ConfigKey.CONFIG_FILE), nul)
            .as((k, v) -> new Bad(k, v, "path")),
        Combinators.combine(Arbitraries.of(ConfigKey.ETCD_TLS_CA), Arbitraries.oneOf(nul,
            Arbitraries.strings().alpha().ofMinLength(1).ofMaxLength(8).map(a -> "/nonexistent/" + a + ".pem"),
            Arbitraries.of("/tmp", "/tmp/", "/", ".")))
            .as((k, v) -> new Bad(k, v, "file")));

    return Arbitraries.oneOf(duration, port, leaseEnabled, lock, endpoints, otlp, tokenMax, topics, headers, methods,
        choices, paths);
  }

  static boolean validTokenMax(String v) {
    String t = v.trim().replace("_", "");
    return t.matches("[0-9]{1,19}") && new java.math.BigInteger(t).signum() > 0
        && new java.math.BigInteger(t).compareTo(java.math.BigInteger.valueOf(Long.MAX_VALUE)) <= 0;
  }

  @Provide
  Arbitrary<String> notABoolean() {
    return Arbitraries.oneOf(junk(), Arbitraries.of("yes", "no", "1", "0", "on", "off", "tru", "ture", "t", "f",
        "falsey", "true false", "\uff54rue", "TRUE.", "enabled"))
        .filter(v -> !v.isBlank() && !v.trim().equalsIgnoreCase("true") && !v.trim().equalsIgnoreCase("false"));
  }

  @Provide
  Arbitrary<String> instrumentationName() {
    return Arbitraries.of("jdbc", "okhttp", "kafka-clients", "servlet", "java-http-client");
  }

  @Provide
  Arbitrary<String> agentArgs() {
    Arbitrary<String> key = Arbitraries.oneOf(Arbitraries.of(ConfigKey.values()).map(ConfigKey::key),
        Arbitraries.strings().withCharRange('!', '~').ofMaxLength(10));
    Arbitrary<String> segment = Combinators.combine(key, Arbitraries.oneOf(junk(), Arbitraries.just("")),
        Arbitraries.of("=", "", "==", " = ")).as((k, v, eq) -> k + eq + v);
    return segment.list().ofMaxSize(6).map(l -> String.join(",", l));
  }
}
