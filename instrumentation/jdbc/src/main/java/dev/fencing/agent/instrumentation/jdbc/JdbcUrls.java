package dev.fencing.agent.instrumentation.jdbc;

import java.util.HashSet;
import java.util.Locale;
import java.util.Set;

/** What the hook reads from a JDBC URL. */
final class JdbcUrls {
  static final int POSTGRES_DEFAULT_PORT = 5432;

  private JdbcUrls() {}

  /**
   * The ports of every host in a pgjdbc URL ({@code jdbc:postgresql://h1:5432,h2/db?...}; 5432 where none is given,
   * also for {@code jdbc:postgresql:db}); empty when the URL cannot be read, so that nothing matches it.
   */
  static Set<Integer> postgresPorts(String url) {
    Set<Integer> ports = new HashSet<>();
    if (url == null) {
      return ports;
    }
    String u = url.toLowerCase(Locale.ROOT);
    int scheme = u.indexOf("//");
    if (!u.startsWith("jdbc:postgresql:") && !u.startsWith("jdbc:pgsql:")) {
      return ports;
    }
    if (scheme < 0) {
      ports.add(POSTGRES_DEFAULT_PORT); // jdbc:postgresql:database
      return ports;
    }
    int end = u.length();
    for (char c : new char[] {'/', '?'}) {
      int i = u.indexOf(c, scheme + 2);
      if (i >= 0 && i < end) {
        end = i;
      }
    }
    for (String host : u.substring(scheme + 2, end).split(",")) {
      int bracket = host.lastIndexOf(']');
      int colon = host.lastIndexOf(':');
      if (colon > bracket && colon + 1 < host.length()) {
        try {
          ports.add(Integer.parseInt(host.substring(colon + 1)));
        } catch (NumberFormatException e) {
          // not a port: leave it out
        }
      } else {
        ports.add(POSTGRES_DEFAULT_PORT);
      }
    }
    return ports;
  }
}
