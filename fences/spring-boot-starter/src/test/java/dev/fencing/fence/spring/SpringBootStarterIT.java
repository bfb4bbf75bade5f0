package dev.fencing.fence.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.fence.kafka.FencingConsumerInterceptor;
import dev.fencing.fence.kafka.KafkaFenceSettings;
import dev.fencing.fence.spring.app.OrdersApplication;
import dev.fencing.testing.PostgresServer;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;

/**
 * The starter in a real Spring Boot 3.5 service (embedded Tomcat, Actuator with the Prometheus registry, Hikari) on a
 * real PostgreSQL: configured by application.yml alone, the HTTP fence refuses a stale token with its problem response
 * and the Kafka fence quarantines a stale record, both on the application's DataSource, and {@code
 * /actuator/prometheus}, scraped over HTTP, shows the counts. One Spring context for the class.
 */
class SpringBootStarterIT {

  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static PostgresServer db;
  private static ConfigurableApplicationContext app;
  private static String base;

  @BeforeAll
  static void start() throws SQLException {
    db = PostgresServer.start();
    try (Connection c = DriverManager.getConnection(db.jdbcUrl()); Statement s = c.createStatement()) {
      // The fence table as the SQL fence's `sql install` creates it (the store adds its grant columns itself).
      s.execute("CREATE TABLE fencing_fence (lock_name varchar(128) PRIMARY KEY, token bigint NOT NULL, "
          + "updated_at timestamp)");
      s.execute("CREATE TABLE orders (id serial PRIMARY KEY, item text NOT NULL)");
    }
    app = new SpringApplicationBuilder(OrdersApplication.class).run("--server.port=0",
        "--spring.datasource.url=" + db.jdbcUrl(), "--spring.main.banner-mode=off");
    base = "http://127.0.0.1:" + ((WebServerApplicationContext) app).getWebServer().getPort();
  }

  @AfterAll
  static void stop() {
    if (app != null) {
      app.close();
    }
    if (db != null) {
      db.close();
    }
  }

  @Test
  void aStaleTokenGetsTheHttpFencesRefusalAndTheScrapeCountsIt() throws Exception {
    assertThat(post("7", "first").statusCode()).isEqualTo(201);
    HttpResponse<String> stale = post("5", "stale");
    assertThat(stale.statusCode()).isEqualTo(409);
    assertThat(stale.headers().firstValue("Fencing-Rejected")).contains("stale-token");
    assertThat(stale.headers().firstValue("Content-Type")).contains("application/problem+json");
    assertThat(stale.body()).contains("\"type\":\"urn:fencing:problem:stale-token\"", "\"lock\":\"ledger\"",
        "\"token\":5", "\"currentToken\":7");
    assertThat(post(null, "untagged").statusCode()).isEqualTo(428);
    // Reads are not fenced; only the current holder's write reached the table.
    HttpResponse<String> count = HTTP.send(HttpRequest.newBuilder(URI.create(base + "/api/orders/count")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(count.body()).isEqualTo("1");
    assertThat(query("SELECT token FROM fencing_fence WHERE lock_name = 'ledger'")).isEqualTo(7);

    String scrape = scrape();
    assertThat(scrape).contains(
        "fencing_fence_rejections_total{fence=\"http\",lock=\"ledger\",reason=\"stale_token\"} 1.0\n",
        "fencing_fence_rejections_total{fence=\"http\",lock=\"ledger\",reason=\"missing_token\"} 1.0\n",
        "fencing_fence_rejections_total{fence=\"http\",lock=\"ledger\",reason=\"drain_timeout\"} 0.0\n");
    // One Micrometer name, rendered by each registry in its own style: no underscore name is registered.
    MeterRegistry registry = app.getBean(MeterRegistry.class);
    assertThat(registry.find("fencing.fence.rejections").tag("fence", "http").meters()).isNotEmpty();
    assertThat(registry.find("fencing_fence_rejections").meters()).isEmpty();
  }

  @Test
  void theConfiguredConsumerFactoryFencesItsConsumersOnTheApplicationsDataSource() throws Exception {
    DefaultKafkaConsumerFactory<?, ?> factory = app.getBean("kafkaConsumerFactory", DefaultKafkaConsumerFactory.class);
    Map<String, Object> config = factory.getConfigurationProperties();
    assertThat(config.get(ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG))
        .isEqualTo(List.of(FencingConsumerInterceptor.class));
    assertThat(config).containsEntry(KafkaFenceSettings.LOCKS, "ledger")
        .containsEntry(KafkaFenceSettings.TOPICS, "orders")
        .containsEntry(KafkaFenceSettings.JDBC_DATASOURCE, app.getBean(DataSource.class));
    // A consumer the factory creates configures the fence (its series appear at 0; no broker is contacted).
    try (Consumer<?, ?> consumer = factory.createConsumer("orders-group", "starter-it")) {
      assertThat(consumer).isNotNull();
    }
    assertThat(scrape()).contains(
        "fencing_fence_rejections_total{fence=\"kafka\",lock=\"ledger\",reason=\"stale_token\"} 0.0\n");

    // What the consumer's interceptor does with a poll: the same configuration, on real records.
    FencingConsumerInterceptor<String, String> fence = new FencingConsumerInterceptor<>();
    fence.configure(config);
    try {
      TopicPartition tp = new TopicPartition("orders", 0);
      ConsumerRecords<String, String> delivered = fence.onConsume(new ConsumerRecords<>(Map.of(tp,
          List.of(record(tp, 0, "7", "current"), record(tp, 1, "5", "stale"), record(tp, 2, "7", "current-2")))));
      assertThat(delivered).extracting(ConsumerRecord::value).containsExactly("current", "current-2");
    } finally {
      fence.close();
    }
    assertThat(query("SELECT max(token) FROM fencing_kafka_fence WHERE lock_name = 'ledger' AND topic = 'orders'"))
        .isEqualTo(7);
    assertThat(scrape()).contains(
        "fencing_fence_rejections_total{fence=\"kafka\",lock=\"ledger\",reason=\"stale_token\"} 1.0\n",
        "fencing_fence_dead_letters_total{fence=\"kafka\",lock=\"ledger\",outcome=\"sent\"} 0.0\n",
        "fencing_fence_store_failures_total{fence=\"kafka\"} 0.0\n");
  }

  private static HttpResponse<String> post(String token, String item) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + "/api/orders"))
        .header("Content-Type", "text/plain").POST(HttpRequest.BodyPublishers.ofString(item));
    if (token != null) {
      b.header("Fencing-Token", token).header("Fencing-Lock", "ledger");
    }
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static String scrape() throws Exception {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(base + "/actuator/prometheus")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as("GET /actuator/prometheus").isEqualTo(200);
    return r.body();
  }

  private static long query(String sql) throws SQLException {
    try (Connection c = DriverManager.getConnection(db.jdbcUrl()); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      assertThat(rs.next()).as(sql).isTrue();
      return rs.getLong(1);
    }
  }

  private static ConsumerRecord<String, String> record(TopicPartition tp, long offset, String token, String value) {
    RecordHeaders h = new RecordHeaders();
    h.add("fencing", (token + ";ledger").getBytes(StandardCharsets.UTF_8));
    return new ConsumerRecord<>(tp.topic(), tp.partition(), offset, 0L, TimestampType.CREATE_TIME, -1, -1, null,
        value, h, Optional.empty());
  }
}
