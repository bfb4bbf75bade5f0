package dev.fencing.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The workers' report lines, and how the demo tells who stopped a side effect. */
class SideEffectTest {
  private static final String LOG = String.join("\n",
      "[fencing-agent] INFO lease acquired",
      "SIDE 1000 7 jdbc OK",
      "SIDE 1001 7 http-inventory 201 reserved",
      "SIDE 1002 7 kafka OK offset=6",
      "SIDE 1003 7 webhook 204",
      "SIDE 2000 8 jdbc ERR SQLSTATE=FN001 org.postgresql.util.PSQLException: ERROR: fencing: stale token 2 for lock"
          + " 'ledger' on public.account: current fence token is 3",
      "SIDE 2001 8 http-inventory 409 {\"type\":\"urn:fencing:problem:stale-token\"}",
      "SIDE 2002 8 webhook ERR dev.fencing.agent.bootstrap.FencingBlockedException: Fencing Agent blocked a http"
          + " side effect: lock 'ledger', token 2: the lease expired",
      "SIDE 2003 9 jdbc ERR SQLSTATE=FN003 java.sql.SQLException: Fencing Agent blocked a jdbc side effect",
      "SIDE 2004 9 kafka ERR org.apache.kafka.common.KafkaException: Fencing Agent blocked a kafka side effect",
      "");

  @Test
  void parsesEveryReportLineAndNothingElse() {
    List<SideEffect> effects = SideEffect.parse("worker-a", LOG);
    assertThat(effects).hasSize(9);
    assertThat(effects.get(0)).isEqualTo(new SideEffect("worker-a", 1000, 7, "jdbc", "OK"));
    assertThat(effects.get(1).httpStatus()).isEqualTo(201);
  }

  @Test
  void acceptedOutcomes() {
    assertThat(SideEffect.parse("w", LOG).subList(0, 4)).allSatisfy(e -> {
      assertThat(e.ok()).as(e.outcome()).isTrue();
      assertThat(e.blockedByAgent()).isFalse();
    });
  }

  @Test
  void fenceRejectionsAreNotAgentBlocks() {
    List<SideEffect> effects = SideEffect.parse("w", LOG);
    SideEffect stale = effects.get(4);
    assertThat(stale.ok()).isFalse();
    assertThat(stale.sqlState()).isEqualTo("FN001");
    assertThat(stale.staleDetail()).isEqualTo("token 2 < fence token 3");
    assertThat(stale.blockedByAgent()).isFalse();
    assertThat(effects.get(5).httpStatus()).isEqualTo(409);
    assertThat(effects.get(5).blockedByAgent()).isFalse();
  }

  @Test
  void agentBlocksOnEveryChannel() {
    List<SideEffect> effects = SideEffect.parse("w", LOG);
    assertThat(List.of(effects.get(6), effects.get(7), effects.get(8)))
        .allSatisfy(e -> assertThat(e.blockedByAgent()).as(e.outcome()).isTrue());
    assertThat(effects.get(6).httpStatus()).isEqualTo(-1);
  }

  @Test
  void onlyAnUnansweredFailureHasAnUnknownOutcome() {
    List<SideEffect> effects = SideEffect.parse("w", LOG + "SIDE 3000 10 http-inventory ERR "
        + "java.net.http.HttpTimeoutException: request timed out\n");
    assertThat(effects.get(effects.size() - 1).indeterminate()).isTrue();
    assertThat(effects.subList(0, effects.size() - 1)).allSatisfy(e -> assertThat(e.indeterminate()).as(e.outcome())
        .isFalse());
  }
}
