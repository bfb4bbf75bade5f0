package dev.fencing.agent.instrumentation.fencingapi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.api.Fenced;
import dev.fencing.api.Fencing;
import dev.fencing.api.FencingContext;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.type.TypeDescription;
import org.junit.jupiter.api.Test;

/** What the agent reads of the application's API, on the API's real classes and on classes of other shapes. */
class ApiContractTest {
  /** An API of another shape: a current() whose result has no of(String, long, String). */
  static final class OtherApi {
    public static String current() {
      return "";
    }
  }

  abstract static class Jobs {
    @Fenced("orders")
    void run() {}

    @Fenced("orders")
    int report() {
      return 1;
    }

    @Fenced("orders")
    abstract void later();

    void plain() {}

    static final class Nested {
      @Fenced("ledger")
      static void post() {}
    }
  }

  private static MethodDescription method(Class<?> type, String name) {
    return TypeDescription.ForLoadedType.of(type).getDeclaredMethods().filter(m -> m.getName().equals(name))
        .getOnly();
  }

  @Test
  void theApisCurrentIsTheOneTheAdviceGoesOn() {
    assertThat(ApiContract.isCurrent(method(Fencing.class, "current"))).isTrue();
    assertThat(Fencing.class.getName()).isEqualTo(ApiContract.FENCING);
    assertThat(FencingContext.class.getName()).isEqualTo(ApiContract.CONTEXT);
    assertThat(Fenced.class.getName()).isEqualTo(ApiContract.FENCED);
  }

  @Test
  void anApiOfAnotherShapeIsLeftAlone() {
    assertThat(ApiContract.isCurrent(method(OtherApi.class, "current"))).isFalse();
    assertThat(ApiContract.isCurrent(method(FencingContext.class, "empty"))).isFalse();
  }

  @Test
  void annotatedMethodsNameTheirLock() {
    assertThat(ApiContract.fencedLock(method(Jobs.class, "run"))).isEqualTo("orders");
    assertThat(ApiContract.fencedLock(method(Jobs.class, "report"))).isEqualTo("orders");
    assertThat(ApiContract.fencedLock(method(Jobs.Nested.class, "post"))).isEqualTo("ledger");
    assertThat(ApiContract.fencedLock(method(Jobs.class, "later"))).as("abstract: nothing to advise").isNull();
    assertThat(ApiContract.fencedLock(method(Jobs.class, "plain"))).isNull();
  }

  @Test
  void theOriginIsWhatTheAdviceSpells() {
    TypeDescription nested = TypeDescription.ForLoadedType.of(Jobs.Nested.class);
    assertThat(ApiContract.origin(nested, method(Jobs.Nested.class, "post")))
        .isEqualTo(Jobs.Nested.class.getName() + ".post");
  }
}
