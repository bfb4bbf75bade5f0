package dev.fencing.sample.audit;

import java.util.HashMap;
import java.util.Map;

/** The app's {@code key=value} arguments. */
final class Settings {
  private final Map<String, String> values;

  private Settings(Map<String, String> values) {
    this.values = values;
  }

  static Settings parse(String[] args) {
    Map<String, String> values = new HashMap<>();
    for (String arg : args) {
      int eq = arg.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("expected key=value, got '" + arg + "'");
      }
      values.put(arg.substring(0, eq), arg.substring(eq + 1));
    }
    return new Settings(values);
  }

  String get(String key) {
    String value = values.get(key);
    if (value == null) {
      throw new IllegalArgumentException("missing argument " + key + "=...");
    }
    return value;
  }

  String get(String key, String defaultValue) {
    return values.getOrDefault(key, defaultValue);
  }
}
