package dev.fencing.agent.instrumentation.jdbc;

import dev.fencing.agent.log.AgentLog;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What the hook knows about the fences of one database (one JDBC URL): which tables a fence trigger judges, or that
 * the user declared every table fenced ({@code fencing.fenced.jdbc}). A fence protects tables, not a database: after
 * the lease's deadline a write is sent with the last token only when a fence judges its target table; everything else
 * toward the database (other tables, DDL, functions, several statements in one text) is blocked.
 *
 * <p>Read once per URL from the catalogs, as any role can: PostgreSQL's {@code pg_trigger} (readable by every role,
 * and a trigger of a partitioned table shows on each partition that has it, so a direct write to a partition is
 * judged only where the trigger is); MariaDB/MySQL and H2 from {@code information_schema.triggers} (MariaDB shows only
 * the triggers of tables the role has the TRIGGER privilege on) and the installer's registry
 * {@code fencing_fenced_table}, which every role may read.
 */
final class DatabaseFences {
  private static final AgentLog LOG = AgentLog.get(DatabaseFences.class);

  /** No fence known: every write is unjudged. */
  static final DatabaseFences NONE = new DatabaseFences(false, false, List.of(), SessionDialect.UNKNOWN);

  private final boolean allFenced;
  private final boolean anyFence;
  private final String[][] tables; // {schema, name} as the database stores them
  private final SessionDialect dialect;

  private DatabaseFences(boolean allFenced, boolean anyFence, List<String[]> tables, SessionDialect dialect) {
    this.allFenced = allFenced;
    this.anyFence = anyFence || allFenced || !tables.isEmpty();
    this.tables = tables.toArray(new String[0][]);
    this.dialect = dialect;
  }

  /** Declared fenced as a whole (fencing.fenced.jdbc): every write counts as judged. */
  static DatabaseFences declared(SessionDialect dialect) {
    return new DatabaseFences(true, true, List.of(), dialect);
  }

  /** Fenced tables as {schema, name} pairs (tests; {@link #detect} reads them from the database). */
  static DatabaseFences of(SessionDialect dialect, List<String[]> tables) {
    return new DatabaseFences(false, true, tables, dialect);
  }

  /** True when some fence is in this database: then every statement's session pair must be right, reads included. */
  boolean anyFence() {
    return anyFence;
  }

  boolean allFenced() {
    return allFenced;
  }

  int tableCount() {
    return tables.length;
  }

  /**
   * True when a fence judges the write {@code sql} whose target {@link SqlTarget#find} found, in a session whose
   * current schema (PostgreSQL, H2) or database (MariaDB/MySQL) is {@code currentSchema}. An unqualified name is
   * matched in the current schema only: where search_path would find it elsewhere, the write is taken as unjudged.
   */
  boolean judges(String sql, long target, String currentSchema) {
    if (allFenced) {
      return true;
    }
    if (target == SqlTarget.NONE || tables.length == 0) {
      return false;
    }
    for (String[] t : tables) {
      if (!matches(sql, SqlTarget.nameStart(target), SqlTarget.nameEnd(target), SqlTarget.nameQuoted(target), t[1])) {
        continue;
      }
      boolean schemaOk = SqlTarget.qualified(target)
          ? matches(sql, SqlTarget.schemaStart(target), SqlTarget.schemaEnd(target), SqlTarget.schemaQuoted(target),
              t[0])
          : t[0].equals(currentSchema);
      if (schemaOk) {
        return true;
      }
    }
    return false;
  }

  /**
   * Compares the identifier at [start, end) of {@code sql} with a stored name, as the database resolves it: quoted
   * names exactly; unquoted ones folded to lower case (PostgreSQL) or upper case (H2), or exactly (MariaDB/MySQL,
   * whose table names are case-sensitive on Linux). Allocation-free.
   */
  private boolean matches(String sql, int start, int end, boolean quoted, String stored) {
    int len = end - start;
    if (len != stored.length()) {
      return false;
    }
    if (quoted || dialect == SessionDialect.MYSQL || dialect == SessionDialect.UNKNOWN) {
      return sql.regionMatches(start, stored, 0, len);
    }
    boolean upper = dialect == SessionDialect.H2;
    for (int i = 0; i < len; i++) {
      char c = sql.charAt(start + i);
      char folded = upper ? Character.toUpperCase(c) : Character.toLowerCase(c);
      if (folded != stored.charAt(i)) {
        return false;
      }
    }
    return true;
  }

  /** Reads the fenced tables of the database behind {@code c}; on any failure, no fence (writes unjudged). */
  static DatabaseFences detect(Connection c, SessionDialect dialect, String url) {
    List<String[]> tables = new ArrayList<>();
    boolean fenceTable = false;
    try (Statement st = c.createStatement()) {
      switch (dialect) {
        case POSTGRESQL:
          read(st, "SELECT DISTINCT n.nspname, c.relname FROM pg_catalog.pg_trigger t"
              + " JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid"
              + " JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace"
              + " WHERE t.tgname LIKE 'fencing\\_%' AND NOT t.tgisinternal", tables);
          break;
        case MYSQL:
          read(st, "SELECT DISTINCT event_object_schema, event_object_table FROM information_schema.triggers"
              + " WHERE trigger_name LIKE 'fencing\\_%'", tables);
          break;
        case H2:
          read(st, "SELECT DISTINCT event_object_schema, event_object_table FROM information_schema.triggers"
              + " WHERE trigger_name LIKE 'fencing:%'", tables);
          break;
        default:
          return NONE;
      }
      if (dialect != SessionDialect.POSTGRESQL) {
        // The installer's registry: MariaDB hides triggers from roles without the TRIGGER privilege.
        List<String[]> registries = new ArrayList<>();
        read(st, "SELECT table_schema, table_name FROM information_schema.tables"
            + " WHERE lower(table_name) = 'fencing_fenced_table'", registries);
        for (String[] r : registries) {
          String q = dialect == SessionDialect.MYSQL ? "`" : "\"";
          try {
            read(st, "SELECT table_schema, table_name FROM " + q + r[0] + q + "." + q + r[1] + q, tables);
          } catch (SQLException e) {
            LOG.debug("fence registry " + r[0] + "." + r[1] + " of " + url + " not readable: " + AgentLog.describe(e));
          }
        }
      }
      try (ResultSet rs = st.executeQuery(
          "SELECT 1 FROM information_schema.tables WHERE lower(table_name) = 'fencing_fence'")) {
        fenceTable = rs.next();
      }
    } catch (SQLException e) {
      LOG.debug("fence detection failed for " + url + ": " + AgentLog.describe(e));
    }
    return new DatabaseFences(false, fenceTable, dedupe(tables), dialect);
  }

  private static void read(Statement st, String sql, List<String[]> into) throws SQLException {
    try (ResultSet rs = st.executeQuery(sql)) {
      while (rs.next()) {
        into.add(new String[] {rs.getString(1), rs.getString(2)});
      }
    }
  }

  private static List<String[]> dedupe(List<String[]> tables) {
    List<String[]> out = new ArrayList<>();
    for (String[] t : tables) {
      if (t[0] == null || t[1] == null) {
        continue;
      }
      boolean seen = false;
      for (String[] o : out) {
        seen |= o[0].equals(t[0]) && o[1].equals(t[1]);
      }
      if (!seen) {
        out.add(t);
      }
    }
    return out;
  }

  /** For the log line: "public.cell, public.ledger" (at most 10), or "none". */
  String describe() {
    if (allFenced) {
      return "every table (fencing.fenced.jdbc)";
    }
    if (tables.length == 0) {
      return anyFence ? "no table whose fence this role can see" : "none";
    }
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < tables.length && i < 10; i++) {
      b.append(i == 0 ? "" : ", ").append(tables[i][0]).append('.').append(tables[i][1]);
    }
    if (tables.length > 10) {
      b.append(String.format(Locale.ROOT, " and %d more", tables.length - 10));
    }
    return b.toString();
  }
}
