package dev.fencing.agent.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The headers every HTTP client hook sets, decided once per decision (docs/DESIGN.md section 5). */
class DecisionTest {
  @Test
  void aTagCarriesTokenAndLockThenSignatureAndGrantWhenItHasThem() {
    assertThat(Decision.tag("ledger", 42).httpHeaders())
        .containsExactly("Fencing-Token", "42", "Fencing-Lock", "ledger");
    assertThat(Decision.tag("ledger", 42, "c2ln", "1f").httpHeaders()).containsExactly(
        "Fencing-Token", "42", "Fencing-Lock", "ledger", "Fencing-Signature", "c2ln", "Fencing-Grant", "1f");
    assertThat(Decision.tag("ledger", 42, null, "1f").httpHeaders())
        .containsExactly("Fencing-Token", "42", "Fencing-Lock", "ledger", "Fencing-Grant", "1f");
  }

  @Test
  void observeModeTagsAsEnforceWouldAndNothingElseCarriesHeaders() {
    assertThat(Decision.observedBlock("ledger", 7, BlockReason.EXPIRED, null, "2a").httpHeaders())
        .containsExactly("Fencing-Token", "7", "Fencing-Lock", "ledger", "Fencing-Grant", "2a");
    assertThat(Decision.observedBlock("ledger", 0, BlockReason.STANDBY).httpHeaders()).isEmpty();
    assertThat(Decision.block("ledger", 7, BlockReason.EXPIRED).httpHeaders()).isEmpty();
    assertThat(Decision.pass("ledger").httpHeaders()).isEmpty();
  }

  @Test
  void theHeadersAreBuiltOnceNotPerCall() {
    Decision d = Decision.tag("ledger", 42, "c2ln", "1f");
    assertThat(d.httpHeaders()).isSameAs(d.httpHeaders());
  }
}
