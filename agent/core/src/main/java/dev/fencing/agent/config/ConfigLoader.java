package dev.fencing.agent.config;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.nio.file.Paths;
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
 * Never throws: every invalid setting becomes one problem line naming the key, the value and the expected form, and
 * the key falls back to its default; every unknown key or FENCING_* variable becomes one warning (ignored, with the
 * nearest known key).
 */
public final class ConfigLoader {
  private static final Pattern INSTRUMENTATION = Pattern.compile("instrumentation\\.([a-z0-9][a-z0-9-]*)\\.enabled");
  private static final Pattern ENV_INSTRUMENTATION = Pattern.compile("FENCING_INSTRUMENTATION_([A-Z0-9_]+)_ENABLED");
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
    List<String> warnings = new ArrayList<>();
    Map<String, Raw> raw = new LinkedHashMap<>();
    // Lowest precedence last: putIfAbsent keeps the first (highest) source of each key.
    readAgentArgs(agentArgs, raw, problems, warnings);
    readSystemProperties(systemProperties, raw, warnings);
    readEnvironment(env, raw, warnings);
    Raw file = raw.get(ConfigKey.CONFIG_FILE.key());
    if (file != null && !file.value.isBlank()) {
      try {
        readFile(Paths.get(file.value.trim()), raw, problems, warnings);
      } catch (InvalidPathException e) {
        // reported by the parser, which validates fencing.config.file as a path
      }
    }
    return parse(raw, problems, warnings);
  }

  private static void readAgentArgs(String args, Map<String, Raw> raw, List<String> problems,
      List<String> warnings) {
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
      lastKey = accept(key, part.substring(eq + 1).trim(), "agent argument " + key, raw, warnings) ? key : null;
    }
  }

  private static void readSystemProperties(Properties props, Map<String, Raw> raw, List<String> warnings) {
    for (String name : new TreeMap<>(propertiesMap(props)).keySet()) {
      if (name.startsWith(ConfigKey.PREFIX)) {
        String key = name.substring(ConfigKey.PREFIX.length());
        accept(key, props.getProperty(name), "system property " + name, raw, warnings);
      }
    }
  }

  /**
   * Variables Kubernetes injects for every Service in the namespace ("service links"): a Service named
   * {@code fencing-etcd} gives every pod FENCING_ETCD_SERVICE_HOST, FENCING_ETCD_PORT_2379_TCP_ADDR, ... They are the
   * cluster's, not settings: one warning names them all.
   */
  private static final Pattern SERVICE_LINK = Pattern.compile(
      "FENCING_[A-Z0-9_]+_(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT|PORT_[0-9]+_(TCP|UDP|SCTP)(_PROTO|_PORT|_ADDR)?)");

  private static void readEnvironment(Map<String, String> env, Map<String, Raw> raw, List<String> warnings) {
    List<String> serviceLinks = new ArrayList<>();
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
      } else if (SERVICE_LINK.matcher(name).matches()) {
        serviceLinks.add(name);
        continue;
      } else {
        warnings.add("unknown environment variable " + name + ": ignored (" + nearest(name, true) + ")");
        continue;
      }
      raw.putIfAbsent(key, new Raw(e.getValue(), "environment variable " + name));
    }
    if (!serviceLinks.isEmpty()) {
      warnings.add("environment variables " + String.join(", ", serviceLinks) + " look like Kubernetes service links"
          + " (a Service whose name starts with fencing-): ignored");
    }
  }

  /**
   * The known key (or variable) closest to an unknown one, as "did you mean X?", or a pointer to the reference:
   * a typo should be found in the log line that reports it.
   */
  static String nearest(String unknown, boolean env) {
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (ConfigKey k : ConfigKey.values()) {
      String candidate = env ? k.envVar() : k.property();
      int d = distance(unknown, candidate);
      if (d < bestDistance) {
        bestDistance = d;
        best = candidate;
      }
    }
    return best != null && bestDistance <= Math.max(3, unknown.length() / 4) ? "did you mean " + best + "?"
        : "not in the configuration reference";
  }

  /** Levenshtein distance, case-insensitive. */
  private static int distance(String a, String b) {
    String x = a.toLowerCase(Locale.ROOT);
    String y = b.toLowerCase(Locale.ROOT);
    int[] prev = new int[y.length() + 1];
    int[] cur = new int[y.length() + 1];
    for (int j = 0; j <= y.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= x.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= y.length(); j++) {
        int cost = x.charAt(i - 1) == y.charAt(j - 1) ? 0 : 1;
        cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[y.length()];
  }

  private static void readFile(Path path, Map<String, Raw> raw, List<String> problems, List<String> warnings) {
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(path, StandardCharsets.UTF_8)) {
      p.load(r);
    } catch (IOException e) {
      problems.add(ConfigKey.CONFIG_FILE.property() + "='" + path + "': cannot read the file (" + e.getMessage()
          + "): expected a readable properties file");
      return;
    }
    for (String name : new TreeMap<>(propertiesMap(p)).keySet()) {
      accept(stripPrefix(name), p.getProperty(name), "file " + path + " key " + name, raw, warnings);
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

  /**
   * Keeps a known key's raw value; an unknown key is a warning, never a failure: a typo or a setting of a newer
   * release must not switch the agent off (a malformed value of a known key still does, through fail-mode).
   */
  private static boolean accept(String key, String value, String source, Map<String, Raw> raw, List<String> warnings) {
    if (!BY_KEY.containsKey(key) && !INSTRUMENTATION.matcher(key).matches()) {
      warnings.add("unknown key " + ConfigKey.PREFIX + key + " (" + source + "): ignored ("
          + nearest(ConfigKey.PREFIX + key, false) + ")");
      return false;
    }
    raw.putIfAbsent(key, new Raw(value, source));
    return true;
  }

  private static AgentConfig parse(Map<String, Raw> raw, List<String> problems, List<String> warnings) {
    Map<ConfigKey, Object> v = new EnumMap<>(ConfigKey.class);
    // Keys that others depend on first (the lock is required only with a lease), then the reference's order.
    v.put(ConfigKey.LEASE_ENABLED, value(ConfigKey.LEASE_ENABLED, raw, v, problems));
    v.put(ConfigKey.SECTIONS, value(ConfigKey.SECTIONS, raw, v, problems));
    for (ConfigKey k : ConfigKey.values()) {
      if (k != ConfigKey.LEASE_ENABLED && k != ConfigKey.SECTIONS && k != ConfigKey.INSTRUMENTATION_ENABLED) {
        v.put(k, value(k, raw, v, problems));
      }
    }
    pairs(raw, v, problems);
    sectionsNeedALease(v, problems);
    onlyWarn(ConfigKey.INVENTORY_MAX_DESTINATIONS, problems, warnings);
    if (setValue(raw, ConfigKey.SECTIONS) != null || Boolean.TRUE.equals(v.get(ConfigKey.SECTIONS_ANNOTATED))
        || Boolean.TRUE.equals(v.get(ConfigKey.SHEDLOCK_ENABLED))
        || setValue(raw, ConfigKey.QUARTZ_JOBS) != null) {
      // Sections were declared (the problem above names a bad entry), or ShedLock's tasks or Quartz's declared jobs
      // name their locks: a missing fencing.lock is not a second problem.
      String lockNotSet = ConfigKey.LOCK.property() + " is not set";
      for (java.util.Iterator<String> p = problems.iterator(); p.hasNext(); ) {
        if (p.next().startsWith(lockNotSet)) {
          p.remove();
        }
      }
    }

    Map<String, Boolean> instrumentations = new TreeMap<>();
    Map<String, String> sources = new HashMap<>();
    for (Map.Entry<String, Raw> e : raw.entrySet()) {
      sources.put(e.getKey(), e.getValue().source);
      Matcher m = INSTRUMENTATION.matcher(e.getKey());
      if (m.matches()) {
        try {
          instrumentations.put(m.group(1), ValueType.bool(e.getValue().value));
        } catch (ValueType.Invalid invalid) {
          problems.add(ConfigKey.PREFIX + e.getKey() + "='" + e.getValue().value + "' (" + e.getValue().source
              + "): " + invalid.getMessage());
        }
      }
    }
    return new AgentConfig(v, instrumentations, sources, problems, warnings);
  }

  /**
   * A setting whose bad value is a warning, not a problem (it changes no decision, so it must not switch the agent
   * off): its line says the default is kept.
   */
  private static void onlyWarn(ConfigKey k, List<String> problems, List<String> warnings) {
    String prefix = k.property() + "='";
    // A loop, not removeIf with a lambda: premain would spin the lambda's class on every start.
    for (java.util.Iterator<String> i = problems.iterator(); i.hasNext(); ) {
      String p = i.next();
      if (p.startsWith(prefix)) {
        warnings.add(p + "; the default " + k.defaultText() + " is kept");
        i.remove();
      }
    }
  }

  /** Sections are lock scopes: a JVM that campaigns for no lease (fencing.lease.enabled=false) cannot have them. */
  private static void sectionsNeedALease(Map<ConfigKey, Object> v, List<String> problems) {
    Object sections = v.get(ConfigKey.SECTIONS);
    if (Boolean.FALSE.equals(v.get(ConfigKey.LEASE_ENABLED)) && sections instanceof List
        && !((List<?>) sections).isEmpty()) {
      problems.add(ConfigKey.SECTIONS.property() + " is set but " + ConfigKey.LEASE_ENABLED.property()
          + "=false: a section runs in the scope of a lock this JVM campaigns for; remove one of the two");
    }
  }

  /** The set value of {@code k} if it is of the key's form, else (with one problem line) its default. */
  private static Object value(ConfigKey k, Map<String, Raw> raw, Map<ConfigKey, Object> before, List<String> problems) {
    Raw r = setValue(raw, k);
    ValueType<?> type = k.type();
    if (r == null) {
      String missing = type.whenMissing(k, before);
      if (missing != null) {
        problems.add(missing);
      }
      return type.byDefault(k.defaultText(), before);
    }
    try {
      return type.parse(r.value, before);
    } catch (ValueType.Invalid e) {
      problems.add(k.property() + "='" + r.value + "' (" + r.source + "): " + e.getMessage());
      return type.byDefault(k.defaultText(), before);
    }
  }

  /** The raw value of a key, or null when it is not set or blank (a blank value means "the default"). */
  private static Raw setValue(Map<String, Raw> raw, ConfigKey k) {
    Raw r = raw.get(k.key());
    return r == null || r.value == null || r.value.isBlank() ? null : r;
  }

  /** Keys that only make sense together. */
  private static void pairs(Map<String, Raw> raw, Map<ConfigKey, Object> v, List<String> problems) {
    if ((v.get(ConfigKey.ETCD_USER) == null) != (setValue(raw, ConfigKey.ETCD_PASSWORD_FILE) == null)) {
      problems.add(ConfigKey.ETCD_USER.property() + " and " + ConfigKey.ETCD_PASSWORD_FILE.property()
          + ": expected both or neither");
    }
    if ((setValue(raw, ConfigKey.ETCD_TLS_CERT) == null) != (setValue(raw, ConfigKey.ETCD_TLS_KEY) == null)) {
      problems.add(ConfigKey.ETCD_TLS_CERT.property() + " and " + ConfigKey.ETCD_TLS_KEY.property()
          + ": expected both or neither");
    }
    // A store may have no password (a PEM file, an unencrypted key); a password without its store is a slip.
    requires(raw, ConfigKey.ZOOKEEPER_TLS_TRUSTSTORE_PASSWORD_FILE, ConfigKey.ZOOKEEPER_TLS_TRUSTSTORE, problems);
    requires(raw, ConfigKey.ZOOKEEPER_TLS_KEYSTORE_PASSWORD_FILE, ConfigKey.ZOOKEEPER_TLS_KEYSTORE, problems);
    if (setValue(raw, ConfigKey.ZOOKEEPER_TLS_KEYSTORE) != null && setValue(raw, ConfigKey.ZOOKEEPER_TLS_TRUSTSTORE) == null) {
      problems.add(ConfigKey.ZOOKEEPER_TLS_KEYSTORE.property() + ": expected with "
          + ConfigKey.ZOOKEEPER_TLS_TRUSTSTORE.property() + " (which enables TLS)");
    }
    Object session = v.get(ConfigKey.ZOOKEEPER_SESSION_TIMEOUT);
    Object margin = v.get(ConfigKey.LEASE_SAFETY_MARGIN);
    if (session instanceof java.time.Duration && margin instanceof java.time.Duration
        && ((java.time.Duration) margin).compareTo(Durations.half((java.time.Duration) session)) >= 0) {
      problems.add(ConfigKey.ZOOKEEPER_SESSION_TIMEOUT.property() + "=" + Durations.format((java.time.Duration) session)
          + ": expected more than twice " + ConfigKey.LEASE_SAFETY_MARGIN.property() + " ("
          + Durations.format((java.time.Duration) margin) + ")");
    }
  }

  private static void requires(Map<String, Raw> raw, ConfigKey key, ConfigKey needed, List<String> problems) {
    if (setValue(raw, key) != null && setValue(raw, needed) == null) {
      problems.add(key.property() + ": expected with " + needed.property() + " (the store it opens)");
    }
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
}
