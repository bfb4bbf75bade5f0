package dev.fencing.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Without the agent the API does nothing: current() is empty, a @Fenced method just runs. */
class FencingTest {
  private final List<String> ran = new ArrayList<>();

  @Fenced("orders")
  void job(String what) {
    ran.add(what);
  }

  @Fenced("orders")
  int report() {
    return ran.size();
  }

  @Test
  void currentIsEmptyWithoutTheAgent() {
    FencingContext c = Fencing.current();
    assertThat(c.isPresent()).isFalse();
    assertThat(c.lock()).isNull();
    assertThat(c.token()).isZero();
    assertThat(c.grant()).isNull();
    assertThat(c).isEqualTo(FencingContext.empty()).hasToString("FencingContext[empty]");
  }

  @Test
  void currentIsEmptyOnEveryThread() throws Exception {
    FencingContext[] seen = new FencingContext[1];
    Thread t = new Thread(() -> seen[0] = Fencing.current());
    t.start();
    t.join();
    assertThat(seen[0].isPresent()).isFalse();
  }

  @Test
  void fencedMethodsJustRunWithoutTheAgent() throws Exception {
    job("a");
    job("b");
    assertThat(ran).containsExactly("a", "b");
    assertThat(report()).isEqualTo(2);
    Fenced declared = FencingTest.class.getDeclaredMethod("job", String.class).getAnnotation(Fenced.class);
    assertThat(declared.value()).isEqualTo("orders");
  }

  @Test
  void aContextCarriesLockTokenAndGrant() {
    FencingContext c = FencingContext.of("orders", 42, "7f3a");
    assertThat(c.isPresent()).isTrue();
    assertThat(c.lock()).isEqualTo("orders");
    assertThat(c.token()).isEqualTo(42);
    assertThat(c.grant()).isEqualTo("7f3a");
    assertThat(c).hasToString("FencingContext[lock=orders, token=42, grant=7f3a]");
    assertThat(FencingContext.of("orders", 42, null).grant()).isNull();
  }

  @Test
  void contextsAreValues() {
    FencingContext a = FencingContext.of("orders", 43, "aa");
    assertThat(a).isEqualTo(FencingContext.of("orders", 43, "aa")).hasSameHashCodeAs(FencingContext.of("orders", 43, "aa"));
    assertThat(a).isNotEqualTo(FencingContext.of("orders", 43, "bb")).isNotEqualTo(FencingContext.of("orders", 44, "aa"))
        .isNotEqualTo(FencingContext.of("ledger", 43, "aa")).isNotEqualTo(FencingContext.empty());
  }

  @Test
  void theSameContextTwiceIsNotAllocatedAgain() {
    String lock = "orders";
    String grant = "abc";
    FencingContext first = FencingContext.of(lock, 99, grant);
    assertThat(FencingContext.of(lock, 99, grant)).isSameAs(first);
  }

  @Test
  void aContextNeedsALockAndAPositiveToken() {
    assertThatThrownBy(() -> FencingContext.of(null, 1, null)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("lock=null");
    assertThatThrownBy(() -> FencingContext.of("", 1, null)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> FencingContext.of("orders", 0, null)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("token=0");
  }
}
