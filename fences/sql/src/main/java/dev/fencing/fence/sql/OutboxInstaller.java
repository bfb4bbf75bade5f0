package dev.fencing.fence.sql;

import dev.fencing.fence.sql.SqlFenceDdl.Statement;
import dev.fencing.fence.sql.SqlFenceInstaller.Applied;
import dev.fencing.fence.sql.SqlFenceInstaller.Outcome;
import dev.fencing.fence.store.SqlDialect;
import dev.fencing.protocol.OutboxSchema;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/**
 * Installs and removes the tokened outbox ({@link OutboxDdl}) and receivers' processed-events tables over a JDBC
 * connection, the way {@link SqlFenceInstaller} (whose execution it shares) installs a fence: PostgreSQL in one
 * transaction, MariaDB/MySQL and H2 statement by statement with undo on failure. Unlike a fence, the installer
 * creates the table; a table of that name that is not an outbox is refused, never altered.
 */
public final class OutboxInstaller {

  /** Every column of the outbox, as {@link OutboxSchema} names them. */
  static final List<String> OUTBOX_COLUMNS = List.of(OutboxSchema.EVENT_ID, OutboxSchema.LOCK, OutboxSchema.TOKEN,
      OutboxSchema.GRANT, OutboxSchema.CHANNEL, OutboxSchema.TARGET, OutboxSchema.METHOD, OutboxSchema.MESSAGE_KEY,
      OutboxSchema.HEADERS, OutboxSchema.PAYLOAD, OutboxSchema.ORDER_KEY, OutboxSchema.KEY_SEQ, OutboxSchema.STATE,
      OutboxSchema.ATTEMPTS, OutboxSchema.NEXT_ATTEMPT_AT, OutboxSchema.CREATED_AT, OutboxSchema.DELIVERED_AT,
      OutboxSchema.LAST_ERROR, OutboxSchema.CLAIMED_BY, OutboxSchema.CLAIMED_UNTIL, OutboxSchema.FENCING);
  /** The columns of an outbox of an earlier release, which a re-install brings up to {@link #OUTBOX_COLUMNS}. */
  static final List<String> EARLIER_OUTBOX_COLUMNS = OUTBOX_COLUMNS.subList(0, OUTBOX_COLUMNS.size() - 1);
  /** The columns the relay writes: the only ones an UPDATE may change. */
  static final List<String> DELIVERY_COLUMNS = List.of(OutboxSchema.STATE, OutboxSchema.ATTEMPTS,
      OutboxSchema.NEXT_ATTEMPT_AT, OutboxSchema.DELIVERED_AT, OutboxSchema.LAST_ERROR, OutboxSchema.CLAIMED_BY,
      OutboxSchema.CLAIMED_UNTIL);
  /** A processed-events table's columns. */
  static final List<String> PROCESSED_COLUMNS = List.of("event_id", "processed_at");

  private final Connection connection;
  private final SqlDialect dialect;
  private final SqlFenceInstaller base;
  private final OutboxDdl ddl;

  /** Fails with a clear SQLException when the database is not one the fence supports. */
  public OutboxInstaller(Connection connection) throws SQLException {
    this.connection = Objects.requireNonNull(connection, "connection");
    this.base = new SqlFenceInstaller(connection);
    this.dialect = base.dialect();
    this.ddl = new OutboxDdl(dialect);
  }

  /**
   * Creates the outbox, its counter table, routines and triggers, and the fence of its lock (idempotent; another
   * lock replaces the triggers). A table of that name must be an outbox already, or not exist.
   */
  public Outcome install(SqlOutbox outbox) throws SQLException {
    TableName table = locate(outbox.table());
    SqlOutbox resolved = outbox.withTable(table);
    if (base.tableExists(table.schema(), table.name())) {
      String mode = base.registryMode(table);
      if (mode != null && !mode.equals(OutboxDdl.REGISTRY_MODE)) {
        throw new SQLException("cannot install the outbox " + table + ": the table exists and has a SQL fence ("
            + mode + " mode); the outbox is a table of its own, created by the installer: choose another name",
            "42P07");
      }
      List<String> missing = missing(table, EARLIER_OUTBOX_COLUMNS);
      if (!missing.isEmpty()) {
        throw new SQLException("cannot install the outbox " + table + ": the table exists and is not an outbox (it "
            + "lacks the columns " + missing + "); the installer creates the outbox: choose another name", "42P07");
      }
    }
    Applied applied = base.apply(table, ddl.install(resolved), ddl.triggerNames(resolved),
        "install the outbox " + table);
    List<String> notes = new ArrayList<>(applied.privileges());
    String t = table.toString();
    notes.add("writers need: GRANT INSERT ON " + t + " TO <writer> (SELECT too for INSERT ... RETURNING); they write"
        + " in their fenced transactions, with the agent's session values");
    notes.add("the relay needs: GRANT SELECT, UPDATE (" + String.join(", ", DELIVERY_COLUMNS) + ") ON " + t
        + " TO <relay>; DELETE only whoever removes events (retention)");
    String what = "tokened outbox " + table + " for lock '" + outbox.lock() + "' (ordering counters in "
        + resolved.keyTable() + (dialect == SqlDialect.POSTGRESQL ? "; commits NOTIFY channel '"
        + resolved.notifyChannel() + "'" : "") + ")";
    boolean unchanged = applied.unchanged() && applied.missingColumns().isEmpty();
    return new Outcome((unchanged ? "already installed: " : "installed: ") + what, applied.executed(),
        notes);
  }

  /**
   * Drops the outbox, its counter table and registry row (and the fence's shared objects when no fenced table is
   * left in the schema). Refused while the outbox holds pending events.
   */
  public Outcome uninstall(TableName tableName) throws SQLException {
    TableName table = base.resolve(tableName);
    String lock = outboxLock(table);
    if (lock == null) {
      throw new SQLException("cannot remove the outbox " + table + ": it is not a tokened outbox (the registry "
          + SqlFenceDdl.REGISTRY_TABLE + " has no '" + OutboxDdl.REGISTRY_MODE + "' row for it); nothing was "
          + "removed", "55000");
    }
    long pending = count(table, " WHERE " + OutboxSchema.STATE + " = '" + OutboxSchema.PENDING + "'");
    if (pending > 0) {
      throw new SQLException("cannot remove the outbox " + table + ": it holds " + pending + " pending event"
          + (pending == 1 ? "" : "s") + "; let the relay deliver them (or delete them), then uninstall; nothing was "
          + "removed", "55000");
    }
    SqlOutbox outbox = new SqlOutbox(table, lock);
    List<Statement> plan = new ArrayList<>();
    plan.add(ddl.fenceDdl().unregister(table));
    plan.addAll(ddl.uninstall(outbox));
    List<String> executed = new ArrayList<>();
    boolean dropShared = drop(plan, executed, table, "remove the outbox " + table, true);
    return new Outcome("removed: tokened outbox " + table + " and " + outbox.keyTable() + (dropShared
        ? "; no fenced table left in the schema, so the fence table and functions were dropped too" : ""), executed);
  }

  /** Creates a receiver's processed-events table (idempotent). */
  public Outcome installProcessedEvents(TableName tableName) throws SQLException {
    TableName table = locate(tableName);
    boolean exists = base.tableExists(table.schema(), table.name());
    if (exists) {
      List<String> missing = missing(table, PROCESSED_COLUMNS);
      if (!missing.isEmpty()) {
        throw new SQLException("cannot install the processed-events table " + table + ": the table exists and lacks "
            + "the columns " + missing + "; choose another name", "42P07");
      }
    }
    List<String> executed = dialect.transactionalDdl()
        ? base.inTransaction("install the processed-events table " + table, ddl.installProcessedEvents(table))
        : base.withUndo(table, ddl.installProcessedEvents(table), "install the processed-events table " + table);
    return new Outcome((exists ? "already installed: " : "installed: ") + "processed-events table " + table,
        executed, List.of("receivers need: GRANT SELECT, INSERT ON " + table + " TO <receiver>; they call "
            + "ProcessedEvents.markFirst in the transaction of the effect"));
  }

  /** Drops a processed-events table; refused while it holds event ids. */
  public Outcome uninstallProcessedEvents(TableName tableName) throws SQLException {
    TableName table = base.resolve(tableName);
    List<String> missing = missing(table, PROCESSED_COLUMNS);
    if (!missing.isEmpty() || base.registryMode(table) != null) {
      throw new SQLException("cannot remove " + table + ": it is not a processed-events table; nothing was removed",
          "55000");
    }
    long ids = count(table, "");
    if (ids > 0) {
      throw new SQLException("cannot remove the processed-events table " + table + ": it holds " + ids + " event "
          + "id" + (ids == 1 ? "" : "s") + " (receivers would apply those events again); delete them first if that "
          + "is what you mean; nothing was removed", "55000");
    }
    List<String> executed = new ArrayList<>();
    drop(ddl.uninstallProcessedEvents(table), executed, table, "remove the processed-events table " + table, false);
    return new Outcome("removed: processed-events table " + table, executed);
  }

  // ------------------------------------------------------------------------------------------------------ helpers

  /** Runs {@code plan} (in one transaction on PostgreSQL), then, for an outbox, drops the fence's shared objects. */
  private boolean drop(List<Statement> plan, List<String> executed, TableName table, String what, boolean shared)
      throws SQLException {
    if (dialect.transactionalDdl()) {
      boolean autoCommit = connection.getAutoCommit();
      connection.setAutoCommit(false);
      try {
        executed.addAll(base.run(plan));
        boolean dropped = shared && base.dropSharedIfLast(table, executed);
        connection.commit();
        return dropped;
      } catch (SQLException e) {
        connection.rollback();
        throw base.wrap(what, e, "nothing was changed");
      } finally {
        connection.setAutoCommit(autoCommit);
      }
    }
    try {
      executed.addAll(base.run(plan));
      return shared && base.dropSharedIfLast(table, executed);
    } catch (SQLException e) {
      throw base.wrap(what, e, "what ran before the failure: " + executed);
    }
  }

  /**
   * The table as the database stores it when it exists, else as the installer will create it: the name folded as the
   * database folds unquoted names, in the given schema or the connection's current one.
   */
  TableName locate(TableName table) throws SQLException {
    try {
      return base.resolve(table);
    } catch (SQLException e) {
      if (!"42P01".equals(e.getSQLState())) {
        throw e;
      }
    }
    TableName folded = table.folded(dialect);
    if (folded.schema() != null) {
      return folded;
    }
    String schema = dialect == SqlDialect.MYSQL ? connection.getCatalog() : connection.getSchema();
    if (schema == null) {
      throw new SQLException("cannot place " + table + ": the connection has no current "
          + (dialect == SqlDialect.MYSQL ? "database" : "schema") + "; qualify the table as schema.table", "3F000");
    }
    return new TableName(schema, folded.name());
  }

  /** The outbox's lock from the registry, or null when the table is not registered as an outbox. */
  private String outboxLock(TableName table) throws SQLException {
    if (!OutboxDdl.REGISTRY_MODE.equals(base.registryMode(table))) {
      return null;
    }
    try (PreparedStatement ps = connection.prepareStatement("SELECT lock_name FROM " + table.schemaPrefix(dialect)
        + SqlFenceDdl.REGISTRY_TABLE + " WHERE table_schema = ? AND table_name = ? AND mode = ?")) {
      ps.setString(1, table.schema());
      ps.setString(2, table.name());
      ps.setString(3, OutboxDdl.REGISTRY_MODE);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  private long count(TableName table, String where) throws SQLException {
    try (java.sql.Statement st = connection.createStatement();
        ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM " + table.sql(dialect) + where)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** Which of {@code wanted} the table lacks (names compared ignoring case). */
  private List<String> missing(TableName table, List<String> wanted) throws SQLException {
    Set<String> present = new LinkedHashSet<>();
    DatabaseMetaData md = connection.getMetaData();
    String catalog = dialect == SqlDialect.MYSQL ? table.schema() : null;
    String schema = dialect == SqlDialect.MYSQL ? null : table.schema();
    try (ResultSet rs = md.getColumns(catalog, schema, table.name(), null)) {
      while (rs.next()) {
        if (rs.getString("TABLE_NAME").equals(table.name())) {
          present.add(rs.getString("COLUMN_NAME").toLowerCase(Locale.ROOT));
        }
      }
    }
    List<String> out = new ArrayList<>();
    for (String column : wanted) {
      if (!present.contains(column)) {
        out.add(column);
      }
    }
    return out;
  }
}
