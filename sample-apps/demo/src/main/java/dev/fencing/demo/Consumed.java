package dev.fencing.demo;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** An event the audit consumer's code received ({@code CONSUMED <epoch ms> <key> <json>}): it passed the fence. */
record Consumed(long at, String worker, long transfer) {
  private static final Pattern LINE = Pattern.compile(
      "^CONSUMED (\\d+) \\S+ \\{\"worker\":\"([^\"]+)\",\"transfer\":(\\d+),", Pattern.MULTILINE);
  private static final Pattern POSITION = Pattern.compile("^POSITION \\S+ (\\d+)$", Pattern.MULTILINE);

  static List<Consumed> parse(String log) {
    List<Consumed> events = new ArrayList<>();
    Matcher m = LINE.matcher(log);
    while (m.find()) {
      events.add(new Consumed(Long.parseLong(m.group(1)), m.group(2), Long.parseLong(m.group(3))));
    }
    return events;
  }

  /** The consumer's last reported position (dropped records advance it too), or -1. */
  static long lastPosition(String log) {
    long position = -1;
    Matcher m = POSITION.matcher(log);
    while (m.find()) {
      position = Long.parseLong(m.group(1));
    }
    return position;
  }
}
