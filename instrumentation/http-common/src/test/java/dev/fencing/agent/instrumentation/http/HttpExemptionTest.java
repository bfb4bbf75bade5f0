package dev.fencing.agent.instrumentation.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.config.ConfigLoader;
import dev.fencing.agent.instrumentation.api.RejectionCounters;
import dev.fencing.agent.instrumentation.api.SideEffectCounters;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** fencing.exempt.http in the HTTP hook: untagged, never blocked, counted, decided without the policy. */
class HttpExemptionTest {
  private final SideEffectCounters counters = new SideEffectCounters();
  private final HttpFencing http = new HttpFencing(ConfigLoader.load(
      "lock=ledger,exempt.http=collector:4318,*.monitoring.svc", new Properties(), Map.of()),
      new RejectionCounters(), counters);

  @Test
  void writesToAnExemptDestinationPassUntaggedAndAreCountedReadsAreNotCounted() {
    Decision post = http.decide("POST", "http", "collector", 4318);
    Decision get = http.decide("GET", "http", "grafana.monitoring.svc", -1);

    assertThat(post.kind()).isEqualTo(Decision.Kind.PASS);
    assertThat(post.lock()).isEqualTo("ledger");
    assertThat(get.kind()).isEqualTo(Decision.Kind.PASS);
    assertThat(http.decide("PUT", "https", "eureka.monitoring.svc", -1)).isSameAs(post);
    assertThat(counters.count(Channel.HTTP, false, SideEffectCounters.Outcome.EXEMPT)).isEqualTo(2);
  }
}
