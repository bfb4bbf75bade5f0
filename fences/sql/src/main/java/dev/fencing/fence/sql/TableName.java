package dev.fencing.fence.sql;

import dev.fencing.fence.store.SqlDialect;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A table name, optionally schema-qualified ({@code schema.table}; for MariaDB/MySQL the schema is the database).
 * Names are restricted to plain identifiers because they end up inside DDL and trigger bodies: anything else is
 * rejected up front instead of being escaped.
 */
public record TableName(String schema, String name) {

  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");

  public TableName {
    Objects.requireNonNull(name, "name");
  }

  /** Parses {@code table} or {@code schema.table}, failing with an IllegalArgumentException that says what is allowed. */
  public static TableName parse(String text) {
    if (text == null || text.isEmpty()) {
      throw new IllegalArgumentException("missing table name");
    }
    int dot = text.indexOf('.');
    String schema = dot < 0 ? null : text.substring(0, dot);
    String name = dot < 0 ? text : text.substring(dot + 1);
    if ((schema != null && !isIdentifier(schema)) || !isIdentifier(name)) {
      throw new IllegalArgumentException("invalid table name '" + text + "': expected an identifier "
          + "[A-Za-z_][A-Za-z0-9_]* of at most 63 characters, optionally schema-qualified (schema.table)");
    }
    return new TableName(schema, name);
  }

  public static boolean isIdentifier(String text) {
    return text != null && IDENTIFIER.matcher(text).matches();
  }

  /** Both parts as the database stores them unquoted (see {@link SqlDialect#fold}). */
  public TableName folded(SqlDialect dialect) {
    return new TableName(schema == null ? null : dialect.fold(schema), dialect.fold(name));
  }

  /** The quoted, qualified form used in DDL. */
  public String sql(SqlDialect dialect) {
    return (schema == null ? "" : dialect.quote(schema) + ".") + dialect.quote(name);
  }

  /** The quoted schema followed by a dot, or nothing: the prefix of the fence's own objects, which live beside it. */
  public String schemaPrefix(SqlDialect dialect) {
    return schema == null ? "" : dialect.quote(schema) + ".";
  }

  @Override
  public String toString() {
    return schema == null ? name : schema + "." + name;
  }
}
