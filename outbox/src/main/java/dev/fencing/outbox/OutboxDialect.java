package dev.fencing.outbox;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The relay's SQL on one database: the named statements of {@code relay-<dialect>.sql} (a resource beside this class),
 * with the table name put in. PostgreSQL, MariaDB/MySQL and H2, the databases the outbox table is installed on.
 */
enum OutboxDialect {
  POSTGRESQL("postgresql"),
  MARIADB("mariadb"),
  H2("h2");

  private final String resource;
  private volatile Map<String, String> statements;

  OutboxDialect(String name) {
    this.resource = "relay-" + name + ".sql";
  }

  /** The dialect of a connection's database. */
  static OutboxDialect of(Connection c) throws SQLException {
    String product = c.getMetaData().getDatabaseProductName();
    String p = product == null ? "" : product.toLowerCase(Locale.ROOT);
    if (p.contains("postgres")) {
      return POSTGRESQL;
    }
    if (p.contains("mariadb") || p.contains("mysql")) {
      return MARIADB;
    }
    if (p.equals("h2")) {
      return H2;
    }
    throw new SQLException("the outbox relay runs on PostgreSQL, MariaDB/MySQL and H2, not on " + product, "0A000");
  }

  /** The statement {@code name} on {@code table}, its {@code {ids}} a list of {@code idCount} placeholders. */
  String sql(String name, String table, int idCount) {
    String sql = statements().get(name);
    if (sql == null) {
      throw new IllegalStateException("no statement '" + name + "' in " + resource);
    }
    return sql.replace("{table}", table).replace("{ids}", placeholders(idCount));
  }

  String sql(String name, String table) {
    return sql(name, table, 0);
  }

  private static String placeholders(int n) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < n; i++) {
      b.append(i == 0 ? "?" : ", ?");
    }
    return b.toString();
  }

  private Map<String, String> statements() {
    Map<String, String> s = statements;
    if (s == null) {
      s = parse(read(resource));
      statements = s;
    }
    return s;
  }

  /**
   * {@code -- name: x} starts a statement, which ends at its {@code ;}; other comment lines are left out.
   * {@code -- name: x = y} makes {@code x} the statement {@code y} (declared before it).
   */
  static Map<String, String> parse(String text) {
    Map<String, String> parsed = new HashMap<>();
    String name = null;
    StringBuilder sql = new StringBuilder();
    for (String line : text.split("\n", -1)) {
      String t = line.trim();
      if (t.startsWith("-- name:") && t.contains("=")) {
        String[] alias = t.substring("-- name:".length()).split("=", 2);
        String same = parsed.get(alias[1].trim());
        if (same == null) {
          throw new IllegalStateException("'" + t + "' names a statement not declared before it");
        }
        parsed.put(alias[0].trim(), same);
        name = null;
      } else if (t.startsWith("-- name:")) {
        name = t.substring("-- name:".length()).trim();
        sql.setLength(0);
      } else if (name != null && !t.startsWith("--") && !t.isEmpty()) {
        sql.append(sql.length() == 0 ? "" : "\n").append(line);
        if (t.endsWith(";")) {
          parsed.put(name, sql.substring(0, sql.length() - 1).trim());
          name = null;
        }
      }
    }
    return Map.copyOf(parsed);
  }

  private static String read(String resource) {
    try (InputStream in = OutboxDialect.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + resource);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
