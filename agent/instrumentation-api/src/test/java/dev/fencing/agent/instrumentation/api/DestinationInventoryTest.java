package dev.fencing.agent.instrumentation.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.bootstrap.BlockReason;
import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import org.junit.jupiter.api.Test;

class DestinationInventoryTest {
  private final Decision tag = Decision.tag("ledger", 7);
  private final Decision wouldBlock = Decision.observedBlock("ledger", 7, BlockReason.EXPIRED);
  private final Decision blocked = Decision.block("ledger", 7, BlockReason.STANDBY);
  private final Decision outside = Decision.pass("none");

  @Test
  void countsEachLocksDecisionsPerDestination() {
    DestinationInventory inv = new DestinationInventory();
    DestinationInventory.Destination topic = inv.kafka("orders");
    inv.record(topic, false, tag);
    inv.record(inv.kafka("orders"), false, wouldBlock);
    inv.record(inv.kafka("orders"), false, blocked);
    inv.record(inv.kafka("orders"), false, outside);

    assertThat(inv.kafka("orders")).isSameAs(topic);
    assertThat(topic.status()).isEqualTo(DestinationInventory.Status.UNFENCED);
    assertThat(topic.locks()).extracting(DestinationInventory.PerLock::lock).containsExactly("ledger", "none");
    DestinationInventory.PerLock ledger = topic.locks().get(0);
    assertThat(ledger.tagged()).isEqualTo(1);
    assertThat(ledger.wouldBlock()).isEqualTo(1);
    assertThat(ledger.blocked()).isEqualTo(1);
    assertThat(topic.locks().get(1).passed()).isEqualTo(1);
    assertThat(inv.count("ledger", Channel.KAFKA, DestinationInventory.Status.UNFENCED)).isEqualTo(1);
    assertThat(inv.count("ledger", Channel.KAFKA, DestinationInventory.Status.FENCED)).isZero();
  }

  @Test
  void anUnjudgedWriteMakesADestinationUnfencedAndAnExemptionWins() {
    DestinationInventory inv = new DestinationInventory();
    DestinationInventory.Destination fenced = inv.http("http", "Fenced.example", 8080);
    inv.record(fenced, true, tag);
    assertThat(fenced.status()).isEqualTo(DestinationInventory.Status.FENCED);
    assertThat(fenced.address()).isEqualTo("http://fenced.example:8080");
    inv.record(fenced, false, tag);
    assertThat(fenced.status()).isEqualTo(DestinationInventory.Status.UNFENCED);
    inv.recordExempt(fenced, "ledger");
    assertThat(fenced.status()).isEqualTo(DestinationInventory.Status.EXEMPT);
  }

  @Test
  void httpDestinationsAreSchemeHostAndPortWithTheDefaultPortFilledIn() {
    DestinationInventory inv = new DestinationInventory();
    assertThat(inv.http("https", "api", -1)).isSameAs(inv.http("https", "api", 443));
    assertThat(inv.http("http", "api", -1)).isNotSameAs(inv.http("https", "api", -1));
    assertThat(inv.http("http", "api", -1).address()).isEqualTo("http://api:80");
    DestinationInventory.PerLock p = inv.record(inv.http("http", "api", 80), false, tag);
    inv.method(p, "POST");
    inv.method(p, "delete");
    inv.method(p, "POST");
    assertThat(inv.methods(p)).containsExactly("DELETE", "POST");
  }

  @Test
  void tablesAreFoundByTheirSpanInTheStatementAndShownAsTheDatabaseFoldsThem() {
    DestinationInventory inv = new DestinationInventory();
    DestinationInventory.Database db = inv.database("jdbc:postgresql://h:5432/app?user=u&password=secret", null);
    assertThat(db.url()).isEqualTo("jdbc:postgresql://h:5432/app?user=u");
    String a = "INSERT INTO Orders VALUES (1)";
    String b = "UPDATE Orders SET x = 1";
    String c = "INSERT INTO app.ledger VALUES (1)";
    DestinationInventory.Destination orders = db.table(a, 12, 18, 12, 12, true, true, false);
    assertThat(db.table(b, 7, 13, 7, 7, true, true, false)).isSameAs(orders);
    assertThat(orders.table()).isEqualTo("orders");
    DestinationInventory.Destination ledger = db.table(c, 16, 22, 12, 15, true, true, false);
    assertThat(ledger).isNotSameAs(orders);
    assertThat(ledger.table()).isEqualTo("app.ledger");
    assertThat(db.noSingleTable().table()).isEqualTo(DestinationInventory.NO_SINGLE_TABLE);
    assertThat(db.noSingleTable()).isSameAs(db.noSingleTable());
    assertThat(inv.destinations()).containsExactly(orders, ledger, db.noSingleTable());
  }

  @Test
  void aKnownHttpEntryIsFoundForWhatComesBackWithoutAddingAnything() {
    DestinationInventory inv = new DestinationInventory(2);
    DestinationInventory.PerLock ledger = inv.record(inv.http("http", "api", 8080), true, tag);
    assertThat(inv.knownHttp("http", "api", 8080, new String("ledger"))).isSameAs(ledger);
    assertThat(inv.knownHttp("HTTP", "api", 8080, "ledger")).isSameAs(ledger);
    inv.record(inv.http("https", "api", -1), true, tag);
    assertThat(inv.knownHttp("https", "api", -1, "ledger")).isSameAs(inv.knownHttp("https", "api", 443, "ledger"))
        .isNotNull().isNotSameAs(ledger);
    // Another lock, port, host, or no lock at all (an untagged request): nothing, and nothing made.
    assertThat(inv.knownHttp("http", "api", 8080, "billing")).isNull();
    assertThat(inv.knownHttp("http", "api", 8081, "ledger")).isNull();
    assertThat(inv.knownHttp("http", "other", 8080, "ledger")).isNull();
    assertThat(inv.knownHttp("http", "api", 8080, null)).isNull();
    assertThat(inv.knownHttp("http", null, 8080, "ledger")).isNull();
    assertThat(inv.destinations()).hasSize(2);
    assertThat(inv.http("http", "api", 8080).locks()).hasSize(1);
    assertThat(inv.overflow()).isZero();
  }

  @Test
  void beyondTheCapDestinationsAreCountedAsOverflowOnly() {
    DestinationInventory inv = new DestinationInventory(2);
    assertThat(inv.kafka("a")).isNotNull();
    assertThat(inv.http("http", "h", 1)).isNotNull();
    assertThat(inv.kafka("b")).isNull();
    assertThat(inv.database("jdbc:h2:mem:x", null).table("DELETE FROM t", 12, 13, 12, 12, false, false, true))
        .isNull();
    assertThat(inv.record(null, false, tag)).isNull();
    assertThat(inv.overflow()).isEqualTo(2);
    assertThat(inv.destinations()).hasSize(2);
  }

  @Test
  void knownDestinationsAreFoundAndCountedWithoutAllocating() {
    DestinationInventory inv = new DestinationInventory();
    DestinationInventory.Database db = inv.database("jdbc:postgresql://h/app", null);
    String sql = "UPDATE orders SET x = 1";
    for (int i = 0; i < 20_000; i++) { // warm up: the JIT removes what escape analysis can
      inv.record(inv.kafka("orders"), false, tag);
      inv.record(db.table(sql, 7, 13, 7, 7, true, true, false), false, tag);
      inv.method(inv.record(inv.http("http", "api", 80), false, tag), "POST");
    }
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    long tid = Thread.currentThread().getId();
    long before = threads.getThreadAllocatedBytes(tid);
    for (int i = 0; i < 100_000; i++) {
      inv.record(inv.kafka("orders"), false, tag);
      inv.record(db.table(sql, 7, 13, 7, 7, true, true, false), false, tag);
      inv.method(inv.record(inv.http("http", "api", 80), false, tag), "POST");
    }
    long allocated = threads.getThreadAllocatedBytes(tid) - before;
    assertThat(allocated).as("bytes allocated by 300,000 lookups and counts").isLessThan(64 * 1024);
  }

  @Test
  void redactsCredentialsFromJdbcUrls() {
    assertThat(DestinationInventory.redact("jdbc:postgresql://u:p@h:5432/db?password=x&ssl=true&user=u"))
        .isEqualTo("jdbc:postgresql://h:5432/db?ssl=true&user=u");
    assertThat(DestinationInventory.redact("jdbc:sqlserver://h;user=u;password=p;encrypt=true"))
        .isEqualTo("jdbc:sqlserver://h;user=u;encrypt=true");
    assertThat(DestinationInventory.redact("jdbc:h2:mem:x")).isEqualTo("jdbc:h2:mem:x");
  }

  @Test
  void countsBlockedCommitsFailedBatchesAndCallerExemptWritesPerLock() {
    DestinationInventory inv = new DestinationInventory();
    DestinationInventory.Destination topic = inv.kafka("orders");
    DestinationInventory.PerLock p = inv.record(topic, false, tag);
    topic.of("ledger").batchFailed(3);
    p.commitBlocked();
    Decision flyway = Decision.exemptCaller("ledger", "org.flywaydb.");
    assertThat(flyway.kind()).isEqualTo(Decision.Kind.PASS);
    inv.record(topic, false, flyway);
    inv.record(topic, false, flyway);
    inv.record(topic, false, Decision.exemptCaller("ledger", "liquibase."));
    assertThat(p.failedBatches()).isEqualTo(1);
    assertThat(p.failedRecords()).isEqualTo(3);
    assertThat(p.blockedCommits()).isEqualTo(1);
    assertThat(p.exemptByCaller()).containsExactly(java.util.Map.entry("org.flywaydb.", 2L),
        java.util.Map.entry("liquibase.", 1L));
    assertThat(p.passed()).isZero();
    assertThat(p.tagged()).isEqualTo(1);
  }

  @Test
  void theCapIsBounded() {
    assertThat(new DestinationInventory(100_000).maxDestinations()).isEqualTo(100_000);
    org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
        .isThrownBy(() -> new DestinationInventory(0)).withMessageContaining("expected 1 to 100000");
  }

  @Test
  void aHostOrSqlTextMetAgainInAnotherStringFindsTheSameEntry() {
    DestinationInventory inv = new DestinationInventory();
    DestinationInventory.Destination a = inv.http("http", "api.example", 80);
    assertThat(inv.http("HTTP", new String("api.example"), -1)).isSameAs(a);
    assertThat(inv.http("https", "api.example", -1)).isNotSameAs(a);
    assertThat(inv.http("http", "api.example", 80)).isSameAs(a);
    DestinationInventory.Database db = inv.database("jdbc:postgresql://h/app", null);
    String sql = "DELETE FROM t";
    DestinationInventory.Destination t = db.table(sql, 12, 13, 12, 12, true, true, false);
    db.rememberSql(sql, t);
    assertThat(db.bySql(sql)).isSameAs(t);
    assertThat(db.bySql(new String(sql))).isSameAs(t);
    assertThat(db.bySql(sql)).isSameAs(t);
    assertThat(db.bySql("DELETE FROM u")).isNull();
  }
}
