package dev.fencing.agent.instrumentation.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.bootstrap.BlockReason;
import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.SideEffectGate;
import dev.fencing.agent.config.ConfigLoader;
import dev.fencing.agent.instrumentation.api.DestinationInventory;
import dev.fencing.agent.instrumentation.api.RejectionCounters;
import dev.fencing.agent.instrumentation.api.SideEffectCounters;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** How the HTTP hook classifies methods and the responses of fences (fencing_rejections_total{channel="http",reason}). */
class HttpFencingTest {

  /** A lower-case "post" (which some clients send as written) is a side effect like POST, not a read. */
  @Test
  void methodsAreMatchedIgnoringCase() {
    HttpFencing http = new HttpFencing(ConfigLoader.load("lock=ledger", new Properties(), Map.of()),
        new RejectionCounters());
    assertThat(http.unsafe("POST")).isTrue();
    assertThat(http.unsafe("post")).isTrue();
    assertThat(http.unsafe("Delete")).isTrue();
    assertThat(http.unsafe("GET")).isFalse();
    assertThat(http.unsafe("get")).isFalse();
    assertThat(http.unsafe(null)).isTrue(); // a method the hook could not read counts as a write
  }

  /** A method string the client built at run time (not the constant "POST") is matched by its value. */
  @Test
  void methodsBuiltAtRunTimeAreMatchedByValue() {
    HttpFencing http = new HttpFencing(ConfigLoader.load("lock=ledger", new Properties(), Map.of()),
        new RejectionCounters());
    String post = new String(new char[] {'P', 'O', 'S', 'T'});
    assertThat(post).isNotSameAs("POST");
    assertThat(http.unsafe(post)).isTrue();
    assertThat(http.unsafe(new String(new char[] {'G', 'E', 'T'}))).isFalse();
  }

  /** fencing.fenced.http matches a host whatever its case, on the configured port or the scheme's default. */
  @Test
  void fencedHostsAreMatchedIgnoringCase() {
    Properties p = new Properties();
    p.setProperty("fencing.lock", "ledger");
    p.setProperty("fencing.fenced.http", "Ledger.Internal:8443,payments.internal");
    HttpFencing http = new HttpFencing(ConfigLoader.load("", p, Map.of()), new RejectionCounters());
    assertThat(http.fenced("https", "ledger.internal", 8443)).isTrue();
    assertThat(http.fenced("https", "LEDGER.internal", 8443)).isTrue();
    assertThat(http.fenced("https", "ledger.internal", 443)).isFalse();
    assertThat(http.fenced("https", "ledger.interna1", 8443)).isFalse(); // same length, one character apart
    assertThat(http.fenced("http", "Payments.Internal", -1)).isTrue();
    assertThat(http.fenced("https", "payments.internal.evil", 443)).isFalse();
    assertThat(http.fenced("https", null, 443)).isFalse();
  }

  @Test
  void a409WithFencingRejectedIsCountedByItsReason() {
    RejectionCounters rejections = new RejectionCounters();
    HttpFencing http = new HttpFencing(ConfigLoader.load("lock=ledger", new Properties(), Map.of()), rejections);
    http.responded(409, "stale-token");
    http.responded(409, " Replayed-Token ");
    http.responded(409, "replayed-token");
    http.responded(409, null);
    http.responded(409, "something-else");
    http.responded(400, "malformed-token");
    http.responded(200, "replayed-token");
    assertThat(rejections.count(Channel.HTTP, RejectionCounters.Reason.STALE_TOKEN)).isEqualTo(1);
    assertThat(rejections.count(Channel.HTTP, RejectionCounters.Reason.REPLAYED_TOKEN)).isEqualTo(2);
    assertThat(rejections.count(Channel.HTTP, RejectionCounters.Reason.MISSING_TOKEN)).isZero();
  }

  /**
   * A response read apart from the thread that sent its request (an async client's I/O thread) is credited to the
   * entry of its own target and the lock of the pair it carried, not to what this thread sent last; without a pair,
   * or toward an entry never made, it is counted but credited nowhere, and nothing is added to the inventory.
   */
  @Test
  void a409ReadOnAnotherThreadIsCreditedToItsOwnTargetAndLock() {
    RejectionCounters rejections = new RejectionCounters();
    DestinationInventory inventory = new DestinationInventory();
    HttpFencing http = new HttpFencing(ConfigLoader.load("lock=ledger", new Properties(), Map.of()), rejections,
        new SideEffectCounters(), inventory);
    Decision tag = Decision.tag("ledger", 7);
    DestinationInventory.PerLock fence = inventory.record(inventory.http("http", "fence.internal", 8443), true, tag);
    Fencing.install(new SideEffectGate() {
      @Override
      public Decision decide(Channel channel, boolean write, boolean fenced) {
        return tag;
      }

      @Override
      public Decision hookFailed(Channel channel, boolean write, Throwable error) {
        return tag;
      }
    });
    try {
      http.decide("POST", "http", "mail.internal", -1); // what this thread sent last
    } finally {
      Fencing.installFallback(Decision.block("(unknown)", 0, BlockReason.AGENT_FAILED));
    }
    DestinationInventory.PerLock mail = inventory.knownHttp("http", "mail.internal", 80, "ledger");

    http.responded(409, "stale-token", "ledger", "http", "fence.internal", 8443);
    http.responded(409, "replayed-token", "ledger", "HTTP", "fence.internal", 8443);
    http.responded(409, "stale-token", null, "http", "fence.internal", 8443);
    http.responded(409, "stale-token", "billing", "http", "fence.internal", 8443);
    http.responded(409, "stale-token", "ledger", "http", "elsewhere.internal", 8443);
    http.responded(409, "stale-token", "ledger", null, null, -1);
    http.responded(409, "something-else", "ledger", "http", "fence.internal", 8443);
    http.responded(200, "stale-token", "ledger", "http", "fence.internal", 8443);

    assertThat(fence.rejections()).isEqualTo(2);
    assertThat(mail.rejections()).isZero();
    assertThat(rejections.count(Channel.HTTP, RejectionCounters.Reason.STALE_TOKEN)).isEqualTo(5);
    assertThat(rejections.count(Channel.HTTP, RejectionCounters.Reason.REPLAYED_TOKEN)).isEqualTo(1);
    assertThat(inventory.destinations()).extracting(DestinationInventory.Destination::address)
        .containsExactly("http://fence.internal:8443", "http://mail.internal:80");
  }
}
