package dev.fencing.fence.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Micrometer is an optional dependency: a service without it still gets the fence and its Prometheus text. Runs a
 * fenced JDK HttpServer in a class loader holding the test class path less Micrometer's jars.
 */
class WithoutMicrometerTest {

  @Test
  @SuppressWarnings("unchecked")
  void theFenceWorksWithoutMicrometerOnTheClassPath() throws Exception {
    List<URL> urls = new ArrayList<>();
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      String p = entry.replace('\\', '/');
      if (!p.contains("/io/micrometer/") && !p.contains("/io/prometheus/")) {
        urls.add(Path.of(entry).toUri().toURL());
      }
    }
    try (URLClassLoader loader = new URLClassLoader(urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader())) {
      assertThatThrownBy(() -> Class.forName("io.micrometer.core.instrument.MeterRegistry", false, loader))
          .isInstanceOf(ClassNotFoundException.class);
      Object out = loader.loadClass(NoMicrometerServer.class.getName()).getMethod("run").invoke(null);
      assertThat((List<Object>) out).containsExactly("204", "409",
          "fencing_fence_rejections_total{fence=\"http\",lock=\"ledger\",reason=\"stale_token\"} 1");
    }
  }
}
