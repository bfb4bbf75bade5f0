package dev.fencing.agent.config;

import dev.fencing.testing.Gen;
import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Malformed configuration: generated bad values for each kind of key (durations, port, booleans, lock name,
 * URLs, token.max, lists, choices), from system properties or the environment. Loading never throws, gives exactly one
 * problem naming the key, the value as given and the expected form, and the key keeps its default. Cases come from a
 * seeded {@link Gen} (same cases every run) plus the hand-picked values each kind lists.
 */
class ConfigBadInputPropertyTest {

  private static final AgentConfig DEFAULTS = ConfigLoader.load("lock=ledger", new Properties(), Map.of());

  /** A key and a malformed value for it, with a fragment of the expected form its problem must quote. */
  record Bad(ConfigKey key, String value, String expected) {
  }

  @ParameterizedTest(name = "{0}, from the environment: {1}")
  @MethodSource("badValues")
  void aMalformedValueIsOneProblemNamingKeyValueAndForm(Bad bad, boolean fromEnvironment) {
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
    assertThat(c.problems().get(0)).as("%s='%s'", bad.key().property(), bad.value()).contains(bad.key().property(), "'" + bad.value() + "'", "expected",
        bad.expected(), fromEnvironment ? bad.key().envVar() : "system property");
    assertThat(c.valid()).isFalse();
    if (bad.key() != ConfigKey.LOCK) {
      assertThat(c.display(bad.key())).isEqualTo(DEFAULTS.display(bad.key()));
    }
  }

  /** instrumentation.[name].enabled takes true or false like lease.enabled; anything else is a problem. */
  @ParameterizedTest(name = "{1}: {0}")
  @MethodSource("badInstrumentationSwitches")
  void aMalformedInstrumentationSwitchIsAProblem(String value, String name) {
    Properties props = new Properties();
    props.setProperty(ConfigKey.LOCK.property(), "ledger");
    props.setProperty("fencing.instrumentation." + name + ".enabled", value);
    AgentConfig c = ConfigLoader.load(null, props, Map.of());
    assertThat(c.problems()).singleElement().asString()
        .contains("fencing.instrumentation." + name + ".enabled", "'" + value + "'", "expected true or false");
    assertThat(c.instrumentationEnabled(name)).isTrue();
  }

  /** Never throws, whatever the agent arguments: at worst every segment is a problem. */
  @ParameterizedTest(name = "{0}")
  @MethodSource("agentArgs")
  void anyAgentArgumentsLoadWithoutThrowing(String args) {
    AgentConfig c = ConfigLoader.load(args, new Properties(), Map.of());
    assertThat(c.problems()).as(Gen.show(args)).allSatisfy(p -> assertThat(p).contains("expected"));
  }

  // ------------------------------------------------------------------------------------------------ generators

  private static final Pattern DURATION = Pattern.compile("[0-9]{1,12}[\\x00-\\x20]*(ms|s|m|h)");
  private static final Pattern PORT = Pattern.compile("[0-9]+");

  private static String junk(Gen g) {
    return g.oneOf(() -> g.chars('!', '~', 1, 20), () -> g.anyString(1, 12));
  }

  private static String unicodeDigits(Gen g) {
    return g.oneOf(() -> g.chars('\u0660', '\u0669', 1, 5), () -> g.chars('\uff10', '\uff19', 1, 5),
        () -> g.chars('\u0966', '\u096f', 1, 5));
  }

  static boolean validDuration(String v) {
    return DURATION.matcher(v.trim().toLowerCase(Locale.ROOT)).matches();
  }

  /** Draws until the value passes keep (the generators below filter like the old property providers did). */
  private static String until(Supplier<String> generator, java.util.function.Predicate<String> keep) {
    String v;
    do {
      v = generator.get();
    } while (!keep.test(v));
    return v;
  }

  private static final List<ConfigKey> DURATIONS = List.of(ConfigKey.ETCD_TIMEOUT, ConfigKey.LEASE_TTL,
      ConfigKey.LEASE_SAFETY_MARGIN, ConfigKey.STANDBY_TIMEOUT, ConfigKey.OTLP_INTERVAL, ConfigKey.SHUTDOWN_TIMEOUT,
      ConfigKey.LOG_EVENT_INTERVAL);

  private static Bad duration(Gen g) {
    String v = g.between(1, 6) == 6 ? g.of("25h", "1441m", "86400001ms", "999999999999h")
        : until(() -> g.oneOf(
            () -> junk(g),
            () -> Long.toString(g.between(0, 1_000_000)),
            () -> g.between(0, 1000) + g.of("x", "d", "sec", "ns", "us", "w", "mss", ".5s", "s s", "S1", "hours",
                "min", "_s"),
            () -> "-" + g.between(1, 1000) + "s",
            () -> "+" + g.between(1, 1000) + "s",
            () -> "PT" + g.between(1, 1000) + "S",
            () -> unicodeDigits(g) + "s",
            () -> g.charsOf("0123456789", 13, 30) + "ms",
            () -> g.of("ms", "s", "h", "1 0s", "10s10s", "1e3ms", "0x10s", "\u00011s0")),
            v2 -> !v2.isBlank() && !validDuration(v2));
    return new Bad(g.of(DURATIONS), v, "a duration");
  }

  private static Bad port(Gen g) {
    String v = until(() -> g.oneOf(
        () -> junk(g), () -> unicodeDigits(g),
        () -> Integer.toString(g.between(65536, Integer.MAX_VALUE)),
        () -> "-" + g.between(1, 65535),
        () -> "+" + g.between(1, 65535),
        () -> g.between(1, 65535) + ".0",
        () -> g.charsOf("0123456789", 6, 25),
        () -> g.of("0x50", "8 080", "o f f", "offf", "none", "-0")),
        p -> !p.isBlank() && !"off".equalsIgnoreCase(p.trim())
            && !(PORT.matcher(p.trim()).matches() && new BigInteger(p.trim()).compareTo(BigInteger.valueOf(65535)) <= 0));
    return new Bad(ConfigKey.HTTP_PORT, v, "a port from 0 to 65535");
  }

  private static Bad lock(Gen g) {
    String v = until(() -> g.oneOf(
        () -> {
          String a = g.chars('a', 'z', 1, 10);
          return a + g.of(" ", "/", ":", "@", "*", "\u00e9", "\u0000", "\u200b", "'", "\"", "\\", "+", ",") + a;
        },
        () -> g.chars('a', 'z', 129, 129),
        () -> unicodeDigits(g), () -> junk(g)),
        l -> !l.isBlank() && !l.trim().matches("[A-Za-z0-9._-]{1,128}"));
    return new Bad(ConfigKey.LOCK, v, "1 to 128 letters, digits");
  }

  private static Bad endpoints(Gen g) {
    String v = g.oneOf(
        () -> g.of("ftp://etcd:2379", "etcd", "http://etcd", "https://etcd", "http://:2379", "http://etcd:0",
            "http://etcd:65536", "http://etcd:99999", "etcd:99999", "http://et cd:2379", "http://etcd_1:2379",
            "http://[::1:2379", "unix:///var/run/etcd.sock", "http://etcd:2379,ftp://b:1", "http://a:1;etcd",
            "://x:1", "http://etcd:-1", "http://etcd:port"),
        () -> until(() -> g.chars('a', 'z', 1, 6), sc -> !sc.equals("http") && !sc.equals("https"))
            + "://etcd:" + g.between(1, 65535),
        () -> "http://127.0.0.1:" + g.between(65536, 200_000));
    return new Bad(ConfigKey.ETCD_ENDPOINTS, v, "URL");
  }

  private static Bad otlp(Gen g) {
    String v = until(() -> g.oneOf(
        () -> g.of("collector:4318", "ftp://collector", "http://", "http:///v1/metrics", "http://col lector",
            "localhost", "//collector:4318", "http://collector:99999", "http://collector:65536", "mailto:a@b"),
        () -> until(() -> junk(g), j -> !j.trim().matches("(?i)https?://.+"))),
        o -> !o.isBlank());
    return new Bad(ConfigKey.OTLP_ENDPOINT, v, "an http or https URL");
  }

  private static Bad tokenMax(Gen g) {
    String v = until(() -> g.oneOf(
        () -> junk(g), () -> unicodeDigits(g),
        () -> "-" + g.between(0, Long.MAX_VALUE),
        () -> "+" + g.between(1, Long.MAX_VALUE),
        () -> "9" + g.charsOf("0123456789", 20, 40),
        () -> g.of("0", "00", "9223372036854775808", "1.5", "1e9", "0x7fffffff", "_", "2^63")),
        t -> !t.isBlank() && !validTokenMax(t));
    return new Bad(ConfigKey.TOKEN_MAX, v, "an integer from 1 to 9223372036854775807");
  }

  private static Bad topics(Gen g) {
    String ok = g.of("orders", "ledger-*", "");
    String badTopic = g.bool() ? g.of("a b", "topic/x", "t\u00e9", "t:1", "#", "a$", "t@x") : g.chars('a', 'z', 250, 250);
    return new Bad(ConfigKey.FENCED_KAFKA, ok.isEmpty() ? badTopic : ok + "," + badTopic, "Kafka topic names or globs");
  }

  private static Bad headers(Gen g) {
    return new Bad(ConfigKey.OTLP_HEADERS, g.of("novalue", "=v", "a=1,=2", "a=%zz", "a=%", "Authorization=%G0",
        "a=1,b"), "name=value pairs");
  }

  private static Bad methods(Gen g) {
    String m = g.of("POST PUT", "PO(ST", "GET/", "P\u00d6ST", "\"POST\"", "POST{}", "PUT:", "DEL ETE");
    return new Bad(ConfigKey.UNSAFE_HTTP_METHODS, g.of("", "PATCH,", "DELETE;") + m, "HTTP method names");
  }

  private static Bad choices(Gen g) {
    ConfigKey k = g.of(ConfigKey.STANDBY, ConfigKey.EXPIRED_FENCED, ConfigKey.MODE, ConfigKey.FAIL_MODE,
        ConfigKey.LOG_LEVEL);
    String v = until(() -> junk(g), c -> !c.isBlank() && !List.of(k.form().split("\\|"))
        .contains(c.trim().toLowerCase(Locale.ROOT)));
    return new Bad(k, v, "one of");
  }

  private static Bad paths(Gen g) {
    Supplier<String> nul = () -> "/tmp/" + g.chars('a', 'z', 1, 8) + "\u0000x";
    if (g.bool()) {
      return new Bad(g.of(ConfigKey.STATE_DIR, ConfigKey.CONFIG_FILE), nul.get(), "path");
    }
    String v = g.oneOf(nul, () -> "/nonexistent/" + g.chars('a', 'z', 1, 8) + ".pem",
        () -> g.of("/tmp", "/tmp/", "/", "."));
    return new Bad(ConfigKey.ETCD_TLS_CA, v, "file");
  }

  /** 1,500 cases spread evenly over the kinds of key. */
  static Stream<Arguments> badValues() {
    Gen g = new Gen(6_001);
    List<Arguments> out = new ArrayList<>();
    while (out.size() < 1500) {
      Bad bad = g.oneOf(() -> duration(g), () -> port(g), () -> new Bad(ConfigKey.LEASE_ENABLED, notABoolean(g),
          "true or false"), () -> lock(g), () -> endpoints(g), () -> otlp(g), () -> tokenMax(g), () -> topics(g),
          () -> headers(g), () -> methods(g), () -> choices(g), () -> paths(g));
      out.add(Arguments.of(Named.of(bad.key().property() + "=" + Gen.show(bad.value()), bad), g.bool()));
    }
    return out.stream();
  }

  static boolean validTokenMax(String v) {
    String t = v.trim().replace("_", "");
    return t.matches("[0-9]{1,19}") && new BigInteger(t).signum() > 0
        && new BigInteger(t).compareTo(BigInteger.valueOf(Long.MAX_VALUE)) <= 0;
  }

  static String notABoolean(Gen g) {
    return until(() -> g.oneOf(() -> junk(g), () -> g.of("yes", "no", "1", "0", "on", "off", "tru", "ture", "t", "f",
        "falsey", "true false", "\uff54rue", "TRUE.", "enabled")),
        v -> !v.isBlank() && !v.trim().equalsIgnoreCase("true") && !v.trim().equalsIgnoreCase("false"));
  }

  static Stream<Arguments> badInstrumentationSwitches() {
    Gen g = new Gen(6_002);
    List<Arguments> out = new ArrayList<>();
    while (out.size() < 200) {
      String v = notABoolean(g);
      out.add(Arguments.of(Named.of(Gen.show(v), v),
          g.of("jdbc", "okhttp", "kafka-clients", "servlet", "java-http-client")));
    }
    return out.stream();
  }

  static Stream<Arguments> agentArgs() {
    Gen g = new Gen(6_003);
    List<String> edges = List.of("", ",", "=", "==", ",,,", "lock", "lock=", "=ledger", "lock==ledger",
        "lock=ledger,lock=other", "\u0000", " = ");
    return Gen.cases(1000, edges, () -> String.join(",", g.list(0, 6, () -> {
      String key = g.bool() ? g.of(ConfigKey.values()).key() : g.chars('!', '~', 0, 10);
      String value = g.bool() ? junk(g) : "";
      return key + g.of("=", "", "==", " = ") + value;
    })), a -> true).stream().map(a -> Arguments.of(Named.of(Gen.show(a), a)));
  }
}
