package dev.fencing.agent.config;

import dev.fencing.agent.instrumentation.api.SectionSpec;
import dev.fencing.protocol.TokenSignature;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * How the value of one configuration key is read: its parser, the form an invalid value is told to take, and its
 * default. Each {@link ConfigKey} names its type beside its documentation, so a key is defined in one place: a
 * literal default (ConfigKey's default text, e.g. {@code 5s}) is parsed by the same parser as a set value; a default
 * in parentheses ({@code (none)}, {@code (off)}) is the type's "nothing"; a default that depends on another key (the
 * safety margin on the TTL) is computed from the keys read before it.
 */
abstract class ValueType<T> {
  /** A kafka topic name (legal characters, at most 249) in which * stands for any run of characters. */
  private static final Pattern TOPIC_PATTERN = Pattern.compile("[A-Za-z0-9._*-]{1,249}");
  /** An HTTP method is an RFC 9110 token; "POST PUT" (a blank instead of a comma) would silently match nothing. */
  private static final Pattern METHOD = Pattern.compile("[A-Za-z0-9!#$%&'*+.^_`|~-]+");
  /** ASCII digits only: Integer/Long.parseLong also take a sign and other scripts' digits. */
  private static final Pattern DIGITS = Pattern.compile("[0-9]+");
  private static final Pattern LOCK_NAME = Pattern.compile("[A-Za-z0-9._-]{1,128}");
  /** No setting needs more; longer values would also overflow the nanosecond clock arithmetic. */
  private static final Duration MAX_DURATION = Duration.ofDays(1);

  /** A value that is not of the key's form; the message follows "key='value' (source): ". */
  static final class Invalid extends Exception {
    Invalid(String message) {
      super(message, null, false, false);
    }

    static Invalid expected(String form) {
      return new Invalid("expected " + form);
    }
  }

  /** The value of a set key (never blank). */
  abstract T parse(String value, Map<ConfigKey, Object> before) throws Invalid;

  /**
   * A type whose parse needs no other key; {@code none} is its value for a default written in parentheses. The types
   * are subclasses rather than lambdas: premain reads every key, and each lambda would spin a class at its first use
   * (a fraction of a millisecond each, on the application's start).
   */
  private abstract static class Simple<T> extends ValueType<T> {
    private final T none;

    Simple(T none) {
      this.none = none;
    }

    abstract T parse(String value) throws Invalid;

    @Override
    final T parse(String value, Map<ConfigKey, Object> before) throws Invalid {
      return parse(value);
    }

    @Override
    T none() {
      return none;
    }
  }

  /** The value when nothing is set, and when a set value was invalid. */
  T byDefault(String defaultText, Map<ConfigKey, Object> before) {
    if (defaultText.startsWith("(")) {
      return none();
    }
    try {
      return parse(defaultText, before);
    } catch (Invalid e) {
      throw new IllegalStateException("the default '" + defaultText + "' is not of its own type: " + e.getMessage());
    }
  }

  /** The default written in parentheses: no value. */
  T none() {
    return null;
  }

  /** A problem when the key is not set but must be (null: fine). */
  String whenMissing(ConfigKey key, Map<ConfigKey, Object> before) {
    return null;
  }

  // ---- the types ----

  static ValueType<String> text() {
    return new Simple<>(null) {
      @Override
      String parse(String value) {
        return value.trim();
      }
    };
  }

  /** Free text whose default is computed where it is used (the holder id: not in premain). */
  static ValueType<String> textComputedLater() {
    return new ValueType<>() {
      @Override
      String parse(String value, Map<ConfigKey, Object> before) {
        return value.trim();
      }

      @Override
      String byDefault(String defaultText, Map<ConfigKey, Object> before) {
        return null;
      }
    };
  }

  static ValueType<Boolean> flag() {
    return new Simple<>(null) {
      @Override
      Boolean parse(String value) throws Invalid {
        return bool(value);
      }
    };
  }

  static Boolean bool(String value) throws Invalid {
    String s = value == null ? "" : value.trim();
    if ("true".equalsIgnoreCase(s) || "false".equalsIgnoreCase(s)) {
      return Boolean.valueOf(s);
    }
    throw Invalid.expected("true or false");
  }

  /** The lock name; required unless fencing.lease.enabled=false (read before it). */
  static ValueType<String> lock() {
    return new ValueType<>() {
      @Override
      String parse(String value, Map<ConfigKey, Object> before) throws Invalid {
        String lock = value.trim();
        if (!LOCK_NAME.matcher(lock).matches()) {
          throw Invalid.expected("1 to 128 letters, digits, '.', '_' or '-'");
        }
        return lock;
      }

      @Override
      String whenMissing(ConfigKey key, Map<ConfigKey, Object> before) {
        if (Boolean.FALSE.equals(before.get(ConfigKey.LEASE_ENABLED))) {
          return null;
        }
        Object sections = before.get(ConfigKey.SECTIONS);
        if (sections instanceof List && !((List<?>) sections).isEmpty()) {
          return null; // sections only: no JVM-wide lock
        }
        return key.property() + " is not set: expected the lock name, e.g. -Dfencing.lock=ledger or "
            + "-javaagent:fencing-agent.jar=lock=ledger (or declared sections, fencing.sections)";
      }
    };
  }

  /**
   * The forms of a section's names, compiled when a section is declared: their character classes spin the JDK's
   * predicate lambdas, which premain need not pay for without sections.
   */
  private static final class SectionNames {
    /** A Java binary class name: dot-separated identifiers ($ for nested classes). */
    static final Pattern CLASS_NAME = Pattern.compile(
        "\\p{javaJavaIdentifierStart}\\p{javaJavaIdentifierPart}*(\\.\\p{javaJavaIdentifierStart}\\p{javaJavaIdentifierPart}*)*");
    static final Pattern METHOD_NAME = Pattern.compile("\\p{javaJavaIdentifierStart}\\p{javaJavaIdentifierPart}*");
  }

  static final String SECTIONS_FORM = "<fully.qualified.Class>#<method>@<lock> entries separated by commas, e.g. "
      + "com.acme.Reports#nightly@reports,com.acme.Ledger#settle@ledger";

  /**
   * fencing.sections: each entry {@code <class>#<method>@<lock>}; an entry that is not of that form, or a method
   * declared twice (with two locks), invalidates the key, naming the entry.
   */
  static ValueType<List<SectionSpec>> sections() {
    return new Simple<>(List.of()) {
      @Override
      List<SectionSpec> parse(String value) throws Invalid {
        List<SectionSpec> out = new ArrayList<>();
        java.util.Map<String, SectionSpec> seen = new java.util.HashMap<>();
        for (String s : value.split(",")) {
          if (s.isBlank()) {
            continue;
          }
          String e = s.trim();
          int hash = e.indexOf('#');
          int at = e.lastIndexOf('@');
          if (hash <= 0 || at < hash + 2 || at == e.length() - 1) {
            throw Invalid.expected(SECTIONS_FORM + " ('" + e + "' is not one)");
          }
          String cls = e.substring(0, hash);
          String method = e.substring(hash + 1, at);
          String lock = e.substring(at + 1);
          if (!SectionNames.CLASS_NAME.matcher(cls).matches()) {
            throw Invalid.expected(SECTIONS_FORM + " ('" + e + "': '" + cls + "' is not a fully qualified class name)");
          }
          if (!SectionNames.METHOD_NAME.matcher(method).matches()) {
            throw Invalid.expected(SECTIONS_FORM + " ('" + e + "': '" + method + "' is not a method name)");
          }
          if (!LOCK_NAME.matcher(lock).matches()) {
            throw Invalid.expected(SECTIONS_FORM + " ('" + e + "': the lock '" + lock
                + "' is not 1 to 128 letters, digits, '.', '_' or '-')");
          }
          SectionSpec spec = new SectionSpec(cls, method, lock);
          SectionSpec before = seen.putIfAbsent(spec.origin(), spec);
          if (before != null) {
            if (before.lock().equals(lock)) {
              continue; // the same entry twice: harmless
            }
            throw Invalid.expected(SECTIONS_FORM + " ('" + e + "': " + cls + "#" + method
                + " is already a section of lock '" + before.lock() + "'; a method belongs to one lock)");
          }
          out.add(spec);
        }
        return List.copyOf(out);
      }
    };
  }

  /** fencing.quartz.jobs: an entry not of the form invalidates the key, naming the entry. */
  static ValueType<QuartzJobRules> quartzJobs() {
    return new Simple<>(QuartzJobRules.NONE) {
      @Override
      QuartzJobRules parse(String value) throws Invalid {
        try {
          return QuartzJobRules.parse(value);
        } catch (IllegalArgumentException e) {
          throw new Invalid(e.getMessage());
        }
      }
    };
  }

  static ValueType<List<URI>> endpoints() {
    return new Simple<>(null) {
      @Override
      List<URI> parse(String value) throws Invalid {
        List<URI> out = new ArrayList<>();
        for (String s : value.split("[,;]")) {
          String e = s.trim();
          if (e.isEmpty()) {
            continue;
          }
          try {
            URI u = URI.create(e.contains("://") ? e : "http://" + e);
            if (!("http".equals(u.getScheme()) || "https".equals(u.getScheme())) || u.getHost() == null
                || u.getPort() <= 0 || u.getPort() > 65535) {
              throw new IllegalArgumentException();
            }
            out.add(u);
          } catch (IllegalArgumentException ex) {
            throw Invalid.expected("URLs like http://etcd-1:2379 separated by commas ('" + e + "' is not one)");
          }
        }
        if (out.isEmpty()) {
          throw Invalid.expected("at least one URL like http://etcd-1:2379");
        }
        return out;
      }
    };
  }

  /** Comma- (or semicolon-) separated entries, blanks dropped; each entry checked by {@code entry} when given. */
  static ValueType<List<String>> list() {
    return list(null, null, false);
  }

  static ValueType<List<String>> list(Pattern entry, String form, boolean upperCase) {
    return new Simple<>(List.of()) {
      @Override
      List<String> parse(String value) throws Invalid {
        List<String> out = new ArrayList<>();
        for (String s : value.split("[,;]")) {
          if (s.isBlank()) {
            continue;
          }
          String e = s.trim();
          if (entry != null && !entry.matcher(e).matches()) {
            throw Invalid.expected(form + " ('" + e + "' is not one)");
          }
          out.add(upperCase ? e.toUpperCase(Locale.ROOT) : e);
        }
        return List.copyOf(out);
      }
    };
  }

  /** Topic names and globs; an invalid entry invalidates the list (no topic fenced: sends block after expiry). */
  static ValueType<List<String>> topics() {
    return list(TOPIC_PATTERN, "Kafka topic names or globs separated by commas: letters, digits, '.', '_', '-', and"
        + " * for any run of characters", false);
  }

  /** host, host:port or *.suffix (with an optional :port); a bare * would exempt every destination. */
  private static final Pattern EXEMPT_HOST =
      Pattern.compile("(\\*\\.)?[A-Za-z0-9._-]*[A-Za-z0-9_-](:[0-9]{1,5})?|\\[[0-9A-Fa-f:.]+\\](:[0-9]{1,5})?");
  /** A Java package or class name prefix, e.g. org.flywaydb. */
  private static final Pattern CALLER_PREFIX = Pattern.compile("[A-Za-z_$][A-Za-z0-9_$]*(\\.[A-Za-z_$][A-Za-z0-9_$]*)*\\.?");

  /** fencing.exempt.http entries; an invalid entry invalidates the list (nothing exempt). */
  static ValueType<List<String>> exemptHosts() {
    return list(EXEMPT_HOST, "host, host:port or *.suffix entries separated by commas, e.g. metrics.internal:8080,"
        + "*.telemetry.svc", false);
  }

  /** fencing.exempt.callers: package prefixes, or the single word none (no caller exempt). */
  static ValueType<List<String>> callerPrefixes() {
    ValueType<List<String>> entries = list(CALLER_PREFIX, "Java package prefixes separated by commas, e.g. "
        + "org.flywaydb.,liquibase. (or none)", false);
    return new Simple<>(List.of()) {
      @Override
      List<String> parse(String value) throws Invalid {
        return value.trim().equalsIgnoreCase("none") ? List.of() : entries.parse(value, Map.of());
      }
    };
  }

  /** HTTP methods, upper case; an entry that is not an RFC 9110 token invalidates the list (default used). */
  static ValueType<List<String>> methods() {
    return list(METHOD, "HTTP method names separated by commas, e.g. POST,PUT", true);
  }

  static ValueType<Path> path() {
    return new Simple<>(null) {
      @Override
      Path parse(String value) throws Invalid {
        return pathOf(value, "a file system path");
      }
    };
  }

  /** A file that must exist and be readable when the configuration is read. */
  static ValueType<Path> readableFile() {
    return new Simple<>(null) {
      @Override
      Path parse(String value) throws Invalid {
        Path p = pathOf(value, "a readable file");
        if (Files.isDirectory(p)) {
          throw Invalid.expected("a readable file (this is a directory)");
        }
        if (!Files.isReadable(p)) {
          throw Invalid.expected("a readable file (not found or not readable)");
        }
        return p;
      }
    };
  }

  /** {@code value} as a path; a string no path can be made of is not {@code expected}, for the reason the JDK gives. */
  private static Path pathOf(String value, String expected) throws Invalid {
    try {
      return Paths.get(value.trim());
    } catch (InvalidPathException e) {
      throw Invalid.expected(expected + " (" + e.getReason() + ")");
    }
  }

  /** The signing key read from its file (a small read, in premain: the key must be there before any side effect). */
  static ValueType<TokenSignature> signingKey() {
    return new Simple<>(null) {
      @Override
      TokenSignature parse(String value) throws Invalid {
        Path path = pathOf(value, TokenSignature.EXPECTED_FORM);
        try {
          return TokenSignature.load(path);
        } catch (IllegalArgumentException e) {
          throw new Invalid(e.getMessage());
        }
      }
    };
  }

  static ValueType<Duration> duration(Duration min) {
    return new Simple<>(null) {
      @Override
      Duration parse(String value) throws Invalid {
        return checkedDuration(value, min);
      }
    };
  }

  private static Duration checkedDuration(String value, Duration min) throws Invalid {
    Duration d;
    try {
      d = Durations.parse(value);
    } catch (IllegalArgumentException e) {
      throw Invalid.expected("a duration such as 10s, 500ms, 2m or 1h");
    }
    if (d.compareTo(min) < 0) {
      throw Invalid.expected("a duration of at least " + Durations.format(min));
    }
    if (d.compareTo(MAX_DURATION) > 0) {
      throw Invalid.expected("a duration of at most " + Durations.format(MAX_DURATION));
    }
    return d;
  }

  /**
   * The lease TTL. etcd grants leases in whole seconds: a TTL of 2999ms would be granted as 2 s while renewals were
   * planned for 2.999 s, and the lease would flap. Anything but whole seconds is refused.
   */
  static ValueType<Duration> ttl() {
    return new Simple<>(null) {
      @Override
      Duration parse(String value) throws Invalid {
        Duration ttl = checkedDuration(value, Duration.ofSeconds(2));
        if (ttl.toNanos() % 1_000_000_000L != 0) {
          throw Invalid.expected("a whole number of seconds (etcd grants leases in seconds), such as 3s or 10s");
        }
        return ttl;
      }
    };
  }

  /** The safety margin: below half the TTL (read before it); by default 1 s, or a quarter of a TTL under 4 s. */
  static ValueType<Duration> margin() {
    return new ValueType<>() {
      @Override
      Duration parse(String value, Map<ConfigKey, Object> before) throws Invalid {
        Duration ttl = (Duration) before.get(ConfigKey.LEASE_TTL);
        Duration m = checkedDuration(value, Duration.ZERO);
        if (m.compareTo(Durations.half(ttl)) >= 0) {
          throw Invalid.expected("a duration below half of fencing.lease.ttl (" + Durations.format(ttl) + ")");
        }
        return m;
      }

      @Override
      Duration byDefault(String defaultText, Map<ConfigKey, Object> before) {
        Duration half = Durations.half((Duration) before.get(ConfigKey.LEASE_TTL));
        return Duration.ofSeconds(1).compareTo(half) < 0 ? Duration.ofSeconds(1) : Durations.half(half);
      }
    };
  }

  /** The ZooKeeper session timeout: at least 2 s (ZooKeeper's own floor is two server ticks), by default the lease TTL. */
  static ValueType<Duration> sessionTimeout() {
    return new ValueType<>() {
      @Override
      Duration parse(String value, Map<ConfigKey, Object> before) throws Invalid {
        return checkedDuration(value, Duration.ofSeconds(2));
      }

      @Override
      Duration byDefault(String defaultText, Map<ConfigKey, Object> before) {
        return (Duration) before.get(ConfigKey.LEASE_TTL);
      }
    };
  }

  /** An absolute ZooKeeper path: starts with '/', no empty segment, no trailing '/', no '.' or '..' segment. */
  static ValueType<String> zkPath() {
    return new Simple<>(null) {
      @Override
      String parse(String value) throws Invalid {
        String v = value.trim();
        if (!v.startsWith("/") || v.length() < 2 || v.endsWith("/") || v.contains("//") || v.contains("/./")
            || v.contains("/../") || v.endsWith("/.") || v.endsWith("/..")) {
          throw Invalid.expected("an absolute ZooKeeper path such as /fencing/locks (no trailing '/', no empty, '.' or"
              + " '..' segment)");
        }
        return v;
      }
    };
  }

  /** A duration (at least 0) whose default is the lease TTL (read before it). */
  static ValueType<Duration> durationDefaultingToTtl() {
    return new ValueType<>() {
      @Override
      Duration parse(String value, Map<ConfigKey, Object> before) throws Invalid {
        return checkedDuration(value, Duration.ZERO);
      }

      @Override
      Duration byDefault(String defaultText, Map<ConfigKey, Object> before) {
        return (Duration) before.get(ConfigKey.LEASE_TTL);
      }
    };
  }

  /** One of an enum's constants, by name ignoring case; the expected form is the key's documented form. */
  static <E extends Enum<E>> ValueType<E> choice(Class<E> type) {
    return new Simple<>(null) {
      @Override
      E parse(String value) throws Invalid {
        for (E e : type.getEnumConstants()) {
          if (e.name().equalsIgnoreCase(value.trim())) {
            return e;
          }
        }
        StringBuilder names = new StringBuilder();
        for (E e : type.getEnumConstants()) {
          names.append(names.length() == 0 ? "" : ", ").append(e.name().toLowerCase(Locale.ROOT));
        }
        throw Invalid.expected("one of " + names);
      }
    };
  }

  /** One of fixed lower-case words (the log level). */
  static ValueType<String> word(String... words) {
    return new Simple<>(null) {
      @Override
      String parse(String value) throws Invalid {
        String w = value.trim().toLowerCase(Locale.ROOT);
        if (List.of(words).contains(w)) {
          return w;
        }
        throw Invalid.expected("one of " + String.join(", ", words));
      }
    };
  }

  static ValueType<Long> tokenMax() {
    return new Simple<>(null) {
      @Override
      Long parse(String value) throws Invalid {
        long max = integer(value.trim().replace("_", ""), 1, Long.MAX_VALUE);
        if (max < 0) {
          throw Invalid.expected("an integer from 1 to 9223372036854775807");
        }
        return max;
      }
    };
  }

  /** A whole number from {@code min} to {@code max}. */
  static ValueType<Integer> count(int min, int max) {
    return new Simple<>(null) {
      @Override
      Integer parse(String value) throws Invalid {
        long n = integer(value.trim(), min, max);
        if (n < 0) {
          throw Invalid.expected("an integer from " + min + " to " + max);
        }
        return (int) n;
      }
    };
  }

  /** A TCP port, 0 for any free one; {@code off} (the default) for none. */
  static ValueType<Integer> port() {
    return new Simple<>(null) {
      @Override
      Integer parse(String value) throws Invalid {
        if ("off".equalsIgnoreCase(value.trim())) {
          return null;
        }
        long port = integer(value.trim(), 0, 65535);
        if (port < 0) {
          throw Invalid.expected("a port from 0 to 65535, or off");
        }
        return (int) port;
      }
    };
  }

  /** ASCII digits from {@code min} to {@code max}, or -1. */
  private static long integer(String digits, long min, long max) {
    if (!DIGITS.matcher(digits).matches()) {
      return -1;
    }
    try {
      long n = Long.parseLong(digits);
      return n >= min && n <= max ? n : -1;
    } catch (NumberFormatException e) {
      return -1; // above 2^63-1
    }
  }

  static ValueType<URI> httpUrl() {
    return new Simple<>(null) {
      @Override
      URI parse(String value) throws Invalid {
        try {
          URI u = new URI(value.trim());
          if (("http".equals(u.getScheme()) || "https".equals(u.getScheme())) && u.getHost() != null
              && u.getPort() <= 65535) {
            return u;
          }
        } catch (java.net.URISyntaxException e) {
          // reported below
        }
        throw Invalid.expected("an http or https URL such as http://collector:4318");
      }
    };
  }

  static ValueType<Map<String, String>> nameValues() {
    return new Simple<>(Map.of()) {
      @Override
      Map<String, String> parse(String value) throws Invalid {
        try {
          return NameValueList.parse(value);
        } catch (IllegalArgumentException e) {
          throw Invalid.expected("name=value pairs separated by commas, values percent-encoded (" + e.getMessage()
              + ")");
        }
      }
    };
  }
}
