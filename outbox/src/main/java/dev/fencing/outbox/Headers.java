package dev.fencing.outbox;

import java.util.ArrayList;
import java.util.List;

/** The headers column: one {@code Name: value} per line; blank lines are skipped. */
final class Headers {
  private Headers() {}

  /** Name and value pairs, in order. @throws IllegalArgumentException naming the line that is no header */
  static List<String[]> parse(String column) {
    List<String[]> headers = new ArrayList<>();
    if (column == null) {
      return headers;
    }
    for (String line : column.split("\r?\n")) {
      if (line.isBlank()) {
        continue;
      }
      int colon = line.indexOf(':');
      String name = colon <= 0 ? "" : line.substring(0, colon).trim();
      if (name.isEmpty() || !name.chars().allMatch(Headers::tokenChar)) {
        throw new IllegalArgumentException("header line '" + line + "' is not 'Name: value'");
      }
      headers.add(new String[] {name, line.substring(colon + 1).trim()});
    }
    return headers;
  }

  /** A header name's characters (RFC 9110 token). */
  private static boolean tokenChar(int c) {
    return c > 32 && c < 127 && "\"(),/:;<=>?@[\\]{}".indexOf(c) < 0;
  }

  /** The column's text for these name/value pairs. */
  static String format(List<String[]> headers) {
    StringBuilder b = new StringBuilder();
    for (String[] h : headers) {
      b.append(b.length() == 0 ? "" : "\n").append(h[0]).append(": ").append(h[1]);
    }
    return b.toString();
  }
}
