package dev.fencing.agent.instrumentation.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** fencing.exempt.http: host, host:port and *.suffix entries, each host's answer remembered. */
class HostExemptionsTest {

  @Test
  void aHostWithoutAPortIsExemptOnEveryPort() {
    HostExemptions e = new HostExemptions(List.of("metrics.internal"));
    assertThat(e.exempt("http", "metrics.internal", 8080)).isTrue();
    assertThat(e.exempt("https", "metrics.internal", -1)).isTrue();
    assertThat(e.exempt("http", "METRICS.internal", 80)).as("host names ignore case").isTrue();
    assertThat(e.exempt("http", "metrics.internal.evil.com", 80)).isFalse();
    assertThat(e.exempt("http", "ledger.internal", 80)).isFalse();
  }

  @Test
  void aHostWithAPortIsExemptOnThatPortOnlyAndDefaultPortsFollowTheScheme() {
    HostExemptions e = new HostExemptions(List.of("collector:4318", "health:443"));
    assertThat(e.exempt("http", "collector", 4318)).isTrue();
    assertThat(e.exempt("http", "collector", 8080)).isFalse();
    assertThat(e.exempt("https", "health", -1)).isTrue();
    assertThat(e.exempt("http", "health", -1)).as("http's default port is 80").isFalse();
  }

  @Test
  void aSuffixEntryMatchesEveryHostEndingWithItButNotTheBareDomain() {
    HostExemptions e = new HostExemptions(List.of("*.monitoring.svc.cluster.local", "*.telemetry:4317"));
    assertThat(e.exempt("http", "prometheus.monitoring.svc.cluster.local", 9090)).isTrue();
    assertThat(e.exempt("http", "a.b.Monitoring.svc.cluster.local", 80)).isTrue();
    assertThat(e.exempt("http", "monitoring.svc.cluster.local", 80)).isFalse();
    assertThat(e.exempt("http", "evilmonitoring.svc.cluster.local", 80)).isFalse();
    assertThat(e.exempt("http", "otel.telemetry", 4317)).isTrue();
    assertThat(e.exempt("http", "otel.telemetry", 4318)).isFalse();
  }

  @Test
  void ipv6LiteralsMatchWithOrWithoutBrackets() {
    HostExemptions e = new HostExemptions(List.of("[::1]:9000"));
    assertThat(e.exempt("http", "[::1]", 9000)).isTrue();
    assertThat(e.exempt("http", "::1", 9000)).isTrue();
    assertThat(e.exempt("http", "::1", 9001)).isFalse();
  }

  @Test
  void noEntryExemptsNothingAndRemembersNothing() {
    HostExemptions e = new HostExemptions(List.of());
    assertThat(e.exempt("http", "anything", 80)).isFalse();
    assertThat(e.exempt("http", null, 80)).isFalse();
    assertThat(e.remembered()).isZero();
  }

  @Test
  void answersAreRememberedPerHostAndTheirNumberIsBounded() {
    HostExemptions e = new HostExemptions(List.of("*.svc"));
    for (int round = 0; round < 2; round++) {
      assertThat(e.exempt("http", "a.svc", 80)).isTrue();
      assertThat(e.exempt("http", "b.other", 80)).isFalse();
    }
    assertThat(e.remembered()).isEqualTo(2);
    for (int i = 0; i < 3 * HostExemptions.MAX_REMEMBERED; i++) {
      assertThat(e.exempt("http", "h" + i + ".svc", 80)).isTrue();
    }
    assertThat(e.remembered()).isEqualTo(HostExemptions.MAX_REMEMBERED);
    assertThat(e.exempt("http", "late.svc", 80)).as("computed, not remembered").isTrue();
  }
}
