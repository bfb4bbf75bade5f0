package dev.fencing.agent.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class LogCorrelationTest {
  @AfterEach
  void restoreTheStartupFallback() {
    Fencing.installFallback(Decision.block("(unknown)", 0, BlockReason.AGENT_FAILED));
  }

  private static void current(Decision d) {
    Fencing.install(new SideEffectGate() {
      @Override
      public Decision decide(Channel channel, boolean write, boolean fenced) {
        return d;
      }

      @Override
      public Decision current() {
        return d;
      }
    });
  }

  @Test
  void aTagWithATokenIsCurrent() {
    Decision tag = Decision.tag("ledger", 42, null, "7a3f");
    current(tag);
    assertThat(LogCorrelation.current()).isSameAs(tag);
  }

  @Test
  void passBlockNoGateAndNoDecisionCarryNothing() {
    assertThat(LogCorrelation.current()).isNull(); // the core has not started
    current(Decision.pass("ledger"));
    assertThat(LogCorrelation.current()).isNull();
    current(Decision.block("ledger", 42, BlockReason.EXPIRED));
    assertThat(LogCorrelation.current()).isNull();
    current(null); // the agent's own threads
    assertThat(LogCorrelation.current()).isNull();
  }

  @Test
  void observeModeCarriesTheTokenItsSideEffectsCarry() {
    Decision observed = Decision.observedBlock("ledger", 42, BlockReason.EXPIRED, null, "7a3f");
    current(observed);
    assertThat(LogCorrelation.current()).isSameAs(observed);
  }

  @Test
  void aFailingGateCarriesNothing() {
    Fencing.install(new SideEffectGate() {
      @Override
      public Decision decide(Channel channel, boolean write, boolean fenced) {
        throw new IllegalStateException("boom");
      }

      @Override
      public Decision current() {
        throw new IllegalStateException("boom");
      }
    });
    assertThat(LogCorrelation.current()).isNull();
  }

  @Test
  void theKeysAreAddedToACopyOfTheEventsMap() {
    Map<String, String> mdc = new HashMap<>(Map.of("user", "alice"));
    Map<String, String> m = LogCorrelation.withKeys(mdc, Decision.tag("ledger", 42, null, "7a3f"));

    assertThat(m).containsExactlyInAnyOrderEntriesOf(
        Map.of("user", "alice", "fencing.lock", "ledger", "fencing.token", "42", "fencing.grant", "7a3f"));
    assertThat(mdc).containsExactly(Map.entry("user", "alice"));
    assertThatThrownBy(() -> m.put("x", "y")).isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void noMapAndNoGrant() {
    assertThat(LogCorrelation.withKeys(null, Decision.tag("ledger", 42)))
        .containsExactlyInAnyOrderEntriesOf(Map.of("fencing.lock", "ledger", "fencing.token", "42"));
  }

  @Test
  void theSameMapAndDecisionGiveTheSameMapAgain() {
    Map<String, String> mdc = Map.of("user", "alice");
    Decision d = Decision.tag("ledger", 42);
    Decision next = Decision.tag("ledger", 43);

    Map<String, String> first = LogCorrelation.withKeys(mdc, d);
    assertThat(LogCorrelation.withKeys(mdc, d)).isSameAs(first);
    assertThat(LogCorrelation.withKeys(mdc, next)).containsEntry("fencing.token", "43");
    assertThat(LogCorrelation.withKeys(Map.of("user", "bob"), next)).containsEntry("user", "bob");
  }
}
