package dev.fencing.fence.sql;

import static dev.fencing.fence.sql.SqlFenceDdl.FENCE_TABLE;
import static dev.fencing.fence.sql.SqlFenceDdl.MYSQL_CHECK;
import static dev.fencing.fence.sql.SqlFenceDdl.MYSQL_PROCEDURES;
import static dev.fencing.fence.sql.SqlFenceDdl.MYSQL_STRIPES;
import static dev.fencing.fence.sql.SqlFenceDdl.REGISTRY_TABLE;
import static dev.fencing.fence.sql.SqlFenceDdl.STRIPE_TABLE;
import static dev.fencing.fence.sql.SqlFenceDdl.TOKEN_COLUMN;
import static dev.fencing.fence.sql.SqlFenceDdl.literal;

import dev.fencing.fence.sql.SqlFenceDdl.Kind;
import dev.fencing.fence.sql.SqlFenceDdl.Statement;
import dev.fencing.fence.store.SqlDialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The SQL fence on MariaDB and MySQL: versioned procedures (never replaced under live writes), stripe rows chosen by
 * {@code CONNECTION_ID()}, three triggers per table (insert, update, delete), SELECT on the fence and the registry
 * granted to PUBLIC where the server knows PUBLIC (MariaDB 10.11+), scripts wrapped in {@code DELIMITER}; the
 * catalogs read are {@code information_schema.TRIGGERS} and {@code ROUTINES}.
 */
final class MariaDbFenceDialect extends FenceDialect {
  private static final Pattern VERSION = Pattern.compile("^(\\d+)\\.(\\d+)");

  MariaDbFenceDialect() {
    super(SqlDialect.MYSQL);
  }

  @Override
  void install(SqlFence fence, boolean addTokenColumn, List<Statement> out) {
    String s = fence.table().schemaPrefix(dialect);
    String t = fence.table().sql(dialect);
    String lock = literal(fence.lock());
    shared(fence, out);
    if (fence.perRow() && addTokenColumn) {
      out.add(new Statement(Kind.TOKEN_COLUMN, TOKEN_COLUMN, fenceSql.render("add_token_column", "table", t)));
    }
    List<String> names = triggerNames(fence);
    String permissive = fence.permissive() ? "TRUE" : "FALSE";
    String tableName = literal(fence.table().toString());
    String[] events = {"INSERT", "UPDATE", "DELETE"};
    for (int i = 0; i < 3; i++) {
      String trigger = dialect.quote(names.get(i));
      String sql = fence.perRow()
          ? fenceSql.render("trigger_row_" + events[i].toLowerCase(Locale.ROOT), "schema", s,
              "trigger", trigger, "table", t, "lock", lock, "permissive", permissive, "table_name", tableName)
          : fenceSql.render("trigger_table", "schema", s, "trigger", trigger, "event", events[i], "table", t,
              "lock", lock, "permissive", permissive, "table_name", tableName);
      out.add(new Statement(Kind.TRIGGER, names.get(i), sql));
    }
    register(fence, out);
    out.addAll(privileges(s));
  }

  @Override
  void shared(SqlFence fence, List<Statement> out) {
    String s = fence.table().schemaPrefix(dialect);
    String lock = literal(fence.lock());
    tables(s, out);
    out.add(seed(fence));
    StringBuilder numbers = new StringBuilder();
    for (int i = 0; i < MYSQL_STRIPES; i++) {
      numbers.append(i == 0 ? "SELECT 0 AS n" : " UNION ALL SELECT " + i);
    }
    out.add(new Statement(Kind.SEED, STRIPE_TABLE, fenceSql.render("seed_stripes", "schema", s,
        "numbers", numbers.toString(), "lock", lock)));
    out.add(new Statement(Kind.ROUTINE, "fencing_reject_stale_v1", fenceSql.render("reject_stale", "schema", s)));
    out.add(new Statement(Kind.ROUTINE, "fencing_session_token_v1", fenceSql.render("session_token", "schema", s)));
    out.add(new Statement(Kind.ROUTINE, MYSQL_CHECK, fenceSql.render("check", "schema", s)));
  }

  /** The stripe table, with the grant columns its rows carry beside the token. */
  @Override
  void stripeTable(String s, List<Statement> out) {
    out.add(new Statement(Kind.FENCE_TABLE, STRIPE_TABLE, fenceSql.render("stripe_table", "schema", s)));
    grantColumns(s, STRIPE_TABLE, out);
  }

  @Override
  List<String> triggerNames(SqlFence fence) {
    return List.of(hashedName(fence, "bi", 63), hashedName(fence, "bu", 63), hashedName(fence, "bd", 63));
  }

  /**
   * The check procedure the triggers call: a re-install after an upgrade creates triggers calling the new procedure
   * (before it drops the old ones) instead of keeping the old.
   */
  @Override
  String hashedNameSuffix() {
    return "|" + MYSQL_CHECK;
  }

  /** Every role may read the fence and the registry (MariaDB 10.11+ knows PUBLIC). */
  @Override
  List<Statement> privileges(String s) {
    List<Statement> out = new ArrayList<>();
    // MariaDB/MySQL table grants need a database: db.table, or the current database's table.
    for (String t : List.of(FENCE_TABLE, REGISTRY_TABLE)) {
      out.add(new Statement(Kind.PRIVILEGE, t, fenceSql.render("grant_select", "schema", s, "name", t)));
    }
    return out;
  }

  @Override
  String dropTrigger(String trigger, String table, String s) {
    return uninstallSql.render("drop_trigger", "schema", s, "trigger", trigger);
  }

  @Override
  void dropShared(String s, List<Statement> out) {
    for (String p : MYSQL_PROCEDURES) {
      out.add(new Statement(Kind.DROP_ROUTINE, p, uninstallSql.render("drop_procedure", "schema", s, "name", p)));
    }
    out.add(dropTable(s, STRIPE_TABLE));
  }

  @Override
  String currentSchema() {
    return "DATABASE()";
  }

  @Override
  String printNote() {
    return fenceSql.render("public_grant_note");
  }

  /** Procedure and trigger bodies contain semicolons (the mysql client and Flyway understand DELIMITER). */
  @Override
  String scriptDelimiter() {
    return "$$";
  }

  @Override
  String triggersOnTableQuery() {
    return "SELECT DISTINCT TRIGGER_NAME FROM information_schema.TRIGGERS"
        + " WHERE EVENT_OBJECT_SCHEMA = ? AND EVENT_OBJECT_TABLE = ? AND TRIGGER_NAME LIKE 'fencing\\_%'"
        + " ORDER BY 1";
  }

  @Override
  String triggersInSchemaQuery() {
    return "SELECT COUNT(*) FROM information_schema.TRIGGERS"
        + " WHERE TRIGGER_SCHEMA = ? AND TRIGGER_NAME LIKE 'fencing\\_%'";
  }

  /** The fence's procedures already in the table's database (never replaced: they are versioned). */
  @Override
  List<String> existingRoutines(Connection connection, TableName table) throws SQLException {
    List<String> names = new ArrayList<>();
    try (PreparedStatement ps = connection.prepareStatement("SELECT ROUTINE_NAME FROM information_schema.ROUTINES"
        + " WHERE ROUTINE_SCHEMA = ? AND ROUTINE_NAME LIKE 'fencing\\_%'")) {
      ps.setString(1, table.schema());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          names.add(rs.getString(1));
        }
      }
    }
    return names;
  }

  @Override
  String routinesWord() {
    return "procedures";
  }

  /** GRANT ... TO PUBLIC exists from MariaDB 10.11 on; the fence works without it, only detection needs it. */
  @Override
  boolean privilegesMayFail() {
    return true;
  }

  /**
   * GRANT SELECT ... TO PUBLIC where the server knows PUBLIC (MariaDB 10.11+), not fatal when it fails (the fence
   * works; only detection by writers needs it); who the triggers run as.
   */
  @Override
  List<String> privilegeReport(Connection connection, TableName table, List<Statement> grants, List<String> executed)
      throws SQLException {
    List<String> out = new ArrayList<>();
    String version = scalar(connection, "SELECT VERSION()");
    String tables = table.schema() + "." + FENCE_TABLE + ", " + table.schema() + "." + REGISTRY_TABLE;
    if (hasPublic(version)) {
      for (Statement st : grants) {
        try {
          SqlFenceInstaller.execute(connection, st.sql());
          executed.add(st.sql());
          out.add("privileges: " + st.sql());
        } catch (SQLException e) {
          out.add("privileges: could not " + st.sql() + " (" + e.getMessage() + "): grant SELECT on " + tables
              + " to the writers by hand, or the agent cannot detect the fence when it connects as them");
          break;
        }
      }
    } else {
      out.add("privileges: " + version + " has no PUBLIC role: grant SELECT on " + tables + " to the writers by "
          + "hand, or the agent cannot detect the fence when it connects as them");
    }
    out.add("runs as: the triggers and procedures run as their definer " + scalar(connection, "SELECT CURRENT_USER()")
        + " (SQL SECURITY DEFINER; keep that account); writers need only their DML rights on their own tables, "
        + "nothing on the fence tables");
    return out;
  }

  /** MariaDB 10.11 and later have GRANT ... TO PUBLIC; MySQL has no PUBLIC. */
  static boolean hasPublic(String version) {
    if (version == null || !version.contains("MariaDB")) {
      return false;
    }
    Matcher m = VERSION.matcher(version);
    if (!m.find()) {
      return false;
    }
    int major = Integer.parseInt(m.group(1));
    int minor = Integer.parseInt(m.group(2));
    return major > 10 || (major == 10 && minor >= 11);
  }

  private static String scalar(Connection connection, String sql) throws SQLException {
    try (java.sql.Statement st = connection.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      return rs.next() ? rs.getString(1) : null;
    }
  }
}
