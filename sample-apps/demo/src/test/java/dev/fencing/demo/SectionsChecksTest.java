package dev.fencing.demo;

import static dev.fencing.demo.SectionsFacts.REPLICA_A;
import static dev.fencing.demo.SectionsFacts.REPLICA_B;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.demo.EndStateChecks.Check;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The sections story's claims on hand-made stories (tokens 2 and 5; both up at 1000 ms, freeze at 5000, takeover at
 * 8000, resume at 10000, end at 12000): the usual one passes every check, and each broken one fails the claim it
 * breaks.
 */
class SectionsChecksTest {
  private static final String REFUSED = "org.springframework.jdbc.UncategorizedSQLException: PreparedStatementCallback;"
      + " uncategorized SQLException for SQL [INSERT INTO settlement_run (replica, orders_seen) VALUES (?, ?)]; SQL"
      + " state [25P03]; error code [0]; FATAL: terminating connection due to idle-in-transaction timeout";

  /** One story under construction, the usual one to begin with. */
  private static final class Story {
    List<String> starts = new ArrayList<>(List.of(REPLICA_A, REPLICA_B));
    List<SectionsFacts.Run> runs = new ArrayList<>(List.of(run(1, REPLICA_A, 2, 1500), run(2, REPLICA_A, 2, 3600),
        run(3, REPLICA_B, 5, 8050), run(4, REPLICA_B, 5, 10100)));
    List<OrderLoad.Request> requests = new ArrayList<>();
    Map<String, SectionsFacts.Orders> orders = new LinkedHashMap<>();
    SectionsFacts.Refusal refusal = SectionsFacts.Refusal.find("…\n" + REFUSED + "\n\tat …", 10050);
    Replica.Lock woke = new Replica.Lock("EXPIRED", 2);
    Replica.Lock finalA = new Replica.Lock("EXPIRED", 2);
    Replica.Lock finalB = new Replica.Lock("HOLDING", 5);
    String metricsA = "fencing_section_skipped_total{lock=\"settlement\"} 0\n";
    String metricsAAfter = "fencing_section_skipped_total{lock=\"settlement\"} 19\n"
        + "fencing_side_effects_total{channel=\"jdbc\",fenced=\"false\",lock=\"none\",outcome=\"passed\"} 40\n";
    String metricsB = "fencing_section_skipped_total{lock=\"settlement\"} 30\n";
    String metricsBAfter = "fencing_section_skipped_total{lock=\"settlement\"} 60\n";

    Story() {
      for (long at = 1000; at < 12000; at += 100) {
        if (at < 5000 || at >= 10000) {
          requests.add(new OrderLoad.Request(REPLICA_A, at, 201, "a" + at, null));
        }
        requests.add(new OrderLoad.Request(REPLICA_B, at + 50, 201, "b" + at, null));
      }
      recount();
    }

    /** The orders table as the load's 201s made it. */
    Story recount() {
      orders.put(REPLICA_A, new SectionsFacts.Orders(ok(REPLICA_A), 0));
      orders.put(REPLICA_B, new SectionsFacts.Orders(ok(REPLICA_B), 0));
      return this;
    }

    private long ok(String replica) {
      return requests.stream().filter(r -> r.replica().equals(replica) && r.ok()).count();
    }

    SectionsFacts facts() {
      return new SectionsFacts(2, 5, 500, 800, 1000, 5000, 8000, 10000, 12000, woke, finalA, finalB, refusal, 2,
          starts, runs, orders, requests, snapshot(metricsA, metricsB), snapshot(metricsAAfter, metricsBAfter));
    }

    List<Check> checks() {
      return SectionsChecks.run(facts());
    }
  }

  private static SectionsFacts.Run run(long id, String replica, long token, long at) {
    return new SectionsFacts.Run(id, replica, token, at);
  }

  private static MetricsSnapshot snapshot(String a, String b) {
    return MetricsSnapshot.scrape(List.of(new MetricsSnapshot.Source(REPLICA_A, () -> a),
        new MetricsSnapshot.Source(REPLICA_B, () -> b)));
  }

  private static List<String> failed(List<Check> checks) {
    return checks.stream().filter(c -> !c.ok()).map(Check::claim).toList();
  }

  @Test
  void theUsualStoryHoldsOnEveryClaim() {
    List<Check> checks = new Story().checks();
    assertThat(checks).hasSize(9).allSatisfy(c -> assertThat(c.ok()).as(c.claim() + ": " + c.evidence()).isTrue());
  }

  @Test
  void aRowOfTheFrozenHolderAfterTheFreezeFails() {
    Story s = new Story();
    s.runs.add(2, run(5, REPLICA_A, 2, 5100));
    assertThat(failed(s.checks())).containsExactly(
        "the job ran on the lock holder only: replica-a's runs carry token 2, replica-b's carry token 5 and all come"
            + " after replica-a's",
        "the run replica-a was frozen in was refused when it woke, and replica-a wrote no settlement row after the"
            + " freeze");
  }

  @Test
  void aRunOfTheSuccessorWithTheOldTokenOrNoneFails() {
    Story s = new Story();
    s.runs.set(3, run(4, REPLICA_B, -1, 10100));
    assertThat(failed(s.checks())).singleElement().asString().startsWith("the job ran on the lock holder only");
  }

  @Test
  void noRefusalInTheLogFails() {
    Story s = new Story();
    s.refusal = SectionsFacts.Refusal.find("INFO all fine\n", 10050);
    assertThat(s.refusal).isNull();
    assertThat(failed(s.checks())).singleElement().asString().startsWith("the run replica-a was frozen in");
  }

  @Test
  void aStandbyThatRanTheJobOrDidNotSkipFails() {
    Story s = new Story();
    s.metricsB = "fencing_section_skipped_total{lock=\"settlement\"} 0\n";
    s.runs.add(0, run(0, REPLICA_B, -1, 900));
    assertThat(failed(s.checks())).hasSize(2).anySatisfy(c -> assertThat(c).startsWith("replica-b's agent skipped"))
        .anySatisfy(c -> assertThat(c).startsWith("the job ran on the lock holder only"));
  }

  @Test
  void anOrderRefusedOnStandbyFails() {
    Story s = new Story();
    s.requests.add(new OrderLoad.Request(REPLICA_B, 2000, 500, "refused", "{\"status\":500}"));
    assertThat(failed(s.checks())).singleElement().asString().startsWith("both replicas served every order");
  }

  @Test
  void aTaggedOrderOrAMissingOneFails() {
    Story s = new Story();
    s.orders.put(REPLICA_B, new SectionsFacts.Orders(s.ok(REPLICA_B) - 1, 1));
    assertThat(failed(s.checks())).singleElement().asString().startsWith("every 201 is one row in orders");
  }

  @Test
  void aBlockedSideEffectOutsideTheSectionFails() {
    Story s = new Story();
    s.metricsBAfter += "fencing_side_effects_total{channel=\"jdbc\",fenced=\"false\",lock=\"none\","
        + "outcome=\"blocked\"} 3\n";
    assertThat(failed(s.checks())).singleElement().asString().startsWith("the agents blocked nothing outside");
  }

  @Test
  void theFrozenHolderHoldingAgainFails() {
    Story s = new Story();
    s.finalA = new Replica.Lock("HOLDING", 2);
    assertThat(failed(s.checks())).singleElement().asString().startsWith("replica-b took over with a higher token");
  }

  @Test
  void theRefusalIsFoundWithItsSqlState() {
    assertThat(SectionsFacts.Refusal.find("x\n" + REFUSED + "\n", 1)).extracting(SectionsFacts.Refusal::sqlState)
        .isEqualTo("25P03");
    assertThat(SectionsFacts.Refusal.find("java.sql.SQLException: Fencing Agent blocked a jdbc side effect"
        + " (SQLSTATE FN003)", 1).sqlState()).isEqualTo("FN003");
    assertThat(SectionsFacts.Refusal.find("ERROR: fencing: stale token 2 ... SQL state [FN001]", 1).sqlState())
        .isEqualTo("FN001");
  }

  @Test
  void sectionsIsItsOwnStory() {
    assertThat(DemoOptions.parse(new String[] {"--sections"}).sections()).isTrue();
    assertThatThrownBy(() -> DemoOptions.parse(new String[] {"--sections", "--observe"}))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--sections tells its own story");
  }
}
