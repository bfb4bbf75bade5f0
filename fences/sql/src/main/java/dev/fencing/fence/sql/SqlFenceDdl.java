package dev.fencing.fence.sql;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Generates the DDL that installs and removes a fence (README.md in this module explains the design). The fence's own
 * objects (the {@code fencing_fence} table, the {@code fencing_fenced_table} registry, functions or procedures) live
 * in the protected table's schema, qualified
 * when the table name is; triggers are named after what they enforce, so that a re-install with other options creates
 * the new triggers before it drops the old ones and a table is never left unguarded.
 *
 * <p>Names are used verbatim (quoted): {@link #forPrint} folds them first, the installer passes the names the
 * database reported.
 */
public final class SqlFenceDdl {

  public static final String FENCE_TABLE = "fencing_fence";
  /**
   * H2 and MariaDB/MySQL: rows locked FOR UPDATE that stand in for a shared lock (H2 has none; MariaDB turns a
   * share-mode read into an exclusive one inside a trigger that also writes the table).
   */
  public static final String STRIPE_TABLE = "fencing_fence_stripe";
  /**
   * The registry of fenced tables beside the fence table: one row per fenced (table, lock), names as the database
   * reports them, readable by every role (the agent finds fenced tables with it, whatever role it connects as).
   */
  public static final String REGISTRY_TABLE = "fencing_fenced_table";
  /** The column of {@value #FENCE_TABLE} (and the MariaDB/MySQL stripes) holding the grant of the fence's token. */
  public static final String GRANT_COLUMN = "grant_id";
  /** PostgreSQL session setting with the grant id of the session's token (MariaDB/MySQL, H2: {@code @fencing_grant}). */
  public static final String PG_GRANT = "fencing.grant";
  public static final String TOKEN_COLUMN = "fencing_token";
  /** Written into the comment of a token column the installer added, so that uninstall removes only that one. */
  public static final String COLUMN_MARK = "added by the fencing-agent SQL fence installer";
  /** Trigger names start with it (H2: {@value #H2_TRIGGER_PREFIX}); uninstall removes every such trigger. */
  public static final String TRIGGER_PREFIX = "fencing_";
  public static final String H2_TRIGGER_PREFIX = "fencing:";
  /** Stripes of the H2 fence: same-token writers of different sessions rarely share one. */
  public static final int H2_STRIPES = 8;
  /** Stripes of the MariaDB/MySQL fence, chosen by CONNECTION_ID(). */
  public static final int MYSQL_STRIPES = 16;
  /** First key of PostgreSQL's two-key advisory locks: "FENC", apart from the one-bigint key space applications use. */
  static final int PG_ADVISORY_CLASS = 0x46454E43;
  /**
   * PostgreSQL session setting the table-mode check writes itself (never a client): "lock:token:grant" this session
   * found equal to the fence (grant empty when the session has none), so that its next writes with the same lock,
   * token and grant skip the read that chooses the lock mode.
   */
  static final String PG_VERIFIED = "fencing.verified";

  /** What a statement does, so that the installer can skip what exists and undo what it created. */
  public enum Kind {
    FENCE_TABLE,
    /** A column added to a fence table an earlier release created; {@code object} is the table. */
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

  private final SqlDialect dialect;

  public SqlFenceDdl(SqlDialect dialect) {
    this.dialect = Objects.requireNonNull(dialect, "dialect");
  }

  public SqlDialect dialect() {
    return dialect;
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
        st = new Statement(st.kind(), st.object(), "-- MariaDB 10.11+ (GRANT ... TO PUBLIC). On MySQL or older "
            + "MariaDB, grant SELECT on these two tables to the writers\n-- instead: the agent detects the fence "
            + "with it.\n" + st.sql());
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
          ? "DROP TRIGGER IF EXISTS " + dialect.quote(trigger) + " ON " + t
          : "DROP TRIGGER IF EXISTS " + s + dialect.quote(trigger);
      out.add(new Statement(Kind.DROP_TRIGGER, trigger, sql));
    }
    if (dropTokenColumn) {
      out.add(new Statement(Kind.DROP_TOKEN_COLUMN, TOKEN_COLUMN,
          "ALTER TABLE " + t + " DROP COLUMN " + dialect.quote(dialect.fold(TOKEN_COLUMN))));
    }
    if (dropShared) {
      out.add(new Statement(Kind.DROP_FENCE_TABLE, REGISTRY_TABLE, "DROP TABLE IF EXISTS " + s + REGISTRY_TABLE));
      if (dialect == SqlDialect.POSTGRESQL) {
        for (String f : List.of("fencing_check", "fencing_check_row", "fencing_check_truncate")) {
          out.add(new Statement(Kind.DROP_ROUTINE, f, "DROP FUNCTION IF EXISTS " + s + f + "()"));
        }
      } else {
        if (dialect == SqlDialect.MYSQL) {
          for (String p : MYSQL_PROCEDURES) {
            out.add(new Statement(Kind.DROP_ROUTINE, p, "DROP PROCEDURE IF EXISTS " + s + p));
          }
        }
        out.add(new Statement(Kind.DROP_FENCE_TABLE, STRIPE_TABLE, "DROP TABLE IF EXISTS " + s + STRIPE_TABLE));
      }
      out.add(new Statement(Kind.DROP_FENCE_TABLE, FENCE_TABLE, "DROP TABLE IF EXISTS " + s + FENCE_TABLE));
    }
    return out;
  }

  /** Deletes the table's rows from the registry (uninstall; the installer runs it when the registry exists). */
  public Statement unregister(TableName table) {
    return new Statement(Kind.REGISTER, REGISTRY_TABLE, "DELETE FROM " + table.schemaPrefix(dialect) + REGISTRY_TABLE
        + " WHERE table_schema = " + schemaValue(table) + " AND table_name = '" + table.name() + "'");
  }

  /**
   * The table's schema as a SQL value: the literal when the name is qualified (the installer always qualifies), else
   * the session's current schema (PostgreSQL, H2) or database (MariaDB/MySQL), where the unqualified objects go.
   */
  private String schemaValue(TableName table) {
    if (table.schema() != null) {
      return "'" + table.schema() + "'";
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
    String r = table.schemaPrefix(dialect) + REGISTRY_TABLE;
    String schema = schemaValue(table);
    String mode = fence.perRow() ? "row" : "table";
    String where = " WHERE table_schema = " + schema + " AND table_name = '" + table.name() + "'";
    out.add(new Statement(Kind.REGISTER, REGISTRY_TABLE, "DELETE FROM " + r + where + " AND lock_name <> '"
        + fence.lock() + "'"));
    String values = schema + ", '" + table.name() + "', '" + fence.lock() + "', '" + mode + "'";
    String sql;
    switch (dialect) {
      case POSTGRESQL:
        sql = "INSERT INTO " + r + " AS r (table_schema, table_name, lock_name, mode, installed_at)\n"
            + "  VALUES (" + values + ", localtimestamp)\n"
            + "  ON CONFLICT (table_schema, table_name, lock_name) DO UPDATE\n"
            + "  SET mode = excluded.mode, installed_at = excluded.installed_at WHERE r.mode <> excluded.mode";
        break;
      case MYSQL:
        sql = "INSERT INTO " + r + " (table_schema, table_name, lock_name, mode, installed_at)\n"
            + "  VALUES (" + values + ", NOW(6))\n"
            + "  ON DUPLICATE KEY UPDATE installed_at = IF(mode = VALUES(mode), installed_at, VALUES(installed_at)),\n"
            + "  mode = VALUES(mode)";
        break;
      default:
        sql = "MERGE INTO " + r + " r\n"
            + "  USING (SELECT " + schema + " AS s, '" + table.name() + "' AS t, '" + fence.lock() + "' AS l, '" + mode
            + "' AS m) v\n"
            + "  ON r.table_schema = v.s AND r.table_name = v.t AND r.lock_name = v.l\n"
            + "  WHEN MATCHED AND r.mode <> v.m THEN UPDATE SET mode = v.m, installed_at = LOCALTIMESTAMP\n"
            + "  WHEN NOT MATCHED THEN INSERT (table_schema, table_name, lock_name, mode, installed_at)\n"
            + "    VALUES (v.s, v.t, v.l, v.m, LOCALTIMESTAMP)";
        break;
    }
    out.add(new Statement(Kind.REGISTER, REGISTRY_TABLE, sql));
  }

  /** The registry table, beside the fence table. */
  private Statement registryTable(String s) {
    String name = dialect == SqlDialect.MYSQL ? "VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL"
        : "varchar(128) NOT NULL";
    String ascii = dialect == SqlDialect.MYSQL ? " CHARACTER SET ascii COLLATE ascii_bin" : "";
    return new Statement(Kind.FENCE_TABLE, REGISTRY_TABLE, "CREATE TABLE IF NOT EXISTS " + s + REGISTRY_TABLE + " (\n"
        + "  table_schema " + name + ",\n"
        + "  table_name " + name + ",\n"
        + "  lock_name varchar(128)" + ascii + " NOT NULL,\n"
        + "  mode varchar(16)" + ascii + " NOT NULL,\n"
        + "  installed_at " + (dialect == SqlDialect.MYSQL ? "DATETIME(6) NULL" : "timestamp") + ",\n"
        + "  PRIMARY KEY (table_schema, table_name, lock_name)\n"
        + ")" + (dialect == SqlDialect.MYSQL ? " ENGINE=InnoDB" : ""));
  }

  /** The grant column for a fence table an earlier release created (the installer skips it when present). */
  private Statement grantColumn(String s, String table) {
    String type = dialect == SqlDialect.MYSQL ? "VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL"
        : "varchar(64)";
    return new Statement(Kind.FENCE_COLUMN, table, "ALTER TABLE " + s + table + " ADD COLUMN IF NOT EXISTS "
        + GRANT_COLUMN + " " + type);
  }

  /**
   * Every role may read the fence and the registry (fence detection), no role but the owner may change them: the
   * fence function runs as its owner. PostgreSQL also takes EXECUTE on the SECURITY DEFINER function from PUBLIC, so
   * that nobody attaches it to a table of their own to move a lock's fence. MariaDB 10.11+ knows PUBLIC; the
   * installer leaves these out on MySQL and older MariaDB and says so.
   */
  public List<Statement> privileges(TableName table) {
    String s = table.schemaPrefix(dialect);
    String tables = s + FENCE_TABLE + ", " + s + REGISTRY_TABLE;
    List<Statement> out = new ArrayList<>();
    if (dialect == SqlDialect.POSTGRESQL) {
      out.add(new Statement(Kind.PRIVILEGE, FENCE_TABLE, "REVOKE ALL ON " + tables + " FROM PUBLIC"));
      out.add(new Statement(Kind.PRIVILEGE, FENCE_TABLE, "GRANT SELECT ON " + tables + " TO PUBLIC"));
      out.add(new Statement(Kind.PRIVILEGE, "fencing_check", "REVOKE ALL ON FUNCTION " + s + "fencing_check() FROM "
          + "PUBLIC"));
    } else if (dialect == SqlDialect.MYSQL) {
      for (String t : List.of(FENCE_TABLE, REGISTRY_TABLE)) {
        out.add(new Statement(Kind.PRIVILEGE, t, "GRANT SELECT ON " + mysqlQualified(table, t) + " TO PUBLIC"));
      }
    }
    return out;
  }

  /** MariaDB/MySQL table grants need a database: {@code db.table}, or the current database's {@code table}. */
  private String mysqlQualified(TableName table, String name) {
    return table.schemaPrefix(dialect) + name;
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
    String mode = fence.permissive() ? "permissive" : "strict";
    String args = "('" + fence.lock() + "', '" + mode + "')";
    out.add(new Statement(Kind.FENCE_TABLE, FENCE_TABLE, "CREATE TABLE IF NOT EXISTS " + s + FENCE_TABLE
        + " (\n  lock_name varchar(128) PRIMARY KEY,\n  token bigint NOT NULL,\n  updated_at timestamp,\n  "
        + GRANT_COLUMN + " varchar(64)\n)"));
    out.add(grantColumn(s, FENCE_TABLE));
    out.add(registryTable(s));
    out.add(seed(fence));
    out.add(new Statement(Kind.ROUTINE, "fencing_check", postgresCheck(s, fence.table().schema())));
    if (fence.table().schema() == null) {
      out.add(new Statement(Kind.ROUTINE, "fencing_check", postgresDefinerInCurrentSchema()));
    }
    out.add(new Statement(Kind.ROUTINE, "fencing_check_row", postgresCheckRow(s)));
    out.add(new Statement(Kind.ROUTINE, "fencing_check_truncate", postgresCheckTruncate(s)));
    if (fence.perRow() && addTokenColumn) {
      out.add(new Statement(Kind.TOKEN_COLUMN, TOKEN_COLUMN,
          "ALTER TABLE " + t + " ADD COLUMN " + TOKEN_COLUMN + " bigint"));
      out.add(new Statement(Kind.TOKEN_COLUMN, TOKEN_COLUMN,
          "COMMENT ON COLUMN " + t + "." + TOKEN_COLUMN + " IS 'fencing token of the last write; " + COLUMN_MARK
              + "'"));
    }
    List<String> names = triggerNames(fence);
    if (fence.perRow()) {
      out.add(pgTrigger(names.get(0), t, "BEFORE INSERT OR UPDATE OR DELETE ON " + t + " FOR EACH ROW EXECUTE "
          + "FUNCTION " + s + "fencing_check_row" + args));
      out.add(pgTrigger(names.get(1), t, "BEFORE TRUNCATE ON " + t + " FOR EACH STATEMENT EXECUTE FUNCTION " + s
          + "fencing_check_truncate" + args));
    } else {
      out.add(pgTrigger(names.get(0), t, "BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON " + t
          + " FOR EACH STATEMENT EXECUTE FUNCTION " + s + "fencing_check" + args));
    }
    register(fence, out);
    out.addAll(privileges(fence.table()));
  }

  /**
   * The table-mode check runs as its owner, so that writers need no right on the fence table
   * ({@code SECURITY DEFINER}), with the search path pinned to the fence's schema and {@code pg_temp} last, as
   * PostgreSQL's documentation prescribes for such functions (pg_catalog stays first, so no writer's function or
   * operator, nor a temporary table, can stand in for the ones the body uses). The SET clause restores only
   * search_path on exit: the session setting the body writes with set_config(..., false) persists.
   */
  private String pgDefiner(String schema) {
    return "  SECURITY DEFINER SET search_path = " + dialect.quote(schema) + ", pg_temp\n";
  }

  /**
   * {@code sql print} of an unqualified table cannot name the schema the function goes to: the function is created
   * as the invoker's, then made SECURITY DEFINER with the search path pinned to the schema it was created in.
   */
  private static String postgresDefinerInCurrentSchema() {
    return "DO $fencing$ BEGIN\n"
        + "  EXECUTE format('ALTER FUNCTION %I.fencing_check() SECURITY DEFINER SET search_path = %I, pg_temp',\n"
        + "    current_schema(), current_schema());\n"
        + "END $fencing$";
  }

  private Statement pgTrigger(String name, String table, String rest) {
    // DROP + CREATE rather than CREATE OR REPLACE TRIGGER (PostgreSQL 14+): the install runs in one transaction.
    return new Statement(Kind.TRIGGER, name, "DROP TRIGGER IF EXISTS " + dialect.quote(name) + " ON " + table
        + ";\nCREATE TRIGGER " + dialect.quote(name) + "\n  " + rest);
  }

  /**
   * Validation shared by the three PostgreSQL functions: reads the session values, raises FN002 for a missing (unless
   * permissive: {@code permissiveExit}), malformed or mismatched pair, leaves the token in v_token. {@code current}
   * is an expression for the fence token the messages show.
   */
  private static String pgValidate(String current, String permissiveExit) {
    // One expression decides the usual case (each PL/pgSQL expression costs about a microsecond per write); the
    // detailed checks run only when it fails, to tell a missing token from a malformed one or a foreign lock.
    return ""
        + "  IF (v_raw ~ '^[1-9][0-9]{0,17}$' AND current_setting('fencing.lock', true) = v_lock) IS NOT TRUE THEN\n"
        + "    IF v_raw IS NULL OR v_raw = '' THEN\n"
        + "      IF TG_ARGV[1] = 'permissive' THEN\n"
        + permissiveExit.replaceAll("(?m)^", "  ")
        + "      END IF;\n"
        + "      v_problem := 'missing token';\n"
        + "    ELSIF v_raw !~ '^[1-9][0-9]{0,18}$'\n"
        + "        OR (length(v_raw) = 19 AND v_raw COLLATE \"C\" > '9223372036854775807') THEN\n"
        + "      v_problem := format('malformed token %L', left(v_raw, 40));\n"
        + "    ELSIF current_setting('fencing.lock', true) IS DISTINCT FROM v_lock THEN\n"
        + "      v_problem := format('session lock %L for token %s', current_setting('fencing.lock', true), v_raw);\n"
        + "    END IF;\n"
        + "    IF v_problem IS NOT NULL THEN\n"
        + "      RAISE EXCEPTION USING ERRCODE = 'FN002', MESSAGE = format(\n"
        + "        'fencing: %s for lock ''%s'' on %I.%I (current fence token %s): set fencing.lock and fencing.token',\n"
        + "        v_problem, v_lock, TG_TABLE_SCHEMA, TG_TABLE_NAME, coalesce((" + current + ")::text, 'none'));\n"
        + "    END IF;\n"
        + "  END IF;\n"
        + "  v_token := v_raw::bigint;\n";
  }

  private static String pgStale(String current) {
    return "RAISE EXCEPTION USING ERRCODE = 'FN001', MESSAGE = format(\n"
        + "        'fencing: stale token %s for lock ''%s'' on %I.%I: current fence token is %s',\n"
        + "        v_token, v_lock, TG_TABLE_SCHEMA, TG_TABLE_NAME, " + current + ");\n";
  }

  private static final String PG_DECLARE = ""
      + "DECLARE\n"
      + "  v_lock text := TG_ARGV[0];\n"
      + "  v_raw text := current_setting('fencing.token', true);\n"
      + "  v_problem text;\n"
      + "  v_token bigint;\n";

  /**
   * Table mode, one call per statement. A plain read of the fence row chooses the lock: a shared transaction-scoped
   * advisory lock when the token is not above the fence (same-token writers never wait for each other), an exclusive
   * one to advance (waits for every transaction that passed with the old token, and makes later old-token writers
   * wait, then fail). The fence row is read again once the lock is held: in READ COMMITTED a fresh snapshot sees any
   * advance committed before; in the other levels FOR SHARE fails the write with a serialization error instead of
   * reading an old version.
   *
   * <p>An equal token is accepted only from the grant stored with it (or when none is stored): after a coordinator
   * restore a new holder can get exactly the old holder's token, and the grant id ({@value #PG_GRANT}) tells them
   * apart. A token that advances the fence stores the session's grant (NULL when it has none).
   *
   * <p>The usual write skips the token's validation and the plain read: when this session already found this token
   * valid and equal to the fence ({@value #PG_VERIFIED}, a session setting holding "lock:token:grant") and its lock is
   * still the fence's, the shared lock is the right choice, since fences only grow. The setting only chooses the lock mode;
   * the decision is always the read under the lock. A wrong value (after a fence reset, or set by a client) costs the
   * upgrade path that a reset already has, never a wrong decision (a forged key with a malformed token fails the
   * write with PostgreSQL's own cast error instead of FN002).
   */
  private String postgresCheck(String s, String schema) {
    String read = "SELECT f.token, f." + GRANT_COLUMN + " INTO v_fence, v_fence_grant FROM " + s + FENCE_TABLE
        + " f WHERE f.lock_name = v_lock";
    String hint = "SELECT f.token INTO v_fence FROM " + s + FENCE_TABLE + " f WHERE f.lock_name = v_lock";
    return "CREATE OR REPLACE FUNCTION " + s + "fencing_check() RETURNS trigger LANGUAGE plpgsql\n"
        + (schema == null ? "" : pgDefiner(schema))
        + "AS $fencing$\n"
        + "-- Fencing Agent SQL fence, table mode. TG_ARGV: lock name, 'strict' or 'permissive'.\n"
        + PG_DECLARE
        + "  v_grant text := nullif(current_setting('" + PG_GRANT + "', true), '');\n"
        + "  v_fence bigint;\n"
        + "  v_fence_grant text;\n"
        + "  v_exclusive boolean;\n"
        + "  v_key text;\n"
        + "  v_verified boolean;\n"
        + "BEGIN\n"
        + "  v_key := v_lock || ':' || v_raw || ':' || coalesce(v_grant, '');\n"
        + "  v_verified := current_setting('" + PG_VERIFIED + "', true) = v_key\n"
        + "    AND current_setting('fencing.lock', true) = v_lock;\n"
        + "  IF v_verified THEN\n"
        + "    v_token := v_raw::bigint;\n"
        + "    v_exclusive := false;\n"
        + "  ELSE\n"
        + pgValidate(hint.replace(" INTO v_fence", ""), "      RETURN NULL;\n").replaceAll("(?m)^", "  ")
        + pgValidateGrant().replaceAll("(?m)^", "  ")
        + "    " + hint + ";\n"
        + "    v_exclusive := v_fence IS NULL OR v_token > v_fence;\n"
        + "  END IF;\n"
        + "  LOOP\n"
        + "    -- Locked in a condition rather than with PERFORM: a function call in an expression runs no query.\n"
        + "    IF v_exclusive THEN\n"
        + "      IF pg_advisory_xact_lock(" + PG_ADVISORY_CLASS + ", hashtext(v_lock)) IS NULL THEN NULL; END IF;\n"
        + "    ELSE\n"
        + "      IF pg_advisory_xact_lock_shared(" + PG_ADVISORY_CLASS + ", hashtext(v_lock)) IS NULL THEN NULL;"
        + " END IF;\n"
        + "    END IF;\n"
        + "    IF current_setting('transaction_isolation') = 'read committed' THEN\n"
        + "      " + read + ";\n"
        + "    ELSE\n"
        + "      " + read + " FOR SHARE;\n"
        + "    END IF;\n"
        + "    IF v_token = v_fence AND (v_fence_grant IS NULL OR v_fence_grant = v_grant) THEN\n"
        + "      IF v_verified IS NOT TRUE THEN\n"
        + "        PERFORM set_config('" + PG_VERIFIED + "', v_key, false);\n"
        + "      END IF;\n"
        + "      RETURN NULL;\n"
        + "    ELSIF v_token = v_fence THEN\n"
        + "      -- The same token from another grant: a holder after a coordinator restore got the old token again.\n"
        + "      RAISE EXCEPTION USING ERRCODE = 'FN001', MESSAGE = format(\n"
        + "        'fencing: token %s for lock ''%s'' on %I.%I was issued to another grant (fence grant %s, session "
        + "grant %s)',\n"
        + "        v_token, v_lock, TG_TABLE_SCHEMA, TG_TABLE_NAME, v_fence_grant, coalesce(v_grant, 'none'));\n"
        + "    ELSIF v_token < v_fence THEN\n"
        + "      " + pgStale("v_fence")
        + "    END IF;\n"
        + "    EXIT WHEN v_exclusive;\n"
        + "    v_exclusive := true;\n"
        + "  END LOOP;\n"
        + "  IF v_verified THEN\n"
        + "    -- A remembered key is never trusted with what the fence stores.\n"
        + pgValidateGrant()
        + "  END IF;\n"
        + "  INSERT INTO " + s + FENCE_TABLE + " AS f (lock_name, token, updated_at, " + GRANT_COLUMN + ")\n"
        + "    VALUES (v_lock, v_token, localtimestamp, v_grant)\n"
        + "    ON CONFLICT (lock_name) DO UPDATE SET token = excluded.token, updated_at = excluded.updated_at,\n"
        + "      " + GRANT_COLUMN + " = excluded." + GRANT_COLUMN + ";\n"
        + "  PERFORM set_config('" + PG_VERIFIED + "', v_key, false);\n"
        + "  RETURN NULL;\n"
        + "END\n"
        + "$fencing$";
  }

  /** FN002 for a grant id that is not 1 to 64 visible ASCII characters (a missing one is NULL and passes). */
  private static String pgValidateGrant() {
    return ""
        + "  IF v_grant !~ '^[!-~]{1,64}$' THEN\n"
        + "    RAISE EXCEPTION USING ERRCODE = 'FN002', MESSAGE = format(\n"
        + "      'fencing: malformed grant %L for lock ''%s'' on %I.%I: expected 1 to 64 visible ASCII characters',\n"
        + "      left(v_grant, 70), v_lock, TG_TABLE_SCHEMA, TG_TABLE_NAME);\n"
        + "  END IF;\n";
  }

  /** Per-row mode, one call per row: the row's own token is the fence ({@code WHERE token <= :token}). */
  private static String postgresCheckRow(String s) {
    return "CREATE OR REPLACE FUNCTION " + s + "fencing_check_row() RETURNS trigger LANGUAGE plpgsql AS $fencing$\n"
        + "-- Fencing Agent SQL fence, per-row mode. TG_ARGV: lock name, 'strict' or 'permissive'.\n"
        + PG_DECLARE
        + "  v_row bigint;\n"
        + "BEGIN\n"
        + "  IF TG_OP <> 'INSERT' THEN\n"
        + "    v_row := OLD." + TOKEN_COLUMN + ";\n"
        + "  END IF;\n"
        + pgValidate("v_row", ""
            + "      IF TG_OP = 'DELETE' THEN\n"
            + "        RETURN OLD;\n"
            + "      ELSIF TG_OP = 'UPDATE' THEN\n"
            + "        NEW." + TOKEN_COLUMN + " := OLD." + TOKEN_COLUMN + ";\n"
            + "      END IF;\n"
            + "      RETURN NEW;\n")
        + "  IF v_row > v_token THEN\n"
        + "    " + pgStale("v_row")
        + "  END IF;\n"
        + "  IF TG_OP = 'DELETE' THEN\n"
        + "    RETURN OLD;\n"
        + "  END IF;\n"
        + "  NEW." + TOKEN_COLUMN + " := v_token;\n"
        + "  RETURN NEW;\n"
        + "END\n"
        + "$fencing$";
  }

  /** Per-row mode's TRUNCATE guard: the table is locked by then, so the highest row token is exact. */
  private static String postgresCheckTruncate(String s) {
    return "CREATE OR REPLACE FUNCTION " + s + "fencing_check_truncate() RETURNS trigger LANGUAGE plpgsql AS "
        + "$fencing$\n"
        + "-- Fencing Agent SQL fence, per-row mode, TRUNCATE. TG_ARGV: lock name, 'strict' or 'permissive'.\n"
        + PG_DECLARE
        + "  v_row bigint;\n"
        + "BEGIN\n"
        + "  EXECUTE format('SELECT max(" + TOKEN_COLUMN + ") FROM %I.%I', TG_TABLE_SCHEMA, TG_TABLE_NAME) "
        + "INTO v_row;\n"
        + pgValidate("v_row", "      RETURN NULL;\n")
        + "  IF v_row > v_token THEN\n"
        + "    " + pgStale("v_row")
        + "  END IF;\n"
        + "  RETURN NULL;\n"
        + "END\n"
        + "$fencing$";
  }

  // --------------------------------------------------------------------------------------------------- MariaDB/MySQL

  /**
   * Versioned: a release with other bodies adds _v2 beside them instead of replacing them under live writes (the
   * installer never replaces an existing procedure). fencing_check_v2 (grant ids) replaces fencing_check_v1 in new
   * triggers; v1 stays until the schema's last fence is uninstalled, for triggers an earlier release created.
   */
  static final List<String> MYSQL_PROCEDURES =
      List.of("fencing_check_v2", "fencing_check_v1", "fencing_session_token_v1", "fencing_reject_stale_v1");
  /**
   * The table-mode procedure the triggers call. Part of the trigger names' hash, so that a re-install after an
   * upgrade creates triggers calling the new procedure (before it drops the old ones) instead of keeping the old.
   */
  static final String MYSQL_CHECK = "fencing_check_v2";

  private void mysqlInstall(SqlFence fence, boolean addTokenColumn, List<Statement> out) {
    String s = fence.table().schemaPrefix(dialect);
    String t = fence.table().sql(dialect);
    out.add(new Statement(Kind.FENCE_TABLE, FENCE_TABLE, "CREATE TABLE IF NOT EXISTS " + s + FENCE_TABLE + " (\n"
        + "  lock_name VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,\n"
        + "  token BIGINT NOT NULL,\n"
        + "  updated_at DATETIME(6) NULL,\n"
        + "  " + GRANT_COLUMN + " VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL\n"
        + ") ENGINE=InnoDB"));
    out.add(grantColumn(s, FENCE_TABLE));
    out.add(new Statement(Kind.FENCE_TABLE, STRIPE_TABLE, "CREATE TABLE IF NOT EXISTS " + s + STRIPE_TABLE + " (\n"
        + "  lock_name VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,\n"
        + "  stripe INT NOT NULL,\n"
        + "  token BIGINT NOT NULL,\n"
        + "  " + GRANT_COLUMN + " VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL,\n"
        + "  PRIMARY KEY (lock_name, stripe)\n"
        + ") ENGINE=InnoDB"));
    out.add(grantColumn(s, STRIPE_TABLE));
    out.add(registryTable(s));
    out.add(seed(fence));
    // The stripes start at the fence's token, so that a lock whose stripes were lost does not restart at 0.
    StringBuilder numbers = new StringBuilder();
    for (int i = 0; i < MYSQL_STRIPES; i++) {
      numbers.append(i == 0 ? "SELECT 0 AS n" : " UNION ALL SELECT " + i);
    }
    out.add(new Statement(Kind.SEED, STRIPE_TABLE, "INSERT IGNORE INTO " + s + STRIPE_TABLE
        + " (lock_name, stripe, token, " + GRANT_COLUMN + ")\n  SELECT f.lock_name, n.n, f.token, f." + GRANT_COLUMN
        + " FROM " + s + FENCE_TABLE + " f, (" + numbers
        + ") n\n  WHERE f.lock_name = '" + fence.lock() + "'"));
    out.add(new Statement(Kind.ROUTINE, "fencing_reject_stale_v1", mysqlRejectStale(s)));
    out.add(new Statement(Kind.ROUTINE, "fencing_session_token_v1", mysqlSessionToken(s)));
    out.add(new Statement(Kind.ROUTINE, MYSQL_CHECK, mysqlCheck(s)));
    if (fence.perRow() && addTokenColumn) {
      out.add(new Statement(Kind.TOKEN_COLUMN, TOKEN_COLUMN, "ALTER TABLE " + t + " ADD COLUMN " + TOKEN_COLUMN
          + " BIGINT NULL COMMENT 'fencing token of the last write; " + COLUMN_MARK + "'"));
    }
    List<String> names = triggerNames(fence);
    String call = "'" + fence.lock() + "', " + (fence.permissive() ? "TRUE" : "FALSE") + ", '" + fence.table() + "'";
    String[] events = {"INSERT", "UPDATE", "DELETE"};
    for (int i = 0; i < 3; i++) {
      String body;
      if (!fence.perRow()) {
        body = "CALL " + s + MYSQL_CHECK + "(" + call + ")";
      } else {
        String rowToken = i == 0 ? "NULL" : "OLD." + TOKEN_COLUMN;
        String stale = "CALL " + s + "fencing_reject_stale_v1('" + fence.lock() + "', '" + fence.table()
            + "', v_token, OLD." + TOKEN_COLUMN + ");\n";
        body = "BEGIN\n"
            + "  DECLARE v_token BIGINT;\n"
            + "  CALL " + s + "fencing_session_token_v1(" + call + ", TRUE, " + rowToken + ", v_token);\n";
        if (i == 0) {
          body += "  IF v_token IS NOT NULL THEN\n"
              + "    SET NEW." + TOKEN_COLUMN + " = v_token;\n"
              + "  END IF;\n";
        } else if (i == 1) {
          body += "  IF v_token IS NULL THEN\n"
              + "    SET NEW." + TOKEN_COLUMN + " = OLD." + TOKEN_COLUMN + ";\n"
              + "  ELSEIF OLD." + TOKEN_COLUMN + " > v_token THEN\n"
              + "    " + stale
              + "  ELSE\n"
              + "    SET NEW." + TOKEN_COLUMN + " = v_token;\n"
              + "  END IF;\n";
        } else {
          body += "  IF OLD." + TOKEN_COLUMN + " > v_token THEN\n"
              + "    " + stale
              + "  END IF;\n";
        }
        body += "END";
      }
      out.add(new Statement(Kind.TRIGGER, names.get(i), "CREATE TRIGGER IF NOT EXISTS " + s
          + dialect.quote(names.get(i)) + "\n  BEFORE " + events[i] + " ON " + t + " FOR EACH ROW\n" + body));
    }
    register(fence, out);
    out.addAll(privileges(fence.table()));
  }

  private static String mysqlRejectStale(String s) {
    return "CREATE PROCEDURE IF NOT EXISTS " + s + "fencing_reject_stale_v1(\n"
        + "    IN p_lock VARCHAR(128) CHARACTER SET ascii, IN p_table VARCHAR(200) CHARACTER SET ascii,\n"
        + "    IN p_token BIGINT, IN p_current BIGINT)\n"
        + "  NO SQL SQL SECURITY DEFINER\n"
        + "  COMMENT 'Fencing Agent SQL fence: raises FN001 (stale token)'\n"
        + "BEGIN\n"
        + "  DECLARE v_msg VARCHAR(128) CHARACTER SET utf8mb4;\n"
        + "  SET v_msg = LEFT(CONCAT('fencing: stale token ', p_token, ' for lock ''', p_lock, ''' on ', p_table,\n"
        + "    ': current fence token is ', p_current), 128);\n"
        + "  SIGNAL SQLSTATE 'FN001' SET MESSAGE_TEXT = v_msg;\n"
        + "END";
  }

  /**
   * Reads @fencing_token and @fencing_lock; returns the token, NULL for a missing token in permissive mode, or raises
   * FN002. MESSAGE_TEXT holds at most 128 characters, hence the short messages.
   */
  private static String mysqlSessionToken(String s) {
    return "CREATE PROCEDURE IF NOT EXISTS " + s + "fencing_session_token_v1(\n"
        + "    IN p_lock VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin, IN p_permissive BOOLEAN,\n"
        + "    IN p_table VARCHAR(200) CHARACTER SET ascii, IN p_per_row BOOLEAN, IN p_row_token BIGINT,\n"
        + "    OUT p_token BIGINT)\n"
        + "  READS SQL DATA SQL SECURITY DEFINER\n"
        + "  COMMENT 'Fencing Agent SQL fence: validates the session token, raises FN002'\n"
        + "body: BEGIN\n"
        + "  DECLARE v_raw TEXT CHARACTER SET utf8mb4;\n"
        + "  DECLARE v_session_lock TEXT CHARACTER SET utf8mb4;\n"
        + "  DECLARE v_problem TEXT CHARACTER SET utf8mb4;\n"
        + "  DECLARE v_current BIGINT DEFAULT NULL;\n"
        + "  DECLARE v_msg VARCHAR(128) CHARACTER SET utf8mb4;\n"
        + "  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_current = NULL;\n"
        + "  SET p_token = NULL;\n"
        + "  SET v_raw = CAST(@fencing_token AS CHAR CHARACTER SET utf8mb4);\n"
        + "  SET v_session_lock = CAST(@fencing_lock AS CHAR CHARACTER SET utf8mb4);\n"
        + "  IF v_raw IS NULL OR v_raw = '' THEN\n"
        + "    IF p_permissive THEN\n"
        + "      LEAVE body;\n"
        + "    END IF;\n"
        + "    SET v_problem = 'missing token';\n"
        + "  ELSEIF NOT (v_raw REGEXP '^[1-9][0-9]{0,18}$') OR LOCATE(CHAR(10), v_raw) > 0\n"
        + "      OR (CHAR_LENGTH(v_raw) = 19 AND v_raw > '9223372036854775807') THEN\n"
        + "    SET v_problem = CONCAT('malformed token ''', LEFT(v_raw, 24), '''');\n"
        + "  ELSEIF v_session_lock IS NULL OR CAST(v_session_lock AS BINARY) <> CAST(p_lock AS BINARY) THEN\n"
        + "    SET v_problem = CONCAT('session lock ''', LEFT(IFNULL(v_session_lock, ''), 24), ''' for token ', "
        + "v_raw);\n"
        + "  ELSE\n"
        + "    SET p_token = CAST(v_raw AS SIGNED);\n"
        + "    LEAVE body;\n"
        + "  END IF;\n"
        + "  IF p_per_row THEN\n"
        + "    SET v_current = p_row_token;\n"
        + "  ELSE\n"
        + "    SELECT token INTO v_current FROM " + FENCE_TABLE + " WHERE lock_name = p_lock;\n"
        + "  END IF;\n"
        + "  SET v_msg = LEFT(CONCAT('fencing: ', v_problem, ' for lock ''', p_lock, ''' on ', p_table,\n"
        + "    ' (current fence token ', IFNULL(v_current, 'none'), ')'), 128);\n"
        + "  SIGNAL SQLSTATE 'FN002' SET MESSAGE_TEXT = v_msg;\n"
        + "END";
  }

  /**
   * Table mode, one call per row. MariaDB/MySQL lock every table a trigger's routines touch for the whole statement
   * in the strongest mode any of them needs, so a {@code LOCK IN SHARE MODE} read of the fence row would become
   * exclusive here, the fence table being written on advance. The shared lock is therefore striped: a same-token
   * writer locks the stripe row of its connection FOR UPDATE (same-token writers of other connections never wait for
   * it), an advancing writer locks all stripes, which waits for every transaction that passed with the old token.
   * The stripe rows carry the fence token, and a locking read returns the latest committed row in any isolation
   * level. A plain (consistent) read of the fence row first chooses which lock to take, which spares the deadlock of
   * two writers going from one stripe to all.
   */
  private static String mysqlCheck(String s) {
    String reject = "CALL fencing_reject_stale_v1(p_lock, p_table, v_token, v_fence);\n";
    // Messages hold at most 128 characters: the grants come before the table name, which is cut first.
    String otherGrant = "SET v_msg = LEFT(CONCAT('fencing: token ', v_token, ' for lock ''', p_lock,\n"
        + "        ''' was issued to another grant (fence grant ', LEFT(v_fence_grant, 16), ', session grant ',\n"
        + "        IFNULL(LEFT(v_grant, 16), 'none'), ') on ', p_table), 128);\n"
        + "      SIGNAL SQLSTATE 'FN001' SET MESSAGE_TEXT = v_msg;\n";
    String sameGrant = "(v_fence_grant IS NULL OR CAST(v_fence_grant AS BINARY) = CAST(v_grant AS BINARY))";
    return "CREATE PROCEDURE IF NOT EXISTS " + s + MYSQL_CHECK + "(\n"
        + "    IN p_lock VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin, IN p_permissive BOOLEAN,\n"
        + "    IN p_table VARCHAR(200) CHARACTER SET ascii)\n"
        + "  MODIFIES SQL DATA SQL SECURITY DEFINER\n"
        + "  COMMENT 'Fencing Agent SQL fence, table mode: accepts a token >= the fence (equal: of the same grant), "
        + "advances it'\n"
        + "body: BEGIN\n"
        + "  DECLARE v_token BIGINT;\n"
        + "  DECLARE v_fence BIGINT DEFAULT NULL;\n"
        + "  DECLARE v_fence_grant VARCHAR(64) CHARACTER SET ascii DEFAULT NULL;\n"
        + "  DECLARE v_grant TEXT CHARACTER SET utf8mb4;\n"
        + "  DECLARE v_stripes INT DEFAULT 0;\n"
        + "  DECLARE v_raw TEXT CHARACTER SET utf8mb4;\n"
        + "  DECLARE v_msg VARCHAR(128) CHARACTER SET utf8mb4;\n"
        + "  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_fence = NULL;\n"
        + "  -- The common case inline; anything else goes to fencing_session_token_v1 (FN002 or permissive).\n"
        + "  SET v_raw = CAST(@fencing_token AS CHAR CHARACTER SET utf8mb4);\n"
        + "  IF v_raw REGEXP '^[1-9][0-9]{0,18}$' AND LOCATE(CHAR(10), v_raw) = 0\n"
        + "      AND (CHAR_LENGTH(v_raw) < 19 OR v_raw <= '9223372036854775807')\n"
        + "      AND CAST(@fencing_lock AS BINARY) = CAST(p_lock AS BINARY) THEN\n"
        + "    SET v_token = CAST(v_raw AS SIGNED);\n"
        + "  ELSE\n"
        + "    CALL fencing_session_token_v1(p_lock, p_permissive, p_table, FALSE, NULL, v_token);\n"
        + "    IF v_token IS NULL THEN\n"
        + "      LEAVE body;\n"
        + "    END IF;\n"
        + "  END IF;\n"
        + "  -- The grant id: 1 to 64 visible ASCII characters, or none (NULL or empty).\n"
        + "  SET v_grant = NULLIF(CAST(@fencing_grant AS CHAR CHARACTER SET utf8mb4), '');\n"
        + "  IF v_grant IS NOT NULL AND (NOT (v_grant REGEXP '^[!-~]{1,64}$') OR LOCATE(CHAR(10), v_grant) > 0) THEN\n"
        + "    SET v_msg = LEFT(CONCAT('fencing: malformed grant ''', LEFT(v_grant, 24), ''' for lock ''', p_lock,\n"
        + "      ''' on ', p_table, ': expected 1 to 64 visible ASCII characters'), 128);\n"
        + "    SIGNAL SQLSTATE 'FN002' SET MESSAGE_TEXT = v_msg;\n"
        + "  END IF;\n"
        + "  SELECT token INTO v_fence FROM " + FENCE_TABLE + " WHERE lock_name = p_lock;\n"
        + "  IF v_fence IS NOT NULL AND v_token <= v_fence THEN\n"
        + "    SELECT token, " + GRANT_COLUMN + " INTO v_fence, v_fence_grant FROM " + STRIPE_TABLE + "\n"
        + "      WHERE lock_name = p_lock AND stripe = CONNECTION_ID() % " + MYSQL_STRIPES + " FOR UPDATE;\n"
        + "    IF v_fence = v_token AND " + sameGrant + " THEN\n"
        + "      LEAVE body;\n"
        + "    ELSEIF v_fence = v_token THEN\n"
        + "      " + otherGrant
        + "    ELSEIF v_fence > v_token THEN\n"
        + "      " + reject
        + "    END IF;\n"
        + "  END IF;\n"
        + "  SELECT COUNT(*), MAX(token) INTO v_stripes, v_fence FROM " + STRIPE_TABLE + "\n"
        + "    WHERE lock_name = p_lock FOR UPDATE;\n"
        + "  IF v_stripes <> " + MYSQL_STRIPES + " THEN\n"
        + "    SIGNAL SQLSTATE '55000' SET MESSAGE_TEXT = 'fencing: the fence of this lock is incomplete (stripes "
        + "missing): run sql install again';\n"
        + "  END IF;\n"
        + "  IF v_fence = v_token THEN\n"
        + "    -- Every stripe carries the fence's token and grant, and all of them are locked now.\n"
        + "    SELECT " + GRANT_COLUMN + " INTO v_fence_grant FROM " + STRIPE_TABLE + "\n"
        + "      WHERE lock_name = p_lock AND token = v_fence LIMIT 1 FOR UPDATE;\n"
        + "    IF " + sameGrant + " THEN\n"
        + "      LEAVE body;\n"
        + "    END IF;\n"
        + "    " + otherGrant
        + "  ELSEIF v_fence > v_token THEN\n"
        + "    " + reject
        + "  END IF;\n"
        + "  UPDATE " + STRIPE_TABLE + " SET token = v_token, " + GRANT_COLUMN + " = v_grant WHERE lock_name = p_lock;\n"
        + "  INSERT INTO " + FENCE_TABLE + " (lock_name, token, updated_at, " + GRANT_COLUMN + ")\n"
        + "    VALUES (p_lock, v_token, NOW(6), v_grant)\n"
        + "    ON DUPLICATE KEY UPDATE token = v_token, updated_at = NOW(6), " + GRANT_COLUMN + " = v_grant;\n"
        + "END";
  }

  // -------------------------------------------------------------------------------------------------------------- H2

  private void h2Install(SqlFence fence, boolean addTokenColumn, List<Statement> out) {
    String s = fence.table().schemaPrefix(dialect);
    String t = fence.table().sql(dialect);
    out.add(new Statement(Kind.FENCE_TABLE, FENCE_TABLE, "CREATE TABLE IF NOT EXISTS " + s + FENCE_TABLE
        + " (\n  lock_name VARCHAR(128) PRIMARY KEY,\n  token BIGINT NOT NULL,\n  updated_at TIMESTAMP,\n  "
        + GRANT_COLUMN + " VARCHAR(64)\n)"));
    out.add(grantColumn(s, FENCE_TABLE));
    out.add(new Statement(Kind.FENCE_TABLE, STRIPE_TABLE, "CREATE TABLE IF NOT EXISTS " + s + STRIPE_TABLE
        + " (\n  lock_name VARCHAR(128) NOT NULL,\n  stripe INT NOT NULL,\n  PRIMARY KEY (lock_name, stripe)\n)"));
    out.add(registryTable(s));
    out.add(seed(fence));
    StringBuilder stripes = new StringBuilder();
    for (int i = 0; i < H2_STRIPES; i++) {
      stripes.append(i == 0 ? "" : ", ").append("('").append(fence.lock()).append("', ").append(i).append(')');
    }
    out.add(new Statement(Kind.SEED, STRIPE_TABLE, "MERGE INTO " + s + STRIPE_TABLE
        + " (lock_name, stripe) KEY (lock_name, stripe) VALUES " + stripes));
    if (fence.perRow() && addTokenColumn) {
      out.add(new Statement(Kind.TOKEN_COLUMN, TOKEN_COLUMN,
          "ALTER TABLE " + t + " ADD COLUMN " + TOKEN_COLUMN + " BIGINT"));
      out.add(new Statement(Kind.TOKEN_COLUMN, TOKEN_COLUMN,
          "COMMENT ON COLUMN " + t + "." + TOKEN_COLUMN + " IS 'fencing token of the last write; " + COLUMN_MARK
              + "'"));
    }
    String name = h2TriggerName(fence);
    out.add(new Statement(Kind.TRIGGER, name, "CREATE TRIGGER IF NOT EXISTS " + s + dialect.quote(name)
        + "\n  BEFORE INSERT, UPDATE, DELETE ON " + t + " FOR EACH ROW"
        + "\n  CALL '" + H2FenceTrigger.class.getName() + "'"));
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
    String f = fence.table().schemaPrefix(dialect) + FENCE_TABLE;
    String values = "('" + fence.lock() + "', 0, NULL)";
    String sql;
    switch (dialect) {
      case POSTGRESQL:
        sql = "INSERT INTO " + f + " (lock_name, token, updated_at) VALUES " + values
            + " ON CONFLICT (lock_name) DO NOTHING";
        break;
      case MYSQL:
        sql = "INSERT IGNORE INTO " + f + " (lock_name, token, updated_at) VALUES " + values;
        break;
      default:
        sql = "INSERT INTO " + f + " (lock_name, token, updated_at) SELECT '" + fence.lock() + "', 0, NULL"
            + " WHERE NOT EXISTS (SELECT 1 FROM " + f + " WHERE lock_name = '" + fence.lock() + "')";
        break;
    }
    return new Statement(Kind.SEED, FENCE_TABLE, sql);
  }

  /**
   * {@code fencing_<table>_<kind>_<hash>}: the hash covers lock, table and options, so changed options give new names;
   * the table part is cut so that the name fits the database's limit.
   */
  private String hashedName(SqlFence fence, String kind, int limit) {
    String hash = hash(dialect + "|" + fence.table() + "|" + fence.lock() + "|" + fence.perRow() + "|"
        + fence.permissive() + (dialect == SqlDialect.MYSQL ? "|" + MYSQL_CHECK : ""));
    String table = fence.table().name().toLowerCase(java.util.Locale.ROOT);
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
