package dev.fencing.fence.sql;

import static dev.fencing.fence.sql.SqlFenceDdl.H2_TRIGGER_PREFIX;
import static dev.fencing.fence.sql.SqlFenceDdl.literal;

import dev.fencing.fence.sql.SqlFenceDdl.Kind;
import dev.fencing.fence.sql.SqlFenceDdl.Statement;
import dev.fencing.fence.store.SqlDialect;
import dev.fencing.protocol.OutboxSchema;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The DDL of the tokened outbox ({@code sql install --outbox}) and of a receiver's processed-events table
 * ({@code sql install --processed-events}), from the resource {@code dev/fencing/fence/sql/<dialect>/outbox.sql}
 * (see {@link SqlTemplate}). The outbox's inserts are guarded by the table-mode, strict SQL fence of its lock: the
 * fence's shared objects come first ({@link FenceDialect#shared}), then the outbox, its ordering counter table, its
 * routines (PostgreSQL) and triggers, the registry row (mode {@value #REGISTRY_MODE}) and the privileges.
 */
public final class OutboxDdl {

  /** The registry's mode of an outbox (beside 'table' and 'row'): a fenced table whose inserts need the lock. */
  public static final String REGISTRY_MODE = "outbox";
  /** The H2 trigger class, by name (see {@link SqlFenceDdl#H2_TRIGGER_CLASS} for why). */
  static final String H2_OUTBOX_TRIGGER_CLASS = "dev.fencing.fence.sql.H2OutboxTrigger";
  /** H2 trigger names: {@code fencing:outbox:<lock>:<table>}, parsed back by {@code H2OutboxTrigger}. */
  static final String H2_OUTBOX_KIND = "outbox";

  private final SqlDialect dialect;
  private final FenceDialect fence;
  private final SqlFenceDdl fenceDdl;
  private final SqlTemplate sql;

  public OutboxDdl(SqlDialect dialect) {
    this.dialect = Objects.requireNonNull(dialect, "dialect");
    this.fenceDdl = new SqlFenceDdl(dialect);
    this.fence = fenceDdl.fenceDialect();
    this.sql = SqlTemplate.load(dialect.cliName() + "/outbox.sql");
  }

  /**
   * The statements that install {@code outbox}, in order: the fence's shared objects, the outbox and its counter table
   * and index, the routines (PostgreSQL), the triggers, the registry row, the privileges. Each is idempotent.
   */
  public List<Statement> install(SqlOutbox outbox) {
    SqlFence guard = outbox.fence();
    TableName table = outbox.table();
    String s = table.schemaPrefix(dialect);
    String t = table.sql(dialect);
    String keyTable = outbox.keyTable().sql(dialect);
    List<Statement> out = new ArrayList<>();
    fence.shared(guard, out);
    String index = dialect.quote(outbox.pendingIndex());
    if (dialect == SqlDialect.MYSQL) {
      // MySQL has no CREATE INDEX IF NOT EXISTS: the index is part of the table's definition.
      out.add(new Statement(Kind.OUTBOX_TABLE, table.name(), sql.render("outbox_table", "outbox", t, "index",
          index)));
    } else {
      out.add(new Statement(Kind.OUTBOX_TABLE, table.name(), sql.render("outbox_table", "outbox", t)));
      out.add(new Statement(Kind.OUTBOX_TABLE, outbox.pendingIndex(), sql.render("pending_index", "outbox", t,
          "index", index)));
    }
    // An outbox of an earlier release lacks the fencing column; the installer runs this only when it is missing.
    out.add(new Statement(Kind.FENCE_COLUMN, table.name() + "." + OutboxSchema.FENCING,
        sql.render("add_fencing_column", "outbox", t)));
    out.add(new Statement(Kind.OUTBOX_TABLE, outbox.keyTable().name(), sql.render("key_table", "key_table",
        keyTable)));
    List<String> names = triggerNames(outbox);
    String lock = literal(guard.lock());
    switch (dialect) {
      case POSTGRESQL: {
        String definer = table.schema() == null ? ""
            : sql.render("security_definer", "search_path", dialect.quote(table.schema()));
        out.add(new Statement(Kind.ROUTINE, "fencing_outbox_insert", sql.render("insert_function", "schema", s,
            "security_definer", definer)));
        if (table.schema() == null) {
          out.add(new Statement(Kind.ROUTINE, "fencing_outbox_insert", sql.render("definer_in_current_schema")));
        }
        out.add(new Statement(Kind.ROUTINE, "fencing_outbox_update", sql.render("update_function", "schema", s)));
        out.add(new Statement(Kind.ROUTINE, "fencing_outbox_notify", sql.render("notify_function", "schema", s)));
        out.add(trigger(names.get(0), "trigger_fence", "outbox", t, "schema", s, "lock", lock));
        out.add(trigger(names.get(1), "trigger_insert", "outbox", t, "schema", s, "lock", lock,
            "key_name", literal(outbox.keyTable().name())));
        out.add(trigger(names.get(2), "trigger_update", "outbox", t, "schema", s));
        out.add(trigger(names.get(3), "trigger_notify", "outbox", t, "schema", s,
            "channel", literal(outbox.notifyChannel())));
        break;
      }
      case MYSQL: {
        String where = literal(table.toString());
        out.add(trigger(names.get(0), "trigger_insert", "schema", s, "outbox", t, "key_table", keyTable,
            "lock", lock, "table_name", where));
        out.add(trigger(names.get(1), "trigger_update", "schema", s, "outbox", t, "table_name", where));
        break;
      }
      default:
        out.add(trigger(names.get(0), "trigger", "schema", s, "outbox", t,
            "trigger_class", literal(H2_OUTBOX_TRIGGER_CLASS)));
    }
    fence.register(guard, REGISTRY_MODE, out);
    out.addAll(fence.privileges(s));
    if (dialect == SqlDialect.POSTGRESQL) {
      out.add(new Statement(Kind.PRIVILEGE, "fencing_outbox_insert", sql.render("revoke_insert_function",
          "schema", s)));
    }
    return out;
  }

  private Statement trigger(String name, String section, String... params) {
    String[] all = new String[params.length + 2];
    all[0] = "trigger";
    all[1] = dialect.quote(name);
    System.arraycopy(params, 0, all, 2, params.length);
    return new Statement(Kind.TRIGGER, name, sql.render(section, all));
  }

  /** The outbox's triggers, by name: all start as the fence's do, so the agent counts the outbox as fenced. */
  public List<String> triggerNames(SqlOutbox outbox) {
    SqlFence guard = outbox.fence();
    switch (dialect) {
      case POSTGRESQL:
        return List.of(fence.hashedName(guard, "ofence", 63), fence.hashedName(guard, "oins", 63),
            fence.hashedName(guard, "oupd", 63), fence.hashedName(guard, "onotify", 63));
      case MYSQL:
        // A new trigger body gets a new name, so that a re-install replaces an earlier release's trigger: the insert
        // trigger writes UTC times (not the session's local time) and the fencing column, the update trigger guards it.
        return List.of(fence.hashedName(guard, "obi", 63, "|utc|fencing"), fence.hashedName(guard, "obu", 63,
            "|fencing"));
      default:
        return List.of(H2_TRIGGER_PREFIX + H2_OUTBOX_KIND + ":" + guard.lock() + ":" + outbox.table().name());
    }
  }

  /** {@code sql print --outbox}: the install script, names folded as the database folds unquoted ones. */
  public String forPrint(SqlOutbox outbox) {
    return fenceDdl.script(install(outbox.withTable(outbox.table().folded(dialect))));
  }

  /**
   * The statements that remove {@code outbox} (its triggers go with it) and its counter table; the installer
   * unregisters it and drops the fence's shared objects when no fenced table is left in the schema.
   */
  public List<Statement> uninstall(SqlOutbox outbox) {
    return List.of(
        new Statement(Kind.DROP_OUTBOX_TABLE, outbox.table().name(), sql.render("drop_table", "table",
            outbox.table().sql(dialect))),
        new Statement(Kind.DROP_OUTBOX_TABLE, outbox.keyTable().name(), sql.render("drop_table", "table",
            outbox.keyTable().sql(dialect))));
  }

  /** A receiver's processed-events table: the event ids it has applied, one row each. */
  public List<Statement> installProcessedEvents(TableName table) {
    return List.of(new Statement(Kind.OUTBOX_TABLE, table.name(), sql.render("processed_events_table", "table",
        table.sql(dialect))));
  }

  /** {@code sql print --processed-events}. */
  public String forPrintProcessedEvents(TableName table) {
    return fenceDdl.script(installProcessedEvents(table.folded(dialect)));
  }

  public List<Statement> uninstallProcessedEvents(TableName table) {
    return List.of(new Statement(Kind.DROP_OUTBOX_TABLE, table.name(), sql.render("drop_table", "table",
        table.sql(dialect))));
  }

  /**
   * {@link ProcessedEvents}' insert of one event id (parameter 1) that reports 1 row the first time and 0 (or, on H2,
   * a duplicate-key error the caller reads as 0) after; {@code table} unquoted, as the application names it.
   */
  String markProcessed(TableName table) {
    return sql.render("mark_processed", "table", table.toString());
  }

  SqlFenceDdl fenceDdl() {
    return fenceDdl;
  }
}
