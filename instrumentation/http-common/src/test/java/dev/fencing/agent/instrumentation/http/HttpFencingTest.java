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
}
