package dev.fencing.agent.it;

import dev.fencing.testing.SpringApp;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.regex.Pattern;
import java.util.zip.ZipFile;

/** What the ITs on the Spring Boot sample (sample-apps/spring-replicas) share: its schema, waits on its output. */
public final class SpringReplicas {
  private SpringReplicas() {}

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
