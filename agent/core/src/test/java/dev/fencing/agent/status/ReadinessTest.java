package dev.fencing.agent.status;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.config.ConfigLoader;
import dev.fencing.agent.scope.Scopes;
import dev.fencing.agent.token.LossReason;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class ReadinessTest {
  private static final long FAR = 60_000_000_000L;

  private static Scopes scopes(String args) {
    return Scopes.of(ConfigLoader.load(args, new Properties(), Map.of()));
  }

  @Test
  void failedIsNotReadyWithItsReason() {
    Scopes s = scopes("lock=ledger");
    s.failed("etcd unreachable: connection refused");
    Readiness.Answer a = Readiness.of(s, false);
    assertThat(a.status()).isEqualTo(503);
    assertThat(a.line()).isEqualTo("not ready: lock 'ledger' FAILED: etcd unreachable: connection refused");
  }

  @Test
  void aStandbyIsReadyUnlessHoldingIsRequired() {
    Scopes s = scopes("lock=ledger");
    s.outside().state().standby("another holder");
    assertThat(Readiness.of(s, false).status()).isEqualTo(200);
    assertThat(Readiness.of(s, false).line()).isEqualTo("ready: lock 'ledger' STANDBY");
    assertThat(Readiness.of(s, true).status()).isEqualTo(503);
    assertThat(Readiness.of(s, true).line())
        .isEqualTo("not ready: lock 'ledger' STANDBY (fencing.ready.require-holding=true)");
  }

  @Test
  void theHolderIsReadyAndALostLeaseIsNotWhenHoldingIsRequired() {
    Scopes s = scopes("lock=ledger");
    dev.fencing.agent.token.Grant g = s.outside().state().granted(7, 1, 1, System.nanoTime() + FAR);
    assertThat(Readiness.of(s, true).status()).isEqualTo(200);
    assertThat(Readiness.of(s, true).line()).isEqualTo("ready: lock 'ledger' HOLDING with fencing token 7");
    s.outside().state().lost(g, LossReason.LEASE_REVOKED);
    assertThat(Readiness.of(s, true).status()).isEqualTo(503);
    assertThat(Readiness.of(s, false).status()).isEqualTo(200);
  }

  @Test
  void withoutAJvmWideLockOnlyFailedCounts() {
    assertThat(Readiness.of(scopes("lease.enabled=false"), true).line()).isEqualTo("ready: no JVM-wide lock");
    Scopes sections = scopes("sections=com.acme.Jobs#run@jobs");
    assertThat(Readiness.of(sections, true).status()).isEqualTo(200);
    sections.failed("invalid configuration: x");
    assertThat(Readiness.of(sections, true).status()).isEqualTo(503);
  }
}
