package dev.fencing.agent.status;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.ConfigLoader;
import dev.fencing.agent.token.Grant;
import dev.fencing.agent.token.LossReason;
import dev.fencing.agent.token.TokenState;
import dev.fencing.agent.token.TokenStateFixtures;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class StatusJsonTest {
  private static final long MILLI = TimeUnit.MILLISECONDS.toNanos(1);

  private final AtomicLong clock = new AtomicLong(TimeUnit.SECONDS.toNanos(1_000));
  private final TokenState state = TokenStateFixtures.onClock("ledger", Long.MAX_VALUE, clock::get);
  private final AgentConfig config = config("holder.id", "host-1/42");

  private static AgentConfig config(String key, String value) {
    Properties sysprops = new Properties();
    sysprops.setProperty("fencing.lock", "ledger");
    sysprops.setProperty("fencing." + key, value);
    return ConfigLoader.load(null, sysprops, Map.of());
  }

  /** Grant of token 42 on etcd cluster 0xabc, lease 0x1f, with 3.5 s left. */
  private Grant holdToken42() {
    return state.granted(42, 0x1f, 0xabc, clock.get() + 3_500 * MILLI);
  }

  private String render() {
    return StatusJson.render(state, config, 0);
  }

  @Test
  void rendersAFlatJsonObject() {
    String json = render();

    assertThat(json).startsWith("{\"").endsWith("}").doesNotContain(",}").doesNotContain(",,");
  }

  /** The fields and their order are what readers match on (scripts and the demo read them with patterns). */
  @Test
  void theTopLevelFieldsComeInTheirDocumentedOrder() {
    holdToken42();
    java.util.List<String> keys = new java.util.ArrayList<>();
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"(\\w+)\":").matcher(render());
    while (m.find()) {
      keys.add(m.group(1));
    }
    assertThat(keys).containsExactly("lock", "state", "token", "highestSeenToken", "leaseRemainingMs", "holderId",
        "etcdClusterId", "leaseId", "lastLossReason", "tokenReused", "tokenOverflow", "tokenMax", "tokenReuseTotal",
        "tokenOverflowTotal", "acquisitionsTotal", "mode", "failMode", "detail", "configProblems", "configWarnings",
        "unfencedClassLoaders", "unfencedClassLoadersTotal", "premainMicros");
  }

  @Test
  void holdingShowsTokenRemainingTimeAndIdentity() {
    holdToken42();

    assertThat(render()).contains(
        "\"lock\":\"ledger\"",
        "\"state\":\"HOLDING\"",
        "\"token\":42,",
        "\"highestSeenToken\":42,",
        "\"leaseRemainingMs\":3500,",
        "\"holderId\":\"host-1/42\"",
        "\"etcdClusterId\":\"abc\"",
        "\"leaseId\":\"1f\"",
        "\"lastLossReason\":null");
  }

  @Test
  void remainingTimeCountsDownWithTheClock() {
    holdToken42();
    clock.addAndGet(1_000 * MILLI);

    assertThat(render()).contains("\"leaseRemainingMs\":2500,");
  }

  @Test
  void afterALossShowsTheLastTokenAndTheReason() {
    state.lost(holdToken42(), LossReason.KEY_DELETED);

    assertThat(render()).contains(
        "\"state\":\"LOST\"",
        "\"token\":42,",
        "\"highestSeenToken\":42,",
        "\"leaseRemainingMs\":0,",
        "\"lastLossReason\":\"key_deleted\"");
  }

  @Test
  void deadlinePassedAtReadTimeShowsExpired() {
    Grant g = holdToken42();
    clock.set(g.deadlineNanos());

    assertThat(render()).contains("\"state\":\"EXPIRED\"", "\"leaseRemainingMs\":0,", "\"lastLossReason\":null");
  }

  @Test
  void beforeAnyGrantShowsNoTokenAndNoCluster() {
    assertThat(render()).contains(
        "\"state\":\"STARTING\"",
        "\"token\":0,",
        "\"highestSeenToken\":0,",
        "\"leaseRemainingMs\":0,",
        "\"etcdClusterId\":null",
        "\"lastLossReason\":null");
  }

  @Test
  void escapesQuotesAndBackslashesInStrings() {
    String json = StatusJson.render(state, config("holder.id", "host \"one\" \\ two"), 0);

    assertThat(json).contains("\"holderId\":\"host \\\"one\\\" \\\\ two\"");
  }

  @Test
  void escapesControlCharacters() {
    state.failed("line1\nline2 \"x\"");

    assertThat(render()).contains("\"detail\":\"line1\\u000aline2 \\\"x\\\"\"");
  }

  @Test
  void listsConfigurationProblems() {
    String json = StatusJson.render(state, config("mode", "yolo"), 0);

    assertThat(json).contains("\"configProblems\":[\"fencing.mode='yolo'");
  }
}
