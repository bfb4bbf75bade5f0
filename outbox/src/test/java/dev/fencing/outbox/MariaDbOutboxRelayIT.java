package dev.fencing.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.protocol.OutboxSchema;
import dev.fencing.testing.MariaDbServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The relay's contract on a real MariaDB (FOR UPDATE SKIP LOCKED, polling), and its times with writers and relays
 * whose sessions run in different time zones.
 */
class MariaDbOutboxRelayIT extends OutboxRelayContractIT {
  static MariaDbServer server;

  @BeforeAll
  static void startServer() {
    server = MariaDbServer.start();
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  @Override
  Connection connect() throws SQLException {
    return DriverManager.getConnection(server.jdbcUrl());
  }

  /** A connection whose session runs in {@code zone}, as a JVM elsewhere or a pool setting time_zone makes it. */
  Connection connect(String zone) throws SQLException {
    Connection c = connect();
    try (Statement s = c.createStatement()) {
      s.execute("SET time_zone = '" + zone + "'");
    }
    return c;
  }

  @Test
  void anEventWrittenInAnotherTimeZoneIsDueAtOnceAndItsBackoffHoldsEverywhere() throws Exception {
    String table = newTable();
    receiver.answer(r -> r.path().equals("/down") ? new Receiver.Answer(500, Map.of()) : Receiver.Answer.OK);
    String[] ids = new String[2];
    try (Connection c = connect("+09:00")) {
      OutboxTables.session(c, lock, 4, null);
      c.setAutoCommit(false);
      ids[0] = Outbox.post(c, table, receiver.uri("/up"), "due now");
      ids[1] = Outbox.post(c, table, receiver.uri("/down"), "fails");
      c.commit();
    }
    relay(() -> connect("+00:00"), table, b -> b.relayId("utc").backoff(Duration.ofMinutes(2)));
    Receiver.await("the event written nine hours east of the relay delivered", WAIT,
        () -> receiver.applied().containsKey(ids[0]));
    Receiver.await("the failing event's first attempt", WAIT,
        () -> rowsQuietly(table).stream().anyMatch(r -> r.eventId().equals(ids[1]) && r.attempts() == 1
            && r.claimedBy() == null));
    relay(() -> connect("+09:00"), table, b -> b.relayId("east"));
    Thread.sleep(1500); // the east relay polls every 200 ms: the failed event's two-minute backoff holds for it too
    assertThat(receiver.requests().stream().filter(r -> r.path().equals("/down"))).as("attempts at /down")
        .hasSize(1);
  }

  @Test
  void aClaimHoldsAndAnAgeIsRightForARelayInAnotherTimeZone() throws Exception {
    String table = newTable();
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger calls = new AtomicInteger();
    receiver.answer(r -> {
      if (calls.incrementAndGet() == 1) {
        try {
          release.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return Receiver.Answer.OK;
    });
    String[] id = new String[1];
    try (Connection c = connect("+00:00")) {
      OutboxTables.session(c, lock, 4, null);
      id[0] = Outbox.post(c, table, receiver.uri("/slow"), "held by the receiver");
    }
    relay(() -> connect("+00:00"), table, b -> b.relayId("utc"));
    Receiver.await("the utc relay's delivery", WAIT, () -> receiver.requests().size() == 1);
    OutboxRelay east = relay(() -> connect("+09:00"), table, b -> b.relayId("east"));
    Receiver.await("the east relay's first stats", WAIT, () -> east.metrics().pending() >= 0);
    Thread.sleep(1500); // the east relay polls every 200 ms while the utc relay's ten-second claim holds
    assertThat(receiver.requests()).as("deliveries while the claim holds").hasSize(1);
    assertThat(east.metrics().pending()).as("pending events, seen nine hours east").isEqualTo(1);
    assertThat(east.metrics().oldestPendingAgeSeconds()).as("oldest pending age, seen nine hours east")
        .isBetween(0.0, 60.0);
    release.countDown();
    Receiver.await("delivered once", WAIT, () -> OutboxSchema.DELIVERED.equals(states(table).get(id[0])));
    assertThat(receiver.requests()).hasSize(1);
  }
}
