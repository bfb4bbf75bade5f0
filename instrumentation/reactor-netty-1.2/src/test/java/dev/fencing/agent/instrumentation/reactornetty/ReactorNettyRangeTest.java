package dev.fencing.agent.instrumentation.reactornetty;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.instrumentation.LibraryCheck;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The module against the real jars of the oldest (1.2.16, Netty 4.1, reactor-core 3.7) and the latest (1.3.7, Netty
 * 4.2, reactor-core 3.8) supported Reactor Netty, copied by the pom's reactor-netty-range execution: the three hooked
 * classes of HttpClientConnect are selected, each with exactly one method to advise, and the advice (which reads the
 * handler's private fields {@code method} and {@code toURI}) weaves into them. A release that renames or reshapes one
 * of them fails here, not in a production JVM.
 */
class ReactorNettyRangeTest {
  @ParameterizedTest
  @ValueSource(strings = {"oldest", "latest"})
  void everyHookFindsExactlyOneMethodAndItsAdviceWeaves(String end) throws Exception {
    List<Path> jars = LibraryCheck.versionJars("reactor-netty", end);
    assertThat(LibraryCheck.advised(new ReactorNettyInstrumentationModule(), jars))
        .containsExactlyInAnyOrderEntriesOf(Map.of(
            "reactor.netty.http.client.HttpClientConnect", 1,
            "reactor.netty.http.client.HttpClientConnect$HttpClientHandler", 1,
            "reactor.netty.http.client.HttpClientConnect$HttpIOHandlerObserver", 1));
  }
}
