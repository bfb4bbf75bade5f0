package dev.fencing.agent.config;

import dev.fencing.fence.sql.TokenSignature;
import java.io.IOException;
import java.io.Reader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the one key space from its four sources, highest precedence first: agent arguments, {@code fencing.*}
 * system properties, {@code FENCING_*} environment variables, the properties file named by {@code fencing.config.file}.
 * Never throws: every invalid or unknown setting becomes one problem line naming the key, the value and the expected
 * form, and the key falls back to its default.
 */
public final class ConfigLoader {
  private static final Pattern INSTRUMENTATION = Pattern.compile("instrumentation\\.([a-z0-9][a-z0-9-]*)\\.enabled");
  private static final Pattern ENV_INSTRUMENTATION = Pattern.compile("FENCING_INSTRUMENTATION_([A-Z0-9_]+)_ENABLED");
  private static final Pattern LOCK_NAME = Pattern.compile("[A-Za-z0-9._-]{1,128}");
  /** A Kafka topic name (legal characters, at most 249) in which * stands for any run of characters. */
  private static final Pattern TOPIC_PATTERN = Pattern.compile("[A-Za-z0-9._*-]{1,249}");
  /** An HTTP method is an RFC 9110 token; "POST PUT" (a blank instead of a comma) would silently match nothing. */
  private static final Pattern METHOD = Pattern.compile("[A-Za-z0-9!#$%&'*+.^_`|~-]+");
  /** ASCII digits only: Integer/Long.parseLong also take a sign and other scripts' digits. */
  private static final Pattern DIGITS = Pattern.compile("[0-9]+");
  /** No setting needs more; longer values would also overflow the nanosecond clock arithmetic. */
  private static final Duration MAX_DURATION = Duration.ofDays(1);
  private static final Map<String, ConfigKey> BY_KEY = new HashMap<>();
  private static final Map<String, ConfigKey> BY_ENV = new HashMap<>();

  static {
    for (ConfigKey k : ConfigKey.values()) {
      if (k != ConfigKey.INSTRUMENTATION_ENABLED) {
        BY_KEY.put(k.key(), k);
        BY_ENV.put(k.envVar(), k);
      }
    }
  }

  private ConfigLoader() {}

  private static final class Raw {
    final String value;
    final String source;

    Raw(String value, String source) {
      this.value = value;
      this.source = source;
    }
  }

  /** Loads from the real sources of this JVM. */
  public static AgentConfig load(String agentArgs) {
    return load(agentArgs, System.getProperties(), System.getenv());
  }

  public static AgentConfig load(String agentArgs, Properties systemProperties, Map<String, String> env) {
    List<String> problems = new ArrayList<>();
    Map<String, Raw> raw = new LinkedHashMap<>();
    // Lowest precedence last: putIfAbsent keeps the first (highest) source of each key.
    readAgentArgs(agentArgs, raw, problems);
    readSystemProperties(systemProperties, raw, problems);
    readEnvironment(env, raw, problems);
    Raw file = raw.get(ConfigKey.CONFIG_FILE.key());
    if (file != null && !file.value.isBlank()) {
      try {
        readFile(Paths.get(file.value.trim()), raw, problems);
      } catch (InvalidPathException e) {
        // reported by the parser, which validates fencing.config.file as a path
      }
    }
    return parse(raw, problems);
  }

  private static void readAgentArgs(String args, Map<String, Raw> raw, List<String> problems) {
    if (args == null || args.isBlank()) {
      return;
    }
    String lastKey = null;
    for (String part : args.split(",")) {
      int eq = part.indexOf('=');
      if (eq < 0) {
        // "etcd.endpoints=http://a:2379,http://b:2379": a segment without '=' continues the previous value.
        if (lastKey != null && !part.isBlank()) {
          Raw prev = raw.get(lastKey);
          raw.put(lastKey, new Raw(prev.value + "," + part.trim(), prev.source));
        } else if (!part.isBlank()) {
          problems.add("agent argument '" + part.trim() + "': expected key=value pairs separated by commas");
        }
        continue;
      }
      String key = stripPrefix(part.substring(0, eq).trim());
      if (ConfigKey.OTLP_HEADERS.key().equals(lastKey) && !BY_KEY.containsKey(key)
          && !INSTRUMENTATION.matcher(key).matches()) {
        // "otlp.headers=a=1,b=2": a segment naming no key is the next header.
        Raw prev = raw.get(lastKey);
        raw.put(lastKey, new Raw(prev.value + "," + part.trim(), prev.source));
        continue;
      }
      lastKey = accept(key, part.substring(eq + 1).trim(), "agent argument " + key, raw, problems) ? key : null;
    }
  }

  private static void readSystemProperties(Properties props, Map<String, Raw> raw, List<String> problems) {
    for (String name : new TreeMap<>(propertiesMap(props)).keySet()) {
      if (name.startsWith(ConfigKey.PREFIX)) {
        String key = name.substring(ConfigKey.PREFIX.length());
        accept(key, props.getProperty(name), "system property " + name, raw, problems);
      }
    }
  }

  private static void readEnvironment(Map<String, String> env, Map<String, Raw> raw, List<String> problems) {
    for (Map.Entry<String, String> e : new TreeMap<>(env).entrySet()) {
      String name = e.getKey();
      if (!name.startsWith("FENCING_")) {
        continue;
      }
      ConfigKey k = BY_ENV.get(name);
      Matcher m = ENV_INSTRUMENTATION.matcher(name);
      String key;
      if (k != null) {
        key = k.key();
      } else if (m.matches()) {
        key = "instrumentation." + m.group(1).toLowerCase(Locale.ROOT).replace('_', '-') + ".enabled";
      } else {
        problems.add("unknown environment variable " + name + ": expected one of the FENCING_* variables of the configuration reference");
        continue;
      }
      raw.putIfAbsent(key, new Raw(e.getValue(), "environment variable " + name));
    }
  }

  private static void readFile(Path path, Map<String, Raw> raw, List<String> problems) {
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(path, StandardCharsets.UTF_8)) {
      p.load(r);
    } catch (IOException e) {
      problems.add(ConfigKey.CONFIG_FILE.property() + "='" + path + "': cannot read the file (" + e.getMessage()
          + "): expected a readable properties file");
      return;
    }
    for (String name : new TreeMap<>(propertiesMap(p)).keySet()) {
      accept(stripPrefix(name), p.getProperty(name), "file " + path + " key " + name, raw, problems);
    }
  }

  private static Map<String, String> propertiesMap(Properties p) {
    Map<String, String> m = new HashMap<>();
    for (String name : p.stringPropertyNames()) {
      m.put(name, p.getProperty(name));
    }
    return m;
  }

  private static String stripPrefix(String key) {
    return key.startsWith(ConfigKey.PREFIX) ? key.substring(ConfigKey.PREFIX.length()) : key;
  }

  private static boolean accept(String key, String value, String source, Map<String, Raw> raw, List<String> problems) {
    if (!BY_KEY.containsKey(key) && !INSTRUMENTATION.matcher(key).matches()) {
      problems.add("unknown key " + ConfigKey.PREFIX + key + " (" + source + "): expected one of the keys of the configuration reference");
      return false;
    }
    raw.putIfAbsent(key, new Raw(value, source));
    return true;
  }

  private static AgentConfig parse(Map<String, Raw> raw, List<String> problems) {
    Parser p = new Parser(raw, problems);
    Map<ConfigKey, Object> v = new EnumMap<>(ConfigKey.class);
    boolean leaseEnabled = p.flag(ConfigKey.LEASE_ENABLED, true);
    v.put(ConfigKey.LEASE_ENABLED, leaseEnabled);
    v.put(ConfigKey.LOCK, p.lock(leaseEnabled));
    v.put(ConfigKey.ETCD_ENDPOINTS, p.endpoints());
    v.put(ConfigKey.ETCD_USER, p.text(ConfigKey.ETCD_USER, null));
    v.put(ConfigKey.ETCD_PASSWORD_FILE, p.file(ConfigKey.ETCD_PASSWORD_FILE));
    v.put(ConfigKey.ETCD_TLS_CA, p.file(ConfigKey.ETCD_TLS_CA));
    v.put(ConfigKey.ETCD_TLS_CERT, p.file(ConfigKey.ETCD_TLS_CERT));
    v.put(ConfigKey.ETCD_TLS_KEY, p.file(ConfigKey.ETCD_TLS_KEY));
    v.put(ConfigKey.ETCD_KEY_PREFIX, p.text(ConfigKey.ETCD_KEY_PREFIX, "/fencing/locks/"));
    v.put(ConfigKey.ETCD_TIMEOUT, p.duration(ConfigKey.ETCD_TIMEOUT, Duration.ofSeconds(5), Duration.ofMillis(100)));
    Duration ttl = p.ttl();
    v.put(ConfigKey.LEASE_TTL, ttl);
    v.put(ConfigKey.LEASE_SAFETY_MARGIN, p.margin(ttl));
    v.put(ConfigKey.STANDBY, p.choice(ConfigKey.STANDBY, AgentConfig.Standby.class, AgentConfig.Standby.BLOCK));
    v.put(ConfigKey.STANDBY_TIMEOUT, p.duration(ConfigKey.STANDBY_TIMEOUT, Duration.ofSeconds(5), Duration.ZERO));
    v.put(ConfigKey.EXPIRED_FENCED, p.choice(ConfigKey.EXPIRED_FENCED, AgentConfig.ExpiredFenced.class, AgentConfig.ExpiredFenced.TAG));
    v.put(ConfigKey.MODE, p.choice(ConfigKey.MODE, AgentConfig.Mode.class, AgentConfig.Mode.ENFORCE));
    v.put(ConfigKey.FAIL_MODE, p.choice(ConfigKey.FAIL_MODE, AgentConfig.FailMode.class, AgentConfig.FailMode.CLOSED));
    v.put(ConfigKey.TOKEN_MAX, p.tokenMax());
    v.put(ConfigKey.STATE_DIR, p.path(ConfigKey.STATE_DIR));
    v.put(ConfigKey.FENCED_JDBC, p.list(ConfigKey.FENCED_JDBC));
    v.put(ConfigKey.JDBC_POOLER, p.choice(ConfigKey.JDBC_POOLER, AgentConfig.JdbcPooler.class, AgentConfig.JdbcPooler.AUTO));
    v.put(ConfigKey.JDBC_WRITE_FUNCTIONS, p.list(ConfigKey.JDBC_WRITE_FUNCTIONS));
    v.put(ConfigKey.JDBC_IDLE_IN_TRANSACTION_TIMEOUT,
        p.duration(ConfigKey.JDBC_IDLE_IN_TRANSACTION_TIMEOUT, ttl, Duration.ZERO));
    v.put(ConfigKey.FENCED_HTTP, p.list(ConfigKey.FENCED_HTTP));
    List<String> methods = p.methods();
    v.put(ConfigKey.UNSAFE_HTTP_METHODS, methods.isEmpty() ? List.of("POST", "PUT", "PATCH", "DELETE")
        : methods.stream().map(m -> m.toUpperCase(Locale.ROOT)).toList());
    v.put(ConfigKey.FENCED_KAFKA, p.topics());
    v.put(ConfigKey.SIGNING_KEY_FILE, p.signingKey());
    v.put(ConfigKey.HOLDER_ID, p.text(ConfigKey.HOLDER_ID, null)); // default computed off premain, see AgentConfig
    v.put(ConfigKey.HTTP_PORT, p.port());
    v.put(ConfigKey.HTTP_HOST, p.text(ConfigKey.HTTP_HOST, "127.0.0.1"));
    v.put(ConfigKey.OTLP_ENDPOINT, p.otlpEndpoint());
    v.put(ConfigKey.OTLP_HEADERS, p.nameValues(ConfigKey.OTLP_HEADERS));
    v.put(ConfigKey.OTLP_INTERVAL, p.duration(ConfigKey.OTLP_INTERVAL, Duration.ofSeconds(60), Duration.ofMillis(100)));
    v.put(ConfigKey.SHUTDOWN_TIMEOUT, p.duration(ConfigKey.SHUTDOWN_TIMEOUT, Duration.ofSeconds(2), Duration.ZERO));
    v.put(ConfigKey.LOG_LEVEL, p.logLevel());
    v.put(ConfigKey.LOG_EVENT_INTERVAL, p.duration(ConfigKey.LOG_EVENT_INTERVAL, Duration.ofSeconds(10), Duration.ZERO));
    v.put(ConfigKey.CONFIG_FILE, p.path(ConfigKey.CONFIG_FILE));
    p.pairs(v);

    Map<String, Boolean> instrumentations = new TreeMap<>();
    Map<String, String> sources = new HashMap<>();
    for (Map.Entry<String, Raw> e : raw.entrySet()) {
      sources.put(e.getKey(), e.getValue().source);
      Matcher m = INSTRUMENTATION.matcher(e.getKey());
      if (m.matches()) {
        Boolean on = p.bool(e.getKey(), e.getValue());
        if (on != null) {
          instrumentations.put(m.group(1), on);
        }
      }
    }
    return new AgentConfig(v, instrumentations, sources, problems);
  }

  /** hostname/pid without a DNS lookup (which can be slow). */
  static String defaultHolderId() {
    return hostName() + "/" + ProcessHandle.current().pid();
  }
  /** This host's name from $HOSTNAME or /etc/hostname ("localhost" when neither says), without a DNS lookup. */
  public static String hostName() {
    String host = System.getenv("HOSTNAME");
    if (host == null || host.isBlank()) {
      try {
        host = Files.readString(Paths.get("/etc/hostname"), StandardCharsets.UTF_8).trim();
      } catch (IOException | RuntimeException e) {
        host = "localhost";
      }
    }
    return host;
  }


  /** Turns raw strings into typed values, reporting each invalid one. */
  private static final class Parser {
    private final Map<String, Raw> raw;
    private final List<String> problems;

    Parser(Map<String, Raw> raw, List<String> problems) {
      this.raw = raw;
      this.problems = problems;
    }

    private Raw raw(ConfigKey k) {
      Raw r = raw.get(k.key());
      return r == null || r.value == null || r.value.isBlank() ? null : r;
    }

    private void problem(ConfigKey k, Raw r, String expected) {
      problems.add(k.property() + "='" + r.value + "' (" + r.source + "): expected " + expected);
    }

    String lock(boolean required) {
      Raw r = raw(ConfigKey.LOCK);
      if (r == null) {
        if (!required) {
          return null;
        }
        problems.add(ConfigKey.LOCK.property() + " is not set: expected the lock name, e.g. -Dfencing.lock=ledger or -javaagent:fencing-agent.jar=lock=ledger");
        return null;
      }
      String lock = r.value.trim();
      if (!LOCK_NAME.matcher(lock).matches()) {
        problem(ConfigKey.LOCK, r, "1 to 128 letters, digits, '.', '_' or '-'");
        return null;
      }
      return lock;
    }

    List<URI> endpoints() {
      Raw r = raw(ConfigKey.ETCD_ENDPOINTS);
      List<URI> out = new ArrayList<>();
      if (r == null) {
        out.add(URI.create("http://127.0.0.1:2379"));
        return out;
      }
      for (String s : r.value.split("[,;]")) {
        String e = s.trim();
        if (e.isEmpty()) {
          continue;
        }
        try {
          URI u = URI.create(e.contains("://") ? e : "http://" + e);
          if (!("http".equals(u.getScheme()) || "https".equals(u.getScheme())) || u.getHost() == null || u.getPort() <= 0
              || u.getPort() > 65535) {
            throw new IllegalArgumentException();
          }
          out.add(u);
        } catch (IllegalArgumentException ex) {
          problem(ConfigKey.ETCD_ENDPOINTS, r, "URLs like http://etcd-1:2379 separated by commas ('" + e + "' is not one)");
          out.clear();
          out.add(URI.create("http://127.0.0.1:2379"));
          return out;
        }
      }
      if (out.isEmpty()) {
        problem(ConfigKey.ETCD_ENDPOINTS, r, "at least one URL like http://etcd-1:2379");
        out.add(URI.create("http://127.0.0.1:2379"));
      }
      return out;
    }

    String text(ConfigKey k, String dflt) {
      Raw r = raw(k);
      return r == null ? dflt : r.value.trim();
    }

    List<String> list(ConfigKey k) {
      Raw r = raw(k);
      List<String> out = new ArrayList<>();
      if (r != null) {
        for (String s : r.value.split("[,;]")) {
          if (!s.isBlank()) {
            out.add(s.trim());
          }
        }
      }
      return List.copyOf(out);
    }

    /** Topic names and globs; an invalid entry invalidates the list (no topic fenced: sends block after expiry). */
    List<String> topics() {
      List<String> topics = list(ConfigKey.FENCED_KAFKA);
      for (String t : topics) {
        if (!TOPIC_PATTERN.matcher(t).matches()) {
          problem(ConfigKey.FENCED_KAFKA, raw(ConfigKey.FENCED_KAFKA), "Kafka topic names or globs separated by "
              + "commas: letters, digits, '.', '_', '-', and * for any run of characters ('" + t + "' is not one)");
          return List.of();
        }
      }
      return topics;
    }

    Path path(ConfigKey k) {
      Raw r = raw(k);
      if (r == null) {
        return null;
      }
      try {
        return Paths.get(r.value.trim());
      } catch (InvalidPathException e) {
        problem(k, r, "a file system path (" + e.getReason() + ")");
        return null;
      }
    }

    /** The HTTP methods, upper case; an entry that is not an RFC 9110 token invalidates the list (default used). */
    List<String> methods() {
      List<String> methods = list(ConfigKey.UNSAFE_HTTP_METHODS);
      for (String m : methods) {
        if (!METHOD.matcher(m).matches()) {
          problem(ConfigKey.UNSAFE_HTTP_METHODS, raw(ConfigKey.UNSAFE_HTTP_METHODS), "HTTP method names separated "
              + "by commas, e.g. POST,PUT ('" + m + "' is not one)");
          return List.of();
        }
      }
      return methods;
    }

    /** The signing key read from its file (a small read, in premain: the key must be there before any side effect). */
    TokenSignature signingKey() {
      Raw r = raw(ConfigKey.SIGNING_KEY_FILE);
      if (r == null || r.value.isBlank()) {
        return null;
      }
      Path path;
      try {
        path = Paths.get(r.value.trim());
      } catch (InvalidPathException e) {
        problem(ConfigKey.SIGNING_KEY_FILE, r, TokenSignature.EXPECTED_FORM + " (" + e.getReason() + ")");
        return null;
      }
      try {
        return TokenSignature.load(path);
      } catch (IllegalArgumentException e) {
        problems.add(ConfigKey.SIGNING_KEY_FILE.property() + "='" + r.value + "' (" + r.source + "): "
            + e.getMessage());
        return null;
      }
    }

    Path file(ConfigKey k) {
      Raw r = raw(k);
      if (r == null) {
        return null;
      }
      Path p;
      try {
        p = Paths.get(r.value.trim());
      } catch (InvalidPathException e) {
        problem(k, r, "a readable file (" + e.getReason() + ")");
        return null;
      }
      if (Files.isDirectory(p)) {
        problem(k, r, "a readable file (this is a directory)");
        return null;
      }
      if (!Files.isReadable(p)) {
        problem(k, r, "a readable file (not found or not readable)");
        return null;
      }
      return p;
    }

    Duration duration(ConfigKey k, Duration dflt, Duration min) {
      Raw r = raw(k);
      if (r == null) {
        return dflt;
      }
      try {
        Duration d = Durations.parse(r.value);
        if (d.compareTo(min) < 0) {
          problem(k, r, "a duration of at least " + Durations.format(min));
          return dflt;
        }
        if (d.compareTo(MAX_DURATION) > 0) {
          problem(k, r, "a duration of at most " + Durations.format(MAX_DURATION));
          return dflt;
        }
        return d;
      } catch (IllegalArgumentException e) {
        problem(k, r, "a duration such as 10s, 500ms, 2m or 1h");
        return dflt;
      }
    }

    /**
     * etcd grants leases in whole seconds: a TTL of 2999ms would be granted as 2 s while renewals were planned for
     * 2.999 s, and the lease would flap. Anything but whole seconds is refused.
     */
    Duration ttl() {
      Duration dflt = Duration.ofSeconds(10);
      Duration ttl = duration(ConfigKey.LEASE_TTL, dflt, Duration.ofSeconds(2));
      if (ttl.toNanos() % 1_000_000_000L != 0) {
        problem(ConfigKey.LEASE_TTL, raw(ConfigKey.LEASE_TTL),
            "a whole number of seconds (etcd grants leases in seconds), such as 3s or 10s");
        return dflt;
      }
      return ttl;
    }

    Duration margin(Duration ttl) {
      Duration half = ttl.dividedBy(2);
      Duration dflt = Duration.ofSeconds(1).compareTo(half) < 0 ? Duration.ofSeconds(1) : half.dividedBy(2);
      Duration m = duration(ConfigKey.LEASE_SAFETY_MARGIN, dflt, Duration.ZERO);
      if (m.compareTo(half) >= 0) {
        problem(ConfigKey.LEASE_SAFETY_MARGIN, raw(ConfigKey.LEASE_SAFETY_MARGIN),
            "a duration below half of fencing.lease.ttl (" + Durations.format(ttl) + ")");
        return dflt;
      }
      return m;
    }

    <E extends Enum<E>> E choice(ConfigKey k, Class<E> type, E dflt) {
      Raw r = raw(k);
      if (r == null) {
        return dflt;
      }
      for (E e : type.getEnumConstants()) {
        if (e.name().equalsIgnoreCase(r.value.trim())) {
          return e;
        }
      }
      problem(k, r, "one of " + k.form().replace("|", ", "));
      return dflt;
    }

    Long tokenMax() {
      Raw r = raw(ConfigKey.TOKEN_MAX);
      if (r == null) {
        return Long.MAX_VALUE;
      }
      try {
        String digits = r.value.trim().replace("_", "");
        long max = DIGITS.matcher(digits).matches() ? Long.parseLong(digits) : 0;
        if (max > 0) {
          return max;
        }
      } catch (NumberFormatException e) {
        // reported below
      }
      problem(ConfigKey.TOKEN_MAX, r, "an integer from 1 to 9223372036854775807");
      return Long.MAX_VALUE;
    }

    Integer port() {
      Raw r = raw(ConfigKey.HTTP_PORT);
      if (r == null || "off".equalsIgnoreCase(r.value.trim())) {
        return null;
      }
      try {
        String digits = r.value.trim();
        int port = DIGITS.matcher(digits).matches() ? Integer.parseInt(digits) : -1;
        if (port >= 0 && port <= 65535) {
          return port;
        }
      } catch (NumberFormatException e) {
        // reported below
      }
      problem(ConfigKey.HTTP_PORT, r, "a port from 0 to 65535, or off");
      return null;
    }

    URI otlpEndpoint() {
      Raw r = raw(ConfigKey.OTLP_ENDPOINT);
      if (r == null) {
        return null;
      }
      try {
        URI u = new URI(r.value.trim());
        if (("http".equals(u.getScheme()) || "https".equals(u.getScheme())) && u.getHost() != null
            && u.getPort() <= 65535) {
          return u;
        }
      } catch (java.net.URISyntaxException e) {
        // reported below
      }
      problem(ConfigKey.OTLP_ENDPOINT, r, "an http or https URL such as http://collector:4318");
      return null;
    }

    Map<String, String> nameValues(ConfigKey k) {
      Raw r = raw(k);
      if (r == null) {
        return Map.of();
      }
      try {
        return NameValueList.parse(r.value);
      } catch (IllegalArgumentException e) {
        problem(k, r, "name=value pairs separated by commas, values percent-encoded (" + e.getMessage() + ")");
        return Map.of();
      }
    }

    String logLevel() {
      Raw r = raw(ConfigKey.LOG_LEVEL);
      if (r == null) {
        return "info";
      }
      String level = r.value.trim().toLowerCase(Locale.ROOT);
      if (List.of("error", "warn", "info", "debug", "trace").contains(level)) {
        return level;
      }
      problem(ConfigKey.LOG_LEVEL, r, "one of error, warn, info, debug, trace");
      return "info";
    }

    boolean flag(ConfigKey k, boolean fallback) {
      Raw r = raw(k);
      Boolean b = r == null ? null : bool(k.key(), r);
      return b == null ? fallback : b;
    }

    Boolean bool(String key, Raw r) {
      String s = r.value == null ? "" : r.value.trim();
      if ("true".equalsIgnoreCase(s) || "false".equalsIgnoreCase(s)) {
        return Boolean.valueOf(s);
      }
      problems.add(ConfigKey.PREFIX + key + "='" + r.value + "' (" + r.source + "): expected true or false");
      return null;
    }

    /** Keys that only make sense together. */
    void pairs(Map<ConfigKey, Object> v) {
      if ((v.get(ConfigKey.ETCD_USER) == null) != (raw(ConfigKey.ETCD_PASSWORD_FILE) == null)) {
        problems.add(ConfigKey.ETCD_USER.property() + " and " + ConfigKey.ETCD_PASSWORD_FILE.property()
            + ": expected both or neither");
      }
      if ((raw(ConfigKey.ETCD_TLS_CERT) == null) != (raw(ConfigKey.ETCD_TLS_KEY) == null)) {
        problems.add(ConfigKey.ETCD_TLS_CERT.property() + " and " + ConfigKey.ETCD_TLS_KEY.property()
            + ": expected both or neither");
      }
    }
  }
}
