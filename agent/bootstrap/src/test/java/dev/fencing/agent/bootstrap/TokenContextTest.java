package dev.fencing.agent.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TokenContextTest {
  @AfterEach
  void clean() {
    TokenContext.exit(new Object()); // removes whatever a failed test left
  }

  @Test
  void enterMakesThePairCurrentAndExitRestoresThePreviousOne() {
    assertThat(TokenContext.current()).isNull();
    Object outer = TokenContext.enter("ledger", "42");
    assertThat(TokenContext.current().lock()).isEqualTo("ledger");
    assertThat(TokenContext.current().tokenText()).isEqualTo("42");
    assertThat(TokenContext.current().isTag()).isTrue();

    Object same = TokenContext.enter("ledger", "42");
    assertThat(same).as("nested entry for the same request changes nothing").isNull();
    Object inner = TokenContext.enter("orders", "7");
    assertThat(TokenContext.current().lock()).isEqualTo("orders");
    TokenContext.exit(inner);
    TokenContext.exit(same);
    assertThat(TokenContext.current().token()).isEqualTo(42);
    TokenContext.exit(outer);
    assertThat(TokenContext.current()).isNull();
  }

  @Test
  void theInboundGrantIsCarriedAndAMalformedOneDropped() {
    Object scope = TokenContext.enter("ledger", "42", null, "694d8a3b1c2e0f11");
    assertThat(TokenContext.current().grant()).isEqualTo("694d8a3b1c2e0f11");
    assertThat(TokenContext.enter("ledger", "42", null, "694d8a3b1c2e0f11")).as("the same request").isNull();
    Object other = TokenContext.enter("ledger", "42", null, "694d8a3b1c2e0f99");
    assertThat(other).as("the same token from another grant is another context").isNotNull();
    assertThat(TokenContext.current().grant()).isEqualTo("694d8a3b1c2e0f99");
    TokenContext.exit(other);
    assertThat(TokenContext.current().grant()).isEqualTo("694d8a3b1c2e0f11");
    TokenContext.exit(scope);
    for (String bad : new String[] {"", "a b", "a".repeat(65), "\u00e9", "a\n", null}) {
      Object s = TokenContext.enter("ledger", "42", null, bad);
      assertThat(TokenContext.current().tokenText()).isEqualTo("42");
      assertThat(TokenContext.current().grant()).as("grant '%s'", bad).isNull();
      TokenContext.exit(s);
    }
    assertThat(TokenContext.wellFormedGrant("!" + "x".repeat(62) + "~")).isTrue();
    Object req = TokenContext.enterRequest(new Object(), "ledger", "42", null, "a1");
    assertThat(TokenContext.current().grant()).isEqualTo("a1");
    TokenContext.exitRequest(req);
    assertThat(TokenContext.current()).isNull();
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "0", "-1", "+1", " 1", "1 ", "12a", "9223372036854775808", "99999999999999999999",
      "1.0", "0x10", "١٢"})
  void malformedTokensChangeNothing(String token) {
    assertThat(TokenContext.enter("ledger", token)).isNull();
    assertThat(TokenContext.current()).isNull();
    assertThat(TokenContext.parseToken(token)).isEqualTo(-1);
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "a b", "a/b", "ü", "x\n"})
  void malformedLocksChangeNothing(String lock) {
    assertThat(TokenContext.enter(lock, "5")).isNull();
    assertThat(TokenContext.current()).isNull();
  }

  @Test
  void boundaries() {
    assertThat(TokenContext.parseToken("9223372036854775807")).isEqualTo(Long.MAX_VALUE);
    assertThat(TokenContext.parseToken("1")).isEqualTo(1);
    assertThat(TokenContext.parseToken(null)).isEqualTo(-1);
    assertThat(TokenContext.validLock("a".repeat(128))).isTrue();
    assertThat(TokenContext.validLock("a".repeat(129))).isFalse();
    assertThat(TokenContext.validLock(null)).isFalse();
  }

  @Test
  void wrappedTasksRunUnderTheSubmittersPairAndLeaveTheRunningThreadClean() throws Exception {
    Runnable plain = () -> {};
    assertThat(TokenContext.wrap(plain)).as("no context: the task itself").isSameAs(plain);

    AtomicReference<String> seen = new AtomicReference<>();
    Object scope = TokenContext.enter("ledger", "9");
    Runnable wrapped = TokenContext.wrap(() -> seen.set(TokenContext.current().tokenText()));
    Callable<String> callable = TokenContext.wrap(() -> TokenContext.current().lock());
    assertThat(TokenContext.wrap(wrapped)).as("wrapped once").isSameAs(wrapped);
    TokenContext.exit(scope);

    Thread t = new Thread(wrapped);
    t.start();
    t.join();
    assertThat(seen.get()).isEqualTo("9");
    assertThat(callable.call()).isEqualTo("ledger");
    assertThat(TokenContext.current()).as("restored after the task").isNull();
  }

  /** thenCombine, applyToEither and the other two-stage forms: one wrapper of the function's own type. */
  @Test
  void theFunctionOfATwoStageFormIsWrappedAsWhatItIs() {
    java.util.function.BiFunction<String, String, String> combine = (a, b) -> TokenContext.current().tokenText();
    assertThat(TokenContext.wrapStageFunction(combine)).as("no context: itself").isSameAs(combine);
    Object scope = TokenContext.enter("ledger", "9");
    Object wrapped = TokenContext.wrapStageFunction(combine);
    java.util.function.Function<String, String> either = x -> TokenContext.current().lock();
    Object wrappedEither = TokenContext.wrapStageFunction(either);
    Object both = new BothKinds();
    Object notWrapped = TokenContext.wrapStageFunction(both);
    TokenContext.exit(scope);

    assertThat(wrapped).isInstanceOf(java.util.function.BiFunction.class).isNotSameAs(combine);
    @SuppressWarnings("unchecked")
    String token = ((java.util.function.BiFunction<String, String, String>) wrapped).apply("a", "b");
    assertThat(token).isEqualTo("9");
    @SuppressWarnings("unchecked")
    String lock = ((java.util.function.Function<String, String>) wrappedEither).apply("x");
    assertThat(lock).isEqualTo("ledger");
    assertThat(notWrapped).as("a Function and a Runnable at once: no one wrapper stands for both").isSameAs(both);
    assertThat(TokenContext.current()).isNull();
  }

  private static final class BothKinds implements java.util.function.Function<Object, Object>, Runnable {
    @Override
    public Object apply(Object o) {
      return o;
    }

    @Override
    public void run() {}
  }

  @Test
  void tasksOfPoolsThatOrderTasksByTheirTypeAreNeverReplaced() {
    java.util.concurrent.ThreadPoolExecutor fifo = new java.util.concurrent.ThreadPoolExecutor(1, 1, 0,
        java.util.concurrent.TimeUnit.SECONDS, new java.util.concurrent.LinkedBlockingQueue<>());
    java.util.concurrent.ThreadPoolExecutor priority = new java.util.concurrent.ThreadPoolExecutor(1, 1, 0,
        java.util.concurrent.TimeUnit.SECONDS, new java.util.concurrent.PriorityBlockingQueue<>());
    class Ranked implements Runnable, Comparable<Ranked> {
      @Override
      public void run() {}

      @Override
      public int compareTo(Ranked o) {
        return 0;
      }
    }
    Runnable plain = () -> {};
    Ranked ranked = new Ranked();
    Object scope = TokenContext.enter("ledger", "9");
    try {
      assertThat(TokenContext.wrap(plain, fifo)).isNotSameAs(plain);
      assertThat(TokenContext.wrap(plain, priority)).as("a priority queue casts to Comparable").isSameAs(plain);
      assertThat(TokenContext.wrap(ranked, fifo)).as("a Comparable task keeps its type").isSameAs(ranked);
      assertThat(TokenContext.wrap(plain, new Object())).isNotSameAs(plain);
    } finally {
      TokenContext.exit(scope);
      fifo.shutdown();
      priority.shutdown();
    }
  }

  @Test
  void aRequestIsHandledOnceWhateverTheNestingAndLeavesTheThreadClean() {
    Object exchange = new Object();
    assertThat(TokenContext.handling(exchange)).isFalse();
    Object scope = TokenContext.enterRequest(exchange, "ledger", "42", null);
    assertThat(scope).isNotNull();
    assertThat(TokenContext.handling(exchange)).isTrue();
    assertThat(TokenContext.handling(new Object())).as("another request").isFalse();
    assertThat(TokenContext.handling(null)).isFalse();
    assertThat(TokenContext.current().tokenText()).isEqualTo("42");

    TokenContext.exitRequest(null); // what a nested entry that skipped returns: changes nothing
    assertThat(TokenContext.handling(exchange)).isTrue();
    assertThat(TokenContext.current().tokenText()).isEqualTo("42");

    TokenContext.exitRequest(scope);
    assertThat(TokenContext.handling(exchange)).isFalse();
    assertThat(TokenContext.current()).isNull();
  }

  @Test
  void anUntaggedOrMalformedRequestIsMarkedAndChangesNoContext() {
    Object untagged = new Object();
    Object scope = TokenContext.enterRequest(untagged, null, null, null);
    assertThat(scope).isNotNull();
    assertThat(TokenContext.handling(untagged)).isTrue();
    assertThat(TokenContext.current()).isNull();
    TokenContext.exitRequest(scope);
    assertThat(TokenContext.handling(untagged)).isFalse();

    Object outer = TokenContext.enter("ledger", "9");
    Object malformed = new Object();
    scope = TokenContext.enterRequest(malformed, "ledger", "x9", null);
    assertThat(TokenContext.handling(malformed)).isTrue();
    assertThat(TokenContext.current().tokenText()).as("the context before").isEqualTo("9");
    TokenContext.exitRequest(scope);
    assertThat(TokenContext.current().tokenText()).isEqualTo("9");
    TokenContext.exit(outer);
  }

  @Test
  void aRequestHandledInsideAnotherOnTheSameThreadRestoresTheOuterOne() {
    Object first = new Object();
    Object second = new Object();
    Object outer = TokenContext.enterRequest(first, "ledger", "42", null);
    Object inner = TokenContext.enterRequest(second, "orders", "7", null);
    assertThat(TokenContext.handling(second)).isTrue();
    assertThat(TokenContext.handling(first)).isFalse();
    assertThat(TokenContext.current().lock()).isEqualTo("orders");

    TokenContext.exitRequest(inner);
    assertThat(TokenContext.handling(first)).isTrue();
    assertThat(TokenContext.current().lock()).isEqualTo("ledger");
    TokenContext.exitRequest(outer);
    assertThat(TokenContext.handling(first)).isFalse();
    assertThat(TokenContext.current()).isNull();
  }
}
