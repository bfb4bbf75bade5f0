package dev.fencing.fence.sql;

import dev.fencing.fence.store.FenceSchema;
import dev.fencing.fence.store.SqlDialect;
import dev.fencing.protocol.SessionVariables;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Generates the DDL that installs and removes a fence (README.md in this module explains the design). The SQL itself
 * lives in resource files a DBA can review, one per dialect and purpose ({@code dev/fencing/fence/sql/<dialect>/
 * fence.sql} and {@code uninstall.sql}, see {@link SqlTemplate}); this class chooses the statements, quotes the names
 * and literals, and fills them in. The fence's own
 * objects (the {@code fencing_fence} table, the {@code fencing_fenced_table} registry, functions or procedures) live
 * in the protected table's schema, qualified
 * when the table name is; triggers are named after what they enforce, so that a re-install with other options creates
 * the new triggers before it drops the old ones and a table is never left unguarded.
 *
 * <p>Names are used verbatim (quoted): {@link #forPrint} folds them first, the installer passes the names the
 * database reported.
 */
public final class SqlFenceDdl {

  public static final String FENCE_TABLE = FenceSchema.FENCE_TABLE;
  /** H2 and MariaDB/MySQL: rows locked FOR UPDATE that stand in for a shared lock ({@link FenceSchema}). */
  public static final String STRIPE_TABLE = FenceSchema.STRIPE_TABLE;
  /**
   * The registry of fenced tables beside the fence table: one row per fenced (table, lock), names as the database
   * reports them, readable by every role (the agent finds fenced tables with it, whatever role it connects as).
   */
  public static final String REGISTRY_TABLE = "fencing_fenced_table";
  /** The column of {@value #FENCE_TABLE} (and the MariaDB/MySQL stripes) holding the grant of the fence's token. */
  public static final String GRANT_COLUMN = FenceSchema.GRANT_COLUMN;
  /** The token {@value #GRANT_COLUMN} was stored for: the grant counts only while it equals the row's token. */
  public static final String GRANT_TOKEN_COLUMN = FenceSchema.GRANT_TOKEN_COLUMN;
  /** PostgreSQL session setting with the grant id of the session's token (MariaDB/MySQL, H2: {@code @fencing_grant}). */
  public static final String PG_GRANT = SessionVariables.PG_GRANT;
  public static final String TOKEN_COLUMN = "fencing_token";
  /** Written into the comment of a token column the installer added, so that uninstall removes only that one. */
  public static final String COLUMN_MARK = "added by the fencing-agent SQL fence installer";
  /** Trigger names start with it (H2: {@value #H2_TRIGGER_PREFIX}); uninstall removes every such trigger. */
  public static final String TRIGGER_PREFIX = "fencing_";
  public static final String H2_TRIGGER_PREFIX = "fencing:";
  /**
   * The H2 trigger class, by name: naming {@code H2FenceTrigger.class} would load it, and it implements H2's trigger
   * interface, which the JVMs that print or install a fence need not have (the agent jar bundles no H2).
   */
  static final String H2_TRIGGER_CLASS = "dev.fencing.fence.sql.H2FenceTrigger";
  /** Stripes of the H2 fence: same-token writers of different sessions rarely share one. */
  public static final int H2_STRIPES = 8;
  /** Stripes of the MariaDB/MySQL fence, chosen by CONNECTION_ID(). */
  public static final int MYSQL_STRIPES = 16;
  /** First key of PostgreSQL's two-key advisory locks: "FENC", apart from the one-bigint key space applications use. */
  static final int PG_ADVISORY_CLASS = FenceSchema.PG_ADVISORY_CLASS;
  /**
   * PostgreSQL session setting the table-mode check writes itself (never a client): "lock:token:grant" this session
   * found equal to the fence (grant empty when the session has none), so that its next writes with the same lock,
   * token and grant skip the read that chooses the lock mode.
   */
  static final String PG_VERIFIED = "fencing.verified";

  /** What a statement does, so that the installer can skip what exists and undo what it created. */
  public enum Kind {
    FENCE_TABLE,
    /** A column added to a fence table an earlier release created; {@code object} is {@code table.column}. */
    FENCE_COLUMN,
    SEED, ROUTINE, TOKEN_COLUMN, TRIGGER,
    /** Writes the table's row of the registry ({@value #REGISTRY_TABLE}). */
    REGISTER,
    /** GRANT or REVOKE on the fence's objects. */
    PRIVILEGE,
    DROP_TRIGGER, DROP_TOKEN_COLUMN, DROP_ROUTINE, DROP_FENCE_TABLE
  }

  /** One DDL statement; {@code object} is the name of what it creates or drops. */
  public record Statement(Kind kind, String object, String sql) {
  }

  /**
   * Versioned: a release with other bodies adds a new version beside them instead of replacing them under live writes
   * (the installer never replaces an existing procedure). New triggers call {@link #MYSQL_CHECK}; the older check
   * procedures stay until the schema's last fence is uninstalled, for triggers an earlier release created.
   */
  static final List<String> MYSQL_PROCEDURES = List.of("fencing_check_v3", "fencing_check_v2", "fencing_check_v1",
      "fencing_session_token_v1", "fencing_reject_stale_v1");
  /**
   * The table-mode procedure the triggers call. Part of the trigger names' hash, so that a re-install after an
   * upgrade creates triggers calling the new procedure (before it drops the old ones) instead of keeping the old.
   */
  static final String MYSQL_CHECK = "fencing_check_v3";

  private static final List<String> PG_FUNCTIONS =
      List.of("fencing_check", "fencing_check_row", "fencing_check_truncate");

  /**
   * What may appear inside a SQL literal here: anything but a single quote, a backslash (an escape in MariaDB/MySQL)
   * and control characters. Schema names the database reports may hold any letters.
   */
  private static final Pattern LITERAL_SAFE = Pattern.compile("[^'\\\\\\p{Cntrl}]*");

  private final SqlDialect dialect;
  /** {@code <dialect>/fence.sql}: what install creates. */
  private final SqlTemplate fenceSql;
  /** {@code <dialect>/uninstall.sql}: what uninstall drops. */
  private final SqlTemplate uninstallSql;

  public SqlFenceDdl(SqlDialect dialect) {
    this.dialect = Objects.requireNonNull(dialect, "dialect");
    this.fenceSql = SqlTemplate.load(dialect.cliName() + "/fence.sql");
    this.uninstallSql = SqlTemplate.load(dialect.cliName() + "/uninstall.sql");
  }

  public SqlDialect dialect() {
    return dialect;
  }

  /**
   * {@code value} as a SQL string literal. Values here are lock names, table and schema names and fixed words, which
   * their own rules keep to plain characters; anything that would need escaping (a quote, a backslash, which
   * MariaDB/MySQL treat as an escape, a control character) is refused rather than escaped, as for names
   * ({@link TableName}).
   */
  static String literal(String value) {
    if (value == null || !LITERAL_SAFE.matcher(value).matches()) {
      throw new IllegalArgumentException("cannot put '" + value + "' in a SQL literal of the fence's DDL: expected no "
          + "single quote, backslash or control character");
    }
    return "'" + value + "'";
  }

  /**
   * The install script for a table that does not exist in the database at hand: names folded as the database folds
   * unquoted identifiers, token column added in per-row mode. This is what {@code sql print} shows.
   */
  public String forPrint(SqlFence fence) {
    List<Statement> statements = new ArrayList<>();
    boolean first = true;
    for (Statement st : install(fence.withTable(fence.table().folded(dialect)), fence.perRow())) {
      if (st.kind() == Kind.PRIVILEGE && dialect == SqlDialect.MYSQL && first) {
        first = false;
        st = new Statement(st.kind(), st.object(), fenceSql.render("public_grant_note") + "\n" + st.sql());
      }
      statements.add(st);
    }
    return script(statements);
  }

  /**
   * The statements that install {@code fence}, in order: fence tables (and the grant column for tables an earlier
   * release created), the lock's rows, functions or procedures, the token column (per-row mode, when
   * {@code addTokenColumn}), the triggers, the table's registry row, then the privileges (PostgreSQL and
   * MariaDB/MySQL: every role may read the fence and the registry, nothing more). Each is idempotent except the
   * column.
   */
  public List<Statement> install(SqlFence fence, boolean addTokenColumn) {
    List<Statement> out = new ArrayList<>();
    switch (dialect) {
      case POSTGRESQL:
        postgresInstall(fence, addTokenColumn, out);
        break;
      case MYSQL:
        mysqlInstall(fence, addTokenColumn, out);
        break;
      default:
        h2Install(fence, addTokenColumn, out);
        break;
    }
    return out;
  }

  /**
   * The statements that remove the named triggers from {@code table}, then the token column when
   * {@code dropTokenColumn}, then (when {@code dropShared}, i.e. no other table of the schema is fenced) the fence's
   * functions or procedures and the fence table.
   */
  public List<Statement> uninstall(TableName table, List<String> triggers, boolean dropTokenColumn,
      boolean dropShared) {
    List<Statement> out = new ArrayList<>();
    String t = table.sql(dialect);
    String s = table.schemaPrefix(dialect);
    for (String trigger : triggers) {
      String sql = dialect == SqlDialect.POSTGRESQL
          ? uninstallSql.render("drop_trigger", "trigger", dialect.quote(trigger), "table", t)
          : uninstallSql.render("drop_trigger", "schema", s, "trigger", dialect.quote(trigger));
      out.add(new Statement(Kind.DROP_TRIGGER, trigger, sql));
    }
    if (dropTokenColumn) {
      out.add(new Statement(Kind.DROP_TOKEN_COLUMN, TOKEN_COLUMN, uninstallSql.render("drop_token_column", "table", t,
          "column", dialect.quote(dialect.fold(TOKEN_COLUMN)))));
    }
    if (dropShared) {
      out.add(dropTable(s, REGISTRY_TABLE));
      if (dialect == SqlDialect.POSTGRESQL) {
        for (String f : PG_FUNCTIONS) {
          out.add(new Statement(Kind.DROP_ROUTINE, f, uninstallSql.render("drop_function", "schema", s, "name", f)));
        }
      } else {
        if (dialect == SqlDialect.MYSQL) {
          for (String p : MYSQL_PROCEDURES) {
            out.add(new Statement(Kind.DROP_ROUTINE, p, uninstallSql.render("drop_procedure", "schema", s, "name", p)));
          }
        }
        out.add(dropTable(s, STRIPE_TABLE));
      }
      out.add(dropTable(s, FENCE_TABLE));
    }
    return out;
  }

  private Statement dropTable(String s, String name) {
    return new Statement(Kind.DROP_FENCE_TABLE, name, uninstallSql.render("drop_table", "schema", s, "name", name));
  }

  /** Deletes the table's rows from the registry (uninstall; the installer runs it when the registry exists). */
  public Statement unregister(TableName table) {
    return new Statement(Kind.REGISTER, REGISTRY_TABLE, uninstallSql.render("unregister", "schema",
        table.schemaPrefix(dialect), "table_schema", schemaValue(table), "table_name", literal(table.name())));
  }

  /**
   * The table's schema as a SQL value: the literal when the name is qualified (the installer always qualifies), else
   * the session's current schema (PostgreSQL, H2) or database (MariaDB/MySQL), where the unqualified objects go.
   */
  private String schemaValue(TableName table) {
    if (table.schema() != null) {
      return literal(table.schema());
    }
    switch (dialect) {
      case POSTGRESQL:
        return "current_schema()";
      case MYSQL:
        return "DATABASE()";
      default:
        return "CURRENT_SCHEMA";
    }
  }

  /**
   * Upserts the table's registry row for this lock (an unchanged re-install leaves {@code installed_at}), and
   * deletes rows for other locks (a table has one fence; another lock replaces the triggers).
   */
  private void register(SqlFence fence, List<Statement> out) {
    TableName table = fence.table();
    String s = table.schemaPrefix(dialect);
    String schema = schemaValue(table);
    String name = literal(table.name());
    String lock = literal(fence.lock());
    out.add(new Statement(Kind.REGISTER, REGISTRY_TABLE, fenceSql.render("unregister_other_locks", "schema", s,
        "table_schema", schema, "table_name", name, "lock", lock)));
    out.add(new Statement(Kind.REGISTER, REGISTRY_TABLE, fenceSql.render("register", "schema", s,
        "table_schema", schema, "table_name", name, "lock", lock, "mode", literal(fence.perRow() ? "row" : "table"))));
  }

  /** The fence table, the stripe table (H2, MariaDB/MySQL) and the registry, with the grant columns. */
  private void tables(String s, List<Statement> out) {
    out.add(new Statement(Kind.FENCE_TABLE, FENCE_TABLE, fenceSql.render("fence_table", "schema", s)));
    grantColumns(s, FENCE_TABLE, out);
    if (dialect != SqlDialect.POSTGRESQL) {
      out.add(new Statement(Kind.FENCE_TABLE, STRIPE_TABLE, fenceSql.render("stripe_table", "schema", s)));
      if (dialect == SqlDialect.MYSQL) {
        // H2's stripe rows carry no token (the trigger reads the fence row), hence no grant either.
        grantColumns(s, STRIPE_TABLE, out);
      }
    }
    out.add(new Statement(Kind.FENCE_TABLE, REGISTRY_TABLE, fenceSql.render("registry_table", "schema", s)));
  }

  /** The grant columns for a fence table an earlier release created (the installer skips those present). */
  private void grantColumns(String s, String table, List<Statement> out) {
    out.add(new Statement(Kind.FENCE_COLUMN, table + "." + GRANT_COLUMN,
        fenceSql.render("add_grant_column", "schema", s, "name", table)));
    out.add(new Statement(Kind.FENCE_COLUMN, table + "." + GRANT_TOKEN_COLUMN,
        fenceSql.render("add_grant_token_column", "schema", s, "name", table)));
  }

  /**
   * Every role may read the fence and the registry (fence detection), no role but the owner may change them: the
   * fence function runs as its owner. PostgreSQL also takes EXECUTE on the SECURITY DEFINER function from PUBLIC, so
   * that nobody attaches it to a table of their own to move a lock's fence. MariaDB 10.11+ knows PUBLIC; the
   * installer leaves these out on MySQL and older MariaDB and says so.
   */
  public List<Statement> privileges(TableName table) {
    String s = table.schemaPrefix(dialect);
    List<Statement> out = new ArrayList<>();
    if (dialect == SqlDialect.POSTGRESQL) {
      out.add(new Statement(Kind.PRIVILEGE, FENCE_TABLE, fenceSql.render("revoke_tables", "schema", s)));
      out.add(new Statement(Kind.PRIVILEGE, FENCE_TABLE, fenceSql.render("grant_select", "schema", s)));
      out.add(new Statement(Kind.PRIVILEGE, "fencing_check", fenceSql.render("revoke_check", "schema", s)));
    } else if (dialect == SqlDialect.MYSQL) {
      // MariaDB/MySQL table grants need a database: db.table, or the current database's table.
      for (String t : List.of(FENCE_TABLE, REGISTRY_TABLE)) {
        out.add(new Statement(Kind.PRIVILEGE, t, fenceSql.render("grant_select", "schema", s, "name", t)));
      }
    }
    return out;
  }

  /** The triggers {@link #install} creates for {@code fence}, by name. */
  public List<String> triggerNames(SqlFence fence) {
    switch (dialect) {
      case POSTGRESQL:
        return fence.perRow()
            ? List.of(hashedName(fence, "row", 63), hashedName(fence, "truncate", 63))
            : List.of(hashedName(fence, "stmt", 63));
      case MYSQL:
        return List.of(hashedName(fence, "bi", 63), hashedName(fence, "bu", 63), hashedName(fence, "bd", 63));
      default:
        return List.of(h2TriggerName(fence));
    }
  }

  /**
   * Statements as one script: separated by semicolons, and for MariaDB/MySQL wrapped in {@code DELIMITER} commands
   * because procedure and trigger bodies contain semicolons (the mysql client and Flyway understand them).
   */
  public String script(List<Statement> statements) {
    StringBuilder b = new StringBuilder();
    String terminator = ";";
    if (dialect == SqlDialect.MYSQL) {
      b.append("DELIMITER $$\n\n");
      terminator = "$$";
    }
    for (Statement st : statements) {
      b.append(st.sql()).append(terminator).append("\n\n");
    }
    if (dialect == SqlDialect.MYSQL) {
      b.append("DELIMITER ;\n");
    }
    return b.toString();
  }

  // ---------------------------------------------------------------------------------------------------- PostgreSQL

  private void postgresInstall(SqlFence fence, boolean addTokenColumn, List<Statement> out) {
    String s = fence.table().schemaPrefix(dialect);
    String t = fence.table().sql(dialect);
    String schema = fence.table().schema();
    tables(s, out);
    out.add(seed(fence));
    // The table-mode check runs as its owner, with the search path pinned to its schema. When the schema is not
    // known (sql print of an unqualified name), a DO block does both in the schema the function was created in.
    String definer = schema == null ? "" : fenceSql.render("security_definer", "search_path", dialect.quote(schema));
    String hint = "SELECT f.token FROM " + s + FENCE_TABLE + " f WHERE f.lock_name = v_lock";
    String exitStatement = fenceSql.render("permissive_exit_statement");
    out.add(new Statement(Kind.ROUTINE, "fencing_check", fenceSql.render("check", "schema", s,
        "security_definer", definer, "validate_token", pgValidate(hint, exitStatement),
        "validate_grant", fenceSql.render("validate_grant"))));
    if (schema == null) {
      out.add(new Statement(Kind.ROUTINE, "fencing_check", fenceSql.render("definer_in_current_schema")));
    }
    out.add(new Statement(Kind.ROUTINE, "fencing_check_row", fenceSql.render("check_row", "schema", s,
        "validate_token", pgValidate("v_row", fenceSql.render("permissive_exit_row")))));
    out.add(new Statement(Kind.ROUTINE, "fencing_check_truncate", fenceSql.render("check_truncate", "schema", s,
        "validate_token", pgValidate("v_row", exitStatement))));
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
    out.addAll(privileges(fence.table()));
  }

  /**
   * The token validation the three PostgreSQL functions share; {@code current} is an expression for the fence token
   * the messages show, {@code permissiveExit} what a permissive function does without a token.
   */
  private String pgValidate(String current, String permissiveExit) {
    return fenceSql.render("validate_token", "current", current, "permissive_exit", permissiveExit);
  }

  // --------------------------------------------------------------------------------------------------- MariaDB/MySQL

  private void mysqlInstall(SqlFence fence, boolean addTokenColumn, List<Statement> out) {
    String s = fence.table().schemaPrefix(dialect);
    String t = fence.table().sql(dialect);
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
    out.addAll(privileges(fence.table()));
  }

  // -------------------------------------------------------------------------------------------------------------- H2

  private void h2Install(SqlFence fence, boolean addTokenColumn, List<Statement> out) {
    String s = fence.table().schemaPrefix(dialect);
    String t = fence.table().sql(dialect);
    String lock = literal(fence.lock());
    tables(s, out);
    out.add(seed(fence));
    StringBuilder rows = new StringBuilder();
    for (int i = 0; i < H2_STRIPES; i++) {
      rows.append(i == 0 ? "" : ", ").append('(').append(lock).append(", ").append(i).append(')');
    }
    out.add(new Statement(Kind.SEED, STRIPE_TABLE, fenceSql.render("seed_stripes", "schema", s,
        "rows", rows.toString())));
    if (fence.perRow() && addTokenColumn) {
      tokenColumn(t, out);
    }
    String name = h2TriggerName(fence);
    out.add(new Statement(Kind.TRIGGER, name, fenceSql.render("trigger", "schema", s, "trigger",
        dialect.quote(name), "table", t, "trigger_class", literal(H2_TRIGGER_CLASS))));
    register(fence, out);
  }

  /**
   * H2 hands a trigger class only its names, so the trigger name carries the configuration:
   * {@code fencing:<table|row>[-permissive]:<lock>:<table>}. {@link H2FenceTrigger} parses it back.
   */
  static String h2TriggerName(SqlFence fence) {
    return H2_TRIGGER_PREFIX + (fence.perRow() ? "row" : "table") + (fence.permissive() ? "-permissive" : "") + ":"
        + fence.lock() + ":" + fence.table().name();
  }

  // ------------------------------------------------------------------------------------------------------------ both

  /** The lock's fence row at token 0 (no write yet), so that writers find a row to lock from the first write on. */
  private Statement seed(SqlFence fence) {
    return new Statement(Kind.SEED, FENCE_TABLE, fenceSql.render("seed", "schema",
        fence.table().schemaPrefix(dialect), "lock", literal(fence.lock())));
  }

  /** PostgreSQL and H2: the token column, then its comment that marks it as the installer's. */
  private void tokenColumn(String t, List<Statement> out) {
    out.add(new Statement(Kind.TOKEN_COLUMN, TOKEN_COLUMN, fenceSql.render("add_token_column", "table", t)));
    out.add(new Statement(Kind.TOKEN_COLUMN, TOKEN_COLUMN, fenceSql.render("comment_token_column", "table", t)));
  }

  /**
   * {@code fencing_<table>_<kind>_<hash>}: the hash covers lock, table and options, so changed options give new names;
   * the table part is cut so that the name fits the database's limit.
   */
  private String hashedName(SqlFence fence, String kind, int limit) {
    String hash = hash(dialect + "|" + fence.table() + "|" + fence.lock() + "|" + fence.perRow() + "|"
        + fence.permissive() + (dialect == SqlDialect.MYSQL ? "|" + MYSQL_CHECK : ""));
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
}
