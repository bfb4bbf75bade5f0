package dev.fencing.fence.store;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Locale;
import java.util.Optional;

/** The databases the SQL fence supports, each with how it quotes and folds identifiers. */
public enum SqlDialect {
  POSTGRESQL("postgresql", '"'),
  /** MariaDB and MySQL: one trigger language, user variables, InnoDB row locks. */
  MYSQL("mysql", '`'),
  H2("h2", '"');

  private final String cliName;
  private final char quote;

  SqlDialect(String cliName, char quote) {
    this.cliName = cliName;
    this.quote = quote;
  }

  /** The name used by {@code sql print --dialect}. */
  public String cliName() {
    return cliName;
  }

  /** Parses a {@code --dialect} value; {@code postgres}, {@code pg} and {@code mariadb} are accepted as aliases. */
  public static SqlDialect fromName(String name) {
    switch (name == null ? "" : name.toLowerCase(Locale.ROOT)) {
      case "postgresql":
      case "postgres":
      case "pg":
        return POSTGRESQL;
      case "mysql":
      case "mariadb":
        return MYSQL;
      case "h2":
        return H2;
      default:
        throw new IllegalArgumentException("unknown dialect '" + name + "': expected postgresql, mysql or h2");
    }
  }

  /** The dialect of a {@link java.sql.DatabaseMetaData#getDatabaseProductName()}, empty for any other database. */
  public static Optional<SqlDialect> fromProductName(String productName) {
    String p = productName == null ? "" : productName.toLowerCase(Locale.ROOT);
    if (p.contains("postgresql")) {
      return Optional.of(POSTGRESQL);
    }
    if (p.contains("mariadb") || p.contains("mysql")) {
      return Optional.of(MYSQL);
    }
    if (p.equals("h2")) {
      return Optional.of(H2);
    }
    return Optional.empty();
  }

  /** The connection's dialect, or a clear error naming the database when the fence does not support it. */
  public static SqlDialect detect(Connection connection) throws SQLException {
    String product = connection.getMetaData().getDatabaseProductName();
    return fromProductName(product).orElseThrow(() -> new SQLFeatureNotSupportedException("unsupported database '"
        + product + "': the SQL fence supports PostgreSQL, MariaDB/MySQL and H2"));
  }

  /** An identifier quoted verbatim; callers pass only names checked by the SQL fence's {@code TableName.isIdentifier}. */
  public String quote(String identifier) {
    return quote + identifier + quote;
  }

  /**
   * The name the database stores for an unquoted identifier: PostgreSQL folds to lower case, H2 (by default) to upper
   * case, MariaDB/MySQL keep it. {@code sql print} uses it, since it cannot ask the database.
   */
  public String fold(String identifier) {
    switch (this) {
      case POSTGRESQL:
        return identifier.toLowerCase(Locale.ROOT);
      case H2:
        return identifier.toUpperCase(Locale.ROOT);
      default:
        return identifier;
    }
  }

  /** Whether DDL takes part in transactions, so that an install can be rolled back as a whole. */
  public boolean transactionalDdl() {
    return this == POSTGRESQL;
  }
}
