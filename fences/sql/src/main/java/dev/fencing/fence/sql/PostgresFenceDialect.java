package dev.fencing.fence.sql;

import static dev.fencing.fence.sql.SqlFenceDdl.FENCE_TABLE;
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

/**
 * The SQL fence on PostgreSQL: PL/pgSQL functions (the table-mode check SECURITY DEFINER with its search path
 * pinned), statement or row and TRUNCATE triggers, every role allowed to read the fence and the registry, EXECUTE on
 * the check taken from PUBLIC; the catalogs read are {@code pg_trigger}, {@code pg_proc} and the fence table's ACL.
 */
final class PostgresFenceDialect extends FenceDialect {
  private static final List<String> FUNCTIONS = List.of("fencing_check", "fencing_check_row",
      "fencing_check_truncate", "fencing_outbox_insert", "fencing_outbox_update", "fencing_outbox_notify");

  PostgresFenceDialect() {
    super(SqlDialect.POSTGRESQL);
  }

  @Override
  void install(SqlFence fence, boolean addTokenColumn, List<Statement> out) {
    String s = fence.table().schemaPrefix(dialect);
    String t = fence.table().sql(dialect);
    shared(fence, out);
    if (fence.perRow() && addTokenColumn) {
      tokenColumn(t, out);
    }
    List<String> names = triggerNames(fence);
    String lock = literal(fence.lock());
    String strictness = literal(fence.permissive() ? "permissive" : "strict");
    List<String> sections = fence.perRow() ? List.of("trigger_row", "trigger_truncate") : List.of("trigger_table");
    for (int i = 0; i < names.size(); i++) {
      out.add(new Statement(Kind.TRIGGER, names.get(i), fenceSql.render(sections.get(i), "trigger",
          dialect.quote(names.get(i)), "table", t, "schema", s, "lock", lock, "strictness", strictness)));
    }
    register(fence, out);
    out.addAll(privileges(s));
  }

  @Override
  void shared(SqlFence fence, List<Statement> out) {
    String s = fence.table().schemaPrefix(dialect);
    String schema = fence.table().schema();
    tables(s, out);
    out.add(seed(fence));
    // The table-mode check runs as its owner, with the search path pinned to its schema. When the schema is not
    // known (sql print of an unqualified name), a DO block does both in the schema the function was created in.
    String definer = schema == null ? "" : fenceSql.render("security_definer", "search_path", dialect.quote(schema));
    String hint = "SELECT f.token FROM " + s + FENCE_TABLE + " f WHERE f.lock_name = v_lock";
    String exitStatement = fenceSql.render("permissive_exit_statement");
    out.add(new Statement(Kind.ROUTINE, "fencing_check", fenceSql.render("check", "schema", s,
        "security_definer", definer, "validate_token", validate(hint, exitStatement),
        "validate_grant", fenceSql.render("validate_grant"))));
    if (schema == null) {
      out.add(new Statement(Kind.ROUTINE, "fencing_check", fenceSql.render("definer_in_current_schema")));
    }
    out.add(new Statement(Kind.ROUTINE, "fencing_check_row", fenceSql.render("check_row", "schema", s,
        "validate_token", validate("v_row", fenceSql.render("permissive_exit_row")))));
    out.add(new Statement(Kind.ROUTINE, "fencing_check_truncate", fenceSql.render("check_truncate", "schema", s,
        "validate_token", validate("v_row", exitStatement))));
  }

  /**
   * The token validation the three functions share; {@code current} is an expression for the fence token the
   * messages show, {@code permissiveExit} what a permissive function does without a token.
   */
  private String validate(String current, String permissiveExit) {
    return fenceSql.render("validate_token", "current", current, "permissive_exit", permissiveExit);
  }

  @Override
  List<String> triggerNames(SqlFence fence) {
    return fence.perRow()
        ? List.of(hashedName(fence, "row", 63), hashedName(fence, "truncate", 63))
        : List.of(hashedName(fence, "stmt", 63));
  }

  /**
   * Every role may read the fence and the registry, none but the owner change them; EXECUTE on the SECURITY DEFINER
   * function is taken from PUBLIC, so that nobody attaches it to a table of their own to move a lock's fence.
   */
  @Override
  List<Statement> privileges(String s) {
    List<Statement> out = new ArrayList<>();
    out.add(new Statement(Kind.PRIVILEGE, FENCE_TABLE, fenceSql.render("revoke_tables", "schema", s)));
    out.add(new Statement(Kind.PRIVILEGE, FENCE_TABLE, fenceSql.render("grant_select", "schema", s)));
    out.add(new Statement(Kind.PRIVILEGE, "fencing_check", fenceSql.render("revoke_check", "schema", s)));
    return out;
  }

  @Override
  String dropTrigger(String trigger, String table, String s) {
    return uninstallSql.render("drop_trigger", "trigger", trigger, "table", table);
  }

  @Override
  void dropShared(String s, List<Statement> out) {
    for (String f : FUNCTIONS) {
      out.add(new Statement(Kind.DROP_ROUTINE, f, uninstallSql.render("drop_function", "schema", s, "name", f)));
    }
  }

  @Override
  String currentSchema() {
    return "current_schema()";
  }

  @Override
  String triggersOnTableQuery() {
    return "SELECT DISTINCT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid"
        + " JOIN pg_namespace n ON n.oid = c.relnamespace"
        + " WHERE n.nspname = ? AND c.relname = ? AND NOT t.tgisinternal AND t.tgname LIKE 'fencing\\_%'"
        + " ORDER BY 1";
  }

  @Override
  String triggersInSchemaQuery() {
    return "SELECT count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid"
        + " JOIN pg_namespace n ON n.oid = c.relnamespace"
        + " WHERE n.nspname = ? AND NOT t.tgisinternal AND t.tgname LIKE 'fencing\\_%'";
  }

  /**
   * Who the fence runs as, and roles an earlier release's instructions made writers of the fence table (they need
   * nothing but SELECT now; left alone, since a JDBC fence store may write the table as such a role).
   */
  @Override
  List<String> privilegeReport(Connection connection, TableName table, List<Statement> grants, List<String> executed)
      throws SQLException {
    List<String> out = new ArrayList<>();
    String fence = table.schemaPrefix(dialect) + FENCE_TABLE;
    try (PreparedStatement ps = connection.prepareStatement("SELECT pg_get_userbyid(p.proowner) FROM pg_proc p"
        + " JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = ? AND p.proname = 'fencing_check'")) {
      ps.setString(1, table.schema());
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next()) {
          out.add("runs as: " + table.schemaPrefix(dialect) + "fencing_check() is SECURITY DEFINER, owned by "
              + rs.getString(1) + " (search_path pinned to " + dialect.quote(table.schema()) + ", pg_temp); writers "
              + "need only their DML rights on their own tables, nothing on the fence tables");
        }
      }
    }
    try (PreparedStatement ps = connection.prepareStatement("SELECT pg_get_userbyid(a.grantee),"
        + " string_agg(a.privilege_type, ', ' ORDER BY a.privilege_type) FROM pg_class c"
        + " JOIN pg_namespace n ON n.oid = c.relnamespace, aclexplode(c.relacl) a"
        + " WHERE n.nspname = ? AND c.relname = ? AND a.grantee <> 0 AND a.grantee <> c.relowner"
        + " AND a.privilege_type <> 'SELECT' GROUP BY 1 ORDER BY 1")) {
      ps.setString(1, table.schema());
      ps.setString(2, FENCE_TABLE);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add("note: role " + rs.getString(1) + " still has " + rs.getString(2) + " on " + fence
              + " (granted by hand; the SQL fence no longer needs it, and it lets that role move the fence: REVOKE "
              + "it unless a JDBC fence store writes the table as that role)");
        }
      }
    }
    return out;
  }
}
