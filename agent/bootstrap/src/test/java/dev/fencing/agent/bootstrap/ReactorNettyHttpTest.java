package dev.fencing.agent.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Reactor Netty advice's helper with a recording HTTP hook in place of the core: the target read from Reactor
 * Netty's external form of a URL, the carried context current for the decision only, a response that is not one.
 */
class ReactorNettyHttpTest {
  private final List<String> asked = new ArrayList<>();
  private final List<Throwable> hookFailures = new ArrayList<>();
  private Decision answer = Decision.pass("orders");

  @BeforeEach
  void install() {
    Fencing.install(new SideEffectGate() {
      @Override
      public Decision decide(Channel channel, boolean write, boolean fenced) {
        return answer;
      }

      @Override
      public Decision hookFailed(Channel channel, boolean write, Throwable error) {
        hookFailures.add(error);
        return Decision.pass("orders");
      }
    });
    Fencing.installHttp(new HttpHook() {
      @Override
      public Decision decide(String method, String scheme, String host, int port) {
        Object carried = TokenContext.carried();
        asked.add(method + " " + scheme + " " + host + " " + port + (carried == null ? "" : " under " + carried));
        return answer;
      }

      @Override
      public void responded(int status, String rejectedHeader) {}

      @Override
      public void observe(CompletableFuture<?> response) {}
    });
  }

  @AfterEach
  void uninstall() {
    Fencing.installHttp(HttpHook.NOOP);
    Fencing.installFallback(Decision.block("(unknown)", 0, BlockReason.AGENT_FAILED));
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

    assertThat(asked).containsExactly(
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
    answer = Decision.block("orders", 7, BlockReason.EXPIRED);

    assertThatThrownBy(() -> ReactorNettyHttp.decide(inbound, "POST", "http://ledger:8080/"))
        .isInstanceOf(FencingBlockedException.class);

    assertThat(asked).containsExactly("POST http ledger 8080 under " + inbound);
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
    assertThat(asked).singleElement().asString().contains("under TAG[lock=upstream, token=12]");
  }

  @Test
  void aResponseOfAnotherLibraryIsCountedAsAHookFailureAndNeverThrows() {
    ReactorNettyHttp.responded("not a response");

    assertThat(hookFailures).singleElement().asString()
        .contains("java.lang.String")
        .contains("reactor.netty.http.client.HttpClientResponse.status().code()");
  }
}
