package dev.fencing.outbox.spring;

import dev.fencing.outbox.Outbox;
import java.net.URI;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.UncategorizedSQLException;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.jdbc.support.SQLStateSQLExceptionTranslator;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Defers a side effect to the tokened outbox in one line, inside the caller's Spring transaction: the event is written
 * on the transaction's own connection ({@link DataSourceUtils}), so it commits with the business rows, and is
 * delivered by a relay, only if the transaction commits under a token the table's fence accepted; a rolled-back or
 * fenced-off transaction leaves no event. Each call returns the event id, the {@code Idempotency-Key} (HTTP) or
 * {@code fencing-event-id} (Kafka) the receiver sees.
 *
 * <pre>{@code
 * @Transactional
 * public void pay(Order order) {
 *   payments.save(order.payment());
 *   outbox.post(URI.create("https://hooks.example.com/paid"), "application/json", order.json());
 * }
 * }</pre>
 */
public class FencingOutbox {
  private static final SQLStateSQLExceptionTranslator TRANSLATOR = new SQLStateSQLExceptionTranslator();

  private final DataSource dataSource;
  private final String table;

  /** Writes to {@code table} ({@code [schema.]name}) through {@code dataSource}, the one the transactions use. */
  public FencingOutbox(DataSource dataSource, String table) {
    if (dataSource == null) {
      throw new IllegalArgumentException("dataSource: the application's DataSource expected, got null");
    }
    if (table == null || !table.matches("([A-Za-z_][A-Za-z0-9_]*\\.)?[A-Za-z_][A-Za-z0-9_]*")) {
      throw new IllegalArgumentException("table: [schema.]name of letters, digits and _ expected, got '" + table
          + "'");
    }
    this.dataSource = dataSource;
    this.table = table;
  }

  /** The outbox table this bean writes to. */
  public String table() {
    return table;
  }

  /** An HTTP POST of {@code body} to {@code url} with a {@code Content-Type} (null: none). */
  public String post(URI url, String contentType, String body) {
    return write("post", c -> Outbox.post(c, table, url, contentType, body));
  }

  /** An HTTP request: {@code method} (POST when null), extra {@code headers} ({@code Name: value} lines, or null). */
  public String http(String method, URI url, String headers, String body) {
    return write("http", c -> Outbox.http(c, table, method, url, headers, body));
  }

  /** A Kafka record: {@code value} to {@code topic} with {@code key} (null: none), both UTF-8. */
  public String kafka(String topic, String key, String value) {
    return write("kafka", c -> Outbox.kafka(c, table, topic, key, value));
  }

  private interface Insert {
    String on(Connection c) throws SQLException;
  }

  private String write(String what, Insert insert) {
    if (!TransactionSynchronizationManager.isActualTransactionActive()) {
      // Outside a transaction the event would commit at once, whatever happens to the work it belongs to.
      throw new IllegalStateException("FencingOutbox." + what + " must be called inside a transaction (a "
          + "@Transactional method, or TransactionTemplate), so that the event commits or rolls back with the "
          + "business rows; no transaction is active on this thread");
    }
    Connection c = DataSourceUtils.getConnection(dataSource);
    try {
      return insert.on(c);
    } catch (SQLException e) {
      DataAccessException translated = TRANSLATOR.translate("outbox " + what + " into " + table, null, e);
      throw translated != null ? translated
          : new UncategorizedSQLException("outbox " + what + " into " + table, null, e);
    } finally {
      DataSourceUtils.releaseConnection(c, dataSource);
    }
  }
}
