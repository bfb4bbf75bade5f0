package dev.fencing.agent.log;

import java.io.PrintStream;

/**
 * The agent's own log: one line per message on standard error, prefixed {@code [fencing-agent]}. Deliberately not a
 * logging framework: the agent must not initialise java.util.logging, log4j or logback in someone else's JVM.
 */
public final class AgentLog {
  public enum Level { ERROR, WARN, INFO, DEBUG, TRACE }

  private static volatile Level threshold = Level.INFO;
  private static volatile PrintStream out = System.err;

  private final String name;

  private AgentLog(String name) {
    this.name = name;
  }

  public static AgentLog get(Class<?> type) {
    return new AgentLog(type.getSimpleName());
  }

  public static void setLevel(String level) {
    threshold = Level.valueOf(level.toUpperCase(java.util.Locale.ROOT));
  }

  public static boolean enabled(Level level) {
    return level.ordinal() <= threshold.ordinal();
  }

  public void error(String msg) {
    log(Level.ERROR, msg, null);
  }

  public void error(String msg, Throwable t) {
    log(Level.ERROR, msg, t);
  }

  public void warn(String msg) {
    log(Level.WARN, msg, null);
  }

  public void warn(String msg, Throwable t) {
    log(Level.WARN, msg, t);
  }

  public void info(String msg) {
    log(Level.INFO, msg, null);
  }

  public void debug(String msg) {
    log(Level.DEBUG, msg, null);
  }

  /** Bundled libraries' own debug output: only at fencing.log.level=trace. */
  public void trace(String msg) {
    log(Level.TRACE, msg, null);
  }

  public boolean debugEnabled() {
    return enabled(Level.DEBUG);
  }

  private void log(Level level, String msg, Throwable t) {
    if (!enabled(level)) {
      return;
    }
    String line = "[fencing-agent] " + level + (threshold.ordinal() >= Level.DEBUG.ordinal() ? " " + name + ":" : "") + " " + msg + (t == null ? "" : ": " + describe(t));
    out.println(line);
    if (t != null && enabled(Level.DEBUG)) {
      t.printStackTrace(out);
    }
  }

  /** A throwable in one line: its innermost cause usually says what happened. */
  public static String describe(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String msg = root.getMessage();
    return root.getClass().getSimpleName() + (msg == null ? "" : " " + msg);
  }
}
