package dev.fencing.agent.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Reactor Netty advice's helper with a recording HTTP hook in place of the core: the target read from Reactor
 * Netty's external form of a URL (for a decision and for the response that answers it), the carried context current
 * for the decision only, a response that is not one.
 */
class ReactorNettyHttpTest {
  private final RecordingHttpHooks hooks = new RecordingHttpHooks();

  @BeforeEach
  void install() {
    hooks.install(Decision.pass("orders"));
  }

  @AfterEach
  void uninstall() {
    RecordingHttpHooks.uninstall();
  }

  @Test
  void theTargetIsReadFromTheExternalFormWithTheSchemesDefaultPort() throws Exception {
    ReactorNettyHttp.decide(null, "POST", "http://ledger:8080/entries?x=1");
    ReactorNettyHttp.decide(null, "POST", "http://ledger/entries");
    ReactorNettyHttp.decide(null, "PUT", "https://ledger.example.com");
    ReactorNettyHttp.decide(null, "GET", "wss://ledger/socket");
    ReactorNettyHttp.decide(null, "DELETE", "http://[::1]:9090/x");
    ReactorNettyHttp.decide(null, "DELETE", "http://[::1]/x");
    ReactorNettyHttp.decide(null, "PATCH", "http://ledger:99999/x");

    assertThat(hooks.asked).containsExactly(
        "POST http ledger 8080",
        "POST http ledger 80",
        "PUT https ledger.example.com 443",
        "GET wss ledger 443",
        "DELETE http [::1] 9090",
        "DELETE http [::1] 80",
        "PATCH http ledger 80");
  }

  @Test
  void theCarriedContextDecidesAndIsGoneAfterwardsAlsoWhenBlocked() throws Exception {
    Decision inbound = Decision.tag("upstream", 41);
    hooks.answer = Decision.block("orders", 7, BlockReason.EXPIRED);

    assertThatThrownBy(() -> ReactorNettyHttp.decide(inbound, "POST", "http://ledger:8080/"))
        .isInstanceOf(FencingBlockedException.class);

    assertThat(hooks.asked).containsExactly("POST http ledger 8080 under " + inbound);
    assertThat(TokenContext.carried()).as("the event loop thread carries nothing afterwards").isNull();
  }

  @Test
  void withoutACarriedContextTheThreadsOwnDecides() throws Exception {
    Object outer = TokenContext.enter("upstream", "12");
    try {
      ReactorNettyHttp.decide(null, "POST", "http://ledger:8080/");
      assertThat(TokenContext.current()).isNotNull();
    } finally {
      TokenContext.exit(outer);
    }
    assertThat(hooks.asked).singleElement().asString().contains("under TAG[lock=upstream, token=12]");
  }

  @Test
  void aResponseGoesWithTheTargetOfItsAttemptReadAsTheDecisionReadsIt() {
    ReactorNettyHttp.responded(409, "stale-token", "orders", "http://ledger:8080/entries?x=1");
    ReactorNettyHttp.responded(409, "stale-token", "orders", "https://ledger.example.com");
    ReactorNettyHttp.responded(409, "replayed-token", null, "http://[::1]/x");
    ReactorNettyHttp.responded(409, "stale-token", "orders", null);

    assertThat(hooks.responses).containsExactly(
        "409 stale-token lock orders at http ledger 8080",
        "409 stale-token lock orders at https ledger.example.com 443",
        "409 replayed-token lock null at http [::1] 80",
        "409 stale-token lock orders at null null -1");
  }

  @Test
  void aResponseOfAnotherLibraryIsCountedAsAHookFailureAndNeverThrows() {
    ReactorNettyHttp.responded("not a response");

    assertThat(hooks.hookFailures).singleElement().asString()
        .contains("java.lang.String")
        .contains("reactor.netty.http.client.HttpClientResponse.status().code()");
  }
}
