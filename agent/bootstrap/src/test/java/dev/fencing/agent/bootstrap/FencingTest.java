package dev.fencing.agent.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class FencingTest {
  private static final Decision FAIL_CLOSED = Decision.block("ledger", 0, BlockReason.AGENT_FAILED);

  @AfterEach
  void restoreTheStartupFallback() {
    Fencing.installFallback(Decision.block("(unknown)", 0, BlockReason.AGENT_FAILED));
  }

  @ParameterizedTest
  @EnumSource(Channel.class)
  void withoutGateTheFallbackAppliesToWrites(Channel channel) {
    Fencing.installFallback(FAIL_CLOSED);

    assertThat(Fencing.decide(channel, true, true)).isSameAs(FAIL_CLOSED);
    assertThat(Fencing.decide(channel, true, false)).isSameAs(FAIL_CLOSED);
  }

  @ParameterizedTest
  @EnumSource(Channel.class)
  void withoutGateReadsPassEvenWhenTheFallbackBlocks(Channel channel) {
    Fencing.installFallback(FAIL_CLOSED);

    Decision d = Fencing.decide(channel, false, true);

    assertThat(d.kind()).isEqualTo(Decision.Kind.PASS);
    assertThat(d.lock()).isEqualTo("ledger");
  }

  @Test
  void withoutGateAPassingFallbackPassesReadsAndWrites() {
    Decision failOpen = Decision.pass("ledger");
    Fencing.installFallback(failOpen);

    assertThat(Fencing.decide(Channel.HTTP, true, false)).isSameAs(failOpen);
    assertThat(Fencing.decide(Channel.HTTP, false, false)).isSameAs(failOpen);
  }

  @Test
  void theStartupFallbackBlocksWritesAsAgentFailed() {
    Decision d = Fencing.decide(Channel.JDBC, true, false);

    assertThat(d.isBlock()).isTrue();
    assertThat(d.reason()).isEqualTo(BlockReason.AGENT_FAILED);
    assertThat(Fencing.decide(Channel.JDBC, false, false).isBlock()).isFalse();
  }

  @Test
  void installedGateDecides() {
    Decision tag = Decision.tag("ledger", 42);
    List<String> calls = new ArrayList<>();
    Fencing.install((channel, write, fenced) -> {
      calls.add(channel.label() + " write=" + write + " fenced=" + fenced);
      return tag;
    });

    assertThat(Fencing.decide(Channel.KAFKA, true, false)).isSameAs(tag);
    assertThat(Fencing.decide(Channel.JDBC, false, true)).isSameAs(tag);
    assertThat(calls).containsExactly("kafka write=true fenced=false", "jdbc write=false fenced=true");
  }

  @Test
  void installingAFallbackRemovesTheGate() {
    Fencing.install((channel, write, fenced) -> Decision.tag("ledger", 42));

    Fencing.installFallback(FAIL_CLOSED);

    assertThat(Fencing.decide(Channel.HTTP, true, true)).isSameAs(FAIL_CLOSED);
  }
}
