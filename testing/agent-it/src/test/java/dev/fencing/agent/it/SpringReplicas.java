package dev.fencing.agent.it;

import dev.fencing.testing.SpringApp;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.zip.ZipFile;

/** What the ITs on the Spring Boot sample (sample-apps/spring-replicas) share: its schema, waits on its output. */
public final class SpringReplicas {
  private SpringReplicas() {}

  /**
   * Runs {@code start} (which starts one app and returns it) while {@code other} starts another: on two cores a Spring
   * Boot start takes seconds, and one after the other the first app's jobs run on meanwhile. If {@code start} fails,
   * the other app is closed once it has started.
   */
  public static SpringApp startBeside(CompletableFuture<SpringApp> other, Supplier<SpringApp> start) {
    try {
      return start.get();
    } catch (RuntimeException | Error e) {
      other.whenComplete((app, failed) -> {
        if (app != null) {
          app.close();
        }
      });
      throw e;
    }
  }

  /** The app's schema.sql, read from its fat jar (the statements its SQL init runs at every start). */
  public static String schemaOfTheApp() throws Exception {
    try (ZipFile jar = new ZipFile(SpringApp.fatJar().toFile());
        InputStream in = jar.getInputStream(jar.getEntry("BOOT-INF/classes/schema.sql"))) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  public static void awaitOutput(SpringApp app, Pattern pattern, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (pattern.matcher(app.jvm().output()).find()) {
        return;
      }
      Thread.sleep(100);
    }
    throw new AssertionError("no " + pattern + " in the output of " + app.jvm() + " within " + timeout + ":\n"
        + app.jvm().output());
  }
}
