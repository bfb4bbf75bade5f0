package dev.fencing.agent.instrumentation.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.config.ConfigLoader;
import dev.fencing.agent.instrumentation.api.RejectionCounters;
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
}
