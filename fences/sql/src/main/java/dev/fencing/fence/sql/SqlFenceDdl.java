package dev.fencing.fence.sql;

import dev.fencing.fence.store.FenceSchema;
import dev.fencing.fence.store.SqlDialect;
import dev.fencing.protocol.SessionVariables;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Generates the DDL that installs and removes a fence (README.md in this module explains the design). The SQL itself
 * lives in resource files a DBA can review, one per dialect and purpose ({@code dev/fencing/fence/sql/<dialect>/
 * fence.sql} and {@code uninstall.sql}, see {@link SqlTemplate}); this class and the dialect's {@link FenceDialect}
 * ({@link PostgresFenceDialect}, {@link MariaDbFenceDialect}, {@link H2FenceDialect}) choose the statements, quote
 * the names and literals, and fill them in. The fence's own
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
    DROP_TRIGGER, DROP_TOKEN_COLUMN, DROP_ROUTINE, DROP_FENCE_TABLE,
    /**
     * A table of the tokened outbox ({@link OutboxDdl}): the outbox, its ordering counters, an index of it, or a
     * receiver's processed-events table; {@code object} is its bare name, in the schema of the outbox.
     */
    OUTBOX_TABLE,
    /** Drops an {@link #OUTBOX_TABLE}. */
    DROP_OUTBOX_TABLE
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

  /**
   * What may appear inside a SQL literal here: anything but a single quote, a backslash (an escape in MariaDB/MySQL)
   * and control characters. Schema names the database reports may hold any letters.
   */
  private static final Pattern LITERAL_SAFE = Pattern.compile("[^'\\\\\\p{Cntrl}]*");

  private final SqlDialect dialect;
  private final FenceDialect fence;

  public SqlFenceDdl(SqlDialect dialect) {
    this.dialect = Objects.requireNonNull(dialect, "dialect");
    this.fence = FenceDialect.of(dialect);
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
    String note = this.fence.printNote();
    boolean first = true;
    for (Statement st : install(fence.withTable(fence.table().folded(dialect)), fence.perRow())) {
      if (st.kind() == Kind.PRIVILEGE && note != null && first) {
        first = false;
        st = new Statement(st.kind(), st.object(), note + "\n" + st.sql());
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
    this.fence.install(fence, addTokenColumn, out);
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
      out.add(new Statement(Kind.DROP_TRIGGER, trigger, fence.dropTrigger(dialect.quote(trigger), t, s)));
    }
    if (dropTokenColumn) {
      out.add(new Statement(Kind.DROP_TOKEN_COLUMN, TOKEN_COLUMN, fence.uninstallSql.render("drop_token_column",
          "table", t, "column", dialect.quote(dialect.fold(TOKEN_COLUMN)))));
    }
    if (dropShared) {
      out.add(fence.dropTable(s, REGISTRY_TABLE));
      fence.dropShared(s, out);
      out.add(fence.dropTable(s, FENCE_TABLE));
    }
    return out;
  }

  /** Deletes the table's rows from the registry (uninstall; the installer runs it when the registry exists). */
  public Statement unregister(TableName table) {
    return new Statement(Kind.REGISTER, REGISTRY_TABLE, fence.uninstallSql.render("unregister", "schema",
        table.schemaPrefix(dialect), "table_schema", fence.schemaValue(table), "table_name", literal(table.name())));
  }

  /**
   * Every role may read the fence and the registry (fence detection), no role but the owner may change them: the
   * fence function runs as its owner. PostgreSQL also takes EXECUTE on the SECURITY DEFINER function from PUBLIC, so
   * that nobody attaches it to a table of their own to move a lock's fence. MariaDB 10.11+ knows PUBLIC; the
   * installer leaves these out on MySQL and older MariaDB and says so.
   */
  public List<Statement> privileges(TableName table) {
    return fence.privileges(table.schemaPrefix(dialect));
  }

  /** The triggers {@link #install} creates for {@code fence}, by name. */
  public List<String> triggerNames(SqlFence fence) {
    return this.fence.triggerNames(fence);
  }

  /**
   * Statements as one script: separated by semicolons, and for MariaDB/MySQL wrapped in {@code DELIMITER} commands
   * because procedure and trigger bodies contain semicolons (the mysql client and Flyway understand them).
   */
  public String script(List<Statement> statements) {
    StringBuilder b = new StringBuilder();
    String delimiter = fence.scriptDelimiter();
    String terminator = ";";
    if (delimiter != null) {
      b.append("DELIMITER ").append(delimiter).append("\n\n");
      terminator = delimiter;
    }
    for (Statement st : statements) {
      b.append(st.sql()).append(terminator).append("\n\n");
    }
    if (delimiter != null) {
      b.append("DELIMITER ;\n");
    }
    return b.toString();
  }

  /** The dialect's part of the fence: its templates, DDL, privileges and catalog queries. */
  FenceDialect fenceDialect() {
    return fence;
  }
}
