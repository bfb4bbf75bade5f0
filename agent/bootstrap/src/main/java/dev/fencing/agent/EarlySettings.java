package dev.fencing.agent;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * The few settings premain needs before the core loads (whether to start at all, the log level of that decision,
 * fail-mode when the core cannot load), read from the core's four sources with the core's precedence: agent
 * arguments, {@code fencing.*} system properties, {@code FENCING_*} environment variables, the file named by
 * {@code fencing.config.file}. Never throws and never reports a malformed value: the core reads every key again and
 * reports it, with the same source, once it starts.
 */
final class EarlySettings {
  static final String ENABLED = "enabled";
  static final String JDK_TOOLS_ENABLED = "jdk-tools.enabled";
  static final String LOG_LEVEL = "log.level";
  static final String FAIL_MODE = "fail-mode";
  private static final String CONFIG_FILE = "config.file";
  private static final String PREFIX = "fencing.";

  /** A raw value and where it came from, in the words of the core's messages. */
  static final class Setting {
    final String value;
    final String source;

    Setting(String value, String source) {
      this.value = value;
      this.source = source;
    }
  }

  private final String args;
  private final Properties properties;
  private final Map<String, String> env;
  private Properties file;
  private String filePath;

  EarlySettings(String args, Properties properties, Map<String, String> env) {
    this.args = args;
    this.properties = properties;
    this.env = env;
  }

  static EarlySettings ofThisJvm(String args) {
    return new EarlySettings(args, System.getProperties(), System.getenv());
  }

  /** The value of {@code key} (without the fencing. prefix) from its highest source, or null. */
  Setting get(String key) {
    Setting s = highest(key);
    if (s != null) {
      return s;
    }
    Properties f = file();
    if (f == null) {
      return null;
    }
    String value = f.getProperty(PREFIX + key);
    if (value != null) {
      return new Setting(value.trim(), "file " + filePath + " key " + PREFIX + key);
    }
    value = f.getProperty(key);
    return value == null ? null : new Setting(value.trim(), "file " + filePath + " key " + key);
  }

  /** True when {@code key}'s value is {@code false} (any case): a malformed value is the core's to report. */
  boolean isFalse(String key) {
    Setting s = get(key);
    return s != null && "false".equalsIgnoreCase(s.value);
  }

  boolean isTrue(String key) {
    Setting s = get(key);
    return s != null && "true".equalsIgnoreCase(s.value);
  }

  /** The first three sources, without the file. */
  private Setting highest(String key) {
    if (args != null && !args.isBlank()) {
      for (String part : args.split(",")) {
        int eq = part.indexOf('=');
        if (eq < 0) {
          continue; // the continuation of a list value
        }
        String k = part.substring(0, eq).trim();
        if (k.startsWith(PREFIX)) {
          k = k.substring(PREFIX.length());
        }
        if (k.equals(key)) {
          return new Setting(part.substring(eq + 1).trim(), "agent argument " + k);
        }
      }
    }
    String value = properties.getProperty(PREFIX + key);
    if (value != null) {
      return new Setting(value.trim(), "system property " + PREFIX + key);
    }
    String var = "FENCING_" + key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
    value = env.get(var);
    return value == null ? null : new Setting(value.trim(), "environment variable " + var);
  }

  /** The properties file, read once when a key is in none of the other sources; null when none or unreadable. */
  private Properties file() {
    if (file != null || filePath != null) {
      return file;
    }
    Setting path = highest(CONFIG_FILE);
    if (path == null || path.value.isEmpty()) {
      filePath = "";
      return null;
    }
    filePath = path.value;
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(Paths.get(filePath), StandardCharsets.UTF_8)) {
      p.load(r);
      file = p;
    } catch (IOException | RuntimeException e) {
      // the core reports an unreadable file
    }
    return file;
  }
}
