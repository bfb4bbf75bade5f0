package dev.fencing.agent.outbox;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.ConfigKey;
import dev.fencing.agent.config.Durations;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.regex.Pattern;

/**
 * The fencing.outbox.* settings, checked: each problem is one line naming the key, the value, where it came from and
 * what is expected. The agent reads them as text, so that a bad one stops only the relay, never the agent.
 */
final class RelaySettings {
  private static final Pattern TABLE = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)?");
  private static final Pattern BOOTSTRAP = Pattern.compile("[^,\\s]+:\\d{1,5}(,[^,\\s]+:\\d{1,5})*");

  /** fencing.outbox.enabled is true (the other settings are checked only then). */
  final boolean enabled;
  final List<String> tables = new ArrayList<>();
  final Properties credentials = new Properties();
  final List<String> problems = new ArrayList<>();
  String jdbcUrl;
  String kafkaBootstrap;
  Duration pollInterval;
  Integer maxAttempts;

  private final AgentConfig config;

  RelaySettings(AgentConfig config) {
    this.config = config;
    String enabledText = value(ConfigKey.OUTBOX_ENABLED);
    boolean on = false;
    if (enabledText != null) {
      String e = enabledText.toLowerCase(Locale.ROOT);
      if (e.equals("true") || e.equals("false")) {
        on = e.equals("true");
      } else {
        problem(ConfigKey.OUTBOX_ENABLED, "expected true or false");
      }
    }
    enabled = on;
    if (on) {
      readRelay();
    }
  }

  private void readRelay() {
    String tableList = value(ConfigKey.OUTBOX_TABLE);
    for (String t : (tableList == null ? "" : tableList).split(",")) {
      String table = t.trim();
      if (!TABLE.matcher(table).matches()) {
        problem(ConfigKey.OUTBOX_TABLE, "expected comma-separated [schema.]table names (letters, digits, _), got '"
            + table + "'");
      } else if (!tables.contains(table)) {
        tables.add(table);
      }
    }
    jdbcUrl = value(ConfigKey.OUTBOX_JDBC_URL);
    if (jdbcUrl == null || !jdbcUrl.startsWith("jdbc:")) {
      problem(ConfigKey.OUTBOX_JDBC_URL, "expected the outbox's JDBC URL (jdbc:...)");
    }
    String user = value(ConfigKey.OUTBOX_USER);
    if (user != null) {
      credentials.setProperty("user", user);
    }
    String passwordFile = value(ConfigKey.OUTBOX_PASSWORD_FILE);
    if (passwordFile != null) {
      if (user == null) {
        problem(ConfigKey.OUTBOX_PASSWORD_FILE, "needs " + ConfigKey.OUTBOX_USER.property());
      }
      try {
        credentials.setProperty("password", Files.readAllLines(Path.of(passwordFile), StandardCharsets.UTF_8)
            .stream().findFirst().orElse(""));
      } catch (IOException | InvalidPathException e) {
        problem(ConfigKey.OUTBOX_PASSWORD_FILE, "expected a readable file whose first line is the password");
      }
    }
    kafkaBootstrap = value(ConfigKey.OUTBOX_KAFKA_BOOTSTRAP);
    if (kafkaBootstrap != null && !BOOTSTRAP.matcher(kafkaBootstrap).matches()) {
      problem(ConfigKey.OUTBOX_KAFKA_BOOTSTRAP, "expected HOST:PORT[,HOST:PORT...]");
    }
    pollInterval = duration(ConfigKey.OUTBOX_POLL_INTERVAL);
    maxAttempts = count(ConfigKey.OUTBOX_MAX_ATTEMPTS);
  }

  private String value(ConfigKey key) {
    String v = config.outboxSetting(key);
    return v == null || v.isBlank() ? null : v.trim();
  }

  private void problem(ConfigKey key, String expected) {
    String v = config.outboxSetting(key);
    problems.add(key.property() + "=" + (v == null ? "(not set)" : "'" + v + "'") + " (" + config.sourceOf(key)
        + "): " + expected);
  }

  private Duration duration(ConfigKey key) {
    String v = value(key);
    if (v == null) {
      return null;
    }
    try {
      Duration d = Durations.parse(v);
      if (!d.isZero()) {
        return d;
      }
    } catch (IllegalArgumentException e) {
      // reported below
    }
    problem(key, "expected a positive duration such as 500ms, 10s or 5m");
    return null;
  }

  private Integer count(ConfigKey key) {
    String v = value(key);
    if (v == null) {
      return null;
    }
    try {
      int n = Integer.parseInt(v);
      if (n >= 1) {
        return n;
      }
    } catch (NumberFormatException e) {
      // below
    }
    problem(key, "expected a whole number of 1 or more");
    return null;
  }
}
