package dev.fencing.agent.instrumentation.http;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;

/**
 * fencing.exempt.http: HTTP destinations that are never a lock-protected side effect. Entries are {@code host},
 * {@code host:port}, or {@code *.suffix} (any host ending with {@code .suffix}, e.g. {@code *.monitoring.svc}),
 * optionally with a port. Each host's answer (the ports exempt on it) is worked out once and remembered, so a request
 * costs one lock-free hash lookup, allocation-free.
 */
public final class HostExemptions {
  /** Hosts answered so far, beyond which answers are computed each time (a runaway set of host names). */
  static final int MAX_REMEMBERED = 1024;
  private static final int[] NONE = new int[0];
  private static final int ANY_PORT = -1;

  private record Rule(String host, boolean suffix, int port) {
    static Rule parse(String entry) {
      String t = entry.trim().toLowerCase(Locale.ROOT);
      int port = ANY_PORT;
      int colon = t.lastIndexOf(':');
      if (colon > 0 && t.indexOf(']') < colon) {
        port = Integer.parseInt(t.substring(colon + 1));
        t = t.substring(0, colon);
      }
      boolean suffix = t.startsWith("*.");
      return new Rule(unbracket(suffix ? t.substring(1) : t), suffix, port); // a suffix keeps its dot: ".svc"
    }

    boolean matches(String host) {
      return suffix ? host.length() > this.host.length() && host.regionMatches(true,
          host.length() - this.host.length(), this.host, 0, this.host.length()) : host.equalsIgnoreCase(this.host);
    }
  }

  private final Rule[] rules;
  private final ConcurrentHashMap<String, int[]> known = new ConcurrentHashMap<>();

  public HostExemptions(List<String> entries) {
    List<Rule> r = new ArrayList<>();
    for (String e : entries) {
      r.add(Rule.parse(e));
    }
    rules = r.toArray(new Rule[0]);
  }

  /** Whether a request to {@code host}:{@code port} (-1: the scheme's default port) is exempt. */
  public boolean exempt(String scheme, String host, int port) {
    if (rules.length == 0 || host == null) {
      return false;
    }
    int[] ports = known.get(host);
    if (ports == null) {
      ports = portsOf(unbracket(host));
      if (known.size() < MAX_REMEMBERED) {
        known.putIfAbsent(host, ports);
      }
    }
    if (ports.length == 0) {
      return false;
    }
    int p = port >= 0 ? port : "https".equalsIgnoreCase(scheme) ? 443 : 80;
    for (int exempt : ports) {
      if (exempt == ANY_PORT || exempt == p) {
        return true;
      }
    }
    return false;
  }

  /** The ports exempt on {@code host} ({@link #ANY_PORT} for all), or none. */
  private int[] portsOf(String host) {
    List<Integer> ports = new ArrayList<>();
    for (Rule r : rules) {
      if (r.matches(host)) {
        ports.add(r.port);
      }
    }
    if (ports.isEmpty()) {
      return NONE;
    }
    int[] out = new int[ports.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = ports.get(i);
    }
    return out;
  }

  /** How many hosts have a remembered answer (tests). */
  int remembered() {
    return known.size();
  }

  /** IPv6 literals come with brackets from URLs and without from some clients: compared without. */
  private static String unbracket(String host) {
    return host.length() > 1 && host.charAt(0) == '[' && host.charAt(host.length() - 1) == ']'
        ? host.substring(1, host.length() - 1) : host;
  }
}
