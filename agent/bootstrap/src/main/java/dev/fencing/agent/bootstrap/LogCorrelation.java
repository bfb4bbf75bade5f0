package dev.fencing.agent.bootstrap;

import java.util.Collections;
import java.util.HashMap;
import java.util.Map;

/**
 * Log correlation: the lock, token and grant id a log event carries in its context data (Logback's MDC property map,
 * Log4j 2's context data), so that the logs tell which holder did what. An event gets them when it is created on a
 * thread whose side effects would carry a token at that moment ({@link Fencing#current()}: a section's or a captured
 * lock's scope, an adopted inbound token, otherwise the JVM-wide lock while this JVM holds it), and nothing otherwise.
 * The application's own MDC or ThreadContext is never written: the keys live in the event alone. java.base types only.
 */
public final class LogCorrelation {
  /** The lock's name. */
  public static final String LOCK_KEY = "fencing.lock";
  /** The token, in decimal. */
  public static final String TOKEN_KEY = "fencing.token";
  /** The grant id carried beside the token (absent when the token has none, as an adopted inbound token may). */
  public static final String GRANT_KEY = "fencing.grant";

  /** The last map {@link #withKeys} built on this thread, with what it was built from: {base, decision, result}. */
  private static final ThreadLocal<Object[]> LAST = ThreadLocal.withInitial(() -> new Object[3]);

  private LogCorrelation() {}

  /**
   * The decision whose lock, token and grant an event created now on this thread carries: a TAG with a token, or
   * null (no token current, the agent not started, the agent's own threads). Never throws; allocates nothing.
   */
  public static Decision current() {
    try {
      Decision d = Fencing.current();
      return d != null && d.isTag() && d.tokenText() != null ? d : null;
    } catch (Throwable ignored) {
      return null; // a log line never fails for the agent
    }
  }

  /**
   * {@code base} (an event's context map, null for none) with the three keys of {@code d} added, as a new unmodifiable
   * map; {@code base} itself is never changed. The same map as last time on this thread when neither changed (an MDC
   * that is not written between events keeps its map), so a steady stream of events allocates nothing.
   */
  public static Map<String, String> withKeys(Map<String, String> base, Decision d) {
    Object[] last = LAST.get();
    if (last[0] == base && last[1] == d) {
      @SuppressWarnings("unchecked")
      Map<String, String> same = (Map<String, String>) last[2];
      return same;
    }
    Map<String, String> m = new HashMap<>(((base == null ? 0 : base.size()) + 3) * 4 / 3 + 1);
    if (base != null) {
      m.putAll(base);
    }
    m.put(LOCK_KEY, d.lock());
    m.put(TOKEN_KEY, d.tokenText());
    if (d.grant() != null) {
      m.put(GRANT_KEY, d.grant());
    }
    Map<String, String> result = Collections.unmodifiableMap(m);
    last[0] = base;
    last[1] = d;
    last[2] = result;
    return result;
  }
}
