package dev.fencing.outbox.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.fence.sql.OutboxInstaller;
import dev.fencing.fence.sql.SqlOutbox;
import dev.fencing.fence.sql.TableName;
import java.net.URI;
import java.sql.Connection;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import javax.sql.DataSource;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The bean against a real H2 outbox table (the SQL installer's, its fence included): an event written in a Spring
 * transaction commits with the business row or rolls back with it; outside a transaction the call is refused.
 */
class FencingOutboxTest {
  private SingleConnectionDataSource dataSource;
  private JdbcTemplate jdbc;
  private TransactionTemplate tx;
  private FencingOutbox outbox;

  @BeforeEach
  void setUp() throws Exception {
    dataSource = new SingleConnectionDataSource("jdbc:h2:mem:outbox-spring-" + System.nanoTime(), "sa", "", true);
    Connection c = dataSource.getConnection();
    new OutboxInstaller(c).install(new SqlOutbox(TableName.parse("outbox"), "ledger"));
    try (Statement s = c.createStatement()) {
      s.execute("CREATE TABLE payment (id INT PRIMARY KEY)");
      // The session the agent sets: the lock, a token and a grant the outbox's fence accepts.
      s.execute("SET @fencing_lock = 'ledger'");
      s.execute("SET @fencing_token = '7'");
      s.execute("SET @fencing_grant = '694d8a1f2b3c4d5e'");
    }
    jdbc = new JdbcTemplate(dataSource);
    tx = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
    outbox = new FencingOutbox(dataSource, "outbox");
  }

  @AfterEach
  void tearDown() {
    dataSource.destroy(); // the in-memory database goes with its one connection
  }

  @Test
  void anEventWrittenInTheTransactionCommitsWithTheBusinessRowAndCarriesTheSessionsToken() {
    String id = tx.execute(status -> {
      jdbc.update("INSERT INTO payment (id) VALUES (1)");
      return outbox.post(URI.create("http://127.0.0.1:9/paid"), "application/json", "{\"payment\":1}");
    });
    List<Map<String, Object>> rows = jdbc.queryForList(
        "SELECT event_id, lock_name, token, grant_id, channel, target, method, headers, payload, state FROM outbox");
    assertThat(rows).hasSize(1);
    Map<String, Object> row = rows.get(0);
    assertThat(row.get("EVENT_ID")).isEqualTo(id);
    assertThat(row.get("LOCK_NAME")).isEqualTo("ledger");
    assertThat(((Number) row.get("TOKEN")).longValue()).isEqualTo(7);
    assertThat(row.get("GRANT_ID")).isEqualTo("694d8a1f2b3c4d5e");
    assertThat(row.get("CHANNEL")).isEqualTo("http");
    assertThat(row.get("TARGET")).isEqualTo("http://127.0.0.1:9/paid");
    assertThat(row.get("METHOD")).isEqualTo("POST");
    assertThat(row.get("HEADERS")).isEqualTo("Content-Type: application/json");
    assertThat(row.get("PAYLOAD")).isEqualTo("{\"payment\":1}");
    assertThat(row.get("STATE")).isEqualTo("pending");
    assertThat(jdbc.queryForObject("SELECT count(*) FROM payment", Long.class)).isEqualTo(1);
  }

  @Test
  void aRolledBackTransactionLeavesNeitherTheBusinessRowNorItsEvent() {
    assertThatThrownBy(() -> tx.executeWithoutResult(status -> {
      jdbc.update("INSERT INTO payment (id) VALUES (2)");
      outbox.kafka("payments", "order-2", "{\"payment\":2}");
      throw new IllegalStateException("the payment failed");
    })).hasMessage("the payment failed");
    assertThat(jdbc.queryForObject("SELECT count(*) FROM outbox", Long.class)).isZero();
    assertThat(jdbc.queryForObject("SELECT count(*) FROM payment", Long.class)).isZero();
  }

  @Test
  void aStaleTokenFailsTheWholeTransaction() throws Exception {
    tx.executeWithoutResult(status -> outbox.kafka("payments", "order-3", "first"));
    try (Statement s = dataSource.getConnection().createStatement()) {
      s.execute("SET @fencing_token = '6'"); // a holder whose successor (token 7) already wrote
    }
    assertThatThrownBy(() -> tx.executeWithoutResult(status -> {
      jdbc.update("INSERT INTO payment (id) VALUES (3)");
      outbox.kafka("payments", "order-3", "stale");
    })).isInstanceOf(org.springframework.dao.DataAccessException.class).hasMessageContaining("FN001");
    assertThat(jdbc.queryForList("SELECT payload FROM outbox", String.class)).containsExactly("first");
    assertThat(jdbc.queryForObject("SELECT count(*) FROM payment", Long.class)).isZero();
  }

  @Test
  void outsideATransactionTheCallIsRefusedAndNothingIsWritten() {
    assertThatThrownBy(() -> outbox.kafka("payments", "order-4", "{}"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("must be called inside a transaction");
    assertThat(jdbc.queryForObject("SELECT count(*) FROM outbox", Long.class)).isZero();
  }

  @Test
  void springBootMakesTheBeanOnTheApplicationsDataSourceWithTheTableOfTheAgentsSetting() {
    assertThat(tableOfTheBean(Map.of("fencing.outbox.table", "app.events,audit_events"))).isEqualTo("app.events");
    assertThat(tableOfTheBean(Map.of())).isEqualTo("outbox");
  }

  private String tableOfTheBean(Map<String, Object> properties) {
    try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
      context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("test", properties));
      // Not the test's DataSource itself: the context would destroy it when it closes.
      context.registerBean(DataSource.class, () -> new DelegatingDataSource(dataSource));
      context.register(FencingOutboxAutoConfiguration.class);
      context.refresh();
      return context.getBean(FencingOutbox.class).table();
    }
  }
}
