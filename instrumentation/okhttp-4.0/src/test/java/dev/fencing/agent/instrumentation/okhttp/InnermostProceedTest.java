package dev.fencing.agent.instrumentation.okhttp;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.type.TypeDescription;
import org.junit.jupiter.api.Test;

class InnermostProceedTest {
  /** Stands in for okhttp3.Request. */
  static final class Req {}

  /** OkHttp 4.0 - 4.2: proceed(Request) delegates to the 3-argument overload that runs the next interceptor. */
  static class OldChain {
    public Object proceed(Req request) {
      return proceed(request, null, null);
    }

    public final Object proceed(Req request, Object transmitter, Object exchange) {
      return null;
    }

    public Object request() {
      return null;
    }
  }

  /** OkHttp 4.3 and later, 5.x: proceed(Request) only. */
  static class NewChain {
    public Object proceed(Req request) {
      return null;
    }

    public Object proceed(String unrelated, Object a, Object b) {
      return null;
    }
  }

  private static List<String> matched(Class<?> chain) {
    InnermostProceed matcher = new InnermostProceed(Req.class.getName());
    return TypeDescription.ForLoadedType.of(chain).getDeclaredMethods().stream()
        .filter(matcher::matches).map(MethodDescription::toString).toList();
  }

  @Test
  void oldChainGetsOnlyTheOverloadThatRunsTheInterceptor() {
    assertThat(matched(OldChain.class)).singleElement().asString()
        .contains("proceed(" + Req.class.getName() + ",java.lang.Object,java.lang.Object)");
  }

  @Test
  void newChainGetsItsOnlyProceedWhateverElseItDeclares() {
    assertThat(matched(NewChain.class)).singleElement().asString()
        .contains("proceed(" + Req.class.getName() + ")");
  }

  @Test
  void classesWithoutProceedMatchNothing() {
    assertThat(matched(Req.class)).isEmpty();
  }
}
