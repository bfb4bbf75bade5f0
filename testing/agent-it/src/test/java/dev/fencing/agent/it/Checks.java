package dev.fencing.agent.it;

import dev.fencing.testing.Http;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads of a test's database and waits on it, and on a section lock's state in an agent's /status. */
public final class Checks {
  private Checks() {}

  public static long count(Connection c, String sql) throws Exception {
    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  public static List<String> strings(Connection c, String sql) throws Exception {
    List<String> out = new ArrayList<>();
    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
  }

  public static void awaitCount(Connection c, String sql, long atLeast, Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    long n = 0;
    while (System.nanoTime() < deadline) {
      n = count(c, sql);
      if (n >= atLeast) {
        return;
      }
      Thread.sleep(100);
    }
    throw new AssertionError(sql + " = " + n + ", expected at least " + atLeast + " within " + timeout);
  }

  /** Waits until /status shows section lock {@code lock} in {@code state}; returns its token (0 when it has none). */
  public static long awaitLock(int port, String lock, String state, Duration timeout) {
    String prefix = "\"lock\":\"" + lock + "\",\"scope\":\"sections\",\"state\":\"" + state + "\"";
    String body = Http.awaitStatus(port, prefix, timeout);
    Matcher m = Pattern.compile(Pattern.quote(prefix) + ",\"token\":(\\d+)").matcher(body);
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }
}
