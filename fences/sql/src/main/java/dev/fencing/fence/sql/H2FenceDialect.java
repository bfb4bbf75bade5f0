package dev.fencing.fence.sql;

import static dev.fencing.fence.sql.SqlFenceDdl.H2_STRIPES;
import static dev.fencing.fence.sql.SqlFenceDdl.H2_TRIGGER_CLASS;
import static dev.fencing.fence.sql.SqlFenceDdl.H2_TRIGGER_PREFIX;
import static dev.fencing.fence.sql.SqlFenceDdl.STRIPE_TABLE;
import static dev.fencing.fence.sql.SqlFenceDdl.literal;

import dev.fencing.fence.sql.SqlFenceDdl.Kind;
import dev.fencing.fence.sql.SqlFenceDdl.Statement;
import dev.fencing.fence.store.SqlDialect;
import java.util.List;

/**
 * The SQL fence on H2: one Java trigger ({@link H2FenceTrigger}) per table whose name carries the configuration, and
 * stripe rows that stand in for a shared lock; no routines, no privileges; the catalog read is
 * {@code INFORMATION_SCHEMA.TRIGGERS}.
 */
final class H2FenceDialect extends FenceDialect {

  H2FenceDialect() {
    super(SqlDialect.H2);
  }

  @Override
  void install(SqlFence fence, boolean addTokenColumn, List<Statement> out) {
    String s = fence.table().schemaPrefix(dialect);
    String t = fence.table().sql(dialect);
    shared(fence, out);
    if (fence.perRow() && addTokenColumn) {
      tokenColumn(t, out);
    }
    String name = triggerName(fence);
    out.add(new Statement(Kind.TRIGGER, name, fenceSql.render("trigger", "schema", s, "trigger",
        dialect.quote(name), "table", t, "trigger_class", literal(H2_TRIGGER_CLASS))));
    register(fence, out);
  }

  @Override
  void shared(SqlFence fence, List<Statement> out) {
    String s = fence.table().schemaPrefix(dialect);
    String lock = literal(fence.lock());
    tables(s, out);
    out.add(seed(fence));
    StringBuilder rows = new StringBuilder();
    for (int i = 0; i < H2_STRIPES; i++) {
      rows.append(i == 0 ? "" : ", ").append('(').append(lock).append(", ").append(i).append(')');
    }
    out.add(new Statement(Kind.SEED, STRIPE_TABLE, fenceSql.render("seed_stripes", "schema", s,
        "rows", rows.toString())));
  }

  /** H2's stripe rows carry no token (the trigger reads the fence row), hence no grant either. */
  @Override
  void stripeTable(String s, List<Statement> out) {
    out.add(new Statement(Kind.FENCE_TABLE, STRIPE_TABLE, fenceSql.render("stripe_table", "schema", s)));
  }

  @Override
  List<String> triggerNames(SqlFence fence) {
    return List.of(triggerName(fence));
  }

  /**
   * H2 hands a trigger class only its names, so the trigger name carries the configuration:
   * {@code fencing:<table|row>[-permissive]:<lock>:<table>}. {@link H2FenceTrigger} parses it back.
   */
  static String triggerName(SqlFence fence) {
    return H2_TRIGGER_PREFIX + (fence.perRow() ? "row" : "table") + (fence.permissive() ? "-permissive" : "") + ":"
        + fence.lock() + ":" + fence.table().name();
  }

  @Override
  String dropTrigger(String trigger, String table, String s) {
    return uninstallSql.render("drop_trigger", "schema", s, "trigger", trigger);
  }

  @Override
  void dropShared(String s, List<Statement> out) {
    out.add(dropTable(s, STRIPE_TABLE));
  }

  @Override
  String currentSchema() {
    return "CURRENT_SCHEMA";
  }

  @Override
  String triggersOnTableQuery() {
    return "SELECT DISTINCT TRIGGER_NAME FROM INFORMATION_SCHEMA.TRIGGERS"
        + " WHERE EVENT_OBJECT_SCHEMA = ? AND EVENT_OBJECT_TABLE = ? AND TRIGGER_NAME LIKE 'fencing:%'"
        + " ORDER BY 1";
  }

  @Override
  String triggersInSchemaQuery() {
    return "SELECT COUNT(DISTINCT TRIGGER_NAME) FROM INFORMATION_SCHEMA.TRIGGERS"
        + " WHERE TRIGGER_SCHEMA = ? AND TRIGGER_NAME LIKE 'fencing:%'";
  }
}
