package dev.fencing.agent.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What every HTTP client advice does around one attempt, with a recording hook and gate in place of the core. */
class HttpAttemptTest {
  private final RecordingHttpHooks hooks = new RecordingHttpHooks();

  private void install(Decision answer) {
    hooks.install(answer);
  }

  @AfterEach
  void uninstall() {
    RecordingHttpHooks.uninstall();
  }

  @Test
  void aTagIsReturnedWithTheHeadersToSet() throws Exception {
    Decision tag = Decision.tag("orders", 7, null, "1a2b");
    install(tag);

    Decision d = HttpAttempt.decide("POST", "http", "ledger", 8080);

    assertThat(d).isSameAs(tag);
    assertThat(d.httpHeaders()).containsExactly("Fencing-Token", "7", "Fencing-Lock", "orders", "Fencing-Grant", "1a2b");
    assertThat(HttpAttempt.dropsGrant(d)).isFalse();
  }

  @Test
  void aTagWithoutGrantDropsTheGrantACopiedRequestMayCarry() throws Exception {
    install(Decision.tag("orders", 7));

    assertThat(HttpAttempt.dropsGrant(HttpAttempt.decide("POST", "http", "ledger", 8080))).isTrue();
    assertThat(HttpAttempt.dropsGrant(Decision.pass("orders"))).as("a pass leaves the request alone").isFalse();
  }

  @Test
  void aBlockIsThrownAsTheIoExceptionTheClientsCallerGets() {
    Decision block = Decision.block("orders", 7, BlockReason.EXPIRED);
    install(block);

    assertThatThrownBy(() -> HttpAttempt.decide("POST", "http", "ledger", 8080))
        .isInstanceOf(FencingBlockedException.class)
        .hasMessageContaining("lock 'orders', token 7")
        .satisfies(e -> assertThat(((FencingBlockedException) e).decision()).isSameAs(block));
  }

  @Test
  void failedRethrowsTheBlockAndCountsAnythingElseWithoutThrowing() throws Exception {
    install(Decision.pass("orders"));
    FencingBlockedException blocked = new FencingBlockedException(Channel.HTTP,
        Decision.block("orders", 7, BlockReason.EXPIRED));
    IllegalStateException agentError = new IllegalStateException("no such method");

    assertThatThrownBy(() -> HttpAttempt.failed(blocked)).isSameAs(blocked);
    HttpAttempt.failed(agentError);

    assertThat(hooks.hookFailures).containsExactly(agentError);
    assertThat(HttpAttempt.blocked(blocked)).isSameAs(blocked);
    assertThat(HttpAttempt.blocked(agentError)).isNull();
    assertThat(hooks.hookFailures).containsExactly(agentError, agentError);
  }

  @Test
  void failedFutureCarriesTheBlockAndIsNullAfterCountingAnythingElse() {
    install(Decision.pass("orders"));
    FencingBlockedException blocked = new FencingBlockedException(Channel.HTTP,
        Decision.block("orders", 7, BlockReason.EXPIRED));
    IllegalStateException agentError = new IllegalStateException("no such method");

    CompletableFuture<?> failed = HttpAttempt.failedFuture(blocked);
    assertThat(failed).isCompletedExceptionally();
    assertThatThrownBy(failed::join).hasCause(blocked);
    assertThat(hooks.hookFailures).isEmpty();
    assertThat(HttpAttempt.failedFuture(agentError)).isNull();
    assertThat(hooks.hookFailures).containsExactly(agentError);
  }

  @Test
  void onlyA409GoesToTheHook() {
    install(Decision.pass("orders"));

    HttpAttempt.responded(200, null);
    HttpAttempt.responded(409, "stale-token");
    HttpAttempt.responded(503, "stale-token");

    assertThat(hooks.responses).containsExactly("409 stale-token");
  }

  @Test
  void aResponseReadApartFromItsRequestGoesWithItsLockAndTarget() {
    install(Decision.pass("orders"));

    HttpAttempt.responded(200, null, "orders", "http", "ledger", 8080);
    HttpAttempt.responded(409, "stale-token", "orders", "http", "ledger", 8080);
    HttpAttempt.responded(409, "replayed-token", null, null, null, -1);

    assertThat(hooks.responses).containsExactly("409 stale-token lock orders at http ledger 8080",
        "409 replayed-token lock null at null null -1");
  }

  @Test
  void aRequestOfAnotherLibraryIsAnErrorNamingWhatWasExpected() {
    assertThatThrownBy(() -> RequestHeaders.APACHE_HTTPCLIENT_5.tag("not a request", Decision.tag("orders", 7)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("java.lang.String")
        .hasMessageContaining("org.apache.hc.core5.http.HttpMessage.setHeader(String, Object)");
  }

  @Test
  void aPassTouchesNothing() throws Throwable {
    RequestHeaders.APACHE_HTTPCLIENT_4.tag("not a request either", Decision.pass("orders"));
  }
}
