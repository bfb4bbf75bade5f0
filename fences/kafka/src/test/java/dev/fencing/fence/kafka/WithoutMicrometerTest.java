package dev.fencing.fence.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Micrometer is an optional dependency: a consumer whose application has none still gets the fence (and its Prometheus
 * text), with the default {@code fencing.fence.metrics.micrometer=true}. Runs the interceptor in a class loader holding
 * the test class path without Micrometer's jars.
 */
class WithoutMicrometerTest {

  @Test
  @SuppressWarnings("unchecked")
  void theFenceWorksWithoutMicrometerOnTheClassPath() throws Exception {
    try (URLClassLoader loader = new URLClassLoader(withoutMicrometer(), ClassLoader.getPlatformClassLoader())) {
      assertThatThrownBy(() -> Class.forName("io.micrometer.core.instrument.Metrics", false, loader))
          .isInstanceOf(ClassNotFoundException.class);
      Object out = loader.loadClass(NoMicrometerConsumer.class.getName()).getMethod("run").invoke(null);
      assertThat((List<Object>) out).containsExactly("a",
          "fencing_fence_rejections_total{fence=\"kafka\",lock=\"nomicrometer\",reason=\"stale_token\"} 1");
    }
  }

  /** The test class path less Micrometer (and the Prometheus client it brings). */
  static URL[] withoutMicrometer() throws MalformedURLException {
    List<URL> urls = new ArrayList<>();
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      String p = entry.replace('\\', '/');
      if (!p.contains("/io/micrometer/") && !p.contains("/io/prometheus/")) {
        urls.add(Path.of(entry).toUri().toURL());
      }
    }
    return urls.toArray(URL[]::new);
  }
}
