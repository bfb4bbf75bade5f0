package dev.fencing.agent.config;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code name=value,name2=value2} with percent-encoded values: the form of {@code OTEL_EXPORTER_OTLP_HEADERS} and
 * {@code OTEL_RESOURCE_ATTRIBUTES}, used for fencing.otlp.headers too so one value works in both places.
 */
public final class NameValueList {
  private NameValueList() {}

  /** Throws IllegalArgumentException naming the first malformed entry. */
  public static Map<String, String> parse(String text) {
    Map<String, String> out = new LinkedHashMap<>();
    if (text == null) {
      return out;
    }
    for (String entry : text.split(",")) {
      if (entry.isBlank()) {
        continue;
      }
      int eq = entry.indexOf('=');
      String name = eq < 0 ? "" : entry.substring(0, eq).trim();
      if (name.isEmpty()) {
        throw new IllegalArgumentException("'" + entry.trim() + "' is not name=value");
      }
      try {
        // Percent-decoding only: a '+' is a plus sign here, not a space as in form encoding.
        out.put(name, URLDecoder.decode(entry.substring(eq + 1).trim().replace("+", "%2B"), StandardCharsets.UTF_8));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("the value of '" + name + "' is not percent-encoded");
      }
    }
    return Collections.unmodifiableMap(out);
  }
}
