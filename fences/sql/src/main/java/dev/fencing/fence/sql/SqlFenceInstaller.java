package dev.fencing.fence.sql;

import dev.fencing.fence.sql.SqlFenceDdl.Kind;
import dev.fencing.fence.sql.SqlFenceDdl.Statement;
import dev.fencing.fence.store.SqlDialect;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/**
 * Installs and removes fences over a JDBC connection. The protected table is looked up first (so that an unknown
 * table or database fails before anything is created), under the name the database stores.
 *
 * <p>PostgreSQL installs and uninstalls in one transaction. MariaDB/MySQL and H2 commit each DDL statement, so the
 * installer checks what it can first, creates the new triggers before it drops the ones they replace (a table is
 * never unguarded, and an unchanged re-install creates nothing), and when a statement fails it drops again what this
 * run created. Nothing is left half-installed either way. What differs between the databases (the catalogs read, the
 * privileges) is the dialect's {@link FenceDialect}.
 */
public final class SqlFenceInstaller {

  /**
   * What an install or uninstall did: a one-line summary, the statements it ran, and what a DBA should know about
   * privileges (what was granted or revoked, who the fence runs as, what writers need), one line each.
   */
  public record Outcome(String summary, List<String> executed, List<String> privileges) {
    public Outcome(String summary, List<String> executed) {
      this(summary, executed, List.of());
    }
  }

  private record Column(int type, String typeName, String remarks) {
    boolean addedByInstaller() {
      return remarks != null && remarks.contains(SqlFenceDdl.COLUMN_MARK);
    }
  }

  private final Connection connection;
  private final SqlDialect dialect;
  private final SqlFenceDdl ddl;
  private final FenceDialect fence;

  /** Fails with a clear SQLException when the database is not one the fence supports. */
  public SqlFenceInstaller(Connection connection) throws SQLException {
    this.connection = Objects.requireNonNull(connection, "connection");
    this.dialect = SqlDialect.detect(connection);
    this.ddl = new SqlFenceDdl(dialect);
    this.fence = ddl.fenceDialect();
  }

  public SqlDialect dialect() {
    return dialect;
  }

  /**
   * Whether the database has the fence schema (a {@code fencing_fence} table in any schema of the current database),
   * in one metadata query (two for H2 when the first finds none). The agent uses it to treat a JDBC destination as
   * fenced; it should cache the answer per JDBC URL. False for unsupported databases.
   */
  public static boolean isFenced(Connection connection) throws SQLException {
    DatabaseMetaData md = connection.getMetaData();
    SqlDialect dialect = SqlDialect.fromProductName(md.getDatabaseProductName()).orElse(null);
    if (dialect == null) {
      return false;
    }
    String catalog = dialect == SqlDialect.MYSQL ? connection.getCatalog() : null;
    try (ResultSet rs = md.getTables(catalog, null, escape(md, dialect.fold(SqlFenceDdl.FENCE_TABLE)), null)) {
      if (rs.next()) {
        return true;
      }
    }
    if (dialect != SqlDialect.H2) {
      return false;
    }
    // H2 with DATABASE_TO_LOWER=TRUE (e.g. in PostgreSQL mode) stores unquoted names in lower case.
    try (ResultSet rs = md.getTables(null, null, escape(md, SqlFenceDdl.FENCE_TABLE), null)) {
      return rs.next();
    }
  }

  /** The DDL {@link #install} would run for {@code fence} on this database, as a script. */
  public String print(SqlFence fence) throws SQLException {
    TableName table = resolve(fence.table());
    SqlFence resolved = fence.withTable(table);
    return ddl.script(ddl.install(resolved, fence.perRow() && tokenColumn(table) == null));
  }

  /**
   * Installs {@code fence}. Idempotent: the same fence again changes nothing (PostgreSQL replaces it in one
   * transaction); other options replace the table's triggers. In per-row mode an existing {@code fencing_token}
   * column is used as it is.
   */
  public Outcome install(SqlFence fence) throws SQLException {
    TableName table = resolve(fence.table());
    SqlFence resolved = fence.withTable(table);
    boolean addColumn = false;
    if (fence.perRow()) {
      Column column = tokenColumn(table);
      if (column == null) {
        addColumn = true;
      } else if (!isInteger(column.type())) {
        throw new SQLException("cannot install the per-row fence on " + table + ": its column "
            + SqlFenceDdl.TOKEN_COLUMN + " has type " + column.typeName() + ", expected BIGINT");
      }
    }
    refuseOutbox(table, "install a fence on");
    Applied applied = apply(table, ddl.install(resolved, addColumn), ddl.triggerNames(resolved),
        "install the SQL fence on " + table);
    String what = "SQL fence on " + table + " for lock '" + fence.lock() + "' (" + fence.describe() + ")";
    return new Outcome((applied.unchanged() ? "already installed: " : "installed: ") + what
        + (addColumn ? "; added column " + SqlFenceDdl.TOKEN_COLUMN : "")
        + (applied.missingColumns().isEmpty() ? "" : "; added column" + (applied.missingColumns().size() > 1 ? "s "
            : " ") + String.join(", ", applied.missingColumns())), applied.executed(), applied.privileges());
  }

  /** What {@link #apply} did: the statements run, the privilege lines, the fence columns it added. */
  record Applied(List<String> executed, List<String> privileges, List<String> missingColumns, boolean unchanged) {
  }

  /**
   * Runs the install statements {@code all} for {@code table}, whose fence triggers are to be {@code wanted}: the
   * triggers first, then the removal of the table's other fence triggers (they are replaced), then the registry row
   * and the privileges; in one transaction (PostgreSQL) or with undo on failure. {@code what} names it in errors.
   */
  Applied apply(TableName table, List<Statement> all, List<String> wanted, String what) throws SQLException {
    List<Statement> plan = new ArrayList<>();
    List<Statement> last = new ArrayList<>();
    for (Statement st : all) {
      (st.kind() == Kind.REGISTER || st.kind() == Kind.PRIVILEGE ? last : plan).add(st);
    }
    List<String> existing = fencingTriggers(table);
    for (String old : existing) {
      if (!wanted.contains(old)) {
        plan.addAll(ddl.uninstall(table, List.of(old), false, false));
      }
    }
    plan.addAll(last);
    // A column an earlier release's fence table lacks is added; ALTER TABLE is skipped when it is there already.
    List<Statement> missingColumns = new ArrayList<>();
    for (Statement st : plan) {
      if (st.kind() == Kind.FENCE_COLUMN) {
        String fenceTable = st.object().substring(0, st.object().indexOf('.'));
        String column = st.object().substring(fenceTable.length() + 1);
        if (tableExists(table.schema(), fenceTable) && !columnExists(table.schema(), fenceTable, column)) {
          missingColumns.add(st);
        }
      }
    }
    plan.removeIf(st -> st.kind() == Kind.FENCE_COLUMN && !missingColumns.contains(st));
    // Known to be missing: plain ADD COLUMN, which MySQL understands too (IF NOT EXISTS is MariaDB's, for scripts).
    plan.replaceAll(st -> st.kind() == Kind.FENCE_COLUMN
        ? new Statement(st.kind(), st.object(), st.sql().replace(" ADD COLUMN IF NOT EXISTS ", " ADD COLUMN ")) : st);
    List<String> privileges = new ArrayList<>();
    List<Statement> grants = new ArrayList<>();
    if (this.fence.privilegesMayFail()) {
      plan.removeIf(st -> st.kind() == Kind.PRIVILEGE && grants.add(st));
    }
    boolean unchanged = existing.containsAll(wanted) && existing.size() == wanted.size();
    List<String> executed;
    if (dialect.transactionalDdl()) {
      executed = inTransaction(what, plan);
    } else {
      Set<String> skip = new LinkedHashSet<>(existing);
      skip.addAll(this.fence.existingRoutines(connection, table));
      plan.removeIf(st -> (st.kind() == Kind.TRIGGER || st.kind() == Kind.ROUTINE) && skip.contains(st.object()));
      executed = withUndo(table, plan, what);
    }
    for (Statement st : plan) {
      if (st.kind() == Kind.PRIVILEGE) {
        privileges.add("privileges: " + st.sql());
      }
    }
    privileges.addAll(this.fence.privilegeReport(connection, table, grants, executed));
    return new Applied(executed, privileges, missingColumns.stream().map(Statement::object).toList(), unchanged);
  }

  /**
   * The registry's mode for {@code table} ('table', 'row', {@value OutboxDdl#REGISTRY_MODE}), or null when the table
   * is not registered (or the schema has no registry).
   */
  String registryMode(TableName table) throws SQLException {
    if (!tableExists(table.schema(), SqlFenceDdl.REGISTRY_TABLE)) {
      return null;
    }
    try (PreparedStatement ps = connection.prepareStatement("SELECT mode FROM " + table.schemaPrefix(dialect)
        + SqlFenceDdl.REGISTRY_TABLE + " WHERE table_schema = ? AND table_name = ?")) {
      ps.setString(1, table.schema());
      ps.setString(2, table.name());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  /** A table fence's install or uninstall would take an outbox's triggers away: refused. */
  private void refuseOutbox(TableName table, String what) throws SQLException {
    if (OutboxDdl.REGISTRY_MODE.equals(registryMode(table))) {
      throw new SQLException("cannot " + what + " " + table + ": it is a tokened outbox (sql install --outbox); "
          + "use sql install --outbox or sql uninstall --outbox for it", "55000");
    }
  }

  /**
   * Removes the fence from {@code table}: its triggers (every trigger named fencing_... on it), and the token column
   * when the installer added it. When no other table of the schema is fenced any more, the fence table and functions
   * go too, so that {@link #isFenced} no longer reports the database as fenced.
   */
  public Outcome uninstall(TableName tableName) throws SQLException {
    TableName table = resolve(tableName);
    refuseOutbox(table, "remove the fence from");
    List<String> triggers = fencingTriggers(table);
    Column column = tokenColumn(table);
    boolean dropColumn = column != null && column.addedByInstaller();
    List<Statement> plan = new ArrayList<>(ddl.uninstall(table, triggers, dropColumn, false));
    if (tableExists(table.schema(), SqlFenceDdl.REGISTRY_TABLE)) {
      plan.add(ddl.unregister(table));
    }
    List<String> executed = new ArrayList<>();
    boolean dropShared;
    if (dialect.transactionalDdl()) {
      boolean autoCommit = connection.getAutoCommit();
      connection.setAutoCommit(false);
      try {
        executed.addAll(run(plan));
        dropShared = dropSharedIfLast(table, executed);
        connection.commit();
      } catch (SQLException e) {
        connection.rollback();
        throw wrap("remove the SQL fence from " + table, e, "nothing was changed");
      } finally {
        connection.setAutoCommit(autoCommit);
      }
    } else {
      try {
        executed.addAll(run(plan));
        dropShared = dropSharedIfLast(table, executed);
      } catch (SQLException e) {
        throw wrap("remove the SQL fence from " + table, e, "what ran before the failure: " + executed);
      }
    }
    String summary = triggers.isEmpty() && !dropColumn
        ? "no SQL fence on " + table + ": nothing to remove"
        : "removed: SQL fence on " + table + (dropColumn ? " and its column " + SqlFenceDdl.TOKEN_COLUMN : "");
    if (dropShared) {
      summary += "; no fenced table left in the schema, so the fence table and functions were dropped too";
    }
    return new Outcome(summary, executed);
  }

  /**
   * When no fence trigger is left in the table's schema, drops the fence's shared objects (registry, routines, fence
   * tables), so that {@link #isFenced} no longer reports the database as fenced; true when it did. Runs in the
   * caller's transaction (PostgreSQL).
   */
  boolean dropSharedIfLast(TableName table, List<String> executed) throws SQLException {
    if (fencingTriggersInSchema(table) != 0) {
      return false;
    }
    if (!dialect.transactionalDdl()) {
      // MariaDB keeps table grants after DROP TABLE: take back the SELECT install granted to PUBLIC first.
      for (Statement grant : ddl.privileges(table)) {
        String revoke = grant.sql().replace("GRANT SELECT ON", "REVOKE SELECT ON").replace(" TO PUBLIC",
            " FROM PUBLIC");
        try {
          execute(revoke);
          executed.add(revoke);
        } catch (SQLException e) {
          // nothing was granted (MySQL, older MariaDB, or revoked by hand)
        }
      }
    }
    executed.addAll(run(ddl.uninstall(table, List.of(), false, true)));
    return true;
  }

  // ----------------------------------------------------------------------------------------------------- execution

  List<String> inTransaction(String what, List<Statement> plan) throws SQLException {
    boolean autoCommit = connection.getAutoCommit();
    connection.setAutoCommit(false);
    try {
      List<String> executed = run(plan);
      connection.commit();
      return executed;
    } catch (SQLException e) {
      connection.rollback();
      throw wrap(what, e, "nothing was installed (rolled back)");
    } finally {
      connection.setAutoCommit(autoCommit);
    }
  }

  /** Runs the plan; on a failure drops what this run created, in reverse order, and reports the first error. */
  List<String> withUndo(TableName table, List<Statement> plan, String what) throws SQLException {
    Set<String> tablesExisting = new java.util.HashSet<>();
    for (String t : List.of(SqlFenceDdl.FENCE_TABLE, SqlFenceDdl.STRIPE_TABLE, SqlFenceDdl.REGISTRY_TABLE)) {
      if (tableExists(table.schema(), t)) {
        tablesExisting.add(t);
      }
    }
    for (Statement st : plan) {
      if (st.kind() == Kind.OUTBOX_TABLE && tableExists(table.schema(), st.object())) {
        tablesExisting.add(st.object());
      }
    }
    List<Statement> done = new ArrayList<>();
    List<String> executed = new ArrayList<>();
    try {
      for (Statement st : plan) {
        execute(st.sql());
        done.add(st);
        executed.add(st.sql());
      }
      return executed;
    } catch (SQLException e) {
      List<String> undoErrors = new ArrayList<>();
      String s = table.schemaPrefix(dialect);
      for (int i = done.size() - 1; i >= 0; i--) {
        Statement st = done.get(i);
        String undo = null;
        if (st.kind() == Kind.TRIGGER) {
          undo = ddl.uninstall(table, List.of(st.object()), false, false).get(0).sql();
        } else if (st.kind() == Kind.TOKEN_COLUMN && st.sql().startsWith("ALTER")) {
          undo = ddl.uninstall(table, List.of(), true, false).get(0).sql();
        } else if (st.kind() == Kind.ROUTINE) {
          undo = "DROP PROCEDURE IF EXISTS " + s + st.object();
        } else if (st.kind() == Kind.FENCE_TABLE) {
          undo = tablesExisting.contains(st.object()) ? null : "DROP TABLE IF EXISTS " + s + st.object();
        } else if (st.kind() == Kind.OUTBOX_TABLE && st.sql().startsWith("CREATE TABLE")) {
          undo = tablesExisting.contains(st.object()) ? null
              : "DROP TABLE IF EXISTS " + s + dialect.quote(st.object());
        }
        if (undo != null) {
          try {
            execute(undo);
          } catch (SQLException undoFailure) {
            undoErrors.add(undo + ": " + undoFailure.getMessage());
          }
        }
      }
      throw wrap(what, e, undoErrors.isEmpty()
          ? "what this run had created was dropped again"
          : "dropping what this run had created failed too: " + undoErrors);
    }
  }

  List<String> run(List<Statement> plan) throws SQLException {
    List<String> executed = new ArrayList<>();
    for (Statement st : plan) {
      execute(st.sql());
      executed.add(st.sql());
    }
    return executed;
  }

  private void execute(String sql) throws SQLException {
    execute(connection, sql);
  }

  /** Runs {@code sql}; a failure names the statement's first line. */
  static void execute(Connection connection, String sql) throws SQLException {
    try (java.sql.Statement st = connection.createStatement()) {
      st.execute(sql);
    } catch (SQLException e) {
      throw new SQLException(e.getMessage() + " [while running: " + firstLine(sql) + "]", e.getSQLState(),
          e.getErrorCode(), e);
    }
  }

  SQLException wrap(String what, SQLException e, String aftermath) {
    return new SQLException("cannot " + what + ": " + e.getMessage() + privilegeHint(e) + "; " + aftermath,
        e.getSQLState(), e.getErrorCode(), e);
  }

  /** Names what the installing user needs when the database said "permission denied" in its own words. */
  private String privilegeHint(SQLException e) {
    String state = e.getSQLState() == null ? "" : e.getSQLState();
    String message = e.getMessage() == null ? "" : e.getMessage().toLowerCase(Locale.ROOT);
    int code = e.getErrorCode();
    boolean denied = state.equals("42501") || state.equals("90096") || code == 1044 || code == 1142 || code == 1227
        || code == 1370 || code == 1419 || message.contains("permission denied") || message.contains("denied to user")
        || message.contains("not enough rights");
    if (!denied) {
      return "";
    }
    return " (missing privileges: the installing user must be able to create tables and "
        + fence.routinesWord() + " in the table's schema, create triggers on "
        + "the table and, in per-row mode, alter it; run the install as the table's owner or an administrator)";
  }

  private static String firstLine(String sql) {
    int nl = sql.indexOf('\n');
    return nl < 0 ? sql : sql.substring(0, nl) + " ...";
  }

  // ------------------------------------------------------------------------------------------------------ metadata

  /**
   * The table as the database stores it: tried as typed and as folded; without a schema the connection's current
   * schema wins over others, and a name found in several other schemas must be qualified.
   */
  TableName resolve(TableName table) throws SQLException {
    DatabaseMetaData md = connection.getMetaData();
    Set<TableName> found = new LinkedHashSet<>();
    Set<String> names = new LinkedHashSet<>(List.of(table.name(), dialect.fold(table.name())));
    Set<String> schemas = new LinkedHashSet<>();
    if (table.schema() != null) {
      schemas.add(table.schema());
      schemas.add(dialect.fold(table.schema()));
    } else if (dialect == SqlDialect.MYSQL) {
      String database = connection.getCatalog();
      if (database == null) {
        throw new SQLException("table " + table + " not found: the connection has no current database; "
            + "qualify the table as database.table or name a database in the JDBC URL", "42S02");
      }
      schemas.add(database);
    } else {
      schemas.add(null);
    }
    for (String schema : schemas) {
      for (String name : names) {
        String catalog = dialect == SqlDialect.MYSQL ? schema : null;
        String schemaPattern = dialect == SqlDialect.MYSQL || schema == null ? null : escape(md, schema);
        try (ResultSet rs = md.getTables(catalog, schemaPattern, escape(md, name), null)) {
          while (rs.next()) {
            String type = rs.getString("TABLE_TYPE");
            String foundName = rs.getString("TABLE_NAME");
            String foundSchema = dialect == SqlDialect.MYSQL ? rs.getString("TABLE_CAT") : rs.getString("TABLE_SCHEM");
            if (foundName.equals(name) && isTableType(type)) {
              found.add(new TableName(foundSchema, foundName));
            }
          }
        }
      }
    }
    if (found.size() > 1 && table.schema() == null) {
      String current = connection.getSchema();
      for (TableName t : found) {
        if (t.schema() != null && t.schema().equals(current)) {
          return t;
        }
      }
      throw new SQLException("table " + table + " is ambiguous: found as " + found + "; qualify it as schema.table",
          "42P09");
    }
    if (found.isEmpty()) {
      throw new SQLException("table " + table + " not found" + (dialect == SqlDialect.MYSQL
          ? " in database " + schemas.iterator().next() : "") + ": nothing was installed or removed", "42P01");
    }
    if (found.size() > 1) {
      throw new SQLException("table " + table + " is ambiguous: found as " + found + "; write it as stored",
          "42P09");
    }
    return found.iterator().next();
  }

  private static boolean isTableType(String type) {
    return type != null && (type.equals("TABLE") || type.equals("BASE TABLE") || type.equals("PARTITIONED TABLE"));
  }

  private Column tokenColumn(TableName table) throws SQLException {
    DatabaseMetaData md = connection.getMetaData();
    String catalog = dialect == SqlDialect.MYSQL ? table.schema() : null;
    String schema = dialect == SqlDialect.MYSQL ? null : escape(md, table.schema());
    try (ResultSet rs = md.getColumns(catalog, schema, escape(md, table.name()), null)) {
      while (rs.next()) {
        if (rs.getString("TABLE_NAME").equals(table.name())
            && rs.getString("COLUMN_NAME").equalsIgnoreCase(SqlFenceDdl.TOKEN_COLUMN)) {
          return new Column(rs.getInt("DATA_TYPE"), rs.getString("TYPE_NAME"), rs.getString("REMARKS"));
        }
      }
    }
    return null;
  }

  private static boolean isInteger(int type) {
    return type == Types.BIGINT || type == Types.INTEGER || type == Types.NUMERIC || type == Types.DECIMAL;
  }

  boolean tableExists(String schema, String name) throws SQLException {
    DatabaseMetaData md = connection.getMetaData();
    String catalog = dialect == SqlDialect.MYSQL ? schema : null;
    String schemaPattern = dialect == SqlDialect.MYSQL ? null : escape(md, schema);
    try (ResultSet rs = md.getTables(catalog, schemaPattern, escape(md, dialect.fold(name)), null)) {
      return rs.next();
    }
  }

  private boolean columnExists(String schema, String table, String column) throws SQLException {
    DatabaseMetaData md = connection.getMetaData();
    String catalog = dialect == SqlDialect.MYSQL ? schema : null;
    String schemaPattern = dialect == SqlDialect.MYSQL ? null : escape(md, schema);
    try (ResultSet rs = md.getColumns(catalog, schemaPattern, escape(md, dialect.fold(table)), null)) {
      while (rs.next()) {
        if (rs.getString("COLUMN_NAME").equalsIgnoreCase(column)) {
          return true;
        }
      }
    }
    return false;
  }

  /** Triggers on {@code table} whose names mark them as the fence's. */
  List<String> fencingTriggers(TableName table) throws SQLException {
    List<String> names = new ArrayList<>();
    try (PreparedStatement ps = connection.prepareStatement(fence.triggersOnTableQuery())) {
      ps.setString(1, table.schema());
      ps.setString(2, table.name());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          names.add(rs.getString(1));
        }
      }
    }
    return names;
  }

  private int fencingTriggersInSchema(TableName table) throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(fence.triggersInSchemaQuery())) {
      ps.setString(1, table.schema());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  /** A name as a metadata search pattern: {@code _} and {@code %} match only themselves. */
  private static String escape(DatabaseMetaData md, String name) throws SQLException {
    if (name == null) {
      return null;
    }
    String esc = md.getSearchStringEscape();
    if (esc == null || esc.isEmpty()) {
      return name;
    }
    return name.replace(esc, esc + esc).replace("_", esc + "_").replace("%", esc + "%");
  }
}
