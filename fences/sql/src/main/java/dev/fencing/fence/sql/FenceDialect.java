package dev.fencing.fence.sql;

import static dev.fencing.fence.sql.SqlFenceDdl.FENCE_TABLE;
import static dev.fencing.fence.sql.SqlFenceDdl.GRANT_COLUMN;
import static dev.fencing.fence.sql.SqlFenceDdl.GRANT_TOKEN_COLUMN;
import static dev.fencing.fence.sql.SqlFenceDdl.REGISTRY_TABLE;
import static dev.fencing.fence.sql.SqlFenceDdl.TOKEN_COLUMN;
import static dev.fencing.fence.sql.SqlFenceDdl.TRIGGER_PREFIX;
import static dev.fencing.fence.sql.SqlFenceDdl.literal;

import dev.fencing.fence.sql.SqlFenceDdl.Kind;
import dev.fencing.fence.sql.SqlFenceDdl.Statement;
import dev.fencing.fence.store.SqlDialect;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Locale;

/**
 * The SQL fence on one kind of database ({@link PostgresFenceDialect}, {@link MariaDbFenceDialect},
 * {@link H2FenceDialect}): its DDL templates ({@code <dialect>/fence.sql} and {@code uninstall.sql}, see
 * {@link SqlTemplate}), the statements that install it, its privileges, and the catalog queries that find what is
 * installed. What every dialect's fence has (the fence table, the registry, the lock's row, the token column) is
 * rendered here from each dialect's own template.
 */
abstract class FenceDialect {
  final SqlDialect dialect;
  /** {@code <dialect>/fence.sql}: what install creates. */
  final SqlTemplate fenceSql;
  /** {@code <dialect>/uninstall.sql}: what uninstall drops. */
  final SqlTemplate uninstallSql;

  FenceDialect(SqlDialect dialect) {
    this.dialect = dialect;
    this.fenceSql = SqlTemplate.load(dialect.cliName() + "/fence.sql");
    this.uninstallSql = SqlTemplate.load(dialect.cliName() + "/uninstall.sql");
  }

  static FenceDialect of(SqlDialect dialect) {
    switch (dialect) {
      case POSTGRESQL:
        return new PostgresFenceDialect();
      case MYSQL:
        return new MariaDbFenceDialect();
      default:
        return new H2FenceDialect();
    }
  }

  // ------------------------------------------------------------------------------------------------------------ DDL

  /** The statements that install {@code fence}, in the order {@link SqlFenceDdl#install} documents. */
  abstract void install(SqlFence fence, boolean addTokenColumn, List<Statement> out);

  /**
   * What every fence of the lock in the table's schema shares, in install order: the fence tables (with the grant
   * columns), the lock's rows, the routines. The outbox ({@link OutboxDdl}) installs them too.
   */
  abstract void shared(SqlFence fence, List<Statement> out);

  /** The triggers {@link #install} creates for {@code fence}, by name. */
  abstract List<String> triggerNames(SqlFence fence);

  /** The privileges on the fence's objects in the schema {@code s} (a schema prefix); none by default. */
  List<Statement> privileges(String s) {
    return List.of();
  }

  /** Drops {@code trigger} (a quoted name) from {@code table} in the schema {@code s}. */
  abstract String dropTrigger(String trigger, String table, String s);

  /** The fence's shared objects between the registry and the fence table: routines, stripe table. */
  abstract void dropShared(String s, List<Statement> out);

  /** The schema (or database) unqualified objects go to, as a SQL value. */
  abstract String currentSchema();

  /** Put before the first privilege statement of {@code sql print}; null for none. */
  String printNote() {
    return null;
  }

  /** The statement terminator of a script; a dialect whose bodies contain semicolons needs another. */
  String scriptDelimiter() {
    return null;
  }

  /** The fence table, the dialect's stripe table, the registry, with the grant columns. */
  void tables(String s, List<Statement> out) {
    out.add(new Statement(Kind.FENCE_TABLE, FENCE_TABLE, fenceSql.render("fence_table", "schema", s)));
    grantColumns(s, FENCE_TABLE, out);
    stripeTable(s, out);
    out.add(new Statement(Kind.FENCE_TABLE, REGISTRY_TABLE, fenceSql.render("registry_table", "schema", s)));
  }

  /** The rows locked FOR UPDATE that stand in for a shared lock, where the dialect has them; none by default. */
  void stripeTable(String s, List<Statement> out) {
  }

  /** The grant columns for a fence table an earlier release created (the installer skips those present). */
  void grantColumns(String s, String table, List<Statement> out) {
    out.add(new Statement(Kind.FENCE_COLUMN, table + "." + GRANT_COLUMN,
        fenceSql.render("add_grant_column", "schema", s, "name", table)));
    out.add(new Statement(Kind.FENCE_COLUMN, table + "." + GRANT_TOKEN_COLUMN,
        fenceSql.render("add_grant_token_column", "schema", s, "name", table)));
  }

  /** The lock's fence row at token 0 (no write yet), so that writers find a row to lock from the first write on. */
  Statement seed(SqlFence fence) {
    return new Statement(Kind.SEED, FENCE_TABLE, fenceSql.render("seed", "schema",
        fence.table().schemaPrefix(dialect), "lock", literal(fence.lock())));
  }

  /** PostgreSQL and H2: the token column, then its comment that marks it as the installer's. */
  void tokenColumn(String t, List<Statement> out) {
    out.add(new Statement(Kind.TOKEN_COLUMN, TOKEN_COLUMN, fenceSql.render("add_token_column", "table", t)));
    out.add(new Statement(Kind.TOKEN_COLUMN, TOKEN_COLUMN, fenceSql.render("comment_token_column", "table", t)));
  }

  /**
   * Upserts the table's registry row for this lock (an unchanged re-install leaves {@code installed_at}), and
   * deletes rows for other locks (a table has one fence; another lock replaces the triggers).
   */
  void register(SqlFence fence, List<Statement> out) {
    register(fence, fence.perRow() ? "row" : "table", out);
  }

  /** {@link #register(SqlFence, List)} with the registry's mode: 'table', 'row' or 'outbox'. */
  void register(SqlFence fence, String mode, List<Statement> out) {
    TableName table = fence.table();
    String s = table.schemaPrefix(dialect);
    String schema = schemaValue(table);
    String name = literal(table.name());
    String lock = literal(fence.lock());
    out.add(new Statement(Kind.REGISTER, REGISTRY_TABLE, fenceSql.render("unregister_other_locks", "schema", s,
        "table_schema", schema, "table_name", name, "lock", lock)));
    out.add(new Statement(Kind.REGISTER, REGISTRY_TABLE, fenceSql.render("register", "schema", s,
        "table_schema", schema, "table_name", name, "lock", lock, "mode", literal(mode))));
  }

  /**
   * The table's schema as a SQL value: the literal when the name is qualified (the installer always qualifies), else
   * the session's current schema or database ({@link #currentSchema}), where the unqualified objects go.
   */
  String schemaValue(TableName table) {
    return table.schema() != null ? literal(table.schema()) : currentSchema();
  }

  Statement dropTable(String s, String name) {
    return new Statement(Kind.DROP_FENCE_TABLE, name, uninstallSql.render("drop_table", "schema", s, "name", name));
  }

  /** What a trigger name's hash covers beside lock, table and options; nothing by default. */
  String hashedNameSuffix() {
    return "";
  }

  /**
   * {@code fencing_<table>_<kind>_<hash>}: the hash covers lock, table and options, so changed options give new names;
   * the table part is cut so that the name fits the database's limit.
   */
  String hashedName(SqlFence fence, String kind, int limit) {
    return hashedName(fence, kind, limit, "");
  }

  /** As above, the hash also covering {@code body}: what a trigger does, when a new body needs a new name. */
  String hashedName(SqlFence fence, String kind, int limit, String body) {
    String hash = hash(dialect + "|" + fence.table() + "|" + fence.lock() + "|" + fence.perRow() + "|"
        + fence.permissive() + hashedNameSuffix() + body);
    String table = fence.table().name().toLowerCase(Locale.ROOT);
    int room = limit - TRIGGER_PREFIX.length() - kind.length() - hash.length() - 2;
    if (table.length() > room) {
      table = table.substring(0, room);
    }
    return TRIGGER_PREFIX + table + "_" + kind + "_" + hash;
  }

  private static String hash(String text) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
      StringBuilder b = new StringBuilder();
      for (int i = 0; i < 4; i++) {
        b.append(Character.forDigit((digest[i] >> 4) & 0xf, 16)).append(Character.forDigit(digest[i] & 0xf, 16));
      }
      return b.toString();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JDK", e);
    }
  }

  // ------------------------------------------------------------------------------------------------------- catalog

  /** Lists the fence's triggers on one table: parameters schema, table; one name per row, ordered. */
  abstract String triggersOnTableQuery();

  /** Counts the fence's triggers in a schema: parameter schema. */
  abstract String triggersInSchemaQuery();

  /** The fence's routines already in the table's schema, which an install leaves as they are; none by default. */
  List<String> existingRoutines(Connection connection, TableName table) throws SQLException {
    return List.of();
  }

  /** What the fence's routines are called in the installing user's missing privileges. */
  String routinesWord() {
    return "functions";
  }

  /**
   * Whether the install runs its privilege statements after the rest, each allowed to fail ({@link #privilegeReport}
   * tries them), rather than as part of the install.
   */
  boolean privilegesMayFail() {
    return false;
  }

  /**
   * What a DBA should know about privileges after an install that ran {@code executed}: who the fence runs as, and
   * what writers need. {@code grants} are the privilege statements left for it to try ({@link #privilegesMayFail}).
   * Nothing by default.
   */
  List<String> privilegeReport(Connection connection, TableName table, List<Statement> grants, List<String> executed)
      throws SQLException {
    return List.of();
  }
}
