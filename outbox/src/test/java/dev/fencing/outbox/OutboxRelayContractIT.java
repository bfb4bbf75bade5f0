package dev.fencing.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.protocol.HttpHeaderNames;
import dev.fencing.protocol.OutboxSchema;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The relay's delivery contract on one database: what a real HTTP receiver gets, and what the outbox rows say after.
 * Subclasses give the database.
 */
abstract class OutboxRelayContractIT extends RelayTestBase {

  @Test
  void committedEventsArriveWithTheirRowsTokenAndEventIdAndRolledBackOnesNever() throws Exception {
    String table = newTable();
    String[] ids = new String[2];
    transaction(7, "g-7", true, c -> {
      ids[0] = Outbox.post(c, table, receiver.uri("/paid"), "application/json", "{\"order\":1}");
      ids[1] = Outbox.http(c, table, "PUT", receiver.uri("/stock"), "X-Shop: north", "two");
    });
    transaction(8, null, false, c -> Outbox.post(c, table, receiver.uri("/paid"), "rolled back"));
    relay(table, b -> { });

    Receiver.await("two requests", WAIT, () -> receiver.requests().size() >= 2);
    Thread.sleep(1000); // time for a third, which must not come
    List<Receiver.Request> got = receiver.requests();
    assertThat(got).hasSize(2);
    Receiver.Request paid = got.stream().filter(r -> r.path().equals("/paid")).findFirst().orElseThrow();
    assertThat(paid.method()).isEqualTo("POST");
    assertThat(paid.body()).isEqualTo("{\"order\":1}");
    assertThat(paid.header("Content-Type")).isEqualTo("application/json");
    assertThat(paid.header(HttpHeaderNames.TOKEN)).isEqualTo("7");
    assertThat(paid.header(HttpHeaderNames.LOCK)).isEqualTo(lock);
    assertThat(paid.header(HttpHeaderNames.GRANT)).isEqualTo("g-7");
    assertThat(paid.header(HttpHeaderNames.IDEMPOTENCY_KEY)).isEqualTo(ids[0]);
    Receiver.Request stock = got.stream().filter(r -> r.path().equals("/stock")).findFirst().orElseThrow();
    assertThat(stock.method()).isEqualTo("PUT");
    assertThat(stock.body()).isEqualTo("two");
    assertThat(stock.header("X-Shop")).isEqualTo("north");
    assertThat(stock.header(HttpHeaderNames.TOKEN)).isEqualTo("7");
    assertThat(stock.header(HttpHeaderNames.IDEMPOTENCY_KEY)).isEqualTo(ids[1]);

    Receiver.await("both rows delivered", WAIT, () -> states(table).equals(Map.of(ids[0],
        OutboxSchema.DELIVERED, ids[1], OutboxSchema.DELIVERED)));
    assertThat(row(table, ids[0]).attempts()).isEqualTo(1);
    assertThat(row(table, ids[0]).claimedBy()).isNull();
  }

  @Test
  void twoRelaysDeliverEveryEventOnceAndEachKeysEventsInCommitOrder() throws Exception {
    String table = newTable();
    relay(table, b -> b.relayId("relay-a").batchSize(3));
    relay(table, b -> b.relayId("relay-b").batchSize(3));
    int keys = 3;
    int perKey = 15;
    for (int i = 0; i < perKey; i++) {
      for (int k = 0; k < keys; k++) {
        int seq = i;
        String path = "/key/" + k;
        transaction(5, null, true, c -> Outbox.post(c, table, receiver.uri(path), Integer.toString(seq)));
      }
    }
    Receiver.await("every event applied", WAIT, () -> receiver.applied().size() == keys * perKey);
    Thread.sleep(1000);
    List<Receiver.Request> got = receiver.requests();
    assertThat(got).as("requests, none twice").hasSize(keys * perKey);
    Map<String, List<Integer>> byKey = got.stream().collect(Collectors.groupingBy(Receiver.Request::path,
        Collectors.mapping(r -> Integer.parseInt(r.body()), Collectors.toList())));
    for (int k = 0; k < keys; k++) {
      assertThat(byKey.get("/key/" + k)).as("arrival order of key " + k)
          .containsExactlyElementsOf(java.util.stream.IntStream.range(0, perKey).boxed().toList());
    }
    Receiver.await("all rows delivered", WAIT, () -> rowsQuietly(table).stream()
        .allMatch(r -> r.state().equals(OutboxSchema.DELIVERED)));
    long a = relays.get(0).metrics().deliveries(OutboxSchema.CHANNEL_HTTP, RelayMetrics.Outcome.DELIVERED);
    long b = relays.get(1).metrics().deliveries(OutboxSchema.CHANNEL_HTTP, RelayMetrics.Outcome.DELIVERED);
    assertThat(a + b).isEqualTo(keys * perKey);
  }

  @Test
  void aFailedAttemptIsRetriedAfterTheBackoffAndDeliveredOnce() throws Exception {
    String table = newTable();
    AtomicInteger calls = new AtomicInteger();
    receiver.answer(r -> calls.incrementAndGet() == 1 ? new Receiver.Answer(500, Map.of()) : Receiver.Answer.OK);
    String[] id = new String[1];
    transaction(3, null, true, c -> id[0] = Outbox.post(c, table, receiver.uri("/flaky"), "x"));
    OutboxRelay relay = relay(table, b -> b.backoff(Duration.ofMillis(700)));

    Receiver.await("delivered", WAIT, () -> receiver.applied().size() == 1);
    Thread.sleep(1000);
    List<Receiver.Request> got = receiver.requests();
    assertThat(got).hasSize(2);
    assertThat(got).allMatch(r -> id[0].equals(r.header(HttpHeaderNames.IDEMPOTENCY_KEY)));
    long gapMillis = (got.get(1).arrivedNanos() - got.get(0).arrivedNanos()) / 1_000_000;
    assertThat(gapMillis).as("pause between the attempts").isGreaterThanOrEqualTo(650);
    OutboxTables.Row row = row(table, id[0]);
    assertThat(row.state()).isEqualTo(OutboxSchema.DELIVERED);
    assertThat(row.attempts()).isEqualTo(2);
    assertThat(row.lastError()).contains("HTTP 500");
    assertThat(relay.metrics().deliveries(OutboxSchema.CHANNEL_HTTP, RelayMetrics.Outcome.FAILED)).isEqualTo(1);
    assertThat(relay.metrics().deliveries(OutboxSchema.CHANNEL_HTTP, RelayMetrics.Outcome.DELIVERED)).isEqualTo(1);
  }

  @Test
  void anEventThatAlwaysFailsIsParkedAfterMaxAttemptsAndHoldsItsKeysLaterEventsBack() throws Exception {
    String table = newTable();
    receiver.answer(r -> r.path().equals("/down") ? new Receiver.Answer(500, Map.of()) : Receiver.Answer.OK);
    String[] ids = new String[3];
    transaction(3, null, true, c -> {
      ids[0] = Outbox.post(c, table, receiver.uri("/down"), "first");
      ids[1] = Outbox.post(c, table, receiver.uri("/down"), "second, same key");
      ids[2] = Outbox.post(c, table, receiver.uri("/up"), "another key");
    });
    OutboxRelay relay = relay(table, b -> b.maxAttempts(3).backoff(Duration.ofMillis(100)));

    Receiver.await("parked", WAIT, () -> OutboxSchema.PARKED.equals(states(table).get(ids[0])));
    Receiver.await("parked in the metrics", WAIT, () -> relay.metrics().parked() == 1);
    Thread.sleep(1000);
    assertThat(receiver.requests().stream().filter(r -> r.path().equals("/down")).map(Receiver.Request::body))
        .containsExactly("first", "first", "first");
    OutboxTables.Row parked = row(table, ids[0]);
    assertThat(parked.attempts()).isEqualTo(3);
    assertThat(parked.lastError()).contains("HTTP 500").contains("parked after 3 attempts");
    assertThat(row(table, ids[1]).state()).as("the key's later event waits behind the parked one")
        .isEqualTo(OutboxSchema.PENDING);
    assertThat(row(table, ids[1]).attempts()).isZero();
    assertThat(row(table, ids[2]).state()).isEqualTo(OutboxSchema.DELIVERED);
    assertThat(relay.metrics().pending()).isEqualTo(1);
    String text = relay.metrics().prometheusText();
    assertThat(text).contains("fencing_outbox_events_parked{table=\"" + table + "\"} 1\n")
        .contains("fencing_outbox_events_pending{table=\"" + table + "\"} 1\n")
        .contains("fencing_outbox_deliveries_total{table=\"" + table + "\",channel=\"http\",outcome=\"parked\"} 1\n")
        .contains("fencing_outbox_deliveries_total{table=\"" + table + "\",channel=\"http\",outcome=\"failed\"} 2\n");
    assertThat(relay.metrics().oldestPendingAgeSeconds()).isGreaterThan(0);
  }

  @Test
  void aFenceThatRefusesTheTokenParksTheEventAtOnce() throws Exception {
    String table = newTable();
    receiver.answer(r -> new Receiver.Answer(409, Map.of(HttpHeaderNames.REJECTED, "stale")));
    String[] id = new String[1];
    transaction(3, null, true, c -> id[0] = Outbox.post(c, table, receiver.uri("/fenced"), "x"));
    OutboxRelay relay = relay(table, b -> b.maxAttempts(5));

    Receiver.await("parked", WAIT, () -> OutboxSchema.PARKED.equals(states(table).get(id[0])));
    Thread.sleep(500);
    assertThat(receiver.requests()).hasSize(1);
    OutboxTables.Row row = row(table, id[0]);
    assertThat(row.attempts()).isEqualTo(1);
    assertThat(row.lastError()).contains("409").contains(HttpHeaderNames.REJECTED).contains("stale");
    assertThat(relay.metrics().deliveries(OutboxSchema.CHANNEL_HTTP, RelayMetrics.Outcome.REJECTED)).isEqualTo(1);
  }

  /**
   * Two relays claiming at one moment take different events: while another relay holds the oldest events locked (its
   * claim under way), this one claims the next ones at once instead of finding nothing and waiting for the poll.
   */
  @Test
  void aRelayClaimsPastTheEventsAnotherRelayIsClaimingAtThatMoment() throws Exception {
    String table = newTable();
    List<String> first = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      String path = "/first/" + i;
      transaction(4, null, true, c -> first.add(Outbox.post(c, table, receiver.uri(path), "x")));
    }
    Thread.sleep(20); // the next events are due after the first ones
    transaction(4, null, true, c -> {
      for (int i = 0; i < 3; i++) {
        Outbox.post(c, table, receiver.uri("/next/" + i), "y");
      }
    });
    try (Connection other = connect()) {
      other.setAutoCommit(false);
      if (OutboxDialect.of(other) == OutboxDialect.MARIADB) {
        other.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
      }
      // One row at a time, by its key: a locking read of a small table by a list of ids would lock every row it
      // scans on MariaDB.
      for (String id : first) {
        try (PreparedStatement ps = other.prepareStatement("SELECT event_id FROM " + table
            + " WHERE event_id = ? FOR UPDATE")) {
          ps.setString(1, id);
          try (ResultSet rs = ps.executeQuery()) {
            assertThat(rs.next()).as("event " + id + " locked").isTrue();
          }
        }
      }
      relay(table, b -> b.batchSize(3).pollInterval(Duration.ofSeconds(30)).statsInterval(Duration.ofSeconds(30)));
      Receiver.await("the events no other relay is claiming delivered", WAIT, () -> receiver.applied().size() == 3);
      assertThat(receiver.requests()).allMatch(r -> r.path().startsWith("/next/"));
      other.rollback();
    }
  }

  /**
   * A relay whose claim was taken over (it expired, and another relay claimed the event) before its attempt ended
   * does not mark that event, and still marks the others it delivered with it.
   */
  @Test
  void aClaimTakenOverIsNotMarkedAndTheOthersDeliveredWithItAre() throws Exception {
    String table = newTable();
    CountDownLatch release = new CountDownLatch(1);
    receiver.answer(r -> {
      try {
        release.await(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return Receiver.Answer.OK;
    });
    String[] ids = new String[3];
    transaction(4, null, true, c -> {
      for (int i = 0; i < ids.length; i++) {
        ids[i] = Outbox.post(c, table, receiver.uri("/held/" + i), "x");
      }
    });
    OutboxRelay relay = relay(table, b -> b.relayId("relay-a"));
    Receiver.await("three attempts under way", WAIT, () -> receiver.requests().size() == 3);
    try (Connection c = connect(); Statement s = c.createStatement()) {
      assertThat(s.executeUpdate("UPDATE " + table + " SET claimed_by = 'relay-b' WHERE event_id = '" + ids[1]
          + "'")).isEqualTo(1);
    }
    release.countDown();
    Receiver.await("two delivered, one claim lost", WAIT,
        () -> relay.metrics().deliveries(OutboxSchema.CHANNEL_HTTP, RelayMetrics.Outcome.DELIVERED) == 2
            && relay.metrics().deliveries(OutboxSchema.CHANNEL_HTTP, RelayMetrics.Outcome.CLAIM_LOST) == 1);
    assertThat(row(table, ids[0]).state()).isEqualTo(OutboxSchema.DELIVERED);
    assertThat(row(table, ids[2]).state()).isEqualTo(OutboxSchema.DELIVERED);
    OutboxTables.Row lost = row(table, ids[1]);
    assertThat(lost.state()).isEqualTo(OutboxSchema.PENDING);
    assertThat(lost.claimedBy()).isEqualTo("relay-b");
    assertThat(lost.attempts()).isZero();
  }

  /** The events of one key go one per claim; a backlog of them drains without waiting for a poll between two. */
  @Test
  void aBacklogOfOneKeyDrainsInOrderWithoutWaitingForThePoll() throws Exception {
    String table = newTable();
    int events = 30;
    for (int i = 0; i < events; i++) {
      int seq = i;
      transaction(2, null, true, c -> Outbox.post(c, table, receiver.uri("/one-key"), Integer.toString(seq)));
    }
    long start = System.nanoTime();
    relay(table, b -> b.pollInterval(Duration.ofSeconds(30)));
    Receiver.await("the backlog delivered", Duration.ofSeconds(10), () -> receiver.applied().size() == events);
    System.out.println("[throughput] " + events + " events of one key in " + (System.nanoTime() - start) / 1_000_000
        + " ms");
    assertThat(receiver.requests().stream().map(r -> Integer.parseInt(r.body())))
        .containsExactlyElementsOf(java.util.stream.IntStream.range(0, events).boxed().toList());
  }
}
